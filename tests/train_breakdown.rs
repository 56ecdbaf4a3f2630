//! Where each round's time goes during training (feature `train`): the
//! breakdown a training run records equals the batch replay's bit for bit
//! (the trainer's clock is the replay's), on the `maxplus` recurrence and
//! the event engine (`flow`), with failures; a run killed and resumed
//! records the same breakdown as a straight one; a too-large breakdown is
//! refused before the first round.
#![cfg(feature = "train")]

use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::graph::failures::FailureSpec;
use fedtopo::mixing::consensus::ConsensusRule;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::LoadOptions;
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{BuildOptions, OverlayKind};
use fedtopo::replay::{ReplayOptions, SiloRound};
use fedtopo::train::checkpoint::RunOptions;
use fedtopo::train::data::synthetic::{generate, SyntheticSpec};
use fedtopo::train::model::ModelKind;
use fedtopo::train::optim::{LrSchedule, OptimizerKind};
use fedtopo::train::session::Session;
use fedtopo::train::trainer::{ExecMode, TrainConfig};

fn config() -> TrainConfig {
    TrainConfig {
        model: ModelKind::LogReg,
        optimizer: OptimizerKind::Sgd { momentum: 0.0 },
        lr: 0.05,
        lr_schedule: LrSchedule::Constant,
        local_steps: 1,
        batch_size: 8,
        consensus: ConsensusRule::Auto,
        eval_samples: 100,
        seed: 1,
        mode: ExecMode::Batched,
    }
}

fn opts(rounds: u64, dir: Option<std::path::PathBuf>, stop_after: Option<u64>) -> RunOptions {
    RunOptions {
        rounds,
        eval_every: 2,
        checkpoint_every: 3,
        dir,
        stop_after,
        stop_at: None,
        stop_behind_ms: None,
    }
}

fn bits(rows: &[SiloRound]) -> Vec<[u64; 6]> {
    rows.iter()
        .map(|r| {
            [
                r.start_ms.to_bits(),
                r.ready_ms.to_bits(),
                r.compute_ms.to_bits(),
                r.transfer_ms.to_bits(),
                r.wait_ms.to_bits(),
                r.end_ms.to_bits(),
            ]
        })
        .collect()
}

#[test]
fn training_breakdown_equals_the_replay_and_survives_resume() {
    let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
    let model = NetworkSpec {
        access_bps: 1e8,
        ..NetworkSpec::default()
    }
    .build(&u)
    .unwrap();
    let n = model.silo_count();
    let data = generate(
        &SyntheticSpec {
            median_per_silo: 40,
            test_per_silo: 10,
            ..SyntheticSpec::default()
        },
        n,
        3,
    )
    .unwrap();
    let options = BuildOptions::default();
    let cfg = config();
    let failures = FailureSpec::parse_optional("link:0.8").unwrap();
    let base = std::env::temp_dir().join(format!("fedtopo-train-bd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let rounds = 8;
    for network in [NetworkKind::Maxplus, NetworkKind::Flow] {
        for (kind, failures) in [
            (OverlayKind::Mst, None),
            (OverlayKind::Ring, failures),
            (OverlayKind::Star, None),
        ] {
            let session = Session {
                underlay: &u,
                model: &model,
                options: &options,
                config: &cfg,
                data: &data,
                partition: "iid",
                network,
                init: None,
                failures,
            };
            let run = session
                .train_run(kind, &opts(rounds, None, None), true, |_, _| {})
                .unwrap();
            let trained = run.breakdown.expect("the engine clock records a breakdown");
            assert_eq!(trained.rounds(), rounds, "{network} {kind}");
            assert_eq!(trained.silos, n);
            // The batch replay of the same schedule (same failures seed).
            let overlay = EvaluatedOverlay::build(kind, &u, &model, &options).unwrap();
            let replayed = overlay
                .replay(
                    &model,
                    network.build(&model).as_mut(),
                    &ReplayOptions {
                        // Longer: the clock's round k is the replay's round
                        // k of a run that goes on (later rounds' transfers
                        // share the flow model with round k's last ones).
                        rounds: rounds + 5,
                        seed: cfg.seed,
                        breakdown: true,
                        ..ReplayOptions::default()
                    },
                    failures,
                    &mut |_| {},
                )
                .unwrap()
                .breakdown
                .unwrap();
            let first = &replayed.rows[..trained.rows.len()];
            assert_eq!(
                bits(&trained.rows),
                bits(first),
                "{network} {kind}: training's breakdown differs from the replay's"
            );
            assert_eq!(
                trained.critical_path(),
                replayed.critical_path_until(rounds)
            );
            // Killed after 4 rounds (last checkpoint at 3), resumed: the
            // clock replays rounds 0..3 and records them again.
            let dir = base.join(format!("{network}-{kind}"));
            let part = session
                .train_run(
                    kind,
                    &opts(rounds, Some(dir.clone()), Some(4)),
                    true,
                    |_, _| {},
                )
                .unwrap();
            assert_eq!(part.breakdown.unwrap().rounds(), 4);
            let resumed = session
                .train_run(kind, &opts(rounds, Some(dir), None), true, |_, _| {})
                .unwrap();
            let resumed = resumed.breakdown.unwrap();
            assert_eq!(
                bits(&resumed.rows),
                bits(&trained.rows),
                "{network} {kind} resumed"
            );
            // Without asking, nothing is recorded.
            let plain = session
                .train_run(kind, &opts(2, None, None), false, |_, _| {})
                .unwrap();
            assert!(plain.breakdown.is_none());
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn too_large_a_training_breakdown_is_refused_before_training() {
    let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
    let model = NetworkSpec::default().build(&u).unwrap();
    let n = model.silo_count();
    let data = generate(&SyntheticSpec::default(), n, 3).unwrap();
    let options = BuildOptions::default();
    let cfg = config();
    let session = Session {
        underlay: &u,
        model: &model,
        options: &options,
        config: &cfg,
        data: &data,
        partition: "iid",
        network: NetworkKind::Maxplus,
        init: None,
        failures: None,
    };
    let rounds = fedtopo::replay::breakdown::MAX_BREAKDOWN_ROWS / n as u64 + 1;
    let e = session
        .train_run(
            OverlayKind::Ring,
            &opts(rounds, None, None),
            true,
            |_, _| {},
        )
        .unwrap_err()
        .to_string();
    // Refused up front (training a million rounds first would not end).
    assert!(
        e.contains("time breakdown") && e.contains("fewer rounds"),
        "{e}"
    );
}
