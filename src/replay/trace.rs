//! What happened in a window of rounds of a replay, event by event: when
//! each silo finished computing, every transfer's send and delivery, and
//! the critical path through them (the chain of computations and
//! transfers that decided when the last silo ended the window). It is what
//! a round timeline (Gantt chart, [`crate::report::gantt`]) draws.
//!
//! Recorded by the round protocol when [`super::ReplayOptions::trace`]
//! asks for it; the memory is bounded by the window (at most
//! [`MAX_TRACED_TRANSFERS`] transfers).

use std::collections::HashMap;

use serde::Serialize;

use crate::units::Ms;

/// Most transfers a trace records; a window with more stops recording
/// transfers and says so ([`RoundTrace::truncated`]).
pub const MAX_TRACED_TRANSFERS: usize = 1_000_000;

/// Which rounds to trace: rounds `first..first + count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TraceWindow {
    /// First traced round.
    pub first: u64,
    /// Number of traced rounds (0: no trace).
    pub count: u64,
}

impl TraceWindow {
    /// True when round `k` is traced.
    pub fn contains(&self, k: u64) -> bool {
        k >= self.first && k - self.first < self.count
    }
}

/// One model transfer of a traced round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TracedTransfer {
    /// Sending silo.
    pub from: usize,
    /// Receiving silo.
    pub to: usize,
    /// Round whose model it carries.
    pub round: u64,
    /// When it was sent, ms.
    pub sent_ms: Ms,
    /// When its last bit arrived, ms (NaN if it never did).
    pub delivered_ms: Ms,
}

/// A window of rounds of a replay, event by event (module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundTrace {
    /// The traced rounds.
    pub first: u64,
    /// Number of traced rounds.
    pub count: u64,
    /// `compute_end[k - first][i]`: when silo `i` finished computing round
    /// `k`, ms (NaN if it did not, e.g. beyond the replay's last round).
    pub compute_end: Vec<Vec<Ms>>,
    /// Every transfer of the traced rounds, in the order they were sent.
    pub transfers: Vec<TracedTransfer>,
    /// The centre of a server-client (STAR) replay.
    pub star_center: Option<usize>,
    /// True when the window held more than [`MAX_TRACED_TRANSFERS`]
    /// transfers and the rest were not recorded.
    pub truncated: bool,
}

/// One step of a critical path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum PathStep {
    /// Silo `silo` computing round `round` from `from_ms` to `to_ms`.
    Compute {
        /// The silo.
        silo: usize,
        /// Its round.
        round: u64,
        /// Start, ms.
        from_ms: Ms,
        /// End, ms.
        to_ms: Ms,
    },
    /// A model of round `round` travelling from `from` to `to`.
    Transfer {
        /// Sender.
        from: usize,
        /// Receiver.
        to: usize,
        /// Round.
        round: u64,
        /// Sent, ms.
        sent_ms: Ms,
        /// Delivered, ms.
        delivered_ms: Ms,
    },
}

impl PathStep {
    /// `(start, end)` of the step, ms.
    pub fn span(&self) -> (Ms, Ms) {
        match *self {
            PathStep::Compute { from_ms, to_ms, .. } => (from_ms, to_ms),
            PathStep::Transfer {
                sent_ms,
                delivered_ms,
                ..
            } => (sent_ms, delivered_ms),
        }
    }
}

/// Records a [`RoundTrace`] while the round protocol runs.
#[derive(Debug)]
pub(crate) struct TraceRecorder {
    window: TraceWindow,
    compute_end: Vec<Vec<Ms>>,
    transfers: Vec<TracedTransfer>,
    index: HashMap<(usize, usize, u64), usize>,
    star_center: Option<usize>,
    truncated: bool,
}

impl TraceRecorder {
    /// A recorder of `window` over `silos` silos.
    pub(crate) fn new(window: TraceWindow, silos: usize, star_center: Option<usize>) -> Self {
        TraceRecorder {
            window,
            compute_end: vec![vec![f64::NAN; silos]; window.count as usize],
            transfers: Vec::new(),
            index: HashMap::new(),
            star_center,
            truncated: false,
        }
    }

    /// Silo `i` finished computing round `k` at `now`.
    pub(crate) fn computed(&mut self, i: usize, k: u64, now: Ms) {
        if self.window.contains(k) {
            self.compute_end[(k - self.window.first) as usize][i] = now;
        }
    }

    /// A transfer of round `k` from `from` to `to` starts at `now`.
    pub(crate) fn sent(&mut self, from: usize, to: usize, k: u64, now: Ms) {
        if !self.window.contains(k) {
            return;
        }
        if self.transfers.len() >= MAX_TRACED_TRANSFERS {
            self.truncated = true;
            return;
        }
        self.index.insert((from, to, k), self.transfers.len());
        self.transfers.push(TracedTransfer {
            from,
            to,
            round: k,
            sent_ms: now,
            delivered_ms: f64::NAN,
        });
    }

