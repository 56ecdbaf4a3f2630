//! Fluid max-min fair network (flow-level model).
//!
//! Every transfer `i -> j` is a flow over three kinds of resources, each
//! with a capacity in bit/s:
//!
//! * the uplink of silo `i` (`Cup(i)`),
//! * every core link of the route `i -> j`, **each direction separately**
//!   (full-duplex links: traffic `a -> b` does not compete with `b -> a`),
//!   with capacity [`crate::connectivity::Connectivity::link_capacity_bps`],
//! * the downlink of silo `j` (`Cdn(j)`).
//!
//! Rates are the max-min fair allocation (Bertsekas & Gallager, "Data
//! Networks", \[BG92\] Sec. 6.5.2), recomputed whenever a flow starts or ends by the
//! incremental progressive filling of [`super::maxmin::MaxMin`]: only the
//! flows that share a resource with the change are re-filled, and the set
//! grows only while some flow lost its bottleneck. Changes at the same
//! instant are batched into one recomputation. Flows whose rate did not
//! change keep their completion timer; a flow's remaining bits are brought
//! up to date only when its rate changes.
//!
//! The last bit of a flow reaches the receiver `l(i,j)` ms (route
//! propagation latency) after the flow has been fully transmitted.

use std::collections::HashMap;

pub use super::maxmin::progressive_filling;
use super::maxmin::MaxMin;
use super::{NetworkModel, NetworkStats, Slab, Timers, Transfer};
use crate::delay::DelayModel;
use crate::engine::EventId;
use crate::units::{BitsPerSec, Ms};

const DELIVER: u64 = 1 << 63;
const RECOMPUTE: u64 = (1 << 63) - 1;

/// Progress of one active flow (indexed by its [`MaxMin`] id).
#[derive(Debug, Clone, Default)]
struct Progress {
    transfer: Option<Transfer>,
    /// Bits still to transmit at time `last`.
    remaining: f64,
    /// Rate since `last`, bit/s.
    rate: BitsPerSec,
    /// Time `remaining` was last brought up to date, ms.
    last: Ms,
    completion: Option<EventId>,
}

/// Max-min fair fluid network over access and core links.
#[derive(Debug)]
pub struct FlowNetwork<'a> {
    delay: &'a DelayModel,
    n: usize,
    alloc: MaxMin,
    /// Resource id of each core link direction, `u32::MAX` until used.
    core_ids: Vec<u32>,
    progress: Vec<Progress>,
    /// Transfers fully sent, waiting for the propagation latency.
    propagating: Slab<Transfer>,
    routes: HashMap<(u32, u32), Vec<u32>>,
    recompute_pending: bool,
    /// Scratch: flows whose rate changed.
    changed: Vec<u32>,
    active: usize,
    stats: NetworkStats,
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
        FlowNetwork {
            delay,
            n,
            alloc,
            core_ids: Vec::new(),
            progress: Vec::new(),
            propagating: Slab::default(),
            routes: HashMap::new(),
            recompute_pending: false,
            changed: Vec::new(),
            active: 0,
            stats: NetworkStats::default(),
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
                }
                res.push(self.core_ids[dir]);
            }
            res.push((self.n + j) as u32);
            self.routes.insert(key, res);
        }
        &self.routes[&key]
    }

    /// Reference mode: re-fill every active flow from scratch at each change
    /// instead of the affected ones (slow; for cross-checks).
    pub fn with_full_recompute(mut self) -> Self {
        self.alloc.set_full_recompute(true);
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
            .filter_map(|p| p.transfer.map(|t| ((t.from, t.to), p.rate)))
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

    /// Re-allocates rates and re-times the flows whose rate changed.
    fn recompute(&mut self, timers: &mut dyn Timers) {
        self.recompute_pending = false;
        let now = timers.now();
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        changed.extend_from_slice(self.alloc.update());
        self.stats.recomputations += 1;
        for &f in &changed {
            let p = &mut self.progress[f as usize];
            let dt = now - p.last;
            if dt > 0.0 && p.rate > 0.0 {
                p.remaining = (p.remaining - p.rate * dt / 1e3).max(0.0);
            }
            p.last = now;
            p.rate = self.alloc.rate(f);
            if let Some(id) = p.completion.take() {
                timers.cancel(id);
            }
            let left = if p.remaining <= 0.0 {
                0.0
            } else {
                p.remaining / p.rate * 1e3
            };
            if left.is_finite() {
                p.completion = Some(timers.set(now + left, u64::from(f)));
            }
        }
        self.changed = changed;
    }
}

impl NetworkModel for FlowNetwork<'_> {
    fn name(&self) -> &'static str {
        "flow"
    }

    fn start(&mut self, t: Transfer, timers: &mut dyn Timers, _delivered: &mut Vec<Transfer>) {
        self.resources(t.from, t.to);
        let res = &self.routes[&(t.from as u32, t.to as u32)];
        let f = self.alloc.add(res) as usize;
        if f >= self.progress.len() {
            self.progress.resize(f + 1, Progress::default());
        }
        self.progress[f] = Progress {
            transfer: Some(t),
            remaining: t.bits,
            rate: 0.0,
            last: timers.now(),
            completion: None,
        };
        self.active += 1;
        self.stats.max_active_flows = self.stats.max_active_flows.max(self.active);
        self.mark_dirty(timers);
    }

    fn on_timer(&mut self, token: u64, timers: &mut dyn Timers, delivered: &mut Vec<Transfer>) {
        if token == RECOMPUTE {
            self.recompute(timers);
        } else if token & DELIVER != 0 {
            delivered.push(self.propagating.remove((token & !DELIVER) as usize));
        } else {
            let f = token as u32;
            let p = &mut self.progress[f as usize];
            let t = p.transfer.take().expect("completing an active flow");
            p.completion = None;
            self.alloc.remove(f);
            self.active -= 1;
            self.mark_dirty(timers);
            let latency = self.delay.connectivity.latency_ms(t.from, t.to);
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
    use crate::overlay::Overlay;
    use crate::placement::SiloPlacement;
    use crate::replay::{replay, ReplayOptions};
    use crate::scenario::NetworkSpec;
    use crate::underlay::synthetic::random_geometric;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Random small instances (a seeded random geometric underlay,
        /// silos spread over its routers, a random circulant overlay,
        /// random core and access capacities): the incremental allocation
        /// (changes batched per instant, only the affected flows re-filled,
        /// only the flows whose rate changed re-timed) replays to the same
        /// times as re-filling every active flow from scratch at every
        /// change.
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
