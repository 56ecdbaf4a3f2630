//! `fedtopo mixing`: how fast each overlay's consensus mixes, with the
//! weights training would use and with fastest-mixing weights (\[Boyd04\]),
//! next to its cycle time.

use serde::Serialize;

use crate::design::figures::{fastest_figures, mixing_figures};
use crate::evaluate::{EvalError, EvaluatedOverlay};
use crate::mixing::consensus::ConsensusError;
use crate::mixing::{FastestOptions, MixingError};
use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::overlay::build::{BuildOptions, OverlayKind};

/// The `fastest_note` of a row whose fastest-mixing weights were beyond
/// [`crate::mixing::MAX_FASTEST_WORK`] ([`crate::mixing::fastest_work_note`]
/// says why).
pub const SKIPPED_LARGE: &str = "skipped: too large";

/// Settings of [`mixing_rows`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixingOptions {
    /// Decay `gamma` of the effective number of neighbours, in `[0, 1)`.
    pub gamma: f64,
    /// Rounds of a time-varying overlay used (its first rounds; give a
    /// multiple of the period for periodic schedules).
    pub rounds: u64,
    /// Settings of the fastest-mixing solver.
    pub fastest: FastestOptions,
}

impl Default for MixingOptions {
    fn default() -> Self {
        MixingOptions {
            gamma: 0.95,
            rounds: 60,
            fastest: FastestOptions::default(),
        }
    }
}

/// One overlay's mixing figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MixingRow {
    /// Overlay name.
    pub overlay: String,
    /// Cycle time, ms per round (for schedules the paper-style estimate).
    pub cycle_time_ms: f64,
    /// Consensus rule training uses by default (`--consensus auto`).
    pub rule: String,
    /// Rounds the figures are computed over (1 for static overlays).
    pub rounds: u64,
    /// Spectral gap `1 - SLEM` per round under `rule` (geometric mean over
    /// the rounds for schedules).
    pub spectral_gap: f64,
    /// Effective number of neighbours under `rule` (\[Vogels22\]).
    pub effective_neighbours: f64,
    /// Spectral gap with fastest-mixing weights (undirected static overlays).
    pub fastest_spectral_gap: Option<f64>,
    /// Effective number of neighbours with fastest-mixing weights.
    pub fastest_effective_neighbours: Option<f64>,
    /// Spectral gap with Metropolis–Hastings weights (undirected static
    /// overlays): the reference of the gain.
    pub metropolis_spectral_gap: Option<f64>,
    /// Why fastest-mixing weights were not computed, if not.
    pub fastest_note: Option<String>,
    /// Why the consensus does not mix, when it does not (spectral gap 0:
    /// e.g. consensus matrices that are permutations).
    pub mixing_note: Option<String>,
}

