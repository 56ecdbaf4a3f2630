//! Local improvement of a delta-MBST tree on its exact cycle time.
//!
//! Equal delays (co-located silos, zero-length links) tie in delta-Prim and
//! the tie order picks one of several trees that are equally good for Prim
//! but not for the cycle time, whose eq. (3) delays grow with the degrees.
//! This search makes the result depend less on that choice: it swaps tree
//! edges while that lowers the cycle time.
//!
//! Objective: `(M, C)` lexicographically, `M` the largest edge value
//! `(d_o(i,j) + d_o(j,i)) / 2` at the tree's degrees and `C` the number of
//! edges at `M`; the cycle time is `max(M, max_i s*Tc(i))`.
//!
//! 1. **Descent.** A move removes a tree edge `(p, q)` with `p` an end of an
//!    edge at `M` (only such moves can lower an edge at `M`: an edge's value
//!    depends on its ends' degrees) and adds the edge `(a, b)` that
//!    reconnects the two parts with the smallest value, among those after
//!    which no edge other than the old ones at `M` is `>= M`. A move is made
//!    when it lowers `(M, C)`; the descent stops when no move does, when `M`
//!    is at most the compute floor `max_i s*Tc(i)`, or after `4 N` moves.
//! 2. **Plateau** (only for `N <=` [`PLATEAU_MAX_SILOS`]). A local optimum of
//!    the descent can sit on a plateau of trees with the same `(M, C)`, next
//!    to a better tree that no single swap reaches. Up to [`PLATEAU_MOVES`]
//!    times: make the first sideways move (remove `(p, q)` as above, give
//!    `p` or `q` an edge back, `(M, C)` unchanged, the new tree not visited
//!    before in this run) and descend again. Stops early when no sideways move
//!    is left or `M` reaches the compute floor.
//!
//! The result is the best tree seen (by `(M, C)`, the first one on ties), so
//! its cycle time is never above the input's, nor above the descent's
//! result. Deterministic: every choice is by index.
//!
//! Cost. Each step evaluates the tree's `N - 1` edge values once
//! (`Snapshot`; up to [`PLATEAU_MAX_SILOS`] silos every edge value is
//! cached per silo pair and degrees). A move tried then costs the values of
//! the edges whose value it changes (those at the node whose degree
//! changes): the objective after a swap is exact and incremental
//! (`Snapshot::base_objective`). Which side of a removed edge a node is on
//! is `O(1)` (preorder ranges), and the scan for the cheapest reconnection
//! walks each end's partners by the lower bound `w(i,j) / 2` of their edge
//! value (`PairBounds`) and stops once the bound reaches `M` or passes the
//! best value found. A removal that lowers no edge at `M` is not scanned:
//! eq. (3) does not fall when a degree grows, so no reconnection after it
//! lowers `(M, C)`. The plateau phase is a function of the tree it starts
//! from, so its result is kept per start tree (`Plateaus`). The trees are
//! the ones a from-scratch evaluation of every move gives: a test checks
//! them against that reference (`improve_reference`) on random tie-heavy
//! instances.

use super::snapshot::{Memoized, PairBounds, Snapshot, SwapBase, Tree};
use super::{compute_floor, degrees, edge_value, TreeDelays};
use crate::overlay::algo::Edge;
use crate::units::Ms;
use std::collections::{BTreeMap, BTreeSet};

impl Tree {
    fn new(n: usize, edges: &[Edge]) -> Self {
        let mut adj = vec![Vec::new(); n];
        for &(u, v) in edges {
            adj[u].push(v);
            adj[v].push(u);
        }
        let values = adj
            .iter()
            .map(|a| vec![(usize::MAX, usize::MAX, f64::NAN); a.len()])
            .collect();
        Self {
            adj,
            deg: degrees(n, edges),
            values,
        }
    }

    /// The edges `(u, v)`, `u < v`, sorted.
    fn edges(&self) -> Vec<Edge> {
        let mut out: Vec<Edge> = Vec::with_capacity(self.adj.len());
        for u in 0..self.adj.len() {
            let from = out.len();
            out.extend(self.adj[u].iter().filter(|&&v| u < v).map(|&v| (u, v)));
            out[from..].sort_unstable();
        }
        out
    }

