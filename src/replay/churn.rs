//! Churn in synchronous rounds: what the round protocol of [`super::replay`]
//! does about silos that a trace ([`crate::net::dynamics`]) sets down, under an
//! [`AvailabilityPolicy`] other than `Wait`.
//!
//! * **`skip`** (a failure detector): a silo waiting for the round-`k`
//!   models of its in-neighbours does not wait for one that is down, and no
//!   silo sends to a silo that is down. The STAR centre likewise aggregates
//!   the models of the clients that are up and broadcasts to those that are
//!   up. A silo that was left out is *absent*: it takes no part in rounds
//!   until it rejoins. The centre is never skipped (nothing runs without
//!   it: rounds wait for it).
//! * **`timeout:MS`** (no failure detector): a silo (the STAR centre) waits
//!   at most `MS` ms after its local steps for the round's models, then
//!   averages the ones it has. A model that arrives later is dropped. An
//!   in-neighbour given up on while it was down is absent; one merely slow
//!   stays in the rounds (its late models are dropped).
//!
//! A silo absent from round `a` on comes back up and **rejoins** from its
//! neighbours' model: on gossip overlays, from the in-neighbours that are
//! up and would send to it in their current round, taking the most
//! advanced of them (round `R`): each sends the model it starts round
//! `R+1` with, and the silo starts round `R+1` from their mean once all have
//! arrived (one model transfer each, timed by the network model). A STAR
//! client rejoins at the centre's next broadcast. With no in-neighbour up,
//! it starts the round after the most advanced silo from its own model.
//! Rounds `a..R+1` do not wait for it.
//!
//! What each round used is kept as a [`RoundParticipation`] (the models
//! each silo averaged, who computed, who rejoined from whom): the trainer
//! re-normalises that round's averaging weights by it. Time stands still for
//! a silo that is away: its start time of a round it is absent from is
//! its previous one (a silo's times never decrease; a round ends when the
//! last silo present starts the next).
//!
//! The time breakdown ([`super::breakdown`]) is made round by round once
//! every silo has started the next one: an absent silo's round is waiting
//! (no compute, no model), and a round ended by a skip or a time out has no
//! `via`. The event trace of `simulate --log/--out` is recorded (a
//! rejoin's model fetches are in neither). Not covered: schedules with
//! lagged arcs and Clique Averaging's two phases (refused with a clear
//! error).

use std::collections::VecDeque;

use serde::Serialize;

use crate::net::dynamics::AvailabilityPolicy;

/// A transfer's `round` with this bit set is a rejoining silo's model
/// fetch for round `round & !JOIN`.
pub(crate) const JOIN: u64 = 1 << 63;

/// Timer kinds of the round protocol, encoded with the silo and its timer
/// generation in one `u64` ([`encode`]).
pub(crate) const COMPUTE: u64 = 0;
/// The time out of [`AvailabilityPolicy::Timeout`].
pub(crate) const TIMEOUT: u64 = 1;
/// A change of a silo's availability.
pub(crate) const AVAIL: u64 = 2;

/// One protocol timer: silo `i` (< 2^24), `kind`, generation `gen`. With
/// `kind = COMPUTE` and `gen = 0` it is `i` itself (the `Wait` protocol's
/// timers).
#[inline]
pub(crate) fn encode(kind: u64, i: usize, gen: u32) -> u64 {
    i as u64 | kind << 24 | u64::from(gen) << 32
}

/// `(kind, silo, generation)` of a timer.
#[inline]
pub(crate) fn decode(e: u64) -> (u64, usize, u32) {
    ((e >> 24) & 0xFF, (e & 0xFF_FFFF) as usize, (e >> 32) as u32)
}

/// Who took part in one synchronous round under churn.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RoundParticipation {
    /// `computed[i]`: silo `i` took its local steps of the round.
    pub computed: Vec<bool>,
    /// `used[i]`: the in-neighbours whose model of the round silo `i`
    /// averaged with its own; `None` when silo `i` did not average (absent,
    /// or a STAR client, which takes the centre's model: `joined`).
    pub used: Vec<Option<Vec<usize>>>,
    /// `joined[i]`: silo `i` starts the next round from the mean of these
    /// silos' next-round models (a STAR client: the centre's broadcast; a
    /// silo rejoining: the in-neighbours it fetched from; empty: its own
    /// model).
    pub joined: Vec<Option<Vec<usize>>>,
}

impl RoundParticipation {
    pub(crate) fn new(n: usize) -> Self {
        RoundParticipation {
            computed: vec![false; n],
            used: vec![None; n],
            joined: vec![None; n],
        }
    }

    /// True when silo `i` neither averaged nor took a model in this round.
    pub fn absent(&self, i: usize) -> bool {
        self.used[i].is_none() && self.joined[i].is_none()
    }

    /// Silos absent from the round.
    pub fn absent_count(&self) -> usize {
        (0..self.used.len()).filter(|&i| self.absent(i)).count()
    }
}

/// Counters of a run under churn.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ChurnStats {
    /// Times a silo became absent.
    pub absences: u64,
    /// Times a silo rejoined.
    pub rejoins: u64,
    /// Models averaged without one of the in-neighbours' models (a silo
    /// skipped or timed out on it).
    pub models_missed: u64,
    /// Models that arrived too late and were dropped.
    pub models_dropped: u64,
    /// Sends not made because the receiver was down or absent.
    pub sends_skipped: u64,
}

/// A silo fetching its neighbours' model to rejoin at `round`.
#[derive(Debug, Clone)]
pub(crate) struct Join {
    pub(crate) round: u64,
    /// Senders whose model has not arrived yet.
    pub(crate) pending: Vec<usize>,
    /// Senders whose model arrived.
    pub(crate) got: Vec<usize>,
}

