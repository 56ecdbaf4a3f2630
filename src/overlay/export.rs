//! Writing overlays as GML (readable by networkx's `read_gml`, with the
//! silos' `Latitude`/`Longitude`), Graphviz DOT and networkx node-link JSON;
//! schedules as per-round JSON or CSV ([`ExportedSchedule`]). Arcs carry their
//! \[Marfoq20\] eq. (3) delay in ms when a model is given. Every format but
//! DOT reads back with `--overlays file:PATH` ([`crate::overlay::file`]).

use std::collections::HashSet;
use std::fmt::Write as _;

use serde::Serialize;

use crate::graph::OverlaySchedule;
use crate::graph::{Overlay, Protocol};
use crate::mixing::ConsensusMatrix;
use crate::net::delay::DelayModel;
use crate::net::placement::SiloPlacement;
use crate::net::underlay::projection::{Frame, Projection};
use crate::net::underlay::Underlay;

/// Side of the square, in points (1/72 inch), that DOT positions are
/// fitted into (10 inches).
pub const DOT_BOX_PT: f64 = 720.0;

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
    /// `(latitude, longitude)` of every silo in degrees, when known.
    pub positions: Vec<Option<(f64, f64)>>,
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
    /// Consensus weight `A_target,source` (\[Marfoq20\] eq. 2), when the
    /// overlay carries its own weights ([`ExportedOverlay::with_weights`]);
    /// read back by `file:PATH` overlays.
    pub weight: Option<f64>,
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
                weight: None,
            })
            .collect();
        ExportedOverlay {
            name: overlay.name.clone(),
            protocol: overlay.protocol,
            undirected: overlay.is_undirected(),
            silos: unique_labels(labels),
            arcs,
            cycle_time_ms,
            positions: Vec::new(),
        }
    }

    /// The same with silo coordinates (`(latitude, longitude)` in degrees,
    /// one per silo; see [`silo_positions`]).
    pub fn with_positions(mut self, positions: Vec<Option<(f64, f64)>>) -> Self {
        self.positions = positions;
        self
    }

    /// The same with consensus weights: `matrix` `n x n`, arc
    /// `j -> i` gets `A_ij` (the diagonal is what remains of each row, as
    /// `file:PATH` overlays read it). A matrix of the wrong size is ignored.
    pub fn with_weights(mut self, matrix: &ConsensusMatrix) -> Self {
        let n = self.silos.len();
        let matrix = matrix.as_slice();
        if matrix.len() == n * n {
            for a in &mut self.arcs {
                a.weight = matrix.get(a.target * n + a.source).copied();
            }
        }
        self
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
                "  node [\n    id {i}\n    label \"{}\"",
                gml_escape(label)
            );
            if let Some(Some((lat, lon))) = self.positions.get(i) {
                let _ = writeln!(
                    s,
                    "    Latitude {}\n    Longitude {}",
                    gml_real(*lat),
                    gml_real(*lon)
                );
            }
            s.push_str("  ]\n");
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
            if let Some(w) = a.weight {
                let _ = writeln!(s, "    weight {}", gml_real(w));
            }
            s.push_str("  ]\n");
        }
        s.push_str("]\n");
        s
    }

    /// Graphviz DOT text. Silos with coordinates carry `pos="x,y!"`
    /// (points, y up): the equirectangular projection of
    /// [`crate::net::underlay::projection`] fitted into a [`DOT_BOX_PT`]-point
    /// square, so `neato -n2 -Tsvg` draws the overlay on its map.
    pub fn to_dot(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "digraph \"{}\" {{", dot_escape(&self.name));
        let pos = self.dot_positions();
        if let Some((_, how)) = &pos {
            let _ = writeln!(
                s,
                "  // pos: {how}, fitted into {DOT_BOX_PT} x {DOT_BOX_PT} points, y up; draw with `neato -n2`"
            );
        }
        for (i, label) in self.silos.iter().enumerate() {
            let shape = match self.protocol {
                Protocol::ServerClient { center } if center == i => ", shape=doublecircle",
                _ => "",
            };
            let at = match pos.as_ref().and_then(|(p, _)| p[i]) {
                Some((x, y)) => format!(", pos=\"{x:.2},{y:.2}!\""),
                None => String::new(),
            };
            let _ = writeln!(s, "  {i} [label=\"{}\"{shape}{at}];", dot_escape(label));
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

    /// Every silo's DOT position in points (y up), with the projection's
    /// description; `None` when no silo has coordinates.
    #[allow(clippy::type_complexity)]
    fn dot_positions(&self) -> Option<(Vec<Option<(f64, f64)>>, String)> {
        let known = self.positions.iter().flatten().copied();
        let proj = Projection::fit(known)?;
        let projected: Vec<Option<(f64, f64)>> = self
            .positions
            .iter()
            .map(|p| p.map(|(lat, lon)| proj.project(lat, lon)))
            .collect();
        let pts: Vec<(f64, f64)> = projected.iter().flatten().copied().collect();
        let frame = Frame::fit(&pts, 0.0, 0.0, DOT_BOX_PT, DOT_BOX_PT);
        let pos = (0..self.silos.len())
            .map(|i| {
                projected.get(i).copied().flatten().map(|p| {
                    let (x, y) = frame.pixel(p);
                    (x, DOT_BOX_PT - y)
                })
            })
            .collect();
        Some((pos, proj.describe()))
    }

    /// networkx node-link JSON (`nx.node_link_graph(data, edges="links")`):
    /// nodes keyed by their (unique) label, with `index`, `latitude` and
    /// `longitude`; links with `delay_ms`; the graph's `name`, `protocol`,
    /// `center` (a node id), `undirected` and `cycle_time_ms` under `graph`.
    pub fn to_json(&self) -> String {
        use serde_json::{json, Map, Value};
        let mut graph = Map::new();
        graph.insert("name".into(), json!(self.name));
        graph.insert("undirected".into(), json!(self.undirected));
        match self.protocol {
            Protocol::Gossip => {
                graph.insert("protocol".into(), json!("gossip"));
            }
            Protocol::ServerClient { center } => {
                graph.insert("protocol".into(), json!("server_client"));
                graph.insert("center".into(), json!(self.silos.get(center)));
            }
        }
        if let Some(t) = self.cycle_time_ms.filter(|t| t.is_finite()) {
            graph.insert("cycle_time_ms".into(), json!(t));
        }
        let nodes: Vec<Value> = self
            .silos
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mut n = Map::new();
                n.insert("id".into(), json!(l));
                n.insert("index".into(), json!(i));
                if let Some(Some((lat, lon))) = self.positions.get(i) {
                    n.insert("latitude".into(), json!(lat));
                    n.insert("longitude".into(), json!(lon));
                }
                Value::Object(n)
            })
            .collect();
        let links: Vec<Value> = self
            .arcs
            .iter()
            .map(|a| {
                let mut l = Map::new();
                l.insert("source".into(), json!(self.silos[a.source]));
                l.insert("target".into(), json!(self.silos[a.target]));
                if let Some(d) = a.delay_ms.filter(|d| d.is_finite()) {
                    l.insert("delay_ms".into(), json!(d));
                }
                if let Some(w) = a.weight.filter(|w| w.is_finite()) {
                    l.insert("weight".into(), json!(w));
                }
                Value::Object(l)
            })
            .collect();
        let doc = json!({
            "directed": true,
            "multigraph": false,
            "graph": Value::Object(graph),
            "nodes": nodes,
            "links": links,
        });
        let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// The `(latitude, longitude)` of every silo of `placement` on `underlay`
