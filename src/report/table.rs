//! The one table writer: a header and rows of already formatted cells,
//! rendered as a terminal table, a Markdown table or CSV.
//!
//! Cells are strings: every caller chooses its own number formatting, the
//! table only lays them out. CSV goes through the `csv` crate, so a cell
//! holding a comma, a quote or a line break is quoted.
//!
//! Terminal tables fit a width when one is set ([`set_terminal_width`]; the
//! CLI sets the terminal's when stdout is a terminal, see
//! [`terminal_table_width`]): long headers wrap at spaces, the columns
//! marked with [`Table::shrink`] (a critical circuit, silo names) are cut
//! with `…`, and only when that is not enough do cells wrap. Off a terminal
//! (a file, a pipe) or with `--wide` tables keep their full width.

use std::sync::atomic::{AtomicUsize, Ordering};

use comfy_table::{
    presets::UTF8_BORDERS_ONLY, CellAlignment, ColumnConstraint, ContentArrangement, Width,
};

/// Width limit of terminal tables, 0: none.
static TERMINAL_WIDTH: AtomicUsize = AtomicUsize::new(0);

/// Sets the width (columns) every [`Table::to_terminal`] fits; `None`: full
/// width (the default). Set once by the CLI at start-up.
pub fn set_terminal_width(width: Option<usize>) {
    TERMINAL_WIDTH.store(width.unwrap_or(0), Ordering::Relaxed);
}

/// The width set by [`set_terminal_width`].
pub fn terminal_width() -> Option<usize> {
    match TERMINAL_WIDTH.load(Ordering::Relaxed) {
        0 => None,
        w => Some(w),
    }
}

/// Width a terminal table is given when the terminal's is unknown.
pub const DEFAULT_TERMINAL_WIDTH: usize = 100;

/// Narrowest width a table is fitted to (a smaller `COLUMNS` is ignored).
pub const MIN_TERMINAL_WIDTH: usize = 40;

/// The width terminal tables should fit, `None` for their full width:
/// full width with `--wide` (`wide`) or when stdout is not a terminal (a
/// file or a pipe keeps every character, as a user redirecting output
/// expects); on a terminal, `COLUMNS` when it holds a width of at least
/// [`MIN_TERMINAL_WIDTH`], else the terminal's width, else
/// [`DEFAULT_TERMINAL_WIDTH`].
pub fn terminal_table_width(
    wide: bool,
    stdout_is_terminal: bool,
    columns_env: Option<&str>,
    terminal_columns: Option<usize>,
) -> Option<usize> {
    if wide || !stdout_is_terminal {
        return None;
    }
    let env = columns_env
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c >= MIN_TERMINAL_WIDTH);
    Some(
        env.or(terminal_columns.filter(|&c| c >= MIN_TERMINAL_WIDTH))
            .unwrap_or(DEFAULT_TERMINAL_WIDTH),
    )
}

/// Display width of the widest line of `text` (characters).
pub fn text_width(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// A header and rows of formatted cells (every row as long as the header).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right: Vec<usize>,
    shrink: Vec<usize>,
}

