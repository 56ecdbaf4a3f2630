//! The families' mixing matrices on abstract nodes: exact consensus of the
//! Base-(k+1) graph for any `n`, the one-peer exponential graph's exact
//! averaging for powers of two only, double stochasticity, degrees.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::mixing::ConsensusMatrix;

/// `W x`.
fn apply(w: &ConsensusMatrix, x: &[f64]) -> Vec<f64> {
    w.rows()
        .map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum())
        .collect()
}

/// Largest `|x_i - mean(x0)|` after one period applied to `x0`.
fn consensus_error(rounds: &[ConsensusMatrix], x0: &[f64]) -> f64 {
    let mean = x0.iter().sum::<f64>() / x0.len() as f64;
    let x = rounds.iter().fold(x0.to_vec(), |x, w| apply(w, &x));
    x.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max)
}

/// Largest deviation of a row or column sum from 1; panics on a negative entry.
fn stochastic_error(w: &ConsensusMatrix) -> f64 {
    let mut err: f64 = 0.0;
    for (i, row) in w.rows().enumerate() {
        assert!(row.iter().all(|&x| x >= 0.0), "negative entry in row {i}");
        err = err.max((row.iter().sum::<f64>() - 1.0).abs());
        err = err.max((w.rows().map(|r| r[i]).sum::<f64>() - 1.0).abs());
    }
    err
}

/// Largest number of other nodes a node gives weight to.
fn max_degree(w: &ConsensusMatrix) -> usize {
    w.rows()
        .enumerate()
        .map(|(i, row)| {
            row.iter()
                .enumerate()
                .filter(|&(j, &x)| j != i && x != 0.0)
                .count()
        })
        .max()
        .unwrap_or(0)
}

fn random_vectors(n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..3)
        .map(|_| (0..n).map(|_| rng.gen_range(-100.0..100.0)).collect())
        .collect()
}

#[test]
fn base_graph_reaches_exact_consensus_after_one_period_for_any_n() {
    let sizes: Vec<usize> = (2..=40).chain([49, 63, 64, 81, 87, 100, 125]).collect();
    for k in 1..=4 {
        for &n in &sizes {
            if k >= n {
                continue;
            }
            let rounds = base_graph::base_graph(n, k);
            let bound = 2.0 * (n as f64).ln() / ((k + 1) as f64).ln() + 2.0;
            assert!(
                rounds.len() as f64 <= bound + 1e-9,
                "n={n} k={k}: {} rounds > {bound}",
                rounds.len()
            );
            for (r, w) in rounds.iter().enumerate() {
                assert!(stochastic_error(w) < 1e-12, "n={n} k={k} round {r}");
                assert!(max_degree(w) <= k, "n={n} k={k} round {r}");
                for (i, row) in w.rows().enumerate() {
                    for (j, x) in row.iter().enumerate().take(i) {
                        assert_eq!(*x, w[(j, i)], "n={n} k={k} round {r} ({i},{j})");
                    }
                }
            }
            for x in random_vectors(n, (n * 10 + k) as u64) {
                let e = consensus_error(&rounds, &x);
                assert!(e < 1e-12, "n={n} k={k}: off by {e}");
            }
        }
    }
}

#[test]
fn base_graph_shapes_match_the_construction() {
    // n a power of k+1: the hypercube, log_(k+1) n rounds of k-regular cliques.
    assert_eq!(base_graph::base_graph(27, 2).len(), 3);
    assert_eq!(base_graph::base_graph(16, 1).len(), 4);
    // 6 = 2 * 3 with k = 2: two stages (pairs, then triples).
    let six = base_graph::base_graph(6, 2);
    assert_eq!(six.len(), 2);
    assert_eq!((max_degree(&six[0]), max_degree(&six[1])), (1, 2));
    // A prime n above k+1 is not smooth and needs the simple graph; one
    // period stops short of consensus.
    assert!(!base_graph::is_smooth(7, 2) && base_graph::smooth_part(12, 2) == 12);
    let seven = base_graph::base_graph(7, 1);
    let x = random_vectors(7, 1).remove(0);
    assert!(consensus_error(&seven[..seven.len() - 1], &x) > 1e-3);
}

#[test]
fn one_peer_exponential_is_exact_for_powers_of_two_only() {
    for n in [2, 4, 8, 16, 32] {
        let rounds = exponential::one_peer_period(n);
        assert_eq!(rounds.len(), exponential::tau(n));
        for x in random_vectors(n, n as u64) {
            let e = consensus_error(&rounds, &x);
            assert!(e < 1e-12, "n={n}: off by {e}");
        }
    }
    for n in [3, 5, 6, 7, 12, 22] {
        let rounds = exponential::one_peer_period(n);
        for w in &rounds {
            assert!(stochastic_error(w) < 1e-15, "n={n}");
            assert_eq!(max_degree(w), 1, "n={n}");
        }
        let x = random_vectors(n, n as u64).remove(0);
        assert!(
            consensus_error(&rounds, &x) > 1e-3,
            "n={n} averaged exactly"
        );
    }
}

