//! Convergence of D-SGD with and without Clique Averaging on label-skewed
//! data (\[Bellet21\] Sec. 4.2-4.4), feature `train`: the runs behind
//! `fedtopo reproduce dcliques-convergence`, rendered by
//! [`crate::reproduce::dcliques::render`].

use serde::Serialize;

use crate::mixing::consensus::ConsensusRule;
use crate::overlay::dcliques::{build_topology, DCliquesOptions, LabelDistributions, TopologyKind};
use crate::train::clique_averaging::{gaussian_mixture, gradient_matrix, model_matrix};
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
    let labels = LabelDistributions::from_counts(&counts).map_err(|e| cfg_err(e.to_string()))?;
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
            let g = gradient_matrix(&t.averaging_groups()).map_err(|e| cfg_err(e.to_string()))?;
            trainer.set_clique_averaging(Some(&g))?;
        }
        let mut records = vec![trainer.evaluate(0.0)];
        for r in 1..=setup.rounds {
            trainer.train_round(&w)?;
            if r % setup.eval_every.max(1) == 0 || r == setup.rounds {
                records.push(trainer.evaluate(r as f64));
            }
        }
        let skew = t.cliques.iter().map(|c| labels.skew(c)).sum::<f64>() / t.cliques.len() as f64;
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
