//! Round replay: synchronous decentralized training replayed event by event
//! in wall-clock time over a [`NetworkModel`].
//!
//! Gossip overlays (\[Marfoq20\] Sec. 2, eq. 2): in round `k` every silo `i`
//! computes `s` local steps (`s*Tc(i)` ms, optionally scaled by a straggler
//! factor), sends its model to its out-neighbours in round `k`'s overlay,
//! waits for the round-`k` models of all its in-neighbours and starts round
//! `k+1` (aggregation takes no time). `t_i(k)` is the time silo `i` starts
//! round `k`, `t_i(0) = 0`. With the [`crate::network::MaxPlusNetwork`]
//! this is exactly the max-plus recurrence `t_i(k+1) = max(t_i(k) +
//! s*Tc(i), max_j t_j(k) + d_o(j,i))`.
//!
//! Server-client overlays (STAR) run the real two-phase protocol: clients
//! compute and upload to the centre `c`; the centre, which also computes
//! its own update, aggregates once it has every model and broadcasts the new
//! model; a client starts round `k+1` when the broadcast reaches it, the
//! centre when it broadcasts. In steady state a round lasts
//! `max_i ( d_o(c,i) - s*Tc(c) + d_o(i,c) )`, [`crate::timing::cycle_time`]'s
//! STAR formula, as long as the centre's own computation is not the
//! bottleneck.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use statrs::distribution::LogNormal;
use thiserror::Error;

use crate::delay::DelayModel;
use crate::engine::{run, Handler, Scheduler};
use crate::network::{EngineTimers, NetEvent, NetworkModel, NetworkStats, Transfer};
use crate::overlay::{Overlay, OverlaySchedule, Protocol};
use crate::units::Ms;

/// Random compute times.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Straggler {
    /// Every round takes exactly `s*Tc(i)`.
    None,
    /// `s*Tc(i)` times a log-normal factor with `mu = 0` and this `sigma`
    /// (median 1), drawn independently per silo and round.
    LogNormal {
        /// Shape parameter sigma (> 0).
        sigma: f64,
    },
}

impl std::str::FromStr for Straggler {
    type Err = String;

    /// Parses `none` or `lognormal:SIGMA` (finite `SIGMA > 0`).
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "none" {
            return Ok(Straggler::None);
        }
        if let Some(v) = s.strip_prefix("lognormal:") {
            let sigma: f64 = v
                .parse()
                .map_err(|_| format!("straggler lognormal:SIGMA: `{v}` is not a number"))?;
            if !(sigma.is_finite() && sigma > 0.0) {
                return Err(format!(
                    "straggler lognormal:SIGMA needs a finite sigma > 0, got {sigma}"
                ));
            }
            return Ok(Straggler::LogNormal { sigma });
        }
        Err(format!(
            "straggler `{s}`: expected none or lognormal:SIGMA (e.g. lognormal:0.3)"
        ))
    }
}

/// Replay options.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Number of rounds `K`: start times `t(0)..=t(K)` are recorded.
    pub rounds: u64,
    /// Random compute times.
    pub straggler: Straggler,
    /// Seed of every random draw.
    pub seed: u64,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            rounds: 100,
            straggler: Straggler::None,
            seed: 0,
        }
    }
}

/// Why a replay could not run.
#[derive(Debug, Error, PartialEq)]
pub enum ReplayError {
    /// Overlay and delay model sizes differ.
    #[error("the overlay has {overlay} silos but the network has {network}")]
    SizeMismatch {
        /// Silos in the overlay schedule.
        overlay: usize,
        /// Silos in the delay model.
        network: usize,
    },
    /// Bad straggler parameter.
    #[error("straggler sigma must be a finite number > 0, got {0}")]
    BadSigma(f64),
    /// The replay stopped before every silo reached round `K`.
    #[error(
        "deadlock: silo {silo} is stuck in round {round} (a silo in round {round} waits for a \
         model that never comes; is the overlay of that round strongly connected?)"
    )]
    Deadlock {
        /// A silo that did not finish.
        silo: usize,
        /// Its round.
        round: u64,
    },
}

