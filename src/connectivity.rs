//! The connectivity graph `Gc`: for every ordered pair of silos, the route
//! over the underlay, its latency `l(i,j)` (ms) and its available bandwidth
//! `A(i,j)` (bit/s) (\[Marfoq20\] Sec. 2).
//!
//! Routes are shortest paths by length (km) over the underlay's core links,
//! computed with Dijkstra from every silo (ties broken towards the lower
//! router index, so results are deterministic). Two path models turn a route
//! into `(l, A)`:
//!
//! * [`PathModel::Paper`]: exactly as the published numbers were produced
//!   (the authors' code for \[Marfoq20\] Sec. 2.2 and App. G.1): `l = 0.0085 ms/km * length + 4 ms` (the 4 ms once
//!   per path), `A = core capacity / hops`.
//! * [`PathModel::Bottleneck`]: same latency, `A = min capacity along the route`.
//!
//! By default every underlay router hosts exactly one silo, silo `i` on
//! router `i`. [`Connectivity::with_placement`] attaches silos to routers
//! through a [`SiloPlacement`] (several silos per router); silos on the same
//! router have an empty route: `l = 0` ms and `A = inf` (see
//! [`crate::placement`]). Routes and `(l, A)` are stored per router pair,
//! so memory grows with the number of routers, not silos.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::placement::SiloPlacement;
use crate::underlay::Underlay;
use crate::units::{BitsPerSec, Km, Ms};

/// How a route's latency and available bandwidth are derived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PathModel {
    /// `A = core capacity / hops` (the paper's model).
    #[default]
    Paper,
    /// `A = min capacity along the route`.
    Bottleneck,
}

impl PathModel {
    /// Every path model, in the order they are listed to users.
    pub const ALL: [PathModel; 2] = [PathModel::Paper, PathModel::Bottleneck];

    /// The model's name (`paper`, `bottleneck`), as parsed by [`str::parse`].
    pub fn name(self) -> &'static str {
        match self {
            PathModel::Paper => "paper",
            PathModel::Bottleneck => "bottleneck",
        }
    }
}

impl fmt::Display for PathModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown path model name.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("unknown path model `{0}`; expected paper or bottleneck")]
pub struct UnknownPathModel(pub String);

impl FromStr for PathModel {
    type Err = UnknownPathModel;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PathModel::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownPathModel(s.to_string()))
    }
}

/// Parameters of the connectivity graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectivityOptions {
    /// Path model.
    pub model: PathModel,
    /// Propagation delay per km, ms/km (paper: 0.0085).
    pub ms_per_km: f64,
    /// Fixed latency added once per path, ms (paper: 4).
    pub per_path_ms: Ms,
    /// When set, every core link gets this capacity (bit/s) instead of the file's.
    pub core_capacity_bps: Option<BitsPerSec>,
}

impl Default for ConnectivityOptions {
    fn default() -> Self {
        ConnectivityOptions {
            model: PathModel::Paper,
            ms_per_km: 0.0085,
            per_path_ms: 4.0,
            core_capacity_bps: None,
        }
    }
}

/// All-pairs routes with their latency (ms) and available bandwidth (bit/s).
#[derive(Debug, Clone, Serialize)]
pub struct Connectivity {
    /// Number of routers; the matrices below are indexed by router.
    n: usize,
    /// Router of every silo.
    placement: SiloPlacement,
    /// `l(i,j)`, ms, row-major `i * n + j`.
    latency_ms: Vec<Ms>,
    /// `A(i,j)`, bit/s, row-major. Infinite on the diagonal.
    bandwidth_bps: Vec<BitsPerSec>,
    /// Route length, km.
    length_km: Vec<Km>,
    /// Number of core links on the route.
    hops: Vec<u32>,
    /// Predecessor link on the shortest-path tree of each source, `u32::MAX` for none.
    pred_link: Vec<u32>,
    /// For each core link, its endpoints (copied from the underlay).
    link_ends: Vec<(usize, usize)>,
    /// Effective capacity of each core link, bit/s.
    link_capacity: Vec<BitsPerSec>,
    options: ConnectivityOptions,
}

#[derive(Copy, Clone, PartialEq)]
struct QueueItem {
    dist: f64,
    hops: u32,
    node: usize,
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

impl Connectivity {
    /// Builds the connectivity graph of `underlay` (which must be connected,
    /// as [`Underlay`] guarantees), one silo per router.
    pub fn new(underlay: &Underlay, options: &ConnectivityOptions) -> Connectivity {
        Self::with_placement(
            underlay,
            options,
            SiloPlacement::one_per_router(underlay.node_count()),
        )
    }

