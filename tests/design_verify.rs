//! `fedtopo::design::verify` (feature `train`; run with
//! `scripts/libtorch.sh cargo test --release --features train --test design_verify`):
//! exported candidates train exactly as their kinds, censored probes are
//! recorded as "not reached", runs.csv holds every run's features.
#![cfg(feature = "train")]

use fedtopo::design::export::export_candidate;
use fedtopo::design::search::{design_candidates, DesignOptions, RoundsPredictor};
use fedtopo::design::verify::{verify, VerifyOptions};
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::Underlay;
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{BuildOptions, OverlayKind};
use fedtopo::overlay::file::OverlayPath;
use fedtopo::train::checkpoint::RunOptions;
use fedtopo::train::data::synthetic::{generate, SyntheticSpec};
use fedtopo::train::data::FederatedData;
use fedtopo::train::report::Target;
use fedtopo::train::session::{with_data_labels, Session};
use fedtopo::train::trainer::TrainConfig;

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "fedtopo-design-verify-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn data(n: usize) -> FederatedData {
    let spec = SyntheticSpec {
        median_per_silo: 60,
        test_per_silo: 20,
        ..SyntheticSpec::default()
    };
    generate(&spec, n, 5).unwrap()
}

struct Net {
    underlay: Underlay,
    model: fedtopo::net::delay::DelayModel,
}

fn net(access: &str) -> Net {
    let underlay = load_underlay(Some("aws-gaia"), &Default::default()).unwrap();
    let spec = NetworkSpec::from_knobs(|k| (k == "access").then_some(access)).unwrap();
    let model = spec.build(&underlay).unwrap();
    Net { underlay, model }
}

fn kinds(names: &[&str]) -> Vec<OverlayKind> {
    names.iter().map(|k| k.parse().unwrap()).collect()
}

