//! Fluid max-min fair network (flow-level model).
//!
//! Every transfer `i -> j` is a flow over three kinds of resources, each
//! with a capacity in bit/s:
//!
//! * the uplink of silo `i` (`Cup(i)`),
//! * every core link of the route `i -> j`, **each direction separately**
//!   (full-duplex links: traffic `a -> b` does not compete with `b -> a`),
//!   with capacity [`crate::net::connectivity::Connectivity::link_capacity_bps`],
//! * the downlink of silo `j` (`Cdn(j)`).
//!
//! Rates are the max-min fair allocation (Bertsekas & Gallager, "Data
//! Networks", \[BG92\] Sec. 6.5.2), recomputed whenever a flow starts or ends by the
//! incremental progressive filling of [`super::maxmin::MaxMin`], which keeps
//! flows in **rate classes** (flows that froze at the same bottleneck share
//! one rate): only the classes that share a resource with the change are
//! re-filled, and the set grows only while some class lost its bottleneck.
//! Changes at the same instant are batched into one recomputation.
//!
//! Progress is kept per class, not per flow: a class's **clock** counts the
//! bits served to each of its flows since the class was created (`served`,
//! brought up to date only when the class's rate changes), and every flow
//! holds its **target**, the clock value at which it is fully sent. Within a
//! class the flows finish in target order, whatever the rate, so a class
//! keeps its flows in a min-heap of targets and a rate change costs one
//! clock update and the re-timing of the class's first finisher(s), not a
//! walk over its flows. A flow that moves to another class (the allocator
//! splits and merges classes, rarely) carries its remaining bits over.
//!
//! Every flow still completes in an engine event of its own, in the order
//! and number of a timer per flow: a class arms one timer per flow of its
//! earliest finishing time (usually one), so flows that finish at the same
//! instant all complete before the recomputation that instant triggers.
//!
//! The last bit of a flow reaches the receiver `l(i,j)` ms (route
//! propagation latency) after the flow has been fully transmitted.
//!
//! With network dynamics ([`crate::net::dynamics`]) the traced resources (access
//! links of silos with a bandwidth or availability trace, traced core
//! links) take their capacity at every change instant while flows are
//! active (one timer per instant), and every flow is re-filled then (a
//! capacity change can move any bottleneck). A silo's extra latency is
//! taken when a flow's last bit leaves.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub use super::maxmin::progressive_filling;
use super::maxmin::MaxMin;
use super::{NetworkModel, NetworkStats, Slab, Timers, Transfer};
use crate::engine::fx::FxHashMap;
use crate::engine::EventId;
use crate::net::delay::DelayModel;
use crate::units::{BitsPerSec, Ms};

const DELIVER: u64 = 1 << 63;
const RECOMPUTE: u64 = (1 << 63) - 1;
const TRACE_CHANGE: u64 = (1 << 63) - 2;

/// A resource whose capacity follows a trace.
#[derive(Debug, Clone, Copy)]
enum Traced {
    /// Uplink of a silo.
    Up(usize),
    /// Downlink of a silo.
    Down(usize),
    /// Core link `l`, direction `from -> to` (routers).
    Core(usize, usize, usize),
}
const NONE: u32 = u32::MAX;

/// One active flow (indexed by its [`MaxMin`] id).
#[derive(Debug, Clone, Default)]
struct FlowProgress {
    transfer: Option<Transfer>,
    /// Its class's `served` value at which the flow is fully sent, bit.
    target: f64,
    /// Class whose heap holds the flow's live entry (`NONE`: none).
    class: u32,
    /// Bumped whenever the flow leaves a heap: older entries are stale.
    version: u32,
    /// Latency of its route without dynamics, ms (read from the route
    /// table when it starts, not from the silo x silo table when it ends).
    latency_ms: Ms,
}

/// A flow in a class's heap of targets.
#[derive(Debug, Clone, Copy)]
struct Entry {
    target: f64,
    flow: u32,
    version: u32,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.target
            .total_cmp(&other.target)
            .then(self.flow.cmp(&other.flow))
            .then(self.version.cmp(&other.version))
    }
}

