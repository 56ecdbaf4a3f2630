//! Max-plus algebra for the cycle time of communication overlays.
//!
//! An overlay is a weighted digraph on silos `0..n`; an arc `j -> i` of weight
//! `d(j, i)` (milliseconds) means silo `i` waits for the message of silo `j`.
//! The round start times obey the max-plus linear recurrence
//!
//! ```text
//! t_i(k + 1) = max over arcs (j -> i) of ( t_j(k) + d(j, i) )      [ms]
//! ```
//!
//! (Marfoq, Xu, Neglia, Vidal 2020, "Throughput-optimal topology design for
//! cross-silo federated learning", \[Marfoq20\] Section 3). For a strongly connected overlay
//! `t(k) / k` converges to the *cycle time* `tau` (ms per round), which equals
//! the maximum cycle mean: the maximum over elementary circuits of the total
//! weight divided by the number of arcs (Baccelli, Cohen, Olsder, Quadrat 1992,
//! "Synchronization and Linearity", \[BCOQ92\] Thm. 3.23). Self-loops (circuits of one
//! arc) and parallel arcs (only the heaviest matters) are allowed.
//!
//! Algorithms:
//! - [`karp`]: Karp 1978, `O(n m)` time and `O(n^2)` memory;
//! - [`howard`] / [`max_cycle_mean`]: Howard policy iteration, max-plus
//!   version of Cochet-Terrasson, Cohen, Gaubert, McGettrick, Quadrat 1998,
//!   `O(m)` per iteration and a small number of iterations in practice;
//! - [`Recurrence`] / [`recurrence_slope`]: the recurrence itself, whose slope
//!   converges to `tau`.

mod howard;
mod karp;
mod recurrence;
#[cfg(test)]
mod tests;

pub use howard::{howard, max_cycle_mean};
pub use karp::karp;
pub use recurrence::{recurrence_slope, Recurrence};

use serde::Serialize;

/// An arc `from -> to` of an overlay with its delay `weight` in ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Arc {
    /// Sending silo.
    pub from: usize,
    /// Receiving silo.
    pub to: usize,
    /// Delay of the arc, in ms (any finite value; overlay delays are >= 0).
    pub weight: f64,
}

/// The cycle time of a strongly connected overlay and a critical circuit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CycleTime {
    /// Cycle time `tau`, in ms per round (the maximum cycle mean).
    pub value: f64,
    /// A critical circuit `v0 -> v1 -> ... -> v(k-1) -> v0` (no repeated node);
    /// its mean weight equals `value` up to floating-point rounding (well
    /// within 1e-9 relative). With parallel arcs the heaviest one is meant.
    pub circuit: Vec<usize>,
}

/// Errors of graph construction and cycle-time computation.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum MaxPlusError {
    /// The graph has no node.
    #[error("the overlay has no silo: build the graph with at least one node")]
    Empty,
    /// Some silo cannot reach another one, so the cycle time is not a single number.
    #[error(
        "the overlay is not strongly connected ({components} strongly connected components): \
         there is no path from silo {} to silo {}; add arcs so that every silo can reach every \
         other silo",
        .unreachable.0, .unreachable.1
    )]
    NotStronglyConnected {
        /// Number of strongly connected components.
        components: usize,
        /// A pair `(a, b)` of silos with no path from `a` to `b`.
        unreachable: (usize, usize),
    },
    /// The graph is strongly connected but has no circuit (one node, no self-loop).
    #[error(
        "the overlay has no circuit: a single silo needs a self-loop (e.g. its local \
         computation time in ms) to have a cycle time"
    )]
    NoCircuit,
    /// An arc endpoint is not a node of the graph.
    #[error(
        "arc #{index} ({from} -> {to}) has an endpoint out of range: the graph has {n} nodes \
         numbered 0..{n}; fix the arc or increase the node count"
    )]
    ArcOutOfRange {
        /// Position of the arc in the input vector.
        index: usize,
        /// Its source.
        from: usize,
        /// Its target.
        to: usize,
        /// Node count of the graph.
        n: usize,
    },
    /// An arc weight is NaN or infinite.
    #[error(
        "arc #{index} ({from} -> {to}) has a non-finite weight {weight}: delays must be finite \
         numbers of ms"
    )]
    NonFiniteWeight {
        /// Position of the arc in the input vector.
        index: usize,
        /// Its source.
        from: usize,
        /// Its target.
        to: usize,
        /// The offending weight.
        weight: f64,
    },
    /// The initial state of a [`Recurrence`] has the wrong length.
    #[error("the initial state has {got} entries but the overlay has {expected} silos")]
    StateLength {
        /// Node count of the graph.
        expected: usize,
        /// Length of the given state.
        got: usize,
    },
    /// The initial state of a [`Recurrence`] contains NaN or `+inf`.
    #[error(
        "initial time of silo {node} is {value}: use finite ms, or -inf for a silo that has \
         not started"
    )]
    InvalidState {
        /// Silo index.
        node: usize,
        /// The offending value.
        value: f64,
    },
    /// Howard's iteration cap was reached (should not happen; please report the graph).
    #[error(
        "Howard policy iteration did not converge in {iterations} iterations; use karp() on \
         this overlay and report it"
    )]
    NoConvergence {
        /// Iterations performed.
        iterations: usize,
    },
}

