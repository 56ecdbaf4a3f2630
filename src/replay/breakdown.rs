//! Where each round's time goes: for every silo and round, the time spent
//! computing, the time its last-needed model was in flight, and the time
//! it waited for that model to be sent; and the critical path of the whole
//! run through them.
//!
//! Silo `i`'s round `k` runs from its start `t_i(k)` to the start of its
//! next round `t_i(k+1)` (ms). It computes first, until `ready_i(k) =
//! t_i(k) + c_i(k)`; the round then ends when the last model it needs
//! arrives (gossip: every in-neighbour's model; the STAR centre: every
//! upload; a STAR client: the centre's broadcast), or at `ready_i(k)` when
//! every model was already there. With the binding model sent at `s` and
//! delivered at `t_i(k+1)`:
//!
//! ```text
//! compute  = ready_i(k) - t_i(k)
//! transfer = t_i(k+1) - max(s, ready_i(k))     (the model in flight while silo i idled)
//! wait     = max(s, ready_i(k)) - ready_i(k)   (idle before the model even left)
//! ```
//!
//! so that `compute + transfer + wait = t_i(k+1) - t_i(k)` (to rounding); a
//! round ended by the silo's own computation (the model arrived no later
//! than `ready_i(k)`, ties included) has `transfer = wait = 0`. The binding
//! model's sender is the round's `via`: following `via` from the silo that
//! ends the run last gives the run's critical path ([`Breakdown::critical_path`]),
//! the chain of computations and transfers whose durations add up to the
//! makespan.

use serde::Serialize;

use crate::engine::fx::FxHashMap;
use crate::units::Ms;

/// Most silo-rounds a batch replay records (8 numbers each): a replay
/// with more is refused when asked for a breakdown
/// ([`super::ReplayError::BreakdownTooLarge`]).
pub const MAX_BREAKDOWN_ROWS: u64 = 5_000_000;

/// Where one silo's round went (module docs), ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SiloRound {
    /// The round `k`.
    pub round: u64,
    /// The silo `i`.
    pub silo: usize,
    /// `t_i(k)`, ms.
    pub start_ms: Ms,
    /// When the silo finished computing, ms.
    pub ready_ms: Ms,
    /// Computing, ms.
    pub compute_ms: Ms,
    /// The binding model in flight while the silo idled, ms.
    pub transfer_ms: Ms,
    /// Idle before the binding model was sent, ms.
    pub wait_ms: Ms,
    /// `t_i(k+1)`, ms.
    pub end_ms: Ms,
    /// Sender of the binding model; `None` when the round ended with the
    /// silo's own computation.
    pub via: Option<usize>,
    /// When the binding model was sent, ms (NaN without one).
    pub via_sent_ms: Ms,
}

/// True when the model `a = (delivered, sent, from)` rather than `b`
/// ends a round: the later delivery; on a tie the later send (the shorter
/// transfer), then the lower sender. The rule, not the order in which the
/// engine hands simultaneous deliveries over, picks the binding model, so
/// that every way of timing a round agrees on it.
pub(crate) fn binds_before(a: (Ms, Ms, usize), b: (Ms, Ms, usize)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && (a.1 > b.1 || (a.1 == b.1 && a.2 < b.2)))
}

/// Silo `silo`'s round `round`, from its start, when it finished
/// computing, its end and the binding model `(delivered, sent, from)`
/// (module docs).
pub(crate) fn silo_round(
    round: u64,
    silo: usize,
    start: Ms,
    ready: Ms,
    end: Ms,
    binding: Option<(Ms, Ms, usize)>,
) -> SiloRound {
    match binding {
        Some((at, sent, from)) if at > ready => {
            let left = sent.max(ready);
            SiloRound {
                round,
                silo,
                start_ms: start,
                ready_ms: ready,
                compute_ms: ready - start,
                transfer_ms: end - left,
                wait_ms: left - ready,
                end_ms: end,
                via: Some(from),
                via_sent_ms: sent,
            }
        }
        _ => SiloRound {
            round,
            silo,
            start_ms: start,
            ready_ms: ready,
            compute_ms: ready - start,
            transfer_ms: 0.0,
            wait_ms: end - ready,
            end_ms: end,
            via: None,
            via_sent_ms: f64::NAN,
        },
    }
}

/// Records [`SiloRound`]s while the round protocol runs.
#[derive(Debug, Default)]
pub(crate) struct BreakdownRecorder {
    /// Start of each silo's current round, ms.
    start: Vec<Ms>,
    /// When each silo finished computing its current round, ms.
    ready: Vec<Ms>,
    /// Send times of the transfers in flight, by `(from, to, round)`.
    sent: FxHashMap<(usize, usize, u64), Ms>,
    /// Latest delivery into `(silo, round)`: `(delivered, sent, from)`.
    latest: FxHashMap<(usize, u64), (Ms, Ms, usize)>,
    /// Finished silo-rounds, in the order they ended.
    pub(crate) rows: Vec<SiloRound>,
    /// Under churn ([`super::churn`]): when silo `i` finished computing
    /// round `k` (rows are made when a round is complete, from its start
    /// times, instead of when each silo ends it).
    computed_round: FxHashMap<(usize, u64), Ms>,
}