/// Progress of one rate class.
#[derive(Debug, Default)]
struct Clock {
    /// Bits served to each flow of the class at time `last`, bit.
    served: f64,
    /// Rate since `last`, bit/s (0 before the first allocation).
    rate: BitsPerSec,
    /// Time `served` was last brought up to date (a rate change), ms.
    last: Ms,
    /// Flows not yet due, by target (may hold stale entries).
    heap: BinaryHeap<Reverse<Entry>>,
    /// The flows of the earliest finishing time, each with its completion
    /// timer, and that time (ms).
    due: Vec<(Entry, EventId)>,
    due_at: Ms,
}

impl Clock {
    fn reset(&mut self, now: Ms) {
        self.served = 0.0;
        self.rate = 0.0;
        self.last = now;
        self.heap.clear();
        debug_assert!(self.due.is_empty());
        self.due.clear();
    }

    /// `served` at time `now` (at the current rate).
    fn served_at(&self, now: Ms) -> f64 {
        let dt = now - self.last;
        if dt > 0.0 && self.rate > 0.0 {
            self.served + self.rate * dt / 1e3
        } else {
            self.served
        }
    }

    /// Completion time of a flow with `target`, ms, not before `now`
    /// (infinite at rate 0 with bits left).
    fn finish(&self, target: f64, now: Ms) -> Ms {
        let left = target - self.served;
        let at = if left <= 0.0 {
            self.last
        } else {
            self.last + left / self.rate * 1e3
        };
        at.max(now)
    }
}

/// Max-min fair fluid network over access and core links.
#[derive(Debug)]
pub struct FlowNetwork<'a> {
    delay: &'a DelayModel,
    n: usize,
    alloc: MaxMin,
    /// Resource id of each core link direction, `u32::MAX` until used.
    core_ids: Vec<u32>,
    progress: Vec<FlowProgress>,
    /// Per-class progress, by class id.
    clocks: Vec<Clock>,
    /// Transfers fully sent, waiting for the propagation latency.
    propagating: Slab<Transfer>,
    /// Resources of every route used so far, by (sender, receiver), with
    /// the route's latency, ms.
    routes: FxHashMap<(u32, u32), (Vec<u32>, Ms)>,
    recompute_pending: bool,
    /// Flows over infinite resources only, started since the last
    /// recomputation (they complete at once).
    unbounded: Vec<u32>,
    /// Scratch: classes to re-time, and their marks.
    retime: Vec<u32>,
    retime_mark: Vec<u64>,
    epoch: u64,
    /// Scratch: the entries of a class's earliest finishing time.
    group: Vec<Entry>,
    active: usize,
    stats: NetworkStats,
    /// Resources whose capacity follows the dynamics' traces.
    traced: Vec<(u32, Traced)>,
    /// Instants at which a traced capacity may change, ms, sorted.
    change_times: Vec<Ms>,
    /// A [`TRACE_CHANGE`] timer is pending.
    change_armed: bool,
    /// Re-fill every flow at the next recomputation (a capacity changed).
    refill_all: bool,
    /// Reference mode ([`Self::with_full_recompute`]).
    full: bool,
}

