//! Incremental max-min fair rate allocation (the core of
//! [`super::flow::FlowNetwork`]).
//!
//! Flows cross resources of fixed capacity (bit/s). The max-min fair
//! allocation is the unique feasible allocation in which **every flow has a
//! bottleneck**: a saturated resource on which no other flow has a larger
//! rate (\[BG92\] Sec. 6.5.2). From scratch it
//! is computed by progressive filling ([`progressive_filling`]).
//!
//! [`MaxMin::update`] recomputes it incrementally after flows were added or
//! removed:
//!
//! 1. `S` = the new flows and the flows whose recorded bottleneck is a
//!    resource the changes touched (only those can lose it: every other
//!    flow's bottleneck kept its load and its flows' rates); `R` = the
//!    resources of `S`.
//! 2. Progressive filling on `S` alone, with every resource of `R` reduced
//!    by the (unchanged) rates of the flows outside `S`.
//! 3. Check the bottleneck condition for the flows of `S` and for the flows
//!    outside `S` whose bottleneck is in `R` (the only ones whose
//!    bottleneck's load or rates changed). A flow outside `S` without a
//!    bottleneck joins `S`; for a flow of `S` without one, the flows
//!    outside `S` with a larger rate on the resource where it froze join
//!    `S`. Repeat from 2 until the check passes (then the allocation is
//!    max-min fair by the characterisation above) or `S` stops growing
//!    (`S` is then a union of components, where step 2 is exact
//!    progressive filling).
//!
//! Bookkeeping that keeps each update proportional to the flows of `S`
//! and their routes, not to every flow on the resources of `R`:
//!
//! * every resource keeps the list of flows whose bottleneck it is, and its
//!   **load** (sum of committed rates) as a running sum made exact by
//!   error-free transformations ([`RunningSum`]), so the residual capacity
//!   of step 2 needs no scan of the resource's flows;
//! * step 2 records, per resource of `R`, its final residual, the largest
//!   rate of `S` on it and, where it was a bottleneck, the largest rate
//!   outside `S`: step 3 decides almost every flow from these records and
//!   scans a resource's flows only for a flow that fails that test;
//! * step 2 finds each bottleneck (smallest fair share `residual / unfrozen
//!   flows`, ties to the smaller index) by a scan of `R` when `R` has at
//!   most [`LINEAR_SCAN_MAX`] resources, and otherwise keeps the shares in
//!   an indexed binary min-heap (positions in an array, decrease/increase
//!   key in place, each resource re-keyed once per bottleneck); both give
//!   the same order, so the same rates bit for bit (test).
//!
//! All scratch space is reused between updates.

use std::collections::HashMap;

use crate::units::BitsPerSec;

/// Relative tolerance of the bottleneck check.
const TOL: f64 = 1e-9;

/// Up to this many resources in `R`, a fill finds each bottleneck by a scan
/// of `R` instead of an indexed heap (a scan costs `|R|` per bottleneck, a
/// heap re-key `log |R|` per touched resource; fills have few bottleneck
/// levels, so the scan wins far beyond small `R`). Measured on the
/// worst-case ring of `examples/flow_profile.rs`: 48 -> 0.73 s, 128 ->
/// 0.68 s, 256 -> 0.60 s; on the `flow-replay` stage of
/// `experiments/scaling` (N routers, plain ring, user CPU s): N = 1000
/// (100 rounds) 3.9 s at 256, 3.1 s at 2048, 3.2-3.4 s scanning every R;
/// N = 2000 (100 rounds) 22.0 s at 256, 16.5 s at 2048, 16.3 s scanning
/// every R; N = 5000 (5 rounds) 28.9 s at 256, 25.7 s at 4096, 29.9 s
/// scanning every R.
pub const LINEAR_SCAN_MAX: usize = 4096;

#[derive(Debug, Clone, Default)]
struct FlowState {
    /// Resources crossed.
    res: Vec<u32>,
    /// Position of this flow in `on[res[k]]`.
    pos: Vec<u32>,
    live: bool,
}

/// Counters of the incremental allocation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MaxMinStats {
    /// Calls to [`MaxMin::update`] that had changes to process.
    pub updates: u64,
    /// Progressive-filling passes (more than one when `S` had to grow).
    pub passes: u64,
    /// Flows re-allocated, summed over passes.
    pub flows_filled: u64,
    /// Flows whose rate changed, summed over updates.
    pub flows_changed: u64,
}

