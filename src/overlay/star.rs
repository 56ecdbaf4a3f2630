//! STAR: the server-client overlay (\[Marfoq20\] Sec. 3, Table 1).
//!
//! The orchestrator sits at the silo of highest *load centrality* (Goh et
//! al. 2001, as networkx's `load_centrality`) with latency as the weight.
//! On the connectivity graph itself every direct route is a shortest path,
//! so every silo has load 0 there and the paper's choice falls back to the
//! first silo of the file (the centre of the published \[Marfoq20\] Table 3
//! values; the authors' code breaks the tie by file order). fedtopo therefore
//! offers several policies: load centrality over the *underlay*
//! (meaningful), the first silo (the paper's effective choice), the centre
//! that minimises the STAR cycle time, or a silo named by the user.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::graph::{Overlay, Protocol};
use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::timing;

/// The star centred on `center`: arcs both ways between the centre and every
/// other silo, run as the two-phase server-client protocol.
pub fn star(n: usize, center: usize) -> Overlay {
    let mut o = Overlay::from_edges(
        "star",
        n,
        &(0..n)
            .filter(|&i| i != center)
            .map(|i| (center, i))
            .collect::<Vec<_>>(),
    );
    o.protocol = Protocol::ServerClient { center };
    o
}

/// Load centrality of every router of `underlay`, with link latency
/// `ms_per_km * length_km` as the weight (unnormalised: the number of
/// shortest paths' worth of load through each node, endpoints excluded).
///
/// Algorithm: for each source, Dijkstra with all equal-length predecessors;
/// each node starts with one unit of load, which it splits equally among its
/// predecessors, farthest nodes first (Goh et al. 2001).
pub fn load_centrality(underlay: &Underlay, ms_per_km: f64) -> Vec<f64> {
    let n = underlay.node_count();
    let adj = underlay.neighbours();
    let mut load = vec![0.0; n];
    for s in 0..n {
        let (order, preds) = shortest_path_dag(s, underlay, &adj, ms_per_km);
        let mut carried = vec![1.0; n];
        for &v in order.iter().rev() {
            if v == s {
                continue;
            }
            let share = carried[v] / preds[v].len().max(1) as f64;
            for &p in &preds[v] {
                carried[p] += share;
            }
        }
        for &v in &order {
            if v != s {
                load[v] += carried[v] - 1.0;
            }
        }
    }
    load
}