impl<'a> FlowNetwork<'a> {
    /// The model on `delay`.
    pub fn new(delay: &'a DelayModel) -> Self {
        let n = delay.silo_count();
        let mut alloc = MaxMin::new();
        for &c in &delay.access.up {
            alloc.add_resource(c);
        }
        for &c in &delay.access.down {
            alloc.add_resource(c);
        }
        let mut traced = Vec::new();
        let mut change_times = Vec::new();
        if let Some(d) = &delay.dynamics {
            // Infinite capacities stay infinite (the scenario refuses traces
            // on them).
            for i in 0..n {
                let avail = d.avail[i].as_ref();
                for (up, series, cap, r) in [
                    (true, &d.up[i], delay.access.up[i], i),
                    (false, &d.down[i], delay.access.down[i], n + i),
                ] {
                    if (series.is_some() || avail.is_some()) && cap.is_finite() {
                        traced.push((r as u32, if up { Traced::Up(i) } else { Traced::Down(i) }));
                        for s in [series.as_ref(), avail].into_iter().flatten() {
                            change_times.extend_from_slice(s.times());
                        }
                    }
                }
            }
            for (_, s) in &d.links {
                change_times.extend_from_slice(s.times());
            }
            change_times.sort_by(f64::total_cmp);
            change_times.dedup();
        }
        FlowNetwork {
            delay,
            n,
            alloc,
            core_ids: Vec::new(),
            progress: Vec::new(),
            clocks: Vec::new(),
            propagating: Slab::default(),
            routes: FxHashMap::default(),
            recompute_pending: false,
            unbounded: Vec::new(),
            retime: Vec::new(),
            retime_mark: Vec::new(),
            epoch: 0,
            group: Vec::new(),
            active: 0,
            stats: NetworkStats::default(),
            traced,
            change_times,
            change_armed: false,
            refill_all: false,
            full: false,
        }
    }

    /// Brings the traced capacities to their values at `now`; true when
    /// one changed (every flow is then re-filled at the recomputation).
    fn sync_capacities(&mut self, now: Ms) -> bool {
        let Some(d) = &self.delay.dynamics else {
            return false;
        };
        let (access, conn) = (&self.delay.access, &self.delay.connectivity);
        let mut changed = false;
        for &(r, what) in &self.traced {
            let cap = match what {
                Traced::Up(i) => d.up_at(i, now, access.up[i]),
                Traced::Down(i) => d.down_at(i, now, access.down[i]),
                Traced::Core(l, a, b) => {
                    let base = conn.link_capacity_towards(l, a, b);
                    d.link(l).map_or(base, |s| s.at(now, base))
                }
            };
            if cap != self.alloc.capacity(r) {
                self.alloc.set_capacity(r, cap);
                changed = true;
            }
        }
        self.refill_all |= changed;
        changed
    }

    /// Sets a timer at the next change of a traced capacity while flows
    /// are active.
    fn arm_change(&mut self, timers: &mut dyn Timers) {
        if self.change_armed || self.active == 0 {
            return;
        }
        let now = timers.now();
        let k = self.change_times.partition_point(|&t| t <= now);
        if let Some(&at) = self.change_times.get(k) {
            timers.set(at, TRACE_CHANGE);
            self.change_armed = true;
        }
    }

    /// Resources of the flow `i -> j`: uplink, core link directions, downlink.
    fn resources(&mut self, i: usize, j: usize) -> &[u32] {
        let key = (i as u32, j as u32);
        if !self.routes.contains_key(&key) {
            let conn = &self.delay.connectivity;
            let mut res = vec![i as u32];
            let routers = conn.route_routers(i, j);
            for (k, link) in conn.route(i, j).into_iter().enumerate() {
                let dir = 2 * link + usize::from(routers[k] > routers[k + 1]);
                if dir >= self.core_ids.len() {
                    self.core_ids.resize(dir + 1, u32::MAX);
                }
                if self.core_ids[dir] == u32::MAX {
                    let cap = conn.link_capacity_towards(link, routers[k], routers[k + 1]);
                    self.core_ids[dir] = self.alloc.add_resource(cap);
                    let dynamics = self.delay.dynamics.as_deref();
                    if cap.is_finite() && dynamics.is_some_and(|d| d.link(link).is_some()) {
                        let what = Traced::Core(link, routers[k], routers[k + 1]);
                        self.traced.push((self.core_ids[dir], what));
                    }
                }
                res.push(self.core_ids[dir]);
            }
            res.push((self.n + j) as u32);
            self.routes.insert(key, (res, conn.latency_ms(i, j)));
        }
        &self.routes[&key].0
    }

