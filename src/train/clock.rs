//! The seam between training and the network simulator: a [`RoundClock`]
//! turns the overlay of each round into the wall-clock time (ms) at which
//! every silo finishes that round.
//!
//! The trainer runs rounds `k = 0, 1, 2, ...` as fast as the machine allows
//! and asks the clock, round by round, when they *would* have ended on the
//! simulated network. [`MaxPlusClock`] implements the paper's max-plus
//! recurrence in closed form; [`EngineClock`] replays the rounds event by
//! event in the discrete-event engine ([`crate::engine`]) over any network
//! model ([`NetworkKind`]: `maxplus | paper | flow`). With the `maxplus`
//! network both give the same times (tested), an independent cross-check.

use thiserror::Error;

use crate::delay::DelayModel;
use crate::network::NetworkKind;
use crate::overlay::{Overlay, OverlaySchedule, Protocol};
use crate::replay::{ReplayError, RoundStepper, Straggler};
use crate::timing::{self, TimingError};
use crate::units::Ms;

/// Why a clock could not time a round.
#[derive(Debug, Error)]
pub enum ClockError {
    /// Rounds must be timed in order `0, 1, 2, ...`.
    #[error("round {got} timed out of order (expected round {expected})")]
    OutOfOrder {
        /// The round the clock expected.
        expected: u64,
        /// The round it was given.
        got: u64,
    },
    /// The overlay does not fit the network.
    #[error(transparent)]
    Timing(#[from] TimingError),
    /// The event-driven replay failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// Anything a clock implementation wants to report.
    #[error("{0}")]
    Other(String),
}

/// Wall-clock times of training rounds on a simulated network.
///
/// Contract: the clock starts with every silo at time 0 ms; the `k`-th call
/// (`k = 0, 1, ...`, in order, one call per round) receives round `k`'s
/// overlay and returns `t(k+1)`, the time (ms since the start) at which each
/// silo has finished round `k` (local steps, sends, receives and averaging),
/// one entry per silo. Times never decrease from one round to the next.
/// A clock is deterministic: the same overlays give the same times, so a
/// resumed run rebuilds its clock by replaying the rounds already done.
pub trait RoundClock {
    /// End times (ms, one per silo) of round `k` on `overlay`.
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError>;
}

/// The exact max-plus recurrence of \[Marfoq20\] (Sec. 2, "Cycle time"):
///
/// ```text
/// t_i(k+1) = max_{j in N_i^in u {i}} ( t_j(k) + d_o(j,i) ),   d_o(i,i) = s*Tc(i)
/// ```
///
/// with the \[Marfoq20\] eq. (3) arc delays of the round's overlay
/// ([`timing::maxplus_graph`]); `t_i(k)` is the time silo `i` starts round
/// `k`. A server-client overlay (STAR, centre `c`) runs the two-phase
/// protocol of [`crate::replay`]: the centre aggregates once it has computed
/// and received every client's model, and a client starts the next round
/// when the broadcast reaches it:
///
/// ```text
/// t_c(k+1) = max( t_c(k) + s*Tc(c), max_{i != c} t_i(k) + d_o(i,c) )
/// t_j(k+1) = t_c(k+1) + d_o(c,j) - s*Tc(c)                      (j != c)
/// ```
///
/// whose cycle time is [`timing::cycle_time`]'s STAR formula
/// `max_i ( d_o(c,i) - s*Tc(c) + d_o(i,c) )` (when the centre's own
/// computation is not the bottleneck). With the `maxplus` network the
/// event-driven [`EngineClock`] computes the same times (tested).
#[derive(Debug, Clone)]
pub struct MaxPlusClock {
    model: DelayModel,
    t: Vec<Ms>,
    next: u64,
}

impl MaxPlusClock {
    /// A clock on `model`, every silo at time 0.
    pub fn new(model: DelayModel) -> Self {
        let n = model.silo_count();
        MaxPlusClock {
            model,
            t: vec![0.0; n],
            next: 0,
        }
    }

