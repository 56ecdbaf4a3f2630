//! D-Cliques (\[Bellet21\]):
//! sparse topologies of fully connected cliques whose label distribution
//! matches the global one, sparsely interconnected, plus the baselines of
//! the paper's evaluation.
//!
//! * [`labels`]: per-node label distributions `p_i(y)` and the skew (\[Bellet21\] eq. 3).
//! * [`greedy`]: Greedy Swap (\[Bellet21\] Algorithm 2) and the one-class construction (\[Bellet21\] Algorithm 5).
//! * [`inter`]: ring, fractal, small-world (\[Bellet21\] Algorithm 4), fully connected inter-clique edges.
//! * [`baselines`]: random `d`-regular, diverse random, node ring, grid, fully connected.
//! * [`weights`]: Metropolis-Hastings mixing weights.
//! * [`count`]: edges and messages per node (paper's count and the real flow).
//! * Cycle time of Clique Averaging rounds (two phases) on a network:
//!   [`crate::timing::two_phase`]; their event replay: [`crate::replay::two_phase`].
//!
//! Every topology is a [`CliqueTopology`]: an undirected graph plus a
//! partition of the nodes into cliques (singletons for the baselines, so
//! Clique Averaging degenerates to plain D-SGD on them).

pub mod baselines;
pub mod count;
pub mod greedy;
pub mod inter;
pub mod labels;
pub mod placement;
pub mod weights;

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use thiserror::Error;

pub use inter::InterClique;
pub use labels::LabelDistributions;

use crate::graph::Overlay;

/// Bad D-Cliques input.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum DCliquesError {
    /// Invalid parameter or label data.
    #[error("d-cliques: {0}")]
    Invalid(String),
    /// Unknown topology name.
    #[error(
        "unknown d-cliques topology `{0}`; expected dcliques[-CONSTRUCTION][-INTER] \
             (CONSTRUCTION: greedy, random, oneclass; INTER: ring, fractal, smallworld, full), \
             random-regular, diverse-random, node-ring, grid, fully-connected"
    )]
    UnknownTopology(String),
}

/// How nodes are grouped into cliques.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Construction {
    /// Greedy Swap with [`DCliquesOptions::steps`] steps.
    Greedy,
    /// Random cliques (Greedy Swap with 0 steps).
    Random,
    /// One class per node (\[Bellet21\] Algorithm 5); needs single-label nodes.
    OneClass,
}

/// A topology of the D-Cliques evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum TopologyKind {
    /// D-Cliques: cliques built by `construction`, joined by `inter`.
    DCliques {
        /// Clique construction.
        construction: Construction,
        /// Inter-clique topology.
        inter: InterClique,
    },
    /// Random `d`-regular graph.
    RandomRegular {
        /// Degree.
        degree: usize,
    },
    /// Random `d`-regular graph with label-diverse neighbourhoods.
    DiverseRandom {
        /// Degree.
        degree: usize,
    },
    /// Ring over all nodes.
    NodeRing,
    /// 2-D grid.
    Grid,
    /// Every pair of nodes.
    FullyConnected,
}

impl TopologyKind {
    /// The default D-Cliques: Greedy Swap cliques, fully connected inter-clique.
    pub const DEFAULT: TopologyKind = TopologyKind::DCliques {
        construction: Construction::Greedy,
        inter: InterClique::Full,
    };
}

impl fmt::Display for TopologyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TopologyKind::DCliques {
                construction,
                inter,
            } => {
                let c = match construction {
                    Construction::Greedy => "",
                    Construction::Random => "-random",
                    Construction::OneClass => "-oneclass",
                };
                write!(f, "dcliques{c}-{}", inter.name())
            }
            TopologyKind::RandomRegular { degree } => write!(f, "random-regular{degree}"),
            TopologyKind::DiverseRandom { degree } => write!(f, "diverse-random{degree}"),
            TopologyKind::NodeRing => f.write_str("node-ring"),
            TopologyKind::Grid => f.write_str("grid"),
            TopologyKind::FullyConnected => f.write_str("fully-connected"),
        }
    }
}