    /// The transfer of round `k` from `from` to `to` arrived at `now`.
    pub(crate) fn delivered(&mut self, from: usize, to: usize, k: u64, now: Ms) {
        if let Some(&x) = self.index.get(&(from, to, k)) {
            self.transfers[x].delivered_ms = now;
        }
    }

    /// The trace.
    pub(crate) fn finish(self) -> RoundTrace {
        RoundTrace {
            first: self.window.first,
            count: self.window.count,
            compute_end: self.compute_end,
            transfers: self.transfers,
            star_center: self.star_center,
            truncated: self.truncated,
        }
    }
}

/// Two times equal up to rounding, ms.
fn same(a: Ms, b: Ms) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

impl RoundTrace {
    /// The part of this trace in rounds `first..first + count` (within
    /// the traced ones).
    pub fn window(&self, first: u64, count: u64) -> RoundTrace {
        let first = first.max(self.first);
        let end = (first.saturating_add(count)).min(self.first + self.count);
        let count = end.saturating_sub(first);
        let from = (first - self.first) as usize;
        RoundTrace {
            first,
            count,
            compute_end: self.compute_end[from..from + count as usize].to_vec(),
            transfers: self
                .transfers
                .iter()
                .filter(|t| t.round >= first && t.round < end)
                .copied()
                .collect(),
            star_center: self.star_center,
            truncated: self.truncated,
        }
    }

    /// When silo `i` finished computing round `k`, if traced.
    pub fn compute_end(&self, k: u64, i: usize) -> Option<Ms> {
        if k < self.first {
            return None;
        }
        self.compute_end
            .get((k - self.first) as usize)
            .and_then(|r| r.get(i))
            .copied()
            .filter(|t| t.is_finite())
    }

    /// The critical path of the window, in time order: from the start of
    /// round `first` to the silo that started round `first + count` last,
    /// every step the one that made the next wait (module docs). `starts`
    /// are the replay's `t_i(k)` ([`super::ReplayResult::starts`]). The
    /// steps are contiguous: each starts when the one before it ends.
    /// Empty when the window is empty, beyond the replay, or truncated.
    pub fn critical_path(&self, starts: &[Vec<Ms>]) -> Vec<PathStep> {
        let end = self.first + self.count;
        if self.count == 0 || self.truncated || end as usize >= starts.len() {
            return Vec::new();
        }
        let last = &starts[end as usize];
        let Some(mut i) = (0..last.len()).max_by(|&a, &b| last[a].total_cmp(&last[b])) else {
            return Vec::new();
        };
        // Deliveries into each silo, per round.
        let mut into: HashMap<(usize, u64), Vec<&TracedTransfer>> = HashMap::new();
        for t in &self.transfers {
            if t.delivered_ms.is_finite() {
                into.entry((t.to, t.round)).or_default().push(t);
            }
        }
        let mut k = end;
        let mut steps = Vec::new();
        // Each iteration explains t_i(k); at most two steps per silo and round.
        let mut budget = 2 * (self.count as usize + 1) * last.len() + 4;
        while k > self.first && budget > 0 {
            budget -= 1;
            let t = starts[k as usize][i];
            let compute = self.compute_end(k - 1, i);
            let latest = into
                .get(&(i, k - 1))
                .and_then(|v| {
                    v.iter()
                        .max_by(|a, b| a.delivered_ms.total_cmp(&b.delivered_ms))
                })
                .copied();
            let by_compute = compute.is_some_and(|c| same(c, t))
                && latest.is_none_or(|d| d.delivered_ms <= compute.unwrap_or(0.0));
            if by_compute {
                steps.push(PathStep::Compute {
                    silo: i,
                    round: k - 1,
                    from_ms: starts[(k - 1) as usize][i],
                    to_ms: t,
                });
                k -= 1;
                continue;
            }
            let Some(d) = latest.filter(|d| same(d.delivered_ms, t)) else {
                // Not explained by what was recorded: stop here.
                break;
            };
            steps.push(PathStep::Transfer {
                from: d.from,
                to: i,
                round: d.round,
                sent_ms: d.sent_ms,
                delivered_ms: d.delivered_ms,
            });
            let j = d.from;
            match self.compute_end(k - 1, j) {
                // Sent when the sender finished computing (gossip, a STAR
                // client's upload).
                Some(c) if same(c, d.sent_ms) => {
                    steps.push(PathStep::Compute {
                        silo: j,
                        round: k - 1,
                        from_ms: starts[(k - 1) as usize][j],
                        to_ms: c,
                    });
                    i = j;
                    k -= 1;
                }
                // Sent when the sender started round k (the STAR centre's
                // broadcast of the round-(k-1) aggregate).
                _ if j != i && same(starts[k as usize][j], d.sent_ms) => i = j,
                _ => break,
            }
        }
        steps.reverse();
        steps
    }
}
