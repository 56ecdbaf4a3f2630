//! Event replay of all-reduce rounds (ring or mesh) as an [`EventProtocol`]
//! on the [`super::harness`]: chunk by chunk over any [`NetworkModel`]. The
//! protocols and their recurrences are described in
//! [`crate::timing::allreduce`] (ring) and [`crate::timing::mesh_allreduce`]
//! (mesh); with the [`crate::network::MaxPlusNetwork`] the replay equals
//! those recurrences (tested), with the [`crate::network::FlowNetwork`] the
//! chunks of all silos share the access and core links they cross.
//!
//! A silo sends its next step's chunks once it holds the step's data and
//! its previous step's chunks have left its link (eq. (3) for the chunks,
//! without the latency, after they were sent):
//! - on a ring, one chunk to the next silo of the tour per step; step `s`
//!   needs the predecessor's chunk of step `s - 1` (its local step for
//!   step 0);
//! - on a mesh, `n - 1` chunks (one to every other silo) per step; step 1
//!   needs one step-0 chunk from every other silo. A silo tells a step-0
//!   chunk from a step-1 chunk of the same sender by order: the first
//!   chunk of a round from a sender is its step-0 chunk (transfers between
//!   one pair of silos arrive in the order they were sent, as on every
//!   network model here).
//!
//! A silo starts the next round once it has received every chunk of the
//! round (`2(n-1)` on both) and its link is free.

use serde::Serialize;

use super::clock::{ClockError, RoundClock};
use super::harness::{EventProtocol, Harness, Link};
use crate::engine::fx::{FxHashMap, FxHashSet};
use crate::graph::Overlay;
use crate::net::delay::DelayModel;
use crate::network::{NetworkModel, NetworkStats, Transfer};
use crate::timing::allreduce::{AllReduceRound, AllReduceSchedule};
use crate::timing::mesh_allreduce::MeshAllReduceRound;
use crate::timing::TimingError;
use crate::units::Ms;

/// Result of [`replay_allreduce`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllReduceReplay {
    /// Overlay name.
    pub overlay: String,
    /// Network model name.
    pub network: String,
    /// `starts[k][i]`: time silo `i` starts round `k`, ms.
    pub starts: Vec<Vec<Ms>>,
    /// Chunks sent.
    pub chunks: u64,
    /// Events handled.
    pub events: u64,
    /// Chunks per ordered silo pair, sorted.
    pub arc_transfers: Vec<((usize, usize), u64)>,
    /// Network counters.
    pub network_stats: NetworkStats,
}

impl AllReduceReplay {
    /// As a [`super::ReplayResult`] (for the replay reports); `transfers`
    /// counts chunks.
    pub fn into_replay_result(self) -> super::ReplayResult {
        super::ReplayResult {
            overlay: self.overlay,
            network: self.network,
            starts: self.starts,
            events: self.events,
            transfers: self.chunks,
            arc_transfers: self.arc_transfers,
            network_stats: self.network_stats,
            trace: None,
            breakdown: None,
            churn: None,
        }
    }
}

/// Why an all-reduce replay failed.
#[derive(Debug, thiserror::Error)]
pub enum AllReduceReplayError {
    /// Sizes or a tour that is not a permutation.
    #[error(transparent)]
    Timing(#[from] TimingError),
    /// Some silo never finished (a silo down for good, a lost chunk).
    #[error("all-reduce replay stalled: silo {silo} stuck in round {round}")]
    Deadlock {
        /// A silo that did not finish.
        silo: usize,
        /// The round it is in.
        round: u64,
    },
    /// An availability policy other than `wait`.
    #[error("availability {0}: an all-reduce needs every silo every round; use availability wait")]
    Churn(String),
}

/// The protocol's timers, by tour position.
#[derive(Debug, Clone, Copy)]
enum Timer {
    /// The local step of the silo at this position is done.
    Computed(usize),
    /// Its link is free for the next chunk.
    LinkFree(usize),
}

/// All-reduce rounds `0..rounds` (module docs); state by tour position
/// (on a mesh the tour is `0..n`).
struct Protocol<'a> {
    delay: &'a DelayModel,
    tour: Vec<usize>,
    position: Vec<usize>,
    /// True for the mesh schedule, false for the ring.
    mesh: bool,
    /// How long one step's chunks occupy the link, ms: `dm(p) - l(p, p+1)`
    /// on a ring, `b(i)` on a mesh.
    busy: Vec<Ms>,
    chunk_bits: f64,
    steps: usize,
    /// Chunks a silo receives in a round: `2(n-1)` on both schedules.
    chunks_per_round: usize,
    rounds: u64,
    round: Vec<u64>,
    next_step: Vec<usize>,
    computed: Vec<bool>,
    link_free: Vec<Ms>,
    link_timer: Vec<bool>,
    /// Chunks received, by (position, round).
    received: FxHashMap<(usize, u64), usize>,
    /// Mesh: step-0 chunks received, by (position, round).
    first_step: FxHashMap<(usize, u64), usize>,
    /// Mesh: (receiver, sender, round) of the step-0 chunks received.
    seen: FxHashSet<(usize, usize, u64)>,
    starts: Vec<Vec<Ms>>,
    chunks: u64,
    arc_transfers: FxHashMap<(usize, usize), u64>,
}

