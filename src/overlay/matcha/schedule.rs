//! Per-round MATCHA topologies (\[Wang19\] Sec. 3, step 3).
//!
//! Round `k` activates every matching `j` independently with probability
//! `p_j` (redrawing when none is active); its topology is the union of the
//! active matchings, its mixing matrix `W(k) = I - alpha L(k)`. Round `k` is
//! a pure function of `(seed, k)`: its random numbers come from ChaCha8
//! seeded with `seed`, on stream `k`, so rounds can be asked for in any order.

use std::borrow::Cow;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::MatchaDesign;
use crate::overlay::{Overlay, OverlaySchedule};

/// The MATCHA overlay schedule: a solved design plus an activation seed.
#[derive(Debug, Clone)]
pub struct MatchaSchedule {
    design: Arc<MatchaDesign>,
    seed: u64,
}

impl MatchaSchedule {
    /// The schedule of `design` with activation seed `seed`.
    pub fn new(design: Arc<MatchaDesign>, seed: u64) -> Self {
        MatchaSchedule { design, seed }
    }

    /// The same design with another seed (shares the design).
    pub fn with_seed(&self, seed: u64) -> Self {
        MatchaSchedule {
            design: Arc::clone(&self.design),
            seed,
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
        Cow::Owned(Overlay::from_edges(
            &self.design.name,
            self.design.silos,
            &self.round_edges(k),
        ))
    }
    fn is_static(&self) -> bool {
        self.design
            .activation
            .probabilities
            .iter()
            .all(|&p| p >= 1.0)
    }
}
