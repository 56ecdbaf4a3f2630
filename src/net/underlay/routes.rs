//! Shortest routes over an underlay, one source at a time, in O(routers +
//! links) memory: the single-source shortest-path tree that the connectivity
//! graph ([`crate::net::connectivity`]) reads its routes from.
//!
//! Routes are shortest by length (km); among equally long ones the route
//! with fewer hops wins, then the lower router index is settled first
//! (Dijkstra with a `(length, hops, router)` min-heap), so results are
//! deterministic. Lengths are summed from the source outwards.

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

/// A Dijkstra queue item `(length, hops, router)` packed into one integer
/// whose order is the order the heap of the past used: `f64::total_cmp` of
/// the length (the same bit transform), then hops, then router index.
#[inline]
fn pack(dist: f64, hops: u32, node: u32) -> u128 {
    let b = dist.to_bits();
    // f64::total_cmp's key: flip every bit of negatives, the sign of the rest.
    let key = if b >> 63 == 1 { !b } else { b | (1 << 63) };
    (u128::from(key) << 64) | (u128::from(hops) << 32) | u128::from(node)
}

#[inline]
fn unpack(item: u128) -> (f64, u32, u32) {
    let key = (item >> 64) as u64;
    let b = if key >> 63 == 1 {
        key & !(1 << 63)
    } else {
        !key
    };
    (f64::from_bits(b), (item >> 32) as u32, item as u32)
}

/// A 4-ary min-heap of packed items (shallower than a binary heap, integer
/// comparisons: issue 28, the queue was 56 % of a 10,000-router diameter).
/// Pops in ascending order; equal items are identical, so the settling
/// order is that of any exact priority queue.
#[derive(Debug, Clone, Default)]
struct QuadHeap {
    items: Vec<u128>,
}

impl QuadHeap {
    fn clear(&mut self) {
        self.items.clear();
    }

    fn push(&mut self, item: u128) {
        let mut i = self.items.len();
        self.items.push(item);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.items[parent] <= item {
                break;
            }
            self.items[i] = self.items[parent];
            i = parent;
        }
        self.items[i] = item;
    }

    fn pop(&mut self) -> Option<u128> {
        let last = self.items.pop()?;
        let len = self.items.len();
        if len == 0 {
            return Some(last);
        }
        let top = self.items[0];
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= len {
                break;
            }
            let end = (first + 4).min(len);
            let mut child = first;
            for c in first + 1..end {
                if self.items[c] < self.items[child] {
                    child = c;
                }
            }
            if self.items[child] >= last {
                break;
            }
            self.items[i] = self.items[child];
            i = child;
        }
        self.items[i] = last;
        Some(top)
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
    heap: QuadHeap,
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
        self.heap.push(pack(0.0, 0, source as u32));
        while let Some(item) = self.heap.pop() {
            let (dist, hops, node) = unpack(item);
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
                    self.heap.push(pack(d, h, next as u32));
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

    /// The packed items order as `(total_cmp length, hops, router)` did,
    /// round-trip exactly, and the 4-ary heap pops them in that order.
    #[test]
    fn packed_heap_pops_in_the_old_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let specials = [0.0, -0.0, 1.0, f64::INFINITY, 1e-300, 5e300];
        let mut items: Vec<(f64, u32, u32)> = (0..5000)
            .map(|k| {
                let d = if k % 7 == 0 {
                    specials[k % specials.len()]
                } else {
                    rng.gen_range(0.0..1e4_f64).round() / 4.0
                };
                (d, rng.gen_range(0..5), rng.gen_range(0..50))
            })
            .collect();
        let mut heap = QuadHeap::default();
        for &(d, h, v) in &items {
            let p = pack(d, h, v);
            let (d2, h2, v2) = unpack(p);
            assert_eq!((d2.to_bits(), h2, v2), (d.to_bits(), h, v));
            heap.push(p);
        }
        items.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        for want in items {
            let (d, h, v) = unpack(heap.pop().unwrap());
            assert_eq!((d.to_bits(), h, v), (want.0.to_bits(), want.1, want.2));
        }
        assert!(heap.pop().is_none());
    }
    use crate::net::underlay::synthetic::random_geometric;

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
