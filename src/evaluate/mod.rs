//! An evaluated overlay: one value for "this overlay kind, built on this
//! network", with every operation the callers above need.
//!
//! [`EvaluatedOverlay::build`] builds any [`OverlayKind`] in its own shape
//! ([`Shape`]: a static overlay, a per-round schedule, or the two phases of
//! clique averaging) and then answers, whatever the shape:
//!
//! * [`EvaluatedOverlay::cycle_time`]: the exact max-plus cycle time
//!   (\[Marfoq20\] Sec. 2; two-phase for clique averaging) or, for schedules,
//!   the paper's round estimate (\[Marfoq20\] App. H.6) next to the exact
//!   max-plus growth rate of the same sampled rounds;
//! * [`EvaluatedOverlay::replay`]: an event replay on any network model;
//! * [`EvaluatedOverlay::clock`]: the round clock a trainer advances;
//! * [`EvaluatedOverlay::export`]: the overlay with labels and delays.
//!
//! The CLI, experiment jobs, reports and the training session call these;
//! none of them matches on kinds. A new family (a time-varying schedule, say)
//! adds a [`Shape`] and its arms here, and every caller gets it.
//!
//! [`compare`]: the compare use case, every overlay of a list built and
//! timed on one network ([`compare::compare_overlays`]).

pub mod compare;

use thiserror::Error;

use crate::graph::failures::{FailureError, FailureSpec, Failures};
use crate::graph::{Overlay, OverlaySchedule};
use crate::mixing::consensus::{ConsensusError, ConsensusMatrix, ConsensusRule};
use crate::net::delay::DelayModel;
use crate::network::{NetworkKind, NetworkModel};
use crate::overlay::build::{build, BuildError, BuildOptions, OverlayKind, Shape};
use crate::overlay::export::{ExportedOverlay, ExportedSchedule};
use crate::replay::allreduce::{replay_allreduce, AllReduceEventClock, AllReduceReplayError};
use crate::replay::clock::{
    AllReduceClock, CliqueAveragingClock, ClockError, EngineClock, RoundClock,
};
use crate::replay::two_phase::{replay_clique_averaging, CliqueReplayError};
use crate::replay::{replay_with_progress, ReplayError, ReplayOptions, ReplayResult, Straggler};
use crate::timing::allreduce::{AllReduce, AllReduceSchedule};
use crate::timing::schedule::{
    maxplus_rate, periodic_rate, round_estimate, round_estimate_and_maxplus_rate, RoundEstimate,
};
use crate::timing::two_phase::two_phase_cycle_time;
use crate::timing::{cycle_time, TimingError};
use crate::units::Ms;

