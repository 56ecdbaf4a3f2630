//! Reference for the tests: the local improvement of [`super::improve`]
//! as it was before its objective became incremental (every move evaluated
//! by recomputing `(M, C)` over the whole tree, `O(N)` edge values). The
//! tests check that [`super::improve_tree`] returns the same trees.

use super::{compute_floor, degrees, edge_value, TreeDelays};
use crate::overlay::algo::Edge;
use crate::units::Ms;
use std::collections::BTreeSet;

/// A tree with its adjacency and degrees.
struct Tree {
    adj: Vec<Vec<usize>>,
    deg: Vec<usize>,
}

impl Tree {
    fn new(n: usize, edges: &[Edge]) -> Self {
        let mut adj = vec![Vec::new(); n];
        for &(u, v) in edges {
            adj[u].push(v);
            adj[v].push(u);
        }
        Self {
            adj,
            deg: degrees(n, edges),
        }
    }

    fn edges(&self) -> Vec<Edge> {
        let mut out: Vec<Edge> = (0..self.adj.len())
            .flat_map(|u| {
                self.adj[u]
                    .iter()
                    .filter(move |&&v| u < v)
                    .map(move |&v| (u, v))
            })
            .collect();
        out.sort_unstable();
        out
    }

    fn remove(&mut self, p: usize, q: usize) {
        self.adj[p].retain(|&x| x != q);
        self.adj[q].retain(|&x| x != p);
        self.deg[p] -= 1;
        self.deg[q] -= 1;
    }

    fn add(&mut self, a: usize, b: usize) {
        self.adj[a].push(b);
        self.adj[b].push(a);
        self.deg[a] += 1;
        self.deg[b] += 1;
    }

    /// The tree edges `(p, q)` a move may remove at value `m`: `p` an end
    /// of an edge whose value is `m` (by index), `q` a neighbour of `p` (by
    /// index).
    fn removals_at<D: TreeDelays + ?Sized>(&self, model: &D, m: Ms) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for p in 0..self.adj.len() {
            let at_m = self.adj[p]
                .iter()
                .any(|&q| edge_value(model, p, q, self.deg[p], self.deg[q]) == m);
            if at_m {
                let mut neighbours = self.adj[p].clone();
                neighbours.sort_unstable();
                out.extend(neighbours.into_iter().map(|q| (p, q)));
            }
        }
        out
    }

    /// `(M, C)`: the largest edge value and how many edges have it.
    fn objective<D: TreeDelays + ?Sized>(&self, model: &D) -> (Ms, usize) {
        let mut best = (f64::NEG_INFINITY, 0);
        for u in 0..self.adj.len() {
            for &v in self.adj[u].iter().filter(|&&v| u < v) {
                let x = edge_value(model, u, v, self.deg[u], self.deg[v]);
                if x > best.0 {
                    best = (x, 1);
                } else if x == best.0 {
                    best.1 += 1;
                }
            }
        }
        best
    }

    /// `side[x]` is true for the nodes reached from `q` without the edge
    /// `(p, q)`.
    fn side(&self, p: usize, q: usize) -> Vec<bool> {
        let mut side = vec![false; self.adj.len()];
        side[q] = true;
        let mut stack = vec![q];
        while let Some(x) = stack.pop() {
            for &y in &self.adj[x] {
                if side[y] || (x == q && y == p) {
                    continue;
                }
                side[y] = true;
                stack.push(y);
            }
        }
        side
    }
}

/// `(a, b) < (c, d)` lexicographically, with exact float comparison.
fn lower(a: (Ms, usize), b: (Ms, usize)) -> bool {
    a.0 < b.0 || (a.0 == b.0 && a.1 < b.1)
}

/// Whether node `x` (degree `deg[x]` in the tree without the removed edge)
/// can take one more edge with all its edges staying `< m`.
fn can_grow<D: TreeDelays + ?Sized>(model: &D, t: &Tree, x: usize, m: Ms) -> bool {
    let dx = t.deg[x] + 1;
    t.adj[x]
        .iter()
        .all(|&y| edge_value(model, x, y, dx, t.deg[y]) < m)
}

/// One improving move, if any; applied to `t`.
fn improve_once<D: TreeDelays + ?Sized>(model: &D, t: &mut Tree) -> bool {
    let (m, c) = t.objective(model);
    for (p, q) in t.removals_at(model, m) {
        if let Some((a, b)) = best_reconnection(model, t, p, q, (m, c)) {
            t.remove(p, q);
            t.add(a, b);
            return true;
        }
    }
    false
}

