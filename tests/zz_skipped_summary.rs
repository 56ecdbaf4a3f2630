//! Runs last among the integration tests of `cargo test` (test binaries run
//! in name order) and prints, past the harness's output capture, one line
//! listing every test of this run that skipped and why (as noted by
//! `fedtopo::net::builtin::note_skipped_test`), or that none did.

use std::io::Write;

#[test]
fn print_skipped_tests() {
    let file = fedtopo::net::builtin::skipped_tests_file();
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    std::fs::remove_file(&file).ok();
    // Group by reason: "N skipped (REASON): a, b; M skipped (...): c".
    let mut by_reason: Vec<(String, Vec<String>)> = Vec::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let (test, reason) = l.split_once(": ").unwrap_or((l, "no reason given"));
        match by_reason.iter_mut().find(|(r, _)| r == reason) {
            Some((_, tests)) => tests.push(test.to_string()),
            None => by_reason.push((reason.to_string(), vec![test.to_string()])),
        }
    }
    let total: usize = by_reason.iter().map(|(_, t)| t.len()).sum();
    let line = if total == 0 {
        "skipped tests: none".to_string()
    } else {
        let parts: Vec<String> = by_reason
            .iter()
            .map(|(reason, tests)| format!("{} ({reason}): {}", tests.len(), tests.join(", ")))
            .collect();
        format!("skipped tests: {total} — {}", parts.join("; "))
    };
    let _ = writeln!(std::io::stderr().lock(), "\n{line}\n");
}