/// Why an evaluated overlay could not be built, timed, replayed or clocked.
#[derive(Debug, Error)]
pub enum EvalError {
    /// The overlay could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// Its cycle time could not be computed.
    #[error(transparent)]
    Timing(#[from] TimingError),
    /// The event replay failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The two-phase (clique averaging) replay failed.
    #[error(transparent)]
    TwoPhaseReplay(#[from] CliqueReplayError),
    /// An all-reduce replay (ring or mesh) failed.
    #[error(transparent)]
    AllReduceReplay(#[from] AllReduceReplayError),
    /// The round clock could not be made.
    #[error(transparent)]
    Clock(#[from] ClockError),
    /// A failure model that does not apply.
    #[error(transparent)]
    Failures(#[from] FailureError),
    /// A build option out of its range (the message names it).
    #[error("{0}")]
    Options(String),
    /// The asynchronous run could not be made.
    #[error(transparent)]
    Async(#[from] crate::replay::asynchronous::AsyncError),
    /// An option the overlay's shape does not support.
    #[error("{overlay}: {what} not supported for Clique Averaging replays")]
    Unsupported {
        /// Overlay name.
        overlay: String,
        /// What is not supported ("stragglers are", ...).
        what: String,
    },
    /// A closed form asked of a network with dynamics (a trace).
    #[error(
        "{overlay}: the max-plus cycle time is a closed form of the static network and cannot \
         follow a trace; replay the rounds instead (simulate, a clock)"
    )]
    Dynamics {
        /// Overlay name.
        overlay: String,
    },
    /// The clique-averaging clock is max-plus only.
    #[error(
        "{overlay}: the Clique Averaging clock is the two-phase max-plus recurrence; \
         network `{network}` is not supported (use maxplus)"
    )]
    ClockNetwork {
        /// Overlay name.
        overlay: String,
        /// The network model asked for.
        network: NetworkKind,
    },
    /// The overlay is the same every round: there are no rounds to write.
    #[error("`{overlay}` is the same every round: write it as one overlay, not per round")]
    NotSchedule {
        /// Overlay name.
        overlay: String,
    },
    /// A schedule with lagged arcs (Multigraph's background transfers) has
    /// no per-round file form: the format carries no lags.
    #[error(
        "`{overlay}` has lagged arcs (transfers that span rounds); the per-round file format \
         cannot carry them, so its rounds are not written (weak=idle can be)"
    )]
    LaggedRounds {
        /// Overlay name.
        overlay: String,
    },
    /// What an all-reduce (ring or mesh) does not do (it is exact averaging
    /// in chunks, timed by its own recurrence).
    #[error("`{overlay}` is an all-reduce (exact averaging in chunks): {what}")]
    AllReduce {
        /// Overlay name.
        overlay: String,
        /// What it does not do, and what to use instead.
        what: String,
    },
    /// The overlay changes every round, so there is no single graph.
    #[error("`{overlay}` changes every round: it has a schedule, not a single overlay to {what}")]
    NotStatic {
        /// Overlay name.
        overlay: String,
        /// What was asked of it.
        what: &'static str,
    },
}

/// The cycle time of an evaluated overlay, ms per round.
#[derive(Debug, Clone, PartialEq)]
pub struct OverlayTiming {
    /// Cycle time, ms per round: the exact max-plus cycle time for static
    /// overlays ([`crate::timing::cycle_time`]) and clique averaging
    /// ([`crate::timing::two_phase`]); for periodic schedules the exact
    /// max-plus rate of the period; for MATCHA and sampled schedules (its
    /// exported rounds) the paper's estimate, the mean round duration
    /// (\[Marfoq20\] App. H.6).
    pub cycle_time_ms: Ms,
    /// A critical circuit (silo indices; empty for schedules).
    pub critical_circuit: Vec<usize>,
    /// For schedules: the round estimate and the exact max-plus rate.
    pub schedule: Option<ScheduleTiming>,
}

impl OverlayTiming {
    /// Rounds per second, `1000 / cycle time`.
    pub fn rounds_per_second(&self) -> f64 {
        1e3 / self.cycle_time_ms
    }

    /// The cycle time in the published convention: for schedules the total
    /// duration of the sampled rounds over `rounds - 1` (\[Marfoq20\] App. H.6,
    /// as in its tables), else the cycle time itself. ms.
    pub fn published_ms(&self) -> Ms {
        self.schedule
            .as_ref()
            .map_or(self.cycle_time_ms, |s| s.estimate.published_ms)
    }
}

/// Cycle time of a schedule two ways, over the same sampled rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScheduleTiming {
    /// The paper's round estimate ([`crate::timing::schedule::round_estimate`]).
    pub estimate: RoundEstimate,
    /// The exact max-plus growth rate `t(K)/K` of the same rounds, ms (never
    /// larger than the estimate: silos wait only for their round's
    /// in-neighbours).
    pub maxplus_ms: Ms,
}

/// How a schedule mixes: MATCHA's design (\[Wang19\]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ScheduleMixing {
    /// Activation seed.
    pub seed: u64,
    /// Number of matchings.
    pub matchings: usize,
    /// Communication budget `Cb`.
    pub budget: f64,
    /// Optimal algebraic connectivity found.
    pub lambda2: f64,
    /// Its certified relative optimality gap.
    pub lambda2_rel_gap: f64,
    /// Mixing parameter `alpha` (`W = I - alpha L`).
    pub alpha: f64,
    /// Spectral norm of `E[W^T W] - J/n`.
    pub rho: f64,
}

