//! Every Table 4 program (\[Lee21\]) trained on label-skewed data
//! under one or several seeds (`fedtopo tornado learn`): accuracy curves
//! with the bytes and, on an underlay, the wall-clock of every evaluation,
//! and the summary against a target accuracy.

use super::torch::TorchLearner;
use super::TornadoError;
use crate::net::delay::DelayModel;
use crate::network::NetworkKind;
use crate::program::grouping::named_partition;
use crate::program::learn::{Dataset, LearnOptions};
use crate::program::outcome::{reference_records, LearnRecord, RunSummary};
use crate::program::sim::StepCosts;
use crate::program::Method;
use crate::units::Bits;

/// The network the programs are timed on.
#[derive(Clone, Copy)]
pub struct Timing<'a> {
    /// Delay model of the underlay (its `M` is the message size).
    pub delay: &'a DelayModel,
    /// Network model of the event engine.
    pub network: NetworkKind,
    /// Core links of the underlay (for the counters).
    pub links: usize,
}

/// What to train.
#[derive(Clone)]
pub struct LearnSetup<'a> {
    /// Label partition ([`named_partition`]: `mnist`, `fedprox-mnist`,
    /// `shakespeare`), drawn per seed.
    pub partition: &'a str,
    /// Nodes.
    pub nodes: usize,
    /// Global aggregator.
    pub server: usize,
    /// Methods, in output order.
    pub methods: &'a [Method],
    /// Seeds; each draws its own partition, groups, rings, data,
    /// initialisation and batches.
    pub seeds: &'a [u64],
    /// `|G|` for every grouped method instead of Table 4's.
    pub groups: Option<usize>,
    /// Reference-learner options (their `seed` is replaced by each seed).
    pub options: LearnOptions,
    /// Target accuracy of the summaries.
    pub target: f64,
    /// Message size without timing, bit.
    pub model_bits: Bits,
    /// Timing on an underlay, if any.
    pub timing: Option<Timing<'a>>,
}

/// One method trained under one seed.
#[derive(Debug, Clone)]
pub struct LearnRun {
    /// Method.
    pub method: Method,
    /// Seed.
    pub seed: u64,
    /// One record per evaluation.
    pub records: Vec<LearnRecord>,
    /// Against the target.
    pub summary: RunSummary,
}

/// Trains every method of `setup` under every seed (seeds outer, methods
/// inner) with the reference learner or, when given, the torch learner.
pub fn learn_methods(
    setup: &LearnSetup<'_>,
    torch: Option<&TorchLearner>,
) -> Result<Vec<LearnRun>, TornadoError> {
    let n = setup.nodes;
    let mut runs = Vec::new();
    for &seed in setup.seeds {
        let data = named_partition(setup.partition, n, seed)?;
        let o = LearnOptions {
            seed,
            ..setup.options.clone()
        };
        let ds = Dataset::synthetic(&data, &o);
        for &m in setup.methods {
            let spec = m
                .defaults()
                .with_groups(setup.groups, n)
                .build(&data, setup.server, seed)
                .map_err(|source| TornadoError::Build { method: m, source })?;
            let program = spec.program(o.steps);
            let costs = match &setup.timing {
                Some(t) => {
                    let mut net = t.network.build(t.delay);
                    StepCosts::timed(&program, t.delay, net.as_mut(), t.links)
                        .map_err(|source| TornadoError::Timing { method: m, source })?
                }
                None => StepCosts::untimed(&program, setup.model_bits),
            };
            let records = match torch {
                None => reference_records(&spec, &data, &ds, &o, &costs),
                Some(s) => s
                    .train(&spec, &data, &ds, seed, o.steps, o.eval_every, &costs)
                    .map_err(|source| TornadoError::Training {
                        method: m,
                        seed,
                        source,
                    })?,
            };
            let summary = RunSummary::of(&records, &costs, setup.target);
            runs.push(LearnRun {
                method: m,
                seed,
                records,
                summary,
            });
        }
    }
    Ok(runs)
}