/// (its router's coordinates), degrees.
pub fn silo_positions(underlay: &Underlay, placement: &SiloPlacement) -> Vec<Option<(f64, f64)>> {
    placement
        .routers()
        .iter()
        .map(|&r| underlay.routers.get(r).and_then(|x| x.lat_lon))
        .collect()
}

/// A time-varying schedule's rounds, ready to write in the per-round format
/// that `--overlays file:PATH` replays periodically.
#[derive(Debug, Clone, Serialize)]
pub struct ExportedSchedule {
    /// Schedule name.
    pub name: String,
    /// Silo labels, unique.
    pub silos: Vec<String>,
    /// The arcs `(source, target)` of every round (silo indices).
    pub rounds: Vec<Vec<(usize, usize)>>,
    /// Every round's consensus weights (row `i`: what silo `i` gives each
    /// model), when the schedule brings its own; written as arc weights.
    pub weights: Option<Vec<ConsensusMatrix>>,
    /// The rounds are a sample of a random schedule (MATCHA's): written as
    /// `"timing": "sampled"` (CSV: a first line `# timing: sampled`), so
    /// that the file reads back timed as MATCHA is, with the same cycle
    /// time ([`crate::graph::PeriodicSchedule::is_sampled`]).
    pub sampled: bool,
}