/// Dijkstra from `s`: nodes in order of distance, and all predecessors on
/// shortest paths (equal within a relative 1e-12).
fn shortest_path_dag(
    s: usize,
    underlay: &Underlay,
    adj: &[Vec<(usize, usize)>],
    ms_per_km: f64,
) -> (Vec<usize>, Vec<Vec<usize>>) {
    #[derive(PartialEq)]
    struct Item(f64, usize);
    impl Eq for Item {}
    impl Ord for Item {
        fn cmp(&self, o: &Self) -> Ordering {
            o.0.total_cmp(&self.0).then_with(|| o.1.cmp(&self.1))
        }
    }
    impl PartialOrd for Item {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    let n = underlay.node_count();
    let mut dist = vec![f64::INFINITY; n];
    let mut preds = vec![Vec::new(); n];
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    dist[s] = 0.0;
    let mut heap = BinaryHeap::from([Item(0.0, s)]);
    while let Some(Item(d, v)) = heap.pop() {
        if done[v] {
            continue;
        }
        done[v] = true;
        order.push(v);
        for &(w, link) in &adj[v] {
            let nd = d + ms_per_km * underlay.links[link].length_km;
            let tol = 1e-12 * nd.abs().max(1.0);
            if nd < dist[w] - tol {
                dist[w] = nd;
                preds[w] = vec![v];
                heap.push(Item(nd, w));
            } else if (nd - dist[w]).abs() <= tol && !done[w] && !preds[w].contains(&v) {
                preds[w].push(v);
            }
        }
    }
    (order, preds)
}

/// Index of the largest value; ties go to the lowest index (file order).
fn argmax_first(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate() {
        if v > values[best] + 1e-9 * values[best].abs().max(1.0) {
            best = i;
        }
    }
    best
}

/// The silo of highest load centrality over the underlay (ties: file order).
pub fn center_by_load(underlay: &Underlay, ms_per_km: f64) -> usize {
    argmax_first(&load_centrality(underlay, ms_per_km))
}

/// The centre whose STAR has the smallest cycle time (ties: file order).
///
/// O(n^2): [`timing::star_cycle_times`], the cycle time of [`star`] at
/// every centre.
pub fn center_fastest(model: &DelayModel) -> usize {
    let mut best = (f64::INFINITY, 0);
    for (c, t) in timing::star_cycle_times(model).into_iter().enumerate() {
        if t < best.0 {
            best = (t, c);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_shape() {
        let s = star(5, 2);
        assert_eq!(s.arc_count(), 8);
        assert_eq!(s.out_degree(2), 4);
        assert_eq!(s.in_degree(0), 1);
        assert_eq!(s.protocol, Protocol::ServerClient { center: 2 });
    }

    /// The O(n) STAR cycle time equals the one of the built overlay, and
    /// the fastest centre is the first with the least cycle time.
    #[test]
    fn star_cycle_time_at_matches_the_built_star() {
        use crate::net::scenario::{load_underlay, NetworkSpec};
        let u =
            load_underlay(Some("aws-gaia"), &Default::default()).unwrap_or_else(|e| panic!("{e}"));
        let model = NetworkSpec::default().delay_model(&u);
        let n = model.silo_count();
        let times: Vec<f64> = (0..n)
            .map(|c| {
                let built =
                    timing::cycle_time(&star(n, c), &model).unwrap_or_else(|e| panic!("{e}"));
                let fast = timing::star_cycle_time_at(&model, c);
                assert_eq!(fast.to_bits(), built.cycle_time_ms.to_bits(), "centre {c}");
                fast
            })
            .collect();
        let all = timing::star_cycle_times(&model);
        assert!(all
            .iter()
            .zip(&times)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
        let c = center_fastest(&model);
        assert!(times.iter().all(|&t| t >= times[c]));
        assert!(times[..c].iter().all(|&t| t > times[c]));
    }

    /// The tiled all-centre times equal the one-centre ones across tile
    /// edges (Exodus: 79 silos, two tiles; silos of unequal compute).
    #[test]
    fn star_cycle_times_equal_one_centre_at_a_time() {
        use crate::net::scenario::{load_underlay, NetworkSpec};
        let u = load_underlay(Some("underlays/paper/exodus.gml"), &Default::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut model = NetworkSpec::default().delay_model(&u);
        let n = model.silo_count();
        assert!(n > 64);
        model.compute_ms = Some((0..n).map(|i| 10.0 + (i % 7) as f64).collect());
        let all = timing::star_cycle_times(&model);
        assert_eq!(all.len(), n);
        for (c, t) in all.iter().enumerate() {
            let one = timing::star_cycle_time_at(&model, c);
            assert_eq!(t.to_bits(), one.to_bits(), "centre {c}");
        }
    }

    #[test]
    fn argmax_ties_go_to_file_order() {
        assert_eq!(argmax_first(&[0.0, 0.0, 0.0]), 0);
        assert_eq!(argmax_first(&[1.0, 3.0, 3.0]), 1);
    }
}

#[cfg(test)]
mod load_tests {
    use super::*;
    use crate::net::underlay::LoadOptions;

    #[test]
    fn load_centrality_of_a_path_and_a_star() {
        // Path 0 - 1 - 2 - 3: ordered pairs through 1: (0,2),(0,3),(2,0),(3,0),(3,2)... = 4 each for 1 and 2.
        let g = "graph [ node [ id 0 ] node [ id 1 ] node [ id 2 ] node [ id 3 ]
            edge [ source 0 target 1 distance 1 ] edge [ source 1 target 2 distance 1 ]
            edge [ source 2 target 3 distance 1 ] ]";
        let u = Underlay::from_gml_str(g, "p.gml", &LoadOptions::default()).unwrap();
        assert_eq!(load_centrality(&u, 0.0085), vec![0.0, 4.0, 4.0, 0.0]);
        assert_eq!(center_by_load(&u, 0.0085), 1);
        // Square 0-1-2-3-0: two equal shortest paths between opposite corners split the load.
        let g = "graph [ node [ id 0 ] node [ id 1 ] node [ id 2 ] node [ id 3 ]
            edge [ source 0 target 1 distance 1 ] edge [ source 1 target 2 distance 1 ]
            edge [ source 2 target 3 distance 1 ] edge [ source 3 target 0 distance 1 ] ]";
        let u = Underlay::from_gml_str(g, "s.gml", &LoadOptions::default()).unwrap();
        assert_eq!(load_centrality(&u, 1.0), vec![1.0, 1.0, 1.0, 1.0]);
    }
}
