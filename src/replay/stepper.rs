//! Incremental round replay: the same simulation as [`super::replay`], but
//! without a last round, advanced on demand until every silo has started a
//! given round.
//!
//! [`super::replay`] stops the protocol after `K` rounds (silos in round `K`
//! neither compute nor send), so on a network where transfers interfere
//! (`paper`, `flow`) its last start times depend on `K`. The stepper never
//! stops the protocol: `t(k)` is the start time of round `k` in an endless
//! run, the same whatever round the caller asks for next. Events are handled
//! in the engine's order (time, then FIFO), and the stepper only pauses
//! between two events, so stepping to round 3 and then to round 7 handles
//! exactly the events that stepping to round 7 at once handles. This is
//! what a training clock needs (round by round, deterministic, rebuildable
//! by replaying from round 0, see [`super::clock::EngineClock`]).
//!
//! [`super::replay`] is a stepper with a last round run to the end
//! ([`RoundStepper::finish`]).

use super::breakdown::{Breakdown, SiloRound, MAX_BREAKDOWN_ROWS};
use super::harness::{Harness, Net};
use super::round::RoundProtocol;
use super::{ReplayError, ReplayOptions, ReplayResult, Straggler};
use crate::graph::OverlaySchedule;
use crate::net::delay::DelayModel;
use crate::network::NetworkModel;
use crate::units::Ms;

/// A round replay advanced on demand (see the module docs).
pub struct RoundStepper<'a> {
    harness: Harness<'a, RoundProtocol<'a>>,
    /// Under churn, the last round of a bounded replay: the protocol runs
    /// endless and the replay stops once every silo started this round
    /// (module docs of [`super::churn`]).
    last_round: Option<u64>,
}

impl std::fmt::Debug for RoundStepper<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoundStepper")
            .field("network", &self.harness.network_name())
            .field("rounds_started", &self.rounds_started())
            .field("events", &self.harness.events())
            .finish()
    }
}

impl<'a> RoundStepper<'a> {
    /// A stepper for `schedule` on `delay` through `network`, every silo
    /// starting round 0 at time 0 ms. `straggler` and `seed` as in
    /// [`super::ReplayOptions`]. The protocol (gossip or two-phase STAR) is
    /// that of round 0's overlay.
    ///
    /// # Errors
    /// [`ReplayError::SizeMismatch`] or [`ReplayError::BadSigma`].
    pub fn new(
        schedule: &'a dyn OverlaySchedule,
        delay: &'a DelayModel,
        network: Box<dyn NetworkModel + 'a>,
        straggler: Straggler,
        seed: u64,
    ) -> Result<Self, ReplayError> {
        let p = RoundProtocol::new(schedule, delay, straggler, seed, u64::MAX, None)?;
        Ok(RoundStepper {
            harness: Harness::new(p, network),
            last_round: None,
        })
    }

    /// The stepper of [`super::replay_with_progress`]: rounds
    /// `0..options.rounds` (silos that start the last round stop there),
    /// `on_round(k)` called when the last silo starts round `k`.
    pub(super) fn with_last_round(
        schedule: &'a dyn OverlaySchedule,
        delay: &'a DelayModel,
        network: Net<'a>,
        options: &ReplayOptions,
        on_round: &'a mut dyn FnMut(u64),
    ) -> Result<Self, ReplayError> {
        // Under churn silos can be many rounds apart, and a silo that
        // stops at the last round would change when the others skip it:
        // the protocol runs endless, as a clock's, and stops at `t(K)`.
        let churn = delay
            .dynamics
            .as_ref()
            .is_some_and(|d| d.policy != crate::net::dynamics::AvailabilityPolicy::Wait);
        let mut p = RoundProtocol::new(
            schedule,
            delay,
            options.straggler,
            options.seed,
            if churn { u64::MAX } else { options.rounds },
            Some(on_round),
        )?;
        p.count_arc_transfers();
        if options.trace.count > 0 {
            p.trace_rounds(options.trace)?;
        }
        if options.breakdown {
            let silos = schedule.silo_count();
            let rows = options.rounds.saturating_mul(silos as u64);
            if rows > MAX_BREAKDOWN_ROWS {
                return Err(ReplayError::BreakdownTooLarge {
                    rounds: options.rounds,
                    silos,
                    rows,
                    max: MAX_BREAKDOWN_ROWS,
                });
            }
            p.record_breakdown()?;
        }
        Ok(RoundStepper {
            harness: Harness::new(p, network),
            last_round: churn.then_some(options.rounds),
        })
    }

    /// Number of rounds `k` whose start times `t(k)` are complete (every
    /// silo has started them).
    pub fn rounds_started(&self) -> u64 {
        self.harness.protocol().rounds_started()
    }