/// A candidate's exported file trains exactly as its kind: the same test
/// accuracy and wall-clock time every round (MATCHA's weights, a family's
/// per-round matrices and file weights travel with the file).
#[test]
fn exported_candidates_train_as_their_kinds() {
    let n = net("100M");
    let d = data(n.model.silo_count());
    let config = TrainConfig {
        eval_samples: 200,
        ..TrainConfig::default()
    };
    let build = BuildOptions {
        dcliques: with_data_labels(Default::default(), &d),
        ..BuildOptions::default()
    };
    let session = Session {
        underlay: &n.underlay,
        model: &n.model,
        options: &build,
        config: &config,
        data: &d,
        partition: "synthetic",
        network: NetworkKind::Maxplus,
        init: None,
        failures: None,
    };
    let options = DesignOptions {
        kinds: kinds(&[
            "matcha",
            "exp-1peer",
            "d-equistatic",
            "star",
            "dcliques-ring",
        ]),
        fastest_weights: false,
        augmented: false,
        ..DesignOptions::default()
    };
    let cands = design_candidates(
        &n.underlay,
        &n.model,
        &build,
        &options,
        &RoundsPredictor::proxy(15.0),
    )
    .unwrap();
    let dir = tmp("same");
    let opts = RunOptions {
        rounds: 6,
        eval_every: 1,
        checkpoint_every: 0,
        dir: None,
        stop_after: None,
        stop_at: None,
        stop_behind_ms: None,
    };
    for c in &cands {
        let fedtopo::design::search::CandidateOverlay::Kind(kind) = c.overlay else {
            panic!("{}: not a kind", c.name)
        };
        let file = export_candidate(&dir, c, &n.underlay, &n.model, &build).unwrap();
        let by_kind = session.train(kind, &opts, |_, _| {}).unwrap();
        let file = OverlayKind::File(OverlayPath::new(&file.display().to_string()));
        let by_file = session.train(file, &opts, |_, _| {}).unwrap();
        assert_eq!(by_kind.len(), by_file.len());
        for (a, b) in by_kind.iter().zip(&by_file) {
            assert!(
                (a.test_acc.mean - b.test_acc.mean).abs() < 1e-6
                    && (a.train_loss.mean - b.train_loss.mean).abs() < 1e-5,
                "{}: round {}: {:?} vs {:?}",
                c.name,
                a.round,
                a.test_acc,
                b.test_acc
            );
            assert!(
                (a.wall_clock_ms - b.wall_clock_ms).abs() <= 1e-6 * a.wall_clock_ms.max(1.0),
                "{}: round {}: {} vs {} ms",
                c.name,
                a.round,
                a.wall_clock_ms,
                b.wall_clock_ms
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs [`verify`] on AWS Gaia at 100 Mbit/s with the target `target`
/// gives from STAR's accuracy curve (its records of 8 rounds).
fn run_verify(
    target: impl Fn(&[fedtopo::train::report::RoundRecord]) -> Target,
    probe_rounds: u64,
    rounds: u64,
    name: &str,
) -> (
    Vec<fedtopo::design::search::Candidate>,
    fedtopo::design::verify::Verification,
    std::path::PathBuf,
) {
    run_verify_with(target, probe_rounds, rounds, name, false, false, (2, 1.0))
}

/// [`run_verify`], racing or not, with the fitted predictor or the proxy,
/// training `top` candidates in full and those within `window`.
fn run_verify_with(
    target: impl Fn(&[fedtopo::train::report::RoundRecord]) -> Target,
    probe_rounds: u64,
    rounds: u64,
    name: &str,
    race: bool,
    fitted: bool,
    (top, window): (usize, f64),
) -> (
    Vec<fedtopo::design::search::Candidate>,
    fedtopo::design::verify::Verification,
    std::path::PathBuf,
) {
    let n = net("100M");
    let d = data(n.model.silo_count());
    let config = TrainConfig {
        eval_samples: 200,
        ..TrainConfig::default()
    };
    let build = BuildOptions::default();
    let session = Session {
        underlay: &n.underlay,
        model: &n.model,
        options: &build,
        config: &config,
        data: &d,
        partition: "synthetic",
        network: NetworkKind::Maxplus,
        init: None,
        failures: None,
    };
    let star = session
        .train(
            OverlayKind::Star,
            &RunOptions {
                rounds: 8,
                eval_every: 1,
                checkpoint_every: 0,
                dir: None,
                stop_after: None,
                stop_at: None,
                stop_behind_ms: None,
            },
            |_, _| {},
        )
        .unwrap();
    let mut predictor = if fitted {
        RoundsPredictor::fitted_for(&d)
    } else {
        RoundsPredictor::proxy(15.0)
    };
    let mut cands = design_candidates(
        &n.underlay,
        &n.model,
        &build,
        &DesignOptions {
            kinds: kinds(&["star", "ring-opt", "exp-1peer"]),
            fastest_weights: false,
            augmented: false,
            ..DesignOptions::default()
        },
        &predictor,
    )
    .unwrap();
    let dir = tmp(name);
    let v = verify(
        &session,
        &mut cands,
        &mut predictor,
        &VerifyOptions {
            probes: 3,
            probe_rounds,
            top,
            window,
            rounds,
            eval_every: 1,
            target: target(&star),
            dir: dir.clone(),
            race,
        },
        |_| {},
    )
    .unwrap();
    (cands, v, dir)
}

/// The round and wall clock (ms) of the last record of run `r` of a
/// verification written to `dir`.
fn last_record(dir: &std::path::Path, r: &fedtopo::design::verify::RunFeatures) -> (u64, f64) {
    let metrics = dir
        .join(if r.phase.name() == "probe" {
            "probes"
        } else {
            "verify"
        })
        .join(fedtopo::design::calibrate::candidate_stem(&r.candidate))
        .join("metrics.csv");
    let text = std::fs::read_to_string(&metrics).unwrap();
    let last: Vec<&str> = text.lines().last().unwrap().split(',').collect();
    (last[0].parse().unwrap(), last[1].parse().unwrap())
}

/// A target no run reaches: every run is censored ("not reached within R
/// rounds", never a time), the predictor is kept with the reason, there is
/// no winner, and runs.csv says so.
#[test]
fn unreached_targets_are_censored_never_timed() {
    let (cands, v, dir) = run_verify(|_| Target::TestAccuracy(1.0), 2, 3, "censored");
    assert!(v.winner.is_none());
    assert!(v
        .calibration
        .kept
        .as_deref()
        .unwrap()
        .contains("within its rounds"));
    assert_eq!(v.calibration.censored, 3);
    for r in &v.runs {
        assert!(!r.reached && r.rounds_to_target.is_none() && r.time_to_target_ms.is_none());
        let c = cands.iter().find(|c| c.name == r.candidate).unwrap();
        assert!(c.not_reached() && c.measured_time_ms.is_none());
    }
    let text = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    assert_eq!(text.lines().count(), v.runs.len() + 1);
    assert!(text.lines().next().unwrap().contains("label_heterogeneity"));
    std::fs::remove_dir_all(&dir).ok();
}

/// STAR's accuracy after 4 rounds as the target: STAR's probe reaches it
/// (within 4 rounds), runs stop at the target, runs that miss it are
/// censored at their budget; the winner's time is its run's wall clock
/// at the measured round.
#[test]
fn reached_targets_calibrate_and_pick_a_winner() {
    let (cands, v, dir) = run_verify(
        |star| Target::TestAccuracy(star[4].test_acc.mean),
        6,
        12,
        "reached",
    );
    let w = v.winner.as_ref().unwrap();
    assert!(cands[w.index].measured_time_ms.is_some());
    assert!(v.calibration.reached >= 1, "{:?}", v.calibration);
    let star = v.runs.iter().find(|r| r.candidate == "star").unwrap();
    assert!(star.reached && star.rounds_to_target.unwrap() <= 4);
    for r in &v.runs {
        let (round, wall) = last_record(&dir, r);
        match r.rounds_to_target {
            // Stopped at the target, timed by that round's wall clock.
            Some(k) => {
                assert_eq!(round, k, "{}", r.candidate);
                assert!((r.time_to_target_ms.unwrap() - wall).abs() < 1e-3);
            }
            None => assert_eq!(round, r.rounds_budget, "{}", r.candidate),
        }
        assert!(cands
            .iter()
            .any(|c| c.name == r.candidate && c.file.is_some()));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Racing stops the runs that can no longer win or tie and changes
/// neither the winner nor its time: with the proxy (probes first) and with
/// the fitted predictor (top runs first). A stopped run ends before its
/// budget without the target, its last round within the best time it
/// raced against; the racing verification trains fewer rounds.
#[test]
fn racing_keeps_the_winner_and_trains_fewer_rounds() {
    let mut stopped = 0;
    for fitted in [false, true] {
        let target = |star: &[fedtopo::train::report::RoundRecord]| {
            Target::TestAccuracy(star[4].test_acc.mean)
        };
        let tag = if fitted { "fitted" } else { "proxy" };
        let (c0, v0, d0) = run_verify_with(
            target,
            6,
            12,
            &format!("race-off-{tag}"),
            false,
            fitted,
            (2, 1.0),
        );
        let (c1, v1, d1) = run_verify_with(
            target,
            6,
            12,
            &format!("race-on-{tag}"),
            true,
            fitted,
            (2, 1.0),
        );
        let w0 = &c0[v0.winner.as_ref().unwrap().index];
        let w1 = &c1[v1.winner.as_ref().unwrap().index];
        assert_eq!(w0.name, w1.name, "{tag}");
        assert_eq!(w0.measured_time_ms, w1.measured_time_ms, "{tag}");
        assert!(v0.stopped_behind.is_empty());
        let trained = |v: &fedtopo::design::verify::Verification| -> u64 {
            v.runs.iter().map(|r| r.rounds_trained).sum()
        };
        assert!(trained(&v1) <= trained(&v0), "{tag}");
        for r in &v1.runs {
            let Some(cap) = r.stopped_behind_ms else {
                continue;
            };
            stopped += 1;
            assert!(v1.stopped_behind.contains(&r.candidate));
            assert!(!r.reached && r.rounds_to_target.is_none());
            assert!(r.rounds_trained < r.rounds_budget, "{}", r.candidate);
            let (round, wall) = last_record(&d1, r);
            assert_eq!(round, r.rounds_trained);
            assert!(wall <= cap + 1e-9);
            assert!(cap >= w1.measured_time_ms.unwrap() - 1e-9);
        }
        if !v1.stopped_behind.is_empty() {
            assert!(trained(&v1) < trained(&v0), "{tag}");
        }
        std::fs::remove_dir_all(&d0).ok();
        std::fs::remove_dir_all(&d1).ok();
    }
    // The setting makes the race stop someone (STAR's rounds are the
    // slowest here: 100 Mbit/s into one centre).
    assert!(stopped > 0);
}

/// The window trains the candidates predicted within it of the best, at
/// most `top` more: with one top candidate and a window wider than every
/// prediction, two; with a window of 1, one.
#[test]
fn the_window_widens_the_verified_candidates() {
    let target =
        |star: &[fedtopo::train::report::RoundRecord]| Target::TestAccuracy(star[4].test_acc.mean);
    for (window, expected) in [(1.0, 1), (1e6, 2)] {
        let name = format!("window-{expected}");
        let (cands, v, dir) = run_verify_with(target, 4, 8, &name, false, true, (1, window));
        assert_eq!(v.verified.len(), expected, "{:?}", v.verified);
        // The verified are the first of the calibrated ranking.
        for (c, name) in cands.iter().zip(&v.verified) {
            assert_eq!(&c.name, name);
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
