//! What the local improvement ([`super::improve`]) knows about a tree while
//! it tries the edge swaps of one step: the tree's edge values by level,
//! rooted subtrees (which side of a removed edge a node is on, `O(1)`), and
//! the exact objective `(M, C)` of the tree after one swap from the edges
//! whose value the swap changes only.
//!
//! Edge values are exact (the same [`edge_value`] calls as a from-scratch
//! evaluation) and `(M, C)` is a max and a count with exact comparisons,
//! which do not depend on the order: every answer here equals the
//! from-scratch one (a test compares the improvement against the
//! from-scratch reference, `improve_reference`).

use super::{edge_value, mbst_weights, TreeDelays};
use crate::units::Ms;
use std::cell::{OnceCell, RefCell};

/// Lower bounds of the edge values of a network: `w(i,j) / 2`, ms, with `w`
/// the weight of \[Marfoq20\] Algorithm 1, line 3 (both arcs at degree 1).
/// eq. (3) does not fall when a degree grows, so the value of edge `{i, j}`
/// at any degrees `>= 1` is at least `w(i,j) / 2`. `by_bound[i]` lists the
/// other silos by that bound, smallest first, to stop a scan for the
/// cheapest reconnection early.
pub(crate) struct PairBounds {
    n: usize,
    half_w: Vec<Ms>,
    by_bound: Vec<Vec<u32>>,
}

impl PairBounds {
    /// The bounds of `model` (`O(N^2 log N)`).
    pub(crate) fn new<D: TreeDelays + ?Sized>(model: &D) -> Self {
        let n = model.silo_count();
        let w = mbst_weights(model);
        let half_w: Vec<Ms> = (0..n * n).map(|k| w.get(k / n, k % n) / 2.0).collect();
        let by_bound = (0..n)
            .map(|i| {
                let row = &half_w[i * n..(i + 1) * n];
                let mut others: Vec<u32> = (0..n as u32).filter(|&j| j as usize != i).collect();
                others.sort_by(|&a, &b| row[a as usize].total_cmp(&row[b as usize]));
                others
            })
            .collect();
        Self {
            n,
            half_w,
            by_bound,
        }
    }

    /// Lower bound of the value of edge `{i, j}`, ms.
    #[inline]
    pub(crate) fn bound(&self, i: usize, j: usize) -> Ms {
        self.half_w[i * self.n + j]
    }

    /// The silos other than `i`, smallest [`Self::bound`] first.
    pub(crate) fn by_bound(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.by_bound[i].iter().map(|&j| j as usize)
    }
}

/// A tree with its adjacency and degrees.
pub(crate) struct Tree {
    pub(crate) adj: Vec<Vec<usize>>,
    pub(crate) deg: Vec<usize>,
    /// `values[x][k]`: the value of the edge from `x` to `adj[x][k]` at
    /// the degrees `(dx, dy)`, as `(dx, dy, value)` (ms), last computed;
    /// reused while the degrees are the same.
    pub(crate) values: Vec<Vec<(usize, usize, Ms)>>,
}

/// A tree at one step of the improvement: its edge values, levels and
/// rooted subtrees. Valid while the tree does not change.
pub(crate) struct Snapshot {
    /// `incident[start[x] + k]`: value of the edge from `x` to
    /// `adj[x][k]`, ms.
    incident: Vec<Ms>,
    start: Vec<usize>,
    /// The distinct edge values, largest first, with how many edges have
    /// each (NaN left out, as a from-scratch objective ignores them).
    levels: OnceCell<Vec<(Ms, usize)>>,
    /// The non-NaN edge values, each edge once, unsorted.
    values: Vec<Ms>,
    /// `(M, C)`.
    objective: (Ms, usize),
    /// Parent of each node in the tree rooted at 0 (`usize::MAX` at 0).
    parent: Vec<usize>,
    /// Preorder position and end of each node's subtree.
    tin: Vec<usize>,
    tout: Vec<usize>,
    /// Nodes in preorder.
    order: Vec<usize>,
}