    /// Handles events until every silo has started round `k`, then returns
    /// `t(k)`: the time (ms) at which each silo started round `k`.
    ///
    /// # Errors
    /// [`ReplayError::Deadlock`] when the event queue runs dry first (a
    /// round's overlay is not strongly connected enough to let every silo
    /// through); [`ReplayError::Forgotten`] for a round dropped by
    /// [`Self::forget_before`].
    pub fn advance_to(&mut self, k: u64) -> Result<&[Ms], ReplayError> {
        self.harness.run_until(|p| p.all_reached(k))?;
        // Rounds every silo has left are never looked at again.
        let p = self.harness.protocol_mut();
        p.forget_past_rounds();
        let first = p.first;
        p.starts_of(k)
            .ok_or(ReplayError::Forgotten { round: k, first })
    }

    /// Records where every silo's rounds go from now on (before the first
    /// [`Self::advance_to`]; [`Self::take_breakdown`] hands them out).
    ///
    /// # Errors
    /// [`ReplayError::Churn`] under an availability policy other than
    /// `wait` (not recorded there).
    pub fn record_breakdown(&mut self) -> Result<(), ReplayError> {
        self.harness.protocol_mut().record_breakdown()
    }

    /// Who took part in round `k` under churn ([`super::churn`]), once
    /// every silo has started round `k + 1` and before
    /// [`Self::forget_before`] drops it; `None` without an availability
    /// policy other than `wait`.
    pub fn participation(&self, k: u64) -> Option<&super::RoundParticipation> {
        self.harness.protocol().participation(k)
    }

    /// The churn counters so far (`None` without an availability policy
    /// other than `wait`).
    pub fn churn_stats(&self) -> Option<super::ChurnStats> {
        self.harness.protocol().churn.as_ref().map(|c| c.stats)
    }

    /// Round `k`'s [`SiloRound`]s, by silo, into `out` (its contents
    /// replaced; empty unless [`Self::record_breakdown`] was called and
    /// every silo ended round `k`), forgetting them and every earlier
    /// round's.
    pub fn take_breakdown(&mut self, k: u64, out: &mut Vec<SiloRound>) {
        out.clear();
        let n = self.harness.protocol().round.len();
        let Some(b) = self.harness.protocol_mut().breakdown.as_mut() else {
            return;
        };
        out.extend(b.rows.iter().filter(|r| r.round == k));
        b.rows.retain(|r| r.round > k);
        out.sort_unstable_by_key(|r| r.silo);
        if out.len() != n {
            out.clear();
        }
    }

    /// Forgets the start times of rounds before `k` (those complete), so
    /// that a stepper run for ever (a training clock) keeps a bounded
    /// memory: without it every round's `t(k)` is kept (8 bytes per silo
    /// and round). Asking for a forgotten round afterwards is an error.
    pub fn forget_before(&mut self, k: u64) {
        self.harness.protocol_mut().forget_starts_before(k);
    }

    /// Runs to the end (a stepper with a last round) and returns the whole
    /// replay.
    ///
    /// # Errors
    /// [`ReplayError::Deadlock`] when some silo did not reach the last
    /// round.
    pub(super) fn finish(mut self) -> Result<ReplayResult, ReplayError> {
        match self.last_round {
            Some(k) => {
                self.harness.run_until(|p| p.all_reached(k))?;
                let p = self.harness.protocol_mut();
                p.starts.truncate(k as usize + 1);
                if let Some(c) = p.churn.as_mut() {
                    c.rows.truncate(k as usize + 1);
                }
                // Rounds that ended in the event that ended round K - 1.
                if let Some(b) = p.breakdown.as_mut() {
                    b.rows.retain(|r| r.round < k);
                }
            }
            None => {
                self.harness.run_to_end()?;
            }
        }
        let events = self.harness.events();
        let mut network = self.harness.network_name().to_string();
        let churn = self.churn_summary();
        if let Some(c) = self.harness.protocol().churn.as_ref() {
            network += &c.policy.name_suffix();
        }
        let network_stats = self.harness.network_stats();
        let mut p = self.harness.into_protocol();
        let trace = p.trace.take().map(|t| t.finish());
        let silos = p.round.len();
        let breakdown = p
            .breakdown
            .take()
            .map(|b| Breakdown::from_rows(silos, b.rows));
        let mut arc_transfers: Vec<_> = p.arc_transfers.unwrap_or_default().into_iter().collect();
        arc_transfers.sort_unstable();
        Ok(ReplayResult {
            overlay: p.name,
            network,
            starts: p.starts,
            events,
            transfers: p.transfers,
            arc_transfers,
            network_stats,
            trace,
            breakdown,
            churn,
        })
    }

    /// The run's churn summary (before [`Self::finish`] consumes it).
    fn churn_summary(&self) -> Option<super::ChurnSummary> {
        let p = self.harness.protocol();
        let c = p.churn.as_ref()?;
        let rounds: Vec<&super::RoundParticipation> = c.rows.iter().collect();
        Some(super::ChurnSummary {
            policy: c.policy.name(),
            stats: c.stats,
            // The last row is the round nobody computes in.
            silo_rounds_absent: rounds
                .iter()
                .take(rounds.len().saturating_sub(1))
                .map(|r| r.absent_count() as u64)
                .sum(),
        })
    }