/// A weighted digraph with compressed (CSR) in- and out-adjacency, built once.
#[derive(Debug, Clone)]
pub struct WeightedDigraph {
    n: usize,
    arcs: Vec<Arc>,
    /// In-arcs of node `i` are positions `in_start[i]..in_start[i + 1]`.
    in_start: Vec<usize>,
    /// Source of each in-arc (CSR by target).
    in_src: Vec<usize>,
    /// Weight of each in-arc, in ms (CSR by target).
    in_w: Vec<f64>,
    /// Out-arcs of node `i` are positions `out_start[i]..out_start[i + 1]`.
    out_start: Vec<usize>,
    /// Target of each out-arc (CSR by source).
    out_dst: Vec<usize>,
}

impl WeightedDigraph {
    /// Builds the graph on nodes `0..n`. Fails on an endpoint `>= n`
    /// ([`MaxPlusError::ArcOutOfRange`]) or a NaN/infinite weight
    /// ([`MaxPlusError::NonFiniteWeight`]); the error names the arc.
    /// `n = 0` is accepted here; the cycle-time functions then report
    /// [`MaxPlusError::Empty`].
    pub fn new(n: usize, arcs: Vec<Arc>) -> Result<Self, MaxPlusError> {
        for (index, a) in arcs.iter().enumerate() {
            if a.from >= n || a.to >= n {
                return Err(MaxPlusError::ArcOutOfRange {
                    index,
                    from: a.from,
                    to: a.to,
                    n,
                });
            }
            if !a.weight.is_finite() {
                return Err(MaxPlusError::NonFiniteWeight {
                    index,
                    from: a.from,
                    to: a.to,
                    weight: a.weight,
                });
            }
        }
        let in_start = csr_offsets(n, arcs.iter().map(|a| a.to));
        let out_start = csr_offsets(n, arcs.iter().map(|a| a.from));
        let mut in_fill = in_start.clone();
        let mut out_fill = out_start.clone();
        let mut in_src = vec![0; arcs.len()];
        let mut in_w = vec![0.0; arcs.len()];
        let mut out_dst = vec![0; arcs.len()];
        for a in &arcs {
            let p = &mut in_fill[a.to];
            in_src[*p] = a.from;
            in_w[*p] = a.weight;
            *p += 1;
            let q = &mut out_fill[a.from];
            out_dst[*q] = a.to;
            *q += 1;
        }
        Ok(Self {
            n,
            arcs,
            in_start,
            in_src,
            in_w,
            out_start,
            out_dst,
        })
    }

    /// Number of nodes (silos).
    pub fn node_count(&self) -> usize {
        self.n
    }

    /// The arcs, in input order.
    pub fn arcs(&self) -> &[Arc] {
        &self.arcs
    }

