//! The winner of \[Marfoq20\] Algorithm 1 without building every candidate.
//!
//! [`super::candidates`] runs delta-Prim for every degree bound, `O(N^3)` in
//! all. Two exact shortcuts give the same winner (the same edges, as a test
//! checks against the exhaustive list on every paper underlay and on random
//! instances):
//!
//! 1. **Unbound sweep.** A delta-Prim run in which no node reaches degree
//!    `delta` never consults the bound, so every larger bound replays it
//!    exactly (the MST in that tie order). A sweep stops at the first such
//!    `delta`: the rest of it are copies, and a copy never beats the earlier
//!    original (ties go to the earlier candidate). A sweep thus costs
//!    `O(D N^2)`, `D` the largest degree of the MST, instead of `O(N^3)`.
//! 2. **Lower bound.** Every spanning tree has an edge across each cut, and
//!    an edge's value at its real degrees (`>= 1`) is at least `w(i,j) / 2`
//!    (eq. (3) grows with the degrees), so no tree beats
//!    `max(bottleneck of the MST of w / 2, max_i s*Tc(i))`. Once a candidate
//!    reaches it, no later one can be strictly better: the search stops.

use super::{cube_path, mbst_weights, prim_label, sweeps, Candidate, TreeDelays};
use crate::overlay::algo::{delta_prim_symmetric, minimum_spanning_tree, DenseMatrix, Edge};
use crate::units::Ms;

/// No spanning tree has a smaller cycle time, ms (see the module docs).
pub fn tree_lower_bound<D: TreeDelays + ?Sized>(model: &D, w: &DenseMatrix) -> Ms {
    let bottleneck = minimum_spanning_tree(w)
        .iter()
        .map(|&(u, v)| w.get(u, v) / 2.0)
        .fold(f64::NEG_INFINITY, f64::max);
    super::compute_floor(model).max(bottleneck)
}

/// Largest degree in `edges` over `0..n`.
fn max_degree(n: usize, edges: &[Edge]) -> usize {
    super::degrees(n, edges).into_iter().max().unwrap_or(0)
}

/// The first candidate of [`super::candidates`] with the smallest cycle
/// time, found with the shortcuts of this module (same edges, same cycle
/// time). `O(D N^2)` with `D` the largest degree of the MST of `w`.
pub fn best_candidate<D: TreeDelays + ?Sized>(model: &D) -> Candidate {
    let n = model.silo_count();
    let w = mbst_weights(model);
    let mut best = cube_path(model, &w);
    if n < 2 {
        return best;
    }
    let bound = tree_lower_bound(model, &w);
    for (tie, deltas) in sweeps(n) {
        for delta in deltas {
            if best.cycle_time_ms <= bound {
                return best;
            }
            let Some(edges) = delta_prim_symmetric(&w, delta, 0, tie) else {
                continue;
            };
            let unbound = max_degree(n, &edges) < delta;
            let c = Candidate::new(model, prim_label(delta, tie), edges);
            if c.cycle_time_ms < best.cycle_time_ms {
                best = c;
            }
            if unbound {
                break;
            }
        }
    }
    best
}

/// The candidates [`best_candidate`] builds when it never stops at the lower
/// bound: the cube path, then each delta-Prim sweep of [`super::candidates`]
/// up to its first run that no degree bound constrains (the later runs of
/// that sweep copy it). In the order of [`super::candidates`]; `O(D N^2)`.
pub fn sweep_candidates<D: TreeDelays + ?Sized>(model: &D) -> Vec<Candidate> {
    super::candidate_list(model, true)
}
