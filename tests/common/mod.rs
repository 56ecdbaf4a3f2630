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

/// Runs the `fedtopo` binary with `args` in `dir` (the current directory
/// when `None`), killing it after `limit`: `(exit code, stdout, stderr)`,
/// exit code -1 when a signal ended it (an abort). Both pipes are drained
/// while it runs; a run that outlives `limit` fails the test.
pub fn run_bounded(
    dir: Option<&Path>,
    args: &[&str],
    limit: std::time::Duration,
) -> (i32, String, String) {
    use std::io::Read;
    use std::process::Stdio;
    let mut command = Command::new(env!("CARGO_BIN_EXE_fedtopo"));
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let mut child = command.spawn().expect("binary starts");
    let mut out_pipe = child.stdout.take().expect("stdout");
    let mut err_pipe = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`fedtopo {}` still runs after {limit:?}", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    (status.code().unwrap_or(-1), out, err)
}
