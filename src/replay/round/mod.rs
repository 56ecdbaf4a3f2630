//! The round protocol of [`super::replay`] as an [`EventProtocol`] on the
//! [`super::harness`]: gossip rounds (compute, send to out-neighbours, wait
//! for every in-neighbour) or, for a server-client overlay, the two-phase
//! STAR protocol (upload, aggregate, broadcast). See the [`super`] docs.

use std::borrow::Cow;
use std::collections::VecDeque;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use statrs::distribution::LogNormal;

use super::breakdown::BreakdownRecorder;
use super::churn::{self, Churn, RoundParticipation};
use super::harness::{EventProtocol, Link};
use super::trace::{TraceRecorder, TraceWindow};
use super::{ReplayError, Straggler};
use crate::engine::fx::FxHashMap;
use crate::graph::{Overlay, OverlaySchedule, Protocol};
use crate::net::delay::DelayModel;
use crate::network::Transfer;
use crate::units::Ms;

/// The protocol's timer: silo `i` finished computing its round (`i`
/// itself; under churn [`churn::encode`] also encodes time outs and
/// availability changes).
pub(crate) type ComputeDone = u64;

mod churned;

struct RoundInfo {
    overlay: Overlay,
    out: Vec<Vec<usize>>,
    /// In-neighbours of each silo (under churn only; empty otherwise).
    inn: Vec<Vec<usize>>,
    /// Compute time of each silo in this round, ms.
    compute: Vec<Ms>,
}

/// Synchronous rounds of an overlay schedule (module docs), from round 0
/// at time 0 ms to round `rounds` (`u64::MAX`: endless).
pub(crate) struct RoundProtocol<'a> {
    schedule: &'a dyn OverlaySchedule,
    delay: &'a DelayModel,
    /// Name of round 0's overlay.
    pub(crate) name: String,
    /// Last round: silos that start it neither compute nor send
    /// (`u64::MAX`: endless).
    rounds: u64,
    straggler: Option<(LogNormal, ChaCha8Rng)>,
    /// Per-round overlays and compute times of a changing schedule (or
    /// with stragglers): `info[k - info_first]`, built when first asked
    /// for (so random compute times are drawn in the same order whatever
    /// the stepping), dropped once every silo has left the round.
    info: VecDeque<Option<RoundInfo>>,
    info_first: u64,
    /// The one round of a static schedule without stragglers.
    static_info: Option<RoundInfo>,
    /// Current round of every silo.
    pub(crate) round: Vec<u64>,
    compute_done: Vec<bool>,
    /// `received[i][r]`: models of round `round[i] + r` received by silo `i`.
    received: Vec<VecDeque<usize>>,
    /// `starts[k - first][i] = t_i(k)`, ms (NaN until silo `i` starts
    /// round `k`).
    pub(crate) starts: Vec<Vec<Ms>>,
    /// Rows of `starts` forgotten, reused for later rounds (an endless
    /// replay allocates none once warm).
    spare_starts: Vec<Vec<Ms>>,
    /// Rounds `0..first` were forgotten ([`Self::forget_starts_before`]):
    /// `starts` and `reached` begin at round `first`.
    pub(crate) first: u64,
    /// Transfers started.
    pub(crate) transfers: u64,
    /// Transfers started per ordered silo pair, when counted
    /// ([`Self::count_arc_transfers`]: a replay's report; an endless
    /// stepper does not count).
    pub(crate) arc_transfers: Option<FxHashMap<(usize, usize), u64>>,
    star_center: Option<usize>,
    /// The schedule's largest arc lag ([`OverlaySchedule::arc_lag`]).
    max_lag: u64,
    /// Silos that reached each round (from round `first`).
    pub(crate) reached: Vec<u32>,
    on_round: Option<&'a mut dyn FnMut(u64)>,
    /// Events of the traced rounds, when asked for.
    pub(crate) trace: Option<TraceRecorder>,
    /// Where each silo's rounds went, when asked for.
    pub(crate) breakdown: Option<BreakdownRecorder>,
    /// Churn state under an availability policy other than `Wait`
    /// ([`super::churn`]).
    pub(crate) churn: Option<Box<Churn>>,
}

