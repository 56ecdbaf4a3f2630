//! The diameter of an underlay over its routes ([`super::routes`]): the
//! largest route length (km) and the largest hop count of a route, over
//! every ordered pair of routers, in O(routers + links) memory.
//!
//! Up to [`EXACT_DIAMETER_MAX_ROUTERS`] routers every source is scanned
//! (O(routers x links log routers) time): both values are exact. Above, a
//! bounded search (iFUB, Crescenzi et al. 2013, on lengths): a double sweep
//! finds a far pair and a central router `u`; then routers are scanned in
//! decreasing distance from `u`, and once the longest route found is at
//! least twice the distance from `u` of every router not scanned, it is the
//! diameter (any route between two unscanned routers is at most that long,
//! by the triangle inequality). At most [`BOUNDED_MAX_SOURCES`] sources are
//! scanned; the length is then reported with an upper bound, and the hop
//! count is the largest found (a lower bound: the hops of a shortest route
//! have no such bound). [`Diameter`] says which. (Bounds hold up to the
//! rounding of summed lengths: a route summed from its other end may differ
//! in the last bits, about 1e-15 relative.)

use rayon::prelude::*;

use super::routes::{Adjacency, ShortestPathTree};
use super::Underlay;

/// Largest underlay (routers) whose diameter is computed exactly from every
/// source (the old limit of `underlay info`; 10,000 routers take a few
/// seconds).
pub const EXACT_DIAMETER_MAX_ROUTERS: usize = 10_000;

/// Most sources scanned by the bounded search above
/// [`EXACT_DIAMETER_MAX_ROUTERS`] routers.
pub const BOUNDED_MAX_SOURCES: usize = 256;

/// Sources scanned together (in parallel) by the bounded search; fixed, so
/// that the result does not depend on the number of threads.
const BATCH: usize = 16;

/// The diameter of an underlay, exact or bounded.
#[derive(Debug, Clone, PartialEq)]
pub struct Diameter {
    /// The longest route found, km (the diameter when [`Self::km_upper`]
    /// equals it).
    pub km: f64,
    /// An upper bound on the longest route, km (`== km` when exact).
    pub km_upper: f64,
    /// The most hops of a route found (exact when [`Self::all_pairs`],
    /// else a lower bound).
    pub hops: u32,
    /// Sources whose shortest-path tree was computed.
    pub sources: usize,
    /// Routers of the underlay.
    pub routers: usize,
    /// Whether every source was scanned (then `km` and `hops` are exact).
    pub all_pairs: bool,
}

impl Diameter {
    /// Whether [`Self::km`] is the exact diameter.
    pub fn km_exact(&self) -> bool {
        self.km_upper <= self.km
    }
}

/// The diameter of `underlay`: exact up to [`EXACT_DIAMETER_MAX_ROUTERS`]
/// routers, bounded above (see the module documentation).
pub fn diameter(underlay: &Underlay) -> Diameter {
    diameter_with(underlay, EXACT_DIAMETER_MAX_ROUTERS, BOUNDED_MAX_SOURCES)
}

/// [`diameter`] with the exact limit and the source budget as parameters
/// (for tests).
pub fn diameter_with(underlay: &Underlay, exact_max: usize, max_sources: usize) -> Diameter {
    let adj = Adjacency::new(underlay);
    let n = adj.router_count();
    if n <= exact_max {
        let (km, hops) = eccentricities(&adj, &(0..n).collect::<Vec<_>>());
        return Diameter {
            km,
            km_upper: km,
            hops,
            sources: n,
            routers: n,
            all_pairs: true,
        };
    }
    bounded(&adj, max_sources.max(3))
}

/// The largest eccentricity (km) and hop count over `sources`, in parallel.
fn eccentricities(adj: &Adjacency, sources: &[usize]) -> (f64, u32) {
    sources
        .par_iter()
        .fold(
            || (ShortestPathTree::default(), 0.0f64, 0u32),
            |(mut t, km, h), &s| {
                t.run(adj, s);
                let (e, eh) = t.eccentricity();
                (t, km.max(e), h.max(eh))
            },
        )
        .map(|(_, km, h)| (km, h))
        .reduce(|| (0.0, 0), |a, b| (a.0.max(b.0), a.1.max(b.1)))
}

