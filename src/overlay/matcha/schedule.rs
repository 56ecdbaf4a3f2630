//! Per-round MATCHA topologies (\[Wang19\] Sec. 3, step 3).
//!
//! Round `k` activates every matching `j` independently with probability
//! `p_j` (redrawing when none is active); its topology is the union of the
//! active matchings, its mixing matrix `W(k) = I - alpha L(k)`. Round `k` is
//! a pure function of `(seed, k)`: its random numbers come from ChaCha8
//! seeded with `seed`, on stream `k`, so rounds can be asked for in any order.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::MatchaDesign;
use crate::graph::{Overlay, OverlaySchedule};

/// The MATCHA overlay schedule: a solved design plus an activation seed.
#[derive(Debug, Clone)]
pub struct MatchaSchedule {
    design: Arc<MatchaDesign>,
    seed: u64,
    /// [`partner_table`] of the design, built on first use.
    partners: Arc<OnceLock<Vec<u32>>>,
}

/// No partner in a matching.
const UNMATCHED: u32 = u32::MAX;

/// `table[v * m + j]`: silo `v`'s partner in matching `j` (`m` matchings),
/// [`UNMATCHED`] when `j` leaves `v` out. `n * m` entries (4 MB at 1,000
/// silos on the complete graph).
fn partner_table(design: &MatchaDesign) -> Vec<u32> {
    let m = design.matchings.len();
    let mut table = vec![UNMATCHED; design.silos * m];
    for (j, matching) in design.matchings.iter().enumerate() {
        for &(a, b) in matching {
            // Silo indices fit: a MATCHA design has at most a few thousand
            // silos (n x n eigenproblems), far below u32::MAX.
            table[a * m + j] = b as u32;
            table[b * m + j] = a as u32;
        }
    }
    table
}

impl MatchaSchedule {
    /// The schedule of `design` with activation seed `seed`.
    pub fn new(design: Arc<MatchaDesign>, seed: u64) -> Self {
        MatchaSchedule {
            design,
            seed,
            partners: Arc::default(),
        }
    }

    /// The same design with another seed (shares the design).
    pub fn with_seed(&self, seed: u64) -> Self {
        MatchaSchedule {
            design: Arc::clone(&self.design),
            seed,
            partners: Arc::clone(&self.partners),
        }
    }

    /// The solved design.
    pub fn design(&self) -> &MatchaDesign {
        &self.design
    }

    /// The activation seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Mixing parameter `alpha` (`W = I - alpha L`).
    pub fn alpha(&self) -> f64 {
        self.design.mixing.alpha
    }

    /// Indices of the matchings active in round `k` (never empty).
    pub fn active_matchings(&self, k: u64) -> Vec<usize> {
        let p = &self.design.activation.probabilities;
        if !p.iter().any(|&q| q > 0.0) {
            return Vec::new();
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(k);
        loop {
            let act: Vec<usize> = p
                .iter()
                .enumerate()
                .filter(|&(_, &q)| rng.gen::<f64>() < q)
                .map(|(j, _)| j)
                .collect();
            if !act.is_empty() {
                return act;
            }
        }
    }

    /// Undirected edges `(a, b)`, `a < b`, of round `k`'s topology, sorted.
    pub fn round_edges(&self, k: u64) -> Vec<(usize, usize)> {
        let mut e: Vec<_> = self
            .active_matchings(k)
            .into_iter()
            .flat_map(|j| self.design.matchings[j].iter().copied())
            .collect();
        e.sort_unstable();
        e
    }

    /// Arc count and largest degree of round `k`'s overlay (both arcs of
    /// every edge: in- and out-degrees are equal), counted from the active
    /// matchings without building the overlay; equal to
    /// `round(k).arc_count()` and `round(k).max_degree()` (the active
    /// matchings are disjoint).
    pub fn round_degrees(&self, k: u64) -> (usize, usize) {
        let mut deg = vec![0usize; self.design.silos];
        let mut edges = 0;
        for j in self.active_matchings(k) {
            let m = &self.design.matchings[j];
            edges += m.len();
            for &(a, b) in m {
                deg[a] += 1;
                deg[b] += 1;
            }
        }
        (2 * edges, deg.into_iter().max().unwrap_or(0))
    }

    /// Laplacian `L(k)` of round `k`, row-major `n x n`.
    pub fn laplacian(&self, k: u64) -> Vec<f64> {
        let n = self.design.silos;
        let mut l = vec![0.0; n * n];
        for (a, b) in self.round_edges(k) {
            l[a * n + a] += 1.0;
            l[b * n + b] += 1.0;
            l[a * n + b] -= 1.0;
            l[b * n + a] -= 1.0;
        }
        l
    }

    /// Mixing matrix `W(k) = I - alpha L(k)` of round `k`, row-major `n x n`
    /// (symmetric, rows sum to 1).
    pub fn mixing_matrix(&self, k: u64) -> Vec<f64> {
        let n = self.design.silos;
        let alpha = self.alpha();
        let mut w: Vec<f64> = self.laplacian(k).into_iter().map(|v| -alpha * v).collect();
        for i in 0..n {
            w[i * n + i] += 1.0;
        }
        w
    }
}

impl OverlaySchedule for MatchaSchedule {
    fn silo_count(&self) -> usize {
        self.design.silos
    }
    fn round(&self, k: u64) -> Cow<'_, Overlay> {
        // The active matchings are disjoint: no edge twice, and
        // `Overlay::from_arcs` sorts (counting sort at scale).
        let arcs = self
            .active_matchings(k)
            .into_iter()
            .flat_map(|j| self.design.matchings[j].iter())
            .flat_map(|&(a, b)| [(a, b), (b, a)]);
        Cow::Owned(Overlay::from_arcs(
            &self.design.name,
            self.design.silos,
            arcs,
        ))
    }
    fn for_each_round_arc(&self, k: u64, f: &mut dyn FnMut(usize, usize, usize, usize)) {
        // Silo by silo (the delay model's rows are read in order): silo
        // `v`'s partners in the active matchings. Undirected: in- and
        // out-degree are both the number of active matchings covering the
        // silo (the matchings are disjoint).
        let n = self.design.silos;
        let m = self.design.matchings.len();
        let partners = self.partners.get_or_init(|| partner_table(&self.design));
        let active = self.active_matchings(k);
        let deg: Vec<usize> = (0..n)
            .map(|v| {
                let row = &partners[v * m..(v + 1) * m];
                active.iter().filter(|&&j| row[j] != UNMATCHED).count()
            })
            .collect();
        for v in 0..n {
            let row = &partners[v * m..(v + 1) * m];
            for &j in &active {
                let w = row[j];
                if w != UNMATCHED {
                    let w = w as usize;
                    f(v, w, deg[v], deg[w]);
                }
            }
        }
    }
    fn is_static(&self) -> bool {
        self.design
            .activation
            .probabilities
            .iter()
            .all(|&p| p >= 1.0)
    }
}
