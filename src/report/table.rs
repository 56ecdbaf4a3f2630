//! The one table writer: a header and rows of already formatted cells,
//! rendered as a terminal table, a Markdown table or CSV.
//!
//! Cells are strings: every caller chooses its own number formatting, the
//! table only lays them out. CSV goes through the `csv` crate, so a cell
//! holding a comma, a quote or a line break is quoted.

use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment};

/// A header and rows of formatted cells (every row as long as the header).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    right: Vec<usize>,
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

    /// Column names.
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// Rows, in insertion order.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// Terminal table (UTF-8 borders only, no line wrapping).
    pub fn to_terminal(&self) -> String {
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
        t.to_string()
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
        let mut w = csv::Writer::from_writer(Vec::new());
        // Writing to memory cannot fail and every row has the header's
        // length (checked in `row`).
        for r in std::iter::once(&self.header).chain(&self.rows) {
            w.write_record(r).expect("in-memory CSV");
        }
        let bytes = w.into_inner().expect("in-memory CSV");
        String::from_utf8(bytes).expect("UTF-8 cells give UTF-8 CSV")
    }
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

/// CSV of serialisable rows through the `csv` crate's serde support: the
/// header from the first row's field names, numbers as the crate writes
/// them (shortest round-trip form).
pub fn serde_csv<T: serde::Serialize>(rows: &[T]) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
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

    #[test]
    #[should_panic(expected = "table row of 1 cells")]
    fn short_rows_are_refused() {
        Table::new(["a", "b"]).row(["x"]);
    }
}
