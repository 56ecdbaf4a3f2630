//! [`EventOrderRecurrence`]: the round replay on the `maxplus` network in
//! closed form, bit for bit.
//!
//! On the `maxplus` network (\[Marfoq20\] eq. (3) delays, no interference)
//! the event replay of [`crate::replay`] handles, per silo and round, one
//! compute timer and one delivery per in-arc, and starts silo `i`'s next
//! round at the last of them. Its times are therefore the max-plus
//! recurrence (\[Marfoq20\] eq. (4)) evaluated in the engine's own
//! floating-point order:
//!
//! ```text
//! ready_j(k) = t_j(k) + c_j(k)                                   (compute done, ms)
//! t_i(k+1)   = max( ready_i(k), max_{j in N_i^in(k)} ( ready_j(k) + comm_k(j,i) ) )
//! ```
//!
//! with `comm_k(j,i)` the communication part of eq. (3)
//! ([`DelayModel::comm_ms`], degrees of round `k`'s overlay). Every sum is
//! the one the engine computes (the compute timer at `now + c`, the
//! delivery at `now + comm`) and `max` is exact, so the times equal the
//! event replay's bit for bit (tested against [`crate::replay::RoundStepper`]),
//! at a cost of one addition per arc instead of a heap operation per event.
//! The paper's form `t_j(k) + d_o(j,i)` ([`super::MaxPlusClock`]) adds in
//! another order and agrees to rounding only.
//!
//! A server-client overlay (STAR, centre `c`) whose centre is linked both
//! ways to every client runs the two-phase protocol of the replay:
//!
//! ```text
//! t_c(k+1) = max( ready_c(k), max_{i != c} ( ready_i(k) + comm(i,c) ) )
//! t_j(k+1) = t_c(k+1) + comm(c,j)                                 (j != c)
//! ```
//!
//! Random compute times ([`Straggler`]) are drawn as the replay draws them:
//! round after round, silo after silo, from the same seeded generator.
//! Schedules with lagged arcs ([`OverlaySchedule::max_lag`]) and partial
//! stars are left to the event replay ([`Self::applies`]).

use rand_chacha::ChaCha8Rng;
use statrs::distribution::LogNormal;

use crate::graph::{Overlay, OverlaySchedule, Protocol};
use crate::net::delay::DelayModel;
use crate::replay::breakdown::{binds_before, silo_round};
use crate::replay::round::checked_straggler;
use crate::replay::SiloRound;
use crate::replay::{ReplayError, Straggler};
use crate::units::Ms;

/// The in-arcs of one overlay, grouped by target, with their
/// communication delays (ms).
#[derive(Debug, Clone, Default)]
struct InArcs {
    /// `from[first[i]..first[i + 1]]`: in-neighbours of silo `i`.
    first: Vec<usize>,
    from: Vec<usize>,
    /// `comm[a]`: communication part of eq. (3) of in-arc `a`, ms.
    comm: Vec<Ms>,
}

impl InArcs {
    /// Fills the arcs of `o` (gossip: every arc is a model sent after
    /// computing, degrees of `o`).
    fn gossip(&mut self, o: &Overlay, delay: &DelayModel) {
        let n = o.silo_count();
        let bits = delay.workload.model_bits;
        self.first.clear();
        self.first.resize(n + 1, 0);
        for &(_, to) in o.arcs() {
            self.first[to + 1] += 1;
        }
        for i in 0..n {
            self.first[i + 1] += self.first[i];
        }
        let m = o.arc_count();
        self.from.clear();
        self.from.resize(m, 0);
        self.comm.clear();
        self.comm.resize(m, 0.0);
        // `arcs()` is sorted by sender: a counting sort by receiver keeps
        // each receiver's senders in order.
        let mut next = self.first.clone();
        for &(from, to) in o.arcs() {
            let a = next[to];
            next[to] += 1;
            self.from[a] = from;
            self.comm[a] = delay.comm_ms(from, to, o.out_degree(from), o.in_degree(to), bits);
        }
    }
}

