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
//!
//! Layout: every protocol-over-a-network simulation runs on the one
//! [`harness`] (event queue, network model, delivered transfers, deadlock
//! check). The round protocol above is one protocol on it, advanced on
//! demand by the [`RoundStepper`]; [`replay`] is a stepper with a last
//! round `K` run to the end. Under network dynamics with an availability
//! policy other than `wait` the round protocol skips or times out on silos
//! that are down and lets them rejoin ([`churn`]). [`two_phase`] replays Clique Averaging rounds
//! (the other protocol here; round programs, [`crate::program::sim`], are
//! the third), and [`clock`] hands the trainer a [`clock::RoundClock`].

use serde::Serialize;
use thiserror::Error;

use crate::graph::OverlaySchedule;
use crate::net::delay::DelayModel;
use crate::network::{NetworkModel, NetworkStats};
use crate::units::Ms;
use harness::Net;

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

    /// Parses `none` or `lognormal:SIGMA` (`0 < SIGMA <=`
    /// [`MAX_STRAGGLER_SIGMA`]).
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "none" {
            return Ok(Straggler::None);
        }
        if let Some(v) = s.strip_prefix("lognormal:") {
            let sigma: f64 = v
                .parse()
                .map_err(|_| format!("straggler lognormal:SIGMA: `{v}` is not a number"))?;
            if !(sigma.is_finite() && sigma > 0.0 && sigma <= MAX_STRAGGLER_SIGMA) {
                return Err(format!(
                    "straggler lognormal:SIGMA needs a sigma > 0 and <= {MAX_STRAGGLER_SIGMA} (exp(sigma*z) overflows beyond), got {sigma}"
                ));
            }
            return Ok(Straggler::LogNormal { sigma });
        }
        Err(format!(
            "straggler `{s}`: expected none or lognormal:SIGMA (e.g. lognormal:0.3)"
        ))
    }
}

/// Largest straggler sigma accepted: `exp(sigma * z)` of a standard normal
/// `z` overflows for sigma in the hundreds (`lognormal:700` gave infinite
/// compute times), and at 10 the factor already spans `e^-50 .. e^50`.
pub const MAX_STRAGGLER_SIGMA: f64 = 10.0;

/// Most rounds one replay runs: every round's start times are kept in
/// memory (rounds are not streamed to disk), see [`check_rounds`].
pub const MAX_ROUNDS: u64 = 1_000_000;

/// Most start times `t_i(k)` one replay keeps, `rounds x silos` (8 bytes
/// each, 400 MB in all, plus the per-round records).
pub const MAX_ROUND_STARTS: u64 = 50_000_000;