    /// The delay model.
    pub fn model(&self) -> &DelayModel {
        &self.model
    }
}

impl RoundClock for MaxPlusClock {
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError> {
        if k != self.next {
            return Err(ClockError::OutOfOrder {
                expected: self.next,
                got: k,
            });
        }
        if overlay.silo_count() != self.t.len() {
            return Err(TimingError::SizeMismatch {
                overlay: overlay.silo_count(),
                network: self.t.len(),
            }
            .into());
        }
        let next = match overlay.protocol {
            Protocol::ServerClient { center: c } => {
                let m = &self.model;
                let n = self.t.len();
                let (out_c, in_c) = (overlay.out_degree(c), overlay.in_degree(c));
                let mut tc = self.t[c] + m.compute_round_ms(c);
                for i in (0..n).filter(|&i| i != c) {
                    let up = m.arc_delay(i, c, overlay.out_degree(i), in_c);
                    tc = tc.max(self.t[i] + up);
                }
                (0..n)
                    .map(|j| {
                        if j == c {
                            tc
                        } else {
                            let down = m.arc_delay(c, j, out_c, overlay.in_degree(j));
                            tc + down - m.compute_round_ms(c)
                        }
                    })
                    .collect()
            }
            Protocol::Gossip => {
                let g = timing::maxplus_graph(overlay, &self.model)?;
                let mut next = vec![f64::NEG_INFINITY; self.t.len()];
                for a in g.arcs() {
                    next[a.to] = next[a.to].max(self.t[a.from] + a.weight);
                }
                next
            }
        };
        self.t.clone_from(&next);
        self.next += 1;
        Ok(next)
    }
}

/// Round times from the discrete-event engine: the round replay of
/// [`crate::replay`] (gossip, or the two-phase protocol for STAR) over a
/// network model (`maxplus`, `paper` or `flow`), advanced round by round
/// with a [`RoundStepper`].
///
/// On networks where transfers interfere (`paper`, `flow`), silos that are
/// already in round `k+1` send round-`k+1` models while round `k`'s last
/// models are still in flight, so `t(k+1)` can depend on round `k+1`'s
/// overlay. The clock therefore holds the whole (deterministic) overlay
/// schedule and checks that the overlay it is given for round `k` is the
/// schedule's round `k`. The protocol never stops (there is no last round),
/// so the times of round `k` do not depend on how many rounds the run has:
/// a run of `R` rounds resumed to `R2` gets the times of a straight `R2` run.
pub struct EngineClock<'a> {
    schedule: &'a dyn OverlaySchedule,
    stepper: RoundStepper<'a>,
    next: u64,
}

impl std::fmt::Debug for EngineClock<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineClock")
            .field("stepper", &self.stepper)
            .field("next", &self.next)
            .finish()
    }
}

impl<'a> EngineClock<'a> {
    /// A clock for `schedule` on `delay` through `network`, every silo at
    /// time 0, compute times exactly `s*Tc(i)`.
    ///
    /// # Errors
    /// [`ClockError::Replay`] when the schedule and the model disagree on
    /// the number of silos.
    pub fn new(
        schedule: &'a dyn OverlaySchedule,
        delay: &'a DelayModel,
        network: NetworkKind,
    ) -> Result<Self, ClockError> {
        Self::with_stragglers(schedule, delay, network, Straggler::None, 0)
    }

    /// As [`Self::new`] with random compute times drawn from `seed`
    /// ([`Straggler`], same draws as [`crate::replay::replay`]).
    ///
    /// # Errors
    /// As [`Self::new`], and [`ClockError::Replay`] for a bad sigma.
    pub fn with_stragglers(
        schedule: &'a dyn OverlaySchedule,
        delay: &'a DelayModel,
        network: NetworkKind,
        straggler: Straggler,
        seed: u64,
    ) -> Result<Self, ClockError> {
        let stepper = RoundStepper::new(schedule, delay, network.build(delay), straggler, seed)?;
        Ok(EngineClock {
            schedule,
            stepper,
            next: 0,
        })
    }

    /// Events the engine has handled so far.
    pub fn events(&self) -> u64 {
        self.stepper.events()
    }
}

