//! D-Cliques training support (\[Bellet21\] Sec. 2 and 3.4): the Clique
//! Averaging gradient matrix (\[Bellet21\] Algorithm 3), Metropolis-Hastings
//! model weights and a label-skew test bed (class-conditional Gaussians).
//! The wall-clock of two-phase Clique Averaging rounds is
//! [`crate::replay::clock::CliqueAveragingClock`].
//!
//! Clique Averaging at node `i`, round `k`:
//! `g_i = (1/|C(i)|) sum_{j in C(i)} grad F(theta_j; S_j)` over its clique
//! group `C(i)` (itself and its clique neighbours), then
//! `theta_i <- theta_i - lr g_i` (or with momentum `v_i = mu v_i + g_i`,
//! buffer local) and model averaging over all neighbours with `W`.
//! In the batched trainer the gradient mixing is one `G x grad` product per
//! parameter ([`crate::train::trainer::Trainer::set_clique_averaging`]).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use super::consensus::{ConsensusError, ConsensusMatrix};
use super::data::{DataError, Dataset};
use crate::overlay::dcliques::weights::metropolis_hastings_dense;
use crate::overlay::dcliques::{CliqueTopology, DCliquesError};

/// The Clique Averaging matrix `G`: `G_ij = 1/|C(i)|` for `j` in node
/// `i`'s group `C(i)` (which must contain `i`), 0 elsewhere. Row-stochastic.
pub fn gradient_matrix(groups: &[Vec<usize>]) -> Result<ConsensusMatrix, DCliquesError> {
    let n = groups.len();
    let mut rows = vec![vec![0.0; n]; n];
    for (i, g) in groups.iter().enumerate() {
        if !g.contains(&i) || g.iter().any(|&j| j >= n) {
            return Err(DCliquesError::Invalid(format!(
                "clique averaging group of node {i} must contain it and only nodes < {n}"
            )));
        }
        for &j in g {
            rows[i][j] = 1.0 / g.len() as f64;
        }
    }
    ConsensusMatrix::from_rows(rows).map_err(|e| DCliquesError::Invalid(e.to_string()))
}

/// Metropolis-Hastings model weights of `t` (\[Bellet21\] Sec. 2).
pub fn model_matrix(t: &CliqueTopology) -> Result<ConsensusMatrix, ConsensusError> {
    let n = t.node_count();
    let w = metropolis_hastings_dense(n, t.edges());
    ConsensusMatrix::from_rows(w.chunks(n.max(1)).map(<[f64]>::to_vec).collect())
}

