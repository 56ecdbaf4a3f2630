//! Howard policy iteration for the maximum cycle mean, max-plus version of
//! J. Cochet-Terrasson, G. Cohen, S. Gaubert, M. McGettrick, J.-P. Quadrat,
//! "Numerical computation of spectral elements in max-plus algebra",
//! IFAC Conference on System Structure and Control, 1998.
//!
//! A *policy* picks for every node `i` one in-arc `pi(i) -> i`. Following
//! the chosen predecessors from any node ends in a circuit of the policy
//! graph, so the policy graph is a set of circuits with in-trees hanging on
//! them. *Value determination* solves, on the policy graph,
//!
//! ```text
//! eta_i = eta_pi(i),   eta_i + v_i = d(pi(i), i) + v_pi(i)       [ms]
//! ```
//!
//! (`eta` = mean of the circuit reached, `v` = bias). *Policy improvement*
//! first switches nodes to a predecessor with a strictly larger `eta`; if
//! there is none anywhere, it switches nodes to a predecessor `j` maximising
//! `d(j, i) + v_j` when that is strictly larger than the current term. When
//! nothing changes, `eta` is the max-plus eigenvalue, i.e. the maximum cycle
//! mean, and each policy circuit with that `eta` is critical.
//!
//! Cost: `O(n + m)` per iteration; the iteration count is small in practice
//! (typically below a few dozen even for 10^4 nodes).
//!
//! Tolerance: an improvement counts only if it exceeds
//! `eps = 4 * max(n, 1000) * f64::EPSILON * max|d|` ms, which is above the
//! rounding noise of the bias. Hence the iteration terminates, and the
//! returned value is within about `n * eps` ms of the exact maximum cycle
//! mean (in practice it is exact up to rounding); an iteration cap of
//! `1000 + n` is a further guard ([`MaxPlusError::NoConvergence`]).

use super::{CycleTime, MaxPlusError, WeightedDigraph};

/// Marker for "not visited yet".
const NONE: usize = usize::MAX;

/// Cycle time (ms per round) and a critical circuit by Howard policy iteration.
///
/// Requires a non-empty, strongly connected graph with at least one arc
/// (errors [`MaxPlusError::Empty`], [`MaxPlusError::NotStronglyConnected`],
/// [`MaxPlusError::NoCircuit`]). Memory `O(n + m)`. The circuit is the
/// circuit of the final policy with the largest mean; `value` is its mean.
pub fn howard(g: &WeightedDigraph) -> Result<CycleTime, MaxPlusError> {
    g.check_cycle_time_input()?;
    let mut state = Policy::initial(g);
    let max_iterations = 1000 + g.node_count();
    for _ in 0..max_iterations {
        let best_root = state.evaluate(g);
        if !state.improve(g) {
            return Ok(state.circuit_from(g, best_root));
        }
    }
    Err(MaxPlusError::NoConvergence {
        iterations: max_iterations,
    })
}

/// The maximum cycle mean (cycle time, ms per round) of a strongly connected
/// overlay with a critical circuit; currently [`howard`].
pub fn max_cycle_mean(g: &WeightedDigraph) -> Result<CycleTime, MaxPlusError> {
    howard(g)
}

/// A policy with its value (`eta`) and bias (`v`), in ms.
struct Policy {
    /// Chosen in-arc position (into the in-CSR) of each node.
    pi: Vec<usize>,
    eta: Vec<f64>,
    v: Vec<f64>,
    /// Strict-improvement tolerance, ms.
    eps: f64,
    /// Scratch: visit marks and the current path.
    mark: Vec<usize>,
    path: Vec<usize>,
}

impl Policy {
    /// Initial policy: the heaviest in-arc of each node; zero bias.
    fn initial(g: &WeightedDigraph) -> Self {
        let n = g.node_count();
        let pi = (0..n)
            .map(|i| {
                g.in_range(i)
                    .max_by(|&a, &b| g.in_w[a].total_cmp(&g.in_w[b]))
                    .expect("strongly connected graph with an arc: every node has an in-arc")
            })
            .collect();
        let scale = g.max_abs_weight();
        Self {
            pi,
            eta: vec![0.0; n],
            v: vec![0.0; n],
            eps: 4.0 * n.max(1000) as f64 * f64::EPSILON * scale,
            mark: vec![NONE; n],
            path: Vec::with_capacity(n),
        }
    }

    /// Predecessor of `i` under the policy.
    fn pred(&self, g: &WeightedDigraph, i: usize) -> usize {
        g.in_src[self.pi[i]]
    }

    /// Weight (ms) of the policy arc into `i`.
    fn weight(&self, g: &WeightedDigraph, i: usize) -> f64 {
        g.in_w[self.pi[i]]
    }