/// Checks that `schedule` and `delay` have the same silos and builds the
/// compute-time sampler of `straggler` (seeded by `seed`).
pub(crate) fn checked_straggler(
    schedule: &dyn OverlaySchedule,
    delay: &DelayModel,
    straggler: Straggler,
    seed: u64,
) -> Result<Option<(LogNormal, ChaCha8Rng)>, ReplayError> {
    if schedule.silo_count() != delay.silo_count() {
        return Err(ReplayError::SizeMismatch {
            overlay: schedule.silo_count(),
            network: delay.silo_count(),
        });
    }
    Ok(match straggler {
        Straggler::None => None,
        Straggler::LogNormal { sigma } => {
            let d = LogNormal::new(0.0, sigma).map_err(|_| ReplayError::BadSigma(sigma))?;
            Some((d, ChaCha8Rng::seed_from_u64(seed)))
        }
    })
}

impl<'a> RoundProtocol<'a> {
    /// Rounds `0..rounds` of `schedule` on `delay` (`rounds = u64::MAX`:
    /// endless); the protocol is that of round 0's overlay.
    ///
    /// # Errors
    /// [`ReplayError::SizeMismatch`] or [`ReplayError::BadSigma`].
    pub(crate) fn new(
        schedule: &'a dyn OverlaySchedule,
        delay: &'a DelayModel,
        straggler: Straggler,
        seed: u64,
        rounds: u64,
        on_round: Option<&'a mut dyn FnMut(u64)>,
    ) -> Result<Self, ReplayError> {
        let n = schedule.silo_count();
        let straggler = checked_straggler(schedule, delay, straggler, seed)?;
        let first = schedule.round(0);
        let name = first.name.clone();
        let star_center = match first.protocol {
            Protocol::ServerClient { center } => Some(center),
            Protocol::Gossip => None,
        };
        drop(first);
        let mut p = RoundProtocol {
            schedule,
            delay,
            name,
            rounds,
            straggler,
            info: VecDeque::new(),
            info_first: 0,
            static_info: None,
            round: vec![0; n],
            compute_done: vec![false; n],
            received: vec![VecDeque::new(); n],
            starts: Vec::new(),
            spare_starts: Vec::new(),
            first: 0,
            transfers: 0,
            arc_transfers: None,
            star_center,
            max_lag: schedule.max_lag(),
            reached: Vec::new(),
            on_round,
            trace: None,
            breakdown: None,
            churn: None,
        };
        if let Some(d) = delay.dynamics.as_ref() {
            if d.policy != crate::net::dynamics::AvailabilityPolicy::Wait {
                if p.max_lag > 0 {
                    return Err(ReplayError::Churn(format!(
                        "availability {}: schedules with lagged arcs are not covered; use \
                         availability wait",
                        d.policy.name()
                    )));
                }
                p.churn = Some(Box::new(Churn::new(n, d.policy)));
            }
        }
        if schedule.is_static() {
            p.static_info = Some(p.make_info(0));
        }
        Ok(p)
    }

    /// Counts the transfers of every ordered silo pair from now on
    /// ([`Self::arc_transfers`]).
    pub(crate) fn count_arc_transfers(&mut self) {
        self.arc_transfers.get_or_insert_with(FxHashMap::default);
    }

    /// Records the events of the rounds of `window` ([`super::trace`]).
    /// Under churn, a rejoining silo's model fetches are not recorded, and
    /// a critical path stops at what the records do not explain.
    pub(crate) fn trace_rounds(&mut self, window: TraceWindow) -> Result<(), ReplayError> {
        self.trace = Some(TraceRecorder::new(
            window,
            self.round.len(),
            self.star_center,
        ));
        Ok(())
    }

    /// Records where every silo's rounds go ([`super::breakdown`]).
    pub(crate) fn record_breakdown(&mut self) -> Result<(), ReplayError> {
        let n = self.round.len();
        self.breakdown
            .get_or_insert_with(|| BreakdownRecorder::new(n));
        Ok(())
    }

    /// True when every silo has started round `k`.
    pub(crate) fn all_reached(&self, k: u64) -> bool {
        // Only rounds every silo reached are ever forgotten.
        let Some(i) = k.checked_sub(self.first) else {
            return true;
        };
        self.reached.get(i as usize).copied().unwrap_or(0) as usize == self.round.len()
    }

    /// Rounds `k` whose start times are complete (every silo started
    /// them), counting the forgotten ones.
    pub(crate) fn rounds_started(&self) -> u64 {
        let n = self.round.len() as u32;
        self.first + self.reached.iter().take_while(|&&r| r == n).count() as u64
    }

    /// `t(k)` when round `k` is complete and not forgotten.
    pub(crate) fn starts_of(&self, k: u64) -> Option<&[Ms]> {
        if k >= self.rounds_started() {
            return None;
        }
        let i = k.checked_sub(self.first)?;
        self.starts.get(i as usize).map(Vec::as_slice)
    }

