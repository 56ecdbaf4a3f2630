use super::*;
use crate::overlay::matcha::coloring::matching_decomposition;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn lambda2_ok(n: usize, m: &[Vec<(usize, usize)>], p: &[f64]) -> f64 {
    lambda2(n, m, p).unwrap_or_else(|e| panic!("{e}"))
}

fn mixing_parameter_ok(n: usize, m: &[Vec<(usize, usize)>], p: &[f64]) -> MixingSolution {
    mixing_parameter(n, m, p).unwrap_or_else(|e| panic!("{e}"))
}

/// Round-robin 1-factorisation of K_n (n even): n-1 perfect matchings.
fn round_robin(n: usize) -> Vec<Vec<(usize, usize)>> {
    (0..n - 1)
        .map(|r| {
            let mut m = vec![(r.min(n - 1), n - 1)];
            for k in 1..n / 2 {
                let a = (r + k) % (n - 1);
                let b = (r + n - 1 - k) % (n - 1);
                m.push((a.min(b), a.max(b)));
            }
            m
        })
        .collect()
}

fn assert_brackets(sol: &ActivationSolution, opt: f64, tol: f64) {
    assert!(
        sol.lambda2 <= opt * (1.0 + 1e-9) + 1e-12,
        "lb {} > opt {opt}",
        sol.lambda2
    );
    assert!(
        sol.upper_bound >= opt * (1.0 - 1e-9) - 1e-12,
        "ub {} < opt {opt}",
        sol.upper_bound
    );
    assert!(sol.relative_gap() <= tol, "gap {}", sol.relative_gap());
}

#[test]
fn knapsack_and_projection() {
    assert_eq!(knapsack(&[3.0, 1.0, 2.0], 1.5), 3.0 + 1.0);
    assert_eq!(knapsack(&[3.0, 1.0, 2.0], 9.0), 6.0);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..200 {
        let m = rng.gen_range(1..12);
        let b = rng.gen_range(0.1..m as f64);
        let y: Vec<f64> = (0..m).map(|_| rng.gen_range(-1.0..2.0)).collect();
        let q = project(&y, b);
        assert!(q.iter().all(|&v| (0.0..=1.0).contains(&v)));
        assert!(q.iter().sum::<f64>() <= b + 1e-9);
        // Optimality of the projection: <y - q, z - q> <= 0 for feasible z.
        for _ in 0..20 {
            let z = project(
                &(0..m).map(|_| rng.gen_range(0.0..1.0)).collect::<Vec<_>>(),
                b,
            );
            let s: f64 = (0..m).map(|i| (y[i] - q[i]) * (z[i] - q[i])).sum();
            assert!(s <= 1e-7, "{s}");
        }
    }
}

#[test]
fn complete_graph_optimum_is_uniform() {
    // lambda_2 <= 2 W / (n-1) with total weight W <= B n/2: optimum Cb * n.
    for n in [4, 8, 12] {
        let m = round_robin(n);
        super::super::coloring::check_decomposition(
            n,
            &m.iter().flatten().copied().collect::<Vec<_>>(),
            &m,
        )
        .unwrap();
        for cb in [0.2, 0.5, 0.8] {
            let sol = activation_probabilities(n, &m, cb, &SolverOptions::default()).unwrap();
            assert_brackets(&sol, cb * n as f64, 2e-3);
        }
    }
}

#[test]
fn ring_and_star_optima() {
    for n in [6, 10, 20] {
        let m: Vec<Vec<(usize, usize)>> = (0..2)
            .map(|s| {
                (0..n / 2)
                    .map(|k| (2 * k + s, (2 * k + s + 1) % n))
                    .collect()
            })
            .collect();
        for cb in [0.3, 0.5, 0.9] {
            let opt = cb * 2.0 * (1.0 - (2.0 * std::f64::consts::PI / n as f64).cos());
            let sol = activation_probabilities(n, &m, cb, &SolverOptions::default()).unwrap();
            assert_brackets(&sol, opt, 2e-3);
        }
    }
    for n in [3, 7, 15] {
        let star: Vec<_> = (1..n).map(|i| (0, i)).collect();
        let m = matching_decomposition(n, &star).unwrap();
        for cb in [0.25, 0.5] {
            let sol = activation_probabilities(n, &m, cb, &SolverOptions::default()).unwrap();
            assert_brackets(&sol, cb, 2e-3);
        }
    }
}

