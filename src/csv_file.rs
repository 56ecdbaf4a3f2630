//! The small CSV input files of a run (per-silo access, heterogeneous
//! silos, measured links): read with a size bound, `#` comments and
//! trimmed cells, and one error type whose records name `file:line`.

use std::path::Path;

use thiserror::Error;

/// Largest input CSV read, bytes.
pub const MAX_CSV_FILE_BYTES: u64 = 64 << 20;

/// An input CSV that could not be read or applied.
#[derive(Debug, Error)]
pub enum CsvFileError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// File path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_CSV_FILE_BYTES`].
    #[error("{path}: {bytes} bytes is more than the {max} an input CSV may have")]
    TooLarge {
        /// File path.
        path: String,
        /// Its size, bytes.
        bytes: u64,
        /// The limit, bytes.
        max: u64,
    },
    /// A malformed header or record.
    #[error("{path}:{line}: {message}")]
    Record {
        /// File path.
        path: String,
        /// 1-based line.
        line: u64,
        /// What was expected.
        message: String,
    },
}

/// The text of `path`, refused when larger than [`MAX_CSV_FILE_BYTES`].
pub fn read_bounded(path: &Path) -> Result<String, CsvFileError> {
    let p = path.display().to_string();
    let io = |source| CsvFileError::Io {
        path: p.clone(),
        source,
    };
    let bytes = std::fs::metadata(path).map_err(io)?.len();
    if bytes > MAX_CSV_FILE_BYTES {
        return Err(CsvFileError::TooLarge {
            path: p,
            bytes,
            max: MAX_CSV_FILE_BYTES,
        });
    }
    crate::input_file::read_text(path, MAX_CSV_FILE_BYTES).map_err(io)
}

/// A CSV reader over `text`: header line, trimmed cells, `#` comments.
pub fn reader(text: &str) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes())
}

/// The columns of a CSV header, checked against the names a reader accepts
/// (one rule for every CSV input: an unknown or misspelled column is an
/// error naming it and the accepted ones, and a column named twice is an
/// error, never "the first one wins").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    /// The header's names, lower-cased, in file order.
    names: Vec<String>,
}

impl Columns {
    /// Checks `header` against `accepted` (compared ignoring ASCII case).
    ///
    /// # Errors
    /// A message for line 1: an empty, unknown or repeated column name.
    pub fn accepted(header: &csv::StringRecord, accepted: &[&str]) -> Result<Columns, String> {
        let columns = Columns::unique(header)?;
        if let Some((i, bad)) = columns
            .names
            .iter()
            .enumerate()
            .find(|(_, h)| !accepted.iter().any(|k| h.eq_ignore_ascii_case(k)))
        {
            let original = header.get(i).unwrap_or(bad);
            return Err(format!(
                "unknown column `{original}` (column {}); expected {}",
                i + 1,
                one_of(accepted)
            ));
        }
        Ok(columns)
    }

    /// Checks only that `header` names every column, each once (compared
    /// ignoring ASCII case), for readers that pick some columns of a wider
    /// file (a `fedtopo train` summary).
    ///
    /// # Errors
    /// A message for line 1: an empty or repeated column name.
    pub fn unique(header: &csv::StringRecord) -> Result<Columns, String> {
        let names: Vec<String> = header
            .iter()
            .map(|h| h.trim().to_ascii_lowercase())
            .collect();
        for (i, name) in names.iter().enumerate() {
            if name.is_empty() {
                return Err(format!(
                    "column {} of the header has no name; name every column",
                    i + 1
                ));
            }
            if let Some(first) = names[..i].iter().position(|n| n == name) {
                return Err(format!(
                    "column `{}` is named twice (columns {} and {}); which one is meant is ambiguous",
                    header.get(i).unwrap_or(name).trim(),
                    first + 1,
                    i + 1
                ));
            }
        }
        Ok(Columns { names })
    }

