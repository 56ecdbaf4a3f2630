//! Real model updates of the asynchronous protocols (feature `train`):
//! hand-built operation logs against the same updates made one by one
//! (local steps, pairwise averages, FedBuff's staleness-weighted buffer),
//! and end-to-end runs through `fedtopo train --protocol`.
#![cfg(feature = "train")]

mod common;

use common::fedtopo;
use fedtopo::mixing::consensus::ConsensusRule;
use fedtopo::network::NetworkStats;
use fedtopo::replay::asynchronous::{AsyncOp, AsyncRun};
use fedtopo::train::asynchronous::{staleness_weight, train_async, AsyncTrainOptions};
use fedtopo::train::data::synthetic::{generate, SyntheticSpec};
use fedtopo::train::data::FederatedData;
use fedtopo::train::model::ModelKind;
use fedtopo::train::optim::{LrSchedule, OptimizerKind};
use fedtopo::train::trainer::{ExecMode, TrainConfig, Trainer};
use tch::Tensor;

fn data() -> FederatedData {
    let spec = SyntheticSpec {
        median_per_silo: 40,
        test_per_silo: 10,
        ..SyntheticSpec::default()
    };
    generate(&spec, 3, 4).unwrap()
}

fn trainer(d: &FederatedData, optimizer: OptimizerKind) -> Trainer {
    Trainer::new(
        TrainConfig {
            model: ModelKind::Mlp { hidden: 6 },
            optimizer,
            lr: 0.1,
            lr_schedule: LrSchedule::InvSqrt,
            local_steps: 2,
            batch_size: 4,
            consensus: ConsensusRule::Auto,
            eval_samples: 50,
            seed: 2,
            mode: ExecMode::Batched,
        },
        d,
    )
    .unwrap()
}

fn run(ops: Vec<AsyncOp>, computations: Vec<u64>) -> AsyncRun {
    AsyncRun {
        protocol: "test".into(),
        network: "none".into(),
        makespan_ms: ops.last().map_or(0.0, AsyncOp::at_ms),
        ops,
        computations,
        transfers: 0,
        events: 0,
        unapplied_updates: 0,
        network_stats: NetworkStats::default(),
    }
}

fn max_diff(a: &[Tensor], b: &[Tensor]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs().max().double_value(&[]))
        .fold(0.0, f64::max)
}

fn compute(silo: usize, count: u64, at: f64) -> AsyncOp {
    AsyncOp::Compute {
        silo,
        count,
        start_ms: at - 1.0,
        at_ms: at,
    }
}

/// Gossip: local steps and averages in log order; silo 2 is untouched by
/// the average of 0 and 1; a second computation uses round 1's batches
/// and learning rate.
#[test]
fn gossip_log_applies_steps_and_averages_in_order() {
    let d = data();
    for opt in [
        OptimizerKind::Sgd { momentum: 0.0 },
        OptimizerKind::Sgd { momentum: 0.9 },
    ] {
        let ops = vec![
            compute(0, 0, 1.0),
            compute(1, 0, 2.0),
            compute(2, 0, 2.5),
            AsyncOp::Average {
                a: 0,
                b: 1,
                start_ms: 2.0,
                at_ms: 3.0,
            },
            compute(0, 1, 4.0),
        ];
        let mut t = trainer(&d, opt);
        let recs = train_async(
            &mut t,
            &run(ops, vec![2, 1, 1]),
            &AsyncTrainOptions::default(),
        )
        .unwrap();
        // By hand, one update at a time on another trainer.
        let mut h = trainer(&d, opt);
        h.local_steps_of(0, 0).unwrap();
        h.local_steps_of(1, 0).unwrap();
        h.local_steps_of(2, 0).unwrap();
        let (p0, p1) = (h.silo_parameters(0).unwrap(), h.silo_parameters(1).unwrap());
        let mean: Vec<Tensor> = p0.iter().zip(&p1).map(|(a, b)| (a + b) / 2.0).collect();
        h.set_silo_parameters(0, &mean).unwrap();
        h.set_silo_parameters(1, &mean).unwrap();
        let silo2 = h.silo_parameters(2).unwrap();
        h.local_steps_of(0, 1).unwrap();
        for i in 0..3 {
            let diff = max_diff(
                &t.silo_parameters(i).unwrap(),
                &h.silo_parameters(i).unwrap(),
            );
            assert!(diff < 1e-6, "{opt:?} silo {i}: {diff}");
        }
        assert!(max_diff(&t.silo_parameters(1).unwrap(), &mean) < 1e-6);
        assert!(max_diff(&t.silo_parameters(2).unwrap(), &silo2) < 1e-6);
        // A second computation is not the first one again.
        let mut again = trainer(&d, opt);
        again.set_silo_parameters(0, &mean).unwrap();
        again.local_steps_of(0, 0).unwrap();
        assert!(
            max_diff(
                &again.silo_parameters(0).unwrap(),
                &t.silo_parameters(0).unwrap()
            ) > 1e-7
        );
        // 5 computations of 3 silos: records at 3 (one equivalent round)
        // and at the end.
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[1].wall_clock_ms, 2.5);
        assert_eq!(recs[2].wall_clock_ms, 4.0);
    }
}

