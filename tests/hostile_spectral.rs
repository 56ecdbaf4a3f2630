//! Hostile inputs of issue 25, items 1, 2, 7, 10 and 11: spectral measures
//! that terminate on permutation matrices, per-round schedules that must
//! communicate, design inputs, MATCHA round trips that keep their cycle
//! time, and negative option values that name the option. Every binary
//! run is killed after [`LIMIT`]: a hang fails the test.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use fedtopo::evaluate::{EvalError, EvaluatedOverlay};
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::overlay::build::{BuildError, BuildOptions, OverlayKind};
use fedtopo::overlay::file::FileOverlayError;

/// Longest a run may take.
const LIMIT: Duration = Duration::from_secs(60);

/// Runs the binary with `args`, killing it after [`LIMIT`]: `(exit code,
/// stdout, stderr)` ([`common::run_bounded`]).
fn run(args: &[&str]) -> (i32, String, String) {
    common::run_bounded(None, args, LIMIT)
}

/// `fedtopo ARGS` exits 2 with an error line containing every one of `expect`.
fn refused(args: &[&str], expect: &[&str]) -> String {
    let (code, _, err) = run(args);
    let shown = format!("`fedtopo {}`: exit {code}\n{err}", args.join(" "));
    assert_eq!(code, 2, "{shown}");
    let line = err
        .lines()
        .find(|l| l.starts_with("error"))
        .unwrap_or_else(|| panic!("no error line: {shown}"))
        .to_string();
    for e in expect {
        assert!(line.contains(e), "expected `{e}` in the error: {shown}");
    }
    line
}

