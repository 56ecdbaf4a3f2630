//! The topology families on the built-in underlays
//! ([`fedtopo::overlay::families`]): the periodic max-plus rate against an
//! event replay, the ring-opt node order, the consensus matrices a trainer
//! uses, export and import of the rounds, the CLI and experiment files.

mod common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use common::fedtopo;
use fedtopo::evaluate::{EvalError, EvaluatedOverlay};
use fedtopo::graph::OverlaySchedule;
use fedtopo::mixing::consensus::{half, local_degree, ConsensusMatrix, ConsensusRule};
use fedtopo::net::delay::DelayModel;
use fedtopo::net::scenario::load_underlay;
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{build_overlay, BuildError, BuildOptions, OverlayKind};
use fedtopo::overlay::families::{self, exponential, FamilyBuilt, FamilyError, FamilySpec};
use fedtopo::overlay::ring::ring_opt_tour;
use fedtopo::replay::{ReplayOptions, Straggler};
use fedtopo::reproduce::paper_model;
use fedtopo::timing::schedule::periodic_rate;

fn underlay(name: &str) -> Underlay {
    load_underlay(Some(name), &LoadOptions::default()).unwrap()
}

fn kind(text: &str) -> OverlayKind {
    text.parse().unwrap()
}

fn build(k: OverlayKind, u: &Underlay, model: &DelayModel) -> EvaluatedOverlay {
    EvaluatedOverlay::build(k, u, model, &BuildOptions::default())
        .unwrap_or_else(|e| panic!("{k}: {e}"))
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-families-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SCHEDULES: [&str; 6] = [
    "exp-1peer",
    "base:k=1",
    "base:k=2",
    "base:k=3",
    "base:k=2,order=identity",
    "od-equidyn:rounds=10,seed=3",
];

#[test]
fn periodic_rate_equals_the_event_replay() {
    for name in ["aws-north-america", "aws-gaia"] {
        let u = underlay(name);
        let model = paper_model(&u, 1);
        for text in SCHEDULES.iter().copied().chain(["exp", "d-equistatic"]) {
            let o = build(kind(text), &u, &model);
            let t = o.cycle_time(&model).unwrap();
            let period = if o.schedule().is_static() {
                1
            } else {
                let s = t
                    .schedule
                    .as_ref()
                    .expect("schedules report their estimate");
                // The paper-style estimate waits for the slowest arc of
                // every round: never below the exact rate.
                assert!(s.maxplus_ms <= s.estimate.mean_ms + 1e-9, "{text}");
                assert_eq!(s.maxplus_ms, t.cycle_time_ms);
                // The estimate covers whole periods; so does this rate.
                let p = periodic_rate(o.schedule(), &model, s.estimate.rounds).unwrap();
                assert!((p - t.cycle_time_ms).abs() <= 1e-9 * p, "{text}: {p}");
                assert!(o.has_exact_cycle_time() && o.degree_stats().per_round);
                s.estimate.rounds
            };
            // Event replay of many periods on the max-plus network. In its
            // periodic regime the replay grows by exactly `c` periods' worth of
            // rate every `c` periods (`c` the cyclicity of the critical class,
            // unknown here), so over a window of whole periods the slope is
            // the rate up to a bounded offset over the window length.
            let rounds = 2000 * period;
            let mut net = NetworkKind::Maxplus.build(&model);
            let opts = ReplayOptions {
                rounds,
                straggler: Straggler::None,
                seed: 0,
                ..ReplayOptions::default()
            };
            let r = o
                .replay(&model, net.as_mut(), &opts, None, &mut |_| {})
                .unwrap();
            let half = (rounds / 2) as usize;
            let slope = (r.round_end(2 * half) - r.round_end(half)) / half as f64;
            let tau = t.cycle_time_ms;
            assert!(tau.is_finite() && tau > 0.0, "{name} {text}: {tau}");
            assert!(
                (slope - tau).abs() <= 1e-4 * tau,
                "{name} {text}: replay {slope} vs max-plus {tau}"
            );
        }
    }
}

#[test]
fn families_sit_on_the_ring_opt_order_unless_told_otherwise() {
    let u = underlay("aws-north-america");
    let model = paper_model(&u, 1);
    let n = model.silo_count();
    let opts = BuildOptions::default();
    let ring = build_overlay(OverlayKind::RingOpt, &u, &model, &opts).unwrap();
    let tour = ring_opt_tour(&model, &opts.ring_search);
    // One-peer exponential, round 0: every node sends to the next one, i.e.
    // exactly the ring-opt ring.
    let one = build(kind("exp-1peer"), &u, &model);
    assert_eq!(one.schedule().round(0).arcs(), ring.arcs());
    assert_eq!(
        one.cycle_time(&model)
            .unwrap()
            .schedule
            .unwrap()
            .estimate
            .rounds,
        exponential::tau(n) as u64
    );
    // The static exponential graph contains the ring.
    let exp = build(kind("exp"), &u, &model);
    let arcs = exp.overlay().unwrap().arcs();
    assert!(ring.arcs().iter().all(|a| arcs.binary_search(a).is_ok()));
    assert_eq!(arcs.len(), n * exponential::tau(n));
    // Identity order: node p on silo p.
    let id = build(kind("exp-1peer:order=identity"), &u, &model);
    let want: Vec<(usize, usize)> = {
        let mut v: Vec<_> = (0..n).map(|i| (i, (i + 1) % n)).collect();
        v.sort();
        v
    };
    assert_eq!(id.schedule().round(0).arcs(), want.as_slice());
    // Base-(k+1): the rounds are the abstract graph moved along the tour.
    for (text, order) in [
        ("base:k=2", tour.clone()),
        ("base:k=2,order=identity", (0..n).collect()),
    ] {
        let spec: FamilySpec = text.parse().unwrap();
        let FamilyBuilt::Periodic { schedule, .. } = families::place(spec, &order, 0) else {
            panic!("{text} is periodic");
        };
        let built = build(kind(text), &u, &model);
        for k in 0..schedule.period() as u64 {
            assert_eq!(
                built.schedule().round(k).arcs(),
                schedule.round(k).arcs(),
                "{text} {k}"
            );
        }
    }
}

/// `x` after the consensus matrices of `rounds` rounds (`x <- A x`).
fn mix(rule: &ConsensusRule, o: &EvaluatedOverlay, rounds: u64, x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut x = x.to_vec();
    for k in 0..rounds {
        let a = rule.matrix_at(&o.schedule().round(k), k).unwrap();
        a.check_support(&o.schedule().round(k)).unwrap();
        x = (0..n)
            .map(|i| (0..n).map(|j| a.get(i, j) * x[j]).sum())
            .collect();
    }
    x
}

#[test]
fn the_trainer_gets_each_round_s_consensus_matrix() {
    let u = underlay("aws-north-america");
    let model = paper_model(&u, 1);
    let n = model.silo_count();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let x: Vec<f64> = (0..n).map(|_| rng.gen_range(-50.0..50.0)).collect();
    let mean = x.iter().sum::<f64>() / n as f64;
    for text in [
        "base:k=1",
        "base:k=2",
        "base:k=3",
        "base:k=2,order=identity",
    ] {
        let o = build(kind(text), &u, &model);
        let rule = ConsensusRule::Auto.for_overlay(&o).unwrap();
        assert!(matches!(rule, ConsensusRule::PerRound(_)), "{text}");
        let period = o.round_consensus_weights().unwrap().len() as u64;
        // Exact consensus after one period (n = 22 is not a power of k+1)...
        let y = mix(&rule, &o, period, &x);
        let err = y.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max);
        assert!(err < 1e-12, "{text}: off by {err}");
        // ... and not before (every round is needed).
        let y = mix(&rule, &o, period - 1, &x);
        let err = y.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max);
        assert!(err > 1e-6, "{text}: exact before the period ends");
        // An explicit rule still wins over the overlay's own.
        assert_eq!(
            ConsensusRule::LocalDegree.for_overlay(&o).unwrap(),
            ConsensusRule::LocalDegree
        );
    }
    // exp-1peer brings (I + P) / 2, which is the `half` rule of its rounds.
    let o = build(kind("exp-1peer"), &u, &model);
    let rule = ConsensusRule::Auto.for_overlay(&o).unwrap();
    for k in 0..2 * exponential::tau(n) as u64 {
        let r = o.schedule().round(k);
        assert_eq!(
            rule.matrix_at(&r, k).unwrap(),
            half(&r).unwrap(),
            "round {k}"
        );
    }
    // exp brings no weights: `auto` is local-degree, which on a circulant
    // graph is the paper's uniform 1 / (tau + 1).
    let o = build(kind("exp"), &u, &model);
    assert!(o.round_consensus_weights().is_none() && o.consensus_weights().is_none());
    let a = ConsensusRule::Auto
        .for_overlay(&o)
        .unwrap()
        .matrix(o.overlay().unwrap())
        .unwrap();
    assert_eq!(a, local_degree(o.overlay().unwrap()));
    let w = 1.0 / (exponential::tau(n) + 1) as f64;
    for i in 0..n {
        for j in 0..n {
            let arc = o.overlay().unwrap().arcs().binary_search(&(j, i)).is_ok();
            let want = if i == j || arc { w } else { 0.0 };
            assert!((a.get(i, j) - want).abs() < 1e-15, "({i},{j})");
        }
    }
    assert!(a.row_sum_error() < 1e-12 && a.column_sum_error() < 1e-12);
    // d-equistatic brings its own static weights (seeded by --seed).
    let opts = BuildOptions {
        seed: 5,
        ..BuildOptions::default()
    };
    let o = EvaluatedOverlay::build(kind("d-equistatic"), &u, &model, &opts).unwrap();
    let spec: FamilySpec = "d-equistatic:seed=5".parse().unwrap();
    let tour = ring_opt_tour(&model, &opts.ring_search);
    let FamilyBuilt::Static {
        weights: Some(w), ..
    } = families::place(spec, &tour, 0)
    else {
        panic!("d-equistatic is static with weights");
    };
    let ConsensusRule::Custom(a) = ConsensusRule::Auto.for_overlay(&o).unwrap() else {
        panic!("d-equistatic's weights are the consensus");
    };
    assert_eq!(a, ConsensusMatrix::from_rows(w.to_rows()).unwrap());
    assert!(a.row_sum_error() < 1e-12 && a.column_sum_error() < 1e-12);
}