/// Max-min fair rates of a changing set of flows over fixed resources.
#[derive(Debug, Default)]
pub struct MaxMin {
    cap: Vec<BitsPerSec>,
    /// Live flows on every resource.
    on: Vec<Vec<u32>>,
    flows: Vec<FlowState>,
    /// Current rate of every flow, bit/s (by flow id; a separate array so
    /// that the scans over a resource's flows stay in cache).
    rate: Vec<f64>,
    /// A bottleneck resource of every flow in the current allocation
    /// (`u32::MAX`: none, e.g. an infinite rate).
    bneck: Vec<u32>,
    /// Flows whose recorded bottleneck is each resource, and the position
    /// of every flow in its list: the check visits only the flows whose
    /// bottleneck the update touched.
    bneck_of: Vec<Vec<u32>>,
    bneck_pos: Vec<u32>,
    /// Sum of the committed rates of the live flows on every resource,
    /// bit/s, as an unevaluated pair `hi + lo` kept by error-free
    /// transformations (see [`RunningSum`]).
    load: Vec<RunningSum>,
    free: Vec<u32>,
    /// Resources touched since the last update.
    dirty: Vec<u32>,
    /// Flows added since the last update.
    added: Vec<u32>,
    stats: MaxMinStats,
    // Scratch, indexed by flow / resource id, reused across updates.
    epoch: u64,
    flow_mark: Vec<u64>,
    /// Resource -> its mark and local index in `r_list` (the index is
    /// valid when the mark is the current fill's epoch): one array, so a
    /// fill reads both with one access.
    res_slot: Vec<ResSlot>,
    s_list: Vec<u32>,
    r_list: Vec<u32>,
    new_rate: Vec<f64>,
    new_bneck: Vec<u32>,
    frozen: Vec<bool>,
    /// The resources of R during (and after) the last fill, by local index.
    local: Vec<Local>,
    heap: IndexedHeap,
    changed: Vec<u32>,
    check_epoch: Vec<u64>,
    check_load: Vec<f64>,
    check_max: Vec<f64>,
    grow: Vec<u32>,
    /// Flows the check visits.
    candidates: Vec<u32>,
    /// Local resource indices re-keyed after a bottleneck's flows froze.
    touched: Vec<u32>,
    /// Re-fill every live flow at each update (reference mode).
    full: bool,
    /// Largest R filled by scans instead of the heap (`None`:
    /// [`LINEAR_SCAN_MAX`]).
    linear_scan_max: Option<usize>,
}

impl MaxMin {
    /// An allocator with no resources.
    pub fn new() -> Self {
        MaxMin::default()
    }

    /// Reference mode: when `full`, every update re-fills all live flows
    /// from scratch instead of the affected ones (for cross-checks).
    pub fn set_full_recompute(&mut self, full: bool) {
        self.full = full;
    }

    /// Fills sets of up to `max` resources by scans and larger ones with
    /// the indexed heap (default [`LINEAR_SCAN_MAX`]; the rates are the
    /// same either way, bit for bit: for tests and benchmarks).
    pub fn set_linear_scan_max(&mut self, max: usize) {
        self.linear_scan_max = Some(max);
    }

    /// Adds a resource of capacity `cap` (bit/s, may be infinite); returns its id.
    pub fn add_resource(&mut self, cap: BitsPerSec) -> u32 {
        self.cap.push(cap);
        self.on.push(Vec::new());
        self.bneck_of.push(Vec::new());
        self.load.push(RunningSum::default());
        self.res_slot.push(ResSlot::default());
        self.check_epoch.push(0);
        self.check_load.push(0.0);
        self.check_max.push(0.0);
        (self.cap.len() - 1) as u32
    }

    /// Number of resources.
    pub fn resource_count(&self) -> usize {
        self.cap.len()
    }

    /// Capacity of resource `r`, bit/s.
    pub fn capacity(&self, r: u32) -> BitsPerSec {
        self.cap[r as usize]
    }