/// Arcs and degrees of an evaluated overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DegreeStats {
    /// Number of arcs (schedules: the mean over the sampled rounds, rounded).
    pub arcs: usize,
    /// Largest in- or out-degree (schedules: over the sampled rounds).
    pub max_degree: usize,
    /// True when the numbers are over a schedule's sampled rounds.
    pub per_round: bool,
}

/// An overlay kind built on a network, ready to be timed, replayed,
/// clocked and exported.
///
/// # Examples
/// ```
/// use fedtopo::prelude::*;
///
/// let u = load_underlay(None, &LoadOptions::default())?;
/// let m = NetworkSpec::default().delay_model(&u);
/// let opts = BuildOptions::default();
/// let star = EvaluatedOverlay::build(OverlayKind::Star, &u, &m, &opts)?;
/// let ring = EvaluatedOverlay::build(OverlayKind::RingOpt, &u, &m, &opts)?;
/// // Exact max-plus cycle times, ms per round.
/// let (s, r) = (star.cycle_time(&m)?.cycle_time_ms, ring.cycle_time(&m)?.cycle_time_ms);
/// assert!(r < s);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct EvaluatedOverlay {
    kind: OverlayKind,
    shape: Shape,
    /// Rounds sampled by a schedule's cycle-time estimates.
    sample_rounds: u64,
}

impl EvaluatedOverlay {
    /// Builds `kind` for `model` on `underlay` ([`crate::overlay::build::build`]).
    pub fn build(
        kind: OverlayKind,
        underlay: &crate::net::underlay::Underlay,
        model: &DelayModel,
        options: &BuildOptions,
    ) -> Result<Self, EvalError> {
        crate::overlay::matcha::check_matcha_rounds(options.matcha.rounds)
            .map_err(|e| EvalError::Options(format!("matcha rounds: {e}")))?;
        let shape = build(kind, underlay, model, options)?;
        Ok(EvaluatedOverlay {
            kind,
            shape,
            sample_rounds: options.matcha.rounds,
        })
    }

    /// The consensus weights given with the overlay (a file whose arcs
    /// carry a `weight`): row `i` is what silo `i` gives to its own model and
    /// each model it receives, rows summing to 1 (\[Marfoq20\] eq. 2).
    /// `None` when the overlay brings no weights.
    pub fn consensus_weights(&self) -> Option<&ConsensusMatrix> {
        match &self.shape {
            Shape::Static {
                weights: Some(w), ..
            } => Some(w),
            _ => None,
        }
    }

    /// The consensus weights of every round of a periodic schedule's period
    /// that brings its own (`exp-1peer`: `(I + P(t)) / 2`, \[Ying21\];
    /// `base:k=K`: the Base-(k+1) matrices, \[Takezawa23\]): entry `r` is
    /// round `r`'s matrix, in the layout of [`Self::consensus_weights`].
    /// `None` for every other overlay.
    pub fn round_consensus_weights(&self) -> Option<&[ConsensusMatrix]> {
        match &self.shape {
            Shape::Periodic {
                weights: Some(w), ..
            } => Some(w),
            _ => None,
        }
    }

    /// The kind it was built as.
    pub fn kind(&self) -> OverlayKind {
        self.kind
    }

    /// The name used in reports (`kind.to_string()`).
    pub fn name(&self) -> String {
        self.kind.to_string()
    }

    /// True when the overlay changes every round.
    pub fn is_schedule(&self) -> bool {
        matches!(self.shape, Shape::Matcha(_) | Shape::Periodic { .. })
    }

    /// True when [`Self::cycle_time`] is the exact max-plus value of the
    /// rounds a replay runs: static overlays, clique averaging, periodic
    /// schedules (the rate of the period). False for MATCHA, whose rounds
    /// are drawn afresh and whose cycle time is the paper's estimate over
    /// sampled rounds.
    pub fn has_exact_cycle_time(&self) -> bool {
        match &self.shape {
            Shape::Matcha(_) => false,
            Shape::Periodic { schedule: s, .. } => !s.is_sampled(),
            _ => true,
        }
    }