    /// As [`Connectivity::new`], with silos attached to routers by
    /// `placement` (whose router count must be the underlay's).
    pub fn with_placement(
        underlay: &Underlay,
        options: &ConnectivityOptions,
        placement: SiloPlacement,
    ) -> Connectivity {
        let n = underlay.node_count();
        assert_eq!(
            placement.router_count(),
            n,
            "placement built for another underlay"
        );
        let adjacency = underlay.neighbours();
        let link_ends: Vec<(usize, usize)> = underlay.links.iter().map(|l| (l.a, l.b)).collect();
        let link_capacity: Vec<f64> = underlay
            .links
            .iter()
            .map(|l| options.core_capacity_bps.unwrap_or(l.capacity_bps))
            .collect();
        let mut c = Connectivity {
            n,
            placement,
            latency_ms: vec![0.0; n * n],
            bandwidth_bps: vec![f64::INFINITY; n * n],
            length_km: vec![f64::INFINITY; n * n],
            hops: vec![0; n * n],
            pred_link: vec![u32::MAX; n * n],
            link_ends,
            link_capacity,
            options: options.clone(),
        };
        for s in 0..n {
            c.dijkstra(s, underlay, &adjacency);
        }
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    c.fill_pair(i, j);
                }
            }
        }
        c
    }

    fn dijkstra(&mut self, s: usize, underlay: &Underlay, adj: &[Vec<(usize, usize)>]) {
        let n = self.n;
        let row = s * n;
        self.length_km[row + s] = 0.0;
        let mut heap = BinaryHeap::new();
        heap.push(QueueItem {
            dist: 0.0,
            hops: 0,
            node: s,
        });
        let mut done = vec![false; n];
        while let Some(QueueItem { dist, hops, node }) = heap.pop() {
            if done[node] {
                continue;
            }
            done[node] = true;
            for &(next, link) in &adj[node] {
                let d = dist + underlay.links[link].length_km;
                let h = hops + 1;
                let cur = self.length_km[row + next];
                let better = d < cur || (d == cur && h < self.hops[row + next]);
                if !done[next] && better {
                    self.length_km[row + next] = d;
                    self.hops[row + next] = h;
                    self.pred_link[row + next] = link as u32;
                    heap.push(QueueItem {
                        dist: d,
                        hops: h,
                        node: next,
                    });
                }
            }
        }
    }

    fn fill_pair(&mut self, i: usize, j: usize) {
        let k = i * self.n + j;
        let o = &self.options;
        self.latency_ms[k] = o.ms_per_km * self.length_km[k] + o.per_path_ms;
        self.bandwidth_bps[k] = match o.model {
            PathModel::Paper => {
                let cap = self
                    .route_r(i, j)
                    .iter()
                    .map(|&l| self.link_capacity[l])
                    .fold(f64::INFINITY, f64::min);
                // Paper: one core capacity divided by the hop count. With
                // heterogeneous capacities we use the route's smallest one.
                cap / self.hops[k] as f64
            }
            PathModel::Bottleneck => self
                .route_r(i, j)
                .iter()
                .map(|&l| self.link_capacity[l])
                .fold(f64::INFINITY, f64::min),
        };
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.placement.silo_count()
    }

    /// Number of routers of the underlay.
    pub fn router_count(&self) -> usize {
        self.n
    }

    /// Router of every silo.
    pub fn placement(&self) -> &SiloPlacement {
        &self.placement
    }

    /// Row-major router-pair index of the silo pair `(i, j)`.
    fn pair(&self, i: usize, j: usize) -> usize {
        self.placement.router(i) * self.n + self.placement.router(j)
    }

    /// Latency `l(i,j)` of the route from silo `i` to silo `j`, ms (0 for
    /// `i == j` and for silos on the same router).
    pub fn latency_ms(&self, i: usize, j: usize) -> Ms {
        self.latency_ms[self.pair(i, j)]
    }

    /// Available bandwidth `A(i,j)`, bit/s (infinite for `i == j` and for
    /// silos on the same router).
    pub fn bandwidth_bps(&self, i: usize, j: usize) -> BitsPerSec {
        self.bandwidth_bps[self.pair(i, j)]
    }

    /// Route length, km.
    pub fn length_km(&self, i: usize, j: usize) -> Km {
        self.length_km[self.pair(i, j)]
    }

    /// Number of core links on the route from `i` to `j`.
    pub fn hops(&self, i: usize, j: usize) -> u32 {
        self.hops[self.pair(i, j)]
    }

    /// Core links (indices into `Underlay::links`) of the route from silo
    /// `i` to silo `j`, in order from `i`.
    pub fn route(&self, i: usize, j: usize) -> Vec<usize> {
        self.route_r(self.placement.router(i), self.placement.router(j))
    }

    /// Core links of the route between routers `a` and `b`.
    fn route_r(&self, a: usize, b: usize) -> Vec<usize> {
        let mut links = Vec::with_capacity(self.hops[a * self.n + b] as usize);
        let mut v = b;
        while v != a {
            let l = self.pred_link[a * self.n + v];
            if l == u32::MAX {
                break;
            }
            links.push(l as usize);
            let (x, y) = self.link_ends[l as usize];
            v = if x == v { y } else { x };
        }
        links.reverse();
        links
    }

    /// Routers visited by the route from silo `i` to silo `j`, both ends
    /// included (router indices).
    pub fn route_routers(&self, i: usize, j: usize) -> Vec<usize> {
        let start = self.placement.router(i);
        let mut nodes = vec![start];
        let mut v = start;
        for l in self.route(i, j) {
            let (a, b) = self.link_ends[l];
            v = if a == v { b } else { a };
            nodes.push(v);
        }
        nodes
    }

    /// Effective capacity of core link `l`, bit/s.
    pub fn link_capacity_bps(&self, l: usize) -> BitsPerSec {
        self.link_capacity[l]
    }

    /// The options this graph was built with.
    pub fn options(&self) -> &ConnectivityOptions {
        &self.options
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::underlay::LoadOptions;

    #[test]
    fn path_model_names_round_trip_and_unknown_lists_choices() {
        for m in PathModel::ALL {
            assert_eq!(m.to_string().parse::<PathModel>(), Ok(m));
        }
        let err = "shortest".parse::<PathModel>().unwrap_err().to_string();
        assert!(err.contains("paper or bottleneck"), "{err}");
    }

    /// A path a - b - c with a slow long shortcut a - c.
    fn triangle() -> Underlay {
        let g =
            "graph [ node [ id 1 label \"a\" ] node [ id 2 label \"b\" ] node [ id 3 label \"c\" ]
            edge [ source 1 target 2 distance 100 capacity 1e9 ]
            edge [ source 2 target 3 distance 200 capacity 4e9 ]
            edge [ source 1 target 3 distance 1000 capacity 1e10 ] ]";
        Underlay::from_gml_str(g, "t.gml", &LoadOptions::default()).unwrap()
    }

    #[test]
    fn paper_model_latency_and_bandwidth() {
        let c = Connectivity::new(&triangle(), &ConnectivityOptions::default());
        assert_eq!(c.hops(0, 2), 2);
        assert_eq!(c.length_km(0, 2), 300.0);
        assert!((c.latency_ms(0, 2) - (0.0085 * 300.0 + 4.0)).abs() < 1e-12);
        // min capacity on the route (1e9) / 2 hops.
        assert_eq!(c.bandwidth_bps(0, 2), 0.5e9);
        assert_eq!(c.route_routers(2, 0), vec![2, 1, 0]);
        assert_eq!(c.route(0, 2).len(), 2);
        assert_eq!(c.bandwidth_bps(1, 2), 4e9);
    }

    #[test]
    fn bottleneck_and_core_override() {
        let opts = ConnectivityOptions {
            model: PathModel::Bottleneck,
            core_capacity_bps: Some(2e9),
            ..Default::default()
        };
        let c = Connectivity::new(&triangle(), &opts);
        assert_eq!(c.bandwidth_bps(0, 2), 2e9);
        assert_eq!(c.link_capacity_bps(2), 2e9);
    }

    #[test]
    fn placement_maps_silos_to_router_pairs() {
        let u = triangle();
        let base = Connectivity::new(&u, &ConnectivityOptions::default());
        // Silos 0,1 on router 2; silo 2 on router 0; router 1 has none.
        let p = SiloPlacement::explicit(vec![2, 2, 0], 3).unwrap();
        let c = Connectivity::with_placement(&u, &ConnectivityOptions::default(), p);
        assert_eq!((c.silo_count(), c.router_count()), (3, 3));
        // Same router: access links only.
        assert_eq!(c.latency_ms(0, 1), 0.0);
        assert!(c.bandwidth_bps(1, 0).is_infinite());
        assert!(c.route(0, 1).is_empty());
        assert_eq!(c.route_routers(0, 1), vec![2]);
        assert_eq!(c.hops(0, 1), 0);
        // Different routers: the router pair's route.
        for (si, sj, ri, rj) in [(0, 2, 2, 0), (2, 1, 0, 2)] {
            assert_eq!(c.latency_ms(si, sj), base.latency_ms(ri, rj));
            assert_eq!(c.bandwidth_bps(si, sj), base.bandwidth_bps(ri, rj));
            assert_eq!(c.route(si, sj), base.route(ri, rj));
            assert_eq!(c.route_routers(si, sj), base.route_routers(ri, rj));
        }
    }
}
