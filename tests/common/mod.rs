//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `fedtopo` binary under test with `args`.
pub fn fedtopo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fedtopo"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// The paper's eight underlays shipped in the repository (`underlays/paper/`).
pub fn paper_dir() -> PathBuf {
    fedtopo::builtin::paper_underlays_dir()
}

/// The `shared/` directory (the Topology Zoo corpus), if present, by the one
/// lookup of [`fedtopo::builtin::shared_dir`]: `$FEDTOPO_SHARED`, else a
/// `shared/` holding `underlays/` beside the crate or an ancestor.
///
/// A user's clone has none: tests that need it note the skip (see
/// [`fedtopo::builtin::note_skipped_test`]; `tests/zz_skipped_summary.rs`
/// prints them all in one line at the end of `cargo test`). CI sets
/// `FEDTOPO_REQUIRE_SHARED=1`, which turns the skip into a failure.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let found = fedtopo::builtin::shared_dir(Path::new(env!("CARGO_MANIFEST_DIR")));
    if let Some(dir) = found.as_ref().filter(|d| d.join("underlays").is_dir()) {
        return Some(dir.clone());
    }
    let why = match &found {
        Some(d) => format!("{} has no underlays/", d.display()),
        None => "no shared/ folder with the Topology Zoo corpus (set FEDTOPO_SHARED)".to_string(),
    };
    if std::env::var_os("FEDTOPO_REQUIRE_SHARED").is_some() {
        panic!("{test}: FEDTOPO_REQUIRE_SHARED is set but {why}");
    }
    fedtopo::builtin::note_skipped_test(test, &why);
    None
}