    /// Forgets the start times of the complete rounds before `k`, so that
    /// an endless replay (a round clock) keeps a bounded memory however
    /// many rounds it runs.
    pub(crate) fn forget_starts_before(&mut self, k: u64) {
        let upto = k.min(self.rounds_started());
        let drop = upto.saturating_sub(self.first) as usize;
        if drop > 0 {
            self.spare_starts.extend(self.starts.drain(..drop));
            self.reached.drain(..drop);
            if let Some(c) = self.churn.as_mut() {
                c.rows.drain(..drop);
            }
            self.first += drop as u64;
        }
    }

    /// Forgets the per-round overlays of rounds every silo has left.
    pub(crate) fn forget_past_rounds(&mut self) {
        if self.info.is_empty() {
            return;
        }
        // Silos away (absent under churn) stay in their round meanwhile.
        let lowest = self.lowest_present_round();
        while self.info_first < lowest && self.info.pop_front().is_some() {
            self.info_first += 1;
        }
        if self.info.is_empty() {
            self.info_first = lowest;
        }
    }

    fn make_info(&mut self, k: u64) -> RoundInfo {
        let overlay = match self.schedule.round(k) {
            Cow::Borrowed(o) => o.clone(),
            Cow::Owned(o) => o,
        };
        let n = overlay.silo_count();
        let mut compute: Vec<Ms> = (0..n).map(|i| self.delay.compute_round_ms(i)).collect();
        if let Some((dist, rng)) = self.straggler.as_mut() {
            use rand::distributions::Distribution;
            for c in &mut compute {
                *c *= dist.sample(rng);
            }
        }
        let inn = if self.churn.is_some() {
            let mut inn = vec![Vec::new(); n];
            for &(i, j) in overlay.arcs() {
                inn[j].push(i);
            }
            inn
        } else {
            Vec::new()
        };
        RoundInfo {
            out: overlay.out_neighbours(),
            inn,
            overlay,
            compute,
        }
    }

    #[inline]
    fn info(&mut self, k: u64) -> &RoundInfo {
        self.info_mut(k)
    }

    // `if let` here would hit the NLL conditional-return limitation.
    #[allow(clippy::unnecessary_unwrap)]
    #[inline]
    fn info_mut(&mut self, k: u64) -> &mut RoundInfo {
        if self.static_info.is_some() && self.straggler.is_none() {
            return self.static_info.as_mut().unwrap();
        }
        self.round_info(k)
    }

    /// Round `k`'s info in the window of a changing schedule (or with
    /// stragglers), built when first asked for.
    #[inline(never)]
    fn round_info(&mut self, k: u64) -> &mut RoundInfo {
        // Rounds before the window were dropped when every silo had left
        // them and are never asked for again; rebuilt if they were.
        while k < self.info_first {
            self.info.push_front(None);
            self.info_first -= 1;
        }
        let at = (k - self.info_first) as usize;
        if self.info.len() <= at {
            self.info.resize_with(at + 1, || None);
        }
        if self.info[at].is_none() {
            let inf = self.make_info(k);
            self.info[at] = Some(inf);
        }
        self.info[at].as_mut().unwrap()
    }

    /// Silo `i` starts round `k` at `now`.
    fn start_round(&mut self, i: usize, k: u64, now: Ms, link: &mut Link<'_, ComputeDone>) {
        if let (Some(b), Some(ended), None) = (
            self.breakdown.as_mut(),
            k.checked_sub(1),
            self.churn.as_ref(),
        ) {
            b.ended(i, ended, now);
        }
        self.round[i] = k;
        // Silos never go back and only rounds every silo has started are
        // forgotten: `k >= first` here.
        let at = (k - self.first) as usize;
        while self.starts.len() <= at {
            let k = self.first + self.starts.len() as u64;
            let mut row = self.spare_starts.pop().unwrap_or_default();
            row.clear();
            row.resize(self.round.len(), f64::NAN);
            self.starts.push(row);
            let absent = match self.churn.as_mut() {
                Some(c) => {
                    c.rows.push_back(RoundParticipation::new(self.round.len()));
                    c.absent_count_for(k)
                }
                None => 0,
            };
            self.reached.push(absent);
        }
        // A complete round is never started again (its times were
        // handed out).
        debug_assert!(
            (self.reached[at] as usize) < self.round.len(),
            "silo {i} starts round {k}, which every silo has started"
        );
        self.starts[at][i] = now;
        self.reach(at);
        self.compute_done[i] = false;
        let gen = match self.churn.as_mut() {
            Some(c) => {
                c.gen[i] = c.gen[i].wrapping_add(1);
                c.timed_out[i] = false;
                c.gen[i]
            }
            None => 0,
        };
        if self.churn.is_some() {
            self.send_join_models(i, k, link);
        }
        if k < self.rounds {
            let c = self.info(k).compute[i];
            // A silo down for good never finishes: the replay then reports
            // the silos left waiting.
            let end = self.delay.compute_end_ms(i, now, c);
            if end.is_finite() {
                link.schedule_at(end, churn::encode(churn::COMPUTE, i, gen));
            }
        }
    }

