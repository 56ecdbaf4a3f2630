//! Incremental max-min fair rate allocation (the core of
//! [`super::flow::FlowNetwork`]), kept per **rate class**.
//!
//! Flows cross resources of fixed capacity (bit/s). The max-min fair
//! allocation is the unique feasible allocation in which **every flow has a
//! bottleneck**: a saturated resource on which no other flow has a larger
//! rate (\[BG92\] Sec. 6.5.2). From scratch it is computed by progressive
//! filling ([`progressive_filling`]).
//!
//! ## Rate classes
//!
//! Flows that froze at the same bottleneck in the same fill have the same
//! rate, bit for bit; they form a **class** that has one rate, one recorded
//! bottleneck and a **footprint**: every finite resource one of its flows
//! crosses, with the number of its flows that cross it (the multiplicity).
//! Every resource lists the classes that cross it. The load of a resource
//! is then `sum over crossing classes of multiplicity x class rate`, and a
//! fill re-allocates whole classes: freezing a class costs its footprint,
//! not `flows x route length`. On the long shared routes of a plain ring
//! over a random geometric underlay, the footprint of a class is about a
//! tenth of the summed routes of its flows (`experiments/scaling`,
//! 1,000 silos), and an update changes the rate of about three classes.
//!
//! A new flow starts as a class of its own. A fill that freezes only some
//! flows of a class at a resource (the others do not cross it) **splits**
//! the class; classes that froze at the same resource in the same fill are
//! **merged** after it. Flows are moved one at a time (their routes walked
//! once), which is rare: the bottleneck structure changes little between
//! updates. Every such move is logged in [`Changes`], so that a caller that
//! keeps per-class state (the per-class clocks of
//! [`super::flow::FlowNetwork`]) can follow.
//!
//! ## The incremental update
//!
//! [`MaxMin::update`] recomputes the allocation after flows were added or
//! removed:
//!
//! 1. `S` = the new flows' classes and the classes whose recorded
//!    bottleneck is a resource the changes touched (only those can lose it:
//!    every other class's bottleneck kept its load and its rates); `R` = the
//!    union of the footprints of `S`.
//! 2. Progressive filling of `S` alone, with every resource of `R` reduced
//!    by the (unchanged) load of the classes outside `S`.
//! 3. Check the bottleneck condition for the classes of `S` and for the
//!    classes outside `S` whose bottleneck is in `R` (the only ones whose
//!    bottleneck's load or rates changed). A class of `S` froze at a
//!    resource it saturates with the largest rate of `S`: it lost the
//!    bottleneck only to larger rates outside `S` there, whose classes join
//!    `S`; a class outside `S` that lost its bottleneck joins `S`. Repeat
//!    from 2 until the check passes (then the allocation is max-min fair by
//!    the characterisation above) or `S` stops growing (`S` is then a union
//!    of components, where step 2 is exact progressive filling).
//!
//! Step 2 finds each bottleneck (smallest fair share `residual / unfrozen
//! flows`, ties to the resource listed first) by a scan of `R` when `R` has
//! at most [`LINEAR_SCAN_MAX`] resources (a minimum over 8 lanes, then the
//! first index holding it), and otherwise keeps the shares in an indexed
//! binary min-heap; both give the same order, so the same rates bit for bit
//! (test). A fill ends when every class of `S` froze. Between the passes of
//! one update `R` only grows: the footprints of the classes that joined `S`
//! are appended (in the order a rebuild from all of `S` would list them)
//! and the resources they cross are re-initialised; every other resource of
//! `R` keeps its initial residual, count and largest rate outside `S`, which
//! depend only on which of its crossing classes are in `S` and on committed
//! rates (unchanged until the update commits). Loads are summed afresh
//! from the crossing classes when needed (a handful of terms), so no
//! running sum can drift. All scratch space is reused between updates.
//!
//! ## Resumed passes
//!
//! A pass after `S` grew does not restart the fill: a fill from scratch of
//! the grown `S` repeats the previous pass's bottleneck levels as long as
//! no class that joined crosses a level's bottleneck and every resource
//! they cross still has a larger share (or an equal one listed later) at
//! that level; the classes that join have larger committed rates than the
//! level they were found at, so this is the usual case (about 86% of the
//! passes that grow `S` on `experiments/scaling`'s 1,000-silo `--degree 4`
//! flow replay). The pass then keeps the levels and the frozen flows, and
//! brings only the re-initialised resources through the levels by
//! replaying the fill's log of lowerings in order, with the same
//! arithmetic: the state is the one a restart would reach, bit for bit
//! (test); otherwise the pass restarts.
//!
//! ## Collapsed `R`
//!
//! Of the resources only one class crosses (on a plain ring over a random
//! geometric underlay, about 70% of `R`: the access links and the core
//! links of one class's flows alone), `R` lists only the first of smallest
//! fair share `capacity / multiplicity` (the class's **core**, kept with
//! the class and rebuilt when its footprint, a capacity or which of its
//! resources another class crosses changes). While the class does not
//! split, the shares of the others stay at least that one's, and they come
//! later in `R`, so no fill step changes; when a class would split in a
//! fill (some of its flows freeze at a resource the others do not cross),
//! the update's fills restart with every resource listed. The rates and
//! recorded bottlenecks are those of the uncollapsed fill, bit for bit
//! (test).

use std::collections::HashMap;

use crate::units::BitsPerSec;

/// Relative tolerance of the bottleneck check.
const TOL: f64 = 1e-9;

/// No class / no bottleneck.
const NONE: u32 = u32::MAX;

/// Up to this many resources in `R`, a fill finds each bottleneck by a scan
/// of `R` instead of an indexed heap (a scan costs `|R|` per bottleneck, a
/// heap re-key `log |R|` per touched resource; fills have few bottleneck
/// levels, so the scan wins far beyond small `R`).
pub const LINEAR_SCAN_MAX: usize = 4096;

#[derive(Debug, Clone, Default)]
struct FlowState {
    /// Resources crossed.
    res: Vec<u32>,
    /// The finite-capacity ones (the others never bind).
    fin: Vec<u32>,
    /// Its class (`NONE`: it crosses no finite resource, infinite rate).
    class: u32,
    /// Position in its class's member list.
    pos: u32,
    live: bool,
    // Fill scratch, meaningful while its class is partly frozen.
    frozen: bool,
    new_rate: f64,
    new_bneck: u32,
}

/// A rate class: flows with one rate and one recorded bottleneck.
#[derive(Debug, Clone, Default)]
struct Class {
    members: Vec<u32>,
    /// Every finite resource a member crosses, with the number of members
    /// that cross it.
    fp: Vec<(u32, u32)>,
    /// For every footprint entry (same index): no other class crosses the
    /// resource (kept up to date by attach and detach, so that building
    /// the core reads only the class's own arrays).
    lone: Vec<bool>,
    /// For every footprint entry (same index): its fair share while only
    /// this class's flows load it, `capacity / multiplicity` bit/s
    /// ([`solo_share`]; kept by attach, detach and capacity changes, so
    /// that building the core divides nothing).
    fp_share: Vec<f64>,
    /// The footprint entries a collapsed R lists, in footprint order: the
    /// resources other classes cross too and, of those only this class
    /// crosses, the first of smallest fair share `capacity /
    /// multiplicity` (valid while `core_ok`).
    core: Vec<(u32, u32)>,
    /// `core` is up to date: cleared when the footprint, a multiplicity,
    /// which of its resources other classes cross or a capacity changes.
    core_ok: bool,
    /// Committed rate, bit/s (NaN until the first update).
    rate: f64,
    /// Recorded bottleneck (`NONE` until the first update).
    bneck: u32,
    /// Position in `bneck_of[bneck]`.
    bneck_pos: u32,
    live: bool,
    // Update scratch.
    /// Every flow frozen (in this fill).
    frozen: bool,
    /// Some flows froze at a resource the others do not cross: the flows
    /// are frozen one by one in this fill (their own scratch fields), and
    /// the class is split after the last fill.
    partial: bool,
    /// Flows not yet frozen, while partial.
    unfrozen: u32,
    new_rate: f64,
    new_bneck: u32,
    /// Its footprint entries in R (those of `core` when collapsing) as
    /// local indices with multiplicities: `MaxMin::in_r[in_r_start..in_r_end]`.
    in_r_start: u32,
    in_r_end: u32,
}

/// What the walks over crossing classes read of a class, kept apart from
/// [`Class`] in a dense array (a fill reads it for every class crossing
/// every resource of R).
#[derive(Debug, Clone, Copy, Default)]
struct Hot {
    /// Epoch of the update whose `S` holds the class.
    mark: u64,
    /// Committed rate as it counts in a load, bit/s: 0 until the first
    /// update ([`committed`]).
    rate: f64,
}

/// A class crossing a resource: the class, the index of the resource in
/// the class's footprint and the multiplicity (also in the footprint).
#[derive(Debug, Clone, Copy)]
struct Cross {
    class: u32,
    fp: u32,
    mult: u32,
}

