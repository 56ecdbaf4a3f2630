//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `fedtopo` binary under test with `args`.
pub fn fedtopo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fedtopo"))
        .args(args)
        .output()
        .expect("binary runs")
}

/// The `shared/` directory (paper underlays, Topology Zoo corpus), if present:
/// `$FEDTOPO_SHARED`, else `../shared` beside the crate.
///
/// A user's clone has no `../shared`: tests that need it print that they skip.
/// CI sets `FEDTOPO_REQUIRE_SHARED=1`, which turns the skip into a failure.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("FEDTOPO_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    if dir.join("underlays").is_dir() {
        return Some(dir);
    }
    if std::env::var_os("FEDTOPO_REQUIRE_SHARED").is_some() {
        panic!(
            "{test}: FEDTOPO_REQUIRE_SHARED is set but {} has no underlays/",
            dir.display()
        );
    }
    eprintln!(
        "{test}: skipping, {} not found (set FEDTOPO_SHARED)",
        dir.display()
    );
    None
}
