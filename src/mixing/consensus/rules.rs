//! The consensus matrices of the degree rules and MATCHA, and a periodic
//! matrix restricted to a round's arcs.

use std::collections::BTreeSet;

use crate::graph::Overlay;
use crate::mixing::matrix::{ConsensusError, ConsensusMatrix};

/// `m` restricted to the arcs of `overlay`: a weight on a missing arc (a
/// failure) goes to the receiver's own model, so rows still sum to 1.
pub(super) fn per_round(
    m: &ConsensusMatrix,
    overlay: &Overlay,
) -> Result<ConsensusMatrix, ConsensusError> {
    let n = m.n();
    if overlay.silo_count() != n {
        return Err(ConsensusError::Shape {
            n: overlay.silo_count(),
            rows: n,
            cols: n,
        });
    }
    let mut data = m.as_slice().to_vec();
    for i in 0..n {
        for j in 0..n {
            if i != j && data[i * n + j] != 0.0 && overlay.arcs().binary_search(&(j, i)).is_err() {
                data[i * n + i] += data[i * n + j];
                data[i * n + j] = 0.0;
            }
        }
    }
    Ok(ConsensusMatrix::from_row_major(n, data))
}

fn fill_diagonal(n: usize, mut data: Vec<f64>) -> ConsensusMatrix {
    for i in 0..n {
        let off: f64 = (0..n).filter(|&j| j != i).map(|j| data[i * n + j]).sum();
        data[i * n + i] = 1.0 - off;
    }
    ConsensusMatrix::from_row_major(n, data)
}

/// Local-degree rule (paper eqs. 22-23).
pub fn local_degree(overlay: &Overlay) -> ConsensusMatrix {
    let n = overlay.silo_count();
    let mut data = vec![0.0; n * n];
    for &(j, i) in overlay.arcs() {
        let d = overlay.in_degree(i).max(overlay.in_degree(j));
        data[i * n + j] = 1.0 / (1.0 + d as f64);
    }
    fill_diagonal(n, data)
}

/// Metropolis–Hastings weights on the undirected neighbourhoods.
pub fn metropolis_hastings(overlay: &Overlay) -> ConsensusMatrix {
    let n = overlay.silo_count();
    let mut nb = vec![BTreeSet::new(); n];
    for &(a, b) in overlay.arcs() {
        nb[a].insert(b);
        nb[b].insert(a);
    }
    let mut data = vec![0.0; n * n];
    for &(j, i) in overlay.arcs() {
        data[i * n + j] = 1.0 / (1.0 + nb[i].len().max(nb[j].len()) as f64);
    }
    fill_diagonal(n, data)
}

/// `A_ii = A_{i,pred(i)} = 1/2` for a directed ring.
pub fn half(overlay: &Overlay) -> Result<ConsensusMatrix, ConsensusError> {
    let n = overlay.silo_count();
    let mut data = vec![0.0; n * n];
    for i in 0..n {
        if overlay.in_degree(i) != 1 {
            return Err(ConsensusError::NotARing {
                silo: i,
                indeg: overlay.in_degree(i),
            });
        }
    }
    for &(j, i) in overlay.arcs() {
        data[i * n + j] = 0.5;
    }
    Ok(fill_diagonal(n, data))
}

/// MATCHA's `I - alpha L` on the undirected graph of the overlay's edges.
pub fn matcha(overlay: &Overlay, alpha: f64) -> ConsensusMatrix {
    let n = overlay.silo_count();
    let mut data = vec![0.0; n * n];
    for &(a, b) in overlay.arcs() {
        data[a * n + b] = alpha;
        data[b * n + a] = alpha;
    }
    fill_diagonal(n, data)
}
