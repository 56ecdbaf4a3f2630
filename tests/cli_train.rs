//! `fedtopo train` end to end (feature `train`; run with
//! `scripts/libtorch.sh cargo test --features train --test cli_train`).
#![cfg(feature = "train")]

mod common;

use common::fedtopo;
use std::path::{Path, PathBuf};
use std::process::Output;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-cli-train-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

const OVERLAYS: [&str; 3] = ["star", "ring", "matcha"];

/// A small run on AWS North America (22 silos, 100 Mbit/s access) with the
/// event engine timing STAR, RING and MATCHA over `network`.
fn train(out: &Path, rounds: u64, network: &str, extra: &[&str]) -> Output {
    let rounds = rounds.to_string();
    let mut args = vec![
        "train",
        "aws-north-america",
        "--access",
        "100M",
        "--overlays",
        "star,ring,matcha",
        "--network",
        network,
        "--model",
        "logreg",
        "--rounds",
        &rounds,
        "--eval-every",
        "2",
        "--eval-samples",
        "300",
        "--seed",
        "7",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    fedtopo(&args)
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "fedtopo failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v = vec![(
        "summary.csv".to_string(),
        std::fs::read(dir.join("summary.csv")).unwrap(),
    )];
    for o in OVERLAYS {
        let p = dir.join(o).join("metrics.csv");
        v.push((format!("{o}/metrics.csv"), std::fs::read(&p).unwrap()));
    }
    v
}

#[test]
fn same_seed_same_bytes_and_resume_equals_straight_run() {
    let (a, b, c) = (tmp("a"), tmp("b"), tmp("c"));
    let first = train(&a, 6, "flow", &[]);
    ok(&first);
    ok(&train(&b, 6, "flow", &[]));
    let fa = files(&a);
    assert_eq!(fa, files(&b), "two runs with the same seed differ");
    // Every overlay got 4 records (rounds 0, 2, 4, 6) and increasing times.
    for (name, bytes) in &fa[1..] {
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(text.lines().count(), 5, "{name}:\n{text}");
    }
    let summary = String::from_utf8(fa[0].1.clone()).unwrap();
    for o in OVERLAYS {
        assert!(summary.contains(o), "{summary}");
    }
    // Run 4 rounds (checkpoint every 2), then continue the same directory to
    // 6 rounds: the same bytes as the straight 6-round run.
    ok(&train(&c, 4, "flow", &["--checkpoint-every", "2"]));
    ok(&train(&c, 6, "flow", &["--checkpoint-every", "2"]));
    assert_eq!(fa, files(&c), "resumed run differs from the straight run");
    // A checkpoint made with another network model is not resumed: the
    // run starts afresh, with a note.
    let other = train(&c, 8, "maxplus", &[]);
    ok(&other);
    assert!(String::from_utf8_lossy(&other.stderr).contains("other settings"));
    assert!(String::from_utf8_lossy(&other.stderr).contains("starting afresh"));
    // Nor one with other network delays (the case: a finished run
    // rerun into the same directory with other options kept its timings).
    let slower = train(&c, 8, "maxplus", &["--compute-ms", "1000"]);
    ok(&slower);
    assert!(String::from_utf8_lossy(&slower.stderr).contains("starting afresh"));
    let per_round = |o: &Output| -> f64 {
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let h = r.headers().unwrap().clone();
        let col = h.iter().position(|c| c == "ms_per_round").unwrap();
        let row = r.records().next().unwrap().unwrap();
        row[col].parse().unwrap()
    };
    assert!(per_round(&slower) > per_round(&other) + 900.0);
    for d in [a, b, c] {
        std::fs::remove_dir_all(d).ok();
    }
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    let d = tmp("bad");
    let cases: [(&[&str], &str); 6] = [
        (&["--dataset", "nope"], "unknown dataset"),
        (&["--init-gain", "huge"], "--init-gain"),
        (&["--failures", "node:1.5"], "1.5"),
        (&["--target-acc", "1.5"], "--target-acc"),
        (&["--target-acc", "abc"], "--target-acc"),
        (&["--lr=-1"], "--lr"),
    ];
    for (extra, want) in cases {
        let o = train(&d, 2, "flow", extra);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{extra:?} succeeded");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
    }
    let o = train(&d, 2, "ether", &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("ether"));
    std::fs::remove_dir_all(d).ok();
}

