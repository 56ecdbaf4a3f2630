//! Chung-Lu graphs with Pareto weights (the heavy-tailed family of
//! \[BadieModiri24\] Fig. 5, degree distribution `p(k) ~ k^-gamma`).

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Pareto};

/// `n` expected degrees drawn from a Pareto law with shape `gamma - 1`
/// (density `~ w^-gamma`) and scale `k (gamma - 2) / (gamma - 1)`, so that
/// their expectation is the mean degree `k`. Needs `gamma > 2`, `k > 0`.
pub fn pareto_weights(n: usize, gamma: f64, k: f64, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let shape = gamma - 1.0;
    let scale = k * (gamma - 2.0) / (gamma - 1.0);
    let d = Pareto::new(scale, shape).expect("gamma > 2 and k > 0 are checked by the caller");
    (0..n).map(|_| d.sample(rng)).collect()
}

/// Undirected edges `(a, b)`, `a < b`: each pair independently with
/// probability `min(1, w_a w_b / sum w)` (Chung and Lu 2002). `O(n^2)` draws.
pub fn chung_lu_edges(w: &[f64], rng: &mut ChaCha8Rng) -> Vec<(usize, usize)> {
    let total: f64 = w.iter().sum();
    let mut e = Vec::new();
    if total <= 0.0 {
        return e;
    }
    for a in 0..w.len() {
        for b in a + 1..w.len() {
            let p = (w[a] * w[b] / total).min(1.0);
            if rng.gen::<f64>() < p {
                e.push((a, b));
            }
        }
    }
    e
}
