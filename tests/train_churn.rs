//! Training under churn (feature `train`): a run driven by the clock under
//! `availability = skip` equals the same rounds made by hand with the
//! re-normalised matrices and masks (the silo that is down never computes
//! and is never averaged with, and keeps its initial model), and
//! `fedtopo train --availability` reports the policy and is deterministic.
#![cfg(feature = "train")]

mod common;

use common::fedtopo;
use fedtopo::mixing::consensus::{ConsensusMatrix, ConsensusRule};
use fedtopo::net::dynamics::AvailabilityPolicy;
use fedtopo::prelude::*;
use fedtopo::replay::clock::EngineClock;
use fedtopo::train::checkpoint::{run, RunOptions};
use fedtopo::train::data::synthetic::{generate, SyntheticSpec};
use fedtopo::train::model::ModelKind;
use fedtopo::train::optim::{LrSchedule, OptimizerKind};
use fedtopo::train::trainer::{ExecMode, TrainConfig, Trainer};
use tch::Tensor;

/// The three-silo triangle of `tests/churn.rs` (100 Mbit/s access,
/// 1e7-bit models, 10 ms of compute), silo `c` down from 5 ms for good,
/// under `skip`.
fn model() -> DelayModel {
    let (u, m) = common::tiny_network(
        &["a", "b", "c"],
        &[(0, 1, 100.0), (1, 2, 100.0), (0, 2, 100.0)],
        1e8,
    );
    let text = "time_s,target,value\n0.005,avail:c,down\n";
    common::with_trace(m, &u, text, AvailabilityPolicy::Skip)
}

fn trainer() -> Trainer {
    let spec = SyntheticSpec {
        median_per_silo: 40,
        test_per_silo: 10,
        ..SyntheticSpec::default()
    };
    let data = generate(&spec, 3, 4).unwrap();
    Trainer::new(
        TrainConfig {
            model: ModelKind::Mlp { hidden: 6 },
            optimizer: OptimizerKind::Sgd { momentum: 0.0 },
            lr: 0.1,
            lr_schedule: LrSchedule::Constant,
            local_steps: 2,
            batch_size: 4,
            consensus: ConsensusRule::LocalDegree,
            eval_samples: 50,
            seed: 2,
            mode: ExecMode::Batched,
        },
        &data,
    )
    .unwrap()
}

fn max_diff(a: &[Tensor], b: &[Tensor]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs().max().double_value(&[]))
        .fold(0.0, f64::max)
}

#[test]
fn a_skipped_silo_is_never_averaged_and_never_computes() {
    let m = model();
    let o = Overlay::from_edges("complete", 3, &[(0, 1), (0, 2), (1, 2)]);
    let mut clocked = trainer();
    let initial: Vec<Vec<Tensor>> = (0..3)
        .map(|i| clocked.silo_parameters(i).unwrap())
        .collect();
    let mut clock = EngineClock::new(&o, &m, NetworkKind::Maxplus).unwrap();
    let opts = RunOptions {
        rounds: 5,
        eval_every: 5,
        checkpoint_every: 0,
        dir: None,
        stop_after: None,
        stop_at: None,
        stop_behind_ms: None,
    };
    let records = run(&mut clocked, &o, &mut clock, &opts, "churn", |_, _| {}).unwrap();
    assert_eq!(records.len(), 2);
    // By hand: a and b average each other with the local-degree weights
    // re-normalised over {a, b}; c neither computes nor averages.
    let base = ConsensusRule::LocalDegree.matrix(&o).unwrap();
    let w = |i: usize, j: usize| base.get(i, j) / (base.get(i, i) + base.get(i, 1 - i));
    let a = ConsensusMatrix::from_rows(vec![
        vec![w(0, 0), w(0, 1), 0.0],
        vec![w(1, 0), w(1, 1), 0.0],
        vec![0.0, 0.0, 1.0],
    ])
    .unwrap();
    let mut by_hand = trainer();
    for _ in 0..5 {
        by_hand
            .train_round_masked(&a, &[true, true, false])
            .unwrap();
    }
    for i in 0..3 {
        let x = clocked.silo_parameters(i).unwrap();
        let y = by_hand.silo_parameters(i).unwrap();
        assert!(max_diff(&x, &y) <= 1e-6, "silo {i}: {}", max_diff(&x, &y));
    }
    assert_eq!(
        max_diff(&clocked.silo_parameters(2).unwrap(), &initial[2]),
        0.0
    );
    assert!(max_diff(&clocked.silo_parameters(0).unwrap(), &initial[0]) > 1e-4);
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-train-churn-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `fedtopo train --trace ... --availability skip|timeout:MS` on a paper
/// underlay: the summary names the policy in the network model, the same
/// seed gives the same bytes, and `skip` is not slower than `wait` on this
/// churn (it never waits for a silo that is down).
#[test]
fn train_cli_reports_the_policy_and_is_deterministic() {
    let dir = tmp("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("churn.csv");
    let o = fedtopo(&[
        "trace",
        "churn",
        "aws-north-america",
        "--mean-up-s",
        "2",
        "--mean-down-s",
        "1",
        "--duration-s",
        "60",
        "--seed",
        "3",
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let train = |policy: &str, out: &str| {
        let out = dir.join(out);
        let o = fedtopo(&[
            "train",
            "aws-north-america",
            "--access",
            "100M",
            "--overlays",
            "ring,star",
            "--model",
            "logreg",
            "--rounds",
            "6",
            "--eval-every",
            "3",
            "--eval-samples",
            "200",
            "--seed",
            "7",
            "--quiet",
            "--trace",
            trace.to_str().unwrap(),
            "--availability",
            policy,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(
            o.status.success(),
            "{policy}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::read_to_string(out.join("summary.csv")).unwrap()
    };
    let skip = train("skip", "skip");
    assert!(skip.contains("maxplus+traces+skip"), "{skip}");
    assert_eq!(skip, train("skip", "skip2"), "same seed, same bytes");
    let timeout = train("timeout:2000", "timeout");
    assert!(timeout.contains("maxplus+traces+timeout:2000"), "{timeout}");
    let wait = train("wait", "wait");
    assert!(
        wait.contains("maxplus+traces") && !wait.contains("+wait"),
        "{wait}"
    );
    let wall = |csv: &str, overlay: &str| -> f64 {
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = header
            .iter()
            .position(|h| *h == "final_wall_clock_ms")
            .unwrap();
        let row = lines.find(|l| l.starts_with(overlay)).unwrap();
        row.split(',').nth(col).unwrap().parse().unwrap()
    };
    for overlay in ["ring", "star"] {
        assert!(wall(&skip, overlay) <= wall(&wait, overlay), "{overlay}");
    }
}