    /// Reference mode: re-fill every active flow from scratch at each change
    /// instead of the affected ones (slow; for cross-checks).
    pub fn with_full_recompute(mut self) -> Self {
        self.alloc.set_full_recompute(true);
        self.full = true;
        self
    }

    /// Counters of the incremental max-min allocation.
    pub fn allocator_stats(&self) -> super::maxmin::MaxMinStats {
        self.alloc.stats()
    }

    /// Current rate of every active flow, by (from, to), bit/s (for tests).
    pub fn rates(&self) -> Vec<((usize, usize), BitsPerSec)> {
        let mut v: Vec<_> = self
            .progress
            .iter()
            .enumerate()
            .filter_map(|(f, p)| {
                p.transfer
                    .map(|t| ((t.from, t.to), self.alloc.rate(f as u32)))
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        v
    }

    fn mark_dirty(&mut self, timers: &mut dyn Timers) {
        if !self.recompute_pending {
            self.recompute_pending = true;
            let now = timers.now();
            timers.set(now, RECOMPUTE);
        }
    }

    /// The clock of class `c`.
    fn clock(&mut self, c: u32) -> &mut Clock {
        let c = c as usize;
        if c >= self.clocks.len() {
            self.clocks.resize_with(c + 1, Clock::default);
            self.retime_mark.resize(c + 1, 0);
        }
        &mut self.clocks[c]
    }

    /// Is `e` the live entry of its flow in class `c`?
    fn valid(&self, e: &Entry, c: u32) -> bool {
        let p = &self.progress[e.flow as usize];
        p.transfer.is_some() && p.class == c && p.version == e.version
    }

    /// Arms the completion timers of class `c`'s earliest finishing time:
    /// one per flow finishing then, each carrying its flow id. Timers of a
    /// group that did not change (same flows, same time) are kept.
    fn arm(&mut self, c: u32, timers: &mut dyn Timers) {
        let now = timers.now();
        let mut group = std::mem::take(&mut self.group);
        group.clear();
        // The due flows go back to the heap; the group is recomputed.
        let clock = &mut self.clocks[c as usize];
        let old_due = std::mem::take(&mut clock.due);
        let old_at = clock.due_at;
        for &(e, _) in &old_due {
            self.clocks[c as usize].heap.push(Reverse(e));
        }
        let mut at = f64::INFINITY;
        while let Some(&Reverse(e)) = self.clocks[c as usize].heap.peek() {
            if !self.valid(&e, c) {
                self.clocks[c as usize].heap.pop();
                continue;
            }
            let t = self.clocks[c as usize].finish(e.target, now);
            if !t.is_finite() || (!group.is_empty() && t != at) {
                break;
            }
            at = t;
            group.push(e);
            self.clocks[c as usize].heap.pop();
        }
        let clock = &mut self.clocks[c as usize];
        let same = at == old_at
            && group.len() == old_due.len()
            && group.iter().zip(&old_due).all(|(a, b)| *a == b.0);
        if same {
            clock.due = old_due;
        } else {
            for &(_, id) in &old_due {
                timers.cancel(id);
            }
            let mut due = old_due;
            due.clear();
            for &e in &group {
                due.push((e, timers.set(at, u64::from(e.flow))));
            }
            clock.due = due;
            clock.due_at = at;
        }
        self.group = group;
    }

    /// Re-allocates rates and re-times the classes whose rate or flows
    /// changed.
    fn recompute(&mut self, timers: &mut dyn Timers) {
        self.recompute_pending = false;
        let now = timers.now();
        if self.refill_all {
            self.alloc.set_full_recompute(true);
        }
        self.alloc.update();
        if std::mem::take(&mut self.refill_all) {
            self.alloc.set_full_recompute(self.full);
        }
        self.stats.recomputations += 1;
        self.epoch += 1;
        self.retime.clear();
        let changes = self.alloc.changes();
        for &c in &changes.created {
            let c = c as usize;
            if c >= self.clocks.len() {
                self.clocks.resize_with(c + 1, Clock::default);
                self.retime_mark.resize(c + 1, 0);
            }
            let clock = &mut self.clocks[c];
            debug_assert!(clock.due.is_empty());
            clock.reset(now);
        }
        // Moved flows carry their remaining bits, at the old rates.
        for &(f, from, to) in &changes.moved {
            let left = self.progress[f as usize].target - self.clocks[from as usize].served_at(now);
            let target = self.clocks[to as usize].served_at(now) + left;
            let p = &mut self.progress[f as usize];
            p.version = p.version.wrapping_add(1);
            p.class = to;
            p.target = target;
            let version = p.version;
            self.clocks[to as usize].heap.push(Reverse(Entry {
                target,
                flow: f,
                version,
            }));
            for c in [from, to] {
                if self.retime_mark[c as usize] != self.epoch {
                    self.retime_mark[c as usize] = self.epoch;
                    self.retime.push(c);
                }
            }
        }
        for &c in &changes.freed {
            let clock = &mut self.clocks[c as usize];
            for &(_, id) in &clock.due {
                timers.cancel(id);
            }
            clock.due.clear();
            clock.heap.clear();
        }
        for &c in &changes.rated {
            let rate = self.alloc.class_rate(c);
            let clock = &mut self.clocks[c as usize];
            clock.served = clock.served_at(now);
            clock.last = now;
            clock.rate = rate;
            if self.retime_mark[c as usize] != self.epoch {
                self.retime_mark[c as usize] = self.epoch;
                self.retime.push(c);
            }
        }
        let mut retime = std::mem::take(&mut self.retime);
        for &c in &retime {
            if self.alloc.is_class_live(c) {
                self.arm(c, timers);
            }
        }
        retime.clear();
        self.retime = retime;
        // Flows over infinite resources only: infinite rate, done at once.
        for k in 0..self.unbounded.len() {
            let f = self.unbounded[k];
            if self.progress[f as usize].transfer.is_some() {
                timers.set(now, u64::from(f));
            }
        }
        self.unbounded.clear();
    }
}

impl NetworkModel for FlowNetwork<'_> {
    fn name(&self) -> &'static str {
        if self.delay.dynamics.is_some() {
            "flow+traces"
        } else {
            "flow"
        }
    }