impl BreakdownRecorder {
    /// A recorder over `silos` silos, all starting round 0 at 0 ms.
    pub(crate) fn new(silos: usize) -> Self {
        BreakdownRecorder {
            start: vec![0.0; silos],
            ready: vec![f64::NAN; silos],
            ..Default::default()
        }
    }

    /// Silo `i` finished computing its current round at `now`.
    pub(crate) fn computed(&mut self, i: usize, now: Ms) {
        self.ready[i] = now;
    }

    /// A transfer of round `k` from `from` to `to` leaves at `now`.
    pub(crate) fn sent(&mut self, from: usize, to: usize, k: u64, now: Ms) {
        self.sent.insert((from, to, k), now);
    }

    /// The transfer of round `k` from `from` to `to` arrived at `now`.
    pub(crate) fn delivered(&mut self, from: usize, to: usize, k: u64, now: Ms) {
        let sent = self.sent.remove(&(from, to, k)).unwrap_or(f64::NAN);
        let new = (now, sent, from);
        let e = self.latest.entry((to, k)).or_insert(new);
        if binds_before(new, *e) {
            *e = new;
        }
    }

    /// Silo `i` ended round `k` (and starts round `k + 1`) at `now`.
    /// Under churn: silo `i` finished computing round `k` at `now`.
    pub(crate) fn computed_round(&mut self, i: usize, k: u64, now: Ms) {
        self.computed_round.insert((i, k), now);
    }

    /// Under churn: every silo has started round `k + 1`; `start` and
    /// `end` are `t(k)` and `t(k+1)`. A silo absent from round `k` (its
    /// start time stands still while it is away) neither computes nor
    /// receives: its absence is waiting, in the round it rejoins from. A round ended
    /// by a skip or a time out rather than by a model's arrival has no
    /// `via`: its idle time is waiting.
    pub(crate) fn round_complete(&mut self, k: u64, start: &[Ms], end: &[Ms]) {
        for (i, (&s, &e)) in start.iter().zip(end).enumerate() {
            let ready = self
                .computed_round
                .remove(&(i, k))
                .map_or(s, |r| r.clamp(s, e.max(s)));
            let binding = self.latest.remove(&(i, k)).filter(|b| b.0 == e);
            self.rows.push(silo_round(k, i, s, ready, e, binding));
        }
        // Entries of silos that left the round another way.
        self.computed_round.retain(|&(_, r), _| r > k);
        self.latest.retain(|&(_, r), _| r > k);
        self.sent.retain(|&(_, _, r), _| r > k);
    }

    pub(crate) fn ended(&mut self, i: usize, k: u64, now: Ms) {
        let start = self.start[i];
        let ready = self.ready[i];
        let latest = self.latest.remove(&(i, k));
        let row = silo_round(k, i, start, ready, now, latest);
        self.rows.push(row);
        self.start[i] = now;
        self.ready[i] = f64::NAN;
    }
}

/// Every silo's rounds of a replay (module docs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Breakdown {
    /// Silos.
    pub silos: usize,
    /// `rows[k * silos + i]`: silo `i`'s round `k`, for the rounds every
    /// silo completed.
    pub rows: Vec<SiloRound>,
}

/// The mean over silos of one round's [`SiloRound`]s, ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RoundShare {
    /// The round.
    pub round: u64,
    /// Mean computing time, ms.
    pub compute_ms: Ms,
    /// Mean transfer time, ms.
    pub transfer_ms: Ms,
    /// Mean waiting time, ms.
    pub wait_ms: Ms,
    /// The silo that ended the round last.
    pub last_silo: usize,
    /// When it did, ms.
    pub end_ms: Ms,
}

/// One step of the run's critical path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CriticalStep {
    /// `"compute"` or `"transfer"`; `"wait"` for a round that ended after
    /// the silo's computation without a model's arrival (a skip or a time
    /// out under churn, [`super::churn`]; never under `wait`).
    pub kind: &'static str,
    /// The computing silo, or the transfer's sender.
    pub from: usize,
    /// The computing silo, or the transfer's receiver.
    pub to: usize,
    /// The round (of the computation, or of the receiver).
    pub round: u64,
    /// Start, ms.
    pub start_ms: Ms,
    /// End, ms.
    pub end_ms: Ms,
}

impl Breakdown {
    /// Orders the rows of the rounds every silo completed by round, then
    /// silo (the other rows are dropped: an unfinished round).
    pub(crate) fn from_rows(silos: usize, mut rows: Vec<SiloRound>) -> Self {
        rows.sort_by_key(|r| (r.round, r.silo));
        let mut complete = 0;
        while complete < rows.len() / silos.max(1)
            && rows[complete * silos..(complete + 1) * silos]
                .iter()
                .enumerate()
                .all(|(i, r)| r.silo == i && r.round == complete as u64)
        {
            complete += 1;
        }
        rows.truncate(complete * silos);
        Breakdown { silos, rows }
    }