/// The result of a replay.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayResult {
    /// Overlay name.
    pub overlay: String,
    /// Network model name.
    pub network: String,
    /// `starts[k][i] = t_i(k)`, ms, for `k = 0..=K`.
    pub starts: Vec<Vec<Ms>>,
    /// Events handled by the engine.
    pub events: u64,
    /// Transfers delivered.
    pub transfers: u64,
    /// Transfers per ordered silo pair `(from, to)`, sorted.
    pub arc_transfers: Vec<((usize, usize), u64)>,
    /// Network counters.
    pub network_stats: NetworkStats,
}

impl ReplayResult {
    /// Completion time of round `k` (`k >= 1`): the last silo's `t_i(k)`, ms.
    pub fn round_end(&self, k: usize) -> Ms {
        self.starts[k]
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Durations of rounds `1..=K`: `round_end(k) - round_end(k-1)`, ms
    /// (`round_end(0) = 0`).
    pub fn round_durations(&self) -> Vec<Ms> {
        (1..self.starts.len())
            .map(|k| self.round_end(k) - self.round_end(k - 1))
            .collect()
    }

    /// Mean round time `max_i t_i(K) / K`, ms.
    pub fn mean_round_ms(&self) -> Ms {
        let k = self.starts.len() - 1;
        if k == 0 {
            return 0.0;
        }
        self.round_end(k) / k as f64
    }

    /// Total time of the run, `max_i t_i(K)`, ms.
    pub fn makespan_ms(&self) -> Ms {
        self.round_end(self.starts.len() - 1)
    }
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    ComputeDone(usize),
    Net(u64),
}

impl NetEvent for Ev {
    fn net_timer(token: u64) -> Self {
        Ev::Net(token)
    }
}

struct RoundInfo {
    overlay: Overlay,
    out: Vec<Vec<usize>>,
    /// Compute time of each silo in this round, ms.
    compute: Vec<Ms>,
}

/// The network a simulation drives: borrowed ([`replay`]) or owned
/// ([`RoundStepper`]).
enum Net<'a> {
    Borrowed(&'a mut dyn NetworkModel),
    Owned(Box<dyn NetworkModel + 'a>),
}

impl<'a> std::ops::Deref for Net<'a> {
    type Target = dyn NetworkModel + 'a;
    fn deref(&self) -> &Self::Target {
        match self {
            Net::Borrowed(n) => &**n,
            Net::Owned(n) => &**n,
        }
    }
}

impl std::ops::DerefMut for Net<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Net::Borrowed(n) => &mut **n,
            Net::Owned(n) => &mut **n,
        }
    }
}

struct Sim<'a> {
    schedule: &'a dyn OverlaySchedule,
    delay: &'a DelayModel,
    net: Net<'a>,
    rounds: u64,
    straggler: Option<(LogNormal, ChaCha8Rng)>,
    info: HashMap<u64, RoundInfo>,
    static_info: Option<RoundInfo>,
    round: Vec<u64>,
    compute_done: Vec<bool>,
    /// `received[i][r]`: models of round `round[i] + r` received by silo `i`.
    received: Vec<VecDeque<usize>>,
    starts: Vec<Vec<Ms>>,
    delivered: Vec<Transfer>,
    transfers: u64,
    arc_transfers: HashMap<(usize, usize), u64>,
    star_center: Option<usize>,
    /// Silos that reached each round.
    reached: Vec<u32>,
    on_round: Option<&'a mut dyn FnMut(u64)>,
}

