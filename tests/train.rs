//! Training path tests (feature `train`; run with
//! `scripts/libtorch.sh cargo test --features train`).
#![cfg(feature = "train")]

use fedtopo::graph::Overlay;
use fedtopo::mixing::consensus::ConsensusRule;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::LoadOptions;
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::replay::clock::MaxPlusClock;
use fedtopo::train::checkpoint::{run, RunOptions};
use fedtopo::train::data::synthetic::{generate, SyntheticSpec};
use fedtopo::train::data::{Dataset, FederatedData};
use fedtopo::train::model::ModelKind;
use fedtopo::train::optim::{LrSchedule, OptimizerKind};
use fedtopo::train::report::render_csv;
use fedtopo::train::trainer::{ExecMode, TrainConfig, Trainer};

fn small_data(n: usize) -> FederatedData {
    let spec = SyntheticSpec {
        median_per_silo: 60,
        test_per_silo: 20,
        ..SyntheticSpec::default()
    };
    generate(&spec, n, 11).unwrap()
}

fn image_data(n: usize, (c, h, w): (usize, usize, usize)) -> FederatedData {
    // Tiny random images; labels from the mean of the first channel.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let dim = c * h * w;
    let count = 8 * n;
    let features: Vec<f32> = (0..count * dim).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let labels: Vec<i64> = (0..count).map(|k| (k % 10) as i64).collect();
    let ds = Dataset {
        features,
        labels,
        dim,
        classes: 10,
        image: Some((c, h, w)),
    };
    FederatedData {
        name: "img".into(),
        train: ds.clone(),
        test: ds.select(&(0..20).collect::<Vec<_>>()),
        silos: (0..n).map(|i| (i * 8..i * 8 + 8).collect()).collect(),
    }
}

fn cfg(model: ModelKind, optimizer: OptimizerKind, mode: ExecMode) -> TrainConfig {
    TrainConfig {
        model,
        optimizer,
        lr: 0.05,
        lr_schedule: LrSchedule::InvSqrt,
        local_steps: 2,
        batch_size: 8,
        consensus: ConsensusRule::Auto,
        eval_samples: 500,
        seed: 3,
        mode,
    }
}

fn ring(n: usize) -> Overlay {
    let tour: Vec<usize> = (0..n).rev().collect();
    Overlay::directed_ring("ring", n, &tour)
}

/// The batched tensor program and the per-silo loop compute the same models.
#[test]
fn batched_equals_per_silo_loop() {
    let cases: Vec<(ModelKind, FederatedData)> = vec![
        (ModelKind::LogReg, small_data(6)),
        (ModelKind::Mlp { hidden: 16 }, small_data(6)),
        (ModelKind::LeNet, image_data(4, (1, 16, 16))),
        (ModelKind::GnLeNet, image_data(3, (3, 16, 16))),
    ];
    for (model, data) in cases {
        let n = data.silo_count();
        let overlay = if n % 2 == 0 {
            Overlay::from_edges("t", n, &(1..n).map(|i| (i - 1, i)).collect::<Vec<_>>())
        } else {
            ring(n)
        };
        for opt in [
            // Plain SGD takes the fused in-place step for dense models.
            OptimizerKind::Sgd { momentum: 0.0 },
            OptimizerKind::Sgd { momentum: 0.9 },
            OptimizerKind::Adam {
                beta1: 0.9,
                beta2: 0.999,
                eps: 1e-8,
            },
        ] {
            let mut a = Trainer::new(cfg(model, opt, ExecMode::Batched), &data).unwrap();
            let mut b = Trainer::new(cfg(model, opt, ExecMode::PerSilo), &data).unwrap();
            let m = ConsensusRule::Auto.matrix(&overlay).unwrap();
            for _ in 0..3 {
                a.train_round(&m).unwrap();
                b.train_round(&m).unwrap();
            }
            let (ra, rb) = (a.evaluate(0.0), b.evaluate(0.0));
            for (x, y) in [
                (ra.train_loss.mean, rb.train_loss.mean),
                (ra.train_loss.min, rb.train_loss.min),
                (ra.test_loss.max, rb.test_loss.max),
                (ra.consensus_distance, rb.consensus_distance),
            ] {
                assert!(
                    (x - y).abs() < 1e-5 * (1.0 + x.abs()),
                    "{model:?} {opt:?}: {x} vs {y}"
                );
            }
            // Adam divides by sqrt(v): for near-zero gradients the last-bit
            // differences between grouped and single convolutions (other
            // summation order) grow to O(lr) in single parameters, so the
            // parameter-wise check is for SGD; the losses above cover Adam.
            let conv = matches!(model, ModelKind::LeNet | ModelKind::GnLeNet);
            if !(conv && matches!(opt, OptimizerKind::Adam { .. })) {
                for (p, q) in a.stacked_parameters().iter().zip(b.stacked_parameters()) {
                    let d = (p - q).abs().max().double_value(&[]);
                    assert!(d < 1e-5, "{model:?} {opt:?}: parameter difference {d}");
                }
            }
            assert!(ra.consensus_distance > 0.0);
        }
    }
}