    /// The overlay of every round, when there is one (for clique averaging,
    /// the overlay the models travel on; for an all-reduce, the ring or mesh its
    /// chunks travel on); `None` for schedules.
    pub fn overlay(&self) -> Option<&Overlay> {
        match &self.shape {
            Shape::Static { overlay: o, .. }
            | Shape::CliqueAveraging { models: o, .. }
            | Shape::AllReduce { links: o, .. } => Some(o),
            Shape::Matcha(_) | Shape::Periodic { .. } => None,
        }
    }

    /// The overlays of the rounds (a static overlay is its own schedule).
    pub fn schedule(&self) -> &dyn OverlaySchedule {
        match &self.shape {
            Shape::Static { overlay: o, .. }
            | Shape::CliqueAveraging { models: o, .. }
            | Shape::AllReduce { links: o, .. } => o,
            Shape::Matcha(s) => s,
            Shape::Periodic { schedule: s, .. } => s,
        }
    }

    /// [`Self::schedule`] with random node or link failures drawn from
    /// `seed` ([`Failures`]); the schedule itself when `failures` is `None`.
    pub fn with_failures(
        &self,
        failures: Option<FailureSpec>,
        seed: u64,
    ) -> Result<Box<dyn OverlaySchedule + '_>, EvalError> {
        if failures.is_some() && self.allreduce().is_some() {
            return Err(EvalError::AllReduce {
                overlay: self.name(),
                what: "random failures are not modelled (it stalls on any failure)".into(),
            });
        }
        let base = self.schedule();
        Ok(match failures {
            None => Box::new(base),
            Some(f) => Box::new(Failures::new(base, f, seed)?),
        })
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.schedule().silo_count()
    }

    /// Arcs and largest degree (schedules: over the sampled rounds).
    pub fn degree_stats(&self) -> DegreeStats {
        match &self.shape {
            Shape::Static { overlay: o, .. }
            | Shape::CliqueAveraging { models: o, .. }
            | Shape::AllReduce { links: o, .. } => DegreeStats {
                arcs: o.arc_count(),
                max_degree: o.max_degree(),
                per_round: false,
            },
            Shape::Matcha(s) => {
                // Counted from the active matchings: no overlay built.
                let rounds = self.schedule_rounds().max(1);
                let (mut arcs, mut max_degree) = (0usize, 0usize);
                for k in 0..rounds {
                    let (a, d) = s.round_degrees(k);
                    arcs += a;
                    max_degree = max_degree.max(d);
                }
                DegreeStats {
                    arcs: (arcs as f64 / rounds as f64).round() as usize,
                    max_degree,
                    per_round: true,
                }
            }
            Shape::Periodic { .. } => {
                let s = self.schedule();
                let rounds = self.schedule_rounds().max(1);
                let (mut arcs, mut max_degree) = (0usize, 0usize);
                for k in 0..rounds {
                    let o = s.round(k);
                    arcs += o.arc_count();
                    max_degree = max_degree.max(o.max_degree());
                }
                DegreeStats {
                    arcs: (arcs as f64 / rounds as f64).round() as usize,
                    max_degree,
                    per_round: true,
                }
            }
        }
    }

    /// Rounds a schedule's statistics and export cover: a periodic
    /// schedule's period, MATCHA's sampled rounds; 1 for static overlays.
    fn schedule_rounds(&self) -> u64 {
        match &self.shape {
            Shape::Periodic { schedule: s, .. } => s.period() as u64,
            Shape::Matcha(_) => self.sample_rounds,
            _ => 1,
        }
    }

    /// MATCHA's solved design (matchings, activation probabilities,
    /// `lambda_2` and its certificate, `alpha`); `None` for every other shape.
    pub fn matcha_design(&self) -> Option<&crate::overlay::matcha::MatchaDesign> {
        match &self.shape {
            Shape::Matcha(s) => Some(s.design()),
            _ => None,
        }
    }

    /// How a schedule mixes (MATCHA's design); `None` for static overlays.
    pub fn mixing(&self) -> Option<ScheduleMixing> {
        let Shape::Matcha(s) = &self.shape else {
            return None;
        };
        let d = s.design();
        Some(ScheduleMixing {
            seed: s.seed(),
            matchings: d.matchings.len(),
            budget: d.budget,
            lambda2: d.activation.lambda2,
            lambda2_rel_gap: d.activation.relative_gap(),
            alpha: d.mixing.alpha,
            rho: d.mixing.rho,
        })
    }

    /// The silo groups whose gradients are averaged at every local step
    /// (clique averaging, \[Bellet21\]); `None` for every other shape.
    pub fn gradient_groups(&self) -> Option<Vec<Vec<usize>>> {
        match &self.shape {
            Shape::CliqueAveraging { topology, .. } => Some(topology.averaging_groups()),
            _ => None,
        }
    }

    /// The schedule of an all-reduce (ring or mesh); `None` for every
    /// other shape.
    pub fn allreduce(&self) -> Option<&AllReduceSchedule> {
        match &self.shape {
            Shape::AllReduce { schedule, .. } => Some(schedule),
            _ => None,
        }
    }

    /// A text that changes whenever the rounds' overlays change (for the
    /// resume fingerprint of a training run).
    pub fn fingerprint(&self) -> String {
        let shape = match &self.shape {
            Shape::Static { overlay: o, .. } | Shape::CliqueAveraging { models: o, .. } => format!(
                "{}|{:?}|{:?}",
                o.name,
                o.arcs(),
                o.protocol == crate::graph::Protocol::Gossip
            ),
            Shape::AllReduce { schedule, .. } => match schedule.tour() {
                Some(tour) => format!("ring-allreduce|{tour:?}"),
                None => "mesh-allreduce".to_string(),
            },
            Shape::Matcha(s) => {
                let d = s.design();
                format!(
                    "{}|{:?}|{:?}|{}|{}",
                    d.name,
                    d.matchings,
                    d.activation.probabilities,
                    s.alpha(),
                    s.seed()
                )
            }
            Shape::Periodic { schedule: s, .. } => {
                let rounds: Vec<&[(usize, usize)]> = s.rounds().iter().map(|o| o.arcs()).collect();
                let sampled = if s.is_sampled() { "|sampled" } else { "" };
                format!("{}|periodic{sampled}|{:?}", s.name, rounds)
            }
        };
        let shape = match self.round_consensus_weights() {
            // Written as nested rows, as before the matrices had a type
            // of their own: resume fingerprints stay the same.
            Some(w) => format!(
                "{shape}|round weights {:?}",
                w.iter().map(ConsensusMatrix::to_rows).collect::<Vec<_>>()
            ),
            None => shape,
        };
        match self.consensus_weights() {
            Some(w) => format!("{shape}|weights {:?}", w.to_rows()),
            None => shape,
        }
    }

    /// The cycle time on `model` (see [`OverlayTiming`]); schedules sample
    /// the `options.matcha.rounds` rounds given at build time.
    /// [`EvalError::Dynamics`] when `model` has a trace (no closed form).
    pub fn cycle_time(&self, model: &DelayModel) -> Result<OverlayTiming, EvalError> {
        if model.dynamics.is_some() {
            return Err(EvalError::Dynamics {
                overlay: self.name(),
            });
        }
        Ok(match &self.shape {
            Shape::Static { overlay: o, .. } => {
                let t = cycle_time(o, model)?;
                OverlayTiming {
                    cycle_time_ms: t.cycle_time_ms,
                    critical_circuit: t.critical_circuit,
                    schedule: None,
                }
            }
            Shape::AllReduce { schedule, .. } => {
                let t = AllReduce::new(model, schedule)?.cycle_time(&self.name())?;
                OverlayTiming {
                    cycle_time_ms: t.cycle_time_ms,
                    critical_circuit: t.critical_circuit,
                    schedule: None,
                }
            }
            Shape::CliqueAveraging { topology, models } => {
                let gradients = topology.gradient_overlay();
                let t = two_phase_cycle_time(&topology.name, &gradients, models, model)?;
                OverlayTiming {
                    cycle_time_ms: t.cycle_time_ms,
                    critical_circuit: t.critical_circuit,
                    schedule: None,
                }
            }
            Shape::Matcha(s) => {
                let (estimate, maxplus_ms) =
                    round_estimate_and_maxplus_rate(s, model, self.sample_rounds)?;
                OverlayTiming {
                    cycle_time_ms: estimate.mean_ms,
                    critical_circuit: Vec::new(),
                    schedule: Some(ScheduleTiming {
                        estimate,
                        maxplus_ms,
                    }),
                }
            }
            Shape::Periodic { schedule: s, .. } if s.is_sampled() => {
                // A sample of a random schedule (a MATCHA export): timed
                // as MATCHA times its sampled rounds, so the round trip
                // keeps MATCHA's numbers (estimate and max-plus rate).
                let period = s.period() as u64;
                let estimate = round_estimate(s, model, period.max(2))?;
                let maxplus_ms = maxplus_rate(s, model, period)?;
                OverlayTiming {
                    cycle_time_ms: estimate.mean_ms,
                    critical_circuit: Vec::new(),
                    schedule: Some(ScheduleTiming {
                        estimate,
                        maxplus_ms,
                    }),
                }
            }
            Shape::Periodic { schedule: s, .. } => {
                // Exact: the max-plus rate of the periodic repetition; the
                // paper-style estimate over one period (at least 2 rounds).
                let period = s.period() as u64;
                let maxplus_ms = periodic_rate(s, model, period)?;
                let estimate = round_estimate(s, model, period.max(2))?;
                OverlayTiming {
                    cycle_time_ms: maxplus_ms,
                    critical_circuit: Vec::new(),
                    schedule: Some(ScheduleTiming {
                        estimate,
                        maxplus_ms,
                    }),
                }
            }
        })
    }

    /// Replays `options.rounds` rounds in the event engine on `network`
    /// ([`crate::replay`]; clique averaging: the two-phase replay), with
    /// random `failures` drawn from `options.seed`. `on_round(k)` is called
    /// as round `k` starts (`k = 0..=rounds`).
    ///
    /// # Errors
    /// Clique averaging replays support neither stragglers nor failures.
    pub fn replay(
        &self,
        model: &DelayModel,
        network: &mut dyn NetworkModel,
        options: &ReplayOptions,
        failures: Option<FailureSpec>,
        on_round: &mut dyn FnMut(u64),
    ) -> Result<ReplayResult, EvalError> {
        if let Shape::CliqueAveraging { topology, .. } = &self.shape {
            own_protocol_allows(options, &failures, |what| EvalError::Unsupported {
                overlay: self.name(),
                what: what.to_string(),
            })?;
            let r = replay_clique_averaging(topology, model, network, options.rounds)?;
            (0..=options.rounds).for_each(&mut *on_round);
            return Ok(r.into_replay_result());
        }
        if let Some(schedule) = self.allreduce() {
            own_protocol_allows(options, &failures, |what| EvalError::AllReduce {
                overlay: self.name(),
                what: format!("{what} not supported in its replay"),
            })?;
            let r = replay_allreduce(&self.name(), schedule, model, network, options.rounds)?;
            (0..=options.rounds).for_each(&mut *on_round);
            return Ok(r.into_replay_result());
        }
        let rounds = self.with_failures(failures, options.seed)?;
        Ok(replay_with_progress(
            rounds.as_ref(),
            model,
            network,
            options,
            on_round,
        )?)
    }

    /// Runs asynchronous protocol `protocol` on this overlay over
    /// `network` ([`crate::replay::asynchronous`]): gossip on the overlay's
    /// neighbours (a static overlay), buffered aggregation on `star` with
    /// its centre as the server.
    ///
    /// # Errors
    /// A schedule for gossip, another overlay than `star` (or Clique
    /// Averaging) for buffered aggregation, or the run's own errors.
    pub fn run_async(
        &self,
        protocol: crate::replay::asynchronous::AsyncProtocol,
        model: &DelayModel,
        network: &mut dyn NetworkModel,
        options: &crate::replay::asynchronous::AsyncOptions,
    ) -> Result<crate::replay::asynchronous::AsyncRun, EvalError> {
        use crate::replay::asynchronous::{
            buffered::buffered_async, gossip::async_gossip, AsyncProtocol,
        };
        let bad = |m: &str| EvalError::Options(format!("{protocol} on {}: {m}", self.name()));
        if self.gradient_groups().is_some() {
            return Err(bad("Clique Averaging is a synchronous protocol"));
        }
        if self.allreduce().is_some() {
            return Err(bad("an all-reduce is a synchronous protocol"));
        }
        Ok(match protocol {
            AsyncProtocol::Gossip => {
                let o = self.overlay().ok_or_else(|| {
                    bad("asynchronous gossip needs a static overlay (not a schedule)")
                })?;
                async_gossip(o, model, network, options)?
            }
            AsyncProtocol::Buffered { .. } => {
                let crate::graph::Protocol::ServerClient { center } =
                    self.schedule().round(0).protocol
                else {
                    return Err(bad(
                        "buffered aggregation runs on star (its centre is the server)",
                    ));
                };
                let k = protocol.buffer_for(model.silo_count()).unwrap_or(1);
                buffered_async(model, center, k, network, options)?
            }
        })
    }

    /// The round clock of a training run whose rounds are `rounds` (this
    /// overlay's [`Self::schedule`], possibly [`Self::with_failures`]), on
    /// `model` through `network`: the event engine's clock, or for clique
    /// averaging the two-phase max-plus recurrence (maxplus network only),
    /// or for an all-reduce (ring or mesh) its chunk recurrence (maxplus network, no
    /// trace) or its chunk-by-chunk event replay (any other network, or a
    /// trace).
    pub fn clock<'a>(
        &self,
        rounds: &'a dyn OverlaySchedule,
        model: &'a DelayModel,
        network: NetworkKind,
    ) -> Result<Box<dyn RoundClock + 'a>, EvalError> {
        match &self.shape {
            Shape::CliqueAveraging { topology, .. } => {
                if model.dynamics.is_some() {
                    // A closed form: it cannot follow a trace.
                    return Err(EvalError::Unsupported {
                        overlay: self.name(),
                        what: "clocks on network traces (the two-phase max-plus recurrence) are"
                            .into(),
                    });
                }
                if network != NetworkKind::Maxplus {
                    return Err(EvalError::ClockNetwork {
                        overlay: self.name(),
                        network,
                    });
                }
                Ok(Box::new(CliqueAveragingClock::new(
                    model.clone(),
                    topology.gradient_overlay(),
                )))
            }
            Shape::AllReduce { schedule, .. } => {
                if model.dynamics.is_none() && network == NetworkKind::Maxplus {
                    // The recurrence in closed form (the event clock gives
                    // the same times, tested).
                    return Ok(Box::new(AllReduceClock::new(AllReduce::new(
                        model, schedule,
                    )?)));
                }
                Ok(Box::new(AllReduceEventClock::new(
                    schedule,
                    model,
                    network.build(model),
                )?))
            }
            _ => Ok(Box::new(EngineClock::new(rounds, model, network)?)),
        }
    }

    /// The overlay ready to write as GML, DOT or JSON, with silo `labels`,
    /// arc delays from `model` and the cycle time when given.
    ///
    /// # Errors
    /// [`EvalError::NotStatic`] for schedules (no single graph to write).
    pub fn export(
        &self,
        labels: &[String],
        model: Option<&DelayModel>,
        cycle_time_ms: Option<Ms>,
    ) -> Result<ExportedOverlay, EvalError> {
        if self.allreduce().is_some() {
            return Err(EvalError::AllReduce {
                overlay: self.name(),
                what: format!(
                    "an overlay file would be read back as gossip on its arcs; train it by \
                     name (`--overlays {}`)",
                    self.name()
                ),
            });
        }
        let o = self.overlay().ok_or_else(|| EvalError::NotStatic {
            overlay: self.name(),
            what: "export",
        })?;
        Ok(ExportedOverlay::new(o, labels, model, cycle_time_ms))
    }

    /// The rounds of a schedule ready to write in the per-round format
    /// (MATCHA: the sampled rounds; a periodic schedule: one period), with
    /// silo `labels`, and the weights of a family that brings its own
    /// (MATCHA's `I - alpha L(k)` are a training rule: see
    /// `design::export::schedule_with_weights`).
    ///
    /// # Errors
    /// [`EvalError::NotStatic`]'s counterpart: static overlays have no
    /// rounds to write ([`Self::export`] writes them).
    pub fn export_schedule(&self, labels: &[String]) -> Result<ExportedSchedule, EvalError> {
        if !self.is_schedule() {
            return Err(EvalError::NotSchedule {
                overlay: self.name(),
            });
        }
        if self.schedule().max_lag() > 0 {
            return Err(EvalError::LaggedRounds {
                overlay: self.name(),
            });
        }
        let sampled = match &self.shape {
            Shape::Matcha(_) => true,
            Shape::Periodic { schedule: s, .. } => s.is_sampled(),
            _ => false,
        };
        let e = ExportedSchedule::new(
            self.schedule(),
            labels,
            &self.name(),
            self.schedule_rounds(),
        )
        .with_sampled(sampled);
        Ok(match self.round_consensus_weights() {
            Some(w) => e.with_weights(w.to_vec()),
            None => e,
        })
    }
}