    /// Adds a flow over `res` (distinct resource ids); its rate is set by
    /// the next [`MaxMin::update`]. Returns its id (ids of removed flows
    /// are reused).
    pub fn add(&mut self, res: &[u32]) -> u32 {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.flows.push(FlowState::default());
                self.rate.push(0.0);
                self.bneck.push(u32::MAX);
                self.bneck_pos.push(0);
                self.flow_mark.push(0);
                self.new_rate.push(0.0);
                self.new_bneck.push(u32::MAX);
                self.frozen.push(false);
                (self.flows.len() - 1) as u32
            }
        };
        let f = &mut self.flows[id as usize];
        f.res.clear();
        f.res.extend_from_slice(res);
        f.pos.clear();
        for &r in res {
            let list = &mut self.on[r as usize];
            f.pos.push(list.len() as u32);
            list.push(id);
        }
        f.live = true;
        self.rate[id as usize] = f64::NAN; // reported as changed by the next update
        self.new_rate[id as usize] = f64::NAN;
        self.set_bneck(id, u32::MAX);
        self.dirty.extend_from_slice(res);
        self.added.push(id);
        id
    }

    /// Removes flow `f` (its resources are re-allocated at the next update).
    pub fn remove(&mut self, f: u32) {
        self.set_bneck(f, u32::MAX);
        self.move_load(f, committed(self.rate[f as usize]), 0.0);
        let state = std::mem::take(&mut self.flows[f as usize]);
        assert!(state.live, "removing a dead flow");
        for (&r, &p) in state.res.iter().zip(&state.pos) {
            let list = &mut self.on[r as usize];
            list.swap_remove(p as usize);
            if let Some(&moved) = list.get(p as usize) {
                let m = &mut self.flows[moved as usize];
                let k = m
                    .res
                    .iter()
                    .position(|&x| x == r)
                    .expect("moved flow uses r");
                m.pos[k] = p;
            }
        }
        self.dirty.extend_from_slice(&state.res);
        // Keep the vectors' allocations for reuse.
        let mut state = state;
        state.live = false;
        self.rate[f as usize] = 0.0;
        self.new_rate[f as usize] = 0.0;
        self.flows[f as usize] = state;
        self.free.push(f);
    }

    /// Current rate of flow `f`, bit/s (infinite when it crosses only
    /// infinite-capacity resources).
    pub fn rate(&self, f: u32) -> BitsPerSec {
        self.rate[f as usize]
    }

    /// Resources of flow `f`.
    pub fn resources(&self, f: u32) -> &[u32] {
        &self.flows[f as usize].res
    }

    /// Live flows on resource `r`.
    pub fn flows_on(&self, r: u32) -> &[u32] {
        &self.on[r as usize]
    }

    /// True when flow id `f` is live.
    pub fn is_live(&self, f: u32) -> bool {
        self.flows.get(f as usize).is_some_and(|s| s.live)
    }

    /// Counters.
    pub fn stats(&self) -> MaxMinStats {
        self.stats
    }

    /// Records `b` (`u32::MAX`: none) as the bottleneck of flow `f`.
    fn set_bneck(&mut self, f: u32, b: u32) {
        let old = self.bneck[f as usize];
        if old == b {
            return;
        }
        if old != u32::MAX {
            let list = &mut self.bneck_of[old as usize];
            let p = self.bneck_pos[f as usize] as usize;
            list.swap_remove(p);
            if let Some(&moved) = list.get(p) {
                self.bneck_pos[moved as usize] = p as u32;
            }
        }
        if b != u32::MAX {
            let list = &mut self.bneck_of[b as usize];
            self.bneck_pos[f as usize] = list.len() as u32;
            list.push(f);
        }
        self.bneck[f as usize] = b;
    }

    /// Changes the rate flow `f` adds to the load of each of its finite
    /// resources from `old` to `new` bit/s (both finite: 0 for none).
    fn move_load(&mut self, f: u32, old: f64, new: f64) {
        if old == new {
            return;
        }
        // new - old = d + e exactly (TwoSum).
        let d = new - old;
        let bp = d - new;
        let e = (new - (d - bp)) + (-old - bp);
        let (cap, loads) = (&self.cap, &mut self.load);
        for &r in &self.flows[f as usize].res {
            if cap[r as usize].is_finite() {
                let load = &mut loads[r as usize];
                load.add(d);
                load.lo += e;
            }
        }
    }

    /// A fresh mark value (64-bit: never wraps in practice).
    fn next_epoch(&mut self) -> u64 {
        self.epoch += 1;
        self.epoch
    }

    /// Re-allocates after the changes since the last call; returns the
    /// flows whose rate changed (new flows included), in no set order.
    pub fn update(&mut self) -> &[u32] {
        self.changed.clear();
        if self.dirty.is_empty() {
            return &self.changed;
        }
        self.stats.updates += 1;
        let epoch = self.next_epoch();
        self.s_list.clear();
        let mut dirty = std::mem::take(&mut self.dirty);
        if self.full {
            dirty.clear();
            dirty.extend(0..self.cap.len() as u32);
        }
        // S starts with the new flows and the flows whose bottleneck a
        // change touched; the check adds whoever else lost a bottleneck.
        let mut added = std::mem::take(&mut self.added);
        for &f in &added {
            if self.flows[f as usize].live && self.flow_mark[f as usize] != epoch {
                self.flow_mark[f as usize] = epoch;
                self.s_list.push(f);
            }
        }
        for &r in &dirty {
            let flows = if self.full {
                &self.on[r as usize]
            } else {
                &self.bneck_of[r as usize]
            };
            for &f in flows {
                if self.flow_mark[f as usize] != epoch {
                    self.flow_mark[f as usize] = epoch;
                    self.s_list.push(f);
                }
            }
        }
        added.clear();
        self.added = added;
        self.dirty = dirty;
        self.dirty.clear();
        loop {
            self.fill_s(epoch);
            self.grow.clear();
            self.check(epoch);
            if self.grow.is_empty() {
                break;
            }
            let before = self.s_list.len();
            for k in 0..self.grow.len() {
                let f = self.grow[k];
                if self.flow_mark[f as usize] != epoch {
                    self.flow_mark[f as usize] = epoch;
                    self.s_list.push(f);
                }
            }
            if self.s_list.len() == before {
                break;
            }
        }
        for k in 0..self.s_list.len() {
            let f = self.s_list[k];
            self.set_bneck(f, self.new_bneck[f as usize]);
            let r = self.new_rate[f as usize];
            let old = self.rate[f as usize];
            if r != old && !(r.is_nan() && old.is_nan()) {
                self.move_load(f, committed(old), committed(r));
                self.rate[f as usize] = r;
                self.changed.push(f);
            }
        }
        self.stats.flows_changed += self.changed.len() as u64;
        &self.changed
    }

    /// Step 2: progressive filling of `S` on the residual capacities of `R`.
    #[inline(never)]
    fn fill_s(&mut self, epoch: u64) {
        self.stats.passes += 1;
        self.stats.flows_filled += self.s_list.len() as u64;
        // R and its residual capacities. `res_slot` uses its own epoch
        // space: a fresh one per pass.
        // Residual = capacity - load of the flows outside S = capacity -
        // load + committed rates of the flows of S (no scan of the
        // resources' flows).
        let repoch = self.next_epoch();
        self.r_list.clear();
        self.local.clear();
        // Disjoint borrows of the fields the loop reads and writes (keeps
        // them in registers instead of reloading them through `self`).
        let (flows, rate, cap, load) = (&self.flows, &self.rate, &self.cap, &self.load);
        let (res_slot, r_list, local) = (&mut self.res_slot, &mut self.r_list, &mut self.local);
        let (frozen, new_rate, new_bneck) =
            (&mut self.frozen, &mut self.new_rate, &mut self.new_bneck);
        for &f in &self.s_list {
            frozen[f as usize] = false;
            new_rate[f as usize] = f64::INFINITY;
            new_bneck[f as usize] = u32::MAX;
            let x = committed(rate[f as usize]);
            for &r in &flows[f as usize].res {
                let slot = &mut res_slot[r as usize];
                let k = if slot.mark != repoch {
                    let k = r_list.len();
                    *slot = ResSlot {
                        mark: repoch,
                        local: k as u32,
                    };
                    r_list.push(r);
                    let c = cap[r as usize];
                    local.push(Local {
                        residual: if c.is_finite() {
                            load[r as usize].subtract_from(c)
                        } else {
                            c
                        },
                        max_in_s: 0.0,
                        max_outside: f64::NAN,
                        count: 0,
                        touched: false,
                    });
                    k
                } else {
                    slot.local as usize
                };
                let l = &mut local[k];
                l.residual += x;
                l.count += 1;
            }
        }
        for l in &mut self.local {
            l.residual = l.residual.max(0.0);
        }
        if self.local.len() <= self.linear_scan_max.unwrap_or(LINEAR_SCAN_MAX) {
            // Few resources: find the smallest share by a scan (cheaper
            // than keeping a heap; the same order: smallest share, then
            // smallest index).
            loop {
                let mut best: Option<(f64, u32)> = None;
                for (k, l) in self.local.iter().enumerate() {
                    if l.count > 0 && l.residual.is_finite() {
                        let share = l.share();
                        if best.is_none_or(|(b, _)| share < b) {
                            best = Some((share, k as u32));
                        }
                    }
                }
                let Some((share, k)) = best else { break };
                self.freeze_at(k, share, epoch, false);
            }
            return;
        }
        self.heap.reset(self.local.len());
        for (k, l) in self.local.iter().enumerate() {
            if l.count > 0 && l.residual.is_finite() {
                self.heap.push_unordered(k as u32, l.share());
            }
        }
        self.heap.heapify();
        // Resources whose share changed while freezing the flows of one
        // bottleneck: re-keyed once, after that bottleneck's flows (the pop
        // order is a total order on (share, index), so deferring the
        // re-keying does not change it).
        while let Some((k, share)) = self.heap.pop() {
            self.freeze_at(k, share, epoch, true);
            for &k2 in &self.touched {
                let l = &mut self.local[k2 as usize];
                l.touched = false;
                if l.count > 0 {
                    if l.residual.is_finite() {
                        self.heap.set(k2, l.share());
                    }
                } else {
                    self.heap.remove(k2);
                }
            }
        }
    }

    /// Freezes the unfrozen flows of S on the local resource `k` (the
    /// bottleneck) at `share` bit/s and records the largest rate outside S
    /// there; with `track`, lists in `self.touched` the other local
    /// resources whose share changed.
    fn freeze_at(&mut self, k: u32, share: f64, epoch: u64, track: bool) {
        let r = self.r_list[k as usize];
        let (on, flow_mark, rate, flows) = (&self.on, &self.flow_mark, &self.rate, &self.flows);
        let (frozen, new_rate, new_bneck) =
            (&mut self.frozen, &mut self.new_rate, &mut self.new_bneck);
        let (res_slot, local, touched) = (&self.res_slot, &mut self.local, &mut self.touched);
        touched.clear();
        let mut outside = 0.0f64;
        for &f in &on[r as usize] {
            if flow_mark[f as usize] != epoch {
                outside = outside.max(rate[f as usize]);
                continue;
            }
            if frozen[f as usize] {
                continue;
            }
            frozen[f as usize] = true;
            new_rate[f as usize] = share;
            new_bneck[f as usize] = r;
            for &r2 in &flows[f as usize].res {
                let k2 = res_slot[r2 as usize].local;
                let l = &mut local[k2 as usize];
                l.residual = (l.residual - share).max(0.0);
                l.count -= 1;
                l.max_in_s = l.max_in_s.max(share);
                if track && k2 != k && !l.touched {
                    l.touched = true;
                    touched.push(k2);
                }
            }
        }
        self.local[k as usize].max_outside = outside;
    }

    /// The fast test of step 3, from what the last fill recorded: is the
    /// resource `b` of `R`, the recorded bottleneck of a flow at rate `x`
    /// (of S when `in_s`), still one, i.e. saturated with no larger rate?
    /// Saturated: its residual after the fill is at most `TOL * cap`. The
    /// largest rate: for a flow of S, `b` is where it froze, and the fill
    /// recorded the largest rates inside and outside S there; for a flow
    /// outside S, the rates outside S on `b` did not change and were at
    /// most `x` (up to `TOL`) when `b` was last confirmed, so only those of
    /// S are new. `false` sends the flow to the full test.
    fn still_bottleneck(&self, b: u32, x: f64, in_s: bool) -> bool {
        let cap = self.cap[b as usize];
        if !cap.is_finite() {
            return false;
        }
        let l = &self.local[self.res_slot[b as usize].local as usize];
        let mut max = l.max_in_s;
        if in_s {
            let outside = l.max_outside;
            if outside.is_nan() {
                return false; // not a bottleneck of this fill
            }
            max = max.max(outside);
        }
        l.residual <= cap * TOL && x >= max * (1.0 - TOL)
    }

    /// Step 3: bottleneck check on the flows of `S` and the flows outside
    /// `S` whose bottleneck is in `R`; flows to add to `S` go to
    /// `self.grow`.
    #[inline(never)]
    fn check(&mut self, epoch: u64) {
        let cepoch = self.next_epoch();
        // `new_rate` holds the rate of every flow during an update (the
        // committed one outside `S`).
        let rate_of = |s: &Self, g: u32| s.new_rate[g as usize];
        // Load and largest rate of a resource, cached per check.
        fn stats_of(s: &mut MaxMin, r: u32, cepoch: u64) {
            if s.check_epoch[r as usize] == cepoch {
                return;
            }
            let (mut load, mut max) = (0.0f64, 0.0f64);
            for &g in &s.on[r as usize] {
                let x = s.new_rate[g as usize];
                load += x;
                max = max.max(x);
            }
            s.check_epoch[r as usize] = cepoch;
            s.check_load[r as usize] = load;
            s.check_max[r as usize] = max;
        }
        // The flows to check: those of S, and those outside S whose
        // recorded bottleneck is in R. An outside flow whose bottleneck is
        // outside R keeps it: neither its load nor its flows' rates changed.
        // (Every other live flow outside S has an infinite rate: a flow
        // with a finite one froze at, and recorded, a bottleneck.)
        let mut candidates = std::mem::take(&mut self.candidates);
        candidates.clear();
        candidates.extend_from_slice(&self.s_list);
        for &r in &self.r_list {
            for &g in &self.bneck_of[r as usize] {
                if self.flow_mark[g as usize] != epoch {
                    candidates.push(g);
                }
            }
        }
        for &g in &candidates {
            let x = rate_of(self, g);
            if x.is_infinite() {
                continue; // only infinite resources: nothing to check
            }
            let in_s = self.flow_mark[g as usize] == epoch;
            let b = if in_s {
                self.new_bneck[g as usize]
            } else {
                self.bneck[g as usize]
            };
            // Every candidate's recorded bottleneck is in R (a flow of S
            // froze at one; the others were picked by it).
            if b != u32::MAX && self.still_bottleneck(b, x, in_s) {
                continue;
            }
            // A flow of S froze at `b`, saturated for S: it lost the
            // bottleneck only to larger rates outside S on `b`. Those
            // join S (the next fill can lower them).
            if in_s && b != u32::MAX {
                let before = self.grow.len();
                for &h in &self.on[b as usize] {
                    if self.flow_mark[h as usize] != epoch && self.rate[h as usize] > x {
                        self.grow.push(h);
                    }
                }
                if self.grow.len() > before {
                    continue;
                }
            }
            let mut found = u32::MAX;
            let len = self.flows[g as usize].res.len();
            // The recorded bottleneck first, then every resource.
            for k in 0..=len {
                let r2 = if k == 0 {
                    b
                } else {
                    self.flows[g as usize].res[k - 1]
                };
                if r2 == u32::MAX || (k > 0 && r2 == b) {
                    continue;
                }
                let cap = self.cap[r2 as usize];
                if !cap.is_finite() {
                    continue;
                }
                stats_of(self, r2, cepoch);
                let load = self.check_load[r2 as usize];
                let max = self.check_max[r2 as usize];
                if load >= cap * (1.0 - TOL) && x >= max * (1.0 - TOL) {
                    found = r2;
                    break;
                }
            }
            if found != u32::MAX {
                if in_s {
                    self.new_bneck[g as usize] = found;
                } else {
                    self.set_bneck(g, found);
                }
                continue;
            }
            if self.flow_mark[g as usize] != epoch {
                self.grow.push(g);
            } else {
                for k in 0..self.flows[g as usize].res.len() {
                    let r2 = self.flows[g as usize].res[k];
                    for &h in &self.on[r2 as usize] {
                        if self.flow_mark[h as usize] != epoch && self.rate[h as usize] > x {
                            self.grow.push(h);
                        }
                    }
                }
            }
        }
        self.candidates = candidates;
    }
}