    fn remove(&mut self, p: usize, q: usize) {
        for (x, y) in [(p, q), (q, p)] {
            if let Some(k) = self.adj[x].iter().position(|&z| z == y) {
                self.adj[x].remove(k);
                self.values[x].remove(k);
            }
        }
        self.deg[p] -= 1;
        self.deg[q] -= 1;
    }

    fn add(&mut self, a: usize, b: usize) {
        for (x, y) in [(a, b), (b, a)] {
            self.adj[x].push(y);
            self.values[x].push((usize::MAX, usize::MAX, f64::NAN));
        }
        self.deg[a] += 1;
        self.deg[b] += 1;
    }

    /// `(M, C)`: the largest edge value and how many edges have it.
    fn objective<D: TreeDelays + ?Sized>(&mut self, model: &D) -> (Ms, usize) {
        let mut best = (f64::NEG_INFINITY, 0);
        for u in 0..self.adj.len() {
            let du = self.deg[u];
            for (&v, cached) in self.adj[u].iter().zip(self.values[u].iter_mut()) {
                if u > v {
                    continue;
                }
                let dv = self.deg[v];
                if (cached.0, cached.1) != (du, dv) {
                    *cached = (du, dv, edge_value(model, u, v, du, dv));
                }
                let x = cached.2;
                if x > best.0 {
                    best = (x, 1);
                } else if x == best.0 {
                    best.1 += 1;
                }
            }
        }
        best
    }

    /// The tree edges `(p, q)` a move may remove at value `m`: `p` an end
    /// of an edge whose value is `m` (by index), `q` a neighbour of `p` (by
    /// index).
    fn removals_at(&self, snap: &Snapshot, m: Ms) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for p in 0..self.adj.len() {
            if snap.incident(p).contains(&m) {
                let mut neighbours = self.adj[p].clone();
                neighbours.sort_unstable();
                out.extend(neighbours.into_iter().map(|q| (p, q)));
            }
        }
        out
    }
}

/// `v < m` (false when either is NaN).
fn below(v: Ms, m: Ms) -> bool {
    v < m
}

/// `(a, b) < (c, d)` lexicographically, with exact float comparison.
fn lower(a: (Ms, usize), b: (Ms, usize)) -> bool {
    a.0 < b.0 || (a.0 == b.0 && a.1 < b.1)
}

/// Per-node facts of one descent step (tree fixed, largest value `m`),
/// computed when first asked for.
struct StepFacts {
    /// Whether the node can take one more edge with its edges `< m`
    /// (0: not known yet, 1: no, 2: yes).
    grow: Vec<u8>,
    /// Number of its edges whose value is not `< m` (`usize::MAX`: not
    /// known yet).
    not_below: Vec<usize>,
    /// Number of its edges at `m` that fall below `m` when its degree
    /// falls by one (`usize::MAX`: not known yet).
    drops: Vec<usize>,
    /// Per-removal cache of `can_grow` at the neighbours of the removed
    /// edge's ends: `(removal number, answer)`.
    local: Vec<(usize, bool)>,
    removal: usize,
}

impl StepFacts {
    fn new(n: usize) -> Self {
        Self {
            grow: vec![0; n],
            not_below: vec![usize::MAX; n],
            drops: vec![usize::MAX; n],
            local: vec![(usize::MAX, false); n],
            removal: 0,
        }
    }

    fn not_below(&mut self, snap: &Snapshot, x: usize, m: Ms) -> usize {
        if self.not_below[x] == usize::MAX {
            self.not_below[x] = snap.incident(x).iter().filter(|&&v| !below(v, m)).count();
        }
        self.not_below[x]
    }

    fn drops<D: TreeDelays + ?Sized>(
        &mut self,
        model: &D,
        t: &Tree,
        snap: &Snapshot,
        x: usize,
        m: Ms,
    ) -> usize {
        if self.drops[x] == usize::MAX {
            self.drops[x] = t.adj[x]
                .iter()
                .zip(snap.incident(x))
                .filter(|&(&y, &v)| v == m && edge_value(model, x, y, t.deg[x] - 1, t.deg[y]) < m)
                .count();
        }
        self.drops[x]
    }