#[test]
fn certificate_is_valid_on_random_graphs() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut done = 0;
    while done < 15 {
        let n = rng.gen_range(5..25);
        let e: Vec<_> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|_| rng.gen_bool(0.4))
            .collect();
        let Ok(m) = matching_decomposition(n, &e) else {
            continue;
        };
        let cb = rng.gen_range(0.1..0.9);
        let Ok(sol) = activation_probabilities(n, &m, cb, &SolverOptions::default()) else {
            continue; // disconnected
        };
        done += 1;
        let b = cb * m.len() as f64;
        assert!(sol.probabilities.iter().sum::<f64>() <= b + 1e-9);
        assert!((lambda2_ok(n, &m, &sol.probabilities) - sol.lambda2).abs() < 1e-9);
        assert!(
            sol.relative_gap() <= 1e-3 + 1e-12,
            "gap {}",
            sol.relative_gap()
        );
        // Weak duality: no feasible point beats the upper bound.
        for _ in 0..30 {
            let y: Vec<f64> = (0..m.len()).map(|_| rng.gen_range(0.0..1.0)).collect();
            let q = project(&y, b);
            assert!(lambda2_ok(n, &m, &q) <= sol.upper_bound + 1e-9);
        }
        assert!(sol.lambda2 >= lambda2_ok(n, &m, &vec![cb; m.len()]) - 1e-12);
    }
}

#[test]
fn budget_one_and_errors() {
    let m = round_robin(6);
    let s = activation_probabilities(6, &m, 1.0, &SolverOptions::default()).unwrap();
    assert!(s.probabilities.iter().all(|&p| p == 1.0));
    assert!((s.lambda2 - 6.0).abs() < 1e-9);
    assert!(matches!(
        activation_probabilities(6, &m, 0.0, &SolverOptions::default()),
        Err(MatchaError::BadBudget(_))
    ));
    assert!(matches!(
        activation_probabilities(6, &m, f64::NAN, &SolverOptions::default()),
        Err(MatchaError::BadBudget(_))
    ));
    let disc = vec![vec![(0, 1), (2, 3)]];
    assert!(matches!(
        activation_probabilities(4, &disc, 0.5, &SolverOptions::default()),
        Err(MatchaError::Disconnected)
    ));
}

#[test]
fn mixing_closed_form_when_deterministic() {
    // p = 1: E[W^T W] = (I - alpha L)^2, rho* = ((l_n - l_2)/(l_n + l_2))^2.
    let n = 10;
    let m: Vec<Vec<(usize, usize)>> = (0..2)
        .map(|s| {
            (0..n / 2)
                .map(|k| (2 * k + s, (2 * k + s + 1) % n))
                .collect()
        })
        .collect();
    let sol = mixing_parameter_ok(n, &m, &[1.0, 1.0]);
    let l2 = 2.0 * (1.0 - (2.0 * std::f64::consts::PI / n as f64).cos());
    let ln = 4.0;
    let want = ((ln - l2) / (ln + l2)).powi(2);
    assert!((sol.rho - want).abs() < 1e-6, "{} vs {want}", sol.rho);
    assert!((sol.alpha - 2.0 / (l2 + ln)).abs() < 1e-4);
    assert!(sol.rho_lower_bound <= want + 1e-9 && sol.rho - sol.rho_lower_bound < 1e-6);
}

#[test]
fn mixing_beats_a_grid_and_matches_sampling() {
    let n = 9;
    let e: Vec<_> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect();
    let m = matching_decomposition(n, &e).unwrap();
    let p: Vec<f64> = (0..m.len())
        .map(|j| 0.2 + 0.6 * (j as f64 / m.len() as f64))
        .collect();
    let sol = mixing_parameter_ok(n, &m, &p);
    assert!(sol.rho < 1.0 && sol.rho_lower_bound <= sol.rho);
    assert!(sol.rho - sol.rho_lower_bound < 1e-6);
    let lbar = weighted_laplacian(n, &m, &p);
    let var: Vec<f64> = p.iter().map(|q| q * (1.0 - q)).collect();
    let quad = &lbar * &lbar + weighted_laplacian(n, &m, &var) * 2.0;
    let base = DMatrix::<f64>::identity(n, n) - DMatrix::from_element(n, n, 1.0 / n as f64);
    let rho_at = |a: f64| {
        (&base - &lbar * (2.0 * a) + &quad * (a * a))
            .symmetric_eigenvalues()
            .max()
    };
    for k in 1..400 {
        let a = k as f64 * 2.0 * sol.alpha / 400.0;
        assert!(rho_at(a) >= sol.rho_lower_bound - 1e-12);
    }
    // E[W^T W] by Monte Carlo over independent activations.
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut acc = DMatrix::<f64>::zeros(n, n);
    let draws = 20000;
    for _ in 0..draws {
        let act: Vec<f64> = p
            .iter()
            .map(|&q| if rng.gen_bool(q) { 1.0 } else { 0.0 })
            .collect();
        let w = DMatrix::<f64>::identity(n, n) - weighted_laplacian(n, &m, &act) * sol.alpha;
        acc += w.transpose() * &w;
    }
    acc /= draws as f64;
    let exact = DMatrix::<f64>::identity(n, n) - &lbar * (2.0 * sol.alpha) + &quad * sol.beta;
    assert!((acc - exact).amax() < 0.02);
}