/// The classes crossing one resource, stored inline up to
/// [`CrossList::INLINE`] of them (the usual case: a fill reads the list of
/// every resource of R, and one cache line per resource holds it), in a
/// vector beyond. Dereferences to the slice of its entries.
#[derive(Debug, Clone)]
#[repr(align(64))]
struct CrossList {
    /// Every entry while more than `INLINE` (then `inline` is unused).
    spill: Vec<Cross>,
    len: u32,
    inline: [Cross; CrossList::INLINE],
}

impl CrossList {
    const INLINE: usize = 3;
    const EMPTY_ENTRY: Cross = Cross {
        class: 0,
        fp: 0,
        mult: 0,
    };

    fn new() -> Self {
        CrossList {
            spill: Vec::new(),
            len: 0,
            inline: [Self::EMPTY_ENTRY; Self::INLINE],
        }
    }

    fn push(&mut self, x: Cross) {
        let n = self.len as usize;
        if n < Self::INLINE {
            self.inline[n] = x;
        } else {
            if n == Self::INLINE {
                self.spill.clear();
                self.spill.extend_from_slice(&self.inline);
            }
            self.spill.push(x);
        }
        self.len += 1;
    }

    /// Removes entry `i`, the last one taking its place.
    fn swap_remove(&mut self, i: usize) {
        let n = self.len as usize;
        if n <= Self::INLINE {
            self.inline[i] = self.inline[n - 1];
        } else {
            self.spill.swap_remove(i);
            if n - 1 == Self::INLINE {
                self.inline.copy_from_slice(&self.spill);
            }
        }
        self.len -= 1;
    }
}

impl std::ops::Deref for CrossList {
    type Target = [Cross];
    fn deref(&self) -> &[Cross] {
        let n = self.len as usize;
        if n <= Self::INLINE {
            &self.inline[..n]
        } else {
            &self.spill
        }
    }
}

impl<'a> IntoIterator for &'a CrossList {
    type Item = &'a Cross;
    type IntoIter = std::slice::Iter<'a, Cross>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::ops::DerefMut for CrossList {
    fn deref_mut(&mut self) -> &mut [Cross] {
        let n = self.len as usize;
        if n <= Self::INLINE {
            &mut self.inline[..n]
        } else {
            &mut self.spill
        }
    }
}

/// What an update changed in the class structure (cleared at the start of
/// every [`MaxMin::update`]; the classes of new flows are created by
/// [`MaxMin::add`], not listed here).
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// Classes created by splits, in creation order.
    pub created: Vec<u32>,
    /// Flows moved `(flow, from class, to class)`, in order (a flow may
    /// move more than once; a new class's flows arrive by moves).
    pub moved: Vec<(u32, u32, u32)>,
    /// Classes that lost every flow to merges (their ids are not reused
    /// before the next update).
    pub freed: Vec<u32>,
    /// Live classes whose rate changed (created ones included).
    pub rated: Vec<u32>,
}

/// Counters of the incremental allocation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MaxMinStats {
    /// Calls to [`MaxMin::update`] that had changes to process.
    pub updates: u64,
    /// Progressive-filling passes (more than one when `S` had to grow).
    pub passes: u64,
    /// Flows re-allocated (members of the classes of `S`), summed over passes.
    pub flows_filled: u64,
    /// Classes re-allocated, summed over passes.
    pub classes_filled: u64,
    /// Flows whose rate changed, summed over updates.
    pub flows_changed: u64,
    /// Classes whose rate changed, summed over updates.
    pub classes_changed: u64,
    /// Flows moved between classes (splits and merges).
    pub flows_moved: u64,
    /// Passes that resumed the previous pass's fill (its bottleneck levels
    /// kept) instead of restarting it.
    pub resumes: u64,
    /// Updates whose fills restarted without collapsing the resources
    /// only one class crosses (a class split).
    pub collapse_restarts: u64,
}

/// Max-min fair rates of a changing set of flows over fixed resources.
#[derive(Debug, Default)]
pub struct MaxMin {
    cap: Vec<BitsPerSec>,
    flows: Vec<FlowState>,
    free: Vec<u32>,
    classes: Vec<Class>,
    /// Mark and committed rate of every class (by class id).
    hot: Vec<Hot>,
    class_free: Vec<u32>,
    /// Classes freed since the last update (reusable after it).
    class_freed: Vec<u32>,
    /// Classes crossing every resource.
    cross: Vec<CrossList>,
    /// Footprint entries of other classes whose resource an attach or
    /// detach made shared or lone: (class, footprint index, lone).
    core_stale: Vec<(u32, u32, bool)>,
    /// Classes whose recorded bottleneck is every resource.
    bneck_of: Vec<Vec<u32>>,
    /// `bneck_of[r]` is not empty (a dense array the check reads for every
    /// resource of R).
    has_bneck: Vec<bool>,
    /// Resources touched since the last update.
    dirty: Vec<u32>,
    /// Flows added since the last update.
    added: Vec<u32>,
    changes: Changes,
    stats: MaxMinStats,
    // Scratch, reused across updates.
    epoch: u64,
    /// Resource -> its mark and local index in `r_list`.
    res_slot: Vec<ResSlot>,
    s_list: Vec<u32>,
    r_list: Vec<u32>,
    local: Vec<Local>,
    /// Fair share of every resource of R, bit/s (infinite once it has no
    /// unfrozen flow): a dense array for the scan.
    shares: Vec<f64>,
    heap: IndexedHeap,
    grow: Vec<u32>,
    /// Classes on the bottleneck being frozen, with their multiplicity.
    freezing: Vec<(u32, u32)>,
    /// Flows of split classes that leave them after the last fill.
    orphans: Vec<u32>,
    /// Classes outside S that found another bottleneck in the check.
    rebneck: Vec<(u32, u32)>,
    /// The `res_slot` epoch of the last fill.
    fill_epoch: u64,
    /// Local resource indices re-keyed after a bottleneck's flows froze.
    touched: Vec<u32>,
    /// Every resource of R as the fills of the current update start it
    /// (before any flow of S froze).
    base: Vec<Local>,
    /// Largest rate of the classes outside S on every resource of R, bit/s
    /// (by local index; it does not change while S is filled).
    max_out: Vec<f64>,
    /// Pass that last (re)initialised each entry of `base`.
    stamp: Vec<u64>,
    /// The footprint entries of the classes of S that R lists, as (local
    /// index, multiplicity), class after class (each class's range is in
    /// its `in_r_start..in_r_end`): freezing a class lowers them without
    /// looking the resources up.
    in_r: Vec<(u32, u32)>,
    /// Local indices (re)initialised in the current pass.
    refresh: Vec<u32>,
    /// Local indices of the resources of R that had a recorded bottleneck
    /// when listed or got one in a check since (the check reads only
    /// these), with a flag per local index.
    bneck_in_r: Vec<u32>,
    bneck_listed: Vec<bool>,
    /// Classes of `s_list` (a prefix) whose footprints are in R.
    s_in_r: usize,
    /// Classes of S not yet frozen in the current fill.
    unfrozen_classes: usize,
    /// The bottlenecks of the current fill so far, in order.
    levels: Vec<Level>,
    /// Every lowering of a resource by the current fill, in order: (local
    /// index, flows frozen on it); level `j`'s start at `levels[j].log_start`.
    lowered: Vec<(u32, u32)>,
    /// Re-fill every live flow, each from a class of its own, at every
    /// update (reference mode).
    full: bool,
    /// Largest R filled by scans instead of the heap (`None`:
    /// [`LINEAR_SCAN_MAX`]).
    linear_scan_max: Option<usize>,
    /// List every resource of the footprints of S in R (no collapsing of
    /// the resources only one class crosses: for cross-checks).
    no_collapse: bool,
    /// Restart every pass instead of resuming the previous one (tests).
    no_resume: bool,
    /// The current update fills without collapsing (a class split).
    update_no_collapse: bool,
    /// A fill met a class that splits while collapsing: the update's fills
    /// restart without collapsing.
    collapse_abort: bool,
}

impl MaxMin {
    /// An allocator with no resources.
    pub fn new() -> Self {
        MaxMin::default()
    }

    /// Reference mode: when `full`, every update dissolves every class into
    /// single flows and re-fills all of them from scratch (for cross-checks).
    pub fn set_full_recompute(&mut self, full: bool) {
        self.full = full;
    }

    /// Fills sets of up to `max` resources by scans and larger ones with
    /// the indexed heap (default [`LINEAR_SCAN_MAX`]; the rates are the
    /// same either way, bit for bit: for tests and benchmarks).
    pub fn set_linear_scan_max(&mut self, max: usize) {
        self.linear_scan_max = Some(max);
    }

    /// When `off`, R lists every resource of the footprints of `S`,
    /// including those only one class crosses, of which only the one with
    /// the smallest fair share is needed while the class does not split
    /// (the rates are the same either way, bit for bit: for tests).
    pub fn set_no_collapse(&mut self, off: bool) {
        self.no_collapse = off;
    }

    /// Adds a resource of capacity `cap` (bit/s, may be infinite); returns its id.
    pub fn add_resource(&mut self, cap: BitsPerSec) -> u32 {
        self.cap.push(cap);
        self.cross.push(CrossList::new());
        self.bneck_of.push(Vec::new());
        self.has_bneck.push(false);
        self.res_slot.push(ResSlot::default());
        (self.cap.len() - 1) as u32
    }

