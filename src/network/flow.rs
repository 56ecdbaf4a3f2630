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
//! Rates are the max-min fair allocation, computed by progressive filling
//! (Bertsekas & Gallager, "Data Networks", Sec. 6.5.2): repeatedly take the
//! resource with the smallest fair share `remaining capacity / unfrozen
//! flows`, freeze its flows at that share, and subtract it from their other
//! resources. Rates are recomputed whenever a flow starts or ends, and only
//! for the connected component (in the flow–resource sharing graph) of the
//! resources the change touched; max-min allocations of disjoint components
//! are independent. Changes at the same instant are batched into one
//! recomputation.
//!
//! The last bit of a flow reaches the receiver `l(i,j)` ms (route
//! propagation latency) after the flow has been fully transmitted.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use super::{NetworkModel, NetworkStats, Slab, Timers, Transfer};
use crate::delay::DelayModel;
use crate::engine::EventId;
use crate::units::{BitsPerSec, Ms};

const DELIVER: u64 = 1 << 63;
const RECOMPUTE: u64 = (1 << 63) - 1;

#[derive(Debug)]
struct Flow {
    transfer: Transfer,
    /// Resource ids.
    resources: Vec<u32>,
    /// Bits still to transmit.
    remaining: f64,
    /// Current rate, bit/s.
    rate: BitsPerSec,
    /// Time `remaining` was last brought up to date, ms.
    last: Ms,
    completion: Option<EventId>,
    active: bool,
}

/// Max-min fair fluid network over access and core links.
#[derive(Debug)]
pub struct FlowNetwork<'a> {
    delay: &'a DelayModel,
    n: usize,
    capacity: Vec<BitsPerSec>,
    /// Active flows on every resource.
    on: Vec<Vec<u32>>,
    flows: Slab<Flow>,
    routes: HashMap<(usize, usize), Vec<u32>>,
    dirty: Vec<u32>,
    recompute_pending: bool,
    active: usize,
    stats: NetworkStats,
    // Scratch for recomputation.
    mark_res: Vec<u32>,
    mark_flow: Vec<u32>,
    pos_res: Vec<u32>,
    pos_flow: Vec<u32>,
    epoch: u32,
}

/// Resource id of a direction of a core link.
fn core_resource(n: usize, link: usize, forward: bool) -> usize {
    2 * n + 2 * link + usize::from(!forward)
}

impl<'a> FlowNetwork<'a> {
    /// The model on `delay`.
    pub fn new(delay: &'a DelayModel) -> Self {
        let n = delay.silo_count();
        let mut capacity = Vec::with_capacity(2 * n);
        capacity.extend_from_slice(&delay.access.up);
        capacity.extend_from_slice(&delay.access.down);
        FlowNetwork {
            delay,
            n,
            on: vec![Vec::new(); capacity.len()],
            capacity,
            flows: Slab::default(),
            routes: HashMap::new(),
            dirty: Vec::new(),
            recompute_pending: false,
            active: 0,
            stats: NetworkStats::default(),
            mark_res: Vec::new(),
            mark_flow: Vec::new(),
            pos_res: Vec::new(),
            pos_flow: Vec::new(),
            epoch: 0,
        }
    }

    /// Resources of the flow `i -> j`: uplink, core link directions, downlink.
    fn resources(&mut self, i: usize, j: usize) -> Vec<u32> {
        if let Some(r) = self.routes.get(&(i, j)) {
            return r.clone();
        }
        let conn = &self.delay.connectivity;
        let mut res = vec![i as u32];
        let routers = conn.route_routers(i, j);
        for (k, link) in conn.route(i, j).into_iter().enumerate() {
            let id = core_resource(self.n, link, routers[k] < routers[k + 1]);
            if id >= self.capacity.len() {
                self.capacity.resize(id + 1, f64::INFINITY);
                self.on.resize(id + 1, Vec::new());
            }
            self.capacity[id] = conn.link_capacity_bps(link);
            res.push(id as u32);
        }
        res.push((self.n + j) as u32);
        self.routes.insert((i, j), res.clone());
        res
    }