    /// The position of column `name` (ignoring ASCII case), if present.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|h| h.eq_ignore_ascii_case(name))
    }

    /// True when the header has column `name`.
    pub fn has(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// The names, lower-cased, in file order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// `a, b or c`: the accepted names, for messages.
pub fn one_of(names: &[&str]) -> String {
    match names {
        [] => "no column".into(),
        [one] => format!("`{one}`"),
        [rest @ .., last] => format!(
            "{} or `{last}`",
            rest.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The error of line `line` of `source`.
pub fn record_error(source: &str, line: u64, message: String) -> CsvFileError {
    CsvFileError::Record {
        path: source.to_string(),
        line,
        message,
    }
}

// Writing: the one CSV writer of the crate. Every CSV the crate produces
// is written through [`csv_text`] (the `csv` crate over memory, `\n` line
// ends, cells quoted only where needed).

/// The one CSV writer: `write` fills a `csv` writer over memory (records,
/// serde rows) and the text comes back. `flexible`: records may differ in
/// length (a `# comment` line before the header).
///
/// # Errors
/// What `write` returns, or a record of another length than the first one
/// when not `flexible`.
pub fn csv_text(
    flexible: bool,
    write: impl FnOnce(&mut csv::Writer<Vec<u8>>) -> Result<(), csv::Error>,
) -> Result<String, csv::Error> {
    let mut w = csv::WriterBuilder::new()
        .flexible(flexible)
        .from_writer(Vec::new());
    write(&mut w)?;
    let bytes = w
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// CSV of serialisable rows through the `csv` crate's serde support: the
/// header from the first row's field names, numbers as the crate writes
/// them (shortest round-trip form).
pub fn serde_csv<T: serde::Serialize>(rows: &[T]) -> Result<String, csv::Error> {
    csv_text(false, |w| rows.iter().try_for_each(|r| w.serialize(r)))
}

/// Appends `columns` (the same values on every record) to the CSV `text`
/// (a header line, then records).
///
/// # Errors
/// `text` is not valid CSV.
pub fn append_columns(text: &str, columns: &[(&str, String)]) -> Result<String, csv::Error> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes());
    csv_text(false, |w| {
        for (k, record) in r.records().enumerate() {
            let mut record = record?;
            for (name, value) in columns {
                record.push_field(if k == 0 { name } else { value });
            }
            w.write_record(&record)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_and_records_name_the_file() {
        let e = read_bounded(Path::new("/no/such/file.csv")).unwrap_err();
        assert!(e.to_string().starts_with("/no/such/file.csv: "), "{e}");
        let r = record_error("x.csv", 3, "bad".into()).to_string();
        assert_eq!(r, "x.csv:3: bad");
        let mut rd = reader("a, b\n# c\n 1 ,2\n");
        let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 1);
        assert_eq!(&rows[0][0], "1");
    }

    #[test]
    fn unknown_empty_and_repeated_columns_are_refused() {
        let h = |t: &str| csv::StringRecord::from(t.split(',').collect::<Vec<_>>());
        let c = Columns::accepted(&h("Silo,UP,down"), &["silo", "up", "down"]).unwrap();
        assert_eq!((c.position("silo"), c.position("Down")), (Some(0), Some(2)));
        assert!(!c.has("capacity"));
        let e = Columns::accepted(
            &h("silo,up,capacity,dwn"),
            &["silo", "up", "down", "capacity"],
        )
        .unwrap_err();
        assert_eq!(
            e,
            "unknown column `dwn` (column 4); expected `silo`, `up`, `down` or `capacity`"
        );
        let e = Columns::accepted(&h("silo,up,Up"), &["silo", "up"]).unwrap_err();
        assert!(e.contains("`Up` is named twice (columns 2 and 3)"), "{e}");
        let e = Columns::unique(&h("a,,b")).unwrap_err();
        assert!(e.contains("column 2 of the header has no name"), "{e}");
        assert_eq!(one_of(&["a"]), "`a`");
    }
}
