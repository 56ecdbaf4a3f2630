//! Random-graph overlays (\[BadieModiri24\] Sec. 4.2 and Fig. 5):
//! Erdos-Renyi `G(n, p)`, Barabasi-Albert, random `k`-regular, Chung-Lu
//! with Pareto weights, plus the deterministic 2-D torus.
//!
//! Every family is drawn from an explicit seed and redrawn until the graph
//! is connected (at most [`MAX_ATTEMPTS`] draws, then
//! [`RandomGraphError::NotConnected`]). Draw `t` of seed `s` uses the `t`-th
//! `u64` of a `ChaCha8Rng` seeded with `s`, so the same seed always gives
//! the same overlay.
//!
//! Generators: `G(n, p)`, Barabasi-Albert and random regular graphs come
//! from `rustworkx-core` (Batagelj-Brandes skipping for `G(n, p)`, so large
//! sparse graphs cost `O(n + m)`; the Steger-Wormald pairing for regular
//! graphs; preferential attachment from a star of `m + 1` nodes). Those take a
//! `u64` seed for their own PCG stream, which is deterministic for the
//! version pinned in `Cargo.lock`. Chung-Lu and the torus are not in
//! rustworkx-core or petgraph and are written here (`chung_lu.rs`,
//! `torus.rs`).

mod chung_lu;
mod spec;
mod torus;

pub use chung_lu::{chung_lu_edges, pareto_weights};
pub use spec::{Param, RandomGraph, RandomSpec, RandomSpecError};
pub use torus::{torus_edges, torus_shape};

use rand::RngCore;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rustworkx_core::generators::{barabasi_albert_graph, gnp_random_graph, random_regular_graph};
use rustworkx_core::petgraph::graph::UnGraph;
use rustworkx_core::petgraph::visit::EdgeRef;
use thiserror::Error;

use crate::graph::Overlay;

/// Draws tried before giving up on a connected graph.
pub const MAX_ATTEMPTS: u32 = 1000;

/// Why a random overlay could not be built.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RandomGraphError {
    /// The parameters do not fit `n` silos.
    #[error("{family} on {n} silos: {reason}")]
    BadParameters {
        /// Family name.
        family: &'static str,
        /// Silos.
        n: usize,
        /// What is wrong.
        reason: String,
    },
    /// No connected draw within the attempt budget.
    #[error(
        "{spec} on {n} silos: no connected graph in {attempts} draws (seed {seed}); \
         raise the density (p or the mean degree) or use another family"
    )]
    NotConnected {
        /// The spec as written.
        spec: String,
        /// Silos.
        n: usize,
        /// Draws tried.
        attempts: u32,
        /// Seed.
        seed: u64,
    },
}

/// Undirected edges `(a, b)`, `a < b`, of one draw of `graph` on `n` nodes
/// with seed `seed` (possibly disconnected).
pub fn draw_edges(
    graph: &RandomGraph,
    n: usize,
    seed: u64,
) -> Result<Vec<(usize, usize)>, RandomGraphError> {
    graph.check(n)?;
    let bad = |reason: String| RandomGraphError::BadParameters {
        family: graph.family(),
        n,
        reason,
    };
    let from_rx = |g: UnGraph<(), ()>| -> Vec<(usize, usize)> {
        let mut e: Vec<(usize, usize)> = g
            .edge_references()
            .map(|e| {
                let (a, b) = (e.source().index(), e.target().index());
                (a.min(b), a.max(b))
            })
            .filter(|(a, b)| a != b)
            .collect();
        e.sort_unstable();
        e.dedup();
        e
    };
    let rx_err = |_| bad("rejected by the rustworkx-core generator".into());
    Ok(match *graph {
        RandomGraph::ErdosRenyi { p, mean_degree } => {
            let p = match (p, mean_degree) {
                (Some(p), _) => p.0,
                (None, Some(k)) => (k.0 / (n as f64 - 1.0)).min(1.0),
                (None, None) => unreachable!("checked by RandomGraph::check"),
            };
            from_rx(gnp_random_graph(n, p, Some(seed), || (), || ()).map_err(rx_err)?)
        }
        RandomGraph::BarabasiAlbert { m } => {
            // Start from a star on m + 1 nodes (as networkx does): the
            // generator's own default, a star on m nodes, has no edge to
            // attach to when m = 1.
            let start = UnGraph::<(), ()>::from_edges((1..=m as u32).map(|l| (0u32, l)));
            from_rx(
                barabasi_albert_graph(n, m, Some(seed), Some(start), || (), || ())
                    .map_err(rx_err)?,
            )
        }
        RandomGraph::Regular { k } => {
            from_rx(random_regular_graph(n, k, Some(seed), || (), || ()).map_err(rx_err)?)
        }
        RandomGraph::ChungLu { gamma, mean_degree } => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let w = pareto_weights(n, gamma.0, mean_degree.0, &mut rng);
            chung_lu_edges(&w, &mut rng)
        }
        RandomGraph::Torus { rows } => {
            let (r, c) = torus_shape(n, rows).map_err(bad)?;
            torus_edges(r, c)
        }
    })
}