    /// Changes the capacity of resource `r` to `cap` (bit/s, finite when
    /// the old one was, infinite when it was: a flow's finite resources are
    /// fixed when it is added). The incremental update assumes fixed
    /// capacities, so the caller re-fills every flow at the next update
    /// ([`MaxMin::set_full_recompute`] for that update); the rates of the
    /// flows over `r` change then.
    pub fn set_capacity(&mut self, r: u32, cap: BitsPerSec) {
        debug_assert_eq!(cap.is_finite(), self.cap[r as usize].is_finite());
        self.cap[r as usize] = cap;
        self.dirty.push(r);
        for x in &self.cross[r as usize] {
            let class = &mut self.classes[x.class as usize];
            class.core_ok = false;
            class.fp_share[x.fp as usize] = solo_share(cap, x.mult);
        }
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
    /// the next [`MaxMin::update`]. It starts in a new class of its own
    /// ([`MaxMin::class_of`]), or in none when it crosses no finite
    /// resource (infinite rate). Returns its id (ids of removed flows are
    /// reused).
    pub fn add(&mut self, res: &[u32]) -> u32 {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.flows.push(FlowState::default());
                (self.flows.len() - 1) as u32
            }
        };
        let cap = &self.cap;
        let f = &mut self.flows[id as usize];
        f.res.clear();
        f.res.extend_from_slice(res);
        f.fin.clear();
        f.fin
            .extend(res.iter().copied().filter(|&r| cap[r as usize].is_finite()));
        f.class = NONE;
        f.live = true;
        if !f.fin.is_empty() {
            let c = self.new_class();
            self.attach(id, c);
        }
        self.dirty.extend_from_slice(res);
        self.added.push(id);
        id
    }

    /// Removes flow `f` (its resources are re-allocated at the next update).
    pub fn remove(&mut self, f: u32) {
        assert!(self.flows[f as usize].live, "removing a dead flow");
        let c = self.flows[f as usize].class;
        if c != NONE {
            self.detach(f);
            if self.classes[c as usize].members.is_empty() {
                self.free_class(c);
            }
        }
        let state = &mut self.flows[f as usize];
        state.live = false;
        self.dirty.extend_from_slice(&state.res);
        self.free.push(f);
    }

    /// Current rate of flow `f`, bit/s (infinite when it crosses only
    /// infinite-capacity resources, NaN before the update after its
    /// [`MaxMin::add`]).
    pub fn rate(&self, f: u32) -> BitsPerSec {
        match self.flows[f as usize].class {
            NONE => f64::INFINITY,
            c => self.classes[c as usize].rate,
        }
    }

    /// Class of flow `f` (`u32::MAX` for a flow over infinite resources only).
    pub fn class_of(&self, f: u32) -> u32 {
        self.flows[f as usize].class
    }

    /// Rate of class `c`, bit/s.
    pub fn class_rate(&self, c: u32) -> BitsPerSec {
        self.classes[c as usize].rate
    }

    /// True when class id `c` is live.
    pub fn is_class_live(&self, c: u32) -> bool {
        self.classes.get(c as usize).is_some_and(|k| k.live)
    }

    /// Flows of class `c`.
    pub fn class_members(&self, c: u32) -> &[u32] {
        &self.classes[c as usize].members
    }

    /// Resources of flow `f`.
    pub fn resources(&self, f: u32) -> &[u32] {
        &self.flows[f as usize].res
    }

    /// True when flow id `f` is live.
    pub fn is_live(&self, f: u32) -> bool {
        self.flows.get(f as usize).is_some_and(|s| s.live)
    }

    /// Ids of the live flows, ascending.
    pub fn live_flows(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.flows.len() as u32).filter(|&f| self.is_live(f))
    }

    /// What the last update changed.
    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    /// Counters.
    pub fn stats(&self) -> MaxMinStats {
        self.stats
    }

    /// A new empty class (never one freed since the last update).
    fn new_class(&mut self) -> u32 {
        let c = match self.class_free.pop() {
            Some(c) => c,
            None => {
                self.classes.push(Class::default());
                self.hot.push(Hot::default());
                (self.classes.len() - 1) as u32
            }
        };
        self.hot[c as usize] = Hot::default();
        let k = &mut self.classes[c as usize];
        k.members.clear();
        k.fp.clear();
        k.lone.clear();
        k.fp_share.clear();
        k.core_ok = false;
        k.rate = f64::NAN;
        k.bneck = NONE;
        k.live = true;
        k.frozen = false;
        k.partial = false;
        c
    }

    fn free_class(&mut self, c: u32) {
        self.set_bneck(c, NONE);
        let k = &mut self.classes[c as usize];
        debug_assert!(k.members.is_empty() && k.fp.is_empty());
        k.live = false;
        self.class_freed.push(c);
    }

    /// Index in `cross[r]` of class `c` (which crosses `r`).
    fn cross_index(cross: &[Cross], c: u32) -> usize {
        cross
            .iter()
            .position(|x| x.class == c)
            .expect("class crosses the resource")
    }

    /// Puts flow `f` (in no class) into class `c`.
    fn attach(&mut self, f: u32, c: u32) {
        let state = &mut self.flows[f as usize];
        let class = &mut self.classes[c as usize];
        state.class = c;
        state.pos = class.members.len() as u32;
        // A class without flows crosses nothing (a new flow's own class,
        // the usual case): only this walk can have put it in a crossing
        // list, as its last entry (a route listing a resource twice), so
        // no list is searched.
        let fresh = class.members.is_empty();
        class.members.push(f);
        for &r in &state.fin {
            let cross = &mut self.cross[r as usize];
            let found = if fresh {
                cross.last_mut().filter(|x| x.class == c)
            } else {
                cross.iter_mut().find(|x| x.class == c)
            };
            match found {
                Some(x) => {
                    x.mult += 1;
                    class.fp[x.fp as usize].1 += 1;
                    class.fp_share[x.fp as usize] = solo_share(self.cap[r as usize], x.mult);
                }
                None => {
                    cross.push(Cross {
                        class: c,
                        fp: class.fp.len() as u32,
                        mult: 1,
                    });
                    class.fp.push((r, 1));
                    class.lone.push(cross.len() == 1);
                    class.fp_share.push(solo_share(self.cap[r as usize], 1));
                    if cross.len() == 2 {
                        // The resource is no longer the other class's only.
                        self.core_stale.push((cross[0].class, cross[0].fp, false));
                    }
                }
            }
        }
        class.core_ok = false;
        self.stale_cores();
    }

    /// The classes listed in `core_stale` (a resource of theirs gained or
    /// lost its only other class) mark it and rebuild their cores.
    fn stale_cores(&mut self) {
        for (c, j, lone) in self.core_stale.drain(..) {
            let class = &mut self.classes[c as usize];
            class.lone[j as usize] = lone;
            class.core_ok = false;
        }
    }

    /// Brings the core of class `c` up to date.
    fn update_core(&mut self, c: u32) {
        let class = &mut self.classes[c as usize];
        if class.core_ok {
            return;
        }
        // One walk, selects rather than branches (which entries are lone
        // and which share is smallest follow no pattern): every entry is
        // written, the shared ones retained; of the lone ones, the first
        // of smallest share is remembered with its place in the core
        // (infinite shares count: the first lone entry stands when none is
        // finite) and inserted there after.
        let n = class.fp.len();
        if class.core.len() < n {
            class.core.resize(n, (0, 0));
        }
        let (mut best, mut keep, mut keep_at) = (f64::INFINITY, usize::MAX, 0);
        let mut len = 0;
        let entries = class.fp.iter().zip(&class.fp_share).zip(&class.lone);
        for (j, ((&e, &share), &lone)) in entries.enumerate() {
            let take = lone & ((share < best) | (keep == usize::MAX));
            best = if take { share } else { best };
            keep = if take { j } else { keep };
            keep_at = if take { len } else { keep_at };
            class.core[len] = e;
            len += usize::from(!lone);
        }
        class.core.truncate(len);
        if keep != usize::MAX {
            class.core.insert(keep_at, class.fp[keep]);
        }
        class.core_ok = true;
    }

    /// Takes flow `f` out of its class (which may be left empty).
    fn detach(&mut self, f: u32) {
        let state = &mut self.flows[f as usize];
        let c = state.class;
        let class = &mut self.classes[c as usize];
        let p = state.pos as usize;
        class.members.swap_remove(p);
        if let Some(&moved) = class.members.get(p) {
            self.flows[moved as usize].pos = p as u32;
        }
        let state = &mut self.flows[f as usize];
        state.class = NONE;
        if class.members.is_empty() {
            // Its last flow: every footprint entry goes (the class's own
            // arrays are cleared, not kept in order entry by entry). The
            // other classes' crossing lists change as below.
            for &(r, _) in &class.fp {
                let cross = &mut self.cross[r as usize];
                cross.swap_remove(Self::cross_index(cross, c));
                if cross.len() == 1 {
                    self.core_stale.push((cross[0].class, cross[0].fp, true));
                }
            }
            class.fp.clear();
            class.lone.clear();
            class.fp_share.clear();
            class.core_ok = false;
            self.stale_cores();
            return;
        }
        for &r in &state.fin {
            let cross = &mut self.cross[r as usize];
            let i = Self::cross_index(cross, c);
            let j = cross[i].fp as usize;
            cross[i].mult -= 1;
            class.fp[j].1 -= 1;
            if class.fp[j].1 > 0 {
                class.fp_share[j] = solo_share(self.cap[r as usize], class.fp[j].1);
            } else {
                cross.swap_remove(i);
                if cross.len() == 1 {
                    // The resource is now the other class's only.
                    self.core_stale.push((cross[0].class, cross[0].fp, true));
                }
                class.fp.swap_remove(j);
                class.lone.swap_remove(j);
                class.fp_share.swap_remove(j);
                if let Some(&(r2, _)) = class.fp.get(j) {
                    let cross2 = &mut self.cross[r2 as usize];
                    let i2 = Self::cross_index(cross2, c);
                    cross2[i2].fp = j as u32;
                }
            }
        }
        class.core_ok = false;
        self.stale_cores();
    }

    /// Moves flow `f` to class `to` and logs it.
    fn move_flow(&mut self, f: u32, to: u32) {
        let from = self.flows[f as usize].class;
        self.detach(f);
        self.attach(f, to);
        self.changes.moved.push((f, from, to));
        self.stats.flows_moved += 1;
    }

    /// Records `b` (`NONE`: none) as the bottleneck of class `c`.
    fn set_bneck(&mut self, c: u32, b: u32) {
        let old = self.classes[c as usize].bneck;
        if old == b {
            return;
        }
        if old != NONE {
            let list = &mut self.bneck_of[old as usize];
            let p = self.classes[c as usize].bneck_pos as usize;
            list.swap_remove(p);
            if let Some(&moved) = list.get(p) {
                self.classes[moved as usize].bneck_pos = p as u32;
            }
            self.has_bneck[old as usize] = !list.is_empty();
        }
        if b != NONE {
            self.has_bneck[b as usize] = true;
            let list = &mut self.bneck_of[b as usize];
            self.classes[c as usize].bneck_pos = list.len() as u32;
            list.push(c);
        }
        self.classes[c as usize].bneck = b;
    }

    /// A fresh mark value (64-bit: never wraps in practice).
    fn next_epoch(&mut self) -> u64 {
        self.epoch += 1;
        self.epoch
    }

    /// Adds class `c` to `S`.
    fn add_to_s(&mut self, c: u32, epoch: u64) {
        let hot = &mut self.hot[c as usize];
        if self.classes[c as usize].live && hot.mark != epoch {
            hot.mark = epoch;
            self.s_list.push(c);
        }
    }

    /// Re-allocates after the changes since the last call; what changed is
    /// in [`MaxMin::changes`].
    pub fn update(&mut self) -> &Changes {
        self.changes.created.clear();
        self.changes.moved.clear();
        self.changes.freed.clear();
        self.changes.rated.clear();
        if self.dirty.is_empty() && self.added.is_empty() {
            self.release_freed();
            return &self.changes;
        }
        self.stats.updates += 1;
        let epoch = self.next_epoch();
        self.s_list.clear();
        if self.full {
            self.dissolve_all();
            for c in 0..self.classes.len() as u32 {
                self.add_to_s(c, epoch);
            }
        } else {
            // S starts with the new flows' classes and the classes whose
            // bottleneck a change touched; the check adds whoever else lost
            // a bottleneck.
            for k in 0..self.added.len() {
                let f = self.added[k];
                let state = &self.flows[f as usize];
                if state.live && state.class != NONE {
                    self.add_to_s(state.class, epoch);
                }
            }
            for k in 0..self.dirty.len() {
                let r = self.dirty[k];
                for j in 0..self.bneck_of[r as usize].len() {
                    let c = self.bneck_of[r as usize][j];
                    self.add_to_s(c, epoch);
                }
            }
        }
        self.added.clear();
        self.dirty.clear();
        let mut first = true;
        self.update_no_collapse = self.no_collapse;
        loop {
            self.grow.clear();
            let complete = self.fill_s(epoch, first);
            first = false;
            if self.collapse_abort {
                // A class splits: the single-class resources matter; the
                // same S, filled from scratch with all of them.
                self.collapse_abort = false;
                self.update_no_collapse = true;
                self.stats.collapse_restarts += 1;
                first = true;
                continue;
            }
            if complete {
                self.check(epoch);
            }
            if self.grow.is_empty() {
                break;
            }
            let before = self.s_list.len();
            for k in 0..self.grow.len() {
                let c = self.grow[k];
                self.add_to_s(c, epoch);
            }
            if self.s_list.len() == before {
                break;
            }
        }
        self.merge_and_commit(epoch);
        self.release_freed();
        &self.changes
    }

    /// Ids freed since the last update become reusable.
    fn release_freed(&mut self) {
        self.class_free.append(&mut self.class_freed);
    }

    /// Reference mode: every live flow of a class with more than one goes
    /// to a class of its own.
    fn dissolve_all(&mut self) {
        for c in 0..self.classes.len() as u32 {
            while self.classes[c as usize].live && self.classes[c as usize].members.len() > 1 {
                let f = *self.classes[c as usize].members.last().expect("members");
                let to = self.new_class();
                self.changes.created.push(to);
                self.move_flow(f, to);
            }
        }
    }

    /// Step 2: progressive filling of `S` on the residual capacities of `R`.
    /// Stops early, with the classes to add to `S` in `self.grow`, when a
    /// bottleneck's share is below the rate of a class outside `S` there
    /// (the check would add that class: the rest of the fill is wasted);
    /// returns whether it completed.
    #[inline(never)]
    fn fill_s(&mut self, epoch: u64, first: bool) -> bool {
        self.stats.passes += 1;
        if first {
            // R, with every resource listed once (`res_slot` marks, a fresh
            // epoch per update: R only grows between the passes of one).
            self.fill_epoch = self.next_epoch();
            self.r_list.clear();
            self.base.clear();
            self.max_out.clear();
            self.stamp.clear();
            self.in_r.clear();
            self.bneck_in_r.clear();
            self.bneck_listed.clear();
            self.s_in_r = 0;
        }
        let repoch = self.fill_epoch;
        // The classes that joined S since the last pass (all of S at the
        // first): their footprints join R, listed after the resources
        // already there (the order a rebuild from all of S would give), and
        // every resource they cross is (re)initialised below; the others
        // keep their residual, count and largest outside rate, which only
        // depend on which crossing classes are in S and on committed rates.
        self.refresh.clear();
        let pass = self.stats.passes;
        // Every (re)initialised resource: residual = capacity - load of
        // the classes outside S; count = the flows of S on it.
        let collapse = !self.update_no_collapse;
        if collapse {
            for k in self.s_in_r..self.s_list.len() {
                self.update_core(self.s_list[k]);
            }
        }
        let (classes, res_slot, r_list) = (&mut self.classes, &mut self.res_slot, &mut self.r_list);
        let (hot, cross, cap) = (&self.hot, &self.cross, &self.cap);
        for &c in &self.s_list[self.s_in_r..] {
            // Of the resources only this class crosses, R needs the one
            // of smallest fair share (the first in footprint order, which
            // is R's order for them): their shares stay `capacity /
            // multiplicity` until the class freezes, unless it splits
            // (then the update restarts without collapsing). The class's
            // core lists the others and that one.
            let class = &mut classes[c as usize];
            class.in_r_start = self.in_r.len() as u32;
            class.in_r_end = (self.in_r.len()
                + if collapse {
                    class.core.len()
                } else {
                    class.fp.len()
                }) as u32;
            let fp = if collapse { &class.core } else { &class.fp };
            for &(r, m) in fp {
                let slot = &mut res_slot[r as usize];
                let fresh = slot.mark != repoch;
                let k = if fresh {
                    *slot = ResSlot {
                        mark: repoch,
                        local: r_list.len() as u32,
                    };
                    r_list.len()
                } else {
                    slot.local as usize
                };
                self.in_r.push((k as u32, m));
                if !fresh && self.stamp[k] == pass {
                    continue;
                }
                self.refresh.push(k as u32);
                let (mut outside, mut max_out, mut count) = (0.0f64, 0.0f64, 0u32);
                for x in &cross[r as usize] {
                    let hot = hot[x.class as usize];
                    let m = x.mult;
                    // Branch-free (a mask: whether a crossing class is in
                    // S follows no pattern a branch predictor learns, and
                    // the compiler made a branch of a select): a class of
                    // S adds 0.0 to the load (exact: the load is never
                    // -0.0) and 0.0 to the maximum (rates are >= 0).
                    let out_mask = u64::from(hot.mark != epoch).wrapping_neg();
                    let rate = f64::from_bits(hot.rate.to_bits() & out_mask);
                    count += m & !(out_mask as u32);
                    outside += f64::from(m) * rate;
                    max_out = larger(max_out, rate);
                }
                let base = Local {
                    residual: larger(cap[r as usize] - outside, 0.0),
                    count,
                    max_in_s: 0.0,
                    touched: false,
                };
                if fresh {
                    // Listed: appended to R.
                    let listed = self.has_bneck[r as usize];
                    if listed {
                        self.bneck_in_r.push(k as u32);
                    }
                    self.bneck_listed.push(listed);
                    r_list.push(r);
                    self.base.push(base);
                    self.max_out.push(max_out);
                    self.stamp.push(pass);
                } else {
                    // Already in R, re-initialised: a class that crosses
                    // it joined S.
                    self.base[k] = base;
                    self.max_out[k] = max_out;
                    self.stamp[k] = pass;
                }
            }
        }
        let grown = self.s_in_r;
        self.s_in_r = self.s_list.len();
        if !first && !self.no_resume && self.resume(grown) {
            self.stats.resumes += 1;
            self.start_classes(grown);
        } else {
            self.start_classes(0);
            self.local.clear();
            self.local.extend_from_slice(&self.base);
            self.shares.clear();
            self.shares.extend(self.local.iter().map(Local::share));
            self.levels.clear();
            self.lowered.clear();
        }
        if self.local.len() <= self.linear_scan_max.unwrap_or(LINEAR_SCAN_MAX) {
            // Few resources: find the smallest share by a scan (cheaper
            // than keeping a heap; the same order: smallest share, then
            // smallest index).
            // Once every class of S froze, every share is infinite: no
            // scan needed to see it.
            while self.unfrozen_classes > 0 {
                let Some((k, best)) = first_min(&self.shares) else {
                    break;
                };
                if self.outside_above(k, best, epoch) {
                    return false;
                }
                self.freeze_at(k as u32, best, epoch, false);
                if self.collapse_abort {
                    return false;
                }
            }
            return true;
        }
        self.heap.reset(self.local.len());
        for (k, &share) in self.shares.iter().enumerate() {
            if share < f64::INFINITY {
                self.heap.push_unordered(k as u32, share);
            }
        }
        self.heap.heapify();
        // Resources whose share changed while freezing the classes of one
        // bottleneck: re-keyed once, after that bottleneck (the pop order
        // is a total order on (share, index), so deferring the re-keying
        // does not change it).
        while let Some((k, share)) = self.heap.pop() {
            if self.outside_above(k as usize, share, epoch) {
                return false;
            }
            self.freeze_at(k, share, epoch, true);
            if self.collapse_abort {
                return false;
            }
            for &k2 in &self.touched {
                self.local[k2 as usize].touched = false;
                let share = self.shares[k2 as usize];
                if share < f64::INFINITY {
                    self.heap.set(k2, share);
                } else {
                    self.heap.remove(k2);
                }
            }
        }
        true
    }

    /// The classes `s_list[from..]` start the fill unfrozen.
    fn start_classes(&mut self, from: usize) {
        if from == 0 {
            self.unfrozen_classes = 0;
        }
        self.unfrozen_classes += self.s_list.len() - from;
        for &c in &self.s_list[from..] {
            let class = &mut self.classes[c as usize];
            class.frozen = false;
            class.partial = false;
            class.new_rate = f64::INFINITY;
            class.new_bneck = NONE;
            self.stats.classes_filled += 1;
            self.stats.flows_filled += class.members.len() as u64;
        }
    }

    /// Resumes the previous pass's fill after the classes `s_list[grown..]`
    /// joined S (their resources, re-initialised, in `refresh`), when that
    /// gives the state a fill from scratch of all of S would reach after
    /// the same bottleneck levels, bit for bit; returns false (nothing to
    /// keep) otherwise.
    ///
    /// A fill from scratch repeats the previous pass's levels as long as
    /// every level's bottleneck is one no grown class crosses (its count,
    /// residual and the classes frozen there are unchanged) and it still
    /// has the smallest share (ties: the smallest index): the resources no
    /// grown class crosses have the same states level by level, and the
    /// re-initialised ones are brought through the levels by replaying
    /// the logged lowerings, in order, with the same arithmetic as
    /// [`MaxMin::freeze_at`]; their shares are checked against every level
    /// first. The grown classes have larger committed rates than the
    /// levels they were found at, so the levels usually hold.
    fn resume(&mut self, grown: usize) -> bool {
        let pass = self.stats.passes;
        let stamp = &self.stamp;
        if self.levels.iter().any(|l| stamp[l.k as usize] == pass) {
            return false;
        }
        let n = self.r_list.len();
        self.local.resize(n, Local::EMPTY);
        self.shares.resize(n, f64::INFINITY);
        // The shares of the re-initialised resources are kept up to date
        // as they are lowered (one division per lowering, not per level).
        for &t in &self.refresh {
            let l = self.base[t as usize];
            self.local[t as usize] = l;
            self.shares[t as usize] = l.share();
        }
        for j in 0..self.levels.len() {
            let level = self.levels[j];
            for &t in &self.refresh {
                let share = self.shares[t as usize];
                // Either order (the scan's `<`, the heap's total order).
                let before = share < level.share
                    || (share == level.share && t < level.k)
                    || share.total_cmp(&level.share).then(t.cmp(&level.k)).is_lt();
                if before {
                    return false;
                }
            }
            let end = self
                .levels
                .get(j + 1)
                .map_or(self.lowered.len(), |l| l.log_start as usize);
            for &(k2, m2) in &self.lowered[level.log_start as usize..end] {
                if stamp[k2 as usize] == pass {
                    let l = &mut self.local[k2 as usize];
                    l.lower(m2, level.share);
                    self.shares[k2 as usize] = l.share();
                }
            }
        }
        debug_assert!(grown <= self.s_list.len());
        true
    }

    /// Would flows of S freezing at `share` on local resource `k` fail the
    /// check (a class outside S has a larger rate there)? Then those
    /// classes go to `self.grow`.
    fn outside_above(&mut self, k: usize, share: f64, epoch: u64) -> bool {
        if share >= self.max_out[k] * (1.0 - TOL) {
            return false;
        }
        let r = self.r_list[k];
        for y in &self.cross[r as usize] {
            let other = self.hot[y.class as usize];
            if other.mark != epoch && other.rate > share {
                self.grow.push(y.class);
            }
        }
        true
    }

    /// Freezes the unfrozen flows of S on the local resource `k` (the
    /// bottleneck) at `share` bit/s: whole classes when all their flows
    /// cross it, otherwise flow by flow (the class becomes partial); with
    /// `track`, lists in `self.touched` the other local resources whose
    /// share changed.
    fn freeze_at(&mut self, k: u32, share: f64, epoch: u64, track: bool) {
        let r = self.r_list[k as usize];
        self.touched.clear();
        self.freezing.clear();
        for x in &self.cross[r as usize] {
            let class = &self.classes[x.class as usize];
            if self.hot[x.class as usize].mark == epoch && !class.frozen {
                self.freezing.push((x.class, x.mult));
            }
        }
        let (classes, flows) = (&mut self.classes, &mut self.flows);
        let (res_slot, local, touched) = (&self.res_slot, &mut self.local, &mut self.touched);
        let shares = &mut self.shares;
        self.levels.push(Level {
            k,
            share,
            log_start: self.lowered.len() as u32,
        });
        let lowered = &mut self.lowered;
        let fill_epoch = self.fill_epoch;
        let in_r = &self.in_r;
        let mut lower_local = |k2: u32, m2: u32| {
            lowered.push((k2, m2));
            let l = &mut local[k2 as usize];
            l.lower(m2, share);
            shares[k2 as usize] = l.share();
            if track && k2 != k && !l.touched {
                l.touched = true;
                touched.push(k2);
            }
        };
        let mut froze = 0;
        for &(c, m) in &self.freezing {
            let class = &mut classes[c as usize];
            if !class.partial && m as usize == class.members.len() {
                class.frozen = true;
                froze += 1;
                class.new_rate = share;
                class.new_bneck = r;
                // Its entries in R (collapsed: the rest of the footprint
                // is not in R), already resolved to local indices.
                for &(k2, m2) in &in_r[class.in_r_start as usize..class.in_r_end as usize] {
                    lower_local(k2, m2);
                }
                continue;
            }
            if !self.update_no_collapse {
                self.collapse_abort = true;
                return;
            }
            if !class.partial {
                class.partial = true;
                class.unfrozen = class.members.len() as u32;
                for &f in &class.members {
                    flows[f as usize].frozen = false;
                }
            }
            for &f in &class.members {
                let flow = &mut flows[f as usize];
                if flow.frozen || !flow.fin.contains(&r) {
                    continue;
                }
                flow.frozen = true;
                flow.new_rate = share;
                flow.new_bneck = r;
                class.unfrozen -= 1;
                for &r2 in &flow.fin {
                    let slot = res_slot[r2 as usize];
                    // Collapsed out of R: never read.
                    if slot.mark == fill_epoch {
                        lower_local(slot.local, 1);
                    }
                }
            }
            if class.unfrozen == 0 {
                class.frozen = true;
                froze += 1;
            }
        }
        self.unfrozen_classes -= froze;
    }

    /// Step 3: bottleneck check on the classes of `S` and the classes
    /// outside `S` whose bottleneck is in `R`; classes to add to `S` go to
    /// `self.grow`. Every resource it looks at is in `R`, whose final
    /// residual, largest rate of `S` and largest rate outside `S` the fill
    /// recorded.
    #[inline(never)]
    fn check(&mut self, epoch: u64) {
        // A class of S froze at `b`, saturated by S, with the largest rate
        // of S there: it keeps `b` unless a class outside S has a larger
        // rate on it (those join S: the next fill can lower them). A
        // partial class: the same for each of its flows.
        for k in 0..self.s_list.len() {
            let c = self.s_list[k];
            let class = &self.classes[c as usize];
            if class.partial {
                for j in 0..class.members.len() {
                    let f = &self.flows[self.classes[c as usize].members[j] as usize];
                    self.check_in_s(f.new_rate, f.new_bneck, epoch);
                }
            } else {
                self.check_in_s(class.new_rate, class.new_bneck, epoch);
            }
        }
        // A class outside S whose bottleneck is in R: is it still
        // saturated, with no larger rate? Otherwise it joins S. A class
        // outside S whose bottleneck is outside R keeps it: neither its
        // load nor its classes' rates changed.
        // Before it joins S, a class that lost its bottleneck looks for
        // another one among the resources all its flows cross.
        self.rebneck.clear();
        // In the order of R (a resource may have joined the list out of
        // order, in an earlier pass's check).
        if !self.bneck_in_r.is_sorted() {
            self.bneck_in_r.sort_unstable();
        }
        for j in 0..self.bneck_in_r.len() {
            let k = self.bneck_in_r[j] as usize;
            let r = self.r_list[k];
            if !self.has_bneck[r as usize] {
                continue;
            }
            let l = &self.local[k];
            let saturated = l.residual <= self.cap[r as usize] * TOL;
            let max = l.max_in_s.max(self.max_out[k]);
            for j in 0..self.bneck_of[r as usize].len() {
                let c = self.bneck_of[r as usize][j];
                let hot = self.hot[c as usize];
                if hot.mark == epoch || (saturated && hot.rate >= max * (1.0 - TOL)) {
                    continue;
                }
                match self.other_bottleneck(c, r) {
                    Some(b) => self.rebneck.push((c, b)),
                    None => self.grow.push(c),
                }
            }
        }
        for k in 0..self.rebneck.len() {
            let (c, b) = self.rebneck[k];
            self.set_bneck(c, b);
            // A resource of R that gains a recorded bottleneck is read by
            // the next pass's check.
            let slot = self.res_slot[b as usize];
            if slot.mark == self.fill_epoch && !self.bneck_listed[slot.local as usize] {
                self.bneck_listed[slot.local as usize] = true;
                self.bneck_in_r.push(slot.local);
            }
        }
    }

    /// A bottleneck of class `c` (outside S, at its committed rate) other
    /// than `not`: a resource every flow of `c` crosses, saturated, with no
    /// larger rate (from the fill's records for a resource of R, summed
    /// afresh otherwise).
    fn other_bottleneck(&self, c: u32, not: u32) -> Option<u32> {
        let class = &self.classes[c as usize];
        let x = class.rate;
        let n = class.members.len() as u32;
        for &(r, m) in &class.fp {
            if m != n || r == not {
                continue;
            }
            let cap = self.cap[r as usize];
            let slot = self.res_slot[r as usize];
            let (saturated, max) = if slot.mark == self.fill_epoch {
                let l = &self.local[slot.local as usize];
                let max_out = self.max_out[slot.local as usize];
                (l.residual <= cap * TOL, l.max_in_s.max(max_out))
            } else {
                // Outside R: no class of S crosses it.
                let (mut load, mut max) = (0.0f64, 0.0f64);
                for y in &self.cross[r as usize] {
                    let rate = self.hot[y.class as usize].rate;
                    load += f64::from(y.mult) * rate;
                    max = max.max(rate);
                }
                (load >= cap * (1.0 - TOL), max)
            };
            if saturated && x >= max * (1.0 - TOL) {
                return Some(r);
            }
        }
        None
    }

    /// The check of a flow of `S` at rate `x` frozen at `b`.
    fn check_in_s(&mut self, x: f64, b: u32, epoch: u64) {
        if x >= self.max_out[self.res_slot[b as usize].local as usize] * (1.0 - TOL) {
            return;
        }
        for y in &self.cross[b as usize] {
            let other = self.hot[y.class as usize];
            if other.mark != epoch && other.rate > x {
                self.grow.push(y.class);
            }
        }
    }

    /// After the last fill: splits the partial classes (a class keeps the
    /// flows of its most common bottleneck), merges the classes of `S`
    /// that froze at the same resource (same fill step, so the same rate
    /// bit for bit; the smaller class moves into the larger), records
    /// bottlenecks and commits the new rates.
    fn merge_and_commit(&mut self, epoch: u64) {
        self.orphans.clear();
        for k in 0..self.s_list.len() {
            let c = self.s_list[k];
            if self.classes[c as usize].partial {
                self.split_partial(c);
            }
        }
        let repoch = self.next_epoch();
        for k in 0..self.s_list.len() {
            let c = self.s_list[k];
            let b = self.classes[c as usize].new_bneck;
            let slot = self.res_slot[b as usize];
            if slot.mark != repoch {
                self.res_slot[b as usize] = ResSlot {
                    mark: repoch,
                    local: c,
                };
                continue;
            }
            let (mut keep, mut gone) = (slot.local, c);
            if self.classes[gone as usize].members.len() > self.classes[keep as usize].members.len()
            {
                std::mem::swap(&mut keep, &mut gone);
                self.res_slot[b as usize].local = keep;
            }
            debug_assert_eq!(
                self.classes[keep as usize].new_rate.to_bits(),
                self.classes[gone as usize].new_rate.to_bits()
            );
            while let Some(&f) = self.classes[gone as usize].members.last() {
                self.move_flow(f, keep);
            }
            self.free_class(gone);
            self.changes.freed.push(gone);
        }
        // The flows that left split classes join the class of their
        // bottleneck, or a new one.
        for k in 0..self.orphans.len() {
            let f = self.orphans[k];
            let (rate, b) = {
                let flow = &self.flows[f as usize];
                (flow.new_rate, flow.new_bneck)
            };
            let slot = self.res_slot[b as usize];
            let to = if slot.mark == repoch {
                slot.local
            } else {
                let to = self.new_class();
                self.changes.created.push(to);
                self.hot[to as usize].mark = epoch;
                let class = &mut self.classes[to as usize];
                class.frozen = true;
                class.new_rate = rate;
                class.new_bneck = b;
                self.s_list.push(to);
                self.res_slot[b as usize] = ResSlot {
                    mark: repoch,
                    local: to,
                };
                to
            };
            debug_assert_eq!(self.classes[to as usize].new_rate.to_bits(), rate.to_bits());
            self.move_flow(f, to);
        }
        for k in 0..self.s_list.len() {
            let c = self.s_list[k];
            let class = &self.classes[c as usize];
            if !class.live {
                continue;
            }
            debug_assert_eq!(self.hot[c as usize].mark, epoch);
            let (r, b) = (class.new_rate, class.new_bneck);
            self.set_bneck(c, b);
            let class = &mut self.classes[c as usize];
            if r.to_bits() != class.rate.to_bits() {
                class.rate = r;
                self.hot[c as usize].rate = committed(r);
                self.changes.rated.push(c);
                self.stats.classes_changed += 1;
                self.stats.flows_changed += class.members.len() as u64;
            }
        }
    }

    /// A partial class keeps the flows frozen at its most common
    /// bottleneck (ties: the first met); the others go to `orphans`.
    fn split_partial(&mut self, c: u32) {
        let repoch = self.next_epoch();
        let (classes, flows, res_slot) = (&mut self.classes, &self.flows, &mut self.res_slot);
        let class = &mut classes[c as usize];
        let (mut best, mut best_count) = (NONE, 0);
        for &f in &class.members {
            let b = flows[f as usize].new_bneck;
            let slot = &mut res_slot[b as usize];
            if slot.mark != repoch {
                *slot = ResSlot {
                    mark: repoch,
                    local: 0,
                };
            }
            slot.local += 1;
            if slot.local > best_count {
                (best, best_count) = (b, slot.local);
            }
        }
        for &f in &class.members {
            let flow = &flows[f as usize];
            if flow.new_bneck == best {
                class.new_rate = flow.new_rate;
            } else {
                self.orphans.push(f);
            }
        }
        class.new_bneck = best;
        class.partial = false;
        class.frozen = true;
    }
}

