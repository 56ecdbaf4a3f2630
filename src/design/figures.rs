//! The mixing figures of an evaluated overlay under the consensus weights
//! training uses by default (`--consensus auto`).

use crate::evaluate::EvaluatedOverlay;
use crate::graph::Overlay;
use crate::mixing::consensus::{ConsensusError, ConsensusMatrix, ConsensusRule};
use crate::mixing::{
    effective_neighbours, effective_neighbours_periodic, exact_consensus_round, fastest_mixing,
    is_permutation, slem_per_round, undirected_edges, FastestMixing, FastestOptions, MixingError,
};

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
    /// The consensus matrices, one per round.
    pub matrices: Vec<ConsensusMatrix>,
}

impl MixingFigures {
    /// Spectral gap `1 - slem`.
    pub fn spectral_gap(&self) -> f64 {
        1.0 - self.slem
    }

    /// Why the consensus does not mix, when it does not (SLEM within 1e-9
    /// of 1 or above: the consensus error never shrinks): every round's
    /// matrix a permutation (models are moved, never averaged: a directed
    /// ring with weight 1 on every arc, or with weights >= 1, which are
    /// rescaled to 1), every round the identity (nobody communicates), or
    /// otherwise (an overlay that does not connect the silos, or weights
    /// that never average). `None` when it mixes.
    pub fn no_mixing_reason(&self) -> Option<String> {
        if self.slem < 1.0 - 1e-9 || self.matrices.is_empty() {
            return None;
        }
        let n = self.matrices[0].n();
        if n <= 1 {
            return None;
        }
        let identity =
            |w: &[f64]| (0..n * n).all(|k| w[k] == if k / n == k % n { 1.0 } else { 0.0 });
        let rounds = if self.rounds > 1 {
            "every round's"
        } else {
            "its"
        };
        Some(if self.matrices.iter().all(|w| identity(w.as_slice())) {
            format!(
                "{rounds} consensus matrix is the identity: no silo receives a model, nothing \
                 is averaged (spectral gap 0)"
            )
        } else if self
            .matrices
            .iter()
            .all(|w| is_permutation(n, w.as_slice()))
        {
            format!(
                "{rounds} consensus matrix is a permutation: models are passed on whole, never \
                 averaged, so a permutation matrix does not mix (spectral gap 0; e.g. weight 1, \
                 or weights >= 1 which are rescaled to 1, on every arc of a ring)"
            )
        } else {
            format!(
                "the consensus does not mix (second-largest eigenvalue modulus {:.6} >= 1): the \
                 overlay does not connect every silo, or its weights never average",
                self.slem
            )
        })
    }
}

/// The figures of `e` over its first `rounds` rounds (1 for static
/// overlays) at decay `gamma`.
///
/// # Errors
/// A consensus matrix cannot be built for a round; an eigenvalue
/// computation fails (a non-finite weight).
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
        matrices.push(rule.matrix_at(&o, k)?);
        if k == 0 {
            label = rule_label(&rule, &o);
        }
    }
    let refs: Vec<&[f64]> = matrices.iter().map(ConsensusMatrix::as_slice).collect();
    // Dense n x n spectra: long at thousands of silos, shown step by step.
    let task = crate::progress::Task::start("mixing figures", "measures", 3);
    task.message(&format!("SLEM of {n}x{n}"));
    let slem = slem_per_round(n, &refs).map_err(MixingError::from)?;
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
            let eff = effective_neighbours(n, f.matrix.as_slice(), gamma);
            Ok(Some((f, eff)))
        }
    }
}
