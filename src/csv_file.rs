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

/// The error of line `line` of `source`.
pub fn record_error(source: &str, line: u64, message: String) -> CsvFileError {
    CsvFileError::Record {
        path: source.to_string(),
        line,
        message,
    }
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
}