impl Snapshot {
    pub(crate) fn new<D: TreeDelays + ?Sized>(model: &D, t: &mut Tree) -> Self {
        let n = t.adj.len();
        let mut incident = Vec::with_capacity(2 * n);
        let mut start = Vec::with_capacity(n + 1);
        for x in 0..n {
            start.push(incident.len());
            let dx = t.deg[x];
            for (&y, cached) in t.adj[x].iter().zip(t.values[x].iter_mut()) {
                let dy = t.deg[y];
                if (cached.0, cached.1) != (dx, dy) {
                    *cached = (dx, dy, edge_value(model, x, y, dx, dy));
                }
                incident.push(cached.2);
            }
        }
        start.push(incident.len());
        let mut values: Vec<Ms> = Vec::with_capacity(n);
        for x in 0..n {
            for (&y, &v) in t.adj[x].iter().zip(&incident[start[x]..start[x + 1]]) {
                if x < y && !v.is_nan() {
                    values.push(v);
                }
            }
        }
        let mut objective = (f64::NEG_INFINITY, 0);
        for &v in &values {
            if v > objective.0 {
                objective = (v, 1);
            } else if v == objective.0 {
                objective.1 += 1;
            }
        }
        let mut parent = vec![usize::MAX; n];
        let mut tin = vec![0; n];
        let mut tout = vec![0; n];
        let mut order = Vec::with_capacity(n);
        // Iterative preorder; a node's subtree ends where the preorder
        // leaves it.
        let mut stack = vec![(0usize, 0usize)];
        if n > 0 {
            tin[0] = 0;
            order.push(0);
        }
        while let Some(&mut (x, ref mut k)) = stack.last_mut() {
            if let Some(&y) = t.adj[x].get(*k) {
                *k += 1;
                if y == parent[x] {
                    continue;
                }
                parent[y] = x;
                tin[y] = order.len();
                order.push(y);
                stack.push((y, 0));
            } else {
                tout[x] = order.len();
                stack.pop();
            }
        }
        Self {
            incident,
            start,
            levels: OnceCell::new(),
            values,
            objective,
            parent,
            tin,
            tout,
            order,
        }
    }

    /// `(M, C)` of the tree: the largest edge value and how many edges
    /// have it.
    pub(crate) fn objective(&self) -> (Ms, usize) {
        self.objective
    }

    /// The distinct edge values, largest first, with how many edges have
    /// each (sorted when first asked for).
    fn levels(&self) -> &[(Ms, usize)] {
        self.levels.get_or_init(|| {
            let mut values = self.values.clone();
            values.sort_unstable_by(|a, b| b.total_cmp(a));
            let mut levels: Vec<(Ms, usize)> = Vec::with_capacity(values.len());
            for v in values {
                match levels.last_mut() {
                    Some((top, count)) if *top == v => *count += 1,
                    _ => levels.push((v, 1)),
                }
            }
            levels
        })
    }

    /// Values of the edges from `x` to `adj[x]`, in that order, ms.
    #[inline]
    pub(crate) fn incident(&self, x: usize) -> &[Ms] {
        &self.incident[self.start[x]..self.start[x + 1]]
    }

    /// Value of the tree edge from `x` to `y`, ms.
    pub(crate) fn value(&self, t: &Tree, x: usize, y: usize) -> Ms {
        let k = t.adj[x].iter().position(|&z| z == y).unwrap_or(0);
        self.incident(x)[k]
    }

    /// The removal of tree edge `(p, q)` seen from the rooted tree.
    pub(crate) fn cut(&self, p: usize, q: usize) -> Cut {
        let child = if self.parent[q] == p { q } else { p };
        Cut {
            lo: self.tin[child],
            hi: self.tout[child],
            child_is_q: child == q,
        }
    }

    /// The nodes on one side of `cut` (`q_side`: the side of `q`).
    pub(crate) fn side_nodes(&self, cut: &Cut, q_side: bool) -> Vec<usize> {
        if q_side == cut.child_is_q {
            self.order[cut.lo..cut.hi].to_vec()
        } else {
            self.order[..cut.lo]
                .iter()
                .chain(&self.order[cut.hi..])
                .copied()
                .collect()
        }
    }

    /// Whether `x` and `y` are neighbours in the tree.
    pub(crate) fn adjacent(&self, x: usize, y: usize) -> bool {
        self.parent[x] == y || self.parent[y] == x
    }

    /// The tree less its edge `{keep, lowered}` for the moves that give
    /// `keep` an edge back: `keep` at its degree, `lowered` one lower (its
    /// other edges at their new values). `O(L + d log d)`, `L` the number of
    /// levels and `d` the degree of `lowered`.
    pub(crate) fn swap_base<D: TreeDelays + ?Sized>(
        &self,
        model: &D,
        t: &Tree,
        keep: usize,
        lowered: usize,
    ) -> SwapBase {
        let dl = t.deg[lowered];
        // The changes (old values out, new values in), merged into the
        // levels (both largest first).
        let mut changes: Vec<(Ms, isize)> = Vec::with_capacity(2 * t.adj[lowered].len());
        for (&y, &v) in t.adj[lowered].iter().zip(self.incident(lowered)) {
            changes.push((v, -1));
            if y != keep {
                changes.push((edge_value(model, lowered, y, dl - 1, t.deg[y]), 1));
            }
        }
        changes.retain(|&(v, _)| !v.is_nan());
        changes.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        let mut levels: Vec<(Ms, usize)> = Vec::with_capacity(self.levels().len() + changes.len());
        let mut push = |v: Ms, c: isize| match levels.last_mut() {
            Some((top, count)) if *top == v => {
                *count = count.wrapping_add_signed(c);
            }
            _ => levels.push((v, c as usize)),
        };
        let mut k = 0;
        for &(v, c) in self.levels() {
            while k < changes.len() && changes[k].0.total_cmp(&v).is_gt() {
                push(changes[k].0, changes[k].1);
                k += 1;
            }
            push(v, c as isize);
        }
        for &(v, c) in &changes[k..] {
            push(v, c);
        }
        levels.retain(|&(_, count)| count > 0);
        SwapBase {
            levels,
            keep,
            lowered,
        }
    }

