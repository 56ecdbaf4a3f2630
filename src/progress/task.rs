//! [`Task`]: a unit of long work the library counts, and the registry the
//! reporter reads.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::Instant;

use super::line::{self, Cadence, Snapshot};

/// A unit of long work: `total` steps of `unit`, counted with
/// [`Task::inc`]. Registered with the installed [`super::Reporter`] (if
/// any, and only on its thread) until dropped or [`Task::finish`]ed;
/// otherwise every call is a no-op.
#[derive(Debug)]
pub struct Task {
    state: Option<Arc<TaskState>>,
}

#[derive(Debug)]
pub(super) struct TaskState {
    id: u64,
    label: String,
    unit: String,
    start: Instant,
    counters: Mutex<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    done: u64,
    total: u64,
    work_done: f64,
    work_total: f64,
    weighted: bool,
    message: String,
    hint: Option<String>,
    /// The one-time estimate was printed.
    estimated: bool,
    /// A status line showing this task was printed.
    shown: bool,
    /// When `done` last changed (the current step's start).
    step_start: Option<Instant>,
}

/// Where lines go: the installed reporter's side.
pub(super) struct Sink {
    pub(super) owner: ThreadId,
    pub(super) out: Box<dyn Write + Send>,
    /// Terminal width when the status line is redrawn in place; `None`:
    /// one line per report.
    pub(super) terminal: Option<usize>,
    pub(super) cadence: Cadence,
    pub(super) started: Instant,
    pub(super) last: Option<Instant>,
    /// A status line is drawn on the terminal (to clear before other text).
    pub(super) drawn: bool,
}

#[derive(Default)]
pub(super) struct Registry {
    pub(super) sink: Option<Sink>,
    tasks: Vec<Arc<TaskState>>,
    next_id: u64,
}

/// True while a reporter is installed (checked before taking any lock).
pub(super) static ACTIVE: AtomicBool = AtomicBool::new(false);

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    sink: None,
    tasks: Vec::new(),
    next_id: 0,
});

/// The registry; a panic while holding it only loses progress lines.
pub(super) fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

fn lock(c: &Mutex<Counters>) -> MutexGuard<'_, Counters> {
    c.lock().unwrap_or_else(|e| e.into_inner())
}

impl TaskState {
    fn snapshot(&self) -> (Snapshot, Option<String>) {
        let c = lock(&self.counters);
        let (work_done, work_total) = if c.weighted {
            (c.work_done, c.work_total)
        } else {
            (c.done as f64, c.total as f64)
        };
        (
            Snapshot {
                label: self.label.clone(),
                unit: self.unit.clone(),
                done: c.done,
                total: c.total,
                work_done,
                work_total,
                message: c.message.clone(),
                elapsed: self.start.elapsed(),
                in_step: c.step_start.unwrap_or(self.start).elapsed(),
            },
            c.hint.clone(),
        )
    }
}

impl Task {
    /// Starts a task of `total` steps of `unit` named `label`.
    pub fn start(label: &str, unit: &str, total: u64) -> Task {
        if !ACTIVE.load(Ordering::Relaxed) {
            return Task { state: None };
        }
        let mut r = registry();
        let here = std::thread::current().id();
        if r.sink.as_ref().is_none_or(|s| s.owner != here) {
            return Task { state: None };
        }
        r.next_id += 1;
        let state = Arc::new(TaskState {
            id: r.next_id,
            label: label.to_string(),
            unit: unit.to_string(),
            start: Instant::now(),
            counters: Mutex::new(Counters {
                total,
                ..Counters::default()
            }),
        });
        r.tasks.push(state.clone());
        Task { state: Some(state) }
    }

    /// True when a reporter shows this task (callers may skip building
    /// messages otherwise).
    pub fn is_shown(&self) -> bool {
        self.state.is_some()
    }

    fn update(&self, f: impl FnOnce(&mut Counters), report: bool) {
        let Some(s) = &self.state else { return };
        if report {
            // Every-update mode: the step and its line under one lock, so
            // that steps counted at once on two threads get a line each.
            let mut r = registry();
            if r.sink.as_ref().is_some_and(|s| s.cadence.every.is_zero()) {
                f(&mut lock(&s.counters));
                r.report(true);
                return;
            }
        }
        f(&mut lock(&s.counters));
    }