/// `fedtopo ARGS` succeeds: `(stdout, stderr)`.
fn works(args: &[&str]) -> (String, String) {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "`fedtopo {}`: exit {code}\n{err}", args.join(" "));
    (out, err)
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-spectral-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// aws-gaia's silo labels in the order of its directed `ring`.
fn gaia_ring() -> Vec<String> {
    let (out, _) = works(&["overlay", "ring", "aws-gaia", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let links = doc["links"].as_array().expect("links");
    // Follow the ring from the first link's source.
    let next = |from: &str| -> String {
        links
            .iter()
            .find(|l| l["source"] == from)
            .and_then(|l| l["target"].as_str())
            .expect("ring successor")
            .to_string()
    };
    let first = links[0]["source"].as_str().expect("source").to_string();
    let mut order = vec![first.clone()];
    loop {
        let n = next(order.last().expect("non-empty"));
        if n == first {
            break;
        }
        order.push(n);
    }
    assert_eq!(order.len(), 11);
    order
}

/// A directed ring CSV with weight `w` on every arc.
fn ring_csv(dir: &Path, name: &str, w: &str) -> PathBuf {
    let ring = gaia_ring();
    let mut text = String::from("src,dst,weight\n");
    for k in 0..ring.len() {
        text.push_str(&format!("{},{},{w}\n", ring[k], ring[(k + 1) % ring.len()]));
    }
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

// ---------------------------------------------------------------- item 1

/// A directed ring with weight 1 on every arc (or weights >= 1, rescaled
/// to 1) has a permutation consensus matrix: `mixing` and `design` return,
/// with spectral gap 0 and a note saying a permutation does not mix.
#[test]
fn permutation_consensus_terminates_and_says_it_does_not_mix() {
    let dir = tmp("perm");
    for (name, w) in [("ring1.csv", "1"), ("ring3.csv", "3")] {
        let p = ring_csv(&dir, name, w);
        let file = format!("file:{}", s(&p));
        let (out, err) = works(&[
            "mixing",
            "aws-gaia",
            "--overlays",
            &file,
            "--format",
            "json",
        ]);
        let rows: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(rows[0]["spectral_gap"], 0.0, "{out}");
        let note = rows[0]["mixing_note"].as_str().unwrap_or("");
        assert!(note.contains("permutation"), "{out}");
        assert!(err.is_empty() || !err.contains("error"), "{err}");
        let (out, err) = works(&["design", "aws-gaia", "--overlays", &file, "--no-augmented"]);
        assert!(
            err.contains("a permutation matrix does not mix"),
            "{out}\n{err}"
        );
        assert!(out.contains("no candidate mixes"), "{out}");
    }
    // A per-round schedule whose every round is a weight-1 ring: connected
    // over the period, every round a permutation.
    let ring = gaia_ring();
    let round: Vec<serde_json::Value> = (0..ring.len())
        .map(|k| serde_json::json!([ring[k], ring[(k + 1) % ring.len()], 1.0]))
        .collect();
    let p = dir.join("perm.rounds.json");
    std::fs::write(
        &p,
        serde_json::json!({"nodes": ring, "rounds": [round.clone(), round]}).to_string(),
    )
    .expect("write");
    let file = format!("file:{}", s(&p));
    let (_, err) = works(&["mixing", "aws-gaia", "--overlays", &file]);
    assert!(
        err.contains("every round's consensus matrix is a permutation"),
        "{err}"
    );
}

// ---------------------------------------------------------------- item 2

/// Per-round files must communicate: empty rounds and a directed path are
/// refused naming who never hears from whom; CSV round numbers must run
/// from 0 without a gap (named), `ROUND,,` writes an empty round.
#[test]
fn schedules_must_connect_and_csv_rounds_have_no_gaps() {
    let dir = tmp("connect");
    let ring = gaia_ring();
    let write = |name: &str, text: String| -> String {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write");
        format!("file:{}", s(&p))
    };
    let empty = write(
        "empty.json",
        serde_json::json!({"nodes": ring, "rounds": [[], []]}).to_string(),
    );
    let path: Vec<serde_json::Value> = (0..ring.len() - 1)
        .map(|k| serde_json::json!([ring[k], ring[k + 1]]))
        .collect();
    let dpath = write(
        "path.json",
        serde_json::json!({"nodes": ring, "rounds": [path[..5], path[5..]]}).to_string(),
    );
    for cmd in ["compare", "mixing", "design"] {
        refused(
            &[cmd, "aws-gaia", "--overlays", &empty],
            &["empty.json", "0 arc(s)", "never hear from", "the 10 silos"],
        );
        refused(
            &[cmd, "aws-gaia", "--overlays", &dpath],
            &["path.json", "never hear from", &format!("silo {}", ring[0])],
        );
    }
    // The same path undirected connects every silo: accepted.
    let upath = write(
        "upath.json",
        serde_json::json!({"nodes": ring, "directed": false, "rounds": [path[..5], path[5..]]})
            .to_string(),
    );
    works(&["compare", "aws-gaia", "--overlays", &upath]);
    let csv = |rounds: &[(u32, std::ops::Range<usize>)], extra: &str| -> String {
        let mut t = String::from("round,src,dst\n");
        for (r, arcs) in rounds {
            for k in arcs.clone() {
                t.push_str(&format!("{r},{},{}\n", ring[k], ring[(k + 1) % ring.len()]));
            }
        }
        t + extra
    };
    let gap = write("gap.csv", csv(&[(0, 0..6), (3, 6..11)], ""));
    refused(
        &["compare", "aws-gaia", "--overlays", &gap],
        &["gap.csv", "rounds 1-2 have no line", "ROUND,,"],
    );
    let late = write("late.csv", csv(&[(2, 0..6), (3, 6..11)], ""));
    refused(
        &["compare", "aws-gaia", "--overlays", &late],
        &["late.csv", "rounds 0-1 have no line"],
    );
    let one = write("one.csv", csv(&[(0, 0..6), (2, 6..11)], ""));
    refused(
        &["compare", "aws-gaia", "--overlays", &one],
        &["round 1 has no line"],
    );
    let ok = write("ok.csv", csv(&[(0, 0..6), (2, 6..11)], "1,,\n"));
    let (out, _) = works(&["compare", "aws-gaia", "--overlays", &ok]);
    assert!(out.contains("periodic (3 rounds)"), "{out}");
}

fn underlay(name: &str) -> Underlay {
    load_underlay(Some(name), &LoadOptions::default()).expect("built-in underlay")
}

/// MATCHA's per-round exports, JSON and CSV, load back on both built-in
/// underlays (their rounds connect every silo), from the smallest budget
/// up; a 2-round sample at the smallest budget may not connect, and is
/// then refused naming the silos, not loaded silently.
#[test]
fn matcha_exports_still_load() {
    let dir = tmp("matcha-load");
    for name in ["aws-gaia", "aws-north-america"] {
        let u = underlay(name);
        let model = NetworkSpec::default().build(&u).expect("model");
        let labels = model.connectivity.placement().labels(&u);
        for kind in [
            "matcha:budget=0.001",
            "matcha:budget=0.1",
            "matcha",
            "matcha+",
        ] {
            let kind: OverlayKind = kind.parse().expect("kind");
            let m = EvaluatedOverlay::build(kind, &u, &model, &BuildOptions::default())
                .expect("matcha");
            let e = m.export_schedule(&labels).expect("export");
            assert_eq!(e.connectivity_note(), None, "{name} {kind}");
            for (ext, text) in [("json", e.to_json()), ("csv", e.to_csv())] {
                let p = dir.join(format!("{name}-{}.rounds.{ext}", kind.name()));
                std::fs::write(&p, text).expect("write");
                let back: OverlayKind = format!("file:{}", s(&p)).parse().expect("file kind");
                EvaluatedOverlay::build(back, &u, &model, &BuildOptions::default())
                    .unwrap_or_else(|e| panic!("{name} {kind} {ext}: {e}"));
            }
        }
    }
    // Short samples: refused with the silos named, and the export says so.
    let dir2 = tmp("matcha-short");
    let (_, err) = works(&[
        "compare",
        "aws-gaia",
        "--overlays",
        "matcha:budget=0.001",
        "--matcha-rounds",
        "2",
        "--export-dir",
        s(&dir2),
    ]);
    let file = dir2.join("matcha:budget=0.001.rounds.json");
    if err.contains("warning: the 2 exported round(s)") {
        let u = underlay("aws-gaia");
        let model = NetworkSpec::default().build(&u).expect("model");
        let kind: OverlayKind = format!("file:{}", s(&file)).parse().expect("kind");
        match EvaluatedOverlay::build(kind, &u, &model, &BuildOptions::default()) {
            Err(EvalError::Build(BuildError::File(FileOverlayError::NotConnected {
                deaf,
                unheard,
                ..
            }))) => assert!(!deaf.is_empty() && !unheard.is_empty()),
            Err(e) => panic!("not a connectivity error: {e}"),
            Ok(_) => panic!("a sample the export warned about was loaded"),
        }
    }
}

// ---------------------------------------------------------------- item 7

/// `--calibrate` refuses NaN, infinities, negative values and a second row
/// for one overlay, naming file, line and column; `--base-rounds` is in
/// (0, 1e6].
#[test]
fn design_inputs_are_checked() {
    let dir = tmp("design");
    let header = "overlay,rounds,rounds_to_target,time_to_target_ms\n";
    for (name, body, expect) in [
        (
            "nan.csv",
            "ring,100,nan,5000\n",
            vec!["nan.csv:2:3", "`rounds_to_target`", "not a finite number"],
        ),
        (
            "inf.csv",
            "ring,100,inf,5000\n",
            vec!["inf.csv:2:3", "not a finite number"],
        ),
        (
            "neg.csv",
            "ring,100,30,-9600\n",
            vec!["neg.csv:2:4", "`time_to_target_ms`", "negative"],
        ),
        (
            "negr.csv",
            "mst,100,20,3000\nring,100,-3,5000\n",
            vec!["negr.csv:3:3", "negative"],
        ),
        (
            "dup.csv",
            "ring,100,30,600\nmst,100,20,3000\nring,100,35,700\n",
            vec!["dup.csv:4:1", "`ring` is measured twice (lines 2 and 4)"],
        ),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, format!("{header}{body}")).expect("write");
        let mut expect = expect;
        expect.push("--calibrate");
        refused(
            &[
                "design",
                "aws-gaia",
                "--overlays",
                "ring,mst",
                "--no-augmented",
                "--calibrate",
                s(&p),
            ],
            &expect,
        );
    }
    for v in ["1e308", "0", "-1", "inf", "nan", "1000001"] {
        refused(
            &["design", "aws-gaia", "--base-rounds", v],
            &["--base-rounds", "(0, 1000000]"],
        );
    }
}

/// `design` on a valid 2- or 3-silo underlay: the default candidates that
/// do not fit are skipped with a note; asked for explicitly, an error
/// naming the candidate.
#[test]
fn design_skips_default_candidates_that_do_not_fit() {
    let dir = tmp("small");
    let nodes = [("A", 40.0, -74.0), ("B", 41.8, -87.6), ("C", 34.0, -118.2)];
    for n in [2, 3] {
        let mut g = String::from("graph [\n");
        for (i, (l, lat, lon)) in nodes[..n].iter().enumerate() {
            g.push_str(&format!(
                "  node [ id {i} label \"{l}\" Latitude {lat} Longitude {lon} ]\n"
            ));
        }
        for i in 1..n {
            g.push_str(&format!("  edge [ source {} target {i} ]\n", i - 1));
        }
        g.push_str("]\n");
        let p = dir.join(format!("small{n}.gml"));
        std::fs::write(&p, g).expect("write");
        let (out, err) = works(&["design", s(&p)]);
        assert!(
            err.contains("note: default candidate regular:k=4 skipped"),
            "{err}"
        );
        assert!(out.contains("predicted winner"), "{out}");
        refused(
            &["design", s(&p), "--overlays", "ring,regular:k=4"],
            &["candidate `regular:k=4` does not fit"],
        );
    }
}

// --------------------------------------------------------------- item 10

/// A MATCHA per-round export (JSON and CSV) reads back with MATCHA's cycle
/// time (the round estimate) and max-plus rate, within 1e-12, on both
/// built-in underlays: the round-trip promise of docs/overlays.md.
#[test]
fn matcha_round_trip_keeps_the_headline() {
    let dir = tmp("roundtrip");
    for (name, headline) in [("aws-north-america", 118.19), ("aws-gaia", 227.03)] {
        let u = underlay(name);
        let model = NetworkSpec::default().build(&u).expect("model");
        let labels = model.connectivity.placement().labels(&u);
        let m = EvaluatedOverlay::build(OverlayKind::MATCHA, &u, &model, &BuildOptions::default())
            .expect("matcha");
        let t = m.cycle_time(&model).expect("timing");
        // The numbers the issue and docs/overlays.md quote (seed 0, 1000 rounds).
        assert!(
            (t.cycle_time_ms - headline).abs() < 0.005,
            "{name}: {}",
            t.cycle_time_ms
        );
        let maxplus = t.schedule.as_ref().expect("schedule").maxplus_ms;
        let e = m.export_schedule(&labels).expect("export");
        for (ext, text) in [("json", e.to_json()), ("csv", e.to_csv())] {
            let p = dir.join(format!("{name}.rounds.{ext}"));
            std::fs::write(&p, text).expect("write");
            let kind: OverlayKind = format!("file:{}", s(&p)).parse().expect("kind");
            let back = EvaluatedOverlay::build(kind, &u, &model, &BuildOptions::default())
                .expect("read back");
            let b = back.cycle_time(&model).expect("timing");
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(1.0);
            assert!(
                close(b.cycle_time_ms, t.cycle_time_ms),
                "{name} {ext}: {} vs {}",
                b.cycle_time_ms,
                t.cycle_time_ms
            );
            let bm = b.schedule.as_ref().expect("schedule").maxplus_ms;
            assert!(
                close(bm, maxplus),
                "{name} {ext}: max-plus {bm} vs {maxplus}"
            );
            assert!(!back.has_exact_cycle_time());
            // Exported again, it stays a sample.
            assert!(back.export_schedule(&labels).expect("again").sampled);
        }
    }
}

// --------------------------------------------------------------- item 11

/// Options whose numbers are read after parsing (with units) name
/// themselves too; the parse-time ones are covered, every numeric option of
/// every command, by the unit test `cli::tests`.
#[test]
fn negative_values_of_unit_options_name_the_option() {
    for (opt, expect) in [
        ("--compute-ms", "expected a time in ms"),
        ("--model-bits", "expected a model size"),
        ("--access", "expected a bandwidth"),
        ("--default-core-capacity", "bandwidth must be positive"),
        ("--default-length-km", "expected a finite length >= 0"),
        ("--budget", "expected a communication budget in [0.001, 1]"),
        ("--seed", "expected a whole number >= 0"),
        (
            "--matcha-rounds",
            "expected a whole number of rounds from 1 to 1000000",
        ),
    ] {
        let line = refused(&["compare", "aws-gaia", opt, "-1"], &[opt, expect]);
        assert!(!line.contains("-- -1"), "{line}");
    }
    refused(
        &["mixing", "aws-gaia", "--gamma", "-0.5"],
        &["--gamma", "[0, 1)"],
    );
}