/// Shapes replayed by a protocol of their own (Clique Averaging, ring
/// all-reduce) model neither stragglers nor failures: `refused(what)` is
/// the shape's error for each.
fn own_protocol_allows(
    options: &ReplayOptions,
    failures: &Option<FailureSpec>,
    refused: impl Fn(&str) -> EvalError,
) -> Result<(), EvalError> {
    if options.straggler != Straggler::None {
        return Err(refused("stragglers are"));
    }
    if failures.is_some() {
        return Err(refused("failures are"));
    }
    Ok(())
}

/// The consensus rule an evaluated overlay brings of its own. The rules
/// live in [`crate::mixing::consensus`], below the overlays; this one method
/// reads an [`EvaluatedOverlay`], so it is defined here, above both.
impl ConsensusRule {
    /// The rule a run of `overlay` uses: this one, unless it is
    /// [`ConsensusRule::Auto`] and the overlay brings its own consensus, that
    /// is a schedule's `I - alpha L` (MATCHA, \[Wang19\]), a family's
    /// matrices per round ([`EvaluatedOverlay::round_consensus_weights`],
    /// which become [`ConsensusRule::PerRound`]) or the weights of an
    /// overlay file ([`EvaluatedOverlay::consensus_weights`], row-stochastic),
    /// which becomes [`ConsensusRule::Custom`].
    ///
    /// An all-reduce (ring or mesh) computes the exact average: `auto` becomes
    /// [`ConsensusRule::Average`], `average` and `fedavg` stand, any other
    /// rule is [`ConsensusError::AllReduceRule`].
    pub fn for_overlay(&self, overlay: &EvaluatedOverlay) -> Result<ConsensusRule, ConsensusError> {
        if overlay.allreduce().is_some() {
            return match self {
                ConsensusRule::Auto => Ok(ConsensusRule::Average),
                ConsensusRule::Average | ConsensusRule::WeightedAverage { .. } => Ok(self.clone()),
                other => Err(ConsensusError::AllReduceRule {
                    rule: format!("{other:?}"),
                }),
            };
        }
        if *self != ConsensusRule::Auto {
            return Ok(self.clone());
        }
        if let Some(m) = overlay.mixing() {
            return Ok(ConsensusRule::Matcha { alpha: m.alpha });
        }
        if let Some(rounds) = overlay.round_consensus_weights() {
            return Ok(ConsensusRule::PerRound(
                rounds
                    .iter()
                    .map(|w| w.checked().cloned())
                    .collect::<Result<_, _>>()?,
            ));
        }
        if let Some(w) = overlay.consensus_weights() {
            return Ok(ConsensusRule::Custom(w.checked()?.clone()));
        }
        Ok(ConsensusRule::Auto)
    }
}