/// A resource's mark and local index in a fill.
#[derive(Debug, Clone, Copy, Default)]
struct ResSlot {
    /// Epoch of the fill that last listed the resource in R.
    mark: u64,
    /// Its index in `r_list` / `local` during that fill.
    local: u32,
}

/// A resource of R in a fill.
#[derive(Debug, Clone, Copy)]
struct Local {
    /// Capacity left for the unfrozen flows of S, bit/s (`>= 0`).
    residual: f64,
    /// Largest rate of a frozen flow of S on it, bit/s.
    max_in_s: f64,
    /// Largest rate of the flows outside S on it, bit/s, recorded when it
    /// was a bottleneck (NaN otherwise).
    max_outside: f64,
    /// Unfrozen flows of S on it.
    count: u32,
    /// Re-key pending after the current bottleneck.
    touched: bool,
}

impl Local {
    /// The fair share of the unfrozen flows, bit/s.
    fn share(&self) -> f64 {
        self.residual / f64::from(self.count)
    }
}

/// A committed rate as it counts in a load, bit/s: 0 for a flow not yet
/// allocated (NaN) or removed.
fn committed(rate: f64) -> f64 {
    if rate.is_nan() {
        0.0
    } else {
        rate
    }
}

/// A running sum of finite `f64`s as an unevaluated pair `hi + lo`: every
/// addition is Knuth's error-free TwoSum, its rounding error goes to `lo`.
/// After `k` additions of terms up to `X` the error is about `k * eps^2 * X`
/// (`eps` = 2^-53), so millions of additions and removals of flow rates
/// leave no drift a max-min allocation could see (a fresh naive sum over
/// the resource's flows errs by up to `n * eps * X`).
#[derive(Debug, Clone, Copy, Default)]
struct RunningSum {
    hi: f64,
    lo: f64,
}