/// The reconnection `(a, b)` of the smallest value (ties to the lowest
/// `(min, max)` pair) after removing `(p, q)` that lowers `(m, c)`, if any.
/// Leaves `t` as it was.
fn best_reconnection<D: TreeDelays + ?Sized>(
    model: &D,
    t: &mut Tree,
    p: usize,
    q: usize,
    (m, c): (Ms, usize),
) -> Option<Edge> {
    let n = t.adj.len();
    let side = t.side(p, q);
    let removed_value = edge_value(model, p, q, t.deg[p], t.deg[q]);
    t.remove(p, q);
    // Edges at M that the removal alone removes or lowers: the gain of every
    // move whose new ends avoid p and q (their other edges have the same
    // neighbours' degrees before and after; p and q share no other edge).
    let mut dropped = usize::from(removed_value == m);
    for x in [p, q] {
        for &y in &t.adj[x] {
            let before = edge_value(model, x, y, t.deg[x] + 1, t.deg[y]);
            if before == m && edge_value(model, x, y, t.deg[x], t.deg[y]) < m {
                dropped += 1;
            }
        }
    }
    // p lies outside q's side. Without a gain only moves that give p or q
    // an edge back can lower (M, C).
    let grow: Vec<bool> = (0..n).map(|x| can_grow(model, t, x, m)).collect();
    let left: Vec<usize> = (0..n).filter(|&x| !side[x] && grow[x]).collect();
    let right: Vec<usize> = (0..n).filter(|&x| side[x] && grow[x]).collect();
    let mut best: Option<(Ms, Edge)> = None;
    let mut consider = |t: &mut Tree, a: usize, b: usize| {
        if (a, b) == (p, q) {
            return;
        }
        let v = edge_value(model, a, b, t.deg[a] + 1, t.deg[b] + 1);
        let e = (a.min(b), a.max(b));
        if v >= m || best.is_some_and(|(bv, be)| (bv, be) <= (v, e)) {
            return;
        }
        let improves = if a == p || b == q {
            // p or q grows back: evaluate exactly.
            t.add(a, b);
            let after = t.objective(model);
            t.remove(a, b);
            lower(after, (m, c))
        } else {
            dropped > 0
        };
        if improves {
            best = Some((v, e));
        }
    };
    if dropped > 0 {
        for &a in &left {
            for &b in &right {
                consider(t, a, b);
            }
        }
    } else {
        if grow[p] {
            for &b in &right {
                consider(t, p, b);
            }
        }
        if grow[q] {
            for &a in &left {
                consider(t, a, q);
            }
        }
    }
    t.add(p, q);
    best.map(|(_, e)| e)
}

/// Largest `N` for which [`improve_tree`] runs its plateau phase.
const PLATEAU_MAX_SILOS: usize = super::improve::PLATEAU_MAX_SILOS;
/// Most sideways moves of the plateau phase.
const PLATEAU_MOVES: usize = super::improve::PLATEAU_MOVES;

/// Strict descent: improving moves until none is left, `M` is at most
/// `floor` or `4 N` moves are made.
fn descend<D: TreeDelays + ?Sized>(model: &D, t: &mut Tree, floor: Ms) {
    for _ in 0..4 * t.adj.len() {
        if t.objective(model).0 <= floor || !improve_once(model, t) {
            break;
        }
    }
}

/// One sideways move: removes a tree edge `(p, q)` at an end `p` of an edge
/// at `M` and adds an edge that gives `p` or `q` an edge back, such that
/// `(M, C)` stays the same and the tree is not in `seen`. The first such
/// move in the order ends of `M`-edges by index, their neighbours by index,
/// the new partner by index. Applied to `t`.
fn sideways_once<D: TreeDelays + ?Sized>(
    model: &D,
    t: &mut Tree,
    seen: &BTreeSet<Vec<Edge>>,
) -> bool {
    let n = t.adj.len();
    let (m, c) = t.objective(model);
    for (p, q) in t.removals_at(model, m) {
        let side = t.side(p, q);
        t.remove(p, q);
        for (x, x_side) in [(p, false), (q, true)] {
            for y in (0..n).filter(|&y| side[y] != x_side) {
                if (x.min(y), x.max(y)) == (p.min(q), p.max(q)) {
                    continue;
                }
                t.add(x, y);
                if t.objective(model) == (m, c) {
                    let edges = t.edges();
                    if !seen.contains(&edges) {
                        return true;
                    }
                }
                t.remove(x, y);
            }
        }
        t.add(p, q);
    }
    false
}

/// Improves the spanning tree `edges` on `0..n` by edge swaps on its exact
/// cycle time: a descent, then for `n <=` [`PLATEAU_MAX_SILOS`] a plateau
/// phase (see the module docs); returns the best tree seen, edges `(u, v)`,
/// `u < v`, sorted. Its cycle time is never larger than the input's.
pub fn improve_tree<D: TreeDelays + ?Sized>(model: &D, edges: Vec<Edge>) -> Vec<Edge> {
    let n = model.silo_count();
    if n < 3 {
        return edges;
    }
    let mut t = Tree::new(n, &edges);
    let floor = compute_floor(model);
    descend(model, &mut t, floor);
    let mut best = (t.objective(model), t.edges());
    if n > PLATEAU_MAX_SILOS {
        return best.1;
    }
    let mut seen = BTreeSet::from([best.1.clone()]);
    for _ in 0..PLATEAU_MOVES {
        if best.0 .0 <= floor || !sideways_once(model, &mut t, &seen) {
            break;
        }
        seen.insert(t.edges());
        descend(model, &mut t, floor);
        let obj = t.objective(model);
        seen.insert(t.edges());
        if lower(obj, best.0) {
            best = (obj, t.edges());
        }
    }
    best.1
}