    /// `(M, C)` of the tree less `{keep, lowered}` plus `{z, keep}`, `z` on
    /// `lowered`'s side and not `lowered`, exactly: besides the edges of
    /// `base`, only the edges at `z` change (its degree grows) and one is
    /// added. `O(deg z)` edge values.
    pub(crate) fn base_objective<D: TreeDelays + ?Sized>(
        &self,
        model: &D,
        t: &Tree,
        base: &SwapBase,
        z: usize,
    ) -> (Ms, usize) {
        let (keep, low) = (base.keep, base.lowered);
        let dz = t.deg[z];
        let base_deg = |y: usize| t.deg[y] - usize::from(y == low);
        let old = |k: usize, y: usize| {
            if y == low {
                edge_value(model, z, low, dz, base_deg(low))
            } else {
                self.incident(z)[k]
            }
        };
        let mut best = (f64::NEG_INFINITY, 0);
        for &(v, count) in &base.levels {
            let gone = t.adj[z]
                .iter()
                .enumerate()
                .filter(|&(k, &y)| old(k, y) == v)
                .count();
            if count > gone {
                best = (v, count - gone);
                break;
            }
        }
        let new_values = t.adj[z]
            .iter()
            .map(|&y| edge_value(model, z, y, dz + 1, base_deg(y)))
            .chain(std::iter::once(edge_value(
                model,
                z,
                keep,
                dz + 1,
                t.deg[keep],
            )));
        for v in new_values {
            if v > best.0 {
                best = (v, 1);
            } else if v == best.0 {
                best.1 += 1;
            }
        }
        best
    }
}

/// The levels of a tree less one edge `{keep, lowered}`, with `keep`
/// counted at its old degree ([`Snapshot::swap_base`]).
pub(crate) struct SwapBase {
    levels: Vec<(Ms, usize)>,
    keep: usize,
    lowered: usize,
}

/// The removal of one tree edge `(p, q)`: the removed edge's lower node
/// owns the preorder range `lo..hi`.
pub(crate) struct Cut {
    lo: usize,
    hi: usize,
    child_is_q: bool,
}

impl Cut {
    /// Whether `x` is on `q`'s side of the removed edge, given its preorder
    /// position `tin` ([`Snapshot::on_q_side`]).
    fn q_side_at(&self, tin: usize) -> bool {
        (self.lo <= tin && tin < self.hi) == self.child_is_q
    }

    /// Number of nodes on `q`'s side out of `n`.
    pub(crate) fn q_side_len(&self, n: usize) -> usize {
        if self.child_is_q {
            self.hi - self.lo
        } else {
            n - (self.hi - self.lo)
        }
    }
}

impl Snapshot {
    /// Whether `x` is on `q`'s side of `cut`.
    #[inline]
    pub(crate) fn on_q_side(&self, cut: &Cut, x: usize) -> bool {
        cut.q_side_at(self.tin[x])
    }
}

/// `inner` with its edge values cached: per silo pair the last degrees asked
/// for and the value, ms (`O(N^2)` memory, for networks up to
/// [`super::improve::PLATEAU_MAX_SILOS`] silos). The same values as `inner`
/// (edge values are symmetric; the pair is stored lowest index first).
pub(crate) struct Memoized<'a, D: ?Sized> {
    inner: &'a D,
    n: usize,
    cache: RefCell<Vec<(u32, u32, Ms)>>,
}

impl<'a, D: TreeDelays + ?Sized> Memoized<'a, D> {
    pub(crate) fn new(inner: &'a D) -> Self {
        let n = inner.silo_count();
        Self {
            inner,
            n,
            cache: RefCell::new(vec![(u32::MAX, u32::MAX, f64::NAN); n * n]),
        }
    }
}

impl<D: TreeDelays + ?Sized> TreeDelays for Memoized<'_, D> {
    fn silo_count(&self) -> usize {
        self.n
    }
    fn arc_delay(&self, i: usize, j: usize, out_deg_i: usize, in_deg_j: usize) -> Ms {
        self.inner.arc_delay(i, j, out_deg_i, in_deg_j)
    }
    fn compute_round_ms(&self, i: usize) -> Ms {
        self.inner.compute_round_ms(i)
    }
    fn edge_value(&self, i: usize, j: usize, di: usize, dj: usize) -> Ms {
        let (a, b, da, db) = if i <= j {
            (i, j, di, dj)
        } else {
            (j, i, dj, di)
        };
        let key = (
            u32::try_from(da).unwrap_or(u32::MAX),
            u32::try_from(db).unwrap_or(u32::MAX),
        );
        let mut cache = self.cache.borrow_mut();
        let slot = &mut cache[a * self.n + b];
        if (slot.0, slot.1) != key || key.0 == u32::MAX || key.1 == u32::MAX {
            *slot = (key.0, key.1, self.inner.edge_value(a, b, da, db));
        }
        slot.2
    }
}