impl RunningSum {
    fn add(&mut self, x: f64) {
        let s = self.hi + x;
        let bp = s - self.hi;
        let err = (self.hi - (s - bp)) + (x - bp);
        self.hi = s;
        self.lo += err;
    }

    /// `c - (hi + lo)`.
    fn subtract_from(&self, c: f64) -> f64 {
        (c - self.hi) - self.lo
    }
}

/// Indexed binary min-heap over keys `0..n` with `f64` priorities
/// (ties: smaller key first): set (insert or change), remove and pop in
/// `O(log n)`, positions kept in an array.
#[derive(Debug, Default)]
struct IndexedHeap {
    /// Heap of (priority, key).
    heap: Vec<(f64, u32)>,
    /// Position of each key in `heap`, `u32::MAX` when absent.
    pos: Vec<u32>,
}

impl IndexedHeap {
    fn reset(&mut self, n: usize) {
        self.heap.clear();
        self.pos.clear();
        self.pos.resize(n, u32::MAX);
    }

    /// Appends `key` (absent) without restoring the heap order; call
    /// [`IndexedHeap::heapify`] before any other operation.
    fn push_unordered(&mut self, key: u32, prio: f64) {
        self.pos[key as usize] = self.heap.len() as u32;
        self.heap.push((prio, key));
    }

