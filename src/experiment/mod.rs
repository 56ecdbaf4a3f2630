//! Experiments as data: a TOML file declares a parameter grid, what to run
//! on each point and which outputs to write (CSV, Markdown, SVG plots).
//!
//! * [`spec`]: the file format.
//! * [`row`]: a job's result row and its [`Cell`]s (also the grid values).
//! * [`grid`]: expansion into jobs in a fixed order; `--shard i/n` slices.
//! * [`validate`]: every grid point checked before any job runs (all
//!   problems reported at once).
//! * [`run`]: running jobs in parallel (rayon); each job's result is written
//!   atomically to `OUT/jobs/<id>.json`, so an interrupted sweep resumes
//!   where it stopped and shards run anywhere.
//! * [`assemble`](mod@assemble): joining job results, in grid order, into `results.csv`,
//!   `results.md` and the plots — byte-identical whatever the thread count
//!   or sharding; [`aggregate`] adds the summaries over one axis (seeds).

pub mod aggregate;
pub mod assemble;
pub mod grid;
mod hash;
mod jobs;
mod point;
mod program_job;
pub mod row;
pub mod run;
pub mod spec;
mod store;
pub mod validate;

use thiserror::Error;

pub use assemble::assemble;
pub use grid::{check_grid_size, expand, grid_size, Job, Shard, MAX_GRID_JOBS};
pub use jobs::run_job;
pub use row::{Cell, ResultRow};
pub use run::{run_jobs, RunOptions, RunSummary};
pub use spec::{ExperimentKind, ExperimentSpec, Grid, PlotSpec};
pub use store::{check_source, claim, fingerprint_path, import_jobs, job_path};
pub use validate::validate_grid;

/// Why an experiment could not run.
#[derive(Debug, Error)]
pub enum ExperimentError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The experiment file is malformed.
    #[error("{file}:{line}:{col}: {message}")]
    Spec {
        /// The file.
        file: String,
        /// 1-based line (0 when unknown).
        line: usize,
        /// 1-based column (0 when unknown).
        col: usize,
        /// What was expected.
        message: String,
    },
    /// A value in the grid is not usable.
    #[error("{0}")]
    Invalid(String),
    /// Grid points that cannot run, all of them (found before any job ran).
    #[error("{name}: {} problem(s) in the grid, no job was run:\n  - {}", problems.len(), problems.join("\n  - "))]
    Grid {
        /// The experiment's name.
        name: String,
        /// Each problem, naming the axis or underlay and the value.
        problems: Vec<String>,
    },
    /// A job failed.
    #[error("job {index} ({key}): {message}")]
    Job {
        /// Grid index.
        index: usize,
        /// Job parameters.
        key: String,
        /// The cause.
        message: String,
    },
    /// Results are missing for some jobs.
    #[error("{missing} of {total} jobs have no result in {dir} (run the remaining shards, or `fedtopo run` without --shard)")]
    Missing {
        /// Jobs without result.
        missing: usize,
        /// All jobs.
        total: usize,
        /// Where results were looked for.
        dir: String,
    },
}