impl ExportedSchedule {
    /// Rounds `0..rounds` of `schedule` with silo `labels`.
    pub fn new(schedule: &dyn OverlaySchedule, labels: &[String], name: &str, rounds: u64) -> Self {
        ExportedSchedule {
            name: name.to_string(),
            silos: unique_labels(labels),
            rounds: (0..rounds)
                .map(|k| schedule.round(k).arcs().to_vec())
                .collect(),
            weights: None,
            sampled: false,
        }
    }

    /// The same, marked as a sample of a random schedule (or not).
    pub fn with_sampled(mut self, sampled: bool) -> Self {
        self.sampled = sampled;
        self
    }

    /// The same with every round's consensus weights (one `n x n` matrix
    /// per exported round, row `i` what silo `i` gives each model): each arc
    /// `j -> i` is written with weight `A_ij`, and the file reads back
    /// with the same matrices (the diagonal is `1 - sum` of the row).
    pub fn with_weights(mut self, weights: Vec<ConsensusMatrix>) -> Self {
        self.weights = Some(weights);
        self
    }

    /// The weight of arc `a -> b` in round `k`, when weights are given.
    fn weight(&self, k: usize, a: usize, b: usize) -> Option<f64> {
        let w = self.weights.as_ref()?;
        let m = w.get(k % w.len().max(1))?;
        (a < m.n() && b < m.n()).then(|| m[(b, a)])
    }

    /// When the exported rounds, together, do not connect every silo to
    /// every other (a short sample of MATCHA's rounds can fail to), a
    /// sentence saying which silos never hear from which: such a file is
    /// refused when read back ([`super::file::never_hear_from`]). `None`
    /// when they connect.
    pub fn connectivity_note(&self) -> Option<String> {
        let n = self.silos.len();
        let rounds: Vec<Overlay> = self
            .rounds
            .iter()
            .map(|r| Overlay::from_arcs(&self.name, n, r.iter().copied()))
            .collect();
        let (deaf, unheard) = super::file::never_hear_from(n, &rounds)?;
        Some(format!(
            "the {} exported round(s) of {} never connect every silo to every other ({} silo(s) \
             never hear from {} silo(s), e.g. {} from {}): reading the file back refuses it; \
             export more rounds",
            self.rounds.len(),
            self.name,
            deaf.len(),
            unheard.len(),
            self.silos[deaf[0]],
            self.silos[unheard[0]],
        ))
    }

    /// Round `k`'s arcs to write: its arcs, and with weights a self-loop
    /// `i -> i` for every silo whose own weight `A_ii` is negative (MATCHA's
    /// `I - alpha L(k)` when `alpha x degree > 1`), which a reader would
    /// otherwise take as `max(0, 1 - sum)`.
    fn written_arcs(&self, k: usize) -> Vec<(usize, usize)> {
        let mut arcs = self.rounds[k].clone();
        if let Some(w) = self
            .weights
            .as_ref()
            .and_then(|w| w.get(k % w.len().max(1)))
        {
            arcs.extend(
                (0..self.silos.len())
                    .filter(|&i| i < w.n() && w[(i, i)] < 0.0)
                    .map(|i| (i, i)),
            );
        }
        arcs
    }

