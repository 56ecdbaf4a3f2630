//! [`EngineClock`]: round end times from the event engine (the round
//! replay's [`RoundStepper`], over any network model).

use super::recurrence::EventOrderRecurrence;
use super::{ClockError, RoundClock};
use crate::graph::{Overlay, OverlaySchedule};
use crate::net::delay::DelayModel;
use crate::network::NetworkKind;
use crate::replay::{RoundParticipation, RoundStepper, SiloRound, Straggler};
use crate::units::Ms;

/// Round times from the discrete-event engine: the round replay of
/// [`crate::replay`] (gossip, or the two-phase protocol for STAR) over a
/// network model (`maxplus`, `paper` or `flow`), advanced round by round
/// with a [`RoundStepper`].
///
/// On the `maxplus` network the replay's times are a max-plus recurrence
/// evaluated in the engine's own floating-point order, and the clock
/// computes them that way (`recurrence`): the same times bit for
/// bit (tested), one addition per arc instead of a heap operation per
/// event. Schedules the recurrence does not cover (lagged arcs, partial
/// stars) and [`Self::event_driven`] clocks run the events.
///
/// With network dynamics ([`crate::net::dynamics`]: traces of bandwidth,
/// latency or availability) the clock always runs the events.
///
/// On networks where transfers interfere (`paper`, `flow`), silos that are
/// already in round `k+1` send round-`k+1` models while round `k`'s last
/// models are still in flight, so `t(k+1)` can depend on round `k+1`'s
/// overlay. The clock therefore holds the whole (deterministic) overlay
/// schedule and checks that the overlay it is given for round `k` is the
/// schedule's round `k`. The protocol never stops (there is no last round),
/// so the times of round `k` do not depend on how many rounds the run has:
/// a run of `R` rounds resumed to `R2` gets the times of a straight `R2` run.
///
/// # Examples
/// ```
/// use fedtopo::prelude::*;
///
/// let u = load_underlay(None, &LoadOptions::default())?;
/// let m = NetworkSpec::default().delay_model(&u);
/// let ring = EvaluatedOverlay::build(OverlayKind::Ring, &u, &m, &BuildOptions::default())?;
/// let mut clock = EngineClock::new(ring.schedule(), &m, NetworkKind::Flow)?;
/// let mut last = 0.0;
/// for k in 0..10 {
///     // When each silo finishes round k, ms since the start.
///     let t = clock.round_end_times(k, &ring.schedule().round(k))?;
///     last = t.iter().copied().fold(last, f64::max);
/// }
/// assert!(last > 0.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct EngineClock<'a> {
    schedule: &'a dyn OverlaySchedule,
    timing: Timing<'a>,
    next: u64,
    /// The last round's breakdown (event path), when recorded.
    rows: Option<Vec<SiloRound>>,
    /// The last round's participation under churn.
    participation: Option<RoundParticipation>,
}

/// How an [`EngineClock`] times its rounds (one per clock, made once and
/// never moved in a loop: the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
enum Timing<'a> {
    /// Event by event.
    Events(RoundStepper<'a>),
    /// The `maxplus` replay's recurrence, bit for bit.
    Recurrence(EventOrderRecurrence<'a>),
}

impl std::fmt::Debug for EngineClock<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("EngineClock");
        match &self.timing {
            Timing::Events(s) => d.field("stepper", s),
            Timing::Recurrence(r) => d.field("recurrence", r),
        };
        d.field("next", &self.next).finish()
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
        // With network dynamics the recurrence no longer holds: events.
        if network == NetworkKind::Maxplus && EventOrderRecurrence::applies(schedule, delay) {
            let r = EventOrderRecurrence::new(schedule, delay, straggler, seed)?;
            return Ok(EngineClock {
                schedule,
                timing: Timing::Recurrence(r),
                next: 0,
                rows: None,
                participation: None,
            });
        }
        Self::event_driven(schedule, delay, network, straggler, seed)
    }

    /// As [`Self::with_stragglers`], always event by event (the
    /// recurrence's cross-check and benchmark baseline).
    ///
    /// # Errors
    /// As [`Self::with_stragglers`].
    pub fn event_driven(
        schedule: &'a dyn OverlaySchedule,
        delay: &'a DelayModel,
        network: NetworkKind,
        straggler: Straggler,
        seed: u64,
    ) -> Result<Self, ClockError> {
        let stepper = RoundStepper::new(schedule, delay, network.build(delay), straggler, seed)?;
        Ok(EngineClock {
            schedule,
            timing: Timing::Events(stepper),
            next: 0,
            rows: None,
            participation: None,
        })
    }

    /// True when the clock handles events (false: the `maxplus`
    /// recurrence times its rounds).
    pub fn is_event_driven(&self) -> bool {
        matches!(self.timing, Timing::Events(_))
    }

    /// Events the engine has handled so far (0 when the recurrence times
    /// the rounds).
    pub fn events(&self) -> u64 {
        match &self.timing {
            Timing::Events(s) => s.events(),
            Timing::Recurrence(_) => 0,
        }
    }
}

