//! The connectivity graph `Gc`: for every ordered pair of silos, the route
//! over the underlay, its latency `l(i,j)` (ms) and its available bandwidth
//! `A(i,j)` (bit/s) (\[Marfoq20\] Sec. 2).
//!
//! Routes are shortest paths by length (km) over the underlay's core links,
//! computed with Dijkstra from every router ([`crate::net::underlay::routes`]:
//! ties broken towards fewer hops, then the lower router index, so results
//! are deterministic). Two path models turn a route
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
//! [`crate::net::placement`]). Route lengths and `A` are stored per router pair
//! (16 bytes each), so memory grows with the number of routers, not silos;
//! routes themselves are read from per-source shortest-path trees computed
//! when first asked for.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use serde::Serialize;

use crate::net::placement::SiloPlacement;
use crate::net::underlay::matrix::MeasuredPairs;
use crate::net::underlay::routes::{Adjacency, ShortestPathTree, NO_LINK};
use crate::net::underlay::Underlay;
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
///
/// Memory: a dense router-by-router `f64` table of route lengths (the
/// latency is computed from the length on demand, with the same
/// expression) and the available bandwidths, 3 bytes per router pair
/// (bottleneck capacity class and hop count, exact) when the underlay has
/// at most 255 distinct link capacities and 65,536 routers, else one more
/// `f64` table: 11 or 16 bytes per router pair. Routes and hop
/// counts come from the shortest-path tree of their source router, computed
/// on first use and kept (8 bytes per router and source used). Clones share
/// all of it.
#[derive(Debug, Clone)]
pub struct Connectivity {
    /// Number of routers; the tables below are indexed by router.
    n: usize,
    /// Router of every silo.
    placement: SiloPlacement,
    /// Route length, km, row-major `i * n + j` (a `Vec` in an `Arc`:
    /// turning it into an `Arc<[f64]>` would copy it).
    length_km: Arc<Vec<Km>>,
    /// `A(i,j)`, bit/s, row-major. Infinite on the diagonal.
    bandwidth_bps: Arc<BandwidthTable>,
    /// The underlay's adjacency, for the trees computed on demand.
    adjacency: Arc<Adjacency>,
    /// Per source router, its shortest-path tree once computed.
    trees: Arc<[OnceLock<RouteTree>]>,
    /// For each core link, its endpoints (copied from the underlay).
    link_ends: Arc<[(usize, usize)]>,
    /// Effective capacity of each core link, bit/s.
    link_capacity: Arc<[BitsPerSec]>,
    /// Measured site-to-site latencies when the underlay is a latency
    /// matrix ([`crate::net::underlay::matrix`]): `l(i,j)` comes from there (no
    /// routes, no per-path constant) and every pair of sites is its own
    /// one-link route (link [`MeasuredPairs::link_index`]).
    measured: Option<Arc<MeasuredPairs>>,
    options: ConnectivityOptions,
}

/// `A(i,j)` of every router pair, bit/s.
#[derive(Debug)]
enum BandwidthTable {
    /// One `f64` per pair, row-major (latency matrices; more than 256
    /// distinct link capacities; more than 65,536 routers).
    Dense(Vec<BitsPerSec>),
    /// The same values from 3 bytes per pair instead of 8 (issue 28: 300 MB
    /// instead of 800 MB at 10,000 routers), exactly: every route's
    /// bottleneck is one of a few link capacities (`classes`, sorted, with
    /// `inf` for the diagonal and unreached routers), and `A(i,j)` is
    /// `classes[class] / hops` (paper model) or `classes[class]`
    /// (bottleneck model), the division done at lookup as
    /// [`fill_row`] does it.
    Compact {
        classes: Vec<BitsPerSec>,
        class: Vec<u8>,
        hops: Vec<u16>,
        divide_by_hops: bool,
    },
}

impl BandwidthTable {
    #[inline]
    fn get(&self, k: usize) -> BitsPerSec {
        match self {
            BandwidthTable::Dense(v) => v[k],
            BandwidthTable::Compact {
                classes,
                class,
                hops,
                divide_by_hops,
            } => {
                let c = classes[class[k] as usize];
                if *divide_by_hops && c.is_finite() {
                    c / hops[k] as f64
                } else {
                    c
                }
            }
        }
    }
}