#[test]
fn per_round_weights_of_failed_arcs_stay_with_the_receiver() {
    let u = underlay("aws-gaia");
    let model = paper_model(&u, 1);
    let o = build(kind("base:k=2"), &u, &model);
    let rule = ConsensusRule::Auto.for_overlay(&o).unwrap();
    let full = o.schedule().round(0).into_owned();
    let &(j, i) = full.arcs().first().unwrap();
    let cut = fedtopo::graph::Overlay::from_arcs(
        "cut",
        full.silo_count(),
        full.arcs().iter().copied().filter(|&a| a != (j, i)),
    );
    let a = rule.matrix_at(&full, 0).unwrap();
    let b = rule.matrix_at(&cut, 0).unwrap();
    assert!(a.get(i, j) > 0.0 && b.get(i, j) == 0.0);
    assert!((b.get(i, i) - a.get(i, i) - a.get(i, j)).abs() < 1e-15);
    assert!(b.row_sum_error() < 1e-12);
    b.check_support(&cut).unwrap();
    let _: &ConsensusMatrix = &b;
}

#[test]
fn exported_rounds_read_back_with_the_same_periodic_rate() {
    let dir = tmp("roundtrip");
    let u = underlay("aws-north-america");
    let model = paper_model(&u, 1);
    let labels = model.connectivity.placement().labels(&u);
    for text in SCHEDULES {
        let o = build(kind(text), &u, &model);
        let want = o.cycle_time(&model).unwrap().cycle_time_ms;
        let e = o.export_schedule(&labels).unwrap();
        assert_eq!(e.rounds.len(), o.round_consensus_weights().unwrap().len());
        for (ext, body) in [("json", e.to_json()), ("csv", e.to_csv())] {
            let p = dir.join(format!(
                "{}.rounds.{ext}",
                text.replace([':', ',', '='], "_")
            ));
            std::fs::write(&p, body).unwrap();
            let back = build(kind(&format!("file:{}", p.display())), &u, &model);
            let got = back.cycle_time(&model).unwrap().cycle_time_ms;
            assert!(
                (got - want).abs() <= 1e-12 * want,
                "{text} {ext}: {got} vs {want}"
            );
            // The consensus matrices of every round come back too.
            let (a, b) = (
                o.round_consensus_weights().unwrap(),
                back.round_consensus_weights().unwrap(),
            );
            assert_eq!(a.len(), b.len());
            for (x, y) in a
                .iter()
                .flat_map(ConsensusMatrix::as_slice)
                .zip(b.iter().flat_map(ConsensusMatrix::as_slice))
            {
                assert!((x - y).abs() <= 1e-12, "{text} {ext}: {x} vs {y}");
            }
        }
    }
    // The static exponential graph exports as one overlay.
    let o = build(kind("exp"), &u, &model);
    assert!(o.export(&labels, Some(&model), None).is_ok());
    assert!(o.export_schedule(&labels).is_err());
}

