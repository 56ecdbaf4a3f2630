//! Writing design candidates as overlay files that `--overlays file:PATH`
//! reads back as the same overlay with the same consensus weights: static
//! overlays as GML (trained from) and node-link JSON, with their weights
//! when they carry their own (fastest-mixing, a family's matrix);
//! schedules as per-round JSON with every round's weights (MATCHA's
//! `I - alpha L(k)`, a family's matrices: [`schedule_with_weights`]).
//!
//! A D-Cliques candidate with Clique Averaging (`+ca`) is written as the
//! overlay its models travel on: the file has no gradient phase, so it is
//! refused ([`ExportError::CliqueAveraging`]) rather than trained as
//! something else; so is an all-reduce ([`ExportError::AllReduce`]),
//! whose file would read back as gossip on its arcs.

use std::path::{Path, PathBuf};

use super::calibrate::candidate_stem;
use super::search::{Candidate, CandidateOverlay};
use crate::evaluate::{EvalError, EvaluatedOverlay};
use crate::mixing::consensus::{ConsensusError, ConsensusRule};
use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::overlay::build::BuildOptions;
use crate::overlay::export::{silo_positions, ExportedOverlay, ExportedSchedule};

/// Why a candidate could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Rebuilding the candidate failed.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// Writing a file failed.
    #[error("writing {path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A round's consensus matrix could not be built.
    #[error(transparent)]
    Consensus(#[from] ConsensusError),
    /// A Clique Averaging candidate has no file form.
    #[error(
        "{candidate}: Clique Averaging exchanges gradients inside cliques every step, which an \
         overlay file cannot say; train it by name (--overlays {candidate})"
    )]
    CliqueAveraging {
        /// The candidate.
        candidate: String,
    },
    /// An all-reduce candidate (ring or mesh) has no file form.
    #[error(
        "{candidate}: an all-reduce averages exactly in chunks, which an overlay file cannot \
         say (it would read back as gossip on its arcs); train it by name \
         (--overlays {candidate})"
    )]
    AllReduce {
        /// The candidate.
        candidate: String,
    },
}

impl ExportError {
    /// The candidate, when this error is "no file form" (Clique Averaging,
    /// an all-reduce): such a candidate is trained by its kind.
    pub fn no_file_form(&self) -> Option<&str> {
        match self {
            ExportError::CliqueAveraging { candidate } | ExportError::AllReduce { candidate } => {
                Some(candidate)
            }
            _ => None,
        }
    }
}

/// The rounds of schedule `e` ready to write, with the consensus matrix
/// of every written round that training uses under `--consensus auto`
/// (MATCHA's `I - alpha L(k)` on round `k`'s overlay, \[Wang19\]; a
/// family's own matrices): read back with `--overlays file:PATH`, the file
/// trains as the schedule does, round by round (MATCHA's draws repeat
/// after the written rounds).
///
/// # Errors
/// `e` is not a schedule; a round's matrix cannot be built.
pub fn schedule_with_weights(
    e: &EvaluatedOverlay,
    labels: &[String],
) -> Result<ExportedSchedule, ExportError> {
    let x = e.export_schedule(labels)?;
    if x.weights.is_some() {
        return Ok(x);
    }
    let rule = ConsensusRule::Auto.for_overlay(e)?;
    if rule == ConsensusRule::Auto {
        // No weights of its own: `auto` picks them per round from the
        // round's overlay, as it will when the file is read back.
        return Ok(x);
    }
    let schedule = e.schedule();
    let weights = (0..x.rounds.len() as u64)
        .map(|k| rule.matrix_at(&schedule.round(k), k))
        .collect::<Result<Vec<_>, ConsensusError>>()?;
    Ok(x.with_weights(weights))
}

/// Static overlay `e` ready to write, with the consensus weights it brings
/// (a family's matrix, a file's weights; `None`: `auto` picks them from
/// the overlay when the file is read back).
///
/// # Errors
/// `e` is a schedule.
pub fn overlay_with_weights(
    e: &EvaluatedOverlay,
    labels: &[String],
    model: &DelayModel,
    cycle_time_ms: Option<f64>,
) -> Result<ExportedOverlay, ExportError> {
    let x = e.export(labels, Some(model), cycle_time_ms)?;
    Ok(match e.consensus_weights() {
        Some(w) => x.with_weights(w),
        None => x,
    })
}

fn write(path: &Path, text: &str) -> Result<(), ExportError> {
    std::fs::write(path, text).map_err(|source| ExportError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Writes `candidate` to `dir` (created if missing) under its stem
/// ([`candidate_stem`]): `STEM.gml` and `STEM.json` for a static overlay,
/// `STEM.rounds.json` for a schedule. Returns the file to train with (the
/// GML or the rounds file).
///
/// # Errors
/// The candidate cannot be rebuilt, has no file form (Clique Averaging, an
/// all-reduce), or a file cannot be written.
pub fn export_candidate(
    dir: &Path,
    candidate: &Candidate,
    underlay: &Underlay,
    model: &DelayModel,
    build: &BuildOptions,
) -> Result<PathBuf, ExportError> {
    std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let placement = model.connectivity.placement();
    let labels = placement.labels(underlay);
    let positions = silo_positions(underlay, placement);
    let stem = candidate_stem(&candidate.name);
    let exported = match &candidate.overlay {
        CandidateOverlay::Kind(kind) => {
            let e = EvaluatedOverlay::build(*kind, underlay, model, build)?;
            if e.gradient_groups().is_some() {
                return Err(ExportError::CliqueAveraging {
                    candidate: candidate.name.clone(),
                });
            }
            if e.allreduce().is_some() {
                return Err(ExportError::AllReduce {
                    candidate: candidate.name.clone(),
                });
            }
            if e.is_schedule() {
                let path = dir.join(format!("{stem}.rounds.json"));
                write(&path, &schedule_with_weights(&e, &labels)?.to_json())?;
                return Ok(path);
            }
            overlay_with_weights(&e, &labels, model, Some(candidate.cycle_time_ms))?
        }
        CandidateOverlay::Static { overlay, weights } => {
            let x =
                ExportedOverlay::new(overlay, &labels, Some(model), Some(candidate.cycle_time_ms));
            match weights {
                Some(w) => x.with_weights(w),
                None => x,
            }
        }
    }
    .with_positions(positions);
    write(&dir.join(format!("{stem}.json")), &exported.to_json())?;
    let gml = dir.join(format!("{stem}.gml"));
    write(&gml, &exported.to_gml())?;
    Ok(gml)
}

/// Writes every candidate to `dir` ([`export_candidate`]) and records its
/// file in [`Candidate::file`]. Candidates without a file form (Clique
/// Averaging, an all-reduce: [`ExportError::no_file_form`]) are
/// skipped (their `file` stays `None`); their names are returned.
///
/// # Errors
/// As [`export_candidate`], but for candidates without a file form.
pub fn export_all(
    dir: &Path,
    candidates: &mut [Candidate],
    underlay: &Underlay,
    model: &DelayModel,
    build: &BuildOptions,
) -> Result<Vec<String>, ExportError> {
    let mut skipped = Vec::new();
    for c in candidates.iter_mut() {
        match export_candidate(dir, c, underlay, model, build) {
            Ok(path) => c.file = Some(path.display().to_string()),
            Err(e) => match e.no_file_form() {
                Some(candidate) => skipped.push(candidate.to_string()),
                None => return Err(e),
            },
        }
    }
    Ok(skipped)
}