/// Uncoordinated initialisation with the 1/||pi|| gain and random node
/// failures on gossip overlays: seeded, so two runs give the same bytes; and
/// the failures change the run.
#[test]
fn init_gain_and_failures_are_seeded() {
    let run = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "train",
            "aws-gaia",
            "--overlays",
            "ring,mst",
            "--model",
            "logreg",
            "--rounds",
            "4",
            "--eval-every",
            "2",
            "--eval-samples",
            "300",
            "--seed",
            "3",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
            "--init-gain",
            "pi",
        ];
        args.extend_from_slice(extra);
        ok(&fedtopo(&args));
    };
    let (a, b, c) = (tmp("gain-a"), tmp("gain-b"), tmp("gain-c"));
    run(&a, &["--failures", "node:0.7"]);
    run(&b, &["--failures", "node:0.7"]);
    run(&c, &[]);
    let read = |d: &Path| {
        ["summary.csv", "ring/metrics.csv", "mst/metrics.csv"]
            .map(|f| std::fs::read(d.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")))
    };
    assert_eq!(read(&a), read(&b));
    assert_ne!(read(&a), read(&c));
    for d in [a, b, c] {
        std::fs::remove_dir_all(d).ok();
    }
}

/// `fedtopo design --verify`: probe runs calibrate the predictor, the top
/// candidates are trained from their exported files on the design's own
/// network (`--access 100M` given once applies to the training runs), and
/// every run's features and outcome are in runs.csv.
#[test]
fn design_verify_trains_probes_and_the_top_candidates() {
    let out = tmp("design-verify");
    let dir = out.to_str().unwrap();
    let o = fedtopo(&[
        "design",
        "aws-gaia",
        "--access",
        "100M",
        "--overlays",
        "star,ring-opt,exp-1peer,mst",
        "--no-fastest",
        "--no-augmented",
        "--out",
        dir,
        "--verify",
        "--probes",
        "2",
        "--probe-rounds",
        "20",
        "--top",
        "2",
        "--format",
        "json",
        "--dataset",
        "synthetic",
        "--target-loss",
        "1.6",
        "--rounds",
        "40",
        "--quiet",
    ]);
    ok(&o);
    for f in [
        "probes/summary.csv",
        "verify/summary.csv",
        "candidates.csv",
        "runs.csv",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cands = v["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 4);
    let cand = |name: &str| {
        cands
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    // Every run in runs.csv: measured on its candidate, timed at 100 Mbit/s
    // (the designed cycle time, not the 10 Gbit/s default's).
    let mut r = csv::Reader::from_path(out.join("runs.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| {
        h.iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert!(rows.len() >= 2, "{} runs", rows.len());
    let ten_g = fedtopo(&[
        "design",
        "aws-gaia",
        "--overlays",
        "star,ring-opt,exp-1peer,mst",
        "--no-fastest",
        "--no-augmented",
        "--format",
        "json",
    ]);
    ok(&ten_g);
    let ten_g: serde_json::Value = serde_json::from_slice(&ten_g.stdout).unwrap();
    for row in &rows {
        let name = &row[col("candidate")];
        let c = cand(name);
        let designed = c["cycle_time_ms"].as_f64().unwrap();
        let fast = ten_g["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap()["cycle_time_ms"]
            .as_f64()
            .unwrap();
        let measured: f64 = row[col("ms_per_round")].parse().unwrap();
        assert!(designed > 2.0 * fast, "{name}: {designed} vs {fast}");
        // A run the race stopped before its first round has no round to time.
        if &row[col("rounds_trained")] == "0" {
            assert!(!row[col("stopped_behind_ms")].is_empty(), "{name}");
        } else {
            assert!(
                measured > 0.5 * designed && measured < 1.5 * designed,
                "{name}: trained at {measured} ms per round, designed {designed}"
            );
        }
        assert_eq!(&row[col("eval_every")], "1");
        assert_eq!(&row[col("dataset")], "synthetic(1,1)");
        // Reached: the candidate's measured rounds; not: censored.
        let reached = &row[col("reached")] == "true";
        assert_eq!(reached, !row[col("rounds_to_target")].is_empty());
        if row[col("phase")] == *"full" {
            match c["measured_rounds"].as_f64() {
                Some(m) => assert_eq!(m.to_string(), row[col("rounds_to_target")].to_string()),
                // Not reached: its 40 rounds, or fewer when the race
                // stopped it behind the best measured time.
                None => {
                    assert!(!reached);
                    let tried = c["rounds_tried"].as_u64().unwrap();
                    assert_eq!(tried.to_string(), row[col("rounds_trained")]);
                    if row[col("stopped_behind_ms")].is_empty() {
                        assert_eq!(tried, 40);
                    } else {
                        assert!(tried < 40);
                    }
                }
            }
        }
        // The run trained the candidate's exported file.
        let file = c["file"].as_str().unwrap();
        assert!(std::path::Path::new(file).is_file(), "{file}");
    }
    // Refused before any training, with the reason.
    let refused = |args: &[&str], reason: &str| {
        let all = [&["design", "aws-gaia", "--out", dir, "--verify"], args].concat();
        let o = fedtopo(&all);
        assert!(!o.status.success());
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(reason), "{reason}: {e}");
    };
    refused(&["--rounds", "5"], "give --target-acc ACC or --target-loss");
    refused(
        &["--", "--dataset", "synthetic", "--access", "100M"],
        "not after `--`",
    );
    refused(
        &["--target-acc", "0.5", "--consensus", "mh"],
        "give no other consensus rule",
    );
}

/// Training a small slice (500 examples) of Debian's Fashion-MNIST on the
/// simulated network: accuracy rises well above chance (0.1) in a few
/// rounds. Skips, saying so, without the package, unless
/// FEDTOPO_REQUIRE_DATASETS is set (CI installs it).
#[test]
fn fashion_mnist_slice_trains_above_chance() {
    use fedtopo::train::data::mnist::{load, FASHION_MNIST_DIR};
    use fedtopo::train::data::partition::Partition;
    use fedtopo::train::data::FederatedData;
    let dir = Path::new(FASHION_MNIST_DIR);
    if !dir.is_dir() {
        assert!(
            std::env::var_os("FEDTOPO_REQUIRE_DATASETS").is_none(),
            "FEDTOPO_REQUIRE_DATASETS is set but {FASHION_MNIST_DIR} is absent"
        );
        eprintln!("skipped: {FASHION_MNIST_DIR} absent (scripts/fashion-mnist.sh installs it)");
        return;
    }
    let (train, test) = load(dir).unwrap();
    let train = train.select(&(0..500).collect::<Vec<_>>());
    let test = test.select(&(0..500).collect::<Vec<_>>());
    let silos = Partition::parse("iid")
        .unwrap()
        .split(&train, 11, None, 3)
        .unwrap();
    let data = FederatedData {
        name: "fashion-mnist[500]".into(),
        train,
        test,
        silos,
    };
    let records = train_slice(&data, 30);
    let first = records.first().unwrap().test_acc.mean;
    let last = records.last().unwrap().test_acc.mean;
    assert!(first < 0.25, "initial accuracy {first}");
    assert!(last > 0.5, "accuracy after 30 rounds {last} (chance 0.1)");
}

/// Trains ring-opt on AWS Gaia (11 silos, default network) with logreg.
fn train_slice(
    data: &fedtopo::train::data::FederatedData,
    rounds: u64,
) -> Vec<fedtopo::train::report::RoundRecord> {
    use fedtopo::net::scenario::{load_underlay, NetworkSpec};
    use fedtopo::network::NetworkKind;
    use fedtopo::overlay::build::{BuildOptions, OverlayKind};
    use fedtopo::train::checkpoint::RunOptions;
    use fedtopo::train::session::Session;
    use fedtopo::train::trainer::TrainConfig;
    let u = load_underlay(Some("aws-gaia"), &Default::default()).unwrap();
    let model = NetworkSpec::default().build(&u).unwrap();
    assert_eq!(model.silo_count(), data.silo_count());
    let config = TrainConfig {
        eval_samples: 500,
        seed: 3,
        ..TrainConfig::default()
    };
    let session = Session {
        underlay: &u,
        model: &model,
        options: &BuildOptions::default(),
        config: &config,
        data,
        partition: "iid",
        network: NetworkKind::Maxplus,
        init: None,
        failures: None,
    };
    let opts = RunOptions {
        rounds,
        eval_every: 5,
        checkpoint_every: 0,
        dir: None,
        stop_after: None,
        stop_at: None,
        stop_behind_ms: None,
    };
    session
        .train(OverlayKind::RingOpt, &opts, |_, _| {})
        .unwrap()
}

/// The trained binary starts by itself: libtorch's directory is its run
/// path (build.rs), so it needs no `LD_LIBRARY_PATH`.
#[test]
fn trained_binary_starts_without_ld_library_path() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_fedtopo"))
        .args([
            "train",
            "aws-gaia",
            "--overlays",
            "ring",
            "--rounds",
            "2",
            "--quiet",
        ])
        .arg("--out")
        .arg(tmp("no-ld-path"))
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("binary runs");
    ok(&o);
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(summary.starts_with("overlay,rounds,"), "{summary}");
}

/// `train --breakdown FILE` writes where every round's time went, the
/// same silo-rounds `simulate --breakdown` writes for the same overlays
/// (the trainer's clock is the replay), JSON too, and a resumed run
/// writes the whole run; a path it cannot write fails before training.
#[test]
fn train_breakdown_equals_simulate_breakdown() {
    let d = tmp("breakdown");
    std::fs::create_dir_all(&d).unwrap();
    let csv = d.join("train.csv");
    ok(&train(
        &d.join("run"),
        4,
        "maxplus",
        &["--breakdown", csv.to_str().unwrap()],
    ));
    let sim = d.join("simulate.csv");
    ok(&fedtopo(&[
        "simulate",
        "aws-north-america",
        "--access",
        "100M",
        "--overlays",
        "star,ring,matcha",
        "--network",
        "maxplus",
        "--rounds",
        "4",
        "--seed",
        "7",
        "--breakdown",
        sim.to_str().unwrap(),
    ]));
    let trained = std::fs::read_to_string(&csv).unwrap();
    assert!(
        trained.starts_with("overlay,network,round,silo,label,"),
        "{trained}"
    );
    // 3 overlays x 4 rounds x 22 silos, and a header.
    assert_eq!(trained.lines().count(), 1 + 3 * 4 * 22);
    assert_eq!(trained, std::fs::read_to_string(&sim).unwrap());
    // Killed after 2 rounds, resumed to 4: the whole run's breakdown.
    let resumed = d.join("resumed.csv");
    let args = [
        "--checkpoint-every",
        "2",
        "--breakdown",
        resumed.to_str().unwrap(),
    ];
    ok(&train(&d.join("run2"), 2, "maxplus", &args));
    ok(&train(&d.join("run2"), 4, "maxplus", &args));
    assert_eq!(std::fs::read_to_string(&resumed).unwrap(), trained);
    // JSON: per-round means, the critical path, the silo-rounds.
    let json = d.join("train.json");
    ok(&train(
        &d.join("run3"),
        4,
        "maxplus",
        &["--breakdown", json.to_str().unwrap()],
    ));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let overlays = v["overlays"].as_array().unwrap();
    assert_eq!(overlays.len(), 3);
    assert!(!overlays[1]["critical_path"].as_array().unwrap().is_empty());
    // An unwritable path: a clear error before any training.
    let bad = d.join("no/such/dir/b.csv");
    let o = train(
        &d.join("run4"),
        4,
        "maxplus",
        &["--breakdown", bad.to_str().unwrap()],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no/such/dir/b.csv") && !err.contains("panicked"),
        "{err}"
    );
    assert!(
        !d.join("run4").join("star").exists(),
        "trained before failing"
    );
    std::fs::remove_dir_all(d).ok();
}