/// The sorted distinct link capacities plus `inf`, when there are at most
/// 256 of them (a class fits a byte).
fn capacity_classes(link_capacity: &[BitsPerSec]) -> Option<Vec<BitsPerSec>> {
    let mut classes: Vec<BitsPerSec> = link_capacity.to_vec();
    classes.push(f64::INFINITY);
    classes.sort_by(|a, b| a.total_cmp(b));
    classes.dedup_by(|a, b| a.to_bits() == b.to_bits());
    (classes.len() <= 256).then_some(classes)
}

/// [`fill_row`] into the compact table: the bottleneck's class and the hop
/// count of every route from `tree.source` (the diagonal: class `inf`).
fn fill_compact_row(
    tree: &ShortestPathTree,
    adjacency: &Adjacency,
    link_capacity: &[BitsPerSec],
    classes: &[BitsPerSec],
    min_cap: &mut Vec<BitsPerSec>,
    class_row: &mut [u8],
    hops_row: &mut [u16],
) {
    carry_bottlenecks(tree, adjacency, link_capacity, min_cap);
    for (j, (c, h)) in class_row.iter_mut().zip(hops_row.iter_mut()).enumerate() {
        let cap = if j == tree.source {
            f64::INFINITY
        } else {
            min_cap[j]
        };
        // Every bottleneck is a link capacity or inf: found exactly.
        let k = classes
            .binary_search_by(|x| x.total_cmp(&cap))
            .unwrap_or_else(|_| unreachable!("a route's bottleneck is a link capacity"));
        *c = k as u8;
        // Fewer than 65,536 routers: a route has at most 65,535 hops.
        *h = tree.hops[j] as u16;
    }
}

/// `min_cap[v]`: the smallest link capacity (bit/s) on the route from
/// `tree.source` to every router `v`, carried down the tree in settling
/// order (each router after its predecessor; `inf` for the source and
/// unreached routers).
fn carry_bottlenecks(
    tree: &ShortestPathTree,
    adjacency: &Adjacency,
    link_capacity: &[BitsPerSec],
    min_cap: &mut Vec<BitsPerSec>,
) {
    min_cap.clear();
    min_cap.resize(tree.length_km.len(), f64::INFINITY);
    for &v in tree.order.iter().skip(1) {
        let v = v as usize;
        let link = tree.pred_link[v] as usize;
        let parent = adjacency.other_end(link, v);
        min_cap[v] = min_cap[parent].min(link_capacity[link]);
    }
}

/// Up to this many routers the route trees of the setup's Dijkstras are
/// kept (8 bytes per router pair: 33.5 MB at 2,048); the flow model reads
/// its routes from them instead of running each source's Dijkstra again.
const KEEP_TREES_MAX_ROUTERS: usize = 2048;

/// The part of a source's shortest-path tree that routes need.
#[derive(Debug)]
struct RouteTree {
    /// Core links on the route from the source to each router.
    hops: Box<[u32]>,
    /// Last link of the route from the source ([`NO_LINK`] for none).
    pred_link: Box<[u32]>,
}

impl ConnectivityOptions {
    /// Latency `l` of a route of `length_km` km between two different
    /// routers, ms: `ms_per_km * length + per_path_ms`.
    pub fn route_latency_ms(&self, length_km: Km) -> Ms {
        self.ms_per_km * length_km + self.per_path_ms
    }
}

