//! The text of a command's error: its chain of causes joined by `: `,
//! each cause once.
//!
//! Library errors such as `{path}: {source}` already show their source in
//! their own message and also expose it as `source()`, so the plain `{:#}`
//! chain would print the OS error twice (`x.csv: No such file or directory
//! (os error 2): No such file or directory (os error 2)`).

/// `err` and its causes, outermost first, joined by `: `; a cause whose text
/// the previous message already contains is left out.
pub fn error_text(err: &anyhow::Error) -> String {
    let mut out = String::new();
    let mut previous = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if !previous.is_empty() && previous.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
        previous = text;
    }
    out
}

/// Writes `contents` to `path`; the error names the file.
pub fn write_file(path: &std::path::Path, contents: impl AsRef<[u8]>) -> anyhow::Result<()> {
    use anyhow::Context;
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::error_text;
    use anyhow::Context;

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}")]
    struct FileError {
        path: String,
        source: std::io::Error,
    }

    fn missing() -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::NotFound, "No such file")
    }

    #[test]
    fn a_source_shown_in_the_message_is_not_repeated() {
        let e = anyhow::Error::new(FileError {
            path: "a.csv".into(),
            source: missing(),
        });
        assert_eq!(error_text(&e), "a.csv: No such file");
        let e = e.context("--silos-csv");
        assert_eq!(error_text(&e), "--silos-csv: a.csv: No such file");
    }

    #[test]
    fn other_causes_are_kept() {
        let e = Err::<(), _>(missing()).context("reading x").unwrap_err();
        assert_eq!(error_text(&e), "reading x: No such file");
    }
}
