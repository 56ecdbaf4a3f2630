//! The mixing figures of an evaluated overlay under the consensus weights
//! training uses by default (`--consensus auto`).

use crate::evaluate::EvaluatedOverlay;
use crate::graph::Overlay;
use crate::mixing::{
    effective_neighbours, effective_neighbours_periodic, exact_consensus_round, fastest_mixing,
    slem_per_round, undirected_edges, FastestMixing, FastestOptions, MixingError,
};
use crate::train::consensus::{ConsensusError, ConsensusRule};

/// How an overlay mixes under its default consensus weights.
#[derive(Debug, Clone, PartialEq)]
pub struct MixingFigures {
    /// The rule `auto` resolved to (`average`, `half`, `local-degree`,
    /// `matcha:ALPHA`, `file weights`).
    pub rule: String,
    /// Rounds the figures are taken over (1 for static overlays).
    pub rounds: u64,
    /// Per-round second-largest eigenvalue modulus (geometric mean over the
    /// rounds, [`slem_per_round`]).
    pub slem: f64,
    /// Effective number of neighbours (\[Vogels22\]).
    pub effective_neighbours: f64,
    /// The first round after which the rounds' product is exact averaging
    /// (finite-time consensus), if within the rounds taken.
    pub exact_round: Option<usize>,
    /// The consensus matrices (row-major), one per round.
    pub matrices: Vec<Vec<f64>>,
}

impl MixingFigures {
    /// Spectral gap `1 - slem`.
    pub fn spectral_gap(&self) -> f64 {
        1.0 - self.slem
    }
}

/// The figures of `e` over its first `rounds` rounds (1 for static
/// overlays) at decay `gamma`.
///
/// # Errors
/// A consensus matrix cannot be built for a round.
pub fn mixing_figures(
    e: &EvaluatedOverlay,
    rounds: u64,
    gamma: f64,
) -> Result<MixingFigures, ConsensusError> {
    let rule = ConsensusRule::Auto.for_overlay(e)?;
    let n = e.silo_count();
    let rounds = if e.is_schedule() { rounds.max(1) } else { 1 };
    let schedule = e.schedule();
    let mut matrices = Vec::new();
    let mut label = String::new();
    for k in 0..rounds {
        let o = schedule.round(k);
        matrices.push(rule.matrix_at(&o, k)?.as_slice().to_vec());
        if k == 0 {
            label = rule_label(&rule, &o);
        }
    }
    let refs: Vec<&[f64]> = matrices.iter().map(Vec::as_slice).collect();
    // Dense n x n spectra: long at thousands of silos, shown step by step.
    let task = crate::progress::Task::start("mixing figures", "measures", 3);
    task.message(&format!("SLEM of {n}x{n}"));
    let slem = slem_per_round(n, &refs);
    task.inc(1);
    task.message("exact consensus");
    let exact_round = exact_consensus_round(n, &refs);
    task.inc(1);
    task.message("effective neighbours");
    let effective_neighbours = effective_neighbours_periodic(n, &refs, gamma);
    task.inc(1);
    Ok(MixingFigures {
        rule: label,
        rounds,
        slem,
        exact_round,
        effective_neighbours,
        matrices,
    })
}

/// The name of the rule `rule` (resolved from `auto`) on overlay `o`.
pub fn rule_label(rule: &ConsensusRule, o: &Overlay) -> String {
    match rule {
        ConsensusRule::Auto => rule_label(&ConsensusRule::resolve_auto(o), o),
        ConsensusRule::LocalDegree => "local-degree".into(),
        ConsensusRule::MetropolisHastings => "mh".into(),
        ConsensusRule::Half => "half".into(),
        ConsensusRule::Average => "average".into(),
        ConsensusRule::Fastest => "fastest".into(),
        ConsensusRule::Matcha { alpha } => format!("matcha:{alpha:.4}"),
        ConsensusRule::Custom(_) => "file weights".into(),
        ConsensusRule::PerRound(_) => "per-round weights".into(),
        ConsensusRule::WeightedAverage { .. } => "fedavg".into(),
        ConsensusRule::DecAvg { .. } => "decavg".into(),
    }
}

/// Fastest-mixing weights of `o` when it is an undirected static overlay
/// (`None` for a directed one), with their effective number of neighbours
/// at `gamma`.
///
/// # Errors
/// An edge out of range, or bad solver options.
pub fn fastest_figures(
    o: &Overlay,
    options: &FastestOptions,
    gamma: f64,
) -> Result<Option<(FastestMixing, f64)>, MixingError> {
    let n = o.silo_count();
    match undirected_edges(n, o.arcs()) {
        Err(MixingError::Directed { .. }) => Ok(None),
        Err(e) => Err(e),
        Ok(edges) => {
            let f = fastest_mixing(n, &edges, options)?;
            let eff = effective_neighbours(n, &f.matrix, gamma);
            Ok(Some((f, eff)))
        }
    }
}
