//! What a progress line says and when one is due: pure functions of the
//! counters and the clock, so that the decisions are tested without
//! threads or terminals.

use std::time::Duration;

/// One task's counters at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// What is being done (`run fig3`, `mixing`, `fastest-mixing weights`).
    pub label: String,
    /// What is counted (`jobs`, `overlays`, `iterations`).
    pub unit: String,
    /// Steps done.
    pub done: u64,
    /// Steps in all.
    pub total: u64,
    /// Work done, in the task's own units of cost (the steps when the
    /// task gives no weights).
    pub work_done: f64,
    /// Work in all.
    pub work_total: f64,
    /// What is being done now (the current overlay, job, ...).
    pub message: String,
    /// Time since the task started.
    pub elapsed: Duration,
    /// Time since the last step finished (or the task started): how long
    /// the current step has been running.
    pub in_step: Duration,
}

impl Snapshot {
    /// Remaining time at the rate so far, weighted by work: `elapsed x
    /// (work left) / (work done)`; `None` before any work is done, and
    /// `None` once the current step has run longer than that: the steps
    /// are then clearly not alike (an overlay that takes minutes after
    /// ones that took milliseconds) and no honest figure is known.
    pub fn eta(&self) -> Option<Duration> {
        eta(self.elapsed, self.work_done, self.work_total)
            .filter(|&e| e.is_zero() || self.in_step <= e)
    }
}

/// How long a step must run before the line says so (`(ring for 41.0 s)`).
pub const SHOW_STEP_AFTER: Duration = Duration::from_secs(5);

/// `elapsed x (total - done) / done`: the remaining time when the work
/// left goes at the rate of the work done; `None` when nothing is done
/// yet (no rate to extrapolate) or the numbers are not finite.
pub fn eta(elapsed: Duration, done: f64, total: f64) -> Option<Duration> {
    if !(done > 0.0 && done.is_finite() && total.is_finite()) {
        return None;
    }
    let left = (total - done).max(0.0);
    let secs = elapsed.as_secs_f64() * left / done;
    Duration::try_from_secs_f64(secs).ok()
}

/// A duration for people: `12.3 s` below a minute, `4.2 min` below an
/// hour, else `1.5 h`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// `DONE/TOTAL UNIT`, or `DONE UNIT` when the total is not known (0).
fn count(s: &Snapshot) -> String {
    if s.total == 0 {
        format!("{} {}", s.done, s.unit)
    } else {
        format!("{}/{} {}", s.done, s.total, s.unit)
    }
}

/// `, eta R` (`eta ?` before the first step); nothing when the total is
/// not known.
fn eta_part(s: &Snapshot) -> String {
    if s.total == 0 {
        return String::new();
    }
    format!(", eta {}", s.eta().map_or_else(|| "?".to_string(), human))
}

fn message_part(s: &Snapshot) -> String {
    let long = s.in_step >= SHOW_STEP_AFTER && s.total > 0 && s.done < s.total;
    match (s.message.is_empty(), long) {
        (true, false) => String::new(),
        (false, false) => format!(" ({})", s.message),
        (true, true) => format!(" (this one for {})", human(s.in_step)),
        (false, true) => format!(" ({} for {})", s.message, human(s.in_step)),
    }
}

/// `LABEL: DONE/TOTAL UNIT done (MESSAGE), E elapsed, eta R` (`eta ?`
/// before the first step; `DONE UNIT done` and no eta when the total is
/// not known).
pub fn root_line(s: &Snapshot) -> String {
    format!(
        "{}: {} done{}, {} elapsed{}",
        s.label,
        count(s),
        message_part(s),
        human(s.elapsed),
        eta_part(s)
    )
}

/// A nested task, shorter: `LABEL: DONE/TOTAL UNIT (MESSAGE), eta R`.
pub fn nested_line(s: &Snapshot) -> String {
    format!(
        "{}: {}{}{}",
        s.label,
        count(s),
        message_part(s),
        eta_part(s)
    )
}

/// The status of a stack of tasks, outermost first: the outermost in full,
/// the nested ones after ` | `.
pub fn status_line(stack: &[Snapshot]) -> String {
    let mut parts = Vec::with_capacity(stack.len());
    for (i, s) in stack.iter().enumerate() {
        parts.push(if i == 0 { root_line(s) } else { nested_line(s) });
    }
    parts.join(" | ")
}

/// When the next line is due (timer-driven reporting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cadence {
    /// Nothing is printed before the command has run this long (short
    /// commands stay silent).
    pub first_after: Duration,
    /// Then a line at most this often.
    pub every: Duration,
}

impl Cadence {
    /// Whether a line is due `since_start` after the reporter started,
    /// `since_last` after the last line (`None`: none printed yet).
    pub fn due(&self, since_start: Duration, since_last: Option<Duration>) -> bool {
        if since_start < self.first_after {
            return false;
        }
        since_last.is_none_or(|d| d >= self.every)
    }
}

/// Projected total duration from which a task gets a one-time cost
/// estimate line.
pub const ESTIMATE_FROM: Duration = Duration::from_secs(60);

/// The one-time cost estimate of a task, when its projected total
/// (elapsed + eta) reaches [`ESTIMATE_FROM`]: `estimate: LABEL (MESSAGE):
/// about T in all at the rate so far (D/N UNIT in E); HINT`.
pub fn estimate_line(s: &Snapshot, hint: Option<&str>) -> Option<String> {
    if s.total == 0 {
        return None;
    }
    let eta = s.eta()?;
    let projected = s.elapsed + eta;
    if projected < ESTIMATE_FROM {
        return None;
    }
    let message = if s.message.is_empty() {
        String::new()
    } else {
        format!(" ({})", s.message)
    };
    let hint = hint.map_or_else(String::new, |h| format!("; {h}"));
    Some(format!(
        "estimate: {}{message}: about {} in all at the rate so far ({}/{} {} in {}), {} left{hint}",
        s.label,
        human(projected),
        s.done,
        s.total,
        s.unit,
        human(s.elapsed),
        human(eta)
    ))
}