    /// One more silo started the round of `starts[at]` (or counts as such,
    /// being absent from it); a complete round calls `on_round`, and under
    /// churn gives its absent silos their previous start time (time stands
    /// still for a silo that is away: its times never decrease).
    fn reach(&mut self, at: usize) {
        self.reached[at] += 1;
        if self.reached[at] as usize == self.round.len() {
            if self.churn.is_some() {
                for i in 0..self.round.len() {
                    if self.starts[at][i].is_nan() {
                        let before = at.checked_sub(1).map_or(0.0, |p| self.starts[p][i]);
                        self.starts[at][i] = before;
                    }
                }
                if let (Some(b), Some(prev)) = (self.breakdown.as_mut(), at.checked_sub(1)) {
                    let k = self.first + prev as u64;
                    b.round_complete(k, &self.starts[prev], &self.starts[at]);
                }
            }
            if let Some(f) = self.on_round.as_mut() {
                f(self.first + at as u64);
            }
        }
    }

    fn send(
        &mut self,
        from: usize,
        to: usize,
        k: u64,
        out_deg: usize,
        in_deg: usize,
        link: &mut Link<'_, ComputeDone>,
    ) {
        self.transfers += 1;
        if let Some(count) = self.arc_transfers.as_mut() {
            *count.entry((from, to)).or_insert(0) += 1;
        }
        if let Some(tr) = self.trace.as_mut() {
            tr.sent(from, to, k, link.now());
        }
        if let Some(b) = self.breakdown.as_mut() {
            b.sent(from, to, k, link.now());
        }
        link.send(Transfer {
            from,
            to,
            round: k,
            bits: self.delay.workload.model_bits,
            out_deg,
            in_deg,
        });
    }

    /// Silo `i` finished computing round `k` of a schedule with lagged arcs
    /// ([`OverlaySchedule::arc_lag`]): it sends on every arc `i -> j` of a
    /// round `m` in `k..=k + max_lag` whose model leaves now, `m - min(L, m)
    /// = k` (degrees of round `m`'s overlay), for round `m`'s aggregation.
    fn send_lagged(&mut self, i: usize, k: u64, link: &mut Link<'_, ComputeDone>) {
        let last = k
            .saturating_add(self.max_lag)
            .min(self.rounds.saturating_sub(1));
        for m in k..=last {
            let (targets, out_deg) = {
                let info = self.info(m);
                let o = &info.overlay;
                let t: Vec<(usize, usize)> =
                    info.out[i].iter().map(|&j| (j, o.in_degree(j))).collect();
                (t, o.out_degree(i))
            };
            for (j, in_j) in targets {
                let lag = self.schedule.arc_lag(m, i, j).min(m);
                if m - lag == k {
                    self.send(i, j, m, out_deg, in_j, link);
                }
            }
        }
    }

    fn try_advance_gossip(&mut self, i: usize, link: &mut Link<'_, ComputeDone>) {
        let k = self.round[i];
        if k >= self.rounds || !self.compute_done[i] {
            return;
        }
        let need = self.info(k).overlay.in_degree(i);
        if self.received[i].front().copied().unwrap_or(0) < need {
            return;
        }
        self.received[i].pop_front();
        let now = link.now();
        self.start_round(i, k + 1, now, link);
    }

    fn count_received(&mut self, to: usize, round: u64) {
        let off = (round - self.round[to]) as usize;
        let r = &mut self.received[to];
        while r.len() <= off {
            r.push_back(0);
        }
        r[off] += 1;
    }