impl Protocol<'_> {
    fn start_round(&mut self, p: usize, k: u64, now: Ms, link: &mut Link<'_, Timer>) {
        let silo = self.tour[p];
        self.round[p] = k;
        self.next_step[p] = 0;
        self.computed[p] = false;
        if self.starts.len() <= k as usize {
            // An open-ended run (a clock): one more round of start times.
            self.starts.push(vec![f64::NAN; self.tour.len()]);
        }
        self.starts[k as usize][silo] = now;
        if k < self.rounds {
            let end = self
                .delay
                .compute_end_ms(silo, now, self.delay.compute_round_ms(silo));
            if end.is_finite() {
                link.schedule_at(end, Timer::Computed(p));
            }
        }
    }

    /// Sends one chunk of round `k` from `from` to `to`; `degree` chunks
    /// leave `from` and reach `to` in the step (eq. (3)'s degrees).
    fn send(&mut self, from: usize, to: usize, k: u64, degree: usize, link: &mut Link<'_, Timer>) {
        link.send(Transfer {
            from,
            to,
            round: k,
            bits: self.chunk_bits,
            out_deg: degree,
            in_deg: degree,
        });
        *self.arc_transfers.entry((from, to)).or_insert(0) += 1;
        self.chunks += 1;
    }

    fn got(&self, p: usize, k: u64) -> usize {
        self.received.get(&(p, k)).copied().unwrap_or(0)
    }

    /// Waits for `p`'s link when it is busy; true when it is free now.
    fn link_is_free(&mut self, p: usize, link: &mut Link<'_, Timer>) -> bool {
        if link.now() >= self.link_free[p] {
            return true;
        }
        if !self.link_timer[p] {
            self.link_timer[p] = true;
            link.schedule_at(self.link_free[p], Timer::LinkFree(p));
        }
        false
    }

    fn advance(&mut self, p: usize, link: &mut Link<'_, Timer>) {
        let n = self.tour.len();
        loop {
            let k = self.round[p];
            if k >= self.rounds || !self.computed[p] {
                return;
            }
            let s = self.next_step[p];
            if s < self.steps {
                let ready = if self.mesh {
                    s == 0 || self.first_step.get(&(p, k)).copied().unwrap_or(0) + 1 >= n
                } else {
                    self.got(p, k) >= s
                };
                if !ready || !self.link_is_free(p, link) {
                    return;
                }
                let from = self.tour[p];
                if self.mesh {
                    for to in (0..n).filter(|&to| to != from) {
                        self.send(from, to, k, n - 1, link);
                    }
                } else {
                    self.send(from, self.tour[(p + 1) % n], k, 1, link);
                }
                self.link_free[p] = link.now() + self.busy[p];
                self.next_step[p] = s + 1;
                continue;
            }
            if self.got(p, k) < self.chunks_per_round || !self.link_is_free(p, link) {
                return;
            }
            self.received.remove(&(p, k));
            if self.mesh && self.first_step.remove(&(p, k)).is_some() {
                let silo = self.tour[p];
                for from in 0..n {
                    self.seen.remove(&(silo, from, k));
                }
            }
            let now = link.now();
            self.start_round(p, k + 1, now, link);
            return;
        }
    }
}

