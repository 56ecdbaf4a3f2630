//! One self-contained HTML page per command (`--report DIR` writes
//! `DIR/report.html`): the command's tables, maps, timelines and curves,
//! with every picture inlined as SVG and the style sheet inlined as CSS.
//! The page loads nothing: no script, no font, no image file, no
//! network request (a `data:` favicon keeps browsers from asking for
//! one), so it opens the same on a machine without network access.

use std::fmt::Write as _;
use std::path::Path;

use super::svg::escape;
use super::table::Table;

/// The inline style sheet.
const STYLE: &str = "\
body { font-family: sans-serif; margin: 24px auto; max-width: 1240px; padding: 0 16px; color: #111; }
h1 { font-size: 24px; margin-bottom: 4px; }
h2 { font-size: 19px; margin-top: 36px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 22px 0 6px; }
p.meta, p.note { color: #444; font-size: 13px; }
p.error { color: #a00; font-size: 13px; }
nav ul { font-size: 14px; padding-left: 20px; }
div.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 12px 0 24px; overflow-x: auto; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { color: #444; font-size: 13px; margin-top: 4px; }
pre { background: #f7f7f7; padding: 8px; font-size: 12px; overflow-x: auto; }
";

/// A part of a page: a heading and its content.
#[derive(Debug, Clone, Default)]
pub struct Section {
    id: String,
    heading: String,
    body: String,
}

impl Section {
    /// A paragraph of text.
    pub fn paragraph(&mut self, text: &str) -> &mut Self {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
        self
    }

    /// A note (smaller, grey).
    pub fn note(&mut self, text: &str) -> &mut Self {
        let _ = writeln!(self.body, "<p class=\"note\">{}</p>", escape(text));
        self
    }

    /// Something that could not be shown, and why.
    pub fn error(&mut self, text: &str) -> &mut Self {
        let _ = writeln!(self.body, "<p class=\"error\">{}</p>", escape(text));
        self
    }

    /// A sub-heading.
    pub fn subheading(&mut self, text: &str) -> &mut Self {
        let _ = writeln!(self.body, "<h3>{}</h3>", escape(text));
        self
    }

    /// A table; cells that read as numbers are right-aligned.
    pub fn table(&mut self, t: &Table) -> &mut Self {
        self.body
            .push_str("<div class=\"scroll\"><table>\n<thead><tr>");
        for h in t.header() {
            let _ = write!(self.body, "<th>{}</th>", escape(h));
        }
        self.body.push_str("</tr></thead>\n<tbody>\n");
        for row in t.rows() {
            self.body.push_str("<tr>");
            for cell in row {
                let numeric = cell
                    .trim_end_matches(['x', '%'])
                    .trim()
                    .parse::<f64>()
                    .is_ok();
                if numeric {
                    let _ = write!(self.body, "<td class=\"num\">{}</td>", escape(cell));
                } else {
                    let _ = write!(self.body, "<td>{}</td>", escape(cell));
                }
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</tbody>\n</table></div>\n");
        self
    }

    /// A picture: `svg` (a whole SVG document, e.g. from [`super::map`] or
    /// [`super::plot`]) inlined, with a caption.
    pub fn figure(&mut self, svg: &str, caption: &str) -> &mut Self {
        self.body.push_str("<figure>\n");
        self.body.push_str(inline_svg(svg));
        if !caption.is_empty() {
            let _ = writeln!(self.body, "<figcaption>{}</figcaption>", escape(caption));
        }
        self.body.push_str("</figure>\n");
        self
    }

    /// A Markdown text as fedtopo writes it (`results.md`): `#` headings,
    /// `|`-tables (the second line the separator), paragraphs.
    pub fn markdown(&mut self, md: &str) -> &mut Self {
        let lines: Vec<&str> = md.lines().collect();
        let mut i = 0;
        let cells = |l: &str| -> Vec<String> {
            l.trim()
                .trim_start_matches('|')
                .trim_end_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        };
        while i < lines.len() {
            let l = lines[i].trim();
            if l.starts_with('|') {
                let header = cells(l);
                let mut t = Table::new(header.clone());
                i += 1;
                if i < lines.len() && lines[i].trim().starts_with("|-") {
                    i += 1;
                }
                while i < lines.len() && lines[i].trim().starts_with('|') {
                    let mut row = cells(lines[i]);
                    row.resize(header.len(), String::new());
                    t.row(row);
                    i += 1;
                }
                self.table(&t);
                continue;
            }
            if let Some(h) = l.strip_prefix('#') {
                self.subheading(h.trim_start_matches('#').trim());
                i += 1;
            } else if l.is_empty() {
                i += 1;
            } else {
                // A paragraph: consecutive lines of text.
                let mut text = Vec::new();
                while i < lines.len() {
                    let t = lines[i].trim();
                    if t.is_empty() || t.starts_with('|') || t.starts_with('#') {
                        break;
                    }
                    text.push(t);
                    i += 1;
                }
                self.paragraph(&text.join(" "));
            }
        }
        self
    }

    /// Preformatted text (a terminal table, a command).
    pub fn preformatted(&mut self, text: &str) -> &mut Self {
        let _ = writeln!(self.body, "<pre>{}</pre>", escape(text));
        self
    }
}

/// `svg` without an XML declaration or doctype before its root element
/// (HTML takes the `<svg>` element itself).
fn inline_svg(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

/// A page under construction.
#[derive(Debug, Clone, Default)]
pub struct HtmlReport {
    title: String,
    meta: Vec<String>,
    sections: Vec<Section>,
}

impl HtmlReport {
    /// An empty page titled `title`.
    pub fn new(title: &str) -> Self {
        HtmlReport {
            title: title.to_string(),
            ..HtmlReport::default()
        }
    }

    /// A line under the title (the command, the network).
    pub fn meta(&mut self, text: &str) -> &mut Self {
        self.meta.push(text.to_string());
        self
    }

    /// A new section with `heading`; fill it through the returned value.
    pub fn section(&mut self, heading: &str) -> &mut Section {
        let id = format!("s{}", self.sections.len() + 1);
        self.sections.push(Section {
            id,
            heading: heading.to_string(),
            body: String::new(),
        });
        self.sections.last_mut().expect("just pushed")
    }

    /// The page.
    pub fn render(&self) -> String {
        let mut s = String::new();
        s.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        s.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        // No favicon request.
        s.push_str("<link rel=\"icon\" href=\"data:,\">\n");
        let _ = writeln!(s, "<title>{}</title>", escape(&self.title));
        let _ = writeln!(s, "<style>\n{STYLE}</style>\n</head>\n<body>");
        let _ = writeln!(s, "<h1>{}</h1>", escape(&self.title));
        for m in &self.meta {
            let _ = writeln!(s, "<p class=\"meta\">{}</p>", escape(m));
        }
        if self.sections.len() > 1 {
            s.push_str("<nav><ul>\n");
            for sec in &self.sections {
                let _ = writeln!(
                    s,
                    "<li><a href=\"#{}\">{}</a></li>",
                    sec.id,
                    escape(&sec.heading)
                );
            }
            s.push_str("</ul></nav>\n");
        }
        for sec in &self.sections {
            let _ = writeln!(
                s,
                "<section id=\"{}\">\n<h2>{}</h2>\n{}</section>",
                sec.id,
                escape(&sec.heading),
                sec.body
            );
        }
        s.push_str("</body>\n</html>\n");
        s
    }

    /// Writes the page to `dir/report.html` (creating `dir`); returns the
    /// file's path.
    pub fn write(&self, dir: &Path) -> std::io::Result<std::path::PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("report.html");
        std::fs::write(&path, self.render())?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_self_contained() {
        let mut r = HtmlReport::new("t <1>");
        r.meta("fedtopo compare --report d");
        let mut t = Table::new(["overlay", "cycle time (ms)"]);
        t.row(["ring", "79.5"]);
        r.section("Comparison").table(&t).note("a & b");
        r.section("Map").figure(
            "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>",
            "the map",
        );
        let html = r.render();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>t &lt;1&gt;</title>"));
        assert!(html.contains("<td class=\"num\">79.5</td>"));
        assert!(html.contains("a &amp; b"));
        assert!(html.contains("<figure>\n<svg xmlns"));
        assert!(!html.contains("<?xml"));
        assert!(html.contains("href=\"#s2\""));
        let mut r = HtmlReport::new("md");
        r.section("Results").markdown(
            "# exp\n\nsome\ntext\n\n| a | b |\n|---|---|\n| 1 | x y |\n| 2 |\n\n## sub\n",
        );
        let html = r.render();
        assert!(html.contains("<th>a</th><th>b</th>"), "{html}");
        assert!(html.contains("<td class=\"num\">2</td><td></td>"), "{html}");
        assert!(html.contains("<h3>sub</h3>") && html.contains("<p>some text</p>"));
        // Nothing to fetch: no script, no external reference.
        for bad in ["<script", "src=", "http://", "https://", "@import", "url("] {
            let outside_svg_ns = html.replace("http://www.w3.org/2000/svg", "");
            assert!(!outside_svg_ns.contains(bad), "{bad}");
        }
    }
}