    /// Per-round JSON: `{"name", "directed": true, "periodic": true,
    /// "nodes": [labels], "rounds": [[[src, dst], ...], ...]}` (labels;
    /// `[src, dst, weight]` with weights, and a self-loop `[i, i, A_ii]`
    /// for a negative own weight; `"timing": "sampled"` for a sample of a
    /// random schedule).
    pub fn to_json(&self) -> String {
        let rounds: Vec<Vec<serde_json::Value>> = (0..self.rounds.len())
            .map(|k| {
                self.written_arcs(k)
                    .iter()
                    .map(|&(a, b)| {
                        let (s, d) = (self.silos[a].as_str(), self.silos[b].as_str());
                        match self.weight(k, a, b) {
                            Some(w) => serde_json::json!([s, d, w]),
                            None => serde_json::json!([s, d]),
                        }
                    })
                    .collect()
            })
            .collect();
        let mut doc = serde_json::json!({
            "name": self.name,
            "directed": true,
            "periodic": true,
            "nodes": self.silos,
            "rounds": rounds,
        });
        if self.sampled {
            doc["timing"] = serde_json::json!("sampled");
        }
        let mut s = serde_json::to_string(&doc).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Per-round CSV: header `round,src,dst` (`round,src,dst,weight` with
    /// weights), one arc per row (labels); a round without arcs is one row
    /// `ROUND,,` (`ROUND,,,` with weights), so round numbers have no gap.
    pub fn to_csv(&self) -> String {
        // Flexible: the `# timing` line has one field. Writing to memory
        // cannot fail.
        crate::csv_file::csv_text(true, |w| {
            if self.sampled {
                w.write_record(["# timing: sampled"])?;
            }
            if self.weights.is_some() {
                w.write_record(["round", "src", "dst", "weight"])?;
            } else {
                w.write_record(["round", "src", "dst"])?;
            }
            for k in 0..self.rounds.len() {
                let arcs = self.written_arcs(k);
                let round = k.to_string();
                if arcs.is_empty() {
                    if self.weights.is_some() {
                        w.write_record([round.as_str(), "", "", ""])?;
                    } else {
                        w.write_record([round.as_str(), "", ""])?;
                    }
                }
                for &(a, b) in &arcs {
                    match self.weight(k, a, b) {
                        Some(x) => w.write_record([
                            round.as_str(),
                            &self.silos[a],
                            &self.silos[b],
                            &x.to_string(),
                        ])?,
                        None => w.write_record([round.as_str(), &self.silos[a], &self.silos[b]])?,
                    }
                }
            }
            Ok(())
        })
        .unwrap_or_default()
    }
}

/// `labels` made unique: a repeated label gets ` #i` appended (`i` its silo).
pub fn unique_labels(labels: &[String]) -> Vec<String> {
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
        assert!(!d.contains("pos="), "no coordinates, no positions: {d}");
        let j = e.to_json();
        assert!(j.contains("\"undirected\": true"), "{j}");
        assert!(j.contains("\"links\""), "{j}");
    }

    /// DOT positions follow the map: east right, north up, one scale, in
    /// the 720-point box; a silo without coordinates has none.
    #[test]
    fn dot_positions_from_coordinates() {
        let o = Overlay::from_edges("t", 4, &[(0, 1), (1, 2), (2, 3)]);
        let labels: Vec<String> = ["Seattle", "Miami", "Boston", "Nowhere"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let e = ExportedOverlay::new(&o, &labels, None, None).with_positions(vec![
            Some((47.6, -122.3)),
            Some((25.8, -80.2)),
            Some((42.4, -71.1)),
            None,
        ]);
        let d = e.to_dot();
        let pos = |i: usize| -> (f64, f64) {
            let line = d
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{i} [")))
                .unwrap();
            let p = &line[line.find("pos=\"").unwrap() + 5..];
            let p = &p[..p.find('!').unwrap()];
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        };
        let (sea, mia, bos) = (pos(0), pos(1), pos(2));
        assert!(sea.0 < mia.0 && mia.0 < bos.0, "{d}");
        assert!(sea.1 > bos.1 && bos.1 > mia.1, "{d}");
        // The longitude span fills the box (it binds: 51.2 x cos 36.7 deg
        // wide against 21.8 deg high).
        assert!(
            (sea.0 - 0.0).abs() < 0.01 && (bos.0 - DOT_BOX_PT).abs() < 0.01,
            "{d}"
        );
        // One scale: pixel distances in proportion to projected ones.
        let p = Projection::fit([(47.6, -122.3), (25.8, -80.2), (42.4, -71.1)]).unwrap();
        let (a, b) = (p.project(47.6, -122.3), p.project(25.8, -80.2));
        let k = DOT_BOX_PT / (p.project(42.4, -71.1).0 - a.0);
        assert!(((mia.1 - sea.1) - k * (b.1 - a.1)).abs() < 0.02, "{d}");
        assert!(!d
            .lines()
            .any(|l| l.trim_start().starts_with("3 [") && l.contains("pos=")));
        assert!(d.contains("// pos: equirectangular projection"));
    }
}