    /// Current rate of every active flow, by (from, to), bit/s (for tests).
    pub fn rates(&self) -> Vec<((usize, usize), BitsPerSec)> {
        let mut v: Vec<_> = (0..self.flows.slots_len())
            .filter_map(|s| self.flows.try_get(s))
            .filter(|f| f.active)
            .map(|f| ((f.transfer.from, f.transfer.to), f.rate))
            .collect();
        v.sort_by_key(|a| a.0);
        v
    }

    fn mark_dirty(&mut self, res: &[u32], timers: &mut dyn Timers) {
        self.dirty.extend_from_slice(res);
        if !self.recompute_pending {
            self.recompute_pending = true;
            let now = timers.now();
            timers.set(now, RECOMPUTE);
        }
    }

    /// Recomputes max-min rates on the component of the dirty resources.
    fn recompute(&mut self, timers: &mut dyn Timers) {
        self.recompute_pending = false;
        let now = timers.now();
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.mark_res.iter_mut().for_each(|m| *m = 0);
            self.mark_flow.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        let epoch = self.epoch;
        self.mark_res.resize(self.capacity.len(), 0);
        self.mark_flow.resize(self.flows.slots_len(), 0);
        // Component search.
        let mut res_stack: Vec<u32> = std::mem::take(&mut self.dirty);
        let mut comp_res = Vec::new();
        let mut comp_flows = Vec::new();
        while let Some(r) = res_stack.pop() {
            if self.mark_res[r as usize] == epoch {
                continue;
            }
            self.mark_res[r as usize] = epoch;
            comp_res.push(r);
            for &f in &self.on[r as usize] {
                if self.mark_flow[f as usize] != epoch {
                    self.mark_flow[f as usize] = epoch;
                    comp_flows.push(f);
                    res_stack.extend(
                        self.flows
                            .get(f as usize)
                            .resources
                            .iter()
                            .filter(|&&r2| self.mark_res[r2 as usize] != epoch),
                    );
                }
            }
        }
        self.stats.recomputations += 1;
        self.stats.flows_recomputed += comp_flows.len() as u64;
        // Bring progress up to date.
        for &f in &comp_flows {
            let flow = self.flows.get_mut(f as usize);
            let dt = now - flow.last;
            if dt > 0.0 {
                flow.remaining = (flow.remaining - flow.rate * dt / 1e3).max(0.0);
            }
            flow.last = now;
        }
        self.pos_res.resize(self.capacity.len(), 0);
        self.pos_flow.resize(self.flows.slots_len(), 0);
        for (k, &r) in comp_res.iter().enumerate() {
            self.pos_res[r as usize] = k as u32;
        }
        for (k, &f) in comp_flows.iter().enumerate() {
            self.pos_flow[f as usize] = k as u32;
        }
        let rates = fill(
            &comp_res,
            comp_flows.len(),
            |r| self.capacity[r as usize],
            |r| &self.on[r as usize],
            |f| &self.flows.get(f as usize).resources,
            |r| self.pos_res[r as usize] as usize,
            |f| self.pos_flow[f as usize] as usize,
        );
        for (&f, rate) in comp_flows.iter().zip(rates) {
            let flow = self.flows.get_mut(f as usize);
            if flow.completion.is_some() && rate == flow.rate {
                continue;
            }
            flow.rate = rate;
            if let Some(id) = flow.completion.take() {
                timers.cancel(id);
            }
            let left = if flow.remaining <= 0.0 {
                0.0
            } else {
                flow.remaining / rate * 1e3
            };
            if left.is_finite() {
                flow.completion = Some(timers.set(now + left, u64::from(f)));
            }
        }
    }
}

impl<T> Slab<T> {
    fn slots_len(&self) -> usize {
        self.slots.len()
    }
    fn try_get(&self, i: usize) -> Option<&T> {
        self.slots[i].as_ref()
    }
}

