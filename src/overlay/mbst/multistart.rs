//! Multi-start: the candidate search and the local improvement run under
//! several fixed relabellings of the silos (tie orders), the fastest tree
//! wins.
//!
//! Start `k` relabels the silos by [`start_permutation`]`(n, k)` (start 0 is
//! the identity, start 1 the reversed order, later ones fixed-seed shuffles)
//! and, on the relabelled view, improves (`improve_tree`) the winner of
//! [`best_candidate`]; up to [`IMPROVE_ALL_MAX_SILOS`] silos it also improves
//! every other candidate of [`sweep_candidates`] (a candidate that loses
//! before the improvement can win after it). The start keeps the fastest
//! improved tree, ties to the winner's, and maps it back. Over the starts the
//! tree with the smallest exact cycle time wins, ties to the earlier start,
//! so the result is never slower than the improved winner of start 0 (the
//! search without restarts) and is a pure function of the network.
//!
//! The number of starts falls with `N` so that the cost stays bounded
//! ([`start_count`]): 16 up to 256 silos, 4 up to 2048, 1 (start 0 only)
//! above. Start 0 runs first; when it reaches the lower bound of
//! [`tree_lower_bound`] (no spanning tree is faster) the other starts are
//! skipped; otherwise they run in parallel (rayon) and are ranked by index,
//! so the result does not depend on the thread count. At 2000 silos (Kdl,
//! 1 Gbit/s access) the 4 starts take about 4x the CPU time of one.
//!
//! Within a start, work that cannot change the result is skipped: a
//! candidate equal (as a tree) to one already improved, and a plateau phase
//! from a tree an earlier candidate's descent already ended in (its result is
//! reused). On the tie-heavy Zoo files this brought delta-MBST from 25-35 s
//! to under 1 s CPU (Pern, Ulaknet; `fedtopo overlay delta-mbst FILE`, with
//! the faster improvement of [`super::improve`]) with the same trees.

use super::improve::{improve_tree_with, Plateaus};
use super::relabel::{start_permutation, Relabelled};
use super::search::{sweep_candidates, tree_lower_bound};
use super::snapshot::PairBounds;
use super::{best_candidate, first_best, mbst_weights, tree_cycle_time, TreeDelays};
use crate::overlay::algo::Edge;
use crate::units::Ms;
use rayon::prelude::*;
use std::collections::BTreeSet;

/// Networks up to this many silos get [`MANY_STARTS`] starts.
pub const MANY_STARTS_MAX_SILOS: usize = 256;
/// Starts for at most [`MANY_STARTS_MAX_SILOS`] silos.
pub const MANY_STARTS: usize = 16;
/// Networks up to this many silos (and above [`MANY_STARTS_MAX_SILOS`]) get
/// [`FEW_STARTS`] starts; larger ones one start (no restart).
pub const FEW_STARTS_MAX_SILOS: usize = 2048;
/// Starts for more than [`MANY_STARTS_MAX_SILOS`] and at most
/// [`FEW_STARTS_MAX_SILOS`] silos.
pub const FEW_STARTS: usize = 4;

/// Number of starts delta-MBST makes on `n` silos.
pub fn start_count(n: usize) -> usize {
    if n <= MANY_STARTS_MAX_SILOS {
        MANY_STARTS
    } else if n <= FEW_STARTS_MAX_SILOS {
        FEW_STARTS
    } else {
        1
    }
}

/// Networks up to this many silos improve every candidate of a start, not
/// only the winner.
pub const IMPROVE_ALL_MAX_SILOS: usize = 128;

/// `edges` as `(min, max)` pairs, sorted: one key per tree.
fn sorted(edges: &[Edge]) -> Vec<Edge> {
    let mut out: Vec<Edge> = edges.iter().map(|&(u, v)| (u.min(v), u.max(v))).collect();
    out.sort_unstable();
    out
}

/// The tree of start `k` (see the module docs), as edges of `model`, and its
/// cycle time, ms. Stops early at `bound` (ms; no tree is faster).
fn start_tree_bounded<D: TreeDelays + ?Sized>(model: &D, k: u64, bound: Ms) -> (Vec<Edge>, Ms) {
    let n = model.silo_count();
    let view = Relabelled::new(model, start_permutation(n, k));
    // Up to IMPROVE_ALL_MAX_SILOS the sweep is built anyway; its first best
    // is best_candidate's winner (the same order and ties; best_candidate
    // only stops early at the lower bound, which no later candidate beats).
    let sweep = (n <= IMPROVE_ALL_MAX_SILOS).then(|| sweep_candidates(&view));
    let winner = match &sweep {
        Some(list) => first_best(list.iter().cloned()).unwrap_or_else(|| best_candidate(&view)),
        None => best_candidate(&view),
    };
    let bounds = PairBounds::new(&view);
    let mut plateaus = Plateaus::new();
    let mut best = improve_tree_with(&view, &bounds, &mut plateaus, winner.edges.clone());
    let mut best_ct = tree_cycle_time(&view, &best);
    if let Some(sweep) = sweep {
        // improve_tree is a function of the tree (not of its edges' order):
        // a candidate equal to one already improved gives the same tree
        // again, which cannot be strictly faster.
        let mut improved = BTreeSet::from([sorted(&winner.edges)]);
        for c in sweep {
            if best_ct <= bound {
                break;
            }
            if !improved.insert(sorted(&c.edges)) {
                continue;
            }
            let edges = improve_tree_with(&view, &bounds, &mut plateaus, c.edges);
            let ct = tree_cycle_time(&view, &edges);
            if ct < best_ct {
                (best, best_ct) = (edges, ct);
            }
        }
    }
    (view.edges_back(&best), best_ct)
}

/// The tree of start `k` (see the module docs), as edges of `model`, and its
/// cycle time, ms.
pub fn start_tree<D: TreeDelays + ?Sized>(model: &D, k: u64) -> (Vec<Edge>, Ms) {
    start_tree_bounded(model, k, f64::NEG_INFINITY)
}

/// The delta-MBST tree of `model` with `starts` starts: the fastest of the
/// start trees `0..starts`, ties to the earlier start; edges `(u, v)`,
/// `u < v`, sorted. Start 0 runs first; when it reaches the lower bound of
/// [`tree_lower_bound`] no other start can be faster and none is run. The
/// other starts run in parallel (rayon); the winner does not depend on the
/// thread count.
pub fn best_of_starts<D: TreeDelays + Sync + ?Sized>(model: &D, starts: usize) -> Vec<Edge> {
    let bound = tree_lower_bound(model, &mbst_weights(model));
    let first = start_tree_bounded(model, 0, bound);
    if first.1 <= bound {
        return first.0;
    }
    let rest: Vec<(Vec<Edge>, Ms)> = (1..starts.max(1) as u64)
        .into_par_iter()
        .map(|k| start_tree_bounded(model, k, bound))
        .collect();
    std::iter::once(first)
        .chain(rest)
        .reduce(|a, b| if b.1 < a.1 { b } else { a })
        .map(|(e, _)| e)
        .unwrap_or_default()
}