/// A bottleneck level of a fill.
#[derive(Debug, Clone, Copy)]
struct Level {
    /// Local index of the bottleneck.
    k: u32,
    /// Its fair share, bit/s: the rate of the flows frozen there.
    share: f64,
    /// Start of its lowerings in `MaxMin::lowered`.
    log_start: u32,
}

/// A resource's mark and local index in a fill.
#[derive(Debug, Clone, Copy, Default)]
struct ResSlot {
    /// Epoch of the fill that last listed the resource in R.
    mark: u64,
    /// Its index in `r_list` / `local` during that fill (a class id while
    /// merging).
    local: u32,
}

/// A resource of R in a fill.
#[derive(Debug, Clone, Copy)]
struct Local {
    /// Capacity left for the unfrozen flows of S, bit/s (`>= 0`).
    residual: f64,
    /// Unfrozen flows of S on it.
    count: u32,
    /// Largest rate of a frozen flow of S on it, bit/s.
    max_in_s: f64,
    /// Re-key pending after the current bottleneck.
    touched: bool,
}

impl Local {
    /// Placeholder until initialised.
    const EMPTY: Local = Local {
        residual: 0.0,
        count: 0,
        max_in_s: 0.0,
        touched: false,
    };

    /// A resource of capacity `cap` crossed by `count` flows of S and no
    /// other flow.
    fn initial(cap: f64, count: u32) -> Local {
        Local {
            residual: (cap - 0.0).max(0.0),
            count,
            max_in_s: 0.0,
            touched: false,
        }
    }

