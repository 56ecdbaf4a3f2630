//! Edges and messages per node and round (\[Bellet21\] Sec. 1 and 4.5).
//!
//! The paper counts a D-Cliques round with Clique Averaging as two messages
//! per edge (model + gradient), i.e. `2 x` the average degree. Really,
//! gradients only travel on intra-clique edges: a node sends its model to
//! each neighbour and its gradient to each clique neighbour.

use serde::Serialize;

use super::CliqueTopology;

/// Edge and message counts of a topology.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EdgeCounts {
    /// Topology name.
    pub topology: String,
    /// Nodes.
    pub nodes: usize,
    /// Undirected edges.
    pub edges: usize,
    /// Intra-clique edges.
    pub intra_edges: usize,
    /// Average degree (the paper's "edges per node"), `2 E / n`.
    pub edges_per_node: f64,
    /// Largest degree.
    pub max_degree: usize,
    /// Messages per node and round as the paper counts them with Clique
    /// Averaging: `2 x edges_per_node` (model + gradient per edge); without
    /// cliques (baselines), one model per edge: `edges_per_node`.
    pub paper_messages_per_node: f64,
    /// Messages per node and round as they flow: models to every
    /// neighbour, gradients to clique neighbours, `(2 E + 2 E_intra) / n`.
    pub real_messages_per_node: f64,
}

/// Counts for `t` (with Clique Averaging on its cliques).
pub fn edge_counts(t: &CliqueTopology) -> EdgeCounts {
    let n = t.node_count().max(1) as f64;
    let e = t.edges().len();
    let intra = t.intra_edges().len();
    let per = 2.0 * e as f64 / n;
    EdgeCounts {
        topology: t.name.clone(),
        nodes: t.node_count(),
        edges: e,
        intra_edges: intra,
        edges_per_node: per,
        max_degree: t.degrees().into_iter().max().unwrap_or(0),
        paper_messages_per_node: if intra > 0 { 2.0 * per } else { per },
        real_messages_per_node: (2 * e + 2 * intra) as f64 / n,
    }
}
