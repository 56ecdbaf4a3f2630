//! Writing overlays as GML (readable by networkx's `read_gml`), Graphviz DOT
//! and JSON. Arcs carry their \[Marfoq20\] eq. (3) delay in ms when a model is given.

use std::collections::HashSet;
use std::fmt::Write as _;

use serde::Serialize;

use crate::delay::DelayModel;
use crate::overlay::{Overlay, Protocol};

/// An overlay with silo labels and per-arc delays, ready to write.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedOverlay {
    /// Overlay name.
    pub name: String,
    /// Protocol (gossip or server-client).
    pub protocol: Protocol,
    /// True when every arc has its reverse.
    pub undirected: bool,
    /// Silo labels, unique (duplicates get ` #i` appended).
    pub silos: Vec<String>,
    /// Arcs with their delay (ms) if a model was given.
    pub arcs: Vec<ExportedArc>,
    /// Cycle time, ms, if known.
    pub cycle_time_ms: Option<f64>,
}

/// One arc of an [`ExportedOverlay`].
#[derive(Debug, Clone, Serialize)]
pub struct ExportedArc {
    /// Sending silo.
    pub source: usize,
    /// Receiving silo.
    pub target: usize,
    /// \[Marfoq20\] Eq. (3) delay, ms.
    pub delay_ms: Option<f64>,
}

impl ExportedOverlay {
    /// Prepares `overlay` for export with the given silo labels.
    pub fn new(
        overlay: &Overlay,
        labels: &[String],
        model: Option<&DelayModel>,
        cycle_time_ms: Option<f64>,
    ) -> Self {
        let arcs = overlay
            .arcs()
            .iter()
            .map(|&(i, j)| ExportedArc {
                source: i,
                target: j,
                delay_ms: model
                    .map(|m| m.arc_delay(i, j, overlay.out_degree(i), overlay.in_degree(j))),
            })
            .collect();
        ExportedOverlay {
            name: overlay.name.clone(),
            protocol: overlay.protocol,
            undirected: overlay.is_undirected(),
            silos: unique_labels(labels),
            arcs,
            cycle_time_ms,
        }
    }

    /// GML text (directed graph; networkx reads it with `nx.read_gml`).
    pub fn to_gml(&self) -> String {
        let mut s = String::new();
        s.push_str("graph [\n  directed 1\n");
        let _ = writeln!(s, "  name \"{}\"", gml_escape(&self.name));
        if let Protocol::ServerClient { center } = self.protocol {
            let _ = writeln!(s, "  center {center}");
        }
        if let Some(t) = self.cycle_time_ms {
            let _ = writeln!(s, "  cycle_time_ms {}", gml_real(t));
        }
        for (i, label) in self.silos.iter().enumerate() {
            let _ = writeln!(
                s,
                "  node [\n    id {i}\n    label \"{}\"\n  ]",
                gml_escape(label)
            );
        }
        for a in &self.arcs {
            let _ = write!(
                s,
                "  edge [\n    source {}\n    target {}\n",
                a.source, a.target
            );
            if let Some(d) = a.delay_ms {
                let _ = writeln!(s, "    delay_ms {}", gml_real(d));
            }
            s.push_str("  ]\n");
        }
        s.push_str("]\n");
        s
    }

    /// Graphviz DOT text.
    pub fn to_dot(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "digraph \"{}\" {{", dot_escape(&self.name));
        for (i, label) in self.silos.iter().enumerate() {
            let shape = match self.protocol {
                Protocol::ServerClient { center } if center == i => ", shape=doublecircle",
                _ => "",
            };
            let _ = writeln!(s, "  {i} [label=\"{}\"{shape}];", dot_escape(label));
        }
        for a in &self.arcs {
            match a.delay_ms {
                Some(d) => {
                    let _ = writeln!(s, "  {} -> {} [label=\"{d:.1} ms\"];", a.source, a.target);
                }
                None => {
                    let _ = writeln!(s, "  {} -> {};", a.source, a.target);
                }
            }
        }
        s.push_str("}\n");
        s
    }

    /// Pretty JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data serialises")
    }
}

fn unique_labels(labels: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if seen.insert(l.clone()) {
                l.clone()
            } else {
                let alt = format!("{l} #{i}");
                seen.insert(alt.clone());
                alt
            }
        })
        .collect()
}

/// GML strings may not contain `"`; `&` starts an entity. Non-ASCII goes
/// out as numeric entities so any GML reader copes.
fn gml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '&' => out.push_str("&#38;"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let _ = write!(out, "&#{};", c as u32);
            }
        }
    }
    out
}

fn gml_real(v: f64) -> String {
    if v.is_finite() {
        // Always with a decimal point so readers see a real.
        let s = format!("{v:?}");
        if s.contains('.') || s.contains('e') {
            s
        } else {
            format!("{s}.0")
        }
    } else if v.is_nan() {
        "NAN".into()
    } else if v > 0.0 {
        "INF".into()
    } else {
        "-INF".into()
    }
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gml_and_dot() {
        let o = Overlay::from_edges("t", 3, &[(0, 1), (1, 2)]);
        let labels = vec!["São \"P\"".to_string(), "a".into(), "a".into()];
        let e = ExportedOverlay::new(&o, &labels, None, Some(12.0));
        let g = e.to_gml();
        assert!(g.contains("label \"S&#227;o &#34;P&#34;\""), "{g}");
        assert!(g.contains("label \"a #2\""));
        assert!(g.contains("cycle_time_ms 12.0"));
        assert_eq!(g.matches("edge [").count(), 4);
        let d = e.to_dot();
        assert!(d.contains("1 -> 2;"));
        assert!(e.to_json().contains("\"undirected\": true"));
    }
}
