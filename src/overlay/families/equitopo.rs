//! EquiTopo (\[Song22\]): graphs built from random circulant shifts, whose
//! consensus rate does not depend on `n`, on abstract nodes `0..n` (the
//! caller places them on silos). Read from the paper's public code
//! (kexinjinnn/EquiTopo), not copied.
//!
//! With `P_u` the shift by `u` (node `i` receives the model of node
//! `(i + u) mod n`) and the basis matrix `B_u = I / n + (n - 1) / n P_u`
//! (doubly stochastic):
//!
//! * **D-EquiStatic**: draw `M` shifts `u_1..u_M` uniformly from
//!   `1..n` with replacement; `W = (1 / M) sum_m B_(u_m)`, a static
//!   directed graph of degree at most `M`.
//! * **OD-EquiDyn** (one-peer, directed, dynamic): in every round a fresh
//!   shift `u` uniform in `1..n`, `W = (1 - eta) I + eta B_u`; in-degree
//!   and out-degree 1. The rounds are drawn from a seed and replayed
//!   periodically (a sampled period, as MATCHA's rounds in per-round files).
//!
//! Matrices follow fedtopo's convention (row `i`: the weights node `i`
//! gives to its own model and to the models it receives).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::mixing::ConsensusMatrix;

/// `B_u = I / n + (n - 1) / n P_u`, `n >= 2`, `u` in `1..n`.
fn basis(n: usize, u: usize) -> ConsensusMatrix {
    let mut w = ConsensusMatrix::zeros(n);
    for (i, row) in w.rows_mut().enumerate() {
        row[i] = 1.0 / n as f64;
        row[(i + u) % n] += (n - 1) as f64 / n as f64;
    }
    w
}

/// The `M` shifts of D-EquiStatic drawn from `seed` (uniform in `1..n`,
/// with replacement), `n >= 2`.
pub fn static_shifts(n: usize, m: usize, seed: u64) -> Vec<usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..m).map(|_| rng.gen_range(1..n)).collect()
}

/// The D-EquiStatic consensus matrix with `m >= 1` shifts drawn from
/// `seed`, `n >= 2`.
pub fn d_equistatic(n: usize, m: usize, seed: u64) -> ConsensusMatrix {
    let mut w = ConsensusMatrix::zeros(n);
    for u in static_shifts(n, m, seed) {
        for (row, b) in w.rows_mut().zip(basis(n, u).rows()) {
            for (x, y) in row.iter_mut().zip(b) {
                *x += y / m as f64;
            }
        }
    }
    w
}

/// `rounds` rounds of OD-EquiDyn with weight `eta` in `(0, 1]` on the
/// basis matrix, shifts drawn from `seed`, `n >= 2`.
pub fn od_equidyn(n: usize, eta: f64, rounds: usize, seed: u64) -> Vec<ConsensusMatrix> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..rounds)
        .map(|_| {
            let mut w = basis(n, rng.gen_range(1..n));
            for (i, row) in w.rows_mut().enumerate() {
                for x in row.iter_mut() {
                    *x *= eta;
                }
                row[i] += 1.0 - eta;
            }
            w
        })
        .collect()
}
