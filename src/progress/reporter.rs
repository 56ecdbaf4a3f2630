//! [`Reporter`]: the timer thread that prints the running tasks' status.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::line::Cadence;
use super::task::{registry, Sink, ACTIVE};
use super::{DEFAULT_FIRST_AFTER, DEFAULT_INTERVAL_MS, INTERVAL_ENV, TERMINAL_INTERVAL_MS};

/// How a reporter prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReporterConfig {
    /// When lines are due.
    pub cadence: Cadence,
    /// Redraw one status line in place, cut to this many columns (a
    /// terminal); `None`: one line per report (a log, a pipe).
    pub terminal_width: Option<usize>,
}

impl ReporterConfig {
    /// The configuration for stderr: a status line redrawn every
    /// [`TERMINAL_INTERVAL_MS`] on a terminal (`terminal_width` columns,
    /// 80 when unknown), else a line every [`DEFAULT_INTERVAL_MS`];
    /// `FEDTOPO_PROGRESS_INTERVAL_MS` overrides the interval (lines then,
    /// even on a terminal; `0`: a line at every step from the start).
    pub fn for_stderr(terminal_width: Option<usize>) -> ReporterConfig {
        let env = std::env::var(INTERVAL_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok());
        Self::choose(env, std::io::stderr().is_terminal(), terminal_width)
    }

    /// [`Self::for_stderr`] as a function of the environment's interval
    /// (ms), whether stderr is a terminal and its width.
    pub fn choose(
        interval_ms: Option<u64>,
        terminal: bool,
        width: Option<usize>,
    ) -> ReporterConfig {
        match (interval_ms, terminal) {
            (Some(ms), _) => ReporterConfig {
                cadence: Cadence {
                    first_after: DEFAULT_FIRST_AFTER.min(Duration::from_millis(ms)),
                    every: Duration::from_millis(ms),
                },
                terminal_width: None,
            },
            (None, true) => ReporterConfig {
                cadence: Cadence {
                    first_after: DEFAULT_FIRST_AFTER,
                    every: Duration::from_millis(TERMINAL_INTERVAL_MS),
                },
                terminal_width: Some(width.unwrap_or(80)),
            },
            (None, false) => ReporterConfig {
                cadence: Cadence {
                    first_after: DEFAULT_FIRST_AFTER,
                    every: Duration::from_millis(DEFAULT_INTERVAL_MS),
                },
                terminal_width: None,
            },
        }
    }
}

