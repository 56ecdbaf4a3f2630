//! Shortest routes over an underlay, one source at a time, in O(routers +
//! links) memory: the single-source shortest-path tree that the connectivity
//! graph ([`crate::connectivity`]) reads its routes from.
//!
//! Routes are shortest by length (km); among equally long ones the route
//! with fewer hops wins, then the lower router index is settled first
//! (Dijkstra with a `(length, hops, router)` min-heap), so results are
//! deterministic. Lengths are summed from the source outwards.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Underlay;

/// "No predecessor link" in [`ShortestPathTree::pred_link`] (the source, or
/// a router not reached).
pub const NO_LINK: u32 = u32::MAX;

/// Adjacency of an underlay: for each router, its `(neighbour, link index)`
/// pairs in link order, flattened (compressed sparse rows), and every
/// link's length in km.
#[derive(Debug, Clone)]
pub struct Adjacency {
    start: Vec<usize>,
    entries: Vec<(u32, u32)>,
    length_km: Vec<f64>,
    ends: Vec<(u32, u32)>,
}

impl Adjacency {
    /// The adjacency of `underlay` (the order of [`Underlay::neighbours`]).
    pub fn new(underlay: &Underlay) -> Adjacency {
        let n = underlay.node_count();
        let mut degree = vec![0usize; n + 1];
        for l in &underlay.links {
            degree[l.a] += 1;
            degree[l.b] += 1;
        }
        let mut start = Vec::with_capacity(n + 1);
        let mut acc = 0;
        for d in &degree[..n] {
            start.push(acc);
            acc += d;
        }
        start.push(acc);
        let mut fill = start.clone();
        let mut entries = vec![(0u32, 0u32); acc];
        for (i, l) in underlay.links.iter().enumerate() {
            entries[fill[l.a]] = (l.b as u32, i as u32);
            fill[l.a] += 1;
            entries[fill[l.b]] = (l.a as u32, i as u32);
            fill[l.b] += 1;
        }
        Adjacency {
            start,
            entries,
            length_km: underlay.links.iter().map(|l| l.length_km).collect(),
            ends: underlay
                .links
                .iter()
                .map(|l| (l.a as u32, l.b as u32))
                .collect(),
        }
    }

    /// Number of routers.
    pub fn router_count(&self) -> usize {
        self.start.len() - 1
    }

    /// The end of link `link` that is not router `v`.
    pub fn other_end(&self, link: usize, v: usize) -> usize {
        let (a, b) = self.ends[link];
        if a as usize == v {
            b as usize
        } else {
            a as usize
        }
    }

    /// `(neighbour, link index)` pairs of router `v`, in link order.
    fn of(&self, v: usize) -> &[(u32, u32)] {
        &self.entries[self.start[v]..self.start[v + 1]]
    }
}

#[derive(Debug, Copy, Clone, PartialEq)]
struct QueueItem {
    dist: f64,
    hops: u32,
    node: u32,
}
impl Eq for QueueItem {}
impl Ord for QueueItem {
    fn cmp(&self, other: &Self) -> Ordering {
        // Min-heap on (dist, hops, node).
        other
            .dist
            .total_cmp(&self.dist)
            .then_with(|| other.hops.cmp(&self.hops))
            .then_with(|| other.node.cmp(&self.node))
    }
}
impl PartialOrd for QueueItem {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The shortest-path tree of one source: route length (km), hops and
/// predecessor link of every router, and the order in which routers were
/// settled (each router after its predecessor). Reusable: [`Self::run`]
/// overwrites it for another source without reallocating.
#[derive(Debug, Clone, Default)]
pub struct ShortestPathTree {
    /// The source router.
    pub source: usize,
    /// Route length from the source, km (`inf` when unreachable).
    pub length_km: Vec<f64>,
    /// Core links on the route from the source.
    pub hops: Vec<u32>,
    /// The last link of the route from the source ([`NO_LINK`] for the
    /// source itself and for unreachable routers).
    pub pred_link: Vec<u32>,
    /// Reached routers in the order they were settled (source first).
    pub order: Vec<u32>,
    done: Vec<bool>,
    heap: BinaryHeap<QueueItem>,
}

impl ShortestPathTree {
    /// The tree of `source` over `adj`.
    pub fn of(adj: &Adjacency, source: usize) -> ShortestPathTree {
        let mut t = ShortestPathTree::default();
        t.run(adj, source);
        t
    }

    /// Recomputes this tree for `source` (Dijkstra, ties by hops then
    /// router index).
    ///
    /// # Panics
    /// If `source` is not a router of `adj`.
    pub fn run(&mut self, adj: &Adjacency, source: usize) {
        let n = adj.router_count();
        assert!(source < n, "source {source} outside 0..{n}");
        self.source = source;
        self.length_km.clear();
        self.length_km.resize(n, f64::INFINITY);
        self.hops.clear();
        self.hops.resize(n, 0);
        self.pred_link.clear();
        self.pred_link.resize(n, NO_LINK);
        self.done.clear();
        self.done.resize(n, false);
        self.order.clear();
        self.heap.clear();
        self.length_km[source] = 0.0;
        self.heap.push(QueueItem {
            dist: 0.0,
            hops: 0,
            node: source as u32,
        });
        while let Some(QueueItem { dist, hops, node }) = self.heap.pop() {
            let node = node as usize;
            if self.done[node] {
                continue;
            }
            self.done[node] = true;
            self.order.push(node as u32);
            for &(next, link) in adj.of(node) {
                let next = next as usize;
                let d = dist + adj.length_km[link as usize];
                let h = hops + 1;
                let cur = self.length_km[next];
                let better = d < cur || (d == cur && h < self.hops[next]);
                if !self.done[next] && better {
                    self.length_km[next] = d;
                    self.hops[next] = h;
                    self.pred_link[next] = link;
                    self.heap.push(QueueItem {
                        dist: d,
                        hops: h,
                        node: next as u32,
                    });
                }
            }
        }
    }

    /// The largest route length from the source (km) and the largest hop
    /// count, over reached routers.
    pub fn eccentricity(&self) -> (f64, u32) {
        self.order.iter().fold((0.0f64, 0u32), |(km, h), &v| {
            (
                km.max(self.length_km[v as usize]),
                h.max(self.hops[v as usize]),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::underlay::synthetic::random_geometric;

    #[test]
    fn tree_routes_follow_predecessors_and_order_puts_parents_first() {
        let u = random_geometric(200, 1000.0, 150.0, 1e9, 3).unwrap_or_else(|e| panic!("{e}"));
        let adj = Adjacency::new(&u);
        let t = ShortestPathTree::of(&adj, 5);
        assert_eq!(t.order.len(), 200);
        assert_eq!(t.order[0], 5);
        let mut seen = [false; 200];
        for &v in &t.order {
            let v = v as usize;
            if v != 5 {
                let l = &u.links[t.pred_link[v] as usize];
                let parent = if l.a == v { l.b } else { l.a };
                assert!(seen[parent], "parent {parent} of {v} settled later");
                assert_eq!(t.hops[v], t.hops[parent] + 1);
                assert_eq!(t.length_km[v], t.length_km[parent] + l.length_km);
            }
            seen[v] = true;
        }
        // The reusable workspace gives the same tree.
        let mut w = ShortestPathTree::of(&adj, 0);
        w.run(&adj, 5);
        assert_eq!(
            (w.length_km, w.hops, w.pred_link),
            (t.length_km, t.hops, t.pred_link)
        );
    }
}
