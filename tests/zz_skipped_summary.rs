//! Runs last among the integration tests of `cargo test` (test binaries run
//! in name order) and prints, past the harness's output capture, one line
//! listing every test of this run that skipped and why (as noted by
//! `fedtopo::builtin::note_skipped_test`), or that none did.

use std::io::Write;

#[test]
fn print_skipped_tests() {
    let file = fedtopo::builtin::skipped_tests_file();
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    std::fs::remove_file(&file).ok();
    let skipped: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let line = if skipped.is_empty() {
        "skipped tests: none".to_string()
    } else {
        format!("skipped tests: {} — {}", skipped.len(), skipped.join("; "))
    };
    let _ = writeln!(std::io::stderr().lock(), "\n{line}\n");
}