/// Class-conditional Gaussians: class means `mu_y ~ N(0, spread^2 I)` in
/// `dim` dimensions, examples `x ~ N(mu_y, I)`; `per_class` training and
/// `test_per_class` test examples per class, seeded. Heterogeneity then
/// comes only from how labels are split (e.g. the shards partition).
pub fn gaussian_mixture(
    classes: usize,
    dim: usize,
    per_class: usize,
    test_per_class: usize,
    spread: f64,
    seed: u64,
) -> Result<(Dataset, Dataset), DataError> {
    if classes < 2 || dim == 0 || per_class == 0 || test_per_class == 0 {
        return Err(DataError::Invalid(
            "gaussian mixture needs >= 2 classes, dim >= 1 and examples per class >= 1".into(),
        ));
    }
    if !(spread.is_finite() && spread > 0.0) {
        return Err(DataError::Invalid(format!("spread {spread} must be > 0")));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let std = Normal::new(0.0, 1.0).expect("valid");
    let means: Vec<Vec<f64>> = (0..classes)
        .map(|_| (0..dim).map(|_| spread * std.sample(&mut rng)).collect())
        .collect();
    let mut make = |count: usize| {
        let mut ds = Dataset {
            features: Vec::with_capacity(classes * count * dim),
            labels: Vec::with_capacity(classes * count),
            dim,
            classes,
            image: None,
        };
        for (y, mu) in means.iter().enumerate() {
            for _ in 0..count {
                ds.features
                    .extend(mu.iter().map(|&m| (m + std.sample(&mut rng)) as f32));
                ds.labels.push(y as i64);
            }
        }
        ds
    };
    let train = make(per_class);
    let test = make(test_per_class);
    Ok((train, test))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlay::dcliques::{
        build_topology, DCliquesOptions, LabelDistributions, TopologyKind,
    };
    use crate::train::consensus::metropolis_hastings;

    fn topo(n: usize) -> CliqueTopology {
        let labels = LabelDistributions::one_class_per_node(n, 5).unwrap();
        let o = DCliquesOptions {
            max_size: 5,
            ..DCliquesOptions::default()
        };
        build_topology(TopologyKind::DEFAULT, &labels, &o).unwrap()
    }

    #[test]
    fn mh_agrees_with_consensus_rule() {
        let t = topo(20);
        let a = model_matrix(&t).unwrap();
        let b = metropolis_hastings(&t.overlay());
        for i in 0..20 {
            for j in 0..20 {
                assert!((a.get(i, j) - b.get(i, j)).abs() < 1e-15);
            }
        }
    }

    #[test]
    fn gradient_matrix_averages_groups() {
        let t = topo(20);
        let g = gradient_matrix(&t.averaging_groups()).unwrap();
        assert!(g.row_sum_error() < 1e-12);
        // Cliques are fully connected: G is symmetric, doubly stochastic.
        assert!(g.is_symmetric(1e-15));
        assert!((g.get(0, 0) - 0.2).abs() < 1e-15);
        assert!(gradient_matrix(&[vec![1], vec![1]]).is_err());
    }

    #[test]
    fn mixture_shapes() {
        let (tr, te) = gaussian_mixture(10, 8, 30, 5, 1.0, 1).unwrap();
        assert_eq!(tr.len(), 300);
        assert_eq!(te.len(), 50);
        assert_eq!(tr.features.len(), 300 * 8);
        assert!(gaussian_mixture(1, 8, 30, 5, 1.0, 1).is_err());
        assert_eq!(gaussian_mixture(10, 8, 30, 5, 1.0, 1).unwrap().0, tr);
    }
}

/// Convergence comparison on label-skewed data (\[Bellet21\] Sec. 4.2-4.4), needs
/// the `train` feature.
#[cfg(feature = "train")]
pub mod convergence {
    use serde::Serialize;

    use super::{gaussian_mixture, gradient_matrix, model_matrix};
    use crate::overlay::dcliques::{
        build_topology, DCliquesOptions, LabelDistributions, TopologyKind,
    };
    use crate::train::consensus::ConsensusRule;
    use crate::train::data::partition::Partition;
    use crate::train::data::FederatedData;
    use crate::train::model::ModelKind;
    use crate::train::optim::{LrSchedule, OptimizerKind};
    use crate::train::report::RoundRecord;
    use crate::train::trainer::{ExecMode, TrainConfig, TrainError, Trainer};

    /// The test bed: class-conditional Gaussians split with a label-skewed
    /// partition (2 shards per node, or one class per node), logistic
    /// regression, SGD.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct Setup {
        /// Nodes.
        pub nodes: usize,
        /// Classes.
        pub classes: usize,
        /// Input dimension.
        pub dim: usize,
        /// Training examples per class.
        pub per_class: usize,
        /// Test examples per class.
        pub test_per_class: usize,
        /// Spread of the class means (larger = easier).
        pub spread: f64,
        /// Rounds (one local step each).
        pub rounds: u64,
        /// Evaluate every this many rounds.
        pub eval_every: u64,
        /// Learning rate.
        pub lr: f64,
        /// Mini-batch per node and step.
        pub batch_size: usize,
        /// SGD momentum (0 = none).
        pub momentum: f64,
        /// Seed of the data, partition, topologies and training.
        pub seed: u64,
        /// Partition: `shards:2` (\[Bellet21\] main partition) or `one-class` (\[Bellet21\] extreme skew).
        pub partition: String,
    }

    impl Default for Setup {
        fn default() -> Self {
            Setup {
                nodes: 100,
                classes: 10,
                dim: 20,
                per_class: 1000,
                test_per_class: 200,
                spread: 0.5,
                rounds: 300,
                eval_every: 10,
                lr: 0.1,
                batch_size: 16,
                momentum: 0.0,
                seed: 0,
                partition: "shards:2".into(),
            }
        }
    }

    /// One training run.
    #[derive(Debug, Clone, PartialEq, Serialize)]
    pub struct Run {
        /// Topology name, `+ca` with Clique Averaging, `+m` with momentum.
        pub name: String,
        /// Undirected edges.
        pub edges: usize,
        /// Average clique skew of the topology's cliques (singletons for baselines).
        pub mean_clique_skew: f64,
        /// Per-evaluation records (`wall_clock_ms` holds the round number).
        pub records: Vec<RoundRecord>,
    }

    /// Trains logistic regression on `setup` over every `(topology, clique
    /// averaging)` variant, with Metropolis-Hastings model averaging.
    pub fn run(setup: &Setup, variants: &[(TopologyKind, bool)]) -> Result<Vec<Run>, TrainError> {
        let cfg_err = |e: String| TrainError::Config(e);
        let (train, test) = gaussian_mixture(
            setup.classes,
            setup.dim,
            setup.per_class,
            setup.test_per_class,
            setup.spread,
            setup.seed,
        )
        .map_err(|e| cfg_err(e.to_string()))?;
        let silos = Partition::parse(&setup.partition)
            .map_err(|e| cfg_err(e.to_string()))?
            .split(&train, setup.nodes, None, setup.seed)
            .map_err(|e| cfg_err(e.to_string()))?;
        let counts: Vec<Vec<usize>> = silos
            .iter()
            .map(|s| {
                let mut c = vec![0; setup.classes];
                for &k in s {
                    c[train.labels[k] as usize] += 1;
                }
                c
            })
            .collect();
        let labels =
            LabelDistributions::from_counts(&counts).map_err(|e| cfg_err(e.to_string()))?;
        let data = FederatedData {
            name: format!("gaussian-mixture({},{})", setup.classes, setup.dim),
            train,
            test,
            silos,
        };
        let cfg = TrainConfig {
            model: ModelKind::LogReg,
            optimizer: OptimizerKind::Sgd {
                momentum: setup.momentum,
            },
            lr: setup.lr,
            lr_schedule: LrSchedule::Constant,
            local_steps: 1,
            batch_size: setup.batch_size,
            consensus: ConsensusRule::MetropolisHastings,
            eval_samples: 2000,
            seed: setup.seed,
            mode: ExecMode::Batched,
        };
        let options = DCliquesOptions {
            seed: setup.seed,
            ..DCliquesOptions::default()
        };
        let mut out = Vec::new();
        for &(kind, ca) in variants {
            let t = build_topology(kind, &labels, &options).map_err(|e| cfg_err(e.to_string()))?;
            let w = model_matrix(&t)?;
            let mut trainer = Trainer::new(cfg.clone(), &data)?;
            if ca {
                let g =
                    gradient_matrix(&t.averaging_groups()).map_err(|e| cfg_err(e.to_string()))?;
                trainer.set_clique_averaging(Some(&g))?;
            }
            let mut records = vec![trainer.evaluate(0.0)];
            for r in 1..=setup.rounds {
                trainer.train_round(&w)?;
                if r % setup.eval_every.max(1) == 0 || r == setup.rounds {
                    records.push(trainer.evaluate(r as f64));
                }
            }
            let skew =
                t.cliques.iter().map(|c| labels.skew(c)).sum::<f64>() / t.cliques.len() as f64;
            let mut name = t.name.clone();
            if ca {
                name.push_str("+ca");
            }
            if setup.momentum > 0.0 {
                name.push_str("+m");
            }
            out.push(Run {
                name,
                edges: t.edges().len(),
                mean_clique_skew: skew,
                records,
            });
        }
        Ok(out)
    }
}
