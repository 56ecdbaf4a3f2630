//! Hand-computed examples, checked on karp, howard and max_cycle_mean.

use super::support::{assert_valid, graph};
use crate::maxplus::{howard, karp, max_cycle_mean, recurrence_slope, CycleTime, Recurrence};
use crate::maxplus::{MaxPlusError, WeightedDigraph};

type Solver = fn(&WeightedDigraph) -> Result<CycleTime, MaxPlusError>;
const SOLVERS: [(&str, Solver); 3] = [("karp", karp), ("howard", howard), ("mcm", max_cycle_mean)];

/// Runs every solver; checks value (1e-12 relative) and circuit validity.
fn check(g: &WeightedDigraph, expected: f64) -> Vec<Vec<usize>> {
    SOLVERS
        .iter()
        .map(|(name, solve)| {
            let ct = solve(g).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                (ct.value - expected).abs() <= 1e-12 * expected.abs().max(1.0),
                "{name}: got {} expected {expected}",
                ct.value
            );
            assert_valid(g, &ct, 1e-12);
            ct.circuit
        })
        .collect()
}

#[test]
fn single_self_loop() {
    let circuits = check(&graph(1, &[(0, 0, 3.5)]), 3.5);
    assert!(circuits.iter().all(|c| c == &[0]));
}

#[test]
fn two_cycle() {
    let g = graph(2, &[(0, 1, 10.0), (1, 0, 4.0)]);
    for c in check(&g, 7.0) {
        assert_eq!(c.len(), 2);
    }
}

#[test]
fn two_cycle_dominated_by_self_loop() {
    let g = graph(2, &[(0, 1, 10.0), (1, 0, 4.0), (1, 1, 7.5)]);
    for c in check(&g, 7.5) {
        assert_eq!(c, vec![1]);
    }
}

#[test]
fn directed_ring() {
    let w = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
    let n = w.len();
    let arcs: Vec<_> = (0..n).map(|i| (i, (i + 1) % n, w[i])).collect();
    let g = graph(n, &arcs);
    for c in check(&g, w.iter().sum::<f64>() / n as f64) {
        assert_eq!(c.len(), n);
    }
}

#[test]
fn ring_with_local_computation_self_loops() {
    // A ring of 4 silos, each with a self-loop s*Tc = 2 ms; the ring mean wins.
    let mut arcs: Vec<_> = (0..4).map(|i| (i, (i + 1) % 4, 10.0)).collect();
    arcs.extend((0..4).map(|i| (i, i, 2.0)));
    check(&graph(4, &arcs), 10.0);
}

#[test]
fn undirected_tree_is_max_edge_round_trip() {
    // Tree edges (i, j, d(i,j), d(j,i)); tau = max over edges of (d(i,j)+d(j,i))/2.
    let edges = [
        (0, 1, 3.0, 5.0),
        (0, 2, 8.0, 1.0),
        (2, 3, 6.0, 6.5),
        (2, 4, 0.5, 0.25),
    ];
    let arcs: Vec<_> = edges
        .iter()
        .flat_map(|&(i, j, a, b)| [(i, j, a), (j, i, b)])
        .collect();
    let g = graph(5, &arcs);
    for c in check(&g, 6.25) {
        let mut c = c.clone();
        c.sort_unstable();
        assert_eq!(c, vec![2, 3]);
    }
}

#[test]
fn star_tree() {
    let arcs: Vec<_> = (1..6)
        .flat_map(|leaf| [(0, leaf, leaf as f64), (leaf, 0, 2.0 * leaf as f64)])
        .collect();
    check(&graph(6, &arcs), 7.5);
}

#[test]
fn parallel_arcs_take_the_heaviest() {
    let g = graph(
        3,
        &[
            (0, 1, 1.0),
            (0, 1, 9.0),
            (0, 1, 4.0),
            (1, 2, 3.0),
            (2, 0, 3.0),
            (2, 0, 0.0),
            (1, 1, 4.0),
            (1, 1, 4.5),
        ],
    );
    for c in check(&g, 5.0) {
        assert_eq!(c.len(), 3);
    }
}