impl Sim<'_> {
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
        RoundInfo {
            out: overlay.out_neighbours(),
            overlay,
            compute,
        }
    }

    // `if let` here would hit the NLL conditional-return limitation.
    #[allow(clippy::unnecessary_unwrap)]
    fn info(&mut self, k: u64) -> &RoundInfo {
        if self.static_info.is_some() && self.straggler.is_none() {
            return self.static_info.as_ref().unwrap();
        }
        if !self.info.contains_key(&k) {
            let inf = self.make_info(k);
            self.info.insert(k, inf);
        }
        &self.info[&k]
    }

    /// Silo `i` starts round `k` at `now`.
    fn start_round(&mut self, i: usize, k: u64, now: Ms, q: &mut Scheduler<Ev>) {
        self.round[i] = k;
        if self.starts.len() <= k as usize {
            // Unbounded runs (RoundStepper) grow the tables round by round.
            self.starts.push(vec![f64::NAN; self.round.len()]);
            self.reached.push(0);
        }
        self.starts[k as usize][i] = now;
        self.reached[k as usize] += 1;
        if self.reached[k as usize] as usize == self.round.len() {
            if let Some(f) = self.on_round.as_mut() {
                f(k);
            }
        }
        self.compute_done[i] = false;
        if k < self.rounds {
            let c = self.info(k).compute[i];
            q.schedule_at(now + c, Ev::ComputeDone(i));
        }
    }

    fn send(
        &mut self,
        from: usize,
        to: usize,
        k: u64,
        out_deg: usize,
        in_deg: usize,
        q: &mut Scheduler<Ev>,
    ) {
        let t = Transfer {
            from,
            to,
            round: k,
            bits: self.delay.workload.model_bits,
            out_deg,
            in_deg,
        };
        self.transfers += 1;
        *self.arc_transfers.entry((from, to)).or_insert(0) += 1;
        self.net.start(t, &mut EngineTimers(q), &mut self.delivered);
    }

    fn try_advance_gossip(&mut self, i: usize, q: &mut Scheduler<Ev>) {
        let k = self.round[i];
        if k >= self.rounds || !self.compute_done[i] {
            return;
        }
        let need = self.info(k).overlay.in_degree(i);
        if self.received[i].front().copied().unwrap_or(0) < need {
            return;
        }
        self.received[i].pop_front();
        let now = q.now();
        self.start_round(i, k + 1, now, q);
    }

    fn count_received(&mut self, to: usize, round: u64) {
        let off = (round - self.round[to]) as usize;
        let r = &mut self.received[to];
        if r.len() <= off {
            r.resize(off + 1, 0);
        }
        r[off] += 1;
    }

    fn try_aggregate(&mut self, c: usize, q: &mut Scheduler<Ev>) {
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
        let now = q.now();
        // Broadcast the aggregate of round k.
        let targets = self.info(k).out[c].clone();
        for j in targets {
            let in_j = self.info(k).overlay.in_degree(j);
            self.send(c, j, k, out_c, in_j, q);
        }
        self.start_round(c, k + 1, now, q);
    }

    fn handle_delivered(&mut self, q: &mut Scheduler<Ev>) {
        while let Some(t) = self.delivered.pop() {
            match self.star_center {
                None => {
                    self.count_received(t.to, t.round);
                    self.try_advance_gossip(t.to, q);
                }
                Some(c) if t.to == c => {
                    self.count_received(c, t.round);
                    self.try_aggregate(c, q);
                }
                Some(_) => {
                    // Broadcast of round t.round reached a client.
                    let now = q.now();
                    self.start_round(t.to, t.round + 1, now, q);
                }
            }
        }
    }
}