    /// Restores the heap order after [`IndexedHeap::push_unordered`], in
    /// `O(n)`.
    fn heapify(&mut self) {
        for i in (0..self.heap.len() / 2).rev() {
            self.down(i);
        }
    }

    fn less(a: (f64, u32), b: (f64, u32)) -> bool {
        a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).is_lt()
    }

    fn set(&mut self, key: u32, prio: f64) {
        let p = self.pos[key as usize];
        if p == u32::MAX {
            self.heap.push((prio, key));
            let i = self.heap.len() - 1;
            self.pos[key as usize] = i as u32;
            self.up(i);
        } else {
            let i = p as usize;
            let old = self.heap[i].0;
            self.heap[i].0 = prio;
            if prio < old {
                self.up(i);
            } else {
                self.down(i);
            }
        }
    }

    fn remove(&mut self, key: u32) {
        let p = self.pos[key as usize];
        if p == u32::MAX {
            return;
        }
        let i = p as usize;
        let last = self.heap.len() - 1;
        self.swap(i, last);
        self.heap.pop();
        self.pos[key as usize] = u32::MAX;
        if i < self.heap.len() {
            self.up(i);
            self.down(i);
        }
    }

    fn pop(&mut self) -> Option<(u32, f64)> {
        let &(prio, key) = self.heap.first()?;
        self.remove(key);
        Some((key, prio))
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        self.pos[self.heap[i].1 as usize] = i as u32;
        self.pos[self.heap[j].1 as usize] = j as u32;
    }

    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if Self::less(self.heap[i], self.heap[parent]) {
                self.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < n && Self::less(self.heap[l], self.heap[m]) {
                m = l;
            }
            if r < n && Self::less(self.heap[r], self.heap[m]) {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }
}

