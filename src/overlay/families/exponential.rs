//! The static and the one-peer exponential graphs (\[Ying21\]), on abstract
//! nodes `0..n` (the caller places them on silos).
//!
//! With `tau = ceil(log2 n)`:
//!
//! * **static exponential graph**: node `i` sends to `(i + 2^k) mod n` for
//!   `k = 0..tau`; every node receives `tau` models and
//!   gives each, and its own, the weight `1 / (tau + 1)`: a circulant,
//!   doubly stochastic matrix.
//! * **one-peer exponential graph**: in round `t`, node `i` sends to
//!   `(i + 2^(t mod tau)) mod n` only, and the receiver
//!   keeps `1/2` of its own model: `W(t) = (I + P(t)) / 2`, `P(t)` a
//!   permutation. The product of one period of `tau` rounds is exact
//!   averaging `J / n` when `n` is a power of two (\[Ying21\]), not
//!   otherwise (it stays doubly stochastic).
//!
//! Matrices follow fedtopo's convention (\[Marfoq20\] eq. 2): row `i` holds the
//! weights node `i` gives to its own model and to the models it receives.

use crate::mixing::ConsensusMatrix;

/// `tau = ceil(log2 n)`: the number of out-neighbours of the static graph
/// and the period of the one-peer graph (0 for `n <= 1`).
pub fn tau(n: usize) -> usize {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as usize
    }
}

/// The arcs `(i, (i + 2^k) mod n)`, `k = 0..tau`, of the static exponential
/// graph (distinct: `2^k < n` for `k < tau`).
pub fn static_arcs(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .flat_map(|i| (0..tau(n)).map(move |k| (i, (i + (1 << k)) % n)))
        .collect()
}

/// The consensus matrix of the static exponential graph: `1 / (tau + 1)` on
/// the diagonal and for every arc `j -> i` (row `i`, column `j`).
pub fn static_matrix(n: usize) -> ConsensusMatrix {
    let w = 1.0 / (tau(n) + 1) as f64;
    let mut m = ConsensusMatrix::zeros(n);
    for (i, row) in m.rows_mut().enumerate() {
        row[i] = w;
    }
    for (j, i) in static_arcs(n) {
        m[(i, j)] = w;
    }
    m
}

/// The arcs `(i, (i + 2^(t mod tau)) mod n)` of round `t` of the one-peer
/// exponential graph.
pub fn one_peer_arcs(n: usize, t: usize) -> Vec<(usize, usize)> {
    let tau = tau(n);
    if tau == 0 {
        return Vec::new();
    }
    let hop = 1usize << (t % tau);
    (0..n).map(|i| (i, (i + hop) % n)).collect()
}

/// The consensus matrix `(I + P(t)) / 2` of round `t` of the one-peer
/// exponential graph.
pub fn one_peer_matrix(n: usize, t: usize) -> ConsensusMatrix {
    let mut m = ConsensusMatrix::zeros(n);
    for (i, row) in m.rows_mut().enumerate() {
        row[i] = if n > 1 { 0.5 } else { 1.0 };
    }
    for (j, i) in one_peer_arcs(n, t) {
        m[(i, j)] = 0.5;
    }
    m
}

/// One period of the one-peer exponential graph: `tau` matrices.
pub fn one_peer_period(n: usize) -> Vec<ConsensusMatrix> {
    (0..tau(n).max(1)).map(|t| one_peer_matrix(n, t)).collect()
}