/// FedBuff: clients compute from the model they downloaded; the server adds
/// `eta / K * sum s(tau) Delta`; a later download gets the new model.
#[test]
fn buffered_log_aggregates_staleness_weighted_updates() {
    let d = data();
    let opt = OptimizerKind::Sgd { momentum: 0.0 };
    let ops = vec![
        AsyncOp::Download {
            silo: 1,
            version: 0,
            at_ms: 0.0,
        },
        AsyncOp::Download {
            silo: 2,
            version: 0,
            at_ms: 0.0,
        },
        compute(1, 0, 5.0),
        compute(2, 0, 6.0),
        AsyncOp::Upload {
            silo: 1,
            base: 0,
            at_ms: 7.0,
        },
        AsyncOp::Upload {
            silo: 2,
            base: 0,
            at_ms: 8.0,
        },
        AsyncOp::Aggregate {
            version: 1,
            at_ms: 8.0,
            updates: vec![(1, 0), (2, 3)],
        },
        AsyncOp::Download {
            silo: 1,
            version: 1,
            at_ms: 8.0,
        },
    ];
    let opts = AsyncTrainOptions {
        server_lr: 0.7,
        ..AsyncTrainOptions::default()
    };
    let mut t = trainer(&d, opt);
    let x0 = t.silo_parameters(0).unwrap();
    train_async(&mut t, &run(ops, vec![0, 1, 1]), &opts).unwrap();
    let mut h = trainer(&d, opt);
    h.local_steps_of(1, 0).unwrap();
    h.local_steps_of(2, 0).unwrap();
    let d1: Vec<Tensor> = h
        .silo_parameters(1)
        .unwrap()
        .iter()
        .zip(&x0)
        .map(|(a, b)| a - b)
        .collect();
    let d2: Vec<Tensor> = h
        .silo_parameters(2)
        .unwrap()
        .iter()
        .zip(&x0)
        .map(|(a, b)| a - b)
        .collect();
    let (w1, w2) = (
        0.7 * staleness_weight(0) / 2.0,
        0.7 * staleness_weight(3) / 2.0,
    );
    assert!((staleness_weight(3) - 0.5).abs() < 1e-15);
    let server: Vec<Tensor> = x0
        .iter()
        .zip(d1.iter().zip(&d2))
        .map(|(x, (a, b))| x + a * w1 + b * w2)
        .collect();
    // Silo 1 downloaded the new model; silo 2 still holds its own.
    assert!(max_diff(&t.silo_parameters(1).unwrap(), &server) < 1e-6);
    assert!(
        max_diff(
            &t.silo_parameters(2).unwrap(),
            &h.silo_parameters(2).unwrap()
        ) < 1e-6
    );
    // An upload before any computation is a clear error.
    let bad = vec![AsyncOp::Upload {
        silo: 1,
        base: 0,
        at_ms: 1.0,
    }];
    let mut t = trainer(&d, opt);
    let e = train_async(&mut t, &run(bad, vec![0, 0, 0]), &opts).unwrap_err();
    assert!(e.to_string().contains("uploaded before computing"), "{e}");
}

fn train(
    out: &std::path::Path,
    protocol: &str,
    overlays: &str,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "train",
        "aws-north-america",
        "--access",
        "100M",
        "--overlays",
        overlays,
        "--protocol",
        protocol,
        "--network",
        "flow",
        "--model",
        "logreg",
        "--partition",
        "iid",
        "--rounds",
        "20",
        "--eval-every",
        "5",
        "--eval-samples",
        "300",
        "--seed",
        "3",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    fedtopo(&args)
}

/// `fedtopo train --protocol async-gossip|fedbuff:K`: seeded (same bytes),
/// learning (test accuracy above its start), the run's counts on stderr;
/// clear errors for fedbuff off star and for --breakdown.
#[test]
fn train_protocol_end_to_end() {
    let base = std::env::temp_dir().join(format!("fedtopo-train-async-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    for (protocol, overlay) in [("async-gossip", "ring"), ("fedbuff:4", "star")] {
        let a = train(&base.join(format!("{protocol}-a")), protocol, overlay, &[]);
        assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
        let b = train(&base.join(format!("{protocol}-b")), protocol, overlay, &[]);
        assert_eq!(a.stdout, b.stdout, "{protocol}: not deterministic");
        let err = String::from_utf8_lossy(&a.stderr);
        assert!(
            err.contains(&format!(
                "{protocol} on {overlay} (flow network): 440 computations"
            )),
            "{err}"
        );
        let metrics =
            std::fs::read_to_string(base.join(format!("{protocol}-a/{overlay}/metrics.csv")))
                .unwrap();
        let acc: Vec<f64> = metrics
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(11).unwrap().parse().unwrap())
            .collect();
        assert_eq!(acc.len(), 5, "{metrics}");
        assert!(acc[4] > acc[0] + 0.1, "{protocol}: {acc:?}");
    }
    let o = train(&base.join("x"), "fedbuff", "ring", &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("runs on star"));
    let o = train(
        &base.join("y"),
        "async-gossip",
        "ring",
        &["--breakdown", "/tmp/x.csv"],
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("synchronous rounds"));
    let o = train(&base.join("z"), "fedbuff:0", "star", &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("fedbuff:K"));
    let _ = std::fs::remove_dir_all(&base);
}
