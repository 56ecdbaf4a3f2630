//! Schedule and cycle-time tests on the built-in AWS underlays.

use super::*;
use crate::graph::OverlaySchedule;
use crate::net::scenario::load_underlay;
use crate::net::underlay::LoadOptions;

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
fn errors_are_typed() {
    let u = gaia();
    let bad = MatchaOptions {
        budget: 0.0,
        ..MatchaOptions::default()
    };
    assert!(matches!(
        MatchaDesign::on("m", &MatchaBase::Connectivity, &u, &bad),
        Err(MatchaError::BadBudget(_))
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

/// Mean active arcs per round over many sampled rounds against its
/// expectation `2 sum_j p_j |M_j|` (each active undirected edge is two arcs),
/// conditioned on "some matching active" (the schedule redraws the empty
/// round), within 4.5 standard errors computed from the exact variance.
#[test]
fn mean_active_arcs_match_the_expectation() {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    // A sparse connected graph (ring plus random chords): matchings of very
    // different sizes and non-uniform optimal probabilities, as on Gu.
    let n = 30;
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let mut edges: Vec<(usize, usize)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
    for _ in 0..25 {
        let (a, b) = (rng.gen_range(0..n), rng.gen_range(0..n));
        if a != b {
            edges.push((a, b));
        }
    }
    for (cb, seed) in [(0.5, 3u64), (0.2, 4)] {
        let d = MatchaDesign::new("m", n, &edges, cb, &SolverOptions::default()).unwrap();
        let p = d.activation.probabilities.clone();
        assert!(
            p.iter().any(|&q| q > 0.01 && q < 0.99),
            "want a non-trivial design"
        );
        let sizes: Vec<f64> = d.matchings.iter().map(|m| 2.0 * m.len() as f64).collect();
        let mean: f64 = p.iter().zip(&sizes).map(|(q, s)| q * s).sum();
        let var: f64 = p
            .iter()
            .zip(&sizes)
            .map(|(q, s)| q * (1.0 - q) * s * s)
            .sum();
        let none: f64 = p.iter().map(|q| 1.0 - q).product();
        // X = arcs of an unconditioned draw; the schedule draws X | X > 0.
        let want = mean / (1.0 - none);
        let var_cond = (var + mean * mean) / (1.0 - none) - want * want;
        let s = d.schedule(seed);
        let rounds = 20_000u64;
        let mut total = 0usize;
        for k in 0..rounds {
            let o = s.round(k);
            assert_eq!(o.arc_count(), 2 * s.round_edges(k).len());
            total += o.arc_count();
        }
        let got = total as f64 / rounds as f64;
        let se = (var_cond / rounds as f64).sqrt();
        assert!(
            (got - want).abs() < 4.5 * se,
            "Cb {cb}: mean arcs {got} vs expected {want} (se {se})"
        );
    }
}

/// The one-pass timing of MATCHA's rounds equals the two separate passes
/// bit for bit, and the degree counts equal the built overlays'.
#[test]
fn one_pass_timing_and_degree_counts_equal_the_separate_ones() {
    use crate::net::delay::DelayModel;
    use crate::timing::schedule::{maxplus_rate, round_estimate, round_estimate_and_maxplus_rate};
    let u = gaia();
    let d = MatchaDesign::on(
        "m",
        &MatchaBase::Connectivity,
        &u,
        &MatchaOptions::default(),
    )
    .unwrap();
    let s = d.schedule(5);
    let model: DelayModel = crate::net::scenario::NetworkSpec::default().delay_model(&u);
    let (e, r) = round_estimate_and_maxplus_rate(&s, &model, 300).unwrap();
    assert_eq!(e, round_estimate(&s, &model, 300).unwrap());
    assert_eq!(
        r.to_bits(),
        maxplus_rate(&s, &model, 300).unwrap().to_bits()
    );
    for k in 0..50 {
        let o = s.round(k);
        assert_eq!(s.round_degrees(k), (o.arc_count(), o.max_degree()));
    }
}

/// The closed-form design of a large complete graph is what the numerical
/// solvers find on the same round-robin matchings (small `n`, where they
/// are cheap): `lambda_2 = Cb n` within the solver's certified gap, and the
/// same `rho` and `alpha`.
#[test]
fn closed_form_optima_agree_with_the_solvers() {
    use super::optimize::{complete_graph_activation, complete_graph_mixing};
    for n in [6usize, 7, 12, 13] {
        let m = complete_graph_matchings(n);
        for cb in [0.2, 0.5, 0.9] {
            let num = activation_probabilities(n, &m, cb, &SolverOptions::default()).unwrap();
            let exact = complete_graph_activation(n, m.len(), cb);
            assert!(
                num.upper_bound >= exact.lambda2 * (1.0 - 1e-9),
                "n {n} cb {cb}"
            );
            assert!(num.lambda2 <= exact.lambda2 * (1.0 + 1e-9), "n {n} cb {cb}");
            assert!(
                (num.lambda2 - exact.lambda2).abs() <= 2e-3 * exact.lambda2,
                "n {n} cb {cb}: {} vs {}",
                num.lambda2,
                exact.lambda2
            );
            // The exact lambda_2 of the uniform probabilities.
            let l2 = super::optimize::lambda2(n, &m, &exact.probabilities).unwrap();
            assert!((l2 - exact.lambda2).abs() < 1e-9 * exact.lambda2);
            let mix = mixing_parameter(n, &m, &exact.probabilities).unwrap();
            let closed = complete_graph_mixing(n, cb);
            assert!((mix.rho - closed.rho).abs() < 1e-7, "n {n} cb {cb}");
            assert!((mix.alpha - closed.alpha).abs() < 1e-4 * closed.alpha);
        }
    }
}
