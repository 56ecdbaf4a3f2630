//! Job results on disk: one JSON file per job, written atomically
//! (temporary file + rename), so a killed sweep never leaves a partial file.
//! Each result records the fingerprint of the source that computed it
//! ([`SOURCE_HASH`]); a result from other code is *stale*: `run` recomputes
//! it and says so, `assemble` does not use it.
//!
//! A result file is `{"fnv1a64": H, "result": [key, row, source]}`, `H`
//! the 64-bit FNV-1a hash of the exact text of `result`: a file edited
//! outside fedtopo (a value changed by hand, bytes lost or flipped) no
//! longer matches its hash and is *unreadable*, like a truncated or
//! non-UTF-8 file: `run` names it on stderr and recomputes it, `assemble`
//! does not use it. The hash detects accidents, not forgery (anyone can
//! recompute it).
//!
//! `OUT/jobs/experiment.fingerprint` names the experiment whose results
//! `OUT` holds ([`claim`]): running another experiment into the same `OUT`
//! is refused instead of replacing its `results.csv`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::grid::Job;
use super::hash::fnv1a64;
use super::row::ResultRow;
use super::spec::{ExperimentKind, ExperimentSpec};
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
    /// A file that is not a result (cut short outside fedtopo, edited, not
    /// UTF-8): why. `run` recomputes it and says so.
    Unreadable(String),
}

/// A stored result file: the hash of the exact text of `result`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    fnv1a64: String,
    #[serde(borrow)]
    result: &'a RawValue,
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

/// The bytes of `path` (a regular file, [`crate::input_file`]).
fn read(path: &Path) -> Result<Vec<u8>, ExperimentError> {
    crate::input_file::read_bytes(path, crate::input_file::MAX_INPUT_BYTES).map_err(|e| io(path, e))
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

/// The text of a result file for `(key, row, source)` ([`Envelope`]).
fn result_text(key: &str, row: &ResultRow, source: &str) -> String {
    let payload = serde_json::to_string_pretty(&(key, row, source))
        .unwrap_or_else(|e| format!("\"unserialisable result: {e}\""))
        .replace('\n', "\n  ");
    format!(
        "{{\n  \"fnv1a64\": \"{:016x}\",\n  \"result\": {payload}\n}}\n",
        fnv1a64(payload.as_bytes())
    )
}

/// Stores the result of `job`, stamped with [`SOURCE_HASH`] and hashed.
pub(crate) fn save(out: &Path, job: &Job, row: &ResultRow) -> Result<(), ExperimentError> {
    let text = result_text(&job.key(), row, SOURCE_HASH);
    write_atomic(&job_path(out, job), text.as_bytes())
}

/// The stored result of `job` if this build computed it.
pub(crate) fn load(out: &Path, job: &Job) -> Result<Option<ResultRow>, ExperimentError> {
    Ok(match status(out, job)? {
        Stored::Fresh(row) => Some(row),
        Stored::Missing | Stored::Stale | Stored::Unreadable(_) => None,
    })
}

/// What is stored for `job` (a file for another key counts as missing).
///
/// # Errors
/// The file exists but cannot be read, or is not a regular file (a FIFO
/// or a directory where a result should be is not waited on or replaced).
pub(crate) fn status(out: &Path, job: &Job) -> Result<Stored, ExperimentError> {
    let path = job_path(out, job);
    let bytes = match crate::input_file::read_bytes(&path, crate::input_file::MAX_INPUT_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Stored::Missing),
        Err(e) => return Err(io(&path, e)),
    };
    Ok(parse_stored(&bytes, &job.key()))
}

/// What the bytes of a result file hold for the job of key `key`.
fn parse_stored(bytes: &[u8], key: &str) -> Stored {
    // A file that is not text, does not parse or does not match its hash
    // (cut short or edited outside fedtopo) is no result: `run` names it,
    // recomputes and overwrites it; `assemble` reports the job as missing.
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Stored::Unreadable("not UTF-8 text".into());
    };
    let envelope = match serde_json::from_str::<Envelope<'_>>(text) {
        Ok(e) => e,
        // Formats before the hash (with or without a source stamp):
        // written by other code, so stale when they are this job's.
        Err(e) => {
            return match serde_json::from_str::<(String, ResultRow, String)>(text)
                .map(|(k, ..)| k)
                .or_else(|_| serde_json::from_str::<(String, ResultRow)>(text).map(|(k, _)| k))
            {
                Ok(k) if k == key => Stored::Stale,
                Ok(_) => Stored::Missing,
                Err(_) => Stored::Unreadable(e.to_string()),
            }
        }
    };
    let payload = envelope.result.get();
    let hash = format!("{:016x}", fnv1a64(payload.as_bytes()));
    if hash != envelope.fnv1a64 {
        return Stored::Unreadable(format!(
            "its FNV-1a hash is {hash}, not the {} stored with it: edited outside fedtopo",
            envelope.fnv1a64
        ));
    }
    match serde_json::from_str::<(String, ResultRow, String)>(payload) {
        Ok((k, _, _)) if k != key => Stored::Missing,
        Ok((_, row, source)) if source == SOURCE_HASH => Stored::Fresh(row),
        Ok(_) => Stored::Stale,
        Err(e) => Stored::Unreadable(e.to_string()),
    }
}