    fn start(&mut self, t: Transfer, timers: &mut dyn Timers, _delivered: &mut Vec<Transfer>) {
        self.resources(t.from, t.to);
        // Changes while no flow was active apply now (a new core link's
        // capacity included).
        self.sync_capacities(timers.now());
        let (res, latency_ms) = &self.routes[&(t.from as u32, t.to as u32)];
        let latency_ms = *latency_ms;
        let f = self.alloc.add(res);
        if f as usize >= self.progress.len() {
            self.progress
                .resize(f as usize + 1, FlowProgress::default());
        }
        let now = timers.now();
        let c = self.alloc.class_of(f);
        let p = &mut self.progress[f as usize];
        p.transfer = Some(t);
        p.version = p.version.wrapping_add(1);
        p.class = c;
        p.target = t.bits;
        p.latency_ms = latency_ms;
        let version = p.version;
        if c == NONE {
            self.unbounded.push(f);
        } else {
            // A new class of its own (its id unused since the last update).
            let clock = self.clock(c);
            clock.reset(now);
            clock.heap.push(Reverse(Entry {
                target: t.bits,
                flow: f,
                version,
            }));
        }
        self.active += 1;
        self.stats.max_active_flows = self.stats.max_active_flows.max(self.active);
        self.mark_dirty(timers);
        self.arm_change(timers);
    }