impl FromStr for TopologyKind {
    type Err = DCliquesError;
    /// `dcliques` (= `dcliques-full`), `dcliques[-greedy|-random|-oneclass][-ring|-fractal|-smallworld|-full]`,
    /// `random-regular[D]` (default 10), `diverse-random[D]`, `node-ring`, `grid`, `fully-connected`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let unknown = || DCliquesError::UnknownTopology(s.to_string());
        let degree = |rest: &str| -> Result<usize, DCliquesError> {
            let rest = rest.trim_start_matches('-');
            if rest.is_empty() {
                Ok(10)
            } else {
                rest.parse().map_err(|_| unknown())
            }
        };
        if let Some(rest) = t.strip_prefix("dcliques") {
            let mut construction = Construction::Greedy;
            let mut inter = InterClique::Full;
            for part in rest.split('-').filter(|p| !p.is_empty()) {
                match part {
                    "greedy" => construction = Construction::Greedy,
                    "random" => construction = Construction::Random,
                    "oneclass" | "one_class" => construction = Construction::OneClass,
                    "ring" => inter = InterClique::Ring,
                    "fractal" => inter = InterClique::Fractal,
                    "smallworld" | "sw" => inter = InterClique::SmallWorld { ns: 2 },
                    "full" | "fc" => inter = InterClique::Full,
                    "none" => inter = InterClique::None,
                    _ => return Err(unknown()),
                }
            }
            return Ok(TopologyKind::DCliques {
                construction,
                inter,
            });
        }
        if let Some(rest) = t.strip_prefix("random-regular") {
            return Ok(TopologyKind::RandomRegular {
                degree: degree(rest)?,
            });
        }
        if let Some(rest) = t.strip_prefix("diverse-random") {
            return Ok(TopologyKind::DiverseRandom {
                degree: degree(rest)?,
            });
        }
        Ok(match t.as_str() {
            "node-ring" => TopologyKind::NodeRing,
            "grid" => TopologyKind::Grid,
            "fully-connected" => TopologyKind::FullyConnected,
            _ => return Err(unknown()),
        })
    }
}

/// Construction parameters (\[Bellet21\] defaults: `M = 10`, `K = 1000`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DCliquesOptions {
    /// Maximum clique size `M`.
    pub max_size: usize,
    /// Greedy Swap steps `K`.
    pub steps: usize,
    /// Intra-clique edges removed at random from every clique (\[Bellet21\] Sec. 4.6).
    pub remove_intra: usize,
    /// Seed of every random choice.
    pub seed: u64,
}

impl Default for DCliquesOptions {
    fn default() -> Self {
        DCliquesOptions {
            max_size: 10,
            steps: 1000,
            remove_intra: 0,
            seed: 0,
        }
    }
}

/// An undirected topology over nodes `0..n` with a clique partition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CliqueTopology {
    /// Name (the [`TopologyKind`] display).
    pub name: String,
    n: usize,
    /// Cliques (a partition of the nodes; singletons for baselines).
    pub cliques: Vec<Vec<usize>>,
    clique_of: Vec<usize>,
    /// All edges `(a, b)`, `a < b`, sorted.
    edges: Vec<(usize, usize)>,
}

impl CliqueTopology {
    /// From a clique partition and edges (`a != b`, any order).
    pub fn new(
        name: &str,
        n: usize,
        cliques: Vec<Vec<usize>>,
        edges: impl IntoIterator<Item = (usize, usize)>,
    ) -> Result<Self, DCliquesError> {
        let mut clique_of = vec![usize::MAX; n];
        for (c, members) in cliques.iter().enumerate() {
            for &i in members {
                if i >= n || clique_of[i] != usize::MAX {
                    return Err(DCliquesError::Invalid(format!(
                        "clique partition: node {i} is out of range or in two cliques"
                    )));
                }
                clique_of[i] = c;
            }
        }
        if let Some(i) = clique_of.iter().position(|&c| c == usize::MAX) {
            return Err(DCliquesError::Invalid(format!("node {i} is in no clique")));
        }
        let mut set = BTreeSet::new();
        for (a, b) in edges {
            if a == b || a >= n || b >= n {
                return Err(DCliquesError::Invalid(format!("bad edge ({a}, {b})")));
            }
            set.insert((a.min(b), a.max(b)));
        }
        Ok(CliqueTopology {
            name: name.to_string(),
            n,
            cliques,
            clique_of,
            edges: set.into_iter().collect(),
        })
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.n
    }

    /// Edges `(a, b)`, `a < b`.
    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// Index of node `i`'s clique.
    pub fn clique_of(&self, i: usize) -> usize {
        self.clique_of[i]
    }

    /// True when the edge joins two nodes of the same clique.
    pub fn is_intra(&self, (a, b): (usize, usize)) -> bool {
        self.clique_of[a] == self.clique_of[b]
    }

    /// Intra-clique edges.
    pub fn intra_edges(&self) -> Vec<(usize, usize)> {
        self.edges
            .iter()
            .copied()
            .filter(|&e| self.is_intra(e))
            .collect()
    }

    /// Degree of every node (self excluded).
    pub fn degrees(&self) -> Vec<usize> {
        let mut d = vec![0; self.n];
        for &(a, b) in &self.edges {
            d[a] += 1;
            d[b] += 1;
        }
        d
    }