/// Max-min fair rates (bit/s) of `flows` over `resources` by progressive
/// filling from scratch (the reference the incremental [`MaxMin`] is
/// tested against); `on(r)` lists the flows on resource `r` (all in
/// `flows`), `uses(f)` the resources of flow `f` (all in `resources`).
/// Flows that only cross infinite-capacity resources get an infinite rate.
/// Simple `O(R)` scan per bottleneck level.
pub fn progressive_filling<'s>(
    resources: &[u32],
    flows: &[u32],
    capacity: impl Fn(u32) -> f64,
    on: impl Fn(u32) -> &'s [u32],
    uses: impl Fn(u32) -> &'s [u32],
) -> Vec<f64> {
    let pos_r: HashMap<u32, usize> = resources.iter().enumerate().map(|(k, &r)| (r, k)).collect();
    let pos_f: HashMap<u32, usize> = flows.iter().enumerate().map(|(k, &f)| (f, k)).collect();
    let mut rem: Vec<f64> = resources.iter().map(|&r| capacity(r)).collect();
    let mut cnt: Vec<usize> = resources.iter().map(|&r| on(r).len()).collect();
    let mut rate = vec![f64::INFINITY; flows.len()];
    let mut frozen = vec![false; flows.len()];
    loop {
        // The resource with the smallest fair share (ties: lowest position).
        let mut best: Option<(f64, usize)> = None;
        for k in 0..resources.len() {
            if cnt[k] > 0 && rem[k].is_finite() {
                let s = rem[k].max(0.0) / cnt[k] as f64;
                if best.is_none_or(|(b, _)| s < b) {
                    best = Some((s, k));
                }
            }
        }
        let Some((share, k)) = best else { break };
        for &f in on(resources[k]) {
            let fk = pos_f[&f];
            if frozen[fk] {
                continue;
            }
            frozen[fk] = true;
            rate[fk] = share;
            for &r2 in uses(f) {
                let k2 = pos_r[&r2];
                rem[k2] -= share;
                cnt[k2] -= 1;
            }
        }
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// From-scratch rates of every live flow of `m`.
    fn reference(m: &MaxMin) -> Vec<(u32, f64)> {
        let flows: Vec<u32> = (0..m.flows.len() as u32)
            .filter(|&f| m.is_live(f))
            .collect();
        let resources: Vec<u32> = (0..m.resource_count() as u32).collect();
        let rates = progressive_filling(
            &resources,
            &flows,
            |r| m.capacity(r),
            |r| m.flows_on(r),
            |f| m.resources(f),
        );
        flows.into_iter().zip(rates).collect()
    }

    fn assert_matches(m: &MaxMin) {
        for (f, want) in reference(m) {
            let got = m.rate(f);
            if want.is_infinite() {
                assert!(got.is_infinite(), "flow {f}: {got} vs inf");
            } else {
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "flow {f} on {:?}: incremental {got} vs scratch {want}",
                    m.resources(f)
                );
            }
        }
    }

    #[test]
    fn classic_example_incremental() {
        // Bertsekas & Gallager: r0 (cap 1) carries flows 0,1,2; r1 (cap 1)
        // flows 2,3; r2 (cap 2) flow 3. Max-min: 1/3, 1/3, 1/3, 2/3.
        let mut m = MaxMin::new();
        for c in [1.0, 1.0, 2.0] {
            m.add_resource(c);
        }
        let f: Vec<u32> = [&[0][..], &[0], &[0, 1], &[1, 2]]
            .iter()
            .map(|r| m.add(r))
            .collect();
        let changed = m.update().len();
        assert_eq!(changed, 4);
        let want = [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0];
        for (&f, w) in f.iter().zip(want) {
            assert!((m.rate(f) - w).abs() < 1e-12);
        }
        // Flow 0 leaves: 1 and 2 get 1/2 on r0, flow 3 gets 1/2 on r1.
        m.remove(f[0]);
        m.update();
        for (&f, w) in f[1..].iter().zip([0.5, 0.5, 0.5]) {
            assert!((m.rate(f) - w).abs() < 1e-12, "{}", m.rate(f));
        }
        // Nothing changed: no flow reported.
        assert!(m.update().is_empty());
    }

    /// Random resources and random add/remove sequences; after every batch
    /// the incremental allocation equals progressive filling from scratch.
    fn random_run(seed: u64) {
        random_run_with(seed, None);
    }

    /// [`random_run`] with the given scan threshold; returns every rate
    /// after every batch.
    fn random_run_with(seed: u64, linear_scan_max: Option<usize>) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut m = MaxMin::new();
        if let Some(max) = linear_scan_max {
            m.set_linear_scan_max(max);
        }
        let mut seen = Vec::new();
        let nr = rng.gen_range(1..25);
        for _ in 0..nr {
            let c = match rng.gen_range(0..10) {
                0 => f64::INFINITY,
                1 => 0.0,
                // Few distinct values: many ties between fair shares.
                2..=4 => [1.0, 2.0, 3.0][rng.gen_range(0..3)],
                _ => rng.gen_range(0.1..10.0),
            };
            m.add_resource(c);
        }
        let mut live: Vec<u32> = Vec::new();
        for _ in 0..rng.gen_range(1..40) {
            for _ in 0..rng.gen_range(1..5) {
                if !live.is_empty() && rng.gen_bool(0.4) {
                    let k = rng.gen_range(0..live.len());
                    m.remove(live.swap_remove(k));
                } else {
                    let len = rng.gen_range(1..=nr.min(5));
                    let mut res: Vec<u32> = (0..nr as u32).collect();
                    for i in 0..len {
                        let j = rng.gen_range(i..res.len());
                        res.swap(i, j);
                    }
                    res.truncate(len);
                    live.push(m.add(&res));
                }
            }
            m.update();
            assert_matches(&m);
            seen.extend(live.iter().map(|&f| m.rate(f)));
        }
        seen
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn incremental_equals_scratch(seed in any::<u64>()) {
            random_run(seed);
        }

        /// The heap path (every R) gives the scan path's rates bit for bit,
        /// and both equal progressive filling from scratch.
        #[test]
        fn heap_fill_equals_scan_fill(seed in any::<u64>()) {
            let scan = random_run_with(seed, Some(usize::MAX));
            let heap = random_run_with(seed, Some(0));
            prop_assert_eq!(
                scan.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                heap.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn running_sum_keeps_what_a_float_sum_loses() {
        // A naive f64 sum of 1e16 + 1 - 1e16 is 0 (1 is lost); the pair
        // keeps it. Then a million random rates added and removed again
        // leave exactly the remainder.
        let mut s = RunningSum::default();
        s.add(1e16);
        s.add(1.0);
        s.add(-1e16);
        assert_eq!(s.subtract_from(0.0), -1.0);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let xs: Vec<f64> = (0..1_000_000).map(|_| rng.gen_range(0.0..1e10)).collect();
        for &x in &xs {
            s.add(x);
        }
        for &x in xs.iter().rev() {
            s.add(-x);
        }
        assert_eq!(s.subtract_from(0.0), -1.0);
    }

    #[test]
    fn loads_follow_rates_through_long_churn() {
        // After thousands of updates the running load of every resource
        // equals a fresh sum of its flows' rates (to float rounding).
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let mut m = MaxMin::new();
        for _ in 0..6 {
            m.add_resource(rng.gen_range(1e8..1e10));
        }
        let mut live: Vec<u32> = Vec::new();
        for _ in 0..5000 {
            if live.len() > 8 || (!live.is_empty() && rng.gen_bool(0.5)) {
                let k = rng.gen_range(0..live.len());
                m.remove(live.swap_remove(k));
            } else {
                let a = rng.gen_range(0..6u32);
                let b = (a + rng.gen_range(1..6)) % 6;
                live.push(m.add(&[a, b]));
            }
            m.update();
            for r in 0..6u32 {
                let fresh: f64 = m.flows_on(r).iter().map(|&f| m.rate(f)).sum();
                let kept = -m.load[r as usize].subtract_from(0.0);
                assert!(
                    (kept - fresh).abs() <= 1e-12 * m.capacity(r),
                    "resource {r}: running {kept} vs fresh {fresh}"
                );
            }
        }
    }

    #[test]
    fn indexed_heap_orders_and_updates() {
        let mut h = IndexedHeap::default();
        h.reset(5);
        for (k, p) in [(0, 5.0), (1, 3.0), (2, 4.0), (3, 1.0), (4, 2.0)] {
            h.set(k, p);
        }
        h.set(3, 6.0); // increase
        h.set(2, 0.5); // decrease
        h.remove(4);
        let order: Vec<u32> = std::iter::from_fn(|| h.pop().map(|x| x.0)).collect();
        assert_eq!(order, vec![2, 1, 0, 3]);
    }
}