/// `line` cut to `width` characters (a terminal status line must not wrap,
/// or redrawing it in place fails), the cut marked with `…`.
pub fn fit(line: &str, width: usize) -> String {
    if line.chars().count() <= width || width == 0 {
        return line.to_string();
    }
    let mut s: String = line.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(done: u64, total: u64, secs: u64) -> Snapshot {
        Snapshot {
            label: "run".into(),
            unit: "jobs".into(),
            done,
            total,
            work_done: done as f64,
            work_total: total as f64,
            message: String::new(),
            elapsed: Duration::from_secs(secs),
            in_step: Duration::ZERO,
        }
    }

    #[test]
    fn the_eta_scales_the_elapsed_time_by_the_work_left() {
        assert_eq!(
            root_line(&snap(25, 100, 10)),
            "run: 25/100 jobs done, 10.0 s elapsed, eta 30.0 s"
        );
        assert_eq!(
            root_line(&snap(0, 100, 1)),
            "run: 0/100 jobs done, 1.0 s elapsed, eta ?"
        );
        // An open-ended task: no total, no eta.
        assert_eq!(root_line(&snap(3, 0, 2)), "run: 3 jobs done, 2.0 s elapsed");
        // Weighted: the first quarter of the jobs is a tenth of the work.
        let mut s = snap(25, 100, 10);
        s.work_done = 10.0;
        s.work_total = 100.0;
        assert_eq!(s.eta(), Some(Duration::from_secs(90)));
        assert_eq!(eta(Duration::from_secs(5), f64::NAN, 3.0), None);
        assert_eq!(eta(Duration::from_secs(5), 4.0, 3.0), Some(Duration::ZERO));
    }

    /// `compare` on 2000 silos: star and mst in 0.1 s, then the ring for
    /// minutes. The rate of the first steps says nothing about the ring:
    /// once the step outlasts the eta, the line says `eta ?` and how long
    /// the step has run.
    #[test]
    fn a_step_outlasting_the_eta_makes_it_unknown() {
        let mut s = snap(3, 5, 41);
        s.label = "compare".into();
        s.unit = "overlays".into();
        s.message = "ring".into();
        s.in_step = Duration::from_secs(40);
        assert_eq!(s.eta(), None);
        assert_eq!(
            root_line(&s),
            "compare: 3/5 overlays done (ring for 40.0 s), 41.0 s elapsed, eta ?"
        );
        assert_eq!(estimate_line(&s, None), None);
        s.in_step = Duration::from_secs(2);
        assert!(s.eta().is_some());
        assert!(root_line(&s).ends_with("eta 27.3 s"), "{}", root_line(&s));
    }

    #[test]
    fn durations_read_in_the_right_unit() {
        assert_eq!(human(Duration::from_millis(12_340)), "12.3 s");
        assert_eq!(human(Duration::from_secs(252)), "4.2 min");
        assert_eq!(human(Duration::from_secs(5400)), "1.5 h");
    }

    #[test]
    fn nested_tasks_follow_the_outermost() {
        let mut inner = snap(120, 2000, 7);
        inner.label = "fastest-mixing weights".into();
        inner.unit = "iterations".into();
        inner.message = "ring-opt".into();
        let mut outer = snap(2, 6, 30);
        outer.label = "mixing".into();
        outer.unit = "overlays".into();
        let l = status_line(&[outer, inner]);
        assert_eq!(
            l,
            "mixing: 2/6 overlays done, 30.0 s elapsed, eta 1.0 min | \
             fastest-mixing weights: 120/2000 iterations (ring-opt), eta 1.8 min"
        );
    }

    #[test]
    fn a_line_is_due_after_the_first_delay_then_every_interval() {
        let c = Cadence {
            first_after: Duration::from_secs(3),
            every: Duration::from_secs(5),
        };
        assert!(
            !c.due(Duration::from_secs(2), None),
            "short commands stay silent"
        );
        assert!(c.due(Duration::from_secs(3), None));
        assert!(!c.due(Duration::from_secs(6), Some(Duration::from_secs(3))));
        assert!(c.due(Duration::from_secs(9), Some(Duration::from_secs(5))));
        let every_update = Cadence {
            first_after: Duration::ZERO,
            every: Duration::ZERO,
        };
        assert!(every_update.due(Duration::ZERO, Some(Duration::ZERO)));
    }

    #[test]
    fn an_estimate_only_for_long_work() {
        // 1 of 2000 iterations in 2 s: about 67 min in all.
        let mut s = snap(1, 2000, 2);
        s.label = "fastest-mixing weights".into();
        s.unit = "iterations".into();
        let l = estimate_line(&s, Some("--iterations N shortens it")).unwrap();
        assert_eq!(
            l,
            "estimate: fastest-mixing weights: about 1.1 h in all at the rate so far \
             (1/2000 iterations in 2.0 s), 1.1 h left; --iterations N shortens it"
        );
        assert_eq!(estimate_line(&snap(10, 20, 20), None), None, "40 s in all");
        assert_eq!(estimate_line(&snap(0, 20, 90), None), None, "no rate yet");
    }

    #[test]
    fn status_lines_fit_the_terminal() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
        assert_eq!(fit("ab", 0), "ab");
    }
}