impl InArcs {
    /// Silo `i`'s round end from the compute-done times `ready`, ms, and
    /// (when `BINDING`: a breakdown is recorded) the model that ends it,
    /// `(delivered, sent, from)`. One loop, compiled with and without the
    /// bookkeeping so that the clock's plain path pays nothing for it.
    #[inline]
    fn round_end<const BINDING: bool>(
        &self,
        i: usize,
        ready: &[Ms],
    ) -> (Ms, Option<(Ms, Ms, usize)>) {
        let mut end = ready[i];
        let mut binding = None;
        for e in self.first[i]..self.first[i + 1] {
            let j = self.from[e];
            let at = ready[j] + self.comm[e];
            end = end.max(at);
            let new = (at, ready[j], j);
            if BINDING && binding.is_none_or(|b| binds_before(new, b)) {
                binding = Some(new);
            }
        }
        (end, binding)
    }
}

/// The two legs of a full star (centre `c`): uploads `comm(i,c)` and
/// broadcasts `comm(c,j)`, ms, per silo (0 at the centre).
#[derive(Debug, Clone)]
struct StarLegs {
    center: usize,
    up: Vec<Ms>,
    down: Vec<Ms>,
}

/// Round end times of the event replay on the `maxplus` network, computed
/// by the recurrence (module docs).
pub(crate) struct EventOrderRecurrence<'a> {
    delay: &'a DelayModel,
    straggler: Option<(LogNormal, ChaCha8Rng)>,
    /// `t(k)`, ms.
    t: Vec<Ms>,
    /// Compute done times `ready(k)`, ms.
    ready: Vec<Ms>,
    /// Compute times of the round, ms.
    compute: Vec<Ms>,
    /// The arcs of the static overlay (built once), or of the last round.
    arcs: InArcs,
    static_arcs: bool,
    star: Option<StarLegs>,
    rounds: u64,
    /// The last round's breakdown, when recorded.
    breakdown: Option<Vec<SiloRound>>,
}

impl std::fmt::Debug for EventOrderRecurrence<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventOrderRecurrence")
            .field("silos", &self.t.len())
            .field("rounds", &self.rounds)
            .finish()
    }
}

impl<'a> EventOrderRecurrence<'a> {
    /// True when the recurrence gives the event replay's times for
    /// `schedule` on `delay`: no network dynamics (a trace: rates change
    /// over time, no recurrence), no lagged arcs, and a server-client schedule only when
    /// it is static and its centre is linked both ways to every client
    /// (the replay of a partial star waits for a count of uploads, not for
    /// given clients).
    pub(crate) fn applies(schedule: &dyn OverlaySchedule, delay: &DelayModel) -> bool {
        if delay.dynamics.is_some() || schedule.max_lag() > 0 {
            return false;
        }
        let o = schedule.round(0);
        match o.protocol {
            Protocol::Gossip => true,
            Protocol::ServerClient { center } => {
                let n = o.silo_count();
                schedule.is_static()
                    && center < n
                    && o.in_degree(center) + 1 == n
                    && o.out_degree(center) + 1 == n
            }
        }
    }

    /// The recurrence for `schedule` on `delay`, every silo at time 0,
    /// compute times drawn as [`crate::replay::RoundStepper::new`] draws
    /// them. The caller checked [`Self::applies`].
    ///
    /// # Errors
    /// [`ReplayError::SizeMismatch`] or [`ReplayError::BadSigma`].
    pub(crate) fn new(
        schedule: &'a dyn OverlaySchedule,
        delay: &'a DelayModel,
        straggler: Straggler,
        seed: u64,
    ) -> Result<Self, ReplayError> {
        let mut straggler = checked_straggler(schedule, delay, straggler, seed)?;
        let n = schedule.silo_count();
        if let (true, Some((dist, rng))) = (schedule.is_static(), straggler.as_mut()) {
            // The replay builds a static schedule's round once at the
            // start, drawing one round of compute times it then never
            // uses (it draws every round's own): the same draws follow.
            use rand::distributions::Distribution;
            for _ in 0..n {
                dist.sample(rng);
            }
        }
        let first = schedule.round(0);
        let bits = delay.workload.model_bits;
        let star = match first.protocol {
            Protocol::ServerClient { center: c } => {
                let (out_c, in_c) = (first.out_degree(c), first.in_degree(c));
                let leg = |i: usize, up: bool| {
                    if i == c {
                        0.0
                    } else if up {
                        delay.comm_ms(i, c, first.out_degree(i), in_c, bits)
                    } else {
                        delay.comm_ms(c, i, out_c, first.in_degree(i), bits)
                    }
                };
                Some(StarLegs {
                    center: c,
                    up: (0..n).map(|i| leg(i, true)).collect(),
                    down: (0..n).map(|i| leg(i, false)).collect(),
                })
            }
            Protocol::Gossip => None,
        };
        let static_arcs = schedule.is_static();
        let mut arcs = InArcs::default();
        if static_arcs && star.is_none() {
            arcs.gossip(&first, delay);
        }
        drop(first);
        Ok(EventOrderRecurrence {
            delay,
            straggler,
            t: vec![0.0; n],
            ready: vec![0.0; n],
            compute: (0..n).map(|i| delay.compute_round_ms(i)).collect(),
            arcs,
            static_arcs,
            star,
            rounds: 0,
            breakdown: None,
        })
    }

