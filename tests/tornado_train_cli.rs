//! `fedtopo tornado learn --trainer torch` end to end (feature `train`; run
//! with `scripts/libtorch.sh cargo test --features train --test tornado_train_cli`).
#![cfg(feature = "train")]

mod common;

use common::fedtopo;
use std::path::{Path, PathBuf};
use std::process::Output;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "fedtopo-tornado-train-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "fedtopo failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

fn learn(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "tornado",
        "learn",
        "--trainer",
        "torch",
        "--nodes",
        "16",
        "--steps",
        "120",
        "--eval-every",
        "40",
        "--separation",
        "0.5",
        "--target",
        "0.3",
        "--methods",
        "fedavg,tornado,tornadoes,ifca,tornado-rings",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    fedtopo(&args)
}

/// Same seeds, byte-identical stdout and CSVs; every method is trained and
/// evaluated; the torch learner beats chance on the label-skewed data.
#[test]
fn torch_learner_is_deterministic_and_learns() {
    let (a, b) = (tmp("a"), tmp("b"));
    let sa = ok(&learn(&a, &["--seeds", "0..2"]));
    let sb = ok(&learn(&b, &["--seeds", "0..2"]));
    assert_eq!(sa, sb);
    for f in ["curves.csv", "summary.csv"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f} differs between identical runs"
        );
    }
    assert!(sa.contains("learner: torch logreg"), "{sa}");
    assert!(sa.contains("ordering by mean final accuracy"), "{sa}");
    assert!(sa.contains("seed 1: "), "{sa}");
    let curves = std::fs::read_to_string(a.join("curves.csv")).unwrap();
    // 5 methods x 2 seeds x 3 evaluations, all with a training loss.
    let rows: Vec<&str> = curves.lines().skip(1).collect();
    assert_eq!(rows.len(), 30, "{curves}");
    for row in &rows {
        let f: Vec<&str> = row.split(',').collect();
        let loss: f64 = f[4].parse().expect("train loss present");
        assert!(loss.is_finite() && loss > 0.0, "{row}");
    }
    // Ten classes: chance is 0.1; every method does better after 120 steps.
    let summary = std::fs::read_to_string(a.join("summary.csv")).unwrap();
    for row in summary.lines().skip(1) {
        let acc: f64 = row.split(',').nth(2).unwrap().parse().unwrap();
        assert!(acc > 0.15, "{row}");
    }
    // Another seed set gives other numbers.
    let c = tmp("c");
    ok(&learn(&c, &["--seed", "5"]));
    assert_ne!(
        std::fs::read(a.join("summary.csv")).unwrap(),
        std::fs::read(c.join("summary.csv")).unwrap()
    );
    for d in [a, b, c] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Timed on the built-in underlay with an MLP; bad torch options are refused.
#[test]
fn torch_learner_timed_and_bad_input() {
    let d = tmp("timed");
    let o = fedtopo(&[
        "tornado",
        "learn",
        "--trainer",
        "torch",
        "--model",
        "mlp:16",
        "--optimizer",
        "sgd:0.5",
        "--steps",
        "40",
        "--eval-every",
        "20",
        "--target",
        "0.2",
        "--methods",
        "fedavg,mm-psgd",
        "--network",
        "maxplus",
        "--real-model-size",
        "--out",
        d.to_str().unwrap(),
    ]);
    let s = ok(&o);
    assert!(s.contains("mlp:16"), "{s}");
    let curves = std::fs::read_to_string(d.join("curves.csv")).unwrap();
    for row in curves.lines().skip(1) {
        let wall = row.rsplit(',').next().unwrap();
        assert!(wall.parse::<f64>().unwrap() > 0.0, "{row}");
    }
    let _ = std::fs::remove_dir_all(&d);
    for (args, msg) in [
        (vec!["--model", "resnet"], "unknown model"),
        (vec!["--optimizer", "rmsprop"], "unknown optimizer"),
        (vec!["--dataset", "cifar:/x"], "unknown dataset"),
        (
            vec!["--dataset", "mnist:/nonexistent-dir"],
            "nonexistent-dir",
        ),
    ] {
        let mut full = vec!["tornado", "learn", "--trainer", "torch", "--nodes", "4"];
        full.extend(args);
        let o = fedtopo(&full);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(msg), "{msg}: {err}");
    }
}

/// `--dataset mnist:DIR` realises the label-skewed partition on IDX files
/// (here a tiny generated stand-in: 8x8 images whose bright row is the label).
#[test]
fn torch_learner_on_mnist_files() {
    use fedtopo::train::data::mnist::encode_idx;
    let dir = tmp("mnist");
    std::fs::create_dir_all(&dir).unwrap();
    for (pre, count) in [("train", 400usize), ("t10k", 100)] {
        let labels: Vec<u8> = (0..count).map(|k| (k * 7 % 10) as u8).collect();
        let mut px = Vec::with_capacity(count * 64);
        for (k, &l) in labels.iter().enumerate() {
            for p in 0..64usize {
                let on = p / 8 == (l as usize) % 8 && (l < 8 || p % 2 == usize::from(l == 9));
                px.push(if on {
                    200
                } else {
                    ((k * 31 + p * 17) % 40) as u8
                });
            }
        }
        std::fs::write(
            dir.join(format!("{pre}-images-idx3-ubyte")),
            encode_idx(&[count, 8, 8], &px),
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("{pre}-labels-idx1-ubyte")),
            encode_idx(&[count], &labels),
        )
        .unwrap();
    }
    let out = tmp("mnist-out");
    let data = format!("mnist:{}", dir.display());
    let s = ok(&fedtopo(&[
        "tornado",
        "learn",
        "--trainer",
        "torch",
        "--dataset",
        &data,
        "--nodes",
        "10",
        "--steps",
        "100",
        "--eval-every",
        "50",
        "--lr",
        "0.1",
        "--methods",
        "fedavg,ifca",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(s.contains("MNIST split by the label counts"), "{s}");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 3, "{summary}");
    for row in summary.lines().skip(1) {
        let acc: f64 = row.split(',').nth(2).unwrap().parse().unwrap();
        assert!(acc > 0.2, "{row}");
    }
    // The Shakespeare-like partition has 80 classes: refused on MNIST.
    let o = fedtopo(&[
        "tornado",
        "learn",
        "--trainer",
        "torch",
        "--dataset",
        &data,
        "--nodes",
        "10",
        "--partition",
        "shakespeare",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--partition mnist"));
    for d in [dir, out] {
        let _ = std::fs::remove_dir_all(d);
    }
}
