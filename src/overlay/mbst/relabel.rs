//! Relabelled views of a network: the silos renamed by a permutation, the
//! delays unchanged. Every tie order of delta-Prim is "lowest index first"
//! under some relabelling (the root included), so running the search on a
//! relabelled view tries another tie order.

use super::TreeDelays;
use crate::overlay::algo::Edge;
use crate::units::Ms;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// `inner` with silo `i` renamed: silo `i` of the view is silo `perm[i]` of
/// `inner`. The delays (ms) are `inner`'s.
#[derive(Debug, Clone)]
pub struct Relabelled<'a, D: ?Sized> {
    inner: &'a D,
    perm: Vec<usize>,
}

impl<'a, D: TreeDelays + ?Sized> Relabelled<'a, D> {
    /// The view of `inner` through `perm`, a permutation of
    /// `0..inner.silo_count()` (the caller's responsibility; a test checks
    /// the ones delta-MBST makes).
    pub fn new(inner: &'a D, perm: Vec<usize>) -> Self {
        debug_assert_eq!(perm.len(), inner.silo_count());
        Self { inner, perm }
    }

    /// `edges` of the view as edges of `inner`, `(u, v)` with `u < v`, sorted.
    pub fn edges_back(&self, edges: &[Edge]) -> Vec<Edge> {
        let mut out: Vec<Edge> = edges
            .iter()
            .map(|&(u, v)| {
                let (a, b) = (self.perm[u], self.perm[v]);
                (a.min(b), a.max(b))
            })
            .collect();
        out.sort_unstable();
        out
    }
}

impl<D: TreeDelays + ?Sized> TreeDelays for Relabelled<'_, D> {
    fn silo_count(&self) -> usize {
        self.perm.len()
    }
    fn arc_delay(&self, i: usize, j: usize, out_deg_i: usize, in_deg_j: usize) -> Ms {
        self.inner
            .arc_delay(self.perm[i], self.perm[j], out_deg_i, in_deg_j)
    }
    fn compute_round_ms(&self, i: usize) -> Ms {
        self.inner.compute_round_ms(self.perm[i])
    }
}

/// The `k`-th relabelling delta-MBST tries on `n` silos: `0` the identity,
/// `1` the reversed order, `k >= 2` a shuffle of `0..n` by ChaCha8 seeded
/// with `k` (fixed seeds: the overlay is a pure function of the network).
pub fn start_permutation(n: usize, k: u64) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..n).collect();
    match k {
        0 => {}
        1 => perm.reverse(),
        _ => perm.shuffle(&mut ChaCha8Rng::seed_from_u64(k)),
    }
    perm
}