/// The experiment whose results an output directory holds
/// (`OUT/jobs/experiment.fingerprint`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fingerprint {
    /// The experiment's `name`.
    name: String,
    /// Its `kind`.
    kind: ExperimentKind,
    /// FNV-1a hash of the experiment file's bytes, 16 hex digits.
    fnv1a64: String,
}

impl Fingerprint {
    fn of(spec: &ExperimentSpec) -> Self {
        Fingerprint {
            name: spec.name.clone(),
            kind: spec.kind,
            fnv1a64: format!("{:016x}", spec.file_fnv1a64),
        }
    }

    fn text(&self) -> String {
        let mut t = serde_json::to_string_pretty(self).unwrap_or_default();
        t.push('\n');
        t
    }
}

/// Where the experiment fingerprint of `out` lives.
pub fn fingerprint_path(out: &Path) -> PathBuf {
    out.join("jobs").join("experiment.fingerprint")
}

/// The fingerprint stored in `dir` (`None`: none yet).
fn stored_fingerprint(dir: &Path) -> Result<Option<Fingerprint>, ExperimentError> {
    let path = fingerprint_path(dir);
    let text = match crate::input_file::read_text(&path, 1 << 20) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&path, e)),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        ExperimentError::Invalid(format!(
            "{}: not an experiment fingerprint ({e}); remove it to use {} for this experiment",
            path.display(),
            dir.display()
        ))
    })
}

/// An error unless `found` (stored in `dir`) is the fingerprint of the
/// same experiment as `want`: same name and kind.
fn same_experiment(
    dir: &Path,
    found: &Fingerprint,
    want: &Fingerprint,
) -> Result<(), ExperimentError> {
    if found.name == want.name && found.kind == want.kind {
        return Ok(());
    }
    Err(ExperimentError::Invalid(format!(
        "{} holds the results of experiment `{}` (kind {}), not of `{}` (kind {}): two \
         experiments in one directory would overwrite each other's results.csv; use another \
         --out, or remove {} to start over there",
        dir.display(),
        found.name,
        found.kind.name(),
        want.name,
        want.kind.name(),
        dir.join("jobs").display()
    )))
}

/// Marks `out` as holding the results of `spec`: writes its fingerprint
/// when `out` has none (atomically, and exclusively: of two experiments
/// started at once into a fresh directory, one is refused), refuses when
/// `out` holds another experiment's results (another name or kind), and
/// updates it when the same experiment's file changed (an edited
/// experiment resumes: stored results are keyed by their parameters).
/// Returns a note when the file changed.
///
/// # Errors
/// `out` holds another experiment; its fingerprint cannot be read or
/// written.
pub fn claim(spec: &ExperimentSpec, out: &Path) -> Result<Option<String>, ExperimentError> {
    let want = Fingerprint::of(spec);
    let path = fingerprint_path(out);
    let found = match stored_fingerprint(out)? {
        Some(f) => f,
        None => match create_exclusive(&path, want.text().as_bytes())? {
            true => return Ok(None),
            // Another process created it meanwhile.
            false => stored_fingerprint(out)?.ok_or_else(|| {
                ExperimentError::Invalid(format!("{}: vanished while read", path.display()))
            })?,
        },
    };
    same_experiment(out, &found, &want)?;
    if found == want {
        return Ok(None);
    }
    write_atomic(&path, want.text().as_bytes())?;
    Ok(Some(format!(
        "the experiment file changed since its last run into {} (fingerprint {} -> {}); \
         stored job results are reused where a job's parameters are the same",
        out.display(),
        found.fnv1a64,
        want.fnv1a64
    )))
}

/// An error when `from` holds the results of another experiment than
/// `spec` (a directory without a fingerprint passes: results written
/// before fingerprints, or copied by hand).
pub fn check_source(spec: &ExperimentSpec, from: &Path) -> Result<(), ExperimentError> {
    match stored_fingerprint(from)? {
        Some(found) => same_experiment(from, &found, &Fingerprint::of(spec)),
        None => Ok(()),
    }
}

/// Creates `path` with `bytes` when it does not exist: a temporary file
/// hard-linked into place (fails when `path` exists, whoever wrote it).
/// Returns false when `path` already existed. Where hard links are not
/// supported, a plain rename (not exclusive).
fn create_exclusive(path: &Path, bytes: &[u8]) -> Result<bool, ExperimentError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| io(&tmp, e))?;
    let linked = std::fs::hard_link(&tmp, path);
    let result = match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(_) => std::fs::rename(&tmp, path)
            .map(|()| true)
            .map_err(|e| io(path, e)),
    };
    let _ = std::fs::remove_file(&tmp);
    result
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
            if crate::input_file::is_regular_file(&metrics).map_err(|e| io(&metrics, e))? {
                let bytes = read(&metrics)?;
                write_atomic(&run_dir(out, job).join("metrics.csv"), &bytes)?;
            }
            let bytes = read(&job_path(from, job))?;
            write_atomic(&job_path(out, job), &bytes)?;
            copied += 1;
        }
    }
    Ok(copied)
}