impl RoundClock for EngineClock<'_> {
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError> {
        if k != self.next {
            return Err(ClockError::OutOfOrder {
                expected: self.next,
                got: k,
            });
        }
        let expected = self.schedule.round(k);
        if expected.arcs() != overlay.arcs() || expected.protocol != overlay.protocol {
            return Err(ClockError::Other(format!(
                "round {k}: overlay `{}` is not round {k} of the clock's schedule `{}`",
                overlay.name, expected.name
            )));
        }
        let t = self.stepper.advance_to(k + 1)?.to_vec();
        self.next += 1;
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlay::build::{build_overlay, build_schedule, BuildOptions, OverlayKind};
    use crate::scenario::{load_underlay, NetworkSpec};
    use crate::underlay::LoadOptions;

    fn aws() -> (crate::underlay::Underlay, DelayModel) {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
        let m = NetworkSpec::default().delay_model(&u);
        (u, m)
    }

    /// Slope of the clock over many rounds equals the cycle time computed by
    /// Howard's algorithm (independent method), within the recurrence bound.
    #[test]
    fn clock_slope_matches_cycle_time() {
        let (u, m) = aws();
        for kind in [OverlayKind::Star, OverlayKind::Mst, OverlayKind::Ring] {
            let o = build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap();
            let tau = timing::cycle_time(&o, &m).unwrap().cycle_time_ms;
            let mut c = MaxPlusClock::new(m.clone());
            let rounds = 2000;
            let mut last = Vec::new();
            for k in 0..rounds {
                let t = c.round_end_times(k, &o).unwrap();
                assert_eq!(t.len(), 22);
                if !last.is_empty() {
                    assert!(t.iter().zip(&last).all(|(a, b)| a >= b));
                }
                last = t;
            }
            let slope = last.iter().copied().fold(0.0, f64::max) / rounds as f64;
            assert!(slope >= tau - 1e-9, "{kind}: {slope} < {tau}");
            assert!(slope <= tau * 1.01, "{kind}: {slope} vs {tau}");
        }
    }

    #[test]
    fn first_round_is_max_incoming_arc_delay() {
        let (u, m) = aws();
        let o = build_overlay(OverlayKind::Ring, &u, &m, &BuildOptions::default()).unwrap();
        let mut c = MaxPlusClock::new(m.clone());
        let t = c.round_end_times(0, &o).unwrap();
        for (i, &ti) in t.iter().enumerate() {
            let j = o.in_neighbours()[i][0];
            let d = m.arc_delay(j, i, o.out_degree(j), o.in_degree(i));
            assert!((ti - d.max(m.compute_round_ms(i))).abs() < 1e-9);
        }
        assert!(matches!(
            c.round_end_times(5, &o),
            Err(ClockError::OutOfOrder {
                expected: 1,
                got: 5
            })
        ));
    }

    fn aws_access(access_bps: f64) -> (crate::underlay::Underlay, DelayModel) {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
        let spec = NetworkSpec {
            access_bps,
            ..NetworkSpec::default()
        };
        let m = spec.delay_model(&u);
        (u, m)
    }

    fn schedules(u: &crate::underlay::Underlay, m: &DelayModel) -> Vec<Box<dyn OverlaySchedule>> {
        let mut v: Vec<Box<dyn OverlaySchedule>> = Vec::new();
        for kind in [
            OverlayKind::Star,
            OverlayKind::Mst,
            OverlayKind::DeltaMbst,
            OverlayKind::Ring,
            OverlayKind::Complete,
        ] {
            v.push(Box::new(
                build_overlay(kind, u, m, &BuildOptions::default()).unwrap(),
            ));
        }
        let mut opts = BuildOptions::default();
        opts.matcha.rounds = 50;
        opts.matcha.seed = 3;
        let s = build_schedule(OverlayKind::MATCHA, u, m, &opts)
            .unwrap()
            .unwrap();
        assert!(!s.is_static(), "budget 0.5 gives a changing schedule");
        v.push(Box::new(s));
        v
    }

    /// Independent methods: the closed-form recurrence and the event-driven
    /// replay over the \[Marfoq20\] eq. (3) network agree on every silo's time of every
    /// round, static overlays, STAR's two-phase protocol and MATCHA's
    /// per-round overlays alike.
    #[test]
    fn engine_clock_with_maxplus_network_equals_maxplus_clock() {
        for access in [1e8, 1e10] {
            let (u, m) = aws_access(access);
            for s in schedules(&u, &m) {
                let mut a = MaxPlusClock::new(m.clone());
                let mut b = EngineClock::new(s.as_ref(), &m, NetworkKind::Maxplus).unwrap();
                let mut distinct = std::collections::BTreeSet::new();
                for k in 0..60 {
                    let o = s.round(k);
                    distinct.insert(o.arcs().to_vec());
                    let ta = a.round_end_times(k, &o).unwrap();
                    let tb = b.round_end_times(k, &o).unwrap();
                    for (i, (x, y)) in ta.iter().zip(&tb).enumerate() {
                        assert!(
                            (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                            "{} access {access}: round {k} silo {i}: {x} vs {y}",
                            o.name
                        );
                    }
                }
                if !s.is_static() {
                    assert!(distinct.len() > 10, "MATCHA rounds change");
                }
                assert!(b.events() > 0);
            }
        }
    }

    /// On a directed ring every silo sends one model and receives one, so a
    /// flow's rate never exceeds `min(Cup(i), Cdn(j))`. When the core is not
    /// the \[Marfoq20\] eq. (3) bottleneck (`M/A(i,j) <= max(M/Cup(i), M/Cdn(j))`), every
    /// flow-model transfer therefore takes at least its max-plus delay, and
    /// by monotonicity of the recurrence every flow time is >= the max-plus
    /// time. Paper network likewise (downloads serialised at the receiver,
    /// one per round on a ring).
    #[test]
    fn flow_and_paper_never_beat_maxplus_on_a_ring_with_access_bottleneck() {
        let (u, m) = aws_access(1e8);
        let o = build_overlay(OverlayKind::Ring, &u, &m, &BuildOptions::default()).unwrap();
        for &(i, j) in o.arcs() {
            assert!(m.core_ms(i, j) <= m.up_ms(i).max(m.down_ms(j)) + 1e-12);
        }
        let mut base = EngineClock::new(&o, &m, NetworkKind::Maxplus).unwrap();
        let mut flow = EngineClock::new(&o, &m, NetworkKind::Flow).unwrap();
        let mut paper = EngineClock::new(&o, &m, NetworkKind::Paper).unwrap();
        for k in 0..80 {
            let tb = base.round_end_times(k, &o).unwrap();
            for other in [&mut flow, &mut paper] {
                let t = other.round_end_times(k, &o).unwrap();
                for (x, y) in t.iter().zip(&tb) {
                    assert!(x + 1e-9 * y.max(1.0) >= *y, "round {k}: {x} < {y}");
                }
            }
        }
    }

    /// Times come round by round, in order, for the clock's own schedule only;
    /// a rebuilt clock gives the same times (resuming a run relies on it).
    #[test]
    fn engine_clock_contract() {
        let (u, m) = aws_access(1e8);
        let ring = build_overlay(OverlayKind::Ring, &u, &m, &BuildOptions::default()).unwrap();
        let star = build_overlay(OverlayKind::Star, &u, &m, &BuildOptions::default()).unwrap();
        let mut c = EngineClock::new(&ring, &m, NetworkKind::Flow).unwrap();
        let first: Vec<_> = (0..10)
            .map(|k| c.round_end_times(k, &ring).unwrap())
            .collect();
        assert!(matches!(
            c.round_end_times(12, &ring),
            Err(ClockError::OutOfOrder {
                expected: 10,
                got: 12
            })
        ));
        assert!(matches!(
            c.round_end_times(10, &star),
            Err(ClockError::Other(_))
        ));
        for w in first.windows(2) {
            assert!(w[0].iter().zip(&w[1]).all(|(a, b)| a <= b));
        }
        let mut again = EngineClock::new(&ring, &m, NetworkKind::Flow).unwrap();
        for (k, t) in first.iter().enumerate() {
            assert_eq!(&again.round_end_times(k as u64, &ring).unwrap(), t);
        }
        let small = Overlay::from_arcs("small", 3, [(0, 1), (1, 2), (2, 0)]);
        assert!(matches!(
            EngineClock::new(&small, &m, NetworkKind::Maxplus),
            Err(ClockError::Replay(ReplayError::SizeMismatch { .. }))
        ));
    }
}
