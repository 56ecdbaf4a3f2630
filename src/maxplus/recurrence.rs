//! The max-plus recurrence `t_i(k + 1) = max over arcs (j -> i) of
//! (t_j(k) + d(j, i))` (ms), \[Marfoq20\] eq. (4).
//!
//! For a strongly connected graph with cycle time `tau` and finite `t(0)`,
//! the slope `max_i (t_i(K) - t_i(0)) / K` satisfies
//!
//! ```text
//! tau <= slope <= tau + ( span(t(0)) + (n - 1) (w_max - w_min) ) / K
//! ```
//!
//! for every `K >= 1` (span = max - min; `w_max`, `w_min` = extreme arc
//! weights). Proof: let `v` be a max-plus eigenvector, `A v = tau + v`
//! (\[BCOQ92\] Thm. 3.23). With `c- = min(t(0) - v)` and
//! `c+ = max(t(0) - v)`, monotonicity gives `c- + v + K tau <= t(K) <=
//! c+ + v + K tau`, hence `0 <= max_i (t_i(K) - t_i(0)) - K tau <= c+ - c- =
//! span(t(0) - v) <= span(t(0)) + span(v)`. Along a path `P` from `j` to `i`
//! (at most `n - 1` arcs), `v_i - v_j >= w(P) - |P| tau`, so
//! `span(v) <= (n - 1)(tau - w_min) <= (n - 1)(w_max - w_min)`.

use super::{MaxPlusError, WeightedDigraph};

/// Iterates the max-plus recurrence: `t(0) = x0`, then `t(1)`, `t(2)`, ...
/// (ms). A silo without in-arc gets `-inf` (the max-plus zero).
#[derive(Debug, Clone)]
pub struct Recurrence<'g> {
    g: &'g WeightedDigraph,
    current: Vec<f64>,
    scratch: Vec<f64>,
    k: usize,
}

impl<'g> Recurrence<'g> {
    /// Starts the recurrence at `t(0) = x0` (ms). `x0` must have one entry
    /// per silo ([`MaxPlusError::StateLength`]), each finite or `-inf`
    /// ([`MaxPlusError::InvalidState`]).
    pub fn new(g: &'g WeightedDigraph, x0: Vec<f64>) -> Result<Self, MaxPlusError> {
        if x0.len() != g.node_count() {
            return Err(MaxPlusError::StateLength {
                expected: g.node_count(),
                got: x0.len(),
            });
        }
        if let Some(node) = x0.iter().position(|x| x.is_nan() || *x == f64::INFINITY) {
            return Err(MaxPlusError::InvalidState {
                node,
                value: x0[node],
            });
        }
        Ok(Self {
            g,
            scratch: vec![0.0; x0.len()],
            current: x0,
            k: 0,
        })
    }

    /// Advances one round (`O(n + m)`) and returns `t(k)` for the new `k`.
    /// (Not `Iterator::next`: the returned slice borrows the recurrence.)
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> &[f64] {
        let g = self.g;
        for (i, out) in self.scratch.iter_mut().enumerate() {
            *out = g
                .in_range(i)
                .map(|p| self.current[g.in_src[p]] + g.in_w[p])
                .fold(f64::NEG_INFINITY, f64::max);
        }
        std::mem::swap(&mut self.current, &mut self.scratch);
        self.k += 1;
        &self.current
    }

    /// The current state `t(k)` (ms).
    pub fn state(&self) -> &[f64] {
        &self.current
    }

    /// Number of rounds performed so far.
    pub fn k(&self) -> usize {
        self.k
    }
}

/// `max_i (t_i(K) - t_i(0)) / K` in ms per round, over silos with finite
/// `t_i(0)` and `t_i(K)`; converges to the cycle time with the bound in the
/// module documentation (error `<= (span(x0) + (n - 1)(w_max - w_min)) / K`,
/// never below `tau`, for strongly connected graphs). `O(K (n + m))`.
///
/// # Panics
/// If `k == 0`, or `x0` is rejected by [`Recurrence::new`] (wrong length, NaN
/// or `+inf`).
pub fn recurrence_slope(g: &WeightedDigraph, x0: &[f64], k: usize) -> f64 {
    assert!(k > 0, "recurrence_slope needs at least one round (k >= 1)");
    let mut rec =
        Recurrence::new(g, x0.to_vec()).unwrap_or_else(|e| panic!("recurrence_slope: {e}"));
    for _ in 0..k {
        rec.next();
    }
    rec.state()
        .iter()
        .zip(x0)
        .filter(|(t, s)| t.is_finite() && s.is_finite())
        .map(|(t, s)| (t - s) / k as f64)
        .fold(f64::NEG_INFINITY, f64::max)
}