/// The churn state of a [`super::round::RoundProtocol`].
pub(crate) struct Churn {
    pub(crate) policy: AvailabilityPolicy,
    /// Timer generation of each silo: timers of an older generation are
    /// stale (a new round, or a silo that became absent).
    pub(crate) gen: Vec<u32>,
    /// `got[i][r]`: senders of round `round[i] + r` models to silo `i`,
    /// with `true` for a model received, `false` for a send skipped
    /// because `i` was down.
    pub(crate) got: Vec<VecDeque<Vec<(usize, bool)>>>,
    /// Silo `i` stopped waiting for its current round (time out fired).
    pub(crate) timed_out: Vec<bool>,
    /// Silo `i` is absent from rounds `from..until` (`until = u64::MAX`
    /// while it is away).
    pub(crate) absent: Vec<Option<(u64, u64)>>,
    /// Earlier absences of silo `i`, kept while a silo may still be in one
    /// of their rounds (nobody waits for `i`'s models of those rounds).
    pub(crate) past: Vec<Vec<(u64, u64)>>,
    /// `excused[i]`: `(u, r)`: silo `i` does not wait for `u`'s models of
    /// rounds before `r` (`u` passed them while `i` was away), set when
    /// `i` rejoins.
    pub(crate) excused: Vec<Vec<(usize, u64)>>,
    /// Silos whose absence counts for rounds not yet started (away, or
    /// rejoining).
    pub(crate) away: Vec<usize>,
    pub(crate) joining: Vec<Option<Join>>,
    /// `wants[v]`: rejoining silos waiting for the model `v` starts its
    /// next round with.
    pub(crate) wants: Vec<Vec<usize>>,
    /// Participation of the rounds of `starts` (same indices).
    pub(crate) rows: VecDeque<RoundParticipation>,
    /// Silos to check for progress once the current event is handled.
    pub(crate) recheck: Vec<usize>,
    pub(crate) stats: ChurnStats,
}

impl Churn {
    pub(crate) fn new(n: usize, policy: AvailabilityPolicy) -> Self {
        Churn {
            policy,
            gen: vec![0; n],
            got: vec![VecDeque::new(); n],
            timed_out: vec![false; n],
            absent: vec![None; n],
            past: vec![Vec::new(); n],
            excused: vec![Vec::new(); n],
            away: Vec::new(),
            joining: vec![None; n],
            wants: vec![Vec::new(); n],
            rows: VecDeque::new(),
            recheck: Vec::new(),
            stats: ChurnStats::default(),
        }
    }

    /// True when silo `i` is away (absent, not rejoining).
    #[inline]
    pub(crate) fn is_away(&self, i: usize) -> bool {
        matches!(self.absent[i], Some((_, u64::MAX)))
    }

    /// True when silo `i` takes part in the rounds (neither away nor
    /// rejoining).
    #[inline]
    pub(crate) fn is_present(&self, i: usize) -> bool {
        !self.is_away(i) && self.joining[i].is_none()
    }

    /// True when silo `u` is absent from round `k` (nobody waits for its
    /// round-`k` model).
    #[inline]
    pub(crate) fn absent_from(&self, u: usize, k: u64) -> bool {
        let within = |&(a, b): &(u64, u64)| a <= k && k < b;
        self.absent[u].as_ref().is_some_and(within) || self.past[u].iter().any(within)
    }

    /// True when silo `i` does not wait for `u`'s round-`k` model: `u` is
    /// absent from round `k`, or passed it while `i` was away.
    #[inline]
    pub(crate) fn excused(&self, i: usize, u: usize, k: u64) -> bool {
        self.absent_from(u, k) || self.excused[i].iter().any(|&(v, r)| v == u && k < r)
    }

    /// Silo `u` starts a new absence: its last one, if over, is kept for
    /// the silos still behind it (`lowest`: the lowest round of a silo
    /// present), older ones no silo is in any more are dropped.
    pub(crate) fn close_absence(&mut self, u: usize, lowest: u64) {
        if let Some(r) = self.absent[u].take().filter(|r| r.1 != u64::MAX) {
            self.past[u].push(r);
        }
        self.past[u].retain(|&(_, b)| b > lowest);
    }

    /// Silos counted as having started round `k` by their absence (`k` a
    /// round no silo has started yet).
    pub(crate) fn absent_count_for(&self, k: u64) -> u32 {
        self.away
            .iter()
            .filter(|&&j| self.absent[j].is_some_and(|(a, b)| a < k && k < b))
            .count() as u32
    }

    /// Records that `from` sent (`real`) or skipped sending its round-`m`
    /// model to silo `to`, now in round `round_to`; false when dropped
    /// (a late model).
    pub(crate) fn record(
        &mut self,
        to: usize,
        round_to: u64,
        m: u64,
        from: usize,
        real: bool,
    ) -> bool {
        if self.is_away(to) || m < round_to {
            if real {
                self.stats.models_dropped += 1;
            }
            return false;
        }
        let off = (m - round_to) as usize;
        let g = &mut self.got[to];
        while g.len() <= off {
            g.push_back(Vec::new());
        }
        g[off].push((from, real));
        true
    }

    /// True when silo `i`'s current-round entries hold `u`.
    #[inline]
    pub(crate) fn has(&self, i: usize, u: usize) -> bool {
        self.got[i]
            .front()
            .is_some_and(|g| g.iter().any(|&(s, _)| s == u))
    }
}
