//! Progress of long work, reported the way the `log` crate reports
//! records: library code opens a [`Task`] around a long loop and counts its
//! steps; nothing is shown, and almost nothing is spent, unless a program
//! installs a [`Reporter`]. The `fedtopo` binary installs one for every
//! command; the Python bindings and library users install none.
//!
//! The reporter is timer-driven: it prints on stderr (never stdout, so
//! outputs stay byte-identical) the status of the running tasks, outermost
//! first, e.g. `mixing: 2/6 overlays done (ring-opt), 30.0 s elapsed, eta
//! 1.0 min | fastest-mixing weights: 120/2000 iterations, eta 1.8 min`;
//! nothing before [`DEFAULT_FIRST_AFTER`] (short commands stay silent),
//! then a line every [`DEFAULT_INTERVAL_MS`] ms when stderr is not a
//! terminal, or one status line redrawn in place every second on a
//! terminal. The eta extrapolates the rate so far, weighted by each step's
//! expected cost when the task gives one ([`Task::inc_work`]; `run` weighs
//! jobs by silos²). A task whose projected duration reaches
//! [`line::ESTIMATE_FROM`] gets a one-time `estimate:` line with the
//! task's hint (which option shortens it).
//!
//! Tasks only count on the thread that installed the reporter: work inside
//! parallel jobs reports through the job counter of the task around them,
//! not line by line. `FEDTOPO_PROGRESS_INTERVAL_MS` sets the interval
//! (`0`: a line at every step, for tests and debugging).

pub mod counted;
pub mod line;
mod reporter;
mod task;

pub use reporter::{Reporter, ReporterConfig};
pub use task::Task;

/// Environment variable: milliseconds between two progress lines.
pub const INTERVAL_ENV: &str = "FEDTOPO_PROGRESS_INTERVAL_MS";

/// Default milliseconds between two progress lines off a terminal.
pub const DEFAULT_INTERVAL_MS: u64 = 5000;

/// Milliseconds between two redraws of the status line on a terminal.
pub const TERMINAL_INTERVAL_MS: u64 = 1000;

/// Nothing is printed before a command has run this long.
pub const DEFAULT_FIRST_AFTER: std::time::Duration = std::time::Duration::from_secs(3);
