//! Progress of a counted loop (`run`'s jobs, `simulate`'s rounds, `train`'s
//! rounds) on stderr: a [`crate::progress::Task`] shown by the reporter the
//! CLI installs (timer-driven: a status line redrawn on a terminal, else a
//! line every few seconds such as `run fig3: 37/96 jobs done, 12.3 s
//! elapsed, eta 19.8 s`). Nothing is ever written to stdout, so outputs
//! stay byte-identical.

use crate::progress::Task;

pub use crate::progress::{DEFAULT_INTERVAL_MS, INTERVAL_ENV};

/// A progress report: a task, or nothing when hidden.
#[derive(Debug)]
pub struct Progress {
    task: Option<Task>,
}

impl Progress {
    /// A progress report of `total` steps (`unit`: `jobs`, `rounds`) named
    /// `label`; hidden when `!show`. `_bar_template` is kept for callers
    /// written for the former indicatif bar; the reporter draws its own
    /// status line.
    pub fn new(label: &str, unit: &str, total: u64, show: bool, _bar_template: &str) -> Progress {
        Progress {
            task: show.then(|| Task::start(label, unit, total)),
        }
    }

    /// One more step done.
    pub fn inc(&self, n: u64) {
        if let Some(t) = &self.task {
            t.inc(n);
        }
    }

    /// One more step done, of cost `work` (units of [`Self::set_work_total`]).
    pub fn inc_work(&self, work: f64) {
        if let Some(t) = &self.task {
            t.inc_work(work);
        }
    }

    /// Weighs the steps by their expected cost (`work_total` in all), so
    /// that the eta follows the cost rather than the step count.
    pub fn set_work_total(&self, work_total: f64) {
        if let Some(t) = &self.task {
            t.set_work_total(work_total);
        }
    }

    /// `done` steps done.
    pub fn set_position(&self, done: u64) {
        if let Some(t) = &self.task {
            t.set(done);
        }
    }

    /// What is being done now (in parentheses on the line).
    pub fn set_message(&self, message: &str) {
        if let Some(t) = &self.task {
            t.message(message);
        }
    }

    /// Ends the report (the last line when any was printed).
    pub fn finish(&self) {
        if let Some(t) = &self.task {
            t.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_progress_is_silent() {
        let p = Progress::new("x", "jobs", 3, false, "{bar}");
        p.inc(1);
        p.finish();
        assert!(p.task.is_none());
    }
}