impl RoundClock for EngineClock<'_> {
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError> {
        let mut t = Vec::new();
        self.round_end_times_into(k, overlay, &mut t)?;
        Ok(t)
    }

    fn round_end_times_into(
        &mut self,
        k: u64,
        overlay: &Overlay,
        out: &mut Vec<Ms>,
    ) -> Result<(), ClockError> {
        if k != self.next {
            return Err(ClockError::OutOfOrder {
                expected: self.next,
                got: k,
            });
        }
        let expected = self.schedule.round(k);
        // The schedule's own round (the caller read it from the same
        // schedule) needs no comparison.
        let same = std::ptr::eq(&*expected, overlay)
            || (expected.arcs() == overlay.arcs() && expected.protocol == overlay.protocol);
        if !same {
            return Err(ClockError::Other(format!(
                "round {k}: overlay `{}` is not round {k} of the clock's schedule `{}`",
                overlay.name, expected.name
            )));
        }
        drop(expected);
        out.clear();
        match &mut self.timing {
            Timing::Events(stepper) => {
                let t = stepper.advance_to(k + 1)?;
                out.extend_from_slice(t);
                if let Some(p) = stepper.participation(k) {
                    self.participation
                        .get_or_insert_with(Default::default)
                        .clone_from(p);
                }
                // Rounds are asked for in order: the ones before are never
                // needed again, and a clock runs for ever in constant memory.
                stepper.forget_before(k + 1);
                if let Some(rows) = self.rows.as_mut() {
                    stepper.take_breakdown(k, rows);
                }
            }
            Timing::Recurrence(r) => out.extend_from_slice(r.step(overlay)),
        }
        self.next += 1;
        Ok(())
    }

    fn record_breakdown(&mut self) -> Result<(), ClockError> {
        if self.next > 0 {
            return Err(ClockError::Other(
                "a clock records its rounds' breakdown from round 0: ask before the first round"
                    .into(),
            ));
        }
        match &mut self.timing {
            Timing::Events(s) => {
                s.record_breakdown()?;
                self.rows.get_or_insert_with(Vec::new);
            }
            Timing::Recurrence(r) => r.record_breakdown(),
        }
        Ok(())
    }

    fn participation(&self) -> Option<&RoundParticipation> {
        self.participation.as_ref()
    }

    fn breakdown(&self) -> Option<&[SiloRound]> {
        match &self.timing {
            Timing::Events(_) => self.rows.as_deref(),
            Timing::Recurrence(r) => r.breakdown(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;
    use crate::overlay::build::{build_overlay, build_schedule, BuildOptions, OverlayKind};
    use crate::replay::clock::MaxPlusClock;
    use crate::replay::ReplayError;

    fn aws_access(access_bps: f64) -> (crate::net::underlay::Underlay, DelayModel) {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
        let spec = NetworkSpec {
            access_bps,
            ..NetworkSpec::default()
        };
        let m = spec.delay_model(&u);
        (u, m)
    }

    fn schedules(
        u: &crate::net::underlay::Underlay,
        m: &DelayModel,
    ) -> Vec<Box<dyn OverlaySchedule>> {
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
                let mut b = EngineClock::event_driven(
                    s.as_ref(),
                    &m,
                    NetworkKind::Maxplus,
                    Straggler::None,
                    0,
                )
                .unwrap();
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
