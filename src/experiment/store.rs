//! Job results on disk: one JSON file per job, written atomically
//! (temporary file + rename), so a killed sweep never leaves a partial file.
//! Each result records the fingerprint of the source that computed it
//! ([`SOURCE_HASH`]); a result from other code is *stale*: `run` recomputes
//! it and says so, `assemble` does not use it.

use std::path::{Path, PathBuf};

use super::grid::Job;
use super::row::ResultRow;
use super::ExperimentError;

/// Fingerprint of this build's source (`src/**` and `Cargo.lock`, by
/// `build.rs`).
pub const SOURCE_HASH: &str = env!("FEDTOPO_SOURCE_HASH");

/// What is stored for a job.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stored {
    /// No result (or a file that is not one).
    Missing,
    /// A result computed by other code.
    Stale,
    /// A result of this build.
    Fresh(ResultRow),
    /// A file that is not a result (cut short outside fedtopo, or edited):
    /// why it does not parse. `run` recomputes it and says so.
    Unreadable(String),
}

/// Where the result of `job` lives under `out`.
pub fn job_path(out: &Path, job: &Job) -> PathBuf {
    out.join("jobs").join(format!("{}.json", job.id()))
}

/// The working directory of `job` under `out` (training runs keep their
/// per-round metrics and checkpoints there).
pub fn run_dir(out: &Path, job: &Job) -> PathBuf {
    out.join("jobs").join(job.id())
}

fn io(path: &Path, source: std::io::Error) -> ExperimentError {
    ExperimentError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Removes a job's working directory when `clear` (a restarted job must not
/// resume checkpoints of an earlier computation).
pub(crate) fn clear_dir(dir: &Path, clear: bool) -> Result<(), ExperimentError> {
    if clear && dir.is_dir() {
        std::fs::remove_dir_all(dir).map_err(|e| io(dir, e))?;
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, then a rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ExperimentError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

/// Stores the result of `job`, stamped with [`SOURCE_HASH`].
pub(crate) fn save(out: &Path, job: &Job, row: &ResultRow) -> Result<(), ExperimentError> {
    let text = serde_json::to_string_pretty(&(job.key(), row, SOURCE_HASH))
        .expect("plain data serialises");
    write_atomic(&job_path(out, job), text.as_bytes())
}

/// The stored result of `job` if this build computed it.
pub(crate) fn load(out: &Path, job: &Job) -> Result<Option<ResultRow>, ExperimentError> {
    Ok(match status(out, job)? {
        Stored::Fresh(row) => Some(row),
        Stored::Missing | Stored::Stale | Stored::Unreadable(_) => None,
    })
}

/// What is stored for `job` (a file for another key, or one that is not a
/// result of this format, counts as missing).
pub(crate) fn status(out: &Path, job: &Job) -> Result<Stored, ExperimentError> {
    let path = job_path(out, job);
    let text = match crate::input_file::read_text(&path, crate::input_file::MAX_INPUT_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Stored::Missing),
        Err(e) => return Err(io(&path, e)),
    };
    // A file that does not parse (a file cut short outside fedtopo) is no
    // result: `run` names it, recomputes and overwrites it; `assemble`
    // reports the job as missing. The format before source stamps is stale.
    let parsed = serde_json::from_str::<(String, ResultRow, String)>(&text);
    if let Ok((key, row, source)) = parsed {
        if key != job.key() {
            return Ok(Stored::Missing);
        }
        return Ok(if source == SOURCE_HASH {
            Stored::Fresh(row)
        } else {
            Stored::Stale
        });
    }
    Ok(match serde_json::from_str::<(String, ResultRow)>(&text) {
        Ok((key, _)) if key == job.key() => Stored::Stale,
        Ok(_) => Stored::Missing,
        Err(_) => Stored::Unreadable(match parsed {
            Err(e) => e.to_string(),
            Ok(_) => "not a result".into(),
        }),
    })
}

/// Copies the results of `jobs` found under `from` into `out`, byte for
/// byte (parsing a float and printing it again may move its last digit);
/// returns how many were copied.
pub fn import_jobs(jobs: &[Job], from: &Path, out: &Path) -> Result<usize, ExperimentError> {
    let mut copied = 0;
    for job in jobs {
        if load(from, job)?.is_some() {
            // A training job's per-round metrics travel with its result.
            let metrics = run_dir(from, job).join("metrics.csv");
            if metrics.is_file() {
                let bytes = std::fs::read(&metrics).map_err(|e| io(&metrics, e))?;
                write_atomic(&run_dir(out, job).join("metrics.csv"), &bytes)?;
            }
            let stored = job_path(from, job);
            let bytes = std::fs::read(&stored).map_err(|e| io(&stored, e))?;
            write_atomic(&job_path(out, job), &bytes)?;
            copied += 1;
        }
    }
    Ok(copied)
}
