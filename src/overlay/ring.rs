//! RING (\[Marfoq20\] Prop. 3.3/3.6) and `ring-opt`.
//!
//! RING: Christofides' tour (MST + exact minimum-weight perfect matching on
//! odd-degree vertices + Euler tour + shortcutting) on the symmetrised arc
//! delays `(d_o(i,j) + d_o(j,i)) / 2` at degree 1 (\[Marfoq20\] eq. 3), oriented in the
//! direction with the smaller cycle time. A directed ring's cycle time is
//! the sum of its arc delays divided by N, so it is at most 3N times the
//! optimum (\[Marfoq20\] Prop. 3.6).
//!
//! `ring-opt`: the RING improved by local search (Or-opt, 2-opt and
//! segment-exchange 3-opt moves) directly on the asymmetric arc delays,
//! i.e. on the directed cycle time. Never worse than RING. Up to
//! `RingSearch::full_scan_max` (400) silos, which covers every paper
//! underlay, every neighbourhood is scanned in full; above, the moves are
//! searched through candidate lists (the `k = 10` nearest successors and
//! predecessors of each silo) with don't-look bits.

use crate::delay::DelayModel;
use crate::overlay::algo::{
    christofides_tour, directed_ring_cost, improve_directed_ring, DenseMatrix, RingSearch,
};
use crate::overlay::{silo_matrix, Overlay};

/// Arc delays of \[Marfoq20\] eq. (3) at degree 1 (every silo sends to and receives from
/// exactly one other), ms.
pub fn ring_delays(model: &DelayModel) -> DenseMatrix {
    silo_matrix(model, |i, j| model.arc_delay(i, j, 1, 1))
}

/// The better orientation of `tour` for the delays `d`.
fn orient(d: &DenseMatrix, mut tour: Vec<usize>) -> Vec<usize> {
    let forward = directed_ring_cost(d, &tour);
    let mut rev = tour.clone();
    rev.reverse();
    if directed_ring_cost(d, &rev) < forward {
        tour = rev;
    }
    tour
}

/// The Christofides tour as a directed ring, in its better orientation.
pub fn christofides_ring_tour(model: &DelayModel) -> Vec<usize> {
    let d = ring_delays(model);
    // christofides_tour works on the symmetrised matrix (d(i,j) + d(j,i)) / 2.
    orient(&d, christofides_tour(&d))
}

/// RING overlay.
pub fn ring(model: &DelayModel) -> Overlay {
    let tour = christofides_ring_tour(model);
    Overlay::directed_ring("ring", model.silo_count(), &tour)
}

/// The `ring-opt` tour: the Christofides tour improved by local search on
/// the directed cycle time (silo indices in ring order).
pub fn ring_opt_tour(model: &DelayModel, search: &RingSearch) -> Vec<usize> {
    let d = ring_delays(model);
    // The Christofides tour on the same delays (not rebuilt: one N x N
    // matrix less at a time).
    let start = orient(&d, christofides_tour(&d));
    improve_directed_ring(&d, start, search)
}

/// `ring-opt` from a given start `tour` (the Christofides tour of
/// [`christofides_ring_tour`], shared with RING): equal to [`ring_opt`] when
/// `tour` is that tour.
pub fn ring_opt_from(model: &DelayModel, tour: Vec<usize>, search: &RingSearch) -> Overlay {
    let d = ring_delays(model);
    let tour = improve_directed_ring(&d, tour, search);
    Overlay::directed_ring("ring-opt", model.silo_count(), &tour)
}

/// `ring-opt` overlay: RING improved by local search on the directed cycle time.
pub fn ring_opt(model: &DelayModel, search: &RingSearch) -> Overlay {
    let tour = ring_opt_tour(model, search);
    Overlay::directed_ring("ring-opt", model.silo_count(), &tour)
}