    /// Clique Averaging group of every node: itself and its neighbours in
    /// its clique (the whole clique unless intra edges were removed), sorted.
    pub fn averaging_groups(&self) -> Vec<Vec<usize>> {
        let mut g: Vec<Vec<usize>> = (0..self.n).map(|i| vec![i]).collect();
        for &(a, b) in &self.edges {
            if self.is_intra((a, b)) {
                g[a].push(b);
                g[b].push(a);
            }
        }
        for v in &mut g {
            v.sort_unstable();
        }
        g
    }

    /// The overlay (both arcs of every edge), named after the topology.
    pub fn overlay(&self) -> Overlay {
        Overlay::from_edges(&self.name, self.n, &self.edges)
    }

    /// Overlay of the gradient phase of Clique Averaging: intra-clique edges.
    pub fn gradient_overlay(&self) -> Overlay {
        Overlay::from_edges(
            &format!("{}/gradients", self.name),
            self.n,
            &self.intra_edges(),
        )
    }

    /// True when the graph is connected.
    pub fn is_connected(&self) -> bool {
        if self.n == 0 {
            return true;
        }
        let mut adj = vec![Vec::new(); self.n];
        for &(a, b) in &self.edges {
            adj[a].push(b);
            adj[b].push(a);
        }
        let mut seen = vec![false; self.n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for &j in &adj[i] {
                if !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen.iter().all(|&s| s)
    }
}

/// Test fixture: the default topology over `n` one-class nodes (5
/// classes), cliques of at most 5 nodes.
#[cfg(test)]
pub(crate) fn test_topology(n: usize) -> CliqueTopology {
    let labels = LabelDistributions::one_class_per_node(n, 5).expect("n >= 1");
    let o = DCliquesOptions {
        max_size: 5,
        ..DCliquesOptions::default()
    };
    build_topology(TopologyKind::DEFAULT, &labels, &o).expect("valid fixture")
}

/// Builds topology `kind` for nodes with label distributions `labels`.
pub fn build_topology(
    kind: TopologyKind,
    labels: &LabelDistributions,
    options: &DCliquesOptions,
) -> Result<CliqueTopology, DCliquesError> {
    let n = labels.node_count();
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    let singletons = || (0..n).map(|i| vec![i]).collect::<Vec<_>>();
    let name = kind.to_string();
    match kind {
        TopologyKind::DCliques {
            construction,
            inter,
        } => {
            let cliques = match construction {
                Construction::Greedy => {
                    greedy::greedy_swap(labels, options.max_size, options.steps, &mut rng)?
                }
                Construction::Random => greedy::greedy_swap(labels, options.max_size, 0, &mut rng)?,
                Construction::OneClass => greedy::one_class_cliques(labels, &mut rng)?,
            };
            let mut edges = Vec::new();
            for c in &cliques {
                let mut intra: Vec<(usize, usize)> = c
                    .iter()
                    .enumerate()
                    .flat_map(|(p, &a)| c[p + 1..].iter().map(move |&b| (a.min(b), a.max(b))))
                    .collect();
                if options.remove_intra > 0 {
                    if options.remove_intra > intra.len() {
                        return Err(DCliquesError::Invalid(format!(
                            "cannot remove {} intra-clique edges from a clique of {} nodes",
                            options.remove_intra,
                            c.len()
                        )));
                    }
                    intra.shuffle(&mut rng);
                    intra.truncate(intra.len() - options.remove_intra);
                }
                edges.extend(intra);
            }
            edges.extend(inter::inter_edges(
                inter,
                &cliques,
                n,
                options.max_size,
                &mut rng,
            ));
            let name = if options.remove_intra > 0 {
                format!("{name}-minus{}", options.remove_intra)
            } else {
                name
            };
            CliqueTopology::new(&name, n, cliques, edges)
        }
        TopologyKind::RandomRegular { degree } => CliqueTopology::new(
            &name,
            n,
            singletons(),
            baselines::random_regular(n, degree, &mut rng)?,
        ),
        TopologyKind::DiverseRandom { degree } => CliqueTopology::new(
            &name,
            n,
            singletons(),
            baselines::diverse_random(labels, degree, &mut rng)?,
        ),
        TopologyKind::NodeRing => {
            CliqueTopology::new(&name, n, singletons(), baselines::node_ring(n, &mut rng))
        }
        TopologyKind::Grid => {
            CliqueTopology::new(&name, n, singletons(), baselines::grid(n, &mut rng))
        }
        TopologyKind::FullyConnected => {
            CliqueTopology::new(&name, n, singletons(), baselines::fully_connected(n))
        }
    }
}

#[cfg(test)]
mod tests;