    /// `m` flows froze on it at `share` bit/s.
    fn lower(&mut self, m: u32, share: f64) {
        self.residual = larger(self.residual - f64::from(m) * share, 0.0);
        self.count -= m;
        self.max_in_s = larger(self.max_in_s, share);
    }

    /// The fair share of the unfrozen flows, bit/s (infinite without any).
    fn share(&self) -> f64 {
        if self.count > 0 {
            self.residual / f64::from(self.count)
        } else {
            f64::INFINITY
        }
    }
}

/// The smallest share and its index, the first one among equal shares
/// (`None` when every share is infinite): the scan `if share < best`,
/// computed as a minimum over 8 independent lanes (vectorised), then the
/// first index holding it. `shares` has no NaN, so the minimum is the same
/// value in any order; `-0.0 == 0.0` as in the scan, and the share returned
/// is the one at the index found.
fn first_min(shares: &[f64]) -> Option<(usize, f64)> {
    const LANES: usize = 8;
    let mut lanes = [f64::INFINITY; LANES];
    let chunks = shares.chunks_exact(LANES);
    let mut best = f64::INFINITY;
    for &share in chunks.remainder() {
        best = if share < best { share } else { best };
    }
    for chunk in chunks {
        for (lane, &share) in lanes.iter_mut().zip(chunk) {
            *lane = if share < *lane { share } else { *lane };
        }
    }
    for lane in lanes {
        best = if lane < best { lane } else { best };
    }
    if best == f64::INFINITY {
        return None;
    }
    // The first index holding it: whole chunks compared at once, then the
    // chunk that holds it.
    let mut base = 0;
    for chunk in shares.chunks(LANES) {
        if chunk
            .iter()
            .fold(false, |hit, &share| hit | (share == best))
        {
            let k = base + chunk.iter().position(|&share| share == best)?;
            return Some((k, shares[k]));
        }
        base += chunk.len();
    }
    None
}

