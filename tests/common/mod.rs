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
    fedtopo::net::builtin::paper_underlays_dir()
}

/// The `shared/` directory (the Topology Zoo corpus), if present, by the one
/// lookup of [`fedtopo::net::builtin::shared_dir`]: `$FEDTOPO_SHARED`, else a
/// `shared/` holding `underlays/` beside the crate or an ancestor.
///
/// A user's clone has none: tests that need it note the skip (see
/// [`fedtopo::net::builtin::note_skipped_test`]; `tests/zz_skipped_summary.rs`
/// prints them all in one line at the end of `cargo test`). CI sets
/// `FEDTOPO_REQUIRE_SHARED=1`, which turns the skip into a failure.
pub fn shared_dir(test: &str) -> Option<PathBuf> {
    let found = fedtopo::net::builtin::shared_dir(Path::new(env!("CARGO_MANIFEST_DIR")));
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
    fedtopo::net::builtin::note_skipped_test(test, &why);
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

/// A small hand-made network for hand-computed cases: routers `labels`,
/// undirected core links `(a, b, km)` of 1 Gbit/s, one silo per router with
/// `access_bps` both ways, 1e7-bit models and 10 ms of compute per round.
pub fn tiny_network(
    labels: &[&str],
    links: &[(usize, usize, f64)],
    access_bps: f64,
) -> (
    fedtopo::net::underlay::Underlay,
    fedtopo::net::delay::DelayModel,
) {
    use fedtopo::net::connectivity::{Connectivity, ConnectivityOptions};
    let mut g = String::from("graph [");
    for (i, l) in labels.iter().enumerate() {
        g += &format!(" node [ id {} label \"{l}\" ]", i + 1);
    }
    for (a, b, km) in links {
        g += &format!(
            " edge [ source {} target {} distance {km} capacity 1e9 ]",
            a + 1,
            b + 1
        );
    }
    g += " ]";
    let u = fedtopo::net::underlay::Underlay::from_gml_str(
        &g,
        "tiny.gml",
        &fedtopo::net::underlay::LoadOptions::default(),
    )
    .expect("a valid hand-made underlay");
    let conn = Connectivity::new(&u, &ConnectivityOptions::default());
    let w = fedtopo::net::workload::Workload {
        name: "t".into(),
        model_bits: 1e7,
        compute_ms: 10.0,
        local_steps: 1,
    };
    let access = fedtopo::net::access::AccessLinks::uniform(labels.len(), access_bps);
    let m = fedtopo::net::delay::DelayModel::new(conn, access, w);
    (u, m)
}

/// `model` following the trace `text` (a whole CSV) on `underlay`, one
/// silo per router, under `policy`.
pub fn with_trace(
    mut model: fedtopo::net::delay::DelayModel,
    underlay: &fedtopo::net::underlay::Underlay,
    text: &str,
    policy: fedtopo::net::dynamics::AvailabilityPolicy,
) -> fedtopo::net::delay::DelayModel {
    let placement = fedtopo::net::placement::SiloPlacement::one_per_router(underlay.node_count());
    let mut d = fedtopo::net::dynamics::read::parse(text, "t.csv", underlay, &placement)
        .expect("a valid test trace");
    d.policy = policy;
    model.dynamics = Some(std::sync::Arc::new(d));
    model
}