    /// Value determination; returns a node on a policy circuit of maximal `eta`.
    fn evaluate(&mut self, g: &WeightedDigraph) -> usize {
        self.mark.fill(NONE);
        let mut best = (f64::NEG_INFINITY, NONE);
        for s in 0..g.node_count() {
            if self.mark[s] != NONE {
                continue;
            }
            let mut path = std::mem::take(&mut self.path);
            path.clear();
            let mut u = s;
            while self.mark[u] == NONE {
                self.mark[u] = s;
                path.push(u);
                u = self.pred(g, u);
            }
            if self.mark[u] == s {
                let at = path
                    .iter()
                    .rposition(|&x| x == u)
                    .expect("u is on the path");
                let eta = self.solve_circuit(g, &path[at..]);
                if eta > best.0 {
                    best = (eta, u);
                }
                path.truncate(at);
            }
            self.solve_tree(g, &path);
            self.path = path;
        }
        best.1
    }

    /// Sets `eta` and `v` on a new policy circuit `c[0] <- c[1] <- ... <- c[0]`
    /// (`c[t + 1]` is the predecessor of `c[t]`), keeping the old bias of `c[0]`
    /// so that an unchanged circuit keeps an unchanged bias (termination).
    fn solve_circuit(&mut self, g: &WeightedDigraph, c: &[usize]) -> f64 {
        let sum: f64 = c.iter().map(|&i| self.weight(g, i)).sum();
        let eta = sum / c.len() as f64;
        self.eta[c[0]] = eta;
        for &i in c[1..].iter().rev() {
            let j = self.pred(g, i);
            self.eta[i] = eta;
            self.v[i] = self.weight(g, i) + self.v[j] - eta;
        }
        eta
    }

    /// Sets `eta` and `v` along a path whose last node's predecessor is solved.
    fn solve_tree(&mut self, g: &WeightedDigraph, path: &[usize]) {
        for &i in path.iter().rev() {
            let j = self.pred(g, i);
            self.eta[i] = self.eta[j];
            self.v[i] = self.weight(g, i) + self.v[j] - self.eta[j];
        }
    }

    /// Policy improvement; returns whether the policy changed.
    fn improve(&mut self, g: &WeightedDigraph) -> bool {
        let mut changed = false;
        for i in 0..g.node_count() {
            changed |= self.improve_eta(g, i);
        }
        if changed {
            return changed;
        }
        for i in 0..g.node_count() {
            changed |= self.improve_bias(g, i);
        }
        changed
    }

    /// First criterion: move `i` to a predecessor with strictly larger `eta`
    /// (among those, the one maximising `d + v`).
    fn improve_eta(&mut self, g: &WeightedDigraph, i: usize) -> bool {
        let top = g
            .in_neighbours(i)
            .iter()
            .fold(f64::NEG_INFINITY, |m, &j| m.max(self.eta[j]));
        if top <= self.eta[i] + self.eps {
            return false;
        }
        let floor = top - self.eps;
        self.pi[i] = self
            .best_term(g, i, floor)
            .expect("the argmax of eta is eligible")
            .1;
        true
    }

    /// Second criterion: move `i` to a predecessor of the same `eta` with a
    /// strictly larger `d + v` than the current policy arc.
    fn improve_bias(&mut self, g: &WeightedDigraph, i: usize) -> bool {
        let current = self.weight(g, i) + self.v[self.pred(g, i)];
        match self.best_term(g, i, self.eta[i] - self.eps) {
            Some((term, p)) if term > current + self.eps => {
                self.pi[i] = p;
                true
            }
            _ => false,
        }
    }

    /// `max d(j, i) + v_j` over in-arcs of `i` with `eta_j >= floor`, and its position.
    fn best_term(&self, g: &WeightedDigraph, i: usize, floor: f64) -> Option<(f64, usize)> {
        let mut best: Option<(f64, usize)> = None;
        for p in g.in_range(i) {
            let j = g.in_src[p];
            if self.eta[j] < floor {
                continue;
            }
            let term = g.in_w[p] + self.v[j];
            if best.is_none_or(|(b, _)| term > b) {
                best = Some((term, p));
            }
        }
        best
    }

    /// The policy circuit through `root`, in forward arc order, with its mean.
    fn circuit_from(&self, g: &WeightedDigraph, root: usize) -> CycleTime {
        let mut circuit = vec![root];
        let mut sum = self.weight(g, root);
        let mut u = self.pred(g, root);
        while u != root {
            circuit.push(u);
            sum += self.weight(g, u);
            u = self.pred(g, u);
        }
        circuit.reverse();
        CycleTime {
            value: sum / circuit.len() as f64,
            circuit,
        }
    }
}
