//! Reproduction of the D-Cliques scaling figures (\[Bellet21\] Sec. 1,
//! 4.5): edges and messages per node for `n = 100` and `n = 1000`, and
//! the skew reduction of Greedy Swap (\[Bellet21\] Sec. 4.7.1, Fig. 13/14).
//! Rendered by [`crate::reproduce::dcliques::render`]. The convergence runs
//! (\[Bellet21\] Sec. 4.2-4.4, feature `train`) are in the `convergence`
//! submodule.

#[cfg(feature = "train")]
pub mod convergence;
pub mod render;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::overlay::dcliques::count::{edge_counts, EdgeCounts};
use crate::overlay::dcliques::greedy::greedy_swap;
use crate::overlay::dcliques::labels::{LabelDistributions, MNIST_TRAIN_COUNTS};
use crate::overlay::dcliques::{
    build_topology, Construction, DCliquesError, DCliquesOptions, InterClique, TopologyKind,
};

/// One row of the edge/message table: ours next to the published figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableRow {
    /// Our counts.
    pub counts: EdgeCounts,
    /// Published edges per node, when the paper gives one.
    pub published_edges_per_node: Option<f64>,
    /// Published messages per node and round, when the paper gives one.
    pub published_messages_per_node: Option<f64>,
}

/// The topologies of the table at `n` nodes, with the published figures
/// (\[Bellet21\] Sec. 1 and 4.5: 999 / 18.9 / 37.8 / 14.5 at n = 1000; 99 / 9.9 at
/// n = 100).
fn rows_for(n: usize) -> Vec<(TopologyKind, Option<f64>, Option<f64>)> {
    let dc = |inter| TopologyKind::DCliques {
        construction: Construction::Greedy,
        inter,
    };
    let big = n == 1000;
    let small = n == 100;
    vec![
        (
            TopologyKind::FullyConnected,
            if big {
                Some(999.0)
            } else if small {
                Some(99.0)
            } else {
                None
            },
            if big {
                Some(999.0)
            } else if small {
                Some(99.0)
            } else {
                None
            },
        ),
        (dc(InterClique::None), None, None),
        (dc(InterClique::Ring), None, None),
        (dc(InterClique::Fractal), None, None),
        (
            dc(InterClique::SmallWorld { ns: 2 }),
            if big { Some(14.5) } else { None },
            None,
        ),
        (
            dc(InterClique::Full),
            if big {
                Some(18.9)
            } else if small {
                Some(9.9)
            } else {
                None
            },
            if big { Some(37.8) } else { None },
        ),
        (TopologyKind::RandomRegular { degree: 10 }, None, None),
    ]
}

/// The edge/message table for each `n` in `sizes`: MNIST-like shards
/// partition (2 shards per node), Greedy Swap with `M = 10`, `K = 1000`,
/// seed `seed`.
pub fn edge_table(sizes: &[usize], seed: u64) -> Result<Vec<TableRow>, DCliquesError> {
    let mut out = Vec::new();
    for &n in sizes {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let labels = LabelDistributions::shards_with_counts(n, &MNIST_TRAIN_COUNTS, 2, &mut rng)?;
        let options = DCliquesOptions {
            seed,
            ..DCliquesOptions::default()
        };
        for (kind, pe, pm) in rows_for(n) {
            let t = build_topology(kind, &labels, &options)?;
            let counts = edge_counts(&t);
            out.push(TableRow {
                counts,
                published_edges_per_node: pe,
                published_messages_per_node: pm,
            });
        }
    }
    Ok(out)
}

/// Skew statistics of one clique construction over many seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkewStats {
    /// Greedy Swap steps `K` (0 = random cliques).
    pub steps: usize,
    /// Mean over experiments of the average clique skew.
    pub mean: f64,
    /// Smallest average clique skew over experiments.
    pub min: f64,
    /// Largest average clique skew over experiments.
    pub max: f64,
    /// Share of experiments with average skew below 0.1.
    pub below_0_1: f64,
}

/// Average clique skew after `steps` Greedy Swap steps, over `experiments`
/// seeds `seed..seed+experiments` (\[Bellet21\] Sec. 4.7.1: n = 100, M = 10, 100
/// experiments, MNIST shards partition).
pub fn skew_stats(
    n: usize,
    steps: &[usize],
    experiments: u64,
    seed: u64,
) -> Result<Vec<SkewStats>, DCliquesError> {
    let mut out = Vec::new();
    for &k in steps {
        let mut v = Vec::new();
        for e in seed..seed + experiments {
            let mut rng = ChaCha8Rng::seed_from_u64(e);
            let labels =
                LabelDistributions::shards_with_counts(n, &MNIST_TRAIN_COUNTS, 2, &mut rng)?;
            let cliques = greedy_swap(&labels, 10, k, &mut rng)?;
            let avg = cliques.iter().map(|c| labels.skew(c)).sum::<f64>() / cliques.len() as f64;
            v.push(avg);
        }
        let m = v.len() as f64;
        out.push(SkewStats {
            steps: k,
            mean: v.iter().sum::<f64>() / m,
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            below_0_1: v.iter().filter(|&&x| x < 0.1).count() as f64 / m,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_published_where_exact() {
        let rows = edge_table(&[100, 1000], 0).unwrap();
        let get = |n: usize, name: &str| {
            rows.iter()
                .find(|r| r.counts.nodes == n && r.counts.topology == name)
                .unwrap()
                .counts
                .clone()
        };
        assert_eq!(get(1000, "fully-connected").edges_per_node, 999.0);
        assert!((get(1000, "dcliques-full").edges_per_node - 18.9).abs() < 1e-9);
        assert!((get(1000, "dcliques-full").paper_messages_per_node - 37.8).abs() < 1e-9);
        assert!((get(100, "dcliques-full").edges_per_node - 9.9).abs() < 1e-9);
        let sw = get(1000, "dcliques-smallworld").edges_per_node;
        assert!((sw - 14.5).abs() < 0.15, "{sw}");
        // Real flow: models on 18.9 edges + gradients on 9 clique edges.
        assert!((get(1000, "dcliques-full").real_messages_per_node - 27.9).abs() < 1e-9);
    }

    #[test]
    fn greedy_swap_lowers_skew() {
        let s = skew_stats(100, &[0, 1000], 5, 0).unwrap();
        assert!(s[1].mean < 0.25 * s[0].mean, "{s:?}");
    }
}
