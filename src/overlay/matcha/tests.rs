//! Schedule and cycle-time tests on the built-in AWS underlays.

use super::cycle::maxplus_rate;
use super::*;
use crate::overlay::OverlaySchedule;
use crate::reproduce::paper_model;
use crate::scenario::load_underlay;
use crate::timing::cycle_time;
use crate::underlay::LoadOptions;

fn gaia() -> Underlay {
    load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap()
}

#[test]
fn rounds_are_pure_functions_of_seed_and_round() {
    let u = gaia();
    let d = MatchaDesign::on(
        "matcha",
        &MatchaBase::Connectivity,
        &u,
        &MatchaOptions::default(),
    )
    .unwrap();
    let s = d.schedule(42);
    let forward: Vec<_> = (0..50).map(|k| s.round_edges(k)).collect();
    let backward: Vec<_> = (0..50).rev().map(|k| s.round_edges(k)).collect();
    assert!(forward.iter().eq(backward.iter().rev()));
    assert!(forward.iter().all(|e| !e.is_empty()));
    let other: Vec<_> = (0..50).map(|k| s.with_seed(43).round_edges(k)).collect();
    assert_ne!(forward, other);
    assert_eq!(s.round(7).into_owned(), s.clone().round(7).into_owned());
    assert!(!s.is_static());
}

#[test]
fn activation_frequencies_match_probabilities() {
    let u = gaia();
    let opts = MatchaOptions {
        budget: 0.3,
        ..MatchaOptions::default()
    };
    let d = MatchaDesign::on("m", &MatchaBase::Connectivity, &u, &opts).unwrap();
    let p = d.activation.probabilities.clone();
    let s = d.schedule(1);
    let rounds = 20000u64;
    let mut count = vec![0u64; p.len()];
    for k in 0..rounds {
        for j in s.active_matchings(k) {
            count[j] += 1;
        }
    }
    // Redrawing the all-inactive outcome conditions on "some active".
    let none: f64 = p.iter().map(|q| 1.0 - q).product();
    for (j, &q) in p.iter().enumerate() {
        let want = q / (1.0 - none);
        let f = count[j] as f64 / rounds as f64;
        let sd = (want * (1.0 - want) / rounds as f64).sqrt().max(1e-9);
        assert!(
            (f - want).abs() < 5.0 * sd + 1e-9,
            "matching {j}: {f} vs {want}"
        );
    }
}

#[test]
fn mixing_matrices_are_symmetric_and_stochastic() {
    let u = gaia();
    let d = MatchaDesign::on(
        "m",
        &MatchaBase::Connectivity,
        &u,
        &MatchaOptions::default(),
    )
    .unwrap();
    let s = d.schedule(3);
    let n = s.silo_count();
    for k in 0..20 {
        let w = s.mixing_matrix(k);
        let edges = s.round_edges(k);
        for i in 0..n {
            let row: f64 = (0..n).map(|j| w[i * n + j]).sum();
            assert!((row - 1.0).abs() < 1e-12);
            for j in 0..n {
                assert_eq!(w[i * n + j], w[j * n + i]);
                if i != j {
                    let on = edges.contains(&(i.min(j), i.max(j)));
                    assert_eq!(w[i * n + j], if on { s.alpha() } else { 0.0 });
                }
            }
        }
    }
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
        let d = MatchaDesign::on(
            "m",
            &MatchaBase::Connectivity,
            &u,
            &MatchaOptions::default(),
        )
        .unwrap();
        let s = d.schedule(9);
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
fn errors_are_typed() {
    let u = gaia();
    let model = paper_model(&u, 1);
    let bad = MatchaOptions {
        budget: 0.0,
        ..MatchaOptions::default()
    };
    assert!(matches!(
        MatchaDesign::on("m", &MatchaBase::Connectivity, &u, &bad),
        Err(MatchaError::BadBudget(_))
    ));
    let d = MatchaDesign::on(
        "m",
        &MatchaBase::Connectivity,
        &u,
        &MatchaOptions::default(),
    )
    .unwrap();
    let s = d.schedule(0);
    assert!(matches!(
        round_estimate(&s, &model, 1),
        Err(MatchaError::BadSampling(_))
    ));
    assert!(matches!(
        maxplus_growth(|x| s.with_seed(x), &model, 10, &[]),
        Err(MatchaError::BadSampling(_))
    ));
    let small = Overlay::from_edges("x", 3, &[(0, 1), (1, 2)]);
    assert!(matches!(
        MatchaDesign::on(
            "m",
            &MatchaBase::Overlay(small),
            &u,
            &MatchaOptions::default()
        ),
        Err(MatchaError::SizeMismatch { .. })
    ));
    let disc = Overlay::from_edges("x", 4, &[(0, 1), (2, 3)]);
    let (n, e) = MatchaBase::Overlay(disc).edges(&u);
    assert!(matches!(
        MatchaDesign::new("m", n, &e, 0.5, &SolverOptions::default()),
        Err(MatchaError::Disconnected)
    ));
}