    fn try_aggregate(&mut self, c: usize, link: &mut Link<'_, ComputeDone>) {
        let k = self.round[c];
        if k >= self.rounds || !self.compute_done[c] {
            return;
        }
        let (need, out_c) = {
            let o = &self.info(k).overlay;
            (o.in_degree(c), o.out_degree(c))
        };
        if self.received[c].front().copied().unwrap_or(0) < need {
            return;
        }
        self.received[c].pop_front();
        let now = link.now();
        // Broadcast the aggregate of round k.
        let targets = std::mem::take(&mut self.info_mut(k).out[c]);
        for &j in &targets {
            let in_j = self.info(k).overlay.in_degree(j);
            self.send(c, j, k, out_c, in_j, link);
        }
        self.info_mut(k).out[c] = targets;
        self.start_round(c, k + 1, now, link);
    }
}

impl EventProtocol for RoundProtocol<'_> {
    type Event = ComputeDone;
    type Stall = ReplayError;

    fn start(&mut self, link: &mut Link<'_, ComputeDone>) {
        for i in 0..self.round.len() {
            self.start_round(i, 0, 0.0, link);
        }
        if self.churn.is_some() {
            self.schedule_availability(link);
        }
    }

    fn on_event(&mut self, e: ComputeDone, link: &mut Link<'_, ComputeDone>) {
        if self.churn.is_some() {
            self.churn_event(e, link);
            return;
        }
        let i = e as usize;
        self.compute_done[i] = true;
        let k = self.round[i];
        if let Some(tr) = self.trace.as_mut() {
            tr.computed(i, k, link.now());
        }
        if let Some(b) = self.breakdown.as_mut() {
            b.computed(i, link.now());
        }
        match self.star_center {
            Some(c) if c == i => self.try_aggregate(c, link),
            Some(c) => {
                let (o, inc) = {
                    let ov = &self.info(k).overlay;
                    (ov.out_degree(i), ov.in_degree(c))
                };
                self.send(i, c, k, o, inc, link);
            }
            None if self.max_lag > 0 => {
                self.send_lagged(i, k, link);
                self.try_advance_gossip(i, link);
            }
            None => {
                let targets = std::mem::take(&mut self.info_mut(k).out[i]);
                let out_deg = targets.len();
                for &j in &targets {
                    let in_j = self.info(k).overlay.in_degree(j);
                    self.send(i, j, k, out_deg, in_j, link);
                }
                self.info_mut(k).out[i] = targets;
                self.try_advance_gossip(i, link);
            }
        }
    }

    fn on_delivered(&mut self, t: Transfer, link: &mut Link<'_, ComputeDone>) {
        if let Some(tr) = self.trace.as_mut() {
            tr.delivered(t.from, t.to, t.round, link.now());
        }
        if let (Some(b), false) = (self.breakdown.as_mut(), t.round & churn::JOIN != 0) {
            b.delivered(t.from, t.to, t.round, link.now());
        }
        if self.churn.is_some() {
            self.churn_delivered(t, link);
            return;
        }
        match self.star_center {
            None => {
                self.count_received(t.to, t.round);
                self.try_advance_gossip(t.to, link);
            }
            Some(c) if t.to == c => {
                self.count_received(c, t.round);
                self.try_aggregate(c, link);
            }
            Some(_) => {
                // Broadcast of round t.round reached a client.
                let now = link.now();
                self.start_round(t.to, t.round + 1, now, link);
            }
        }
    }

    fn finished(&self) -> bool {
        match self.churn.as_ref() {
            // Silos away for good never finish: the others do.
            Some(c) => (0..self.round.len()).all(|i| self.round[i] >= self.rounds || c.is_away(i)),
            None => self.round.iter().all(|&k| k >= self.rounds),
        }
    }

    /// A bounded run reports the first silo below the last round; an
    /// endless one the first silo in the lowest round.
    fn stall(&self) -> ReplayError {
        // Under churn only the STAR centre is waited for when down.
        let down_for_good = self.delay.dynamics.as_ref().and_then(|d| d.down_for_good());
        let waited_for = |silo: usize| self.churn.is_none() || self.star_center == Some(silo);
        if let Some((silo, since)) = down_for_good.filter(|&(s, _)| waited_for(s)) {
            return ReplayError::DownForGood {
                silo,
                since_s: since / 1e3,
                round: self.round.iter().copied().min().unwrap_or(0),
            };
        }
        let below_last = (self.rounds != u64::MAX)
            .then(|| self.round.iter().position(|&k| k < self.rounds))
            .flatten();
        let silo = below_last.unwrap_or_else(|| {
            self.round
                .iter()
                .enumerate()
                .min_by_key(|&(_, r)| *r)
                .map_or(0, |(i, _)| i)
        });
        ReplayError::Deadlock {
            silo,
            round: self.round.get(silo).copied().unwrap_or(0),
        }
    }
}