    /// Rounds recorded.
    pub fn rounds(&self) -> u64 {
        (self.rows.len() / self.silos.max(1)) as u64
    }

    /// When the last recorded round ended (its last silo), ms: the
    /// replay's makespan over these rounds, and the critical path's end.
    pub fn makespan_ms(&self) -> Ms {
        let k = self.rounds().saturating_sub(1) as usize * self.silos;
        self.rows
            .get(k..)
            .unwrap_or_default()
            .iter()
            .map(|r| r.end_ms)
            .fold(0.0, f64::max)
    }

    /// Silo `i`'s round `k`.
    pub fn get(&self, k: u64, i: usize) -> Option<&SiloRound> {
        if i >= self.silos {
            return None;
        }
        self.rows.get((k as usize).checked_mul(self.silos)? + i)
    }

    /// Mean compute, transfer and wait over silos, per round.
    pub fn per_round(&self) -> Vec<RoundShare> {
        self.rows
            .chunks(self.silos.max(1))
            .map(|rs| {
                let n = rs.len() as f64;
                let mean = |f: fn(&SiloRound) -> Ms| rs.iter().map(f).sum::<Ms>() / n;
                let last = rs
                    .iter()
                    .max_by(|a, b| a.end_ms.total_cmp(&b.end_ms))
                    .copied();
                RoundShare {
                    round: rs[0].round,
                    compute_ms: mean(|r| r.compute_ms),
                    transfer_ms: mean(|r| r.transfer_ms),
                    wait_ms: mean(|r| r.wait_ms),
                    last_silo: last.map_or(0, |r| r.silo),
                    end_ms: last.map_or(0.0, |r| r.end_ms),
                }
            })
            .collect()
    }

    /// The run's critical path, in time order: from the silo that ended
    /// the last recorded round last, back along each round's binding model
    /// (its sender's computation when the model left as the sender
    /// finished computing, or the sender's round end for a broadcast) to
    /// time 0. Its steps are contiguous and span the makespan.
    pub fn critical_path(&self) -> Vec<CriticalStep> {
        self.critical_path_until(self.rounds())
    }

    /// [`Self::critical_path`] of the first `rounds` rounds: from the silo
    /// that ended round `rounds - 1` last back to time 0.
    pub fn critical_path_until(&self, rounds: u64) -> Vec<CriticalStep> {
        let rounds = rounds.min(self.rounds());
        let Some(last) = rounds.checked_sub(1) else {
            return Vec::new();
        };
        let Some(mut at) = (0..self.silos)
            .filter_map(|i| self.get(last, i))
            .max_by(|a, b| a.end_ms.total_cmp(&b.end_ms))
            .copied()
        else {
            return Vec::new();
        };
        let mut steps = Vec::new();
        // Each step moves back a round or to a strictly earlier end.
        let mut budget = 3 * self.rows.len() + 3;
        loop {
            budget -= 1;
            if budget == 0 {
                break;
            }
            let r = at;
            // How round `r` of silo `r.silo` reached its end.
            let (compute_of, next) = match r.via {
                None => (Some(r), None),
                Some(j) => {
                    steps.push(CriticalStep {
                        kind: "transfer",
                        from: j,
                        to: r.silo,
                        round: r.round,
                        start_ms: r.via_sent_ms,
                        end_ms: r.end_ms,
                    });
                    // The sender's round that sent it: the model left when
                    // it finished computing (gossip, uploads; a lagged
                    // model left an earlier round), or when it ended a
                    // round (a broadcast).
                    let s = r.via_sent_ms;
                    let sender = (0..=r.round)
                        .rev()
                        .filter_map(|k| self.get(k, j))
                        .find(|x| x.ready_ms == s || x.end_ms == s);
                    match sender {
                        Some(x) if x.end_ms == s && x.ready_ms != s => (None, Some(*x)),
                        Some(x) => (Some(*x), None),
                        None => break,
                    }
                }
            };
            if let Some(x) = next {
                at = x;
                continue;
            }
            let Some(x) = compute_of else { break };
            // A round that ended after its computation with no model
            // (under churn: a skip or a time out) waited to its end.
            if r.via.is_none() && x.end_ms > x.ready_ms {
                steps.push(CriticalStep {
                    kind: "wait",
                    from: x.silo,
                    to: x.silo,
                    round: x.round,
                    start_ms: x.ready_ms,
                    end_ms: x.end_ms,
                });
            }
            steps.push(CriticalStep {
                kind: "compute",
                from: x.silo,
                to: x.silo,
                round: x.round,
                start_ms: x.start_ms,
                end_ms: x.ready_ms,
            });
            match x.round.checked_sub(1).and_then(|k| self.get(k, x.silo)) {
                Some(prev) => at = *prev,
                None => break,
            }
        }
        steps.reverse();
        steps
    }
}