/// Exact averaging leaves no disagreement between silos.
#[test]
fn star_keeps_silos_in_consensus() {
    let data = small_data(5);
    let mut t = Trainer::new(
        cfg(
            ModelKind::LogReg,
            OptimizerKind::Sgd { momentum: 0.0 },
            ExecMode::Batched,
        ),
        &data,
    )
    .unwrap();
    let star = fedtopo::overlay::star::star(5, 0);
    let a = ConsensusRule::Auto.matrix(&star).unwrap();
    t.train_round(&a).unwrap();
    assert!(t.consensus_distance() < 1e-5);
    let r = t.evaluate(0.0);
    assert!((r.test_loss.max - r.test_loss.min).abs() < 1e-5);
}

/// Training decreases the loss, on the AWS underlay with the max-plus clock.
#[test]
fn short_training_run_decreases_loss_and_times_rounds() {
    let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
    let model = NetworkSpec::default().delay_model(&u);
    let data = generate(&SyntheticSpec::default(), model.silo_count(), 1).unwrap();
    let overlay = build_overlay(OverlayKind::Ring, &u, &model, &BuildOptions::default()).unwrap();
    let mut t = Trainer::new(
        TrainConfig {
            lr: 0.05,
            batch_size: 16,
            ..TrainConfig::default()
        },
        &data,
    )
    .unwrap();
    let mut clock = MaxPlusClock::new(model.clone());
    let opts = RunOptions {
        rounds: 40,
        eval_every: 10,
        checkpoint_every: 0,
        dir: None,
        stop_after: None,
        stop_at: None,
        stop_behind_ms: None,
    };
    let recs = run(&mut t, &overlay, &mut clock, &opts, "x", |_, _| {}).unwrap();
    assert_eq!(
        recs.iter().map(|r| r.round).collect::<Vec<_>>(),
        vec![0, 10, 20, 30, 40]
    );
    assert!(
        recs[4].train_loss.mean < 0.8 * recs[0].train_loss.mean,
        "{recs:?}"
    );
    assert!(recs[4].test_acc.mean > recs[0].test_acc.mean);
    // Wall-clock grows with slope = the ring's cycle time.
    let tau = fedtopo::timing::cycle_time(&overlay, &model)
        .unwrap()
        .cycle_time_ms;
    let slope = (recs[4].wall_clock_ms - recs[2].wall_clock_ms) / 20.0;
    assert!((slope - tau).abs() < 0.05 * tau, "{slope} vs {tau}");
}

/// Same seed, same CSV; a run killed and resumed writes the same CSV too.
#[test]
fn determinism_and_checkpoint_resume() {
    let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
    let model = NetworkSpec::default().delay_model(&u);
    let n = model.silo_count();
    let data = small_data(n);
    let overlay = ring(n);
    let c = cfg(
        ModelKind::Mlp { hidden: 8 },
        OptimizerKind::Adam {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        },
        ExecMode::Batched,
    );
    let base = std::env::temp_dir().join(format!("fedtopo-ckpt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let go = |dir: &str, stop: Option<u64>| {
        let mut t = Trainer::new(c.clone(), &data).unwrap();
        let mut clock = MaxPlusClock::new(model.clone());
        let opts = RunOptions {
            rounds: 12,
            eval_every: 2,
            checkpoint_every: 3,
            dir: Some(base.join(dir)),
            stop_after: stop,
            stop_at: None,
            stop_behind_ms: None,
        };
        run(&mut t, &overlay, &mut clock, &opts, "fp", |_, _| {}).unwrap()
    };
    let full = go("a", None);
    let again = go("b", None);
    assert_eq!(render_csv(&full), render_csv(&again));
    // Interrupted after 4 rounds (last checkpoint at 3), then twice more.
    let _ = go("c", Some(4));
    let _ = go("c", Some(5));
    let resumed = go("c", None);
    assert_eq!(render_csv(&full), render_csv(&resumed));
    let a = std::fs::read(base.join("a/metrics.csv")).unwrap();
    let c2 = std::fs::read(base.join("c/metrics.csv")).unwrap();
    assert_eq!(a, c2);
    // Another fingerprint is not resumed: the run starts afresh (from
    // round 0, so it equals a straight run) instead of reusing the stored one.
    let mut t = Trainer::new(c.clone(), &data).unwrap();
    let mut clock = MaxPlusClock::new(model.clone());
    let opts = RunOptions {
        rounds: 12,
        eval_every: 2,
        checkpoint_every: 3,
        dir: Some(base.join("a")),
        stop_after: None,
        stop_at: None,
        stop_behind_ms: None,
    };
    let mut rounds_run = Vec::new();
    let afresh = run(&mut t, &overlay, &mut clock, &opts, "other", |r, _| {
        rounds_run.push(r)
    })
    .unwrap();
    assert_eq!(rounds_run.first(), Some(&1), "{rounds_run:?}");
    assert_eq!(render_csv(&afresh), render_csv(&full));
    std::fs::remove_dir_all(&base).ok();
}