#[derive(PartialEq)]
struct Share(f64, u32);
impl Eq for Share {}
impl PartialOrd for Share {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Share {
    /// Min-heap on (share, resource).
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

/// Max-min fair rates (bit/s) of `flows` over `resources` by progressive
/// filling; `on(r)` lists the flows on resource `r` (all in `flows`),
/// `uses(f)` the resources of flow `f` (all in `resources`). Flows that
/// only cross infinite-capacity resources get an infinite rate.
/// `O((R + sum of route lengths) log R)` plus hashing.
pub fn progressive_filling<'s>(
    resources: &[u32],
    flows: &[u32],
    capacity: impl Fn(u32) -> f64,
    on: impl Fn(u32) -> &'s [u32],
    uses: impl Fn(u32) -> &'s [u32],
) -> Vec<f64> {
    let pos_r: HashMap<u32, usize> = resources.iter().enumerate().map(|(k, &r)| (r, k)).collect();
    let pos_f: HashMap<u32, usize> = flows.iter().enumerate().map(|(k, &f)| (f, k)).collect();
    fill(
        resources,
        flows.len(),
        capacity,
        on,
        uses,
        |r| pos_r[&r],
        |f| pos_f[&f],
    )
}

/// Progressive filling core; `pos_r` / `pos_f` map ids to positions in
/// `resources` / the flow list (of length `flow_count`).
fn fill<'s>(
    resources: &[u32],
    flow_count: usize,
    capacity: impl Fn(u32) -> f64,
    on: impl Fn(u32) -> &'s [u32],
    uses: impl Fn(u32) -> &'s [u32],
    pos_r: impl Fn(u32) -> usize,
    pos_f: impl Fn(u32) -> usize,
) -> Vec<f64> {
    let mut rem: Vec<f64> = resources.iter().map(|&r| capacity(r)).collect();
    let mut cnt: Vec<usize> = resources.iter().map(|&r| on(r).len()).collect();
    let mut rate = vec![f64::NAN; flow_count];
    let mut heap = BinaryHeap::with_capacity(resources.len());
    for (k, &r) in resources.iter().enumerate() {
        if cnt[k] > 0 {
            heap.push(Share(rem[k] / cnt[k] as f64, r));
        }
    }
    while let Some(Share(share, r)) = heap.pop() {
        let k = pos_r(r);
        if cnt[k] == 0 || share != rem[k] / cnt[k] as f64 {
            continue; // stale entry
        }
        if share.is_infinite() {
            break;
        }
        for &f in on(r) {
            let fk = pos_f(f);
            if !rate[fk].is_nan() {
                continue;
            }
            rate[fk] = share;
            for &r2 in uses(f) {
                let k2 = pos_r(r2);
                rem[k2] = (rem[k2] - share).max(0.0);
                cnt[k2] -= 1;
                if cnt[k2] > 0 && r2 != r {
                    heap.push(Share(rem[k2] / cnt[k2] as f64, r2));
                }
            }
        }
    }
    for x in &mut rate {
        if x.is_nan() {
            *x = f64::INFINITY;
        }
    }
    rate
}

impl NetworkModel for FlowNetwork<'_> {
    fn name(&self) -> &'static str {
        "flow"
    }

    fn start(&mut self, t: Transfer, timers: &mut dyn Timers, _delivered: &mut Vec<Transfer>) {
        let resources = self.resources(t.from, t.to);
        let slot = self.flows.insert(Flow {
            transfer: t,
            resources: resources.clone(),
            remaining: t.bits,
            rate: 0.0,
            last: timers.now(),
            completion: None,
            active: true,
        }) as u32;
        for &r in &resources {
            self.on[r as usize].push(slot);
        }
        self.active += 1;
        self.stats.max_active_flows = self.stats.max_active_flows.max(self.active);
        self.mark_dirty(&resources, timers);
    }

    fn on_timer(&mut self, token: u64, timers: &mut dyn Timers, delivered: &mut Vec<Transfer>) {
        if token == RECOMPUTE {
            self.recompute(timers);
        } else if token & DELIVER != 0 {
            let f = self.flows.remove((token & !DELIVER) as usize);
            delivered.push(f.transfer);
        } else {
            let slot = token as u32;
            let flow = self.flows.get_mut(slot as usize);
            flow.active = false;
            flow.completion = None;
            flow.remaining = 0.0;
            let t = flow.transfer;
            let resources = std::mem::take(&mut flow.resources);
            for &r in &resources {
                let list = &mut self.on[r as usize];
                let p = list
                    .iter()
                    .position(|&x| x == slot)
                    .expect("flow on resource");
                list.swap_remove(p);
            }
            self.active -= 1;
            self.mark_dirty(&resources, timers);
            let latency = self.delay.connectivity.latency_ms(t.from, t.to);
            timers.set(timers.now() + latency, u64::from(slot) | DELIVER);
        }
    }

    fn stats(&self) -> NetworkStats {
        self.stats
    }
}
