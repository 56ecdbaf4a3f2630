//! Writing design candidates as overlay files that `--overlays file:PATH`
//! reads back as the same overlay with the same consensus weights: static
//! overlays as GML (trained from) and node-link JSON, with their weights
//! when they carry their own (fastest-mixing, a family's matrix);
//! schedules as per-round JSON with every round's weights (MATCHA's
//! `I - alpha L(k)`, a family's matrices).
//!
//! A D-Cliques candidate with Clique Averaging (`+ca`) is written as the
//! overlay its models travel on: the file has no gradient phase, so it is
//! refused ([`ExportError::CliqueAveraging`]) rather than trained as
//! something else.

use std::path::{Path, PathBuf};

use super::calibrate::candidate_stem;
use super::search::{Candidate, CandidateOverlay};
use crate::delay::DelayModel;
use crate::evaluate::{EvalError, EvaluatedOverlay};
use crate::overlay::build::BuildOptions;
use crate::overlay::export::{silo_positions, ExportedOverlay};
use crate::underlay::Underlay;

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
    /// A Clique Averaging candidate has no file form.
    #[error(
        "{candidate}: Clique Averaging exchanges gradients inside cliques every step, which an \
         overlay file cannot say; train it by name (--overlays {candidate})"
    )]
    CliqueAveraging {
        /// The candidate.
        candidate: String,
    },
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
/// The candidate cannot be rebuilt, has Clique Averaging, or a file
/// cannot be written.
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
            if e.is_schedule() {
                let path = dir.join(format!("{stem}.rounds.json"));
                write(&path, &e.export_schedule(&labels)?.to_json())?;
                return Ok(path);
            }
            let x = e.export(&labels, Some(model), Some(candidate.cycle_time_ms))?;
            match e.consensus_weights() {
                Some(w) => x.with_weights(&w.concat()),
                None => x,
            }
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
/// file in [`Candidate::file`]. Clique Averaging candidates are skipped
/// (their `file` stays `None`); their names are returned.
///
/// # Errors
/// As [`export_candidate`], but for Clique Averaging.
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
            Err(ExportError::CliqueAveraging { candidate }) => skipped.push(candidate),
            Err(e) => return Err(e),
        }
    }
    Ok(skipped)
}
