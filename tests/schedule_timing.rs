//! Timing of overlay schedules ([`fedtopo::timing::schedule`]) on MATCHA
//! schedules of the built-in AWS underlays: the paper's round estimate
//! against the exact max-plus growth rate and the static cycle time.

use fedtopo::graph::OverlaySchedule;
use fedtopo::net::scenario::load_underlay;
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::overlay::matcha::{MatchaBase, MatchaDesign, MatchaOptions, MatchaSchedule};
use fedtopo::reproduce::paper_model;
use fedtopo::timing::schedule::{maxplus_growth, maxplus_rate, round_duration_ms, round_estimate};
use fedtopo::timing::{cycle_time, TimingError};

fn gaia() -> Underlay {
    load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap()
}

/// MATCHA on the connectivity graph of `u` with default options, seeded.
fn matcha(u: &Underlay, seed: u64) -> MatchaSchedule {
    let d = MatchaDesign::on("m", &MatchaBase::Connectivity, u, &MatchaOptions::default());
    d.unwrap().schedule(seed)
}

#[test]
fn full_budget_is_the_static_base_overlay() {
    // Cb = 1: every matching every round, so both estimators must agree with
    // the static analysis of the base graph (Howard, and max arc delay).
    let u = gaia();
    let model = paper_model(&u, 1);
    let opts = MatchaOptions {
        budget: 1.0,
        ..MatchaOptions::default()
    };
    let d = MatchaDesign::on("m", &MatchaBase::Connectivity, &u, &opts).unwrap();
    let s = d.schedule(0);
    assert!(s.is_static());
    let base = s.round(0).into_owned();
    assert_eq!(base.arc_count(), 11 * 10);
    let howard = cycle_time(&base, &model).unwrap().cycle_time_ms;
    let rounds = 4000;
    let rate = maxplus_rate(&s, &model, rounds).unwrap();
    assert!((rate - howard).abs() <= howard * 1e-3, "{rate} vs {howard}");
    let est = round_estimate(&s, &model, 10).unwrap();
    assert!((est.mean_ms - round_duration_ms(&base, &model)).abs() < 1e-9);
    assert!(est.std_ms < 1e-9);
    assert!((est.published_ms - est.mean_ms * 10.0 / 9.0).abs() < 1e-9);
}

#[test]
fn maxplus_never_exceeds_the_round_estimate() {
    let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
    for steps in [1, 5] {
        let model = paper_model(&u, steps);
        let s = matcha(&u, 9);
        for rounds in [2, 50, 300] {
            let est = round_estimate(&s, &model, rounds).unwrap();
            let mp = maxplus_rate(&s, &model, rounds).unwrap();
            assert!(mp <= est.mean_ms + 1e-9, "{mp} > {}", est.mean_ms);
        }
        let g = maxplus_growth(|x| s.with_seed(x), &model, 300, &[0, 1, 2, 3]).unwrap();
        assert_eq!(g.per_seed_ms.len(), 4);
        assert!(g.ci95_ms > 0.0 && g.ci95_ms < 0.1 * g.mean_ms);
    }
}

#[test]
fn sampling_errors_are_typed() {
    let u = gaia();
    let model = paper_model(&u, 1);
    let s = matcha(&u, 0);
    assert!(matches!(
        round_estimate(&s, &model, 1),
        Err(TimingError::Sampling(_))
    ));
    assert!(matches!(
        maxplus_growth(|x| s.with_seed(x), &model, 10, &[]),
        Err(TimingError::Sampling(_))
    ));
}