    /// [`can_grow`] of `x` in the step's tree.
    fn tree_grow<D: TreeDelays + ?Sized>(&mut self, model: &D, t: &Tree, x: usize, m: Ms) -> bool {
        if self.grow[x] == 0 {
            let dx = t.deg[x] + 1;
            let yes = t.adj[x]
                .iter()
                .all(|&y| edge_value(model, x, y, dx, t.deg[y]) < m);
            self.grow[x] = if yes { 2 } else { 1 };
        }
        self.grow[x] == 2
    }
}

/// One improving move, if any, when `M` is above `floor`; applied to `t`.
/// Without one, the snapshot of `t` (still valid: `t` did not change).
fn improve_once<D: TreeDelays + ?Sized>(
    model: &D,
    bounds: &PairBounds,
    t: &mut Tree,
    floor: Ms,
) -> Option<Snapshot> {
    let snap = Snapshot::new(model, t);
    let (m, c) = snap.objective();
    if m <= floor {
        return Some(snap);
    }
    let mut facts = StepFacts::new(t.adj.len());
    for (p, q) in t.removals_at(&snap, m) {
        facts.removal += 1;
        let mut removal = Removal {
            model,
            bounds,
            t,
            snap: &snap,
            facts: &mut facts,
            p,
            q,
            m,
            c,
            keep_p: None,
            keep_q: None,
        };
        if let Some((a, b)) = removal.best_reconnection() {
            t.remove(p, q);
            t.add(a, b);
            return None;
        }
    }
    Some(snap)
}

/// The removal of tree edge `(p, q)` in one descent step (the tree itself
/// stays as it is).
struct Removal<'a, D: ?Sized> {
    model: &'a D,
    bounds: &'a PairBounds,
    t: &'a Tree,
    snap: &'a Snapshot,
    facts: &'a mut StepFacts,
    p: usize,
    q: usize,
    m: Ms,
    c: usize,
    /// The tree less `(p, q)` for the moves that give `p`, resp. `q`, an
    /// edge back; made when first needed.
    keep_p: Option<SwapBase>,
    keep_q: Option<SwapBase>,
}