    /// Records where each round's time goes ([`Self::breakdown`]).
    pub(crate) fn record_breakdown(&mut self) {
        self.breakdown.get_or_insert_with(Vec::new);
    }

    /// The last round's [`SiloRound`]s by silo, when recorded (the same
    /// as the event replay's, [`crate::replay::breakdown`]).
    pub(crate) fn breakdown(&self) -> Option<&[SiloRound]> {
        self.breakdown.as_deref()
    }

    /// Rounds timed so far.
    #[cfg(test)]
    pub(crate) fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Times the next round `k = self.rounds()` on `overlay`, the
    /// schedule's round `k` (read once for a static schedule, whose every
    /// round is round 0), and returns `t(k+1)`, ms per silo.
    pub(crate) fn step(&mut self, overlay: &Overlay) -> &[Ms] {
        let k = self.rounds;
        if let Some((dist, rng)) = self.straggler.as_mut() {
            use rand::distributions::Distribution;
            for (i, c) in self.compute.iter_mut().enumerate() {
                *c = self.delay.compute_round_ms(i) * dist.sample(rng);
            }
        }
        for ((r, &t), &c) in self.ready.iter_mut().zip(&self.t).zip(&self.compute) {
            *r = t + c;
        }
        if let Some(s) = &self.star {
            let c = s.center;
            let mut tc = self.ready[c];
            // The upload that ends the centre's round (breakdowns only).
            let mut upload = None;
            let record = self.breakdown.is_some();
            for (i, (&r, &up)) in self.ready.iter().zip(&s.up).enumerate() {
                if i != c {
                    tc = tc.max(r + up);
                    let new = (r + up, r, i);
                    if record && upload.is_none_or(|b| binds_before(new, b)) {
                        upload = Some(new);
                    }
                }
            }
            if let Some(rows) = self.breakdown.as_mut() {
                rows.clear();
                for (j, (&t, &down)) in self.t.iter().zip(&s.down).enumerate() {
                    let (end, binding) = if j == c {
                        (tc, upload)
                    } else {
                        (tc + down, Some((tc + down, tc, c)))
                    };
                    rows.push(silo_round(k, j, t, self.ready[j], end, binding));
                }
            }
            for (j, (t, &down)) in self.t.iter_mut().zip(&s.down).enumerate() {
                *t = if j == c { tc } else { tc + down };
            }
        } else {
            if !self.static_arcs {
                self.arcs.gossip(overlay, self.delay);
            }
            let a = &self.arcs;
            let mut rows = self.breakdown.as_mut();
            if let Some(rows) = rows.as_mut() {
                rows.clear();
            }
            for (i, t) in self.t.iter_mut().enumerate() {
                if let Some(rows) = rows.as_mut() {
                    let (end, binding) = a.round_end::<true>(i, &self.ready);
                    rows.push(silo_round(k, i, *t, self.ready[i], end, binding));
                    *t = end;
                } else {
                    *t = a.round_end::<false>(i, &self.ready).0;
                }
            }
        }
        self.rounds += 1;
        &self.t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::failures::{FailureSpec, Failures};
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;
    use crate::network::NetworkKind;
    use crate::overlay::build::{build_overlay, build_schedule, BuildOptions, OverlayKind};
    use crate::replay::RoundStepper;

    /// Bit for bit the event replay's start times on the `maxplus`
    /// network: static gossip overlays, STAR's two-phase protocol,
    /// MATCHA's changing rounds, random link failures, with and without
    /// stragglers, two access capacities and two placements.
    #[test]
    fn recurrence_equals_event_replay_bit_for_bit() {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
        for (access, silos) in [(1e8, None), (1e10, Some(60))] {
            let spec = NetworkSpec {
                access_bps: access,
                ..NetworkSpec::default()
            };
            let m = match silos {
                None => spec.delay_model(&u),
                Some(s) => spec.delay_model_placed(
                    &u,
                    crate::net::placement::SiloPlacement::spread(s, u.node_count(), 4).unwrap(),
                ),
            };
            let mut scheds: Vec<Box<dyn OverlaySchedule>> = Vec::new();
            for kind in [
                OverlayKind::Star,
                OverlayKind::Mst,
                OverlayKind::Ring,
                OverlayKind::Complete,
            ] {
                let o = build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap();
                if kind == OverlayKind::Ring {
                    let f = FailureSpec::parse_optional("link-down:0.3")
                        .unwrap()
                        .unwrap();
                    scheds.push(Box::new(Failures::new(o.clone(), f, 7).unwrap()));
                }
                scheds.push(Box::new(o));
            }
            if silos.is_none() {
                // MATCHA needs one silo per router.
                let mut opts = BuildOptions::default();
                opts.matcha.rounds = 40;
                scheds.push(Box::new(
                    build_schedule(OverlayKind::MATCHA, &u, &m, &opts)
                        .unwrap()
                        .unwrap(),
                ));
            }
            for s in &scheds {
                assert!(EventOrderRecurrence::applies(s.as_ref(), &m));
                for straggler in [Straggler::None, Straggler::LogNormal { sigma: 0.4 }] {
                    let mut ev = RoundStepper::new(
                        s.as_ref(),
                        &m,
                        NetworkKind::Maxplus.build(&m),
                        straggler,
                        11,
                    )
                    .unwrap();
                    let mut rec = EventOrderRecurrence::new(s.as_ref(), &m, straggler, 11).unwrap();
                    for k in 1..=60 {
                        let a: Vec<u64> = ev
                            .advance_to(k)
                            .unwrap()
                            .iter()
                            .map(|x| x.to_bits())
                            .collect();
                        let b: Vec<u64> = rec
                            .step(&s.round(k - 1))
                            .iter()
                            .map(|x| x.to_bits())
                            .collect();
                        assert_eq!(a, b, "{} {straggler:?} round {k}", s.round(0).name);
                    }
                    assert_eq!(rec.rounds(), 60);
                }
            }
        }
    }

    /// Lagged schedules and partial stars go to the event replay.
    #[test]
    fn applies_only_where_the_recurrence_is_the_replay() {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
        let m = NetworkSpec::default().delay_model(&u);
        let star = build_overlay(OverlayKind::Star, &u, &m, &BuildOptions::default()).unwrap();
        assert!(EventOrderRecurrence::applies(&star, &m));
        let Protocol::ServerClient { center } = star.protocol else {
            panic!("STAR is server-client");
        };
        let client = if center == 0 { 1 } else { 0 };
        let mut partial = Overlay::from_arcs(
            "partial",
            star.silo_count(),
            star.arcs()
                .iter()
                .copied()
                .filter(|&arc| arc != (center, client)),
        );
        partial.protocol = star.protocol;
        assert!(!EventOrderRecurrence::applies(&partial, &m));
        let ring = build_overlay(OverlayKind::Ring, &u, &m, &BuildOptions::default()).unwrap();
        let lagged =
            crate::graph::PeriodicSchedule::new("lagged", ring.silo_count(), vec![ring.clone()])
                .and_then(|s| s.with_lags(vec![vec![1; ring.arc_count()]]))
                .unwrap();
        assert!(!EventOrderRecurrence::applies(&lagged, &m));
        assert!(EventOrderRecurrence::applies(&ring, &m));
        let mut traced = m.clone();
        traced.dynamics = Some(std::sync::Arc::new(crate::net::dynamics::Dynamics::new(
            m.silo_count(),
            "t.csv",
        )));
        assert!(!EventOrderRecurrence::applies(&ring, &traced));
    }
}
