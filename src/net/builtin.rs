//! Underlays shipped inside the binary (authored by the project, see
//! `underlays/` and `scripts/make-builtin-underlays.py` for sources).

/// `(name, description, GML text)` of every built-in underlay.
pub const BUILTIN_UNDERLAYS: [(&str, &str, &str); 2] = [
    (
        "aws-north-america",
        "22 AWS North America sites, full mesh from city coordinates",
        include_str!("../../underlays/aws-north-america.gml"),
    ),
    (
        "aws-gaia",
        "11 AWS regions of Gaia, full mesh from city coordinates",
        include_str!("../../underlays/aws-gaia.gml"),
    ),
];

/// The underlay used when the user names none.
pub const DEFAULT_UNDERLAY: &str = "aws-north-america";

/// GML text of a built-in underlay.
pub fn builtin_underlay(name: &str) -> Option<&'static str> {
    BUILTIN_UNDERLAYS
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, _, text)| *text)
}

/// The eight underlays of \[Marfoq20\] shipped in the repository
/// (`underlays/paper/`, verbatim copies of the authors' files; source and
/// licence in `underlays/paper/README.md`), as found for the `fedtopo` this
/// library was compiled in: `<crate>/underlays/paper`.
///
/// `fedtopo reproduce matcha-tables` reads them from here unless given
/// `--underlays DIR`; experiment files name them by a path relative to the
/// experiment file (`../../underlays/paper/gaia.gml`).
pub fn paper_underlays_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("underlays/paper")
}

/// The environment variable naming the `shared/` folder (the Topology Zoo
/// corpus under `underlays/topology-zoo/`, papers and notes).
pub const SHARED_ENV: &str = "FEDTOPO_SHARED";

/// The one lookup of the `shared/` folder, used by every command and test
/// that reads it (`shared:REL` underlays of experiment files, the corpus
/// tests): `$FEDTOPO_SHARED` when set (whether or not it exists, so a typo
/// is reported rather than silently replaced); else the first folder named
/// `shared` holding `underlays/` in `start` or one of its ancestors; else
/// `None`.
pub fn shared_dir(start: &std::path::Path) -> Option<std::path::PathBuf> {
    if let Some(d) = std::env::var_os(SHARED_ENV) {
        return Some(std::path::PathBuf::from(d));
    }
    let base = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    base.ancestors()
        .map(|a| a.join("shared"))
        .find(|d| d.join("underlays").is_dir())
}

/// The file where the tests of one `cargo test` run note what they skipped:
/// `<temp dir>/fedtopo-skipped-tests-<pid of the test binaries' parent>.txt`
/// (every test binary of one `cargo test` has the same parent, cargo), read
/// and removed by `tests/zz_skipped_summary.rs`, which runs last and prints
/// one line listing them.
#[doc(hidden)]
pub fn skipped_tests_file() -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "fedtopo-skipped-tests-{}.txt",
        std::os::unix::process::parent_id()
    ))
}

/// Notes that test `test` skipped, and why, in [`skipped_tests_file`], and
/// says so on stderr past the test harness's output capture (so a skip does
/// not look like a pass even in a plain `cargo test`).
#[doc(hidden)]
pub fn note_skipped_test(test: &str, reason: &str) {
    use std::io::Write;
    let line = format!("{test}: {reason}");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(skipped_tests_file())
    {
        let _ = writeln!(f, "{line}");
    }
    let _ = writeln!(std::io::stderr().lock(), "skipped {line}");
}