    /// `n` more steps done.
    pub fn inc(&self, n: u64) {
        self.update(
            |c| {
                c.done += n;
                c.step_start = Some(Instant::now());
            },
            true,
        );
    }

    /// `done` steps done.
    pub fn set(&self, done: u64) {
        self.update(
            |c| {
                if c.done != done {
                    c.step_start = Some(Instant::now());
                }
                c.done = done;
            },
            true,
        );
    }

    /// The total number of steps, when known only later.
    pub fn set_total(&self, total: u64) {
        self.update(|c| c.total = total, false);
    }

    /// Weighs the steps: `work_total` units of cost in all; then count
    /// with [`Task::inc_work`] so that the eta follows the cost, not the
    /// step count.
    pub fn set_work_total(&self, work_total: f64) {
        self.update(
            |c| {
                c.weighted = true;
                c.work_total = work_total;
            },
            false,
        );
    }

    /// One more step done, of cost `work` (units of [`Task::set_work_total`]).
    pub fn inc_work(&self, work: f64) {
        self.update(
            |c| {
                c.done += 1;
                c.work_done += work;
                c.step_start = Some(Instant::now());
            },
            true,
        );
    }

    /// What is being done now (shown in parentheses).
    pub fn message(&self, message: &str) {
        self.update(|c| c.message = message.to_string(), false);
    }

    /// What shortens the task (`--iterations N`), shown with its cost
    /// estimate.
    pub fn hint(&self, hint: &str) {
        self.update(|c| c.hint = Some(hint.to_string()), false);
    }

    /// Ends the task (also done on drop): the outermost task's last line
    /// when any line showed it, off a terminal.
    pub fn finish(&self) {
        let Some(s) = &self.state else { return };
        let mut r = registry();
        let Some(pos) = r.tasks.iter().position(|t| t.id == s.id) else {
            return;
        };
        let root = pos == 0;
        if root && lock(&s.counters).shown {
            if let Some(sink) = r.sink.as_mut() {
                if sink.terminal.is_none() {
                    let line = line::status_line(&[s.snapshot().0]);
                    sink.write_line(&line);
                }
            }
        }
        r.tasks.remove(pos);
        if root {
            if let Some(sink) = r.sink.as_mut() {
                sink.clear();
            }
        }
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Sink {
    /// Writes one whole line (clearing a drawn status line first).
    pub(super) fn write_line(&mut self, text: &str) {
        self.clear();
        // Progress is best effort: a closed stderr must not stop the work.
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }

    /// Draws the status line in place (terminal) or writes it (lines).
    fn status(&mut self, text: &str) {
        match self.terminal {
            Some(width) => {
                let _ = write!(self.out, "\r\x1b[2K{}", line::fit(text, width));
                let _ = self.out.flush();
                self.drawn = true;
            }
            None => self.write_line(text),
        }
    }

    /// Removes a drawn status line.
    pub(super) fn clear(&mut self) {
        if self.drawn {
            let _ = write!(self.out, "\r\x1b[2K");
            let _ = self.out.flush();
            self.drawn = false;
        }
    }
}

impl Registry {
    /// Prints the status of the running tasks (and any cost estimate now
    /// due) when the cadence says a line is due, or always when `force`.
    pub(super) fn report(&mut self, force: bool) {
        let Some(sink) = self.sink.as_mut() else {
            return;
        };
        if self.tasks.is_empty() {
            return;
        }
        let now = Instant::now();
        let due = sink.cadence.due(
            now.duration_since(sink.started),
            sink.last.map(|l| now.duration_since(l)),
        );
        if !(due || force) {
            return;
        }
        let mut stack = Vec::with_capacity(self.tasks.len());
        for t in &self.tasks {
            let (snap, hint) = t.snapshot();
            let mut c = lock(&t.counters);
            if !c.estimated {
                if let Some(e) = line::estimate_line(&snap, hint.as_deref()) {
                    c.estimated = true;
                    sink.write_line(&e);
                }
            }
            c.shown = true;
            stack.push(snap);
        }
        sink.status(&line::status_line(&stack));
        sink.last = Some(now);
    }
}