impl EventProtocol for Protocol<'_> {
    type Event = Timer;
    type Stall = AllReduceReplayError;

    fn start(&mut self, link: &mut Link<'_, Timer>) {
        for p in 0..self.tour.len() {
            self.start_round(p, 0, 0.0, link);
        }
    }

    fn on_event(&mut self, event: Timer, link: &mut Link<'_, Timer>) {
        let p = match event {
            Timer::Computed(p) => {
                self.computed[p] = true;
                p
            }
            Timer::LinkFree(p) => {
                self.link_timer[p] = false;
                p
            }
        };
        self.advance(p, link);
    }

    fn on_delivered(&mut self, t: Transfer, link: &mut Link<'_, Timer>) {
        let p = self.position[t.to];
        *self.received.entry((p, t.round)).or_insert(0) += 1;
        if self.mesh && self.seen.insert((t.to, t.from, t.round)) {
            *self.first_step.entry((p, t.round)).or_insert(0) += 1;
        }
        self.advance(p, link);
    }

    fn finished(&self) -> bool {
        self.round.iter().all(|&k| k >= self.rounds)
    }

    fn stall(&self) -> AllReduceReplayError {
        let p = self
            .round
            .iter()
            .position(|&k| k < self.rounds)
            .unwrap_or(0);
        AllReduceReplayError::Deadlock {
            silo: self.tour.get(p).copied().unwrap_or(0),
            round: self.round.get(p).copied().unwrap_or(0),
        }
    }
}

/// The protocol of `rounds` rounds of `schedule` on `delay` (`starts`
/// holds round 0 only and grows as silos start rounds).
fn protocol<'a>(
    schedule: &AllReduceSchedule,
    delay: &'a DelayModel,
    rounds: u64,
) -> Result<Protocol<'a>, AllReduceReplayError> {
    let n = delay.silo_count();
    let (tour, busy, mesh, steps) = match schedule {
        AllReduceSchedule::Ring(tour) => {
            let round = AllReduceRound::new(delay, tour)?;
            let steps = 2 * n.saturating_sub(1);
            (tour.clone(), round.busy_ms().to_vec(), false, steps)
        }
        AllReduceSchedule::Mesh => {
            let round = MeshAllReduceRound::new(delay);
            ((0..n).collect(), round.busy_ms().to_vec(), true, 2)
        }
    };
    if let Some(d) = delay.dynamics.as_ref() {
        if d.policy != crate::net::dynamics::AvailabilityPolicy::Wait {
            return Err(AllReduceReplayError::Churn(d.policy.name()));
        }
    }
    let mut position = vec![0; n];
    for (p, &s) in tour.iter().enumerate() {
        position[s] = p;
    }
    Ok(Protocol {
        delay,
        position,
        mesh,
        busy,
        chunk_bits: delay.workload.model_bits / n.max(1) as f64,
        steps,
        chunks_per_round: 2 * n.saturating_sub(1),
        rounds,
        round: vec![0; n],
        next_step: vec![0; n],
        computed: vec![false; n],
        link_free: vec![0.0; n],
        link_timer: vec![false; n],
        first_step: FxHashMap::default(),
        seen: FxHashSet::default(),
        received: FxHashMap::default(),
        starts: vec![vec![f64::NAN; n]],
        chunks: 0,
        arc_transfers: FxHashMap::default(),
        tour,
    })
}

/// Replays `rounds` all-reduce rounds of `schedule` (named `name`) chunk
/// by chunk over `network`; `t_i(0) = 0`.
///
/// # Errors
/// [`AllReduceReplayError::Timing`] when a ring's tour is not a
/// permutation of `delay`'s silos, [`AllReduceReplayError::Churn`] for an availability
/// policy other than `wait`, [`AllReduceReplayError::Deadlock`] when a silo
/// never finishes.
pub fn replay_allreduce(
    name: &str,
    schedule: &AllReduceSchedule,
    delay: &DelayModel,
    network: &mut dyn NetworkModel,
    rounds: u64,
) -> Result<AllReduceReplay, AllReduceReplayError> {
    let protocol = protocol(schedule, delay, rounds)?;
    let mut h = Harness::new(protocol, network);
    h.run_to_end()?;
    let events = h.events();
    let network = h.network_name().to_string();
    let network_stats = h.network_stats();
    let p = h.into_protocol();
    let mut arc_transfers: Vec<_> = p.arc_transfers.into_iter().collect();
    arc_transfers.sort_unstable();
    Ok(AllReduceReplay {
        overlay: name.to_string(),
        network,
        starts: p.starts,
        chunks: p.chunks,
        events,
        arc_transfers,
        network_stats,
    })
}