/// Connected components of the undirected graph `edges` on `n` nodes, as a
/// component label per node (labels `0..count`, in order of first node).
pub fn components(n: usize, edges: &[(usize, usize)]) -> (usize, Vec<usize>) {
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for &(a, b) in edges {
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut label = vec![usize::MAX; n];
    let mut count = 0;
    let mut out = vec![0; n];
    for (i, o) in out.iter_mut().enumerate() {
        let r = find(&mut parent, i);
        if label[r] == usize::MAX {
            label[r] = count;
            count += 1;
        }
        *o = label[r];
    }
    (count, out)
}

/// True when the undirected graph `edges` on `n >= 1` nodes is connected.
pub fn is_connected(n: usize, edges: &[(usize, usize)]) -> bool {
    components(n, edges).0 <= 1
}

/// The largest connected component of `edges` on `n` nodes, relabelled
/// `0..n'` in node order (ties: the component of the smallest node).
pub fn largest_component(n: usize, edges: &[(usize, usize)]) -> (usize, Vec<(usize, usize)>) {
    let (count, label) = components(n, edges);
    let mut size = vec![0usize; count];
    for &l in &label {
        size[l] += 1;
    }
    let Some(best) = (0..count).max_by_key(|&c| (size[c], std::cmp::Reverse(c))) else {
        return (0, Vec::new());
    };
    let mut new_id = vec![usize::MAX; n];
    let mut m = 0;
    for i in 0..n {
        if label[i] == best {
            new_id[i] = m;
            m += 1;
        }
    }
    let e = edges
        .iter()
        .filter(|&&(a, _)| label[a] == best)
        .map(|&(a, b)| (new_id[a], new_id[b]))
        .collect();
    (m, e)
}

/// Edges of the first connected draw of `graph` on `n` nodes from `seed`
/// (at most `max_attempts` draws), with the number of draws used.
pub fn draw_connected(
    graph: &RandomGraph,
    n: usize,
    seed: u64,
    max_attempts: u32,
) -> Result<(Vec<(usize, usize)>, u32), RandomGraphError> {
    let mut seeds = ChaCha8Rng::seed_from_u64(seed);
    for attempt in 1..=max_attempts.max(1) {
        let e = draw_edges(graph, n, seeds.next_u64())?;
        if is_connected(n, &e) {
            return Ok((e, attempt));
        }
        if !graph.is_random() {
            break;
        }
    }
    Err(RandomGraphError::NotConnected {
        spec: graph.to_string(),
        n,
        attempts: if graph.is_random() { max_attempts } else { 1 },
        seed,
    })
}

/// The overlay of `spec` on `n` silos (undirected, gossip), seeded by the
/// spec's own seed or else `default_seed`, redrawn until connected.
pub fn random_overlay(
    spec: &RandomSpec,
    n: usize,
    default_seed: u64,
) -> Result<Overlay, RandomGraphError> {
    let seed = spec.seed.unwrap_or(default_seed);
    let (edges, _) = draw_connected(&spec.graph, n, seed, MAX_ATTEMPTS)?;
    Ok(Overlay::from_edges(&spec.to_string(), n, &edges))
}

#[cfg(test)]
mod tests;