#[test]
fn exponential_graph_is_doubly_stochastic_with_log_degree() {
    for n in [2, 3, 5, 6, 8, 22, 33, 64] {
        let w = exponential::static_matrix(n);
        let tau = exponential::tau(n);
        assert_eq!(tau, (n as f64).log2().ceil() as usize, "n={n}");
        assert!(stochastic_error(&w) < 1e-12, "n={n}");
        assert_eq!(max_degree(&w), tau, "n={n}");
        assert_eq!(exponential::static_arcs(n).len(), n * tau);
        for (i, row) in w.rows().enumerate() {
            assert!(row.iter().all(|&x| x == 0.0 || x == 1.0 / (tau + 1) as f64));
            assert_eq!(row[i], 1.0 / (tau + 1) as f64);
        }
    }
}

#[test]
fn placing_moves_nodes_to_silos_and_keeps_the_weights() {
    let spec: FamilySpec = "base:k=2".parse().unwrap();
    let order = [3, 0, 4, 1, 2];
    let FamilyBuilt::Periodic { schedule, weights } = place(spec, &order, 0) else {
        panic!("base is a schedule");
    };
    let abs = abstract_matrices(spec.family, 5, 0);
    assert_eq!(schedule.period(), abs.len());
    for (r, (w, a)) in weights.iter().zip(&abs).enumerate() {
        for p in 0..5 {
            for q in 0..5 {
                assert_eq!(w[(order[p], order[q])], a[(p, q)]);
                let arc = schedule.rounds()[r]
                    .arcs()
                    .binary_search(&(order[q], order[p]))
                    .is_ok();
                assert_eq!(arc, p != q && a[(p, q)] != 0.0, "round {r} ({p},{q})");
            }
        }
    }
    let exp: FamilySpec = "exp".parse().unwrap();
    let FamilyBuilt::Static {
        overlay: o,
        weights: None,
    } = place(exp, &order, 0)
    else {
        panic!("exp is static, without weights of its own");
    };
    // Abstract arc 0 -> 1 is silo 3 -> silo 0.
    assert!(o.arcs().binary_search(&(3, 0)).is_ok());
    assert_eq!(o.name, "exp");
    assert!(matches!(
        check_size("base:k=5".parse().unwrap(), 5),
        Err(FamilyError::DegreeTooLarge { k: 5, silos: 5, .. })
    ));
    assert!(check_size("base:k=4".parse().unwrap(), 5).is_ok());
    assert!(matches!(
        check_size(exp, 1),
        Err(FamilyError::TooSmall { silos: 1, .. })
    ));
}

#[test]
fn equitopo_matrices_are_seeded_doubly_stochastic_and_sparse() {
    for n in [2, 5, 17, 22] {
        for m in [1, 4, 5] {
            let w = equitopo::d_equistatic(n, m, 3);
            assert!(stochastic_error(&w) < 1e-12, "n={n} m={m}");
            let shifts = equitopo::static_shifts(n, m, 3);
            let mut distinct = shifts.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(max_degree(&w), distinct.len(), "n={n} m={m}");
            // Node i receives from i + u with weight (n-1)/n per draw of u.
            for &u in &distinct {
                let draws = shifts.iter().filter(|&&s| s == u).count();
                let want = draws as f64 * (n - 1) as f64 / n as f64 / m as f64;
                assert!((w[(0, u % n)] - want).abs() < 1e-15, "n={n} m={m} u={u}");
            }
            assert_eq!(w, equitopo::d_equistatic(n, m, 3));
        }
    }
    assert_ne!(
        equitopo::static_shifts(22, 5, 1),
        equitopo::static_shifts(22, 5, 2)
    );
    let rounds = equitopo::od_equidyn(22, 0.53, 200, 9);
    for w in &rounds {
        assert!(stochastic_error(w) < 1e-12);
        assert_eq!(max_degree(w), 1);
        assert!((w[(4, 4)] - (0.47 + 0.53 / 22.0)).abs() < 1e-15);
    }
    // Consensus rate independent of n: 200 random one-peer rounds shrink
    // the disagreement by orders of magnitude.
    let x = random_vectors(22, 4).remove(0);
    let start = consensus_error(&[], &x);
    assert!(consensus_error(&rounds, &x) < 1e-6 * start);
}
