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

use crate::graph::Overlay;
use crate::net::delay::DelayModel;
use crate::overlay::algo::{christofides_tour, improve_directed_ring, DenseMatrix, RingSearch};
use crate::overlay::silo_matrix;

/// Arc delays of \[Marfoq20\] eq. (3) at degree 1 (every silo sends to and receives from
/// exactly one other), ms.
pub fn ring_delays(model: &DelayModel) -> DenseMatrix {
    silo_matrix(model, |i, j| model.arc_delay(i, j, 1, 1))
}

/// The Christofides tour as a directed ring, in its better orientation.
///
/// One `n x n` matrix: the delays are symmetrised in place (what
/// `christofides_tour` would copy them into), and the orientation reads
/// the `2 n` arc delays of the tour from the model (the entries of
/// [`ring_delays`], bit for bit).
pub fn christofides_ring_tour(model: &DelayModel) -> Vec<usize> {
    let mut s = ring_delays(model);
    // christofides_tour works on the symmetrised matrix (d(i,j) + d(j,i)) / 2.
    s.symmetrize();
    let tour = christofides_tour(&s);
    drop(s);
    orient_by(|i, j| ring_delay(model, i, j), tour)
}

/// Entry `(i, j)` of [`ring_delays`] (built by [`silo_matrix`]: 0 on the
/// diagonal, non-finite delays saturated to `f64::MAX`).
fn ring_delay(model: &DelayModel, i: usize, j: usize) -> f64 {
    let v = if i == j {
        0.0
    } else {
        model.arc_delay(i, j, 1, 1)
    };
    if v.is_finite() {
        v
    } else {
        f64::MAX
    }
}

/// [`orient`] with the delays of a function (the same sums, in the same
/// order, as [`directed_ring_cost`]).
fn orient_by(d: impl Fn(usize, usize) -> f64, mut tour: Vec<usize>) -> Vec<usize> {
    let cost = |t: &[usize]| -> f64 {
        if t.len() < 2 {
            return 0.0;
        }
        let closing = d(t[t.len() - 1], t[0]);
        t.windows(2).map(|p| d(p[0], p[1])).sum::<f64>() + closing
    };
    let forward = cost(&tour);
    let mut rev = tour.clone();
    rev.reverse();
    if cost(&rev) < forward {
        tour = rev;
    }
    tour
}

/// RING overlay.
pub fn ring(model: &DelayModel) -> Overlay {
    let tour = christofides_ring_tour(model);
    Overlay::directed_ring("ring", model.silo_count(), &tour)
}

/// The `ring-opt` tour: the Christofides tour improved by local search on
/// the directed cycle time (silo indices in ring order).
pub fn ring_opt_tour(model: &DelayModel, search: &RingSearch) -> Vec<usize> {
    let start = christofides_ring_tour(model);
    let d = ring_delays(model);
    improve_directed_ring(&d, start, search)
}

/// `ring-opt` overlay: RING improved by local search on the directed cycle time.
pub fn ring_opt(model: &DelayModel, search: &RingSearch) -> Overlay {
    let tour = ring_opt_tour(model, search);
    Overlay::directed_ring("ring-opt", model.silo_count(), &tour)
}
