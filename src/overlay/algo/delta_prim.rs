//! delta-Prim (\[Marfoq20\] Algorithm 2): Prim's algorithm that never grows a
//! tree node past degree `delta`, with a choice of tie order.

use super::tree::{better, edge};
use super::{DenseMatrix, Edge};

/// How delta-Prim chooses among edges of equal weight (equal delays are
/// common: co-located silos, zero-length links).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TieOrder {
    /// The outside node with the lowest index joins, attached to its
    /// lowest-index open tree node (fedtopo's original order).
    LowestIndex,
    /// The tree node that joined the tree first wins, then the
    /// lowest-index outside node: the order of a double loop over tree nodes
    /// in insertion order and outside nodes in index order that keeps the
    /// first strictly smaller weight (the authors' published code).
    TreeAge,
}

impl TieOrder {
    /// Every tie order, in the order delta-MBST considers them.
    pub const ALL: [TieOrder; 2] = [TieOrder::LowestIndex, TieOrder::TreeAge];
}

/// State of one delta-Prim run.
struct DeltaPrim<'a> {
    s: &'a DenseMatrix,
    delta: usize,
    tie: TieOrder,
    in_tree: Vec<bool>,
    deg: Vec<usize>,
    /// Tie rank of a tree node (its index, or when it joined the tree).
    rank: Vec<usize>,
    joined: usize,
    /// Tree nodes with degree `< delta` (can still accept a child).
    open: Vec<usize>,
    /// Position of a node in `open` (`usize::MAX` if absent).
    open_pos: Vec<usize>,
    /// For an outside node `x`: weight of its best known attachment.
    best_w: Vec<f64>,
    /// For an outside node `x`: its best known attachment (`usize::MAX` if none).
    best_u: Vec<usize>,
}

impl<'a> DeltaPrim<'a> {
    fn new(s: &'a DenseMatrix, delta: usize, tie: TieOrder) -> Self {
        let n = s.n();
        Self {
            s,
            delta,
            tie,
            in_tree: vec![false; n],
            deg: vec![0; n],
            rank: vec![usize::MAX; n],
            joined: 0,
            open: Vec::with_capacity(n),
            open_pos: vec![usize::MAX; n],
            best_w: vec![f64::INFINITY; n],
            best_u: vec![usize::MAX; n],
        }
    }

    /// An attachment is stale when its tree node has saturated since it was
    /// recorded; its (weight, rank) is then a lower bound on the true best.
    fn is_stale(&self, x: usize) -> bool {
        let u = self.best_u[x];
        u != usize::MAX && self.deg[u] >= self.delta
    }

    /// Recomputes the exact best open attachment of outside node `x`.
    fn repair(&mut self, x: usize) {
        let (mut bw, mut bu) = (f64::INFINITY, usize::MAX);
        for &u in &self.open {
            let wu = self.s.get(u, x);
            if bu == usize::MAX || better(wu, self.rank[u], bw, self.rank[bu]) {
                (bw, bu) = (wu, u);
            }
        }
        self.best_w[x] = bw;
        self.best_u[x] = bu;
    }

    fn open_insert(&mut self, u: usize) {
        self.open_pos[u] = self.open.len();
        self.open.push(u);
    }

    fn open_remove(&mut self, u: usize) {
        let p = self.open_pos[u];
        self.open.swap_remove(p);
        if let Some(&moved) = self.open.get(p) {
            self.open_pos[moved] = p;
        }
        self.open_pos[u] = usize::MAX;
    }

    /// Puts `v` in the tree; if it can take children, offers it to every
    /// outside node. A new node has the largest rank in either order, so it
    /// only wins with a strictly smaller weight.
    fn add_to_tree(&mut self, v: usize) {
        self.in_tree[v] = true;
        self.rank[v] = match self.tie {
            TieOrder::LowestIndex => v,
            TieOrder::TreeAge => self.joined,
        };
        self.joined += 1;
        if self.deg[v] >= self.delta {
            return;
        }
        self.open_insert(v);
        let row = self.s.row(v);
        for (x, &wx) in row.iter().enumerate() {
            if !self.in_tree[x]
                && (self.best_u[x] == usize::MAX
                    || better(wx, self.rank[v], self.best_w[x], self.rank[self.best_u[x]]))
            {
                self.best_w[x] = wx;
                self.best_u[x] = v;
            }
        }
    }

    /// Whether outside node `x`'s attachment precedes `arg`'s.
    fn precedes(&self, x: usize, arg: usize) -> bool {
        match self.tie {
            TieOrder::LowestIndex => self.best_w[x] < self.best_w[arg],
            TieOrder::TreeAge => better(
                self.best_w[x],
                self.rank[self.best_u[x]],
                self.best_w[arg],
                self.rank[self.best_u[arg]],
            ),
        }
    }

    /// Cheapest outside node together with its (exact) attachment, or `None`
    /// if no outside node can be attached. Stale minima are repaired lazily.
    fn select(&mut self) -> Option<(usize, usize)> {
        loop {
            let mut arg = usize::MAX;
            for x in 0..self.in_tree.len() {
                if !self.in_tree[x]
                    && self.best_u[x] != usize::MAX
                    && (arg == usize::MAX || self.precedes(x, arg))
                {
                    arg = x;
                }
            }
            if arg == usize::MAX {
                return None;
            }
            if !self.is_stale(arg) {
                return Some((arg, self.best_u[arg]));
            }
            self.repair(arg);
        }
    }