/// Fills row `tree.source` of the length and bandwidth tables from its
/// shortest-path tree: the smallest link capacity on every route is carried
/// down the tree in settling order (each router after its predecessor), so
/// a row costs O(routers) rather than a walk along every route.
fn fill_row(
    tree: &ShortestPathTree,
    adjacency: &Adjacency,
    link_capacity: &[BitsPerSec],
    model: PathModel,
    min_cap: &mut Vec<BitsPerSec>,
    lengths: &mut [Km],
    bandwidths: &mut [BitsPerSec],
) {
    lengths.copy_from_slice(&tree.length_km);
    carry_bottlenecks(tree, adjacency, link_capacity, min_cap);
    for (j, bw) in bandwidths.iter_mut().enumerate() {
        if j == tree.source {
            continue;
        }
        *bw = match model {
            // Paper: one core capacity divided by the hop count. With
            // heterogeneous capacities we use the route's smallest one.
            PathModel::Paper => min_cap[j] / tree.hops[j] as f64,
            PathModel::Bottleneck => min_cap[j],
        };
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
    ///
    /// One Dijkstra per router (in parallel); the available bandwidth of
    /// every route is read off its source's tree in O(routers).
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
        if let Some(m) = &underlay.measured {
            return Self::measured(underlay, m, options, placement);
        }
        let adjacency = Adjacency::new(underlay);
        let link_ends: Vec<(usize, usize)> = underlay.links.iter().map(|l| (l.a, l.b)).collect();
        let link_capacity: Vec<f64> = underlay
            .links
            .iter()
            .map(|l| options.core_capacity_bps.unwrap_or(l.capacity_bps))
            .collect();
        let mut length_km = vec![f64::INFINITY; n * n];
        // The route trees of the setup's Dijkstras are kept on small
        // underlays (the flow model reads routes from them; 8 bytes per
        // router pair), else recomputed on first use.
        let trees: Arc<[OnceLock<RouteTree>]> = (0..n).map(|_| OnceLock::new()).collect();
        let keep_trees = n <= KEEP_TREES_MAX_ROUTERS;
        let keep = |s: usize, tree: &ShortestPathTree| {
            if keep_trees {
                // Each source is visited once: the cell is empty.
                let _ = trees[s].set(RouteTree {
                    hops: tree.hops.clone().into_boxed_slice(),
                    pred_link: tree.pred_link.clone().into_boxed_slice(),
                });
            }
        };
        let classes = capacity_classes(&link_capacity).filter(|_| n <= 1 << 16);
        if let (Some(classes), true) = (classes, n > 0) {
            let mut class = vec![0u8; n * n];
            let mut hops = vec![0u16; n * n];
            length_km
                .par_chunks_mut(n)
                .zip(class.par_chunks_mut(n))
                .zip(hops.par_chunks_mut(n))
                .enumerate()
                .for_each_init(
                    || (ShortestPathTree::default(), Vec::new()),
                    |(tree, min_cap), (s, ((lengths, class_row), hops_row))| {
                        tree.run(&adjacency, s);
                        keep(s, tree);
                        lengths.copy_from_slice(&tree.length_km);
                        fill_compact_row(
                            tree,
                            &adjacency,
                            &link_capacity,
                            &classes,
                            min_cap,
                            class_row,
                            hops_row,
                        );
                    },
                );
            let bandwidth_bps = BandwidthTable::Compact {
                classes,
                class,
                hops,
                divide_by_hops: options.model == PathModel::Paper,
            };
            return Connectivity {
                n,
                placement,
                length_km: Arc::new(length_km),
                bandwidth_bps: Arc::new(bandwidth_bps),
                adjacency: Arc::new(adjacency),
                trees,
                link_ends: link_ends.into(),
                link_capacity: link_capacity.into(),
                measured: None,
                options: options.clone(),
            };
        }
        let mut bandwidth_bps = vec![f64::INFINITY; n * n];
        if n > 0 {
            length_km
                .par_chunks_mut(n)
                .zip(bandwidth_bps.par_chunks_mut(n))
                .enumerate()
                .for_each_init(
                    || (ShortestPathTree::default(), Vec::new()),
                    |(tree, min_cap), (s, (lengths, bandwidths))| {
                        tree.run(&adjacency, s);
                        keep(s, tree);
                        fill_row(
                            tree,
                            &adjacency,
                            &link_capacity,
                            options.model,
                            min_cap,
                            lengths,
                            bandwidths,
                        );
                    },
                );
        }
        Connectivity {
            n,
            placement,
            length_km: Arc::new(length_km),
            bandwidth_bps: Arc::new(BandwidthTable::Dense(bandwidth_bps)),
            adjacency: Arc::new(adjacency),
            trees,
            link_ends: link_ends.into(),
            link_capacity: link_capacity.into(),
            measured: None,
            options: options.clone(),
        }
    }

    /// The connectivity of an underlay read from a latency matrix: `l(i,j)`
    /// and `A(i,j)` from the matrices (`A` from `options.core_capacity_bps`
    /// when given and no bandwidth matrix was), one link per pair of sites.
    fn measured(
        underlay: &Underlay,
        m: &Arc<MeasuredPairs>,
        options: &ConnectivityOptions,
        placement: SiloPlacement,
    ) -> Connectivity {
        let n = m.n;
        let mut bandwidth_bps = m.bandwidth_bps.clone();
        if let (false, Some(c)) = (m.bandwidth_measured, options.core_capacity_bps) {
            for (k, bw) in bandwidth_bps.iter_mut().enumerate() {
                if k / n != k % n {
                    *bw = c;
                }
            }
        }
        let link_ends: Vec<(usize, usize)> = underlay.links.iter().map(|l| (l.a, l.b)).collect();
        let link_capacity: Vec<f64> = underlay.links.iter().map(|l| l.capacity_bps).collect();
        Connectivity {
            n,
            placement,
            length_km: Arc::new(Vec::new()),
            bandwidth_bps: Arc::new(BandwidthTable::Dense(bandwidth_bps)),
            adjacency: Arc::new(Adjacency::new(underlay)),
            trees: Vec::new().into(),
            link_ends: link_ends.into(),
            link_capacity: link_capacity.into(),
            measured: Some(Arc::clone(m)),
            options: options.clone(),
        }
    }

    /// Whether `l(i,j)` and `A(i,j)` are measured (a latency matrix).
    pub fn is_measured(&self) -> bool {
        self.measured.is_some()
    }

    /// The route tree of source router `a`, computed on first use.
    fn tree(&self, a: usize) -> &RouteTree {
        self.trees[a].get_or_init(|| {
            let t = ShortestPathTree::of(&self.adjacency, a);
            RouteTree {
                hops: t.hops.into_boxed_slice(),
                pred_link: t.pred_link.into_boxed_slice(),
            }
        })
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
    #[inline]
    fn pair(&self, i: usize, j: usize) -> usize {
        self.placement.router(i) * self.n + self.placement.router(j)
    }

    /// Latency `l(i,j)` of the route from silo `i` to silo `j`, ms (0 for
    /// `i == j` and for silos on the same router).
    #[inline]
    pub fn latency_ms(&self, i: usize, j: usize) -> Ms {
        let (a, b) = (self.placement.router(i), self.placement.router(j));
        if a == b {
            return 0.0;
        }
        if let Some(m) = &self.measured {
            return m.latency(a, b);
        }
        self.options
            .route_latency_ms(self.length_km[a * self.n + b])
    }

    /// Available bandwidth `A(i,j)`, bit/s (infinite for `i == j` and for
    /// silos on the same router).
    #[inline]
    pub fn bandwidth_bps(&self, i: usize, j: usize) -> BitsPerSec {
        self.bandwidth_bps.get(self.pair(i, j))
    }

    /// Route length, km (for a latency matrix, the latency over the
    /// options' ms per km: a display figure).
    pub fn length_km(&self, i: usize, j: usize) -> Km {
        if self.measured.is_some() {
            return self.latency_ms(i, j) / self.options.ms_per_km;
        }
        self.length_km[self.pair(i, j)]
    }

    /// Number of core links on the route from `i` to `j`.
    ///
    /// The first call for a source router computes (and keeps) its
    /// shortest-path tree, O(links log routers).
    pub fn hops(&self, i: usize, j: usize) -> u32 {
        let (a, b) = (self.placement.router(i), self.placement.router(j));
        if self.measured.is_some() {
            return u32::from(a != b);
        }
        self.tree(a).hops[b]
    }

    /// Core links (indices into `Underlay::links`) of the route from silo
    /// `i` to silo `j`, in order from `i`. The first call for a source
    /// router computes (and keeps) its shortest-path tree.
    pub fn route(&self, i: usize, j: usize) -> Vec<usize> {
        self.route_r(self.placement.router(i), self.placement.router(j))
    }

    /// Core links of the route between routers `a` and `b`.
    fn route_r(&self, a: usize, b: usize) -> Vec<usize> {
        if let Some(m) = &self.measured {
            return if a == b {
                Vec::new()
            } else {
                vec![m.link_index(a, b)]
            };
        }
        let tree = self.tree(a);
        let mut links = Vec::with_capacity(tree.hops[b] as usize);
        let mut v = b;
        while v != a {
            let l = tree.pred_link[v];
            if l == NO_LINK {
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

    /// Effective capacity of core link `l`, bit/s (for a latency matrix,
    /// the smaller direction's `A`; see [`Self::link_capacity_towards`]).
    pub fn link_capacity_bps(&self, l: usize) -> BitsPerSec {
        self.link_capacity[l]
    }

    /// Capacity of core link `l` in the direction from router `from` to
    /// router `to`, bit/s: the link's capacity, or for a latency matrix the
    /// measured `A(from, to)` (directions may differ).
    pub fn link_capacity_towards(&self, l: usize, from: usize, to: usize) -> BitsPerSec {
        match &self.measured {
            Some(_) => self.bandwidth_bps.get(from * self.n + to),
            None => self.link_capacity[l],
        }
    }

    /// The options this graph was built with.
    pub fn options(&self) -> &ConnectivityOptions {
        &self.options
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::underlay::LoadOptions;

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

    /// The route trees kept from the setup are the ones a fresh Dijkstra
    /// gives (what [`Connectivity::tree`] computed on first use before).
    #[test]
    fn kept_route_trees_are_fresh_dijkstra_trees() {
        for u in [
            triangle(),
            crate::net::scenario::load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap(),
        ] {
            let c = Connectivity::new(&u, &ConnectivityOptions::default());
            for a in 0..u.node_count() {
                assert!(c.trees[a].get().is_some(), "tree {a} not kept");
                let fresh = ShortestPathTree::of(&c.adjacency, a);
                let kept = c.tree(a);
                assert_eq!(&*kept.hops, fresh.hops.as_slice());
                assert_eq!(&*kept.pred_link, fresh.pred_link.as_slice());
            }
        }
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

    /// The compact bandwidth table gives, bit for bit, the dense table of
    /// [`fill_row`] (the path before issue 28), on paper underlays with
    /// both path models and with heterogeneous link capacities.
    #[test]
    fn compact_bandwidths_equal_the_dense_table() {
        let dir = crate::net::builtin::paper_underlays_dir();
        let load = LoadOptions {
            disconnected: crate::net::underlay::Disconnected::LargestComponent,
            ..LoadOptions::default()
        };
        for name in ["gaia", "ebone", "tiscali", "geantdistance"] {
            let mut u = Underlay::load(&dir.join(format!("{name}.gml")), &load).unwrap();
            let caps = [1e9, 2.5e9, 10e9, 40e9, 155e6];
            for (k, l) in u.links.iter_mut().enumerate() {
                if k % 3 == 0 {
                    l.capacity_bps = caps[k % caps.len()];
                }
            }
            for model in PathModel::ALL {
                let options = ConnectivityOptions {
                    model,
                    ..ConnectivityOptions::default()
                };
                let c = Connectivity::new(&u, &options);
                assert!(matches!(*c.bandwidth_bps, BandwidthTable::Compact { .. }));
                let n = u.node_count();
                let adjacency = Adjacency::new(&u);
                let link_capacity: Vec<f64> = u.links.iter().map(|l| l.capacity_bps).collect();
                let (mut tree, mut min_cap) = (ShortestPathTree::default(), Vec::new());
                let (mut lengths, mut dense) = (vec![0.0; n], vec![f64::INFINITY; n]);
                for s in 0..n {
                    tree.run(&adjacency, s);
                    dense.fill(f64::INFINITY);
                    fill_row(
                        &tree,
                        &adjacency,
                        &link_capacity,
                        model,
                        &mut min_cap,
                        &mut lengths,
                        &mut dense,
                    );
                    for (j, want) in dense.iter().enumerate() {
                        assert_eq!(
                            c.bandwidth_bps(s, j).to_bits(),
                            want.to_bits(),
                            "{name} {model} ({s}, {j})"
                        );
                        assert_eq!(c.length_km(s, j).to_bits(), lengths[j].to_bits());
                    }
                }
            }
        }
    }
}