impl Handler<Ev> for Sim<'_> {
    fn handle(&mut self, _now: Ms, ev: Ev, q: &mut Scheduler<Ev>) {
        match ev {
            Ev::ComputeDone(i) => {
                self.compute_done[i] = true;
                let k = self.round[i];
                match self.star_center {
                    Some(c) if c == i => self.try_aggregate(c, q),
                    Some(c) => {
                        let (o, inc) = {
                            let ov = &self.info(k).overlay;
                            (ov.out_degree(i), ov.in_degree(c))
                        };
                        self.send(i, c, k, o, inc, q);
                    }
                    None => {
                        let targets = std::mem::take(&mut self.info_mut(k).out[i]);
                        let out_deg = targets.len();
                        for &j in &targets {
                            let in_j = self.info(k).overlay.in_degree(j);
                            self.send(i, j, k, out_deg, in_j, q);
                        }
                        self.info_mut(k).out[i] = targets;
                        self.try_advance_gossip(i, q);
                    }
                }
            }
            Ev::Net(token) => self
                .net
                .on_timer(token, &mut EngineTimers(q), &mut self.delivered),
        }
        self.handle_delivered(q);
    }
}

impl Sim<'_> {
    #[allow(clippy::unnecessary_unwrap)]
    fn info_mut(&mut self, k: u64) -> &mut RoundInfo {
        self.info(k);
        if self.static_info.is_some() && self.straggler.is_none() {
            return self.static_info.as_mut().unwrap();
        }
        self.info.get_mut(&k).unwrap()
    }
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

/// Replays `options.rounds` synchronous rounds of `schedule` on `delay`
/// through `network`. STAR (server-client) overlays run the two-phase
/// protocol; the protocol of round 0's overlay decides for the whole run.
pub fn replay(
    schedule: &dyn OverlaySchedule,
    delay: &DelayModel,
    network: &mut dyn NetworkModel,
    options: &ReplayOptions,
) -> Result<ReplayResult, ReplayError> {
    replay_with_progress(schedule, delay, network, options, &mut |_| {})
}

/// As [`replay`], calling `on_round(k)` when the last silo starts round `k`
/// (for progress bars).
pub fn replay_with_progress(
    schedule: &dyn OverlaySchedule,
    delay: &DelayModel,
    network: &mut dyn NetworkModel,
    options: &ReplayOptions,
    on_round: &mut dyn FnMut(u64),
) -> Result<ReplayResult, ReplayError> {
    let n = schedule.silo_count();
    let straggler = checked_straggler(schedule, delay, options.straggler, options.seed)?;
    let first = schedule.round(0);
    let name = first.name.clone();
    let star_center = match first.protocol {
        Protocol::ServerClient { center } => Some(center),
        Protocol::Gossip => None,
    };
    drop(first);
    let k_max = options.rounds;
    let mut sim = Sim {
        schedule,
        delay,
        net: Net::Borrowed(network),
        rounds: k_max,
        straggler,
        info: HashMap::new(),
        static_info: None,
        round: vec![0; n],
        compute_done: vec![false; n],
        received: vec![VecDeque::new(); n],
        starts: vec![vec![f64::NAN; n]; k_max as usize + 1],
        delivered: Vec::new(),
        transfers: 0,
        arc_transfers: HashMap::new(),
        star_center,
        reached: vec![0; k_max as usize + 1],
        on_round: Some(on_round),
    };
    if schedule.is_static() {
        sim.static_info = Some(sim.make_info(0));
    }
    let mut q = Scheduler::new();
    for i in 0..n {
        sim.start_round(i, 0, 0.0, &mut q);
    }
    let stats = run(&mut q, &mut sim, None);
    if let Some(i) = (0..n).find(|&i| sim.round[i] < k_max) {
        return Err(ReplayError::Deadlock {
            silo: i,
            round: sim.round[i],
        });
    }
    let mut arc_transfers: Vec<_> = sim.arc_transfers.into_iter().collect();
    arc_transfers.sort_unstable();
    Ok(ReplayResult {
        overlay: name,
        network: sim.net.name().to_string(),
        starts: sim.starts,
        events: stats.events,
        transfers: sim.transfers,
        arc_transfers,
        network_stats: sim.net.stats(),
    })
}

mod stepper;
pub use stepper::RoundStepper;

#[cfg(test)]
mod tests;