    fn on_timer(&mut self, token: u64, timers: &mut dyn Timers, delivered: &mut Vec<Transfer>) {
        if token == RECOMPUTE {
            self.recompute(timers);
        } else if token == TRACE_CHANGE {
            self.change_armed = false;
            if self.sync_capacities(timers.now()) {
                self.mark_dirty(timers);
            }
            self.arm_change(timers);
        } else if token & DELIVER != 0 {
            delivered.push(self.propagating.remove((token & !DELIVER) as usize));
        } else {
            let f = token as u32;
            let p = &mut self.progress[f as usize];
            let t = p.transfer.take().expect("completing an active flow");
            p.version = p.version.wrapping_add(1);
            let c = std::mem::replace(&mut p.class, NONE);
            let route_latency = p.latency_ms;
            self.alloc.remove(f);
            if c != NONE {
                let clock = &mut self.clocks[c as usize];
                let k = clock
                    .due
                    .iter()
                    .position(|(e, _)| e.flow == f)
                    .expect("a due flow");
                clock.due.remove(k);
                // The next finishing time, once every flow of this one is
                // done (the class keeps its rate until the recomputation).
                if clock.due.is_empty() && self.alloc.is_class_live(c) {
                    self.arm(c, timers);
                }
            }
            self.active -= 1;
            self.mark_dirty(timers);
            let mut latency = route_latency;
            if let Some(d) = &self.delay.dynamics {
                let now = timers.now();
                latency += d.latency_at(t.from, now) + d.latency_at(t.to, now);
                if !d.link_latency.is_empty() {
                    let route = self.delay.connectivity.route(t.from, t.to);
                    latency += d.route_latency_at(&route, now);
                }
            }
            let slot = self.propagating.insert(t);
            timers.set(timers.now() + latency, slot as u64 | DELIVER);
        }
    }

    fn stats(&self) -> NetworkStats {
        NetworkStats {
            flows_recomputed: self.alloc.stats().flows_filled,
            ..self.stats
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Overlay;
    use crate::net::placement::SiloPlacement;
    use crate::net::scenario::NetworkSpec;
    use crate::net::underlay::synthetic::random_geometric;
    use crate::replay::{replay, ReplayOptions};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Random small instances (a seeded random geometric underlay,
        /// silos spread over its routers, a random circulant overlay,
        /// random core and access capacities): the incremental allocation
        /// (changes batched per instant, only the affected classes
        /// re-filled, only the classes whose rate or flows changed re-timed)
        /// replays to the same times as re-filling every active flow from
        /// scratch, each from a class of its own, at every change (every
        /// flow moves between classes at every change there). Equal
        /// transfers started together finish at one instant: many flows
        /// complete at once.
        #[test]
        fn incremental_replay_equals_full_recompute_on_random_instances(
            seed in 0u64..10_000,
            routers in 3usize..20,
            silos in 2usize..24,
            strides in prop::collection::vec(1usize..8, 1..4),
            core in 1e8f64..1e10,
            access in 1e8f64..1e10,
        ) {
            let Ok(u) = random_geometric(routers, 2000.0, 900.0, core, seed) else {
                return Ok(());
            };
            let p = SiloPlacement::spread(silos, u.routers.len(), seed).unwrap();
            let m = NetworkSpec {
                access_bps: access,
                ..NetworkSpec::default()
            }
            .delay_model_placed(&u, p);
            let mut strides: Vec<usize> = strides.into_iter().map(|s| s % silos).collect();
            strides.retain(|&s| s != 0);
            strides.sort_unstable();
            strides.dedup();
            prop_assume!(!strides.is_empty());
            let o = Overlay::from_arcs(
                "circulant",
                silos,
                (0..silos).flat_map(|i| strides.iter().map(move |s| (i, (i + s) % silos))),
            );
            let opts = ReplayOptions {
                rounds: 6,
                ..ReplayOptions::default()
            };
            let inc = replay(&o, &m, &mut FlowNetwork::new(&m), &opts).unwrap();
            let full = replay(&o, &m, &mut FlowNetwork::new(&m).with_full_recompute(), &opts)
                .unwrap();
            for (a, b) in inc.starts.iter().flatten().zip(full.starts.iter().flatten()) {
                prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{} vs {}", a, b);
            }
        }
    }
}