/// The router farthest from the tree's source (lowest index among ties).
fn farthest(t: &ShortestPathTree) -> usize {
    let mut best = t.source;
    for &v in &t.order {
        let v = v as usize;
        if t.length_km[v] > t.length_km[best] || (t.length_km[v] == t.length_km[best] && v < best) {
            best = v;
        }
    }
    best
}

fn bounded(adj: &Adjacency, max_sources: usize) -> Diameter {
    let n = adj.router_count();
    let t0 = ShortestPathTree::of(adj, 0);
    let (mut lb, mut hops) = t0.eccentricity();
    let a = farthest(&t0);
    let ta = ShortestPathTree::of(adj, a);
    let (e, h) = ta.eccentricity();
    (lb, hops) = (lb.max(e), hops.max(h));
    // The router in the middle of the route from a to its farthest router.
    let b = farthest(&ta);
    let half = ta.length_km[b] / 2.0;
    let (mut u, mut v) = (b, b);
    while v != a {
        if ta.length_km[v] >= half {
            u = v;
        }
        let link = ta.pred_link[v] as usize;
        v = adj.other_end(link, v);
    }
    let tu = ShortestPathTree::of(adj, u);
    let (eu, h) = tu.eccentricity();
    (lb, hops) = (lb.max(eu), hops.max(h));
    let mut upper = 2.0 * eu;
    let mut sources = 3;
    let mut by_distance: Vec<usize> = (0..n).collect();
    by_distance.sort_by(|&x, &y| tu.length_km[y].total_cmp(&tu.length_km[x]).then(x.cmp(&y)));
    let mut next = 0;
    while next < n && sources < max_sources {
        let end = (next + BATCH).min(n).min(next + max_sources - sources);
        let (e, h) = eccentricities(adj, &by_distance[next..end]);
        (lb, hops) = (lb.max(e), hops.max(h));
        sources += end - next;
        next = end;
        // Every route between two routers not scanned is at most twice the
        // largest distance from u among them.
        let rest = by_distance.get(next).map_or(0.0, |&x| tu.length_km[x]);
        upper = upper.min(lb.max(2.0 * rest));
        if lb >= 2.0 * rest {
            upper = lb;
            break;
        }
    }
    Diameter {
        km: lb,
        km_upper: upper.max(lb),
        hops,
        sources,
        routers: n,
        all_pairs: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::underlay::synthetic::random_geometric;

    /// The bounded search brackets the exact diameter, and is exact when it
    /// may scan every source.
    #[test]
    fn bounded_search_brackets_the_exact_diameter() {
        for seed in 1..4 {
            let u =
                random_geometric(400, 2000.0, 160.0, 1e9, seed).unwrap_or_else(|e| panic!("{e}"));
            let exact = diameter_with(&u, usize::MAX, 0);
            assert!(exact.all_pairs && exact.km_exact());
            assert_eq!(exact.sources, 400);
            for budget in [3, 20, 1000] {
                let b = diameter_with(&u, 0, budget);
                assert!(!b.all_pairs);
                assert!(b.sources <= budget.max(3), "{} sources", b.sources);
                // Route lengths summed from the other end may differ in the
                // last bits.
                let tol = 1e-12 * exact.km;
                assert!(
                    b.km <= exact.km + tol && exact.km <= b.km_upper + tol,
                    "{b:?} vs {exact:?}"
                );
                assert!(b.hops <= exact.hops);
                if b.km_exact() {
                    assert!((b.km - exact.km).abs() <= tol, "{b:?} vs {exact:?}");
                }
            }
            // With every source allowed it converges.
            assert!(diameter_with(&u, 0, 1000).km_exact());
        }
    }

    /// A 20,000-router underlay (twice the old `underlay info` limit)
    /// loads and gets a bounded diameter in O(routers + links) memory.
    #[test]
    fn large_underlay_gets_bounds() {
        use crate::net::underlay::synthetic::radius_for_degree;
        let n = 20_000;
        let u = random_geometric(n, 4000.0, radius_for_degree(n, 4000.0, 5.0), 1e9, 2)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(u.node_count(), n);
        let d = diameter(&u);
        assert!(!d.all_pairs);
        assert_eq!(d.routers, n);
        assert!(d.sources <= BOUNDED_MAX_SOURCES);
        assert!(d.km > 0.0 && d.km <= d.km_upper && d.hops > 0, "{d:?}");
        // 4000 km square: no route is shorter than a fraction of the
        // diagonal, and the bound is within a factor 2 of what was found.
        assert!(d.km_upper <= 2.0 * d.km, "{d:?}");
    }
}