#[test]
fn families_too_large_for_the_network_are_clear_errors() {
    let u = underlay("aws-gaia");
    let model = paper_model(&u, 1);
    let n = model.silo_count();
    let k = kind(&format!("base:k={n}"));
    match EvaluatedOverlay::build(k, &u, &model, &BuildOptions::default()) {
        Err(EvalError::Build(BuildError::Family(FamilyError::DegreeTooLarge {
            k: kk,
            silos,
            ..
        }))) => {
            assert_eq!((kk, silos), (n, n));
        }
        other => panic!("{other:?}"),
    }
    // k = n - 1: one round, the complete graph, exact averaging.
    let o = build(kind(&format!("base:k={}", n - 1)), &u, &model);
    assert_eq!(o.round_consensus_weights().unwrap().len(), 1);
    assert_eq!(o.degree_stats().arcs, n * (n - 1));
    let e = "base:k=0".parse::<OverlayKind>().unwrap_err().to_string();
    assert!(e.contains("k `0`") && e.contains("base:k=K"), "{e}");
}

#[test]
fn cli_and_experiment_files_run_the_families() {
    let o = fedtopo(&[
        "compare",
        "--overlays",
        "exp,exp-1peer,base:k=1,d-equistatic,od-equidyn",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut rdr = csv::Reader::from_reader(o.stdout.as_slice());
    let header = rdr.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let recs: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    let names: Vec<&str> = recs.iter().map(|r| &r[col("overlay")]).collect();
    assert_eq!(
        names,
        ["exp", "exp-1peer", "base:k=1", "d-equistatic", "od-equidyn"]
    );
    for r in &recs {
        let t: f64 = r[col("cycle_time_ms")].parse().unwrap();
        assert!(t.is_finite() && t > 0.0, "{r:?}");
    }
    // Schedules report their exact rate (the row's cycle time) in maxplus_ms.
    assert_eq!(&recs[1][col("maxplus_ms")], &recs[1][col("cycle_time_ms")]);
    assert_eq!(&recs[0][col("maxplus_ms")], "");
    let bad = fedtopo(&["compare", "aws-gaia", "--overlays", "base:k=40"]);
    assert!(!bad.status.success());
    let msg = String::from_utf8_lossy(&bad.stderr);
    assert!(msg.contains("base:k=40") && msg.contains("k = 40"), "{msg}");
    // Experiment files: the names parse, the grid runs.
    let dir = tmp("experiment");
    let spec = dir.join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"families\"\nkind = \"compare\"\n[grid]\nunderlay = [\"aws-gaia\"]\n\
         overlay = [\"ring-opt\", \"exp-1peer\", \"base:k=2,order=identity\"]\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let mut rdr = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let header = rdr.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let recs: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(recs.len(), 3);
    assert_eq!(&recs[2][col("overlay")], "base:k=2,order=identity");
    for r in &recs {
        let t: f64 = r[col("cycle_time_ms")].parse().unwrap();
        assert!(t.is_finite() && t > 0.0, "{r:?}");
    }
    // A bad family name is reported before anything runs.
    std::fs::write(
        &spec,
        "name = \"families\"\nkind = \"compare\"\n[grid]\nunderlay = [\"aws-gaia\"]\noverlay = [\"base:k=0\"]\n",
    )
    .unwrap();
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("base:k=0"));
}