impl<D: TreeDelays + ?Sized> Removal<'_, D> {
    /// Degree of `x` once `(p, q)` is removed.
    fn deg(&self, x: usize) -> usize {
        self.t.deg[x] - usize::from(x == self.p || x == self.q)
    }

    /// Whether `x` can take one more edge with all its edges staying `< m`
    /// in the tree without `(p, q)`. Only `p`, `q` and their neighbours
    /// differ from the whole tree.
    fn grow(&mut self, x: usize) -> bool {
        let (p, q, m) = (self.p, self.q, self.m);
        if x == p || x == q {
            // Its other edges keep their values (its degree is back).
            let removed = usize::from(!below(self.snap.value(self.t, p, q), m));
            return self.facts.not_below(self.snap, x, m) - removed == 0;
        }
        if self.snap.adjacent(x, p) || self.snap.adjacent(x, q) {
            if self.facts.local[x].0 != self.facts.removal {
                let dx = self.t.deg[x] + 1;
                let yes = self.t.adj[x]
                    .iter()
                    .all(|&y| edge_value(self.model, x, y, dx, self.deg(y)) < m);
                self.facts.local[x] = (self.facts.removal, yes);
            }
            return self.facts.local[x].1;
        }
        self.facts.tree_grow(self.model, self.t, x, m)
    }

    /// The reconnection `(a, b)` of the smallest value (ties to the lowest
    /// `(min, max)` pair) after removing `(p, q)` that lowers `(M, C)`, if
    /// any: the same as trying every pair of growable nodes on the two
    /// sides (see the module docs).
    fn best_reconnection(&mut self) -> Option<Edge> {
        let (model, t, snap) = (self.model, self.t, self.snap);
        let (p, q, m) = (self.p, self.q, self.m);
        let n = t.adj.len();
        let value_pq = snap.value(t, p, q);
        // Edges at M that the removal alone removes or lowers: the gain of
        // every move whose new ends avoid p and q.
        let pq_drops = |x: usize, y: usize| {
            usize::from(value_pq == m && edge_value(model, x, y, t.deg[x] - 1, t.deg[y]) < m)
        };
        let dropped = usize::from(value_pq == m)
            + (self.facts.drops(model, t, snap, p, m) - pq_drops(p, q))
            + (self.facts.drops(model, t, snap, q, m) - pq_drops(q, p));
        // Without a gain no move lowers (M, C): the edges at M stay at M or
        // above (eq. (3) does not fall when a degree grows; the end that
        // gets an edge back returns to its old degree).
        if dropped == 0 {
            return None;
        }
        let cut = snap.cut(p, q);
        let mut best: Option<(Ms, Edge)> = None;
        // Every growable pair across the cut; scan from the smaller side.
        let q_len = cut.q_side_len(n);
        let from_q = q_len <= n - q_len;
        for s in snap.side_nodes(&cut, from_q) {
            if !self.grow(s) {
                continue;
            }
            for o in self.bounds.by_bound(s) {
                let bound = self.bounds.bound(s, o);
                if bound >= m || best.is_some_and(|(bv, _)| bound > bv) {
                    break;
                }
                if snap.on_q_side(&cut, o) == from_q || !self.grow(o) {
                    continue;
                }
                let (a, b) = if from_q { (o, s) } else { (s, o) };
                self.consider(a, b, &mut best);
            }
        }
        best.map(|(_, e)| e)
    }

    /// Candidate `(a, b)`, `a` on `p`'s side and `b` on `q`'s side: kept in
    /// `best` when its value is below `M` and below `best`'s (ties to the
    /// lower pair) and the move lowers `(M, C)`.
    fn consider(&mut self, a: usize, b: usize, best: &mut Option<(Ms, Edge)>) {
        let (p, q) = (self.p, self.q);
        if (a, b) == (p, q) {
            return;
        }
        let v = edge_value(self.model, a, b, self.deg(a) + 1, self.deg(b) + 1);
        let e = (a.min(b), a.max(b));
        if v >= self.m || best.is_some_and(|(bv, be)| (bv, be) <= (v, e)) {
            return;
        }
        // With a gain (the caller's condition) every move that avoids p and
        // q lowers (M, C); one that gives p or q an edge back is evaluated
        // exactly.
        let (model, t, snap) = (self.model, self.t, self.snap);
        let improves = if a == p {
            let base = self
                .keep_p
                .get_or_insert_with(|| snap.swap_base(model, t, p, q));
            lower(snap.base_objective(model, t, base, b), (self.m, self.c))
        } else if b == q {
            let base = self
                .keep_q
                .get_or_insert_with(|| snap.swap_base(model, t, q, p));
            lower(snap.base_objective(model, t, base, a), (self.m, self.c))
        } else {
            true
        };
        if improves {
            *best = Some((v, e));
        }
    }
}

/// Largest `N` for which [`improve_tree`] runs its plateau phase.
pub const PLATEAU_MAX_SILOS: usize = 256;
/// Most sideways moves of the plateau phase.
pub const PLATEAU_MOVES: usize = 32;

/// Strict descent: improving moves until none is left, `M` is at most
/// `floor` or `4 N` moves are made.
/// Returns the snapshot of the final tree when the descent stopped for lack
/// of a move (or at the floor).
fn descend<D: TreeDelays + ?Sized>(
    model: &D,
    bounds: &PairBounds,
    t: &mut Tree,
    floor: Ms,
) -> Option<Snapshot> {
    for _ in 0..4 * t.adj.len() {
        if let Some(snap) = improve_once(model, bounds, t, floor) {
            return Some(snap);
        }
    }
    None
}