/// The installed reporter: tasks started on this thread are shown until
/// it is dropped.
pub struct Reporter {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Reporter {
    /// Installs a reporter writing to `out`, owned by the calling thread;
    /// `None` when one is already installed.
    pub fn install(config: ReporterConfig, out: Box<dyn Write + Send>) -> Option<Reporter> {
        {
            let mut r = registry();
            if r.sink.is_some() {
                return None;
            }
            r.sink = Some(Sink {
                owner: std::thread::current().id(),
                out,
                terminal: config.terminal_width,
                cadence: config.cadence,
                started: Instant::now(),
                last: None,
                drawn: false,
            });
            ACTIVE.store(true, Ordering::SeqCst);
        }
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        // Every-update mode prints from the updating thread: no timer.
        let thread = (!config.cadence.every.is_zero()).then(|| {
            let stop = stop.clone();
            let tick = (config.cadence.every / 4)
                .clamp(Duration::from_millis(20), Duration::from_millis(250));
            std::thread::spawn(move || {
                let (flag, wake) = &*stop;
                let mut stopped = flag.lock().unwrap_or_else(|e| e.into_inner());
                while !*stopped {
                    stopped = wake
                        .wait_timeout(stopped, tick)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                    if !*stopped {
                        registry().report(false);
                    }
                }
            })
        });
        Some(Reporter { stop, thread })
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        {
            let (flag, wake) = &*self.stop;
            *flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
            wake.notify_all();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let mut r = registry();
        if let Some(s) = r.sink.as_mut() {
            s.clear();
        }
        r.sink = None;
        ACTIVE.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Task;
    use super::*;

    /// One reporter at a time in the whole process: the tests that install
    /// one take turns.
    static TURN: Mutex<()> = Mutex::new(());

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn text(s: &Shared) -> String {
        String::from_utf8(s.0.lock().unwrap().clone()).unwrap()
    }

    fn every(ms: u64, first_ms: u64) -> ReporterConfig {
        ReporterConfig {
            cadence: Cadence {
                first_after: Duration::from_millis(first_ms),
                every: Duration::from_millis(ms),
            },
            terminal_width: None,
        }
    }

    #[test]
    fn every_update_mode_prints_a_line_per_step_and_one_at_the_end() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let out = Shared::default();
        let r = Reporter::install(every(0, 0), Box::new(out.clone())).unwrap();
        assert!(Reporter::install(every(0, 0), Box::new(out.clone())).is_none());
        let t = Task::start("run t", "jobs", 3);
        t.inc(1);
        t.message("ring");
        t.inc(1);
        t.set(3);
        t.finish();
        drop(r);
        let t = text(&out);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{t}");
        assert!(lines[0].starts_with("run t: 1/3 jobs done, "), "{t}");
        assert!(lines[1].starts_with("run t: 2/3 jobs done (ring), "), "{t}");
        assert!(lines[3].starts_with("run t: 3/3 jobs done (ring), "), "{t}");
        assert!(lines[3].ends_with("eta 0.0 s"), "{t}");
    }

    #[test]
    fn the_timer_reports_while_no_step_finishes() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let out = Shared::default();
        let r = Reporter::install(every(30, 30), Box::new(out.clone())).unwrap();
        let t = Task::start("design", "candidates", 4);
        let inner = Task::start("fastest-mixing weights", "iterations", 100);
        inner.inc(1);
        // No step for a while: the timer still reports, with both tasks.
        std::thread::sleep(Duration::from_millis(400));
        drop(inner);
        drop(t);
        drop(r);
        let t = text(&out);
        let status: Vec<&str> = t
            .lines()
            .filter(|l| l.starts_with("design: 0/4 candidates done"))
            .collect();
        assert!(status.len() >= 3, "{t}");
        assert!(
            status[0].contains(" | fastest-mixing weights: 1/100 iterations, eta "),
            "{t}"
        );
    }

    #[test]
    fn short_work_and_other_threads_stay_silent() {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        let out = Shared::default();
        let r = Reporter::install(every(10, 3_600_000), Box::new(out.clone())).unwrap();
        let t = Task::start("compare", "overlays", 2);
        t.inc(2);
        std::thread::spawn(|| {
            let other = Task::start("job", "rounds", 9);
            assert!(!other.is_shown(), "tasks of other threads are not shown");
            other.inc(9);
        })
        .join()
        .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        drop(t);
        drop(r);
        assert_eq!(text(&out), "");
        // No reporter: tasks are not shown at all.
        assert!(!Task::start("x", "y", 1).is_shown());
    }

    #[test]
    fn stderr_config_follows_the_terminal_and_the_environment() {
        let c = ReporterConfig::choose(None, true, Some(120));
        assert_eq!(c.terminal_width, Some(120));
        assert_eq!(c.cadence.every, Duration::from_millis(TERMINAL_INTERVAL_MS));
        let c = ReporterConfig::choose(None, false, None);
        assert_eq!(c.terminal_width, None);
        assert_eq!(c.cadence.every, Duration::from_millis(DEFAULT_INTERVAL_MS));
        assert_eq!(c.cadence.first_after, DEFAULT_FIRST_AFTER);
        let c = ReporterConfig::choose(Some(0), true, Some(120));
        assert_eq!((c.terminal_width, c.cadence.every), (None, Duration::ZERO));
        assert_eq!(c.cadence.first_after, Duration::ZERO);
    }
}