impl Table {
    /// An empty table with these column names.
    pub fn new<I, S>(header: I) -> Table
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            right: Vec::new(),
            shrink: Vec::new(),
        }
    }

    /// Appends a row.
    ///
    /// # Panics
    /// If the row's length differs from the header's (a programming error:
    /// rows are built by the caller's code, never read from input).
    pub fn row<I, S>(&mut self, cells: I) -> &mut Table
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let row: Vec<String> = cells.into_iter().map(Into::into).collect();
        assert_eq!(
            row.len(),
            self.header.len(),
            "table row of {} cells under a header of {}",
            row.len(),
            self.header.len()
        );
        self.rows.push(row);
        self
    }

    /// Right-aligns these columns (0-based) in the terminal rendering.
    pub fn align_right(&mut self, columns: impl IntoIterator<Item = usize>) -> &mut Table {
        self.right.extend(columns);
        self
    }

    /// Lets these columns (0-based) be cut with `…` when the table must fit
    /// a terminal narrower than it (long text such as a critical circuit).
    pub fn shrink(&mut self, columns: impl IntoIterator<Item = usize>) -> &mut Table {
        self.shrink.extend(columns);
        self
    }

    /// Column names.
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// Rows, in insertion order.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// Terminal table (UTF-8 borders only), fitted to the width set by
    /// [`set_terminal_width`] (full width when none is set).
    pub fn to_terminal(&self) -> String {
        self.to_terminal_within(terminal_width())
    }

    /// Terminal table within `width` columns (`None`: full width, no line
    /// wrapping). A table wider than `width` is narrowed in this order
    /// until it fits: its [`Table::shrink`] columns are cut with `…` down
    /// to their header's width; headers wrap at spaces (every column keeps
    /// its widest cell); shrinkable columns are cut further, down to their
    /// header's longest word; header words break. If that is still too
    /// wide, every cell may wrap (nothing is lost then).
    pub fn to_terminal_within(&self, width: Option<usize>) -> String {
        let full = self.comfy(None).to_string();
        let Some(width) = width else { return full };
        let full_width = text_width(&full);
        if full_width <= width {
            return full;
        }
        let natural = self.natural_widths();
        // Borders, padding and separators: what is not cell content.
        let overhead = full_width.saturating_sub(natural.iter().sum::<usize>());
        match self.plan(&natural, width.saturating_sub(overhead)) {
            Some(widths) => {
                let cut = self.cut(&widths);
                let mut text = cut.comfy(Some((width, Some(&widths)))).to_string();
                if cut != *self {
                    text.push_str(&format!(
                        "\n(`…`: text cut to fit {width} columns; --wide prints it whole)"
                    ));
                }
                text
            }
            None => self.comfy(Some((width, None))).to_string(),
        }
    }

    /// Content width of each column at full width: its widest cell or header.
    fn natural_widths(&self) -> Vec<usize> {
        (0..self.header.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| chars(&r[c]))
                    .chain(std::iter::once(chars(&self.header[c])))
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// Column widths summing to at most `budget` characters (see
    /// [`Self::to_terminal_within`] for the order); `None` when even the
    /// narrowest plan is wider.
    fn plan(&self, natural: &[usize], budget: usize) -> Option<Vec<usize>> {
        let word = |c: usize| {
            self.header[c]
                .split_whitespace()
                .map(|w| w.chars().count())
                .max()
                .unwrap_or(0)
        };
        let cells = |c: usize| self.rows.iter().map(|r| chars(&r[c])).max().unwrap_or(0);
        let shrink = |c: usize| self.shrink.contains(&c);
        let mut w = natural.to_vec();
        // Each stage lowers columns towards a floor, widest first, one
        // character at a time, until the table fits.
        let stages: [&dyn Fn(usize) -> usize; 4] = [
            &|c| {
                if shrink(c) {
                    chars(&self.header[c]).max(2)
                } else {
                    natural[c]
                }
            },
            &|c| {
                if shrink(c) {
                    chars(&self.header[c]).max(2)
                } else {
                    cells(c).max(word(c))
                }
            },
            &|c| {
                if shrink(c) {
                    word(c).max(2)
                } else {
                    cells(c).max(word(c))
                }
            },
            // Last: header words break too (cells never do).
            &|c| if shrink(c) { 2 } else { cells(c).max(2) },
        ];
        for floor in stages {
            while w.iter().sum::<usize>() > budget {
                let Some(c) = (0..w.len())
                    .filter(|&c| w[c] > floor(c))
                    .max_by_key(|&c| (w[c], std::cmp::Reverse(c)))
                else {
                    break;
                };
                w[c] -= 1;
            }
            if w.iter().sum::<usize>() <= budget {
                return Some(w);
            }
        }
        None
    }

    /// This table with the cells of its shrinkable columns cut (`…`) to
    /// `widths`.
    fn cut(&self, widths: &[usize]) -> Table {
        let mut t = self.clone();
        for &c in &self.shrink {
            let Some(&w) = widths.get(c) else { continue };
            for r in &mut t.rows {
                if chars(&r[c]) > w {
                    let mut cell: String = r[c].chars().take(w.saturating_sub(1)).collect();
                    cell.push('…');
                    r[c] = cell;
                }
            }
        }
        t
    }

    /// Markdown table: `| a | b |`, a `|---|---|` rule, one line per row,
    /// every line ending in a newline.
    pub fn to_markdown(&self) -> String {
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut s = line(&self.header);
        s.push('|');
        s.push_str(&"---|".repeat(self.header.len()));
        s.push('\n');
        for r in &self.rows {
            s.push_str(&line(r));
        }
        s
    }

    /// CSV: the header line, then one line per row (`\n` line ends; cells
    /// quoted only where needed).
    pub fn to_csv(&self) -> String {
        // Writing to memory cannot fail and every row has the header's
        // length (checked in `row`).
        crate::csv_file::csv_text(false, |w| {
            std::iter::once(&self.header)
                .chain(&self.rows)
                .try_for_each(|r| w.write_record(r))
        })
        .expect("in-memory CSV of equal-length rows")
    }

    /// The comfy-table of this table: full width (`fit` `None`), or
    /// within `fit.0` columns, each column `fit.1` wide (headers wrap) or,
    /// without widths, any cell wrapping.
    fn comfy(&self, fit: Option<(usize, Option<&[usize]>)>) -> comfy_table::Table {
        let mut t = comfy_table::Table::new();
        t.load_style(UTF8_BORDERS_ONLY);
        t.set_header(self.header.clone());
        for r in &self.rows {
            t.add_row(r.clone());
        }
        for &col in &self.right {
            if let Some(c) = t.column_mut(col) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        if let Some((width, widths)) = fit {
            t.set_content_arrangement(ContentArrangement::Dynamic);
            t.set_width(u16::try_from(width).unwrap_or(u16::MAX));
            for (c, &w) in widths.unwrap_or(&[]).iter().enumerate() {
                if let Some(col) = t.column_mut(c) {
                    // comfy-table's absolute width includes the padding.
                    let w = u16::try_from(w).unwrap_or(u16::MAX);
                    let w = w.saturating_add(col.padding_width());
                    col.set_constraint(ColumnConstraint::Absolute(Width::Fixed(w)));
                }
            }
        }
        t
    }
}

/// Display width of a cell (characters).
fn chars(s: &str) -> usize {
    s.chars().count()
}

impl Table {
    /// JSON: an array with one object per row, keyed by the column names,
    /// the cells as shown (text).
    pub fn to_json(&self) -> String {
        let rows: Vec<serde_json::Map<String, serde_json::Value>> = self
            .rows
            .iter()
            .map(|r| {
                self.header
                    .iter()
                    .cloned()
                    .zip(r.iter().map(|c| serde_json::Value::String(c.clone())))
                    .collect()
            })
            .collect();
        serde_json::to_string_pretty(&rows).unwrap_or_else(|_| "[]".into()) + "\n"
    }

    /// The table in `format`: terminal, CSV or JSON ([`Self::to_json`]).
    pub fn render(&self, format: super::OutputFormat) -> String {
        match format {
            super::OutputFormat::Table => format!("{}\n", self.to_terminal()),
            super::OutputFormat::Csv => self.to_csv(),
            super::OutputFormat::Json => self.to_json(),
        }
    }
}

impl std::fmt::Display for Table {
    /// The terminal rendering.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_terminal())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(["name", "value"]);
        t.row(["a", "1"]).row(["b, c", "say \"hi\""]);
        t
    }

    #[test]
    fn markdown() {
        assert_eq!(
            sample().to_markdown(),
            "| name | value |\n|---|---|\n| a | 1 |\n| b, c | say \"hi\" |\n"
        );
    }

    #[test]
    fn csv_quotes_only_where_needed() {
        assert_eq!(
            sample().to_csv(),
            "name,value\na,1\n\"b, c\",\"say \"\"hi\"\"\"\n"
        );
        let mut empty = Table::new(["x", "y"]);
        empty.row(["", "2"]);
        assert_eq!(empty.to_csv(), "x,y\n,2\n");
    }

    #[test]
    fn terminal_matches_comfy_table() {
        let mut c = comfy_table::Table::new();
        c.load_style(UTF8_BORDERS_ONLY);
        c.set_header(["name", "value"]);
        c.add_row(["a", "1"]);
        c.add_row(["b, c", "say \"hi\""]);
        assert_eq!(sample().to_terminal(), c.to_string());
        assert_eq!(sample().to_string(), c.to_string());
        if let Some(col) = c.column_mut(1) {
            col.set_cell_alignment(CellAlignment::Right);
        }
        let mut right = sample();
        right.align_right([1]);
        assert_eq!(right.to_terminal(), c.to_string());
    }

    /// A compare-like table, 143 columns at full width.
    fn wide() -> Table {
        let mut t = Table::new([
            "overlay",
            "arcs",
            "max deg",
            "cycle time (ms)",
            "rounds/s",
            "speed-up vs STAR",
            "critical circuit",
        ]);
        t.row([
            "ring",
            "22",
            "1",
            "79.9",
            "12.521",
            "3.32x",
            "Miami -> Jacksonville -> Atlanta -> ... (22 silos) -> Ashburn",
        ]);
        t.row([
            "star",
            "42",
            "21",
            "265.5",
            "3.766",
            "1.00x",
            "Minneapolis -> Palo Alto -> Minneapolis",
        ]);
        t.align_right(1..6).shrink([6]);
        t
    }

    #[test]
    fn tables_fit_100_columns_by_cutting_the_shrinkable_column() {
        let t = wide();
        let full = t.to_terminal_within(None);
        assert!(text_width(&full) > 100, "{full}");
        assert_eq!(full, t.comfy(None).to_string());
        let fitted = t.to_terminal_within(Some(100));
        assert!(fitted.lines().all(|l| l.chars().count() <= 100), "{fitted}");
        // Numbers are whole; the circuit is cut, marked with `…`.
        for cell in ["79.9", "12.521", "3.32x", "265.5", "Miami -> Jacksonvill…"] {
            assert!(fitted.contains(cell), "{cell} lost:\n{fitted}");
        }
        assert!(fitted.contains('…'), "{fitted}");
        assert_eq!(
            fitted.lines().count(),
            full.lines().count() + 1,
            "one line per row, and one saying that text was cut: {fitted}"
        );
        assert!(fitted.ends_with("(`…`: text cut to fit 100 columns; --wide prints it whole)"));
        // A wide enough terminal gets the full table.
        assert_eq!(t.to_terminal_within(Some(200)), full);
    }

    #[test]
    fn tables_without_a_shrinkable_column_wrap_headers_then_cells() {
        let mut t = Table::new((0..9).map(|i| format!("a long header number {i}")));
        t.row((0..9).map(|i| format!("{}", 1000.5 * i as f64)));
        let fitted = t.to_terminal_within(Some(100));
        assert!(fitted.lines().all(|l| l.chars().count() <= 100), "{fitted}");
        for i in 0..9 {
            assert!(
                fitted.contains(&format!("{}", 1000.5 * i as f64)),
                "{fitted}"
            );
        }
        assert!(!fitted.contains('…'), "nothing is cut: {fitted}");
        // Too narrow even for the cells: they wrap, nothing is lost.
        let narrow = wide().to_terminal_within(Some(40));
        assert!(narrow.lines().all(|l| l.chars().count() <= 40), "{narrow}");
    }

    #[test]
    fn the_width_follows_the_terminal_unless_wide_or_redirected() {
        assert_eq!(terminal_table_width(true, true, None, Some(80)), None);
        assert_eq!(
            terminal_table_width(false, false, Some("80"), Some(80)),
            None
        );
        assert_eq!(
            terminal_table_width(false, true, None, Some(120)),
            Some(120)
        );
        assert_eq!(
            terminal_table_width(false, true, Some("90"), Some(120)),
            Some(90)
        );
        assert_eq!(
            terminal_table_width(false, true, Some("x"), None),
            Some(100)
        );
        assert_eq!(
            terminal_table_width(false, true, Some("5"), Some(3)),
            Some(100)
        );
    }

    #[test]
    #[should_panic(expected = "table row of 1 cells")]
    fn short_rows_are_refused() {
        Table::new(["a", "b"]).row(["x"]);
    }
}