/// One sideways move: removes a tree edge `(p, q)` at an end `p` of an edge
/// at `M` and adds an edge that gives `p` or `q` an edge back, such that
/// `(M, C)` stays the same and the tree is not in `seen`. The first such
/// move in the order ends of `M`-edges by index, their neighbours by index,
/// the new partner by index. Applied to `t`; returns the new tree's edges, sorted.
fn sideways_once<D: TreeDelays + ?Sized>(
    model: &D,
    t: &mut Tree,
    snap: Option<Snapshot>,
    edges: &[Edge],
    seen: &BTreeSet<Vec<Edge>>,
) -> Option<Vec<Edge>> {
    let n = t.adj.len();
    let snap = snap.unwrap_or_else(|| Snapshot::new(model, t));
    let (m, c) = snap.objective();
    for (p, q) in t.removals_at(&snap, m) {
        let cut = snap.cut(p, q);
        let removed = (p.min(q), p.max(q));
        for (x, x_on_q_side) in [(p, false), (q, true)] {
            let base = if x == p {
                snap.swap_base(model, t, p, q)
            } else {
                snap.swap_base(model, t, q, p)
            };
            for y in (0..n).filter(|&y| snap.on_q_side(&cut, y) != x_on_q_side) {
                let added = (x.min(y), x.max(y));
                if added == removed {
                    continue;
                }
                if snap.base_objective(model, t, &base, y) != (m, c) {
                    continue;
                }
                let mut swapped: Vec<Edge> =
                    edges.iter().copied().filter(|&e| e != removed).collect();
                let at = swapped.partition_point(|&e| e < added);
                swapped.insert(at, added);
                if !seen.contains(&swapped) {
                    t.remove(p, q);
                    t.add(x, y);
                    return Some(swapped);
                }
            }
        }
    }
    None
}

/// Improves the spanning tree `edges` on `0..n` by edge swaps on its exact
/// cycle time: a descent, then for `n <=` [`PLATEAU_MAX_SILOS`] a plateau
/// phase (see the module docs); returns the best tree seen, edges `(u, v)`,
/// `u < v`, sorted. Its cycle time is never larger than the input's.
pub fn improve_tree<D: TreeDelays + ?Sized>(model: &D, edges: Vec<Edge>) -> Vec<Edge> {
    improve_tree_with(model, &PairBounds::new(model), &mut Plateaus::new(), edges)
}

/// Results of the plateau phase by the tree it starts from (the descent's
/// result), for several trees of the same network: the phase is a function
/// of that tree alone, so a descent that ends where an earlier one did
/// gives the earlier result.
pub(crate) type Plateaus = BTreeMap<Vec<Edge>, Vec<Edge>>;

/// [`improve_tree`] with the pair bounds of `model` made once by the caller
/// (for several trees of the same network).
pub(crate) fn improve_tree_with<D: TreeDelays + ?Sized>(
    model: &D,
    bounds: &PairBounds,
    plateaus: &mut Plateaus,
    edges: Vec<Edge>,
) -> Vec<Edge> {
    let n = model.silo_count();
    if n < 3 {
        return edges;
    }
    if n <= PLATEAU_MAX_SILOS {
        improve_tree_in(&Memoized::new(model), bounds, plateaus, edges)
    } else {
        improve_tree_in(model, bounds, plateaus, edges)
    }
}

/// [`improve_tree_with`] for `n >= 3` silos.
fn improve_tree_in<D: TreeDelays + ?Sized>(
    model: &D,
    bounds: &PairBounds,
    plateaus: &mut Plateaus,
    edges: Vec<Edge>,
) -> Vec<Edge> {
    let n = model.silo_count();
    let mut t = Tree::new(n, &edges);
    let floor = compute_floor(model);
    let mut snap = descend(model, bounds, &mut t, floor);
    let mut best = (t.objective(model), t.edges());
    if n > PLATEAU_MAX_SILOS {
        return best.1;
    }
    if let Some(known) = plateaus.get(&best.1) {
        return known.clone();
    }
    let start = best.1.clone();
    let mut seen = BTreeSet::from([best.1.clone()]);
    let mut edges = best.1.clone();
    for _ in 0..PLATEAU_MOVES {
        if best.0 .0 <= floor {
            break;
        }
        let Some(moved) = sideways_once(model, &mut t, snap.take(), &edges, &seen) else {
            break;
        };
        seen.insert(moved);
        snap = descend(model, bounds, &mut t, floor);
        let obj = t.objective(model);
        edges = t.edges();
        seen.insert(edges.clone());
        if lower(obj, best.0) {
            best = (obj, edges.clone());
        }
    }
    plateaus.insert(start, best.1.clone());
    best.1
}