/// Largest `lambda_2` over a grid of feasible points: the first `m - 1`
/// probabilities on a grid of step `h` in `[lo_j, hi_j]`, the last one
/// taking what is left of the budget (`lambda_2` is non-decreasing in every
/// `p_j`, so the budget is used up when it can be), clipped to 1.
fn grid_max(
    n: usize,
    ms: &[Vec<(usize, usize)>],
    b: f64,
    box_: &[(f64, f64)],
    h: f64,
) -> (f64, Vec<f64>) {
    let m = ms.len();
    let steps: Vec<usize> = box_[..m - 1]
        .iter()
        .map(|(lo, hi)| ((hi - lo) / h).round() as usize)
        .collect();
    let mut idx = vec![0usize; m - 1];
    let (mut best, mut best_p) = (f64::NEG_INFINITY, vec![0.0; m]);
    loop {
        let mut p: Vec<f64> = (0..m - 1)
            .map(|j| (box_[j].0 + idx[j] as f64 * h).clamp(0.0, 1.0))
            .collect();
        let rest = b - p.iter().sum::<f64>();
        if rest >= -1e-12 {
            p.push(rest.clamp(0.0, 1.0));
            let v = lambda2_ok(n, ms, &p);
            if v > best {
                best = v;
                best_p = p;
            }
        }
        // Next grid point (odometer).
        let mut j = 0;
        loop {
            if j == m - 1 {
                return (best, best_p);
            }
            idx[j] += 1;
            if idx[j] <= steps[j] {
                break;
            }
            idx[j] = 0;
            j += 1;
        }
    }
}

/// Our optimum against an independent brute force on tiny graphs: a grid
/// search (refined twice around its best point) gives a feasible point, so
/// a lower bound on the optimum. The certified upper bound must not be below
/// it, and our `lambda_2` must be within the solver tolerance (1e-3) of it,
/// up to the grid's resolution error (`|lambda_2(p) - lambda_2(q)| <=
/// 2 ||p - q||_1`, matching Laplacians have norm 2; after refining to step
/// `h`, at most `2 (m - 1) h` away, since only `m - 1` coordinates are free).
#[test]
fn optimum_matches_a_brute_force_grid_on_tiny_graphs() {
    let graphs: Vec<(usize, Vec<(usize, usize)>)> = vec![
        (4, vec![(0, 1), (1, 2), (2, 3)]),                 // path P4
        (5, vec![(0, 1), (1, 2), (2, 0), (2, 3), (3, 4)]), // triangle + tail
        (6, vec![(0, 1), (0, 2), (0, 3), (3, 4), (4, 5), (1, 2)]), // kite + path
        (5, vec![(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 2)]), // C5 + chord
    ];
    let mut best_over_uniform: f64 = 0.0;
    for (n, e) in &graphs {
        let ms = matching_decomposition(*n, e).unwrap();
        let m = ms.len();
        assert!((3..=4).contains(&m), "{m} matchings");
        for cb in [0.3, 0.5, 0.7] {
            let b = cb * m as f64;
            let sol = activation_probabilities(*n, &ms, cb, &SolverOptions::default()).unwrap();
            let mut h = if m == 3 { 1.0 / 100.0 } else { 1.0 / 30.0 };
            let (mut best, mut p) = grid_max(*n, &ms, b, &vec![(0.0, 1.0); m], h);
            for _ in 0..2 {
                let box_: Vec<(f64, f64)> = p.iter().map(|&v| (v - h, v + h)).collect();
                h /= 10.0;
                let (v, q) = grid_max(*n, &ms, b, &box_, h);
                if v > best {
                    best = v;
                    p = q;
                }
            }
            let resolution = 2.0 * (m - 1) as f64 * h;
            assert!(
                sol.upper_bound >= best - 1e-12,
                "n {n} Cb {cb}: upper bound {} below a feasible point's {best}",
                sol.upper_bound
            );
            assert!(
                sol.lambda2 >= best * (1.0 - 1e-3) - resolution,
                "n {n} Cb {cb}: ours {} vs grid {best}",
                sol.lambda2
            );
            assert!(sol.probabilities.iter().sum::<f64>() <= b + 1e-9);
            let uniform = lambda2_ok(*n, &ms, &vec![cb; m]);
            best_over_uniform = best_over_uniform.max(best / uniform);
        }
    }
    // The grid can tell a solver that stops at the start point p = Cb from
    // the optimum: on these graphs the optimum is well above it.
    assert!(best_over_uniform > 1.05, "{best_over_uniform}");
}

/// A NaN probability is refused with a typed error (it used to stop the
/// unbounded QR iteration's convergence test forever).
#[test]
fn non_finite_probabilities_are_refused_not_looped_on() {
    let m = round_robin(4);
    let p = vec![f64::NAN; m.len()];
    assert!(matches!(
        lambda2(4, &m, &p),
        Err(SpectrumError::NotFinite { .. })
    ));
    assert!(mixing_parameter(4, &m, &p).is_err());
}