    /// `t(k)` if every silo has already started round `k`.
    pub fn starts(&self, k: u64) -> Option<&[Ms]> {
        self.harness.protocol().starts_of(k)
    }

    /// Rounds whose start times are kept in memory (see
    /// [`Self::forget_before`]).
    pub fn rounds_kept(&self) -> usize {
        self.harness.protocol().starts.len()
    }

    /// Events handled so far.
    pub fn events(&self) -> u64 {
        self.harness.events()
    }

    /// Transfers started so far.
    pub fn transfers(&self) -> u64 {
        self.harness.protocol().transfers
    }

    /// The network model's name.
    pub fn network_name(&self) -> &'static str {
        self.harness.network_name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;
    use crate::network::NetworkKind;
    use crate::overlay::build::{build_overlay, build_schedule, BuildOptions, OverlayKind};
    use crate::replay::{replay, ReplayError, ReplayOptions};

    /// Stepping round by round gives exactly (bit for bit) the start times
    /// of a batch replay of many more rounds, on every network model.
    #[test]
    fn stepper_equals_longer_batch_replay() {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
        let spec = NetworkSpec {
            access_bps: 1e8,
            ..NetworkSpec::default()
        };
        let m = spec.delay_model(&u);
        let mut scheds: Vec<Box<dyn OverlaySchedule>> = Vec::new();
        for kind in [OverlayKind::Star, OverlayKind::Ring, OverlayKind::Mst] {
            scheds.push(Box::new(
                build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap(),
            ));
        }
        let mut opts = BuildOptions::default();
        opts.matcha.rounds = 50;
        scheds.push(Box::new(
            build_schedule(OverlayKind::MATCHA, &u, &m, &opts)
                .unwrap()
                .unwrap(),
        ));
        let k = 12;
        for s in &scheds {
            for kind in [NetworkKind::Maxplus, NetworkKind::Paper, NetworkKind::Flow] {
                let batch = replay(
                    s.as_ref(),
                    &m,
                    kind.build(&m).as_mut(),
                    &ReplayOptions {
                        rounds: k + 40,
                        ..ReplayOptions::default()
                    },
                )
                .unwrap();
                let mut st =
                    RoundStepper::new(s.as_ref(), &m, kind.build(&m), Straggler::None, 0).unwrap();
                for r in 0..=k {
                    let t = st.advance_to(r).unwrap().to_vec();
                    assert_eq!(t, batch.starts[r as usize], "{kind} round {r}");
                }
                assert!(st.starts(k).is_some() && st.starts(k + 5).is_none());
                // Asking again for an old round handles no event.
                let ev = st.events();
                assert_eq!(st.advance_to(3).unwrap(), batch.starts[3].as_slice());
                assert_eq!(st.events(), ev);
            }
        }
    }

    /// Forgetting old rounds keeps the memory bounded and changes no time.
    #[test]
    fn forgetting_old_rounds_keeps_memory_bounded() {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
        let m = NetworkSpec::default().delay_model(&u);
        let o = build_overlay(OverlayKind::Ring, &u, &m, &BuildOptions::default()).unwrap();
        let mut keep =
            RoundStepper::new(&o, &m, NetworkKind::Flow.build(&m), Straggler::None, 0).unwrap();
        let mut forget =
            RoundStepper::new(&o, &m, NetworkKind::Flow.build(&m), Straggler::None, 0).unwrap();
        for k in 0..2000 {
            let a = keep.advance_to(k).unwrap().to_vec();
            assert_eq!(forget.advance_to(k).unwrap(), a.as_slice(), "round {k}");
            forget.forget_before(k);
        }
        assert!(keep.rounds_kept() >= 2000, "{}", keep.rounds_kept());
        assert!(forget.rounds_kept() <= 3, "{}", forget.rounds_kept());
        assert_eq!(
            forget.advance_to(5),
            Err(ReplayError::Forgotten {
                round: 5,
                first: 1999
            })
        );
        assert!(forget.starts(5).is_none() && forget.starts(1999).is_some());
    }

    #[test]
    fn stragglers_follow_the_seed_like_replay() {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
        let m = NetworkSpec::default().delay_model(&u);
        let o = build_overlay(OverlayKind::Ring, &u, &m, &BuildOptions::default()).unwrap();
        let straggler = Straggler::LogNormal { sigma: 0.5 };
        let batch = replay(
            &o,
            &m,
            NetworkKind::Maxplus.build(&m).as_mut(),
            &ReplayOptions {
                rounds: 60,
                straggler,
                seed: 9,
                ..ReplayOptions::default()
            },
        )
        .unwrap();
        let mut st =
            RoundStepper::new(&o, &m, NetworkKind::Maxplus.build(&m), straggler, 9).unwrap();
        assert_eq!(st.advance_to(20).unwrap(), batch.starts[20].as_slice());
        assert!(matches!(
            RoundStepper::new(
                &o,
                &m,
                NetworkKind::Maxplus.build(&m),
                Straggler::LogNormal { sigma: -1.0 },
                0
            ),
            Err(ReplayError::BadSigma(_))
        ));
    }
}