/// Checks that a replay of `rounds` rounds over `silos` silos fits the
/// bounds [`MAX_ROUNDS`] and [`MAX_ROUND_STARTS`] (a replay keeps every
/// round in memory).
///
/// # Errors
/// A message with the bound that `rounds` exceeds.
pub fn check_rounds(rounds: u64, silos: usize) -> Result<(), String> {
    if rounds == 0 {
        return Err("rounds must be at least 1".into());
    }
    if rounds > MAX_ROUNDS {
        return Err(format!(
            "{rounds} rounds are more than the {MAX_ROUNDS} a replay runs (every round's start times are kept in memory)"
        ));
    }
    let starts = rounds.saturating_mul(silos as u64);
    if starts > MAX_ROUND_STARTS {
        return Err(format!(
            "{rounds} rounds x {silos} silos = {starts} start times are more than the {MAX_ROUND_STARTS} a replay keeps in memory (8 bytes each); use at most {} rounds",
            MAX_ROUND_STARTS / (silos.max(1) as u64)
        ));
    }
    Ok(())
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
    /// Rounds whose events are recorded in [`ReplayResult::trace`] (a
    /// round timeline; none by default).
    pub trace: TraceWindow,
    /// Record where every silo's rounds go ([`ReplayResult::breakdown`];
    /// at most [`breakdown::MAX_BREAKDOWN_ROWS`] silo-rounds).
    pub breakdown: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            rounds: 100,
            straggler: Straggler::None,
            seed: 0,
            trace: TraceWindow::default(),
            breakdown: false,
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
    /// A round whose start times were forgotten (an endless stepper keeps
    /// only the rounds not yet asked for).
    #[error("round {round}: its start times were forgotten (rounds before {first} are not kept)")]
    Forgotten {
        /// The round asked for.
        round: u64,
        /// The first round still kept.
        first: u64,
    },
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
    /// The trace leaves a silo down for good: the rounds wait for it for
    /// ever ([`crate::net::dynamics::AvailabilityPolicy::Wait`]).
    #[error(
        "silo {silo} goes down at {since_s} s and the trace never brings it back up: \
         synchronous rounds wait for it (round {round} never ends); end the trace with an \
         `avail` row setting it `up`"
    )]
    DownForGood {
        /// The silo.
        silo: usize,
        /// When it went down, s.
        since_s: f64,
        /// The lowest round a silo is stuck in.
        round: u64,
    },
    /// Something an availability policy other than `wait` does not cover
    /// ([`churn`]).
    #[error("{0}")]
    Churn(String),
    /// A breakdown of more silo-rounds than [`breakdown::MAX_BREAKDOWN_ROWS`].
    #[error(
        "a time breakdown of {rounds} rounds x {silos} silos is {rows} silo-rounds, more than \
         the {max} kept in memory: ask for fewer rounds"
    )]
    BreakdownTooLarge {
        /// Rounds asked for.
        rounds: u64,
        /// Silos.
        silos: usize,
        /// `rounds x silos`.
        rows: u64,
        /// [`breakdown::MAX_BREAKDOWN_ROWS`].
        max: u64,
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
    /// The events of [`ReplayOptions::trace`]'s rounds, when asked for
    /// (gossip and STAR replays; not Clique Averaging's two phases).
    pub trace: Option<RoundTrace>,
    /// Where every silo's rounds went, when asked for
    /// ([`ReplayOptions::breakdown`]; gossip and STAR replays).
    pub breakdown: Option<Breakdown>,
    /// What churn did, under an availability policy other than `wait`
    /// ([`churn`]).
    pub churn: Option<ChurnSummary>,
}

/// A replay's churn, under an availability policy other than `wait`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChurnSummary {
    /// The policy (`skip`, `timeout:500`).
    pub policy: String,
    /// Its counters.
    pub stats: ChurnStats,
    /// Silo-rounds absent over the rounds `0..K`.
    pub silo_rounds_absent: u64,
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

/// Replays `options.rounds` synchronous rounds of `schedule` on `delay`
/// through `network`. STAR (server-client) overlays run the two-phase
/// protocol; the protocol of round 0's overlay decides for the whole run.
///
/// # Examples
/// ```
/// use fedtopo::prelude::*;
///
/// let u = load_underlay(None, &LoadOptions::default())?;
/// let m = NetworkSpec { access_bps: 1e8, ..NetworkSpec::default() }.delay_model(&u);
/// let mst = EvaluatedOverlay::build(OverlayKind::Mst, &u, &m, &BuildOptions::default())?;
/// let options = ReplayOptions { rounds: 10, breakdown: true, ..ReplayOptions::default() };
/// let r = replay(mst.schedule(), &m, NetworkKind::Flow.build(&m).as_mut(), &options)?;
/// // Where the time went: the critical path spans the run.
/// let path = r.breakdown.as_ref().unwrap().critical_path();
/// assert_eq!(path.last().unwrap().end_ms, r.makespan_ms());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    RoundStepper::with_last_round(schedule, delay, Net::Borrowed(network), options, on_round)?
        .finish()
}

pub mod allreduce;
pub mod asynchronous;
pub mod breakdown;
pub mod churn;
pub mod clock;
pub mod harness;
mod round;
mod stepper;
pub mod trace;
pub mod two_phase;
pub use breakdown::{Breakdown, SiloRound};
pub use churn::{ChurnStats, RoundParticipation};
pub use stepper::RoundStepper;
pub use trace::{RoundTrace, TraceWindow};

#[cfg(test)]
mod tests;
