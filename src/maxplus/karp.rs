//! Karp's maximum cycle mean algorithm (R. M. Karp, "A characterization of
//! the minimum cycle mean in a digraph", Discrete Math. 23, 1978), max-plus
//! form: with `D_k(v)` the maximum weight (ms) of a walk of exactly `k` arcs
//! from a fixed source to `v`,
//!
//! ```text
//! tau = max over v of  min over 0 <= k < n of  (D_n(v) - D_k(v)) / (n - k)
//! ```
//!
//! Time `O(n m)`; memory `O(n^2)` (the table `D` and its argmax arcs are kept
//! to recover a critical circuit: about 16 n^2 bytes, 16 MB for n = 1000,
//! 1.6 GB for n = 10^4 -- use [`super::howard`] for large overlays).

use super::{CycleTime, MaxPlusError, WeightedDigraph};

/// Marker for "no arc" in the argmax table.
const NONE: usize = usize::MAX;

/// Cycle time (ms per round) and a critical circuit by Karp's algorithm.
///
/// Requires a non-empty, strongly connected graph with at least one arc
/// (errors [`MaxPlusError::Empty`], [`MaxPlusError::NotStronglyConnected`],
/// [`MaxPlusError::NoCircuit`]). `O(n m)` time, `O(n^2)` memory.
///
/// The circuit is the last circuit closed by the maximum-weight `n`-arc walk
/// ending at the maximising node; every circuit of that walk is critical
/// (\[Karp78\], proof of Thm. 1). The returned `value` is that circuit's mean,
/// which equals Karp's formula up to rounding.
pub fn karp(g: &WeightedDigraph) -> Result<CycleTime, MaxPlusError> {
    g.check_cycle_time_input()?;
    let table = WalkTable::build(g);
    let (_, v_star) = table.best_node();
    Ok(table.critical_circuit(g, v_star))
}

/// Maximum walk weights `d[k * n + v] = D_k(v)` and the in-arc position
/// achieving each one, for `k = 0..=n`, from source node 0.
struct WalkTable {
    n: usize,
    d: Vec<f64>,
    parent: Vec<usize>,
}

impl WalkTable {
    /// Fills the table by `n` max-plus products with the in-CSR (`O(n m)`).
    fn build(g: &WeightedDigraph) -> Self {
        let n = g.node_count();
        let mut d = vec![f64::NEG_INFINITY; (n + 1) * n];
        let mut parent = vec![NONE; (n + 1) * n];
        d[0] = 0.0;
        for k in 0..n {
            let (prev, next) = d.split_at_mut((k + 1) * n);
            let prev = &prev[k * n..];
            let next = &mut next[..n];
            let par = &mut parent[(k + 1) * n..(k + 2) * n];
            for v in 0..n {
                let (best, arg) = best_in_arc(g, prev, v);
                next[v] = best;
                par[v] = arg;
            }
        }
        Self { n, d, parent }
    }

    /// `D_k(v)`.
    fn at(&self, k: usize, v: usize) -> f64 {
        self.d[k * self.n + v]
    }

    /// Karp's max-min value and the node achieving it.
    fn best_node(&self) -> (f64, usize) {
        let n = self.n;
        let mut best = (f64::NEG_INFINITY, 0);
        for v in 0..n {
            let dn = self.at(n, v);
            if dn == f64::NEG_INFINITY {
                continue;
            }
            let worst = (0..n)
                .filter(|&k| self.at(k, v) > f64::NEG_INFINITY)
                .map(|k| (dn - self.at(k, v)) / (n - k) as f64)
                .fold(f64::INFINITY, f64::min);
            if worst > best.0 {
                best = (worst, v);
            }
        }
        best
    }

    /// The last circuit closed by the `n`-arc walk ending at `v_star`
    /// (found walking the argmax arcs backwards), in forward arc order.
    fn critical_circuit(&self, g: &WeightedDigraph, v_star: usize) -> CycleTime {
        let n = self.n;
        let mut walk = vec![0usize; n + 1];
        let mut seen_at = vec![NONE; n];
        let mut x = v_star;
        for k in (0..=n).rev() {
            walk[k] = x;
            if seen_at[x] != NONE {
                return self.circuit_between(g, &walk, k, seen_at[x]);
            }
            seen_at[x] = k;
            if k > 0 {
                x = g.in_src[self.parent[k * n + x]];
            }
        }
        unreachable!("a walk of n arcs on n nodes repeats a node")
    }

    /// Circuit `walk[lo] -> ... -> walk[hi - 1] -> walk[hi] = walk[lo]`.
    fn circuit_between(
        &self,
        g: &WeightedDigraph,
        walk: &[usize],
        lo: usize,
        hi: usize,
    ) -> CycleTime {
        let n = self.n;
        let sum: f64 = (lo + 1..=hi)
            .map(|k| g.in_w[self.parent[k * n + walk[k]]])
            .sum();
        CycleTime {
            value: sum / (hi - lo) as f64,
            circuit: walk[lo..hi].to_vec(),
        }
    }
}

/// `max over in-arcs (u -> v) of prev[u] + w` and the in-arc position.
fn best_in_arc(g: &WeightedDigraph, prev: &[f64], v: usize) -> (f64, usize) {
    let mut best = f64::NEG_INFINITY;
    let mut arg = NONE;
    for p in g.in_range(v) {
        let val = prev[g.in_src[p]] + g.in_w[p];
        if val > best {
            best = val;
            arg = p;
        }
    }
    (best, arg)
}