#[test]
fn heavy_self_loop_among_parallel_arcs() {
    let g = graph(
        3,
        &[
            (0, 1, 1.0),
            (1, 2, 1.0),
            (2, 0, 1.0),
            (2, 2, 0.5),
            (2, 2, 6.0),
        ],
    );
    for c in check(&g, 6.0) {
        assert_eq!(c, vec![2]);
    }
}

#[test]
fn all_zero_weights() {
    check(
        &graph(3, &[(0, 1, 0.0), (1, 2, 0.0), (2, 0, 0.0), (1, 0, 0.0)]),
        0.0,
    );
}

#[test]
fn negative_weights_are_fine() {
    let g = graph(3, &[(0, 1, -1.0), (1, 0, -3.0), (1, 2, -0.5), (2, 1, -0.5)]);
    check(&g, -0.5);
}

#[test]
fn two_disjoint_heavy_circuits_tie() {
    // Circuits {0,1} and {2,3} both have mean 5, joined by light arcs.
    let g = graph(
        4,
        &[
            (0, 1, 5.0),
            (1, 0, 5.0),
            (2, 3, 4.0),
            (3, 2, 6.0),
            (1, 2, 0.0),
            (3, 0, 0.0),
        ],
    );
    check(&g, 5.0);
}

#[test]
fn recurrence_on_two_cycle() {
    let g = graph(2, &[(0, 1, 10.0), (1, 0, 4.0)]);
    let mut rec = Recurrence::new(&g, vec![0.0, 0.0]).unwrap();
    assert_eq!(rec.k(), 0);
    assert_eq!(rec.next(), &[4.0, 10.0]);
    assert_eq!(rec.next(), &[14.0, 14.0]);
    assert_eq!(rec.k(), 2);
    assert_eq!(rec.state(), &[14.0, 14.0]);
    assert_eq!(recurrence_slope(&g, &[0.0, 0.0], 2), 7.0);
}

#[test]
fn recurrence_node_without_in_arc_is_minus_infinity() {
    let g = graph(2, &[(0, 0, 1.0), (0, 1, 1.0)]);
    let mut rec = Recurrence::new(&g, vec![0.0, 0.0]).unwrap();
    assert_eq!(rec.next(), &[1.0, 1.0]);
    let g = graph(2, &[(1, 1, 1.0)]);
    let mut rec = Recurrence::new(&g, vec![0.0, 0.0]).unwrap();
    assert_eq!(rec.next(), &[f64::NEG_INFINITY, 1.0]);
    assert_eq!(recurrence_slope(&g, &[0.0, 0.0], 3), 1.0);
}

#[test]
fn strongly_connected_components_are_sorted() {
    let g = graph(
        5,
        &[
            (0, 1, 1.0),
            (1, 0, 1.0),
            (1, 2, 1.0),
            (3, 4, 1.0),
            (4, 3, 1.0),
            (2, 2, 1.0),
        ],
    );
    assert_eq!(
        g.strongly_connected_components(),
        vec![vec![0, 1], vec![2], vec![3, 4]]
    );
    assert_eq!(g.node_count(), 5);
    assert_eq!(g.arcs().len(), 6);
    let empty = WeightedDigraph::new(0, vec![]).unwrap();
    assert!(empty.strongly_connected_components().is_empty());
}

#[test]
fn cycle_time_serializes() {
    fn is_serialize<T: serde::Serialize>(_: &T) {}
    let ct = howard(&graph(1, &[(0, 0, 1.0)])).unwrap();
    is_serialize(&ct);
    is_serialize(&crate::maxplus::Arc {
        from: 0,
        to: 0,
        weight: 1.0,
    });
}