    fn attach(&mut self, x: usize, u: usize) {
        self.deg[u] += 1;
        self.deg[x] += 1;
        if self.deg[u] >= self.delta {
            self.open_remove(u);
        }
        self.add_to_tree(x);
    }
}

/// delta-Prim (\[Marfoq20\] Algorithm 2): Prim's algorithm from `root` on the
/// weights `(w(i,j) + w(j,i)) / 2` (ms) that only attaches a new node to a
/// tree node whose degree is still `< delta`, so the result has maximum
/// degree `<= delta`. Ties go to the lowest index ([`TieOrder::LowestIndex`]).
///
/// Returns `None` if it gets stuck (every tree node saturated while nodes
/// remain outside; e.g. `delta == 1` and `n > 2`). For `delta >= n - 1` it is
/// exactly Prim's MST from `root`. Edges are `(u, v)` with `u < v`, in the
/// order they are added.
///
/// # Panics
/// If `n > 0` and `root >= n`.
pub fn delta_prim(w: &DenseMatrix, delta: usize, root: usize) -> Option<Vec<Edge>> {
    delta_prim_symmetric(&w.symmetrized(), delta, root, TieOrder::LowestIndex)
}

/// [`delta_prim`] on an already symmetric matrix `s` (ms; not copied, so a
/// sweep over `delta` pays for the symmetrisation once) with the tie order
/// `tie`. Reads `s(u, x)` for tree node `u` and outside node `x`.
///
/// Cost: `O(n^2)` plus `O(n)` per lazy repair. Each outside node keeps its best
/// attachment; when that tree node saturates, the stored weight becomes a
/// lower bound and is recomputed only if it is selected as the minimum.
///
/// A run in which no node reaches degree `delta` never consults the bound, so
/// it equals the runs for every larger `delta` (the MST from `root` in this
/// tie order); delta-MBST stops its sweep there.
///
/// # Panics
/// If `n > 0` and `root >= n`.
pub fn delta_prim_symmetric(
    s: &DenseMatrix,
    delta: usize,
    root: usize,
    tie: TieOrder,
) -> Option<Vec<Edge>> {
    let n = s.n();
    if n == 0 {
        return Some(Vec::new());
    }
    assert!(root < n, "root {root} out of range for n = {n}");
    let mut st = DeltaPrim::new(s, delta, tie);
    st.add_to_tree(root);
    let mut edges = Vec::with_capacity(n - 1);
    for _ in 1..n {
        let (x, u) = st.select()?;
        st.attach(x, u);
        edges.push(edge(u, x));
    }
    Some(edges)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use rand::Rng;

    /// Straightforward O(n^3) delta-Prim in the tree-age order: tree nodes in
    /// the order they joined, outside nodes by index, the first strictly
    /// smaller weight kept.
    fn naive_tree_age(w: &DenseMatrix, delta: usize, root: usize) -> Option<Vec<Edge>> {
        let n = w.n();
        let mut order = vec![root];
        let mut in_tree = vec![false; n];
        let mut deg = vec![0; n];
        in_tree[root] = true;
        let mut edges = Vec::new();
        while order.len() < n {
            let mut best: Option<(f64, usize, usize)> = None;
            for &u in &order {
                for (x, _) in in_tree.iter().enumerate().filter(|(_, &t)| !t) {
                    if deg[u] < delta && best.is_none_or(|b| w.get(u, x) < b.0) {
                        best = Some((w.get(u, x), u, x));
                    }
                }
            }
            let (_, u, x) = best?;
            in_tree[x] = true;
            order.push(x);
            deg[u] += 1;
            deg[x] += 1;
            edges.push(edge(u, x));
        }
        Some(edges)
    }

    #[test]
    fn tree_age_order_matches_the_double_loop() {
        let mut r = rng(11);
        for n in 1..40 {
            for integral in [false, true] {
                let w = random_symmetric(n, &mut r, integral);
                let root = r.gen_range(0..n);
                for delta in 0..(n + 2) {
                    assert_eq!(
                        delta_prim_symmetric(&w, delta, root, TieOrder::TreeAge),
                        naive_tree_age(&w, delta, root),
                        "n={n} delta={delta} integral={integral}"
                    );
                }
            }
        }
    }

    #[test]
    fn tie_orders_differ_only_on_ties() {
        let mut r = rng(12);
        let mut differed = 0;
        for n in 3..30 {
            let distinct = random_symmetric(n, &mut r, false);
            let tied = random_symmetric(n, &mut r, true);
            for delta in 2..n {
                let [a, b] = TieOrder::ALL.map(|t| delta_prim_symmetric(&distinct, delta, 0, t));
                assert_eq!(a, b, "distinct weights: n={n} delta={delta}");
                let [a, b] = TieOrder::ALL.map(|t| delta_prim_symmetric(&tied, delta, 0, t));
                differed += usize::from(a != b);
            }
        }
        assert!(differed > 0, "integral weights never told the orders apart");
    }
}
