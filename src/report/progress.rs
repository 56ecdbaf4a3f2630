//! Progress of a long run on stderr: an indicatif bar on a terminal,
//! otherwise (a batch job's log, a pipe) a plain line every few seconds,
//! e.g. `run fig3: 37/96 jobs done, 12.3 s elapsed, eta 19.8 s`.
//!
//! Nothing is ever written to stdout, so outputs stay byte-identical.
//! The interval of the lines is `FEDTOPO_PROGRESS_INTERVAL_MS` (default
//! [`DEFAULT_INTERVAL_MS`]); `0` prints a line at every update.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Environment variable: milliseconds between two progress lines when
/// stderr is not a terminal.
pub const INTERVAL_ENV: &str = "FEDTOPO_PROGRESS_INTERVAL_MS";

/// Default milliseconds between two progress lines.
pub const DEFAULT_INTERVAL_MS: u64 = 5000;

/// A progress report: hidden, a terminal bar, or periodic lines.
pub struct Progress {
    mode: Mode,
}

enum Mode {
    Hidden,
    Bar(ProgressBar),
    Lines(Mutex<Lines>),
}

/// State of the line mode.
struct Lines {
    label: String,
    unit: String,
    total: u64,
    done: u64,
    message: String,
    start: Instant,
    last: Instant,
    interval: Duration,
    printed: bool,
    out: Box<dyn Write + Send>,
}

impl Progress {
    /// A progress report of `total` steps (`unit`: `jobs`, `rounds`) named
    /// `label`: hidden when `!show`, the indicatif bar of `bar_template`
    /// (its `{prefix}` is `label`) when stderr is a terminal, else lines
    /// every `FEDTOPO_PROGRESS_INTERVAL_MS` on stderr.
    pub fn new(label: &str, unit: &str, total: u64, show: bool, bar_template: &str) -> Progress {
        if !show {
            return Progress { mode: Mode::Hidden };
        }
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total);
            if let Ok(style) = ProgressStyle::with_template(bar_template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_prefix(label.to_string());
            return Progress {
                mode: Mode::Bar(bar),
            };
        }
        Progress::lines(
            label,
            unit,
            total,
            interval_from_env(),
            Box::new(std::io::stderr()),
        )
    }

    /// Line mode writing to `out`, a line at most every `interval` (and one
    /// at the end when any was written).
    pub fn lines(
        label: &str,
        unit: &str,
        total: u64,
        interval: Duration,
        out: Box<dyn Write + Send>,
    ) -> Progress {
        let now = Instant::now();
        Progress {
            mode: Mode::Lines(Mutex::new(Lines {
                label: label.to_string(),
                unit: unit.to_string(),
                total,
                done: 0,
                message: String::new(),
                start: now,
                last: now,
                interval,
                printed: false,
                out,
            })),
        }
    }

    /// One more step done.
    pub fn inc(&self, n: u64) {
        match &self.mode {
            Mode::Hidden => {}
            Mode::Bar(b) => b.inc(n),
            Mode::Lines(l) => with(l, |l| {
                l.done += n;
                l.tick();
            }),
        }
    }

    /// `done` steps done.
    pub fn set_position(&self, done: u64) {
        match &self.mode {
            Mode::Hidden => {}
            Mode::Bar(b) => b.set_position(done),
            Mode::Lines(l) => with(l, |l| {
                l.done = done;
                l.tick();
            }),
        }
    }

    /// What is being done now (the bar's `{msg}`; in parentheses on a line).
    pub fn set_message(&self, message: &str) {
        match &self.mode {
            Mode::Hidden => {}
            Mode::Bar(b) => b.set_message(message.to_string()),
            Mode::Lines(l) => with(l, |l| l.message = message.to_string()),
        }
    }

    /// Clears the bar; in line mode, a last line when any was printed.
    pub fn finish(&self) {
        match &self.mode {
            Mode::Hidden => {}
            Mode::Bar(b) => b.finish_and_clear(),
            Mode::Lines(l) => with(l, |l| {
                if l.printed {
                    l.print();
                }
            }),
        }
    }
}

fn with(lines: &Mutex<Lines>, f: impl FnOnce(&mut Lines)) {
    // A panic while holding the lock only loses progress lines.
    if let Ok(mut l) = lines.lock() {
        f(&mut l);
    }
}

impl Lines {
    fn tick(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last) >= self.interval {
            self.last = now;
            self.print();
        }
    }

    fn print(&mut self) {
        let line = progress_line(
            &self.label,
            &self.unit,
            self.done,
            self.total,
            &self.message,
            self.start.elapsed(),
        );
        // Progress is best effort: a closed stderr must not stop the run.
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
        self.printed = true;
    }
}

/// `LABEL: DONE/TOTAL UNIT done (MESSAGE), E s elapsed, eta R s`; the eta
/// assumes the remaining steps take as long as the done ones (`eta ?`
/// before the first).
pub fn progress_line(
    label: &str,
    unit: &str,
    done: u64,
    total: u64,
    message: &str,
    elapsed: Duration,
) -> String {
    let secs = elapsed.as_secs_f64();
    let eta = if done == 0 {
        "?".to_string()
    } else {
        let left = total.saturating_sub(done) as f64;
        format!("{:.1} s", secs * left / done as f64)
    };
    let message = if message.is_empty() {
        String::new()
    } else {
        format!(" ({message})")
    };
    format!("{label}: {done}/{total} {unit} done{message}, {secs:.1} s elapsed, eta {eta}")
}

/// `FEDTOPO_PROGRESS_INTERVAL_MS`, else the default; an unreadable value
/// gets the default.
fn interval_from_env() -> Duration {
    let ms = std::env::var(INTERVAL_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(DEFAULT_INTERVAL_MS);
    Duration::from_millis(ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

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

    #[test]
    fn interval_zero_prints_a_line_per_update_and_one_at_the_end() {
        let out = Shared::default();
        let p = Progress::lines("run t", "jobs", 3, Duration::ZERO, Box::new(out.clone()));
        p.inc(1);
        p.set_message("ring");
        p.inc(1);
        p.set_position(3);
        p.finish();
        let t = text(&out);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{t}");
        assert!(lines[0].starts_with("run t: 1/3 jobs done, "), "{t}");
        assert!(lines[1].starts_with("run t: 2/3 jobs done (ring), "), "{t}");
        assert!(lines[3].starts_with("run t: 3/3 jobs done (ring), "), "{t}");
        assert!(lines[3].ends_with("eta 0.0 s"), "{t}");
    }

    #[test]
    fn a_long_interval_prints_nothing_for_a_short_run() {
        let out = Shared::default();
        let p = Progress::lines(
            "x",
            "rounds",
            5,
            Duration::from_secs(3600),
            Box::new(out.clone()),
        );
        for _ in 0..5 {
            p.inc(1);
        }
        p.finish();
        assert_eq!(text(&out), "");
    }

    #[test]
    fn the_eta_scales_the_elapsed_time() {
        let l = progress_line("run", "jobs", 25, 100, "", Duration::from_secs(10));
        assert_eq!(l, "run: 25/100 jobs done, 10.0 s elapsed, eta 30.0 s");
        let l = progress_line("run", "jobs", 0, 100, "", Duration::from_secs(1));
        assert_eq!(l, "run: 0/100 jobs done, 1.0 s elapsed, eta ?");
    }

    #[test]
    fn hidden_progress_is_silent() {
        let p = Progress::new("x", "jobs", 3, false, "{bar}");
        p.inc(1);
        p.finish();
        assert!(matches!(p.mode, Mode::Hidden));
    }
}