/// The round clock of all-reduce rounds (ring or mesh) on any network model: the
/// event replay above, run round by round (the `maxplus` network's
/// answers equal [`crate::replay::clock::AllReduceClock`]'s recurrence;
/// on `flow` the chunks share links; a network trace is followed).
pub struct AllReduceEventClock<'a> {
    harness: Harness<'a, Protocol<'a>>,
    next: u64,
}

impl std::fmt::Debug for AllReduceEventClock<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllReduceEventClock")
            .field("harness", &self.harness)
            .field("next", &self.next)
            .finish()
    }
}

impl<'a> AllReduceEventClock<'a> {
    /// A clock of `schedule` on `delay` over `network`, silos at 0 ms.
    ///
    /// # Errors
    /// As [`replay_allreduce`] (a tour that is not a permutation, churn).
    pub fn new(
        schedule: &AllReduceSchedule,
        delay: &'a DelayModel,
        network: Box<dyn NetworkModel + 'a>,
    ) -> Result<Self, AllReduceReplayError> {
        Ok(AllReduceEventClock {
            harness: Harness::new(protocol(schedule, delay, u64::MAX)?, network),
            next: 0,
        })
    }
}

impl RoundClock for AllReduceEventClock<'_> {
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError> {
        let n = self.harness.protocol().tour.len();
        super::clock::check_round(k, self.next, overlay, n)?;
        self.harness
            .run_until(|p| p.round.iter().all(|&r| r > k))
            .map_err(|e| ClockError::Other(e.to_string()))?;
        self.next += 1;
        let p = self.harness.protocol_mut();
        // Every silo has started round k + 1: its start times are final.
        let t = p.starts[k as usize + 1].clone();
        // Keep the last round only: an open-ended run does not grow.
        if k > 0 {
            p.starts[k as usize] = Vec::new();
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::NetworkSpec;
    use crate::net::underlay::{LoadOptions, Underlay};
    use crate::network::{FlowNetwork, MaxPlusNetwork};
    use crate::overlay::algo::RingSearch;
    use crate::overlay::ring::ring_opt_tour;
    use crate::timing::allreduce::AllReduce;

    fn model(file: &str, access: &str) -> DelayModel {
        let path = format!("{}/underlays/paper/{file}.gml", env!("CARGO_MANIFEST_DIR"));
        let u = Underlay::load(std::path::Path::new(&path), &LoadOptions::default()).unwrap();
        NetworkSpec::from_knobs(|k| (k == "access").then_some(access))
            .unwrap()
            .delay_model(&u)
    }

    /// Both schedules on `m`: the ring along the ring-opt tour, the mesh.
    fn schedules(m: &DelayModel) -> [AllReduceSchedule; 2] {
        [
            AllReduceSchedule::Ring(ring_opt_tour(m, &RingSearch::default())),
            AllReduceSchedule::Mesh,
        ]
    }

    #[test]
    fn on_the_maxplus_network_the_replay_is_the_recurrence() {
        for (file, access) in [("gaia", "10G"), ("geantdistance", "100M"), ("exodus", "1G")] {
            let m = model(file, access);
            let n = m.silo_count();
            for schedule in schedules(&m) {
                let r = AllReduce::new(&m, &schedule).unwrap();
                let rounds = 5;
                let rep =
                    replay_allreduce("x", &schedule, &m, &mut MaxPlusNetwork::new(&m), rounds)
                        .unwrap();
                assert_eq!(rep.chunks, rounds * (n * 2 * (n - 1)) as u64);
                let pairs = if schedule.tour().is_some() {
                    n
                } else {
                    n * (n - 1)
                };
                assert_eq!(rep.arc_transfers.len(), pairs);
                let mut t = vec![0.0; n];
                for k in 0..=rounds as usize {
                    for (x, y) in t.iter().zip(&rep.starts[k]) {
                        assert!(
                            (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                            "{file} {} {k}: {x} {y}",
                            schedule.name()
                        );
                    }
                    t = r.end_times(&t);
                }
            }
        }
    }

    #[test]
    fn the_flow_network_replays_every_chunk_and_stays_near_the_recurrence() {
        // The flow model shares links max-min fairly where eq. (3) uses the
        // route's available bandwidth A(i,j) for each chunk alone, so a
        // round may end earlier or later; it runs, counts every chunk, and
        // its rounds stay within a factor of the recurrence's: 2 on a ring,
        // FLOW_MESH on a mesh (whose n(n-1) chunks of a step share the core).
        for (file, access) in [("gaia", "10G"), ("geantdistance", "100M")] {
            let m = model(file, access);
            let n = m.silo_count();
            for schedule in schedules(&m) {
                let factor = if schedule.tour().is_some() {
                    2.0
                } else {
                    FLOW_MESH
                };
                let rounds = 3;
                let a = replay_allreduce("x", &schedule, &m, &mut MaxPlusNetwork::new(&m), rounds)
                    .unwrap();
                let b = replay_allreduce("x", &schedule, &m, &mut FlowNetwork::new(&m), rounds)
                    .unwrap();
                assert_eq!(b.network, "flow");
                assert_eq!(b.chunks, rounds * (n * 2 * (n - 1)) as u64);
                for k in 1..=rounds as usize {
                    for i in 0..n {
                        assert!(b.starts[k][i] > b.starts[k - 1][i], "{file} {k} {i}");
                        let (x, y) = (a.starts[k][i], b.starts[k][i]);
                        assert!(
                            y > x / 2.0 && y < factor * x,
                            "{file} {} {k} {i}: flow {y} maxplus {x}",
                            schedule.name()
                        );
                    }
                }
            }
        }
    }

    /// How much slower than eq. (3) a mesh round may be on the flow
    /// network in the test above (measured: see the test's cases).
    const FLOW_MESH: f64 = 2.0;

    #[test]
    fn the_event_clock_equals_the_replay_round_by_round() {
        use crate::replay::clock::{AllReduceClock, RoundClock};
        let m = model("geantdistance", "100M");
        let n = m.silo_count();
        let tour = ring_opt_tour(&m, &RingSearch::default());
        let ring = Overlay::directed_ring("r", n, &tour);
        let rounds = 4;
        for schedule in schedules(&m) {
            // maxplus: the event clock, the recurrence's clock and the replay.
            let rep =
                replay_allreduce("x", &schedule, &m, &mut MaxPlusNetwork::new(&m), rounds).unwrap();
            let mut ev =
                AllReduceEventClock::new(&schedule, &m, Box::new(MaxPlusNetwork::new(&m))).unwrap();
            let mut rec = AllReduceClock::new(AllReduce::new(&m, &schedule).unwrap());
            for k in 0..rounds {
                let a = ev.round_end_times(k, &ring).unwrap();
                let b = rec.round_end_times(k, &ring).unwrap();
                for i in 0..n {
                    let c = rep.starts[k as usize + 1][i];
                    assert!((a[i] - c).abs() <= 1e-9 * c && (b[i] - c).abs() <= 1e-9 * c);
                }
            }
            assert!(ev.round_end_times(rounds + 1, &ring).is_err());
            // flow: the clock follows the flow replay.
            let rep =
                replay_allreduce("x", &schedule, &m, &mut FlowNetwork::new(&m), rounds).unwrap();
            let mut ev =
                AllReduceEventClock::new(&schedule, &m, Box::new(FlowNetwork::new(&m))).unwrap();
            for k in 0..rounds {
                let a = ev.round_end_times(k, &ring).unwrap();
                assert_eq!(a, rep.starts[k as usize + 1], "{}", schedule.name());
            }
        }
    }

    #[test]
    fn a_silo_down_for_good_is_a_deadlock_not_a_hang() {
        let m = model("gaia", "10G");
        let n = m.silo_count();
        let mut bad = m.clone();
        bad.workload.compute_ms = f64::INFINITY;
        let tour: Vec<usize> = (0..n).collect();
        for schedule in [
            AllReduceSchedule::Ring(tour.clone()),
            AllReduceSchedule::Mesh,
        ] {
            assert!(matches!(
                replay_allreduce("x", &schedule, &bad, &mut MaxPlusNetwork::new(&bad), 2),
                Err(AllReduceReplayError::Deadlock { .. })
            ));
        }
        let short = AllReduceSchedule::Ring(tour[1..].to_vec());
        assert!(matches!(
            replay_allreduce("x", &short, &m, &mut MaxPlusNetwork::new(&m), 2),
            Err(AllReduceReplayError::Timing(_))
        ));
    }
}
