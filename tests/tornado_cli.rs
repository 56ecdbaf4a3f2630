//! End-to-end runs of `fedtopo tornado`.

mod common;

use common::fedtopo;
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

#[test]
fn time_lists_every_method_deterministically() {
    let args = [
        "tornado",
        "time",
        "--steps",
        "200",
        "--network",
        "flow",
        "--seed",
        "3",
    ];
    let a = fedtopo(&args);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let out = stdout(&a);
    for m in [
        "fedavg",
        "hierfavg",
        "astraea",
        "mm-psgd",
        "tornado",
        "tornadoes",
        "ifca",
        "semicyclic",
        "tornado-rings",
    ] {
        assert!(out.contains(m), "{m} missing:\n{out}");
    }
    assert_eq!(out, stdout(&fedtopo(&args)));
}

#[test]
fn clustering_and_learn_run() {
    let o = fedtopo(&["tornado", "clustering", "--seeds", "3"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("MNIST"));
    let o = fedtopo(&[
        "tornado",
        "learn",
        "--nodes",
        "20",
        "--steps",
        "200",
        "--methods",
        "fedavg,tornadoes",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("tornadoes"));
    // FedML's MNIST label counts; more nodes than its 1000 devices is refused.
    let args = |n: &'static str| {
        [
            "tornado",
            "learn",
            "--nodes",
            n,
            "--steps",
            "100",
            "--methods",
            "ifca",
            "--partition",
            "fedprox-mnist",
        ]
    };
    let o = fedtopo(&args("30"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("FedproxMnist"), "{}", stdout(&o));
    let o = fedtopo(&args("1001"));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("1000 devices"));
}

#[test]
fn bad_input_is_refused_clearly() {
    let o = fedtopo(&["tornado", "time", "--methods", "fedsgd"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown method `fedsgd`"));
    let o = fedtopo(&["tornado", "time", "--steps", "0"]);
    assert!(!o.status.success());
    let o = fedtopo(&["tornado", "learn", "--nodes", "1"]);
    assert!(!o.status.success());
}

/// Several seeds: mean ± std table, orderings, per-seed CSV rows; same
/// seeds, same bytes.
#[test]
fn learn_over_seeds_is_deterministic() {
    let dir = std::env::temp_dir().join(format!("fedtopo-tornado-seeds-{}", std::process::id()));
    let run = |sub: &str| {
        let d = dir.join(sub);
        let o = fedtopo(&[
            "tornado",
            "learn",
            "--nodes",
            "20",
            "--steps",
            "200",
            "--target",
            "0.3",
            "--methods",
            "fedavg,ifca,semicyclic",
            "--seeds",
            "1..4",
            "--out",
            d.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (
            stdout(&o),
            std::fs::read(d.join("summary.csv")).unwrap(),
            std::fs::read(d.join("curves.csv")).unwrap(),
        )
    };
    let a = run("a");
    assert_eq!(a, run("b"));
    assert!(a.0.contains("seeds 1,2,3"), "{}", a.0);
    assert!(a.0.contains("ordering by mean final accuracy"), "{}", a.0);
    assert!(a.0.contains("seed 3: "), "{}", a.0);
    assert!(a.0.contains(" ± "), "{}", a.0);
    let summary = String::from_utf8(a.1).unwrap();
    // Header + 3 methods x 3 seeds.
    assert_eq!(summary.lines().count(), 10, "{summary}");
    assert!(summary.lines().nth(1).unwrap().starts_with("fedavg,1,"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn learn_refuses_bad_seeds_and_torch_options() {
    for (extra, msg) in [
        (vec!["--seeds", "3..3"], "at least one seed"),
        (vec!["--seeds", "1,1"], "each once"),
        (vec!["--seeds", "a..2"], "not a seed"),
        (vec!["--model", "mlp"], "need --trainer torch"),
        (vec!["--dataset", "mnist:/tmp"], "need --trainer torch"),
    ] {
        let mut args = vec!["tornado", "learn", "--nodes", "4", "--steps", "10"];
        args.extend(extra);
        let o = fedtopo(&args);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(msg), "{msg}: {err}");
    }
}

/// Without the `train` feature, `--trainer torch` says how to get it.
#[cfg(not(feature = "train"))]
#[test]
fn torch_trainer_needs_the_train_feature() {
    let o = fedtopo(&["tornado", "learn", "--nodes", "4", "--trainer", "torch"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--features train"));
}

/// `tornado time --format csv|json`: the table's rows for scripts (one per
/// method), the heading on stderr; the same cells in both formats.
#[test]
fn tornado_time_rows_for_scripts() {
    let args = [
        "tornado",
        "time",
        "aws-gaia",
        "--steps",
        "20",
        "--methods",
        "fedavg,tornado",
    ];
    let csv_out = fedtopo(&[&args[..], &["--format", "csv"]].concat());
    let json_out = fedtopo(&[&args[..], &["--format", "json"]].concat());
    assert!(
        csv_out.status.success(),
        "{}",
        String::from_utf8_lossy(&csv_out.stderr)
    );
    assert!(json_out.status.success());
    let mut r = csv::Reader::from_reader(&csv_out.stdout[..]);
    let h = r.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    let v: serde_json::Value = serde_json::from_slice(&json_out.stdout).unwrap();
    let j = v.as_array().unwrap();
    assert_eq!(j.len(), 2);
    let m = h.iter().position(|c| c == "method").unwrap();
    let w = h.iter().position(|c| c == "wall-clock (s)").unwrap();
    for (row, obj) in rows.iter().zip(j) {
        assert_eq!(obj["method"], row[m]);
        assert_eq!(obj["wall-clock (s)"], row[w]);
    }
    assert!(String::from_utf8_lossy(&csv_out.stderr).contains("note: "));
}