/// Why the mixing figures could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum MixingReportError {
    /// Building or timing an overlay failed.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// A consensus matrix could not be built.
    #[error(transparent)]
    Consensus(#[from] ConsensusError),
    /// The fastest-mixing solver refused its input.
    #[error(transparent)]
    Mixing(#[from] MixingError),
    /// Bad options.
    #[error("mixing: {0}")]
    Options(String),
}

/// The mixing figures of every overlay of `kinds` on `underlay` under `model`.
///
/// # Errors
/// An overlay cannot be built or timed, or its consensus matrix built;
/// `gamma` outside `[0, 1)` or zero rounds.
pub fn mixing_rows(
    underlay: &Underlay,
    model: &DelayModel,
    kinds: &[OverlayKind],
    build: &BuildOptions,
    options: &MixingOptions,
) -> Result<Vec<MixingRow>, MixingReportError> {
    if !(0.0..1.0).contains(&options.gamma) || options.rounds == 0 {
        return Err(MixingReportError::Options(format!(
            "expected gamma in [0, 1) and rounds >= 1, got {} and {}",
            options.gamma, options.rounds
        )));
    }
    let mut rows = Vec::new();
    let task = crate::progress::Task::start("mixing", "overlays", kinds.len() as u64);
    for &kind in kinds {
        task.message(&kind.to_string());
        let e = EvaluatedOverlay::build(kind, underlay, model, build)?;
        let t = e.cycle_time(model)?;
        let figures = mixing_figures(&e, options.rounds, options.gamma)?;
        let mut row = MixingRow {
            overlay: e.name(),
            cycle_time_ms: t.cycle_time_ms,
            rule: figures.rule.clone(),
            rounds: figures.rounds,
            spectral_gap: figures.spectral_gap(),
            effective_neighbours: figures.effective_neighbours,
            fastest_spectral_gap: None,
            fastest_effective_neighbours: None,
            metropolis_spectral_gap: None,
            fastest_note: None,
            mixing_note: figures.no_mixing_reason(),
        };
        let too_large =
            crate::mixing::fastest_work_note(model.silo_count(), options.fastest.iterations);
        match e.overlay() {
            None => row.fastest_note = Some("time-varying overlay".into()),
            Some(o) if too_large.is_some() && o.is_undirected() => {
                row.fastest_note = Some(SKIPPED_LARGE.into());
            }
            Some(o) => match fastest_figures(o, &options.fastest, options.gamma)? {
                None => row.fastest_note = Some("directed overlay".into()),
                Some((f, eff)) => {
                    row.fastest_spectral_gap = Some(f.spectral_gap());
                    row.metropolis_spectral_gap = Some(f.metropolis_spectral_gap());
                    row.fastest_effective_neighbours = Some(eff);
                }
            },
        }
        rows.push(row);
        task.inc(1);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;

    #[test]
    fn fastest_weights_never_mix_slower_and_rings_are_directed() {
        let u = load_underlay(Some("aws-gaia"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let model = NetworkSpec::default()
            .build(&u)
            .unwrap_or_else(|e| panic!("{e}"));
        let kinds: Vec<OverlayKind> = ["star", "mst", "delta-mbst", "ring"]
            .iter()
            .map(|k| k.parse().unwrap_or_else(|e| panic!("{e:?}")))
            .collect();
        let rows = mixing_rows(
            &u,
            &model,
            &kinds,
            &BuildOptions::default(),
            &MixingOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        // STAR averages exactly: gap 1, n effective neighbours.
        assert_eq!(rows[0].rule, "average");
        assert!((rows[0].spectral_gap - 1.0).abs() < 1e-9);
        assert!((rows[0].effective_neighbours - 11.0).abs() < 1e-6);
        for r in &rows[1..3] {
            let (f, m) = (
                r.fastest_spectral_gap.unwrap_or(f64::NAN),
                r.metropolis_spectral_gap.unwrap_or(f64::NAN),
            );
            assert!(f >= m - 1e-12 && f > 0.0, "{}: {f} vs {m}", r.overlay);
            // Local-degree equals Metropolis–Hastings on undirected overlays.
            assert!((r.spectral_gap - m).abs() < 1e-9, "{}", r.overlay);
        }
        assert_eq!(rows[3].rule, "half");
        assert_eq!(rows[3].fastest_note.as_deref(), Some("directed overlay"));
        let bad = MixingOptions {
            gamma: 1.0,
            ..MixingOptions::default()
        };
        assert!(mixing_rows(&u, &model, &kinds, &BuildOptions::default(), &bad).is_err());
    }

    /// The families' own matrices, round by round: Base-(k+1) averages
    /// exactly over its period (gap 1); the one-peer exponential graph on
    /// 11 silos (not a power of two) does not.
    #[test]
    fn families_mix_with_their_own_matrices_round_by_round() {
        let u = load_underlay(Some("aws-gaia"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let model = NetworkSpec::default()
            .build(&u)
            .unwrap_or_else(|e| panic!("{e}"));
        for (name, exact) in [("base:k=1", true), ("base:k=2", true), ("exp-1peer", false)] {
            let kind: OverlayKind = name.parse().unwrap_or_else(|e| panic!("{e:?}"));
            let e = EvaluatedOverlay::build(kind, &u, &model, &BuildOptions::default())
                .unwrap_or_else(|e| panic!("{e}"));
            let period = e.round_consensus_weights().map_or(0, <[_]>::len) as u64;
            let options = MixingOptions {
                rounds: period,
                ..MixingOptions::default()
            };
            let rows = mixing_rows(&u, &model, &[kind], &BuildOptions::default(), &options)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(rows[0].rule, "per-round weights");
            let gap = rows[0].spectral_gap;
            assert_eq!((gap - 1.0).abs() < 1e-9, exact, "{name}: gap {gap}");
        }
    }
}
