//! Hand-written SVG: escaping, numbers, a sequential colour map. The
//! pictures of networks and rounds ([`super::map`], [`super::gantt`]) are
//! written element by element so that every silo marker and bar is one
//! element with its own `class` and `data-*` attributes (tests and the
//! browser check find them there); line plots use plotters
//! ([`super::plot`]).

use std::fmt::Write as _;

/// `text` safe inside an XML text node or a double-quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate or length with two decimals, trailing zeros dropped
/// (`12.5`, `3`, `-0.25`).
pub fn num(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// Anchors of matplotlib's "plasma" colour map at `t = 0, 1/8, .., 1`
/// (perceptually uniform, readable in grey and by colour-blind readers).
const PLASMA: [(u8, u8, u8); 9] = [
    (0x0d, 0x08, 0x87),
    (0x4c, 0x02, 0xa1),
    (0x7e, 0x03, 0xa8),
    (0xa9, 0x23, 0x95),
    (0xcc, 0x47, 0x78),
    (0xe5, 0x6b, 0x5d),
    (0xf8, 0x95, 0x40),
    (0xfd, 0xc3, 0x28),
    (0xf0, 0xf9, 0x21),
];

/// Part of the plasma map used: its last eighth (pale yellow) is too faint
/// on white.
const PLASMA_END: f64 = 0.875;

/// The colour of `t` in `[0, 1]` (clamped) on the sequential map: dark blue
/// (low) through magenta to orange (high), as `#rrggbb`.
pub fn sequential_color(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    } * PLASMA_END;
    let x = t * (PLASMA.len() - 1) as f64;
    let i = (x.floor() as usize).min(PLASMA.len() - 2);
    let f = x - i as f64;
    let (a, b) = (PLASMA[i], PLASMA[i + 1]);
    let mix = |p: u8, q: u8| (p as f64 + (q as f64 - p as f64) * f).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        mix(a.0, b.0),
        mix(a.1, b.1),
        mix(a.2, b.2)
    )
}

/// An SVG document under construction: elements are appended as text.
#[derive(Debug, Default)]
pub struct SvgDoc {
    body: String,
}

impl SvgDoc {
    /// An empty document body.
    pub fn new() -> Self {
        SvgDoc::default()
    }

    /// Appends `<name attrs/>`; attribute values are escaped.
    pub fn empty(&mut self, name: &str, attrs: &[(&str, String)]) {
        self.body.push('<');
        self.body.push_str(name);
        self.attrs(attrs);
        self.body.push_str("/>\n");
    }

    /// Appends `<name attrs>` (close it with [`Self::close`]).
    pub fn open(&mut self, name: &str, attrs: &[(&str, String)]) {
        self.body.push('<');
        self.body.push_str(name);
        self.attrs(attrs);
        self.body.push_str(">\n");
    }

    /// Appends `</name>`.
    pub fn close(&mut self, name: &str) {
        let _ = writeln!(self.body, "</{name}>");
    }

    /// Appends `<name attrs>text</name>` (text escaped).
    pub fn text(&mut self, name: &str, attrs: &[(&str, String)], text: &str) {
        self.body.push('<');
        self.body.push_str(name);
        self.attrs(attrs);
        let _ = writeln!(self.body, ">{}</{name}>", escape(text));
    }

    /// Appends raw markup (already valid SVG).
    pub fn raw(&mut self, markup: &str) {
        self.body.push_str(markup);
    }

    fn attrs(&mut self, attrs: &[(&str, String)]) {
        for (k, v) in attrs {
            let _ = write!(self.body, " {k}=\"{}\"", escape(v));
        }
    }

    /// The whole document: an `<svg>` root of `width x height` pixels
    /// (with the same `viewBox`) holding the body, `root_attrs` added to
    /// the root (e.g. `data-*` describing the picture).
    pub fn finish(self, width: f64, height: f64, root_attrs: &[(&str, String)]) -> String {
        let mut s = String::with_capacity(self.body.len() + 400);
        let _ = write!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\"",
            w = num(width),
            h = num(height)
        );
        for (k, v) in root_attrs {
            let _ = write!(s, " {k}=\"{}\"", escape(v));
        }
        s.push_str(">\n");
        s.push_str(&self.body);
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_numbers_and_colours() {
        assert_eq!(
            escape("a<b & \"c\" 'd'"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;"
        );
        assert_eq!(escape("x\u{1}y"), "x y");
        assert_eq!(num(12.500), "12.5");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(3.0), "3");
        assert_eq!(sequential_color(0.0), "#0d0887");
        assert_eq!(sequential_color(-5.0), "#0d0887");
        assert_eq!(sequential_color(1.0), "#fdc328");
        assert_eq!(sequential_color(f64::NAN), "#0d0887");
        let mut d = SvgDoc::new();
        d.text("text", &[("x", num(1.0))], "São <P>");
        let svg = d.finish(10.0, 20.0, &[("data-k", "v\"".into())]);
        assert!(svg.contains("data-k=\"v&quot;\""));
        assert!(svg.contains(">São &lt;P&gt;</text>"));
        assert!(svg.contains("viewBox=\"0 0 10 20\""));
    }
}