    /// Strongly connected components (iterative Tarjan 1972, `O(n + m)`).
    /// Each component lists its nodes in increasing order; components are
    /// sorted by their smallest node.
    pub fn strongly_connected_components(&self) -> Vec<Vec<usize>> {
        let mut comps = tarjan(self);
        for c in &mut comps {
            c.sort_unstable();
        }
        comps.sort_unstable_by_key(|c| c[0]);
        comps
    }

    /// Range of in-arc positions of node `i` (into `in_src` / `in_w`).
    fn in_range(&self, i: usize) -> std::ops::Range<usize> {
        self.in_start[i]..self.in_start[i + 1]
    }

    /// Out-neighbours of node `i`.
    fn out_neighbours(&self, i: usize) -> &[usize] {
        &self.out_dst[self.out_start[i]..self.out_start[i + 1]]
    }

    /// In-neighbours of node `i`.
    fn in_neighbours(&self, i: usize) -> &[usize] {
        &self.in_src[self.in_range(i)]
    }

    /// Largest absolute arc weight (ms), 0 without arcs.
    fn max_abs_weight(&self) -> f64 {
        self.in_w.iter().fold(0.0, |m, w| m.max(w.abs()))
    }

    /// Checks the preconditions of the cycle-time algorithms: non-empty,
    /// strongly connected, and at least one circuit.
    fn check_cycle_time_input(&self) -> Result<(), MaxPlusError> {
        if self.n == 0 {
            return Err(MaxPlusError::Empty);
        }
        if let Some(unreachable) = self.unreachable_pair() {
            let components = tarjan(self).len();
            return Err(MaxPlusError::NotStronglyConnected {
                components,
                unreachable,
            });
        }
        if self.arcs.is_empty() {
            return Err(MaxPlusError::NoCircuit);
        }
        Ok(())
    }

    /// A pair `(a, b)` with no path `a -> b`, or `None` if strongly connected
    /// (two breadth-first searches from node 0). Requires `n >= 1`.
    fn unreachable_pair(&self) -> Option<(usize, usize)> {
        if let Some(b) = first_unreached(self.n, |v| self.out_neighbours(v)) {
            return Some((0, b));
        }
        first_unreached(self.n, |v| self.in_neighbours(v)).map(|a| (a, 0))
    }
}

/// CSR offsets: `start[i]..start[i + 1]` has one slot per key equal to `i`.
fn csr_offsets(n: usize, keys: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut start = vec![0usize; n + 1];
    for k in keys {
        start[k + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    start
}

/// First node not reached from node 0 by a search along `next`, if any.
fn first_unreached<'a>(n: usize, next: impl Fn(usize) -> &'a [usize]) -> Option<usize> {
    let mut seen = vec![false; n];
    let mut stack = vec![0];
    seen[0] = true;
    while let Some(v) = stack.pop() {
        for &w in next(v) {
            if !seen[w] {
                seen[w] = true;
                stack.push(w);
            }
        }
    }
    seen.iter().position(|s| !s)
}

/// Iterative Tarjan SCC (components in reverse topological order).
fn tarjan(g: &WeightedDigraph) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = g.n;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut comps = Vec::new();
    // Call stack of (node, next out-arc position).
    let mut calls: Vec<(usize, usize)> = Vec::new();
    let mut counter = 0;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        calls.push((root, g.out_start[root]));
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut pos)) = calls.last_mut() {
            if *pos < g.out_start[v + 1] {
                let w = g.out_dst[*pos];
                *pos += 1;
                if index[w] == UNSEEN {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, g.out_start[w]));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                comps.push(pop_component(&mut stack, &mut on_stack, v));
            }
        }
    }
    comps
}

/// Pops the Tarjan stack down to and including `v`.
fn pop_component(stack: &mut Vec<usize>, on_stack: &mut [bool], v: usize) -> Vec<usize> {
    let mut comp = Vec::new();
    while let Some(w) = stack.pop() {
        on_stack[w] = false;
        comp.push(w);
        if w == v {
            break;
        }
    }
    comp
}