/// The fair share of a resource of capacity `cap` bit/s that `m` flows of
/// one class load alone, bit/s: the share a fill starts it with.
fn solo_share(cap: f64, m: u32) -> f64 {
    Local::initial(cap, m).share()
}

/// The larger of `a` and `b`: `f64::max` without its NaN handling (a
/// compare and a select), the same value for the fills' operands, which
/// are never NaN (finite capacities, loads and shares; a share is infinite
/// only where no flow is left, and those are not lowered) and never -0.0.
#[inline]
fn larger(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// A committed rate as it counts in a load, bit/s: 0 for a class not yet
/// allocated (NaN).
fn committed(rate: f64) -> f64 {
    if rate.is_nan() {
        0.0
    } else {
        rate
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
        let flows: Vec<u32> = m.live_flows().collect();
        let resources: Vec<u32> = (0..m.resource_count() as u32).collect();
        let mut on: Vec<Vec<u32>> = vec![Vec::new(); m.resource_count()];
        for &f in &flows {
            for &r in m.resources(f) {
                on[r as usize].push(f);
            }
        }
        let rates = progressive_filling(
            &resources,
            &flows,
            |r| m.capacity(r),
            |r| &on[r as usize],
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

    /// The class bookkeeping, recounted from scratch: members and their
    /// positions, footprints (multiplicities) and crossing lists, recorded
    /// bottlenecks; and every class's bottleneck is one (saturated, no
    /// larger rate on it) for every one of its flows.
    fn assert_invariants(m: &MaxMin) {
        let mut members = 0;
        for (c, class) in m.classes.iter().enumerate() {
            let c = c as u32;
            if !class.live {
                assert!(m.cross.iter().flat_map(|l| l.iter()).all(|x| x.class != c));
                assert!(m.bneck_of.iter().flatten().all(|&x| x != c));
                continue;
            }
            assert!(!class.members.is_empty(), "live class {c} is empty");
            members += class.members.len();
            let mut want: HashMap<u32, u32> = HashMap::new();
            for (p, &f) in class.members.iter().enumerate() {
                let state = &m.flows[f as usize];
                assert!(state.live);
                assert_eq!((state.class, state.pos as usize), (c, p));
                for &r in &state.fin {
                    *want.entry(r).or_default() += 1;
                }
            }
            let got: HashMap<u32, u32> = class.fp.iter().copied().collect();
            assert_eq!(got.len(), class.fp.len(), "class {c}: repeated resource");
            assert_eq!(got, want, "class {c}: footprint");
            assert_eq!(class.lone.len(), class.fp.len(), "class {c}: lone flags");
            for (j, &(r, mult)) in class.fp.iter().enumerate() {
                let want = solo_share(m.cap[r as usize], mult);
                assert_eq!(
                    class.fp_share[j].to_bits(),
                    want.to_bits(),
                    "class {c}: share of {r}"
                );
                let x = m.cross[r as usize]
                    .iter()
                    .filter(|x| x.class == c)
                    .collect::<Vec<_>>();
                assert_eq!(x.len(), 1, "class {c} on resource {r}");
                assert_eq!(x[0].fp as usize, j);
                assert_eq!(
                    class.lone[j],
                    m.cross[r as usize].len() == 1,
                    "class {c}: lone flag of resource {r}"
                );
            }
            let b = class.bneck;
            assert!(b != NONE, "class {c} has no bottleneck");
            let p = class.bneck_pos as usize;
            assert_eq!(m.bneck_of[b as usize][p], c);
            assert!(m.has_bneck[b as usize]);
            // The bottleneck: every member crosses it; saturated; no larger rate.
            assert!(class
                .members
                .iter()
                .all(|&f| m.flows[f as usize].fin.contains(&b)));
            let (mut load, mut max) = (0.0, 0.0f64);
            for x in &m.cross[b as usize] {
                let other = &m.classes[x.class as usize];
                load += f64::from(other.fp[x.fp as usize].1) * other.rate;
                max = max.max(other.rate);
            }
            let cap = m.capacity(b);
            assert!(
                load >= cap * (1.0 - 1e-6) - 1e-12,
                "class {c}: {load} of {cap}"
            );
            assert!(
                class.rate >= max * (1.0 - 1e-6),
                "class {c}: {} < {max}",
                class.rate
            );
        }
        let in_classes = m
            .live_flows()
            .filter(|&f| m.flows[f as usize].class != NONE)
            .count();
        assert_eq!(members, in_classes);
        for (r, list) in m.bneck_of.iter().enumerate() {
            assert_eq!(m.has_bneck[r], !list.is_empty(), "resource {r}");
        }
        for (r, list) in m.cross.iter().enumerate() {
            for x in list.iter() {
                let class = &m.classes[x.class as usize];
                assert!(class.live);
                assert_eq!(class.fp[x.fp as usize].0 as usize, r);
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
        // Four singleton classes: 0, 1, 2 froze together at r0 and merge.
        let rated = m.update().rated.len();
        assert_eq!(rated, 2);
        assert_eq!(m.class_of(f[0]), m.class_of(f[1]));
        assert_eq!(m.class_of(f[0]), m.class_of(f[2]));
        assert_eq!(m.class_members(m.class_of(f[0])).len(), 3);
        assert_eq!(m.changes().freed.len(), 2);
        assert_eq!(m.changes().moved.len(), 2);
        let want = [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0];
        for (&f, w) in f.iter().zip(want) {
            assert!((m.rate(f) - w).abs() < 1e-12);
        }
        assert_invariants(&m);
        // Flow 0 leaves: 1 and 2 get 1/2 on r0, flow 3 gets 1/2 on r1.
        m.remove(f[0]);
        m.update();
        for (&f, w) in f[1..].iter().zip([0.5, 0.5, 0.5]) {
            assert!((m.rate(f) - w).abs() < 1e-12, "{}", m.rate(f));
        }
        assert_invariants(&m);
        // Nothing changed: no class reported.
        let ch = m.update();
        assert!(ch.rated.is_empty() && ch.moved.is_empty());
    }

    #[test]
    fn a_class_splits_when_only_some_flows_cross_the_new_bottleneck() {
        // r0 (cap 4) carries flows 0, 1, 2 (one class at 4/3). A flow over
        // r1 (cap 2) joins flow 2 there: flow 2 and the newcomer freeze at
        // 1 on r1, flows 0 and 1 get 3/2 on r0.
        let mut m = MaxMin::new();
        m.add_resource(4.0);
        m.add_resource(2.0);
        m.add_resource(10.0);
        let f: Vec<u32> = [&[0, 2][..], &[0, 2], &[0, 1]]
            .iter()
            .map(|r| m.add(r))
            .collect();
        m.update();
        let c = m.class_of(f[0]);
        assert_eq!(m.class_members(c).len(), 3);
        assert_invariants(&m);
        let g = m.add(&[1]);
        m.update();
        assert_matches(&m);
        assert_invariants(&m);
        assert!((m.rate(f[2]) - 1.0).abs() < 1e-12);
        assert!((m.rate(f[0]) - 1.5).abs() < 1e-12);
        assert_eq!(m.class_of(f[2]), m.class_of(g));
        assert_ne!(m.class_of(f[0]), m.class_of(f[2]));
        assert_eq!(m.class_of(f[0]), m.class_of(f[1]));
        // The newcomer leaves: flow 2 rejoins flows 0 and 1 at 4/3.
        m.remove(g);
        m.update();
        assert_matches(&m);
        assert_invariants(&m);
        assert_eq!(m.class_of(f[0]), m.class_of(f[2]));
    }

    /// Random resources and random add/remove sequences; after every batch
    /// the incremental allocation equals progressive filling from scratch,
    /// the class bookkeeping is consistent and the logged changes replay
    /// the class of every flow.
    fn random_run(seed: u64) {
        random_run_with(seed, None);
    }

    /// [`random_run`] with the given scan threshold; returns every rate
    /// after every batch.
    fn random_run_with(seed: u64, linear_scan_max: Option<usize>) -> Vec<f64> {
        random_run_counting(seed, linear_scan_max, false).0
    }

    /// [`random_run_with`], also returning how many classes splits created,
    /// flows moved and classes merges freed; with `no_collapse`, R lists
    /// every resource of the footprints.
    fn random_run_counting(
        seed: u64,
        linear_scan_max: Option<usize>,
        no_collapse: bool,
    ) -> (Vec<f64>, [usize; 3]) {
        let (rates, counts, _) = random_run_stats(seed, linear_scan_max, no_collapse, false);
        (rates, counts)
    }

    /// [`random_run_counting`], also returning the allocator's counters.
    fn random_run_stats(
        seed: u64,
        linear_scan_max: Option<usize>,
        no_collapse: bool,
        no_resume: bool,
    ) -> (Vec<f64>, [usize; 3], MaxMinStats) {
        let mut counts = [0; 3];
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut m = MaxMin::new();
        if let Some(max) = linear_scan_max {
            m.set_linear_scan_max(max);
        }
        m.set_no_collapse(no_collapse);
        m.no_resume = no_resume;
        if rng.gen_bool(0.1) {
            m.set_full_recompute(true);
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
        // The class of every flow as the logged changes tell it.
        let mut mirror: HashMap<u32, u32> = HashMap::new();
        for _ in 0..rng.gen_range(1..40) {
            // Sometimes many flows at once: many finish at one instant, or
            // a burst of flows over one route (one class from the start).
            let ops = if rng.gen_bool(0.2) {
                rng.gen_range(5..15)
            } else {
                rng.gen_range(1..5)
            };
            let burst = rng.gen_bool(0.2);
            let mut route: Option<Vec<u32>> = None;
            for _ in 0..ops {
                if !live.is_empty() && !burst && rng.gen_bool(0.4) {
                    let k = rng.gen_range(0..live.len());
                    let f = live.swap_remove(k);
                    m.remove(f);
                    mirror.remove(&f);
                } else {
                    let res = match &route {
                        Some(r) if burst => r.clone(),
                        _ => {
                            let len = rng.gen_range(1..=nr.min(5));
                            let mut res: Vec<u32> = (0..nr as u32).collect();
                            for i in 0..len {
                                let j = rng.gen_range(i..res.len());
                                res.swap(i, j);
                            }
                            res.truncate(len);
                            res
                        }
                    };
                    route = Some(res.clone());
                    let f = m.add(&res);
                    mirror.insert(f, m.class_of(f));
                    live.push(f);
                }
            }
            // Sometimes a capacity changes (a trace): every flow is
            // re-filled at that update, as `FlowNetwork` does; the solo
            // shares the cores use follow (`assert_invariants`).
            let full = m.full;
            if rng.gen_bool(0.1) {
                let r = rng.gen_range(0..nr as u32);
                if m.capacity(r).is_finite() {
                    let cap = [1.0, 2.0, rng.gen_range(0.1..10.0)][rng.gen_range(0..3)];
                    m.set_capacity(r, cap);
                    m.set_full_recompute(true);
                }
            }
            let ch = m.update().clone();
            m.set_full_recompute(full);
            counts[0] += ch.created.len();
            counts[1] += ch.moved.len();
            counts[2] += ch.freed.len();
            for &(f, from, to) in &ch.moved {
                assert_eq!(mirror.insert(f, to), Some(from), "move of flow {f}");
            }
            for &f in &live {
                assert_eq!(mirror[&f], m.class_of(f), "class of flow {f}");
            }
            for &c in &ch.freed {
                assert!(!m.classes[c as usize].live);
            }
            assert_matches(&m);
            assert_invariants(&m);
            // Rates and recorded bottlenecks (as f64: exact for u32).
            seen.extend(live.iter().map(|&f| m.rate(f)));
            seen.extend(live.iter().map(|&f| match m.class_of(f) {
                NONE => -1.0,
                c => f64::from(m.classes[c as usize].bneck),
            }));
        }
        (seen, counts, m.stats())
    }

    #[test]
    fn random_runs_resume_fills_and_restart_collapsed_ones() {
        // The random runs of the property tests do take the paths they
        // check: passes that resume the previous fill, and updates whose
        // collapsed fills restart in full because a class splits.
        let (mut resumes, mut restarts) = (0, 0);
        for seed in 0..100 {
            let stats = random_run_stats(seed, None, false, false).2;
            resumes += stats.resumes;
            restarts += stats.collapse_restarts;
        }
        assert!(
            resumes > 0 && restarts > 0,
            "{resumes} resumes, {restarts} restarts"
        );
    }

    #[test]
    fn random_runs_split_move_and_merge_classes() {
        // The random runs of the property tests do exercise the class
        // structure: splits, moves and merges all happen.
        let mut total = [0; 3];
        for seed in 0..100 {
            let (_, c) = random_run_counting(seed, None, false);
            for k in 0..3 {
                total[k] += c[k];
            }
        }
        assert!(
            total.iter().all(|&n| n > 0),
            "created, moved, freed: {total:?}"
        );
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

        /// A pass that resumes the previous pass's fill (the default) gives
        /// the rates of restarting it, bit for bit, by scans and by the
        /// heap, collapsed or not.
        #[test]
        fn resumed_fill_equals_restarted_fill(
            seed in any::<u64>(),
            heap in any::<bool>(),
            no_collapse in any::<bool>(),
        ) {
            let max = if heap { Some(0) } else { None };
            let resumed = random_run_stats(seed, max, no_collapse, false).0;
            let restarted = random_run_stats(seed, max, no_collapse, true).0;
            prop_assert_eq!(
                resumed.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                restarted.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }

        /// Collapsing the resources only one class crosses (the default)
        /// gives the rates of listing all of them, bit for bit, by scans
        /// and by the heap; and both equal progressive filling from scratch.
        #[test]
        fn collapsed_fill_equals_full_fill(seed in any::<u64>(), heap in any::<bool>()) {
            let max = if heap { Some(0) } else { None };
            let collapsed = random_run_counting(seed, max, false).0;
            let full = random_run_counting(seed, max, true).0;
            prop_assert_eq!(
                collapsed.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                full.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn classes_follow_long_churn() {
        // Thousands of updates over a few shared resources: the class
        // bookkeeping stays consistent and the rates exact.
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let mut m = MaxMin::new();
        for _ in 0..6 {
            m.add_resource(rng.gen_range(1e8..1e10));
        }
        let mut live: Vec<u32> = Vec::new();
        for step in 0..5000 {
            if live.len() > 8 || (!live.is_empty() && rng.gen_bool(0.5)) {
                let k = rng.gen_range(0..live.len());
                m.remove(live.swap_remove(k));
            } else {
                let a = rng.gen_range(0..6u32);
                let b = (a + rng.gen_range(1..6)) % 6;
                live.push(m.add(&[a, b]));
            }
            m.update();
            if step % 10 == 0 {
                assert_matches(&m);
                assert_invariants(&m);
            }
        }
    }

    #[test]
    fn cross_list_behaves_as_a_vector_across_the_inline_limit() {
        // Pushes and swap-removes that cross the inline capacity both
        // ways keep the entries, in the order of a Vec's.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut list = CrossList::new();
        let mut want: Vec<u32> = Vec::new();
        let mut spilled = false;
        for step in 0..2000u32 {
            if want.is_empty() || (want.len() < 8 && rng.gen_bool(0.55)) {
                list.push(Cross {
                    class: step,
                    fp: step,
                    mult: 1,
                });
                want.push(step);
            } else {
                let i = rng.gen_range(0..want.len());
                list.swap_remove(i);
                want.swap_remove(i);
            }
            spilled |= want.len() > CrossList::INLINE;
            let got: Vec<u32> = list.iter().map(|x| x.class).collect();
            assert_eq!(got, want, "step {step}");
        }
        assert!(spilled);
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
