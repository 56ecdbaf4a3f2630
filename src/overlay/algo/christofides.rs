//! Christofides tour (\[Marfoq20\] Prop. 3.3 / 3.6, RING overlay): MST + exact minimum
//! weight perfect matching on the odd-degree vertices + Euler tour +
//! shortcutting.
//!
//! The exact matching (blossom, O(m^3) on the m odd vertices) takes about
//! 20 s at 2,000 nodes and grows as the cube; above
//! [`EXACT_MATCHING_MAX_NODES`] nodes the matching is approximate
//! ([`approx_min_weight_perfect_matching`]): the exact blossom on the
//! [`MATCHING_CANDIDATES`] nearest odd vertices of each, the rest matched
//! greedily. Callers report it ([`christofides_matching_is_exact`]).

use std::convert::Infallible;

use rayon::prelude::*;
use rustworkx_core::max_weight_matching::max_weight_matching;
use rustworkx_core::petgraph::graph::UnGraph;

use super::{minimum_spanning_tree, DenseMatrix, Edge};

/// Number of integer grid steps spanned by the range of matching weights.
///
/// Float weights (ms) are mapped to integers as
/// `2 * (1 + round((w_max - w) * MATCHING_SCALE / (w_max - w_min)))`
/// (shifted and negated so that a maximum-weight perfect matching is a
/// minimum-weight one; doubled so that the blossom algorithm's dual variables
/// stay integral; `+1` keeps every weight positive). Each weight is thus off by
/// at most `(w_max - w_min) / 2^41` ms, so the matching returned is optimal
/// up to `(#pairs) * (w_max - w_min) / 2^40` ms (about `4.5e-13` of the weight
/// range per matched pair).
pub const MATCHING_SCALE: f64 = (1_u64 << 40) as f64;

/// Largest number of nodes whose Christofides tour uses the exact
/// minimum-weight perfect matching (every paper underlay and Topology Zoo
/// network is far below); larger tours use
/// [`approx_min_weight_perfect_matching`].
pub const EXACT_MATCHING_MAX_NODES: usize = 2_000;

/// Candidate partners per odd vertex in the approximate matching: its
/// nearest odd vertices (by weight).
pub const MATCHING_CANDIDATES: usize = 12;

/// Whether [`christofides_tour`] on `n` nodes uses the exact matching
/// (`n <= EXACT_MATCHING_MAX_NODES`); when false its tour is built on an
/// approximate matching and carries no 1.5 guarantee.
pub fn christofides_matching_is_exact(n: usize) -> bool {
    n <= EXACT_MATCHING_MAX_NODES
}

/// Nodes of odd degree in the graph on `0..n` given by `edges`, increasing.
fn odd_degree_nodes(n: usize, edges: &[Edge]) -> Vec<usize> {
    let mut deg = vec![0_usize; n];
    for &(u, v) in edges {
        deg[u] += 1;
        deg[v] += 1;
    }
    (0..n).filter(|&v| deg[v] % 2 == 1).collect()
}

/// Exact minimum-weight perfect matching of the complete graph on `nodes`
/// (an even number of distinct indices into the symmetric `s`), via
/// rustworkx-core's blossom algorithm (`max_weight_matching` with
/// `max_cardinality = true` on shifted, negated integer weights; see
/// [`MATCHING_SCALE`] for the rounding error). Pairs are `(u, v)` with
/// `u < v`, sorted.
///
/// `verify` asks rustworkx-core to check the optimality certificate (panics
/// if it fails; meant for tests).
///
/// # Panics
/// If `nodes.len()` is odd.
pub(crate) fn min_weight_perfect_matching(
    s: &DenseMatrix,
    nodes: &[usize],
    verify: bool,
) -> Vec<Edge> {
    let m = nodes.len();
    assert!(
        m.is_multiple_of(2),
        "perfect matching needs an even number of nodes, got {m}"
    );
    if m == 0 {
        return Vec::new();
    }
    let pairs: Vec<(usize, usize)> = (0..m)
        .flat_map(|a| ((a + 1)..m).map(move |b| (a, b)))
        .collect();
    let matched = blossom(s, nodes, &pairs, verify);
    let mut out: Vec<Edge> = matched
        .into_iter()
        .map(|(a, b)| {
            let (u, v) = (nodes[a], nodes[b]);
            (u.min(v), u.max(v))
        })
        .collect();
    out.sort_unstable();
    assert_eq!(out.len(), m / 2, "blossom matching is not perfect");
    out
}

/// Blossom matching on the integer-mapped weights of `pairs` (local
/// indices into `nodes`, `a < b`) with `max_cardinality`; see
/// [`MATCHING_SCALE`]. Pairs returned as local indices. `verify`: check
/// the optimality certificate (tests).
fn blossom(
    s: &DenseMatrix,
    nodes: &[usize],
    pairs: &[(usize, usize)],
    verify: bool,
) -> Vec<(usize, usize)> {
    let (lo, hi) = pairs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(a, b)| {
            let x = s.get(nodes[a], nodes[b]);
            (lo.min(x), hi.max(x))
        });
    let range = hi - lo;
    let scale = if range > 0.0 {
        MATCHING_SCALE / range
    } else {
        1.0
    };
    let m = nodes.len();
    let mut g = UnGraph::<(), i128>::with_capacity(m, pairs.len());
    let ids: Vec<_> = (0..m).map(|_| g.add_node(())).collect();
    for &(a, b) in pairs {
        let x = s.get(nodes[a], nodes[b]);
        let int_w = 2 * (1 + ((hi - x) * scale).round() as i128);
        g.add_edge(ids[a], ids[b], int_w);
    }
    max_weight_matching(&g, true, |e| Ok::<i128, Infallible>(*e.weight()), verify)
        .unwrap_or_else(|never| match never {})
        .into_iter()
        .collect()
}

/// An approximate minimum-weight perfect matching of the complete graph on
/// `nodes` (an even number of distinct indices into the symmetric `s`), for
/// sets too large for `min_weight_perfect_matching`: the exact blossom
/// matching (maximum cardinality, then minimum weight) of the sparse graph
/// joining every node to its [`MATCHING_CANDIDATES`] nearest others (ties
/// by lower index), then the nodes it leaves unmatched paired greedily
/// (lightest pair first, ties by index). Deterministic; it equals the exact
/// matching whenever an optimal one uses candidate pairs only (the usual
/// case on geometric delays) and the sparse graph has a perfect matching,
/// but nothing bounds its excess in general. Pairs are `(u, v)` with
/// `u < v`, sorted.
///
/// # Panics
/// If `nodes.len()` is odd.
pub fn approx_min_weight_perfect_matching(s: &DenseMatrix, nodes: &[usize]) -> Vec<Edge> {
    let m = nodes.len();
    assert!(
        m.is_multiple_of(2),
        "perfect matching needs an even number of nodes, got {m}"
    );
    if m == 0 {
        return Vec::new();
    }
    let k = MATCHING_CANDIDATES.min(m - 1);
    let mut pairs: Vec<(usize, usize)> = (0..m)
        .into_par_iter()
        .flat_map_iter(|a| {
            let row = s.row(nodes[a]);
            let mut near: Vec<(f64, usize)> = (0..m)
                .filter(|&b| b != a)
                .map(|b| (row[nodes[b]], b))
                .collect();
            let by = |x: &(f64, usize), y: &(f64, usize)| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1));
            if near.len() > k {
                near.select_nth_unstable_by(k - 1, by);
                near.truncate(k);
            }
            near.into_iter().map(move |(_, b)| (a.min(b), a.max(b)))
        })
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    let mut mate = vec![usize::MAX; m];
    for (a, b) in blossom(s, nodes, &pairs, false) {
        mate[a] = b;
        mate[b] = a;
    }
    let free: Vec<usize> = (0..m).filter(|&a| mate[a] == usize::MAX).collect();
    if !free.is_empty() {
        let mut rest: Vec<(f64, usize, usize)> = free
            .iter()
            .enumerate()
            .flat_map(|(x, &a)| free[x + 1..].iter().map(move |&b| (a, b)))
            .map(|(a, b)| (s.get(nodes[a], nodes[b]), a, b))
            .collect();
        rest.sort_unstable_by(|x, y| x.0.total_cmp(&y.0).then((x.1, x.2).cmp(&(y.1, y.2))));
        for (_, a, b) in rest {
            if mate[a] == usize::MAX && mate[b] == usize::MAX {
                mate[a] = b;
                mate[b] = a;
            }
        }
    }
    let mut out: Vec<Edge> = (0..m)
        .filter(|&a| a < mate[a])
        .map(|a| {
            let (u, v) = (nodes[a], nodes[mate[a]]);
            (u.min(v), u.max(v))
        })
        .collect();
    out.sort_unstable();
    assert_eq!(out.len(), m / 2, "approximate matching is not perfect");
    out
}

/// Closed Euler walk of a connected multigraph on `0..n` whose degrees are all
/// even (Hierholzer, iterative), starting and ending at node 0.
fn euler_circuit(n: usize, edges: &[Edge]) -> Vec<usize> {
    let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (id, &(u, v)) in edges.iter().enumerate() {
        adj[u].push((v, id));
        adj[v].push((u, id));
    }
    for a in &mut adj {
        a.sort_unstable();
    }
    let mut used = vec![false; edges.len()];
    let mut next = vec![0_usize; n];
    let mut stack = vec![0_usize];
    let mut circuit = Vec::with_capacity(edges.len() + 1);
    while let Some(&v) = stack.last() {
        while next[v] < adj[v].len() && used[adj[v][next[v]].1] {
            next[v] += 1;
        }
        match adj[v].get(next[v]) {
            Some(&(x, id)) => {
                used[id] = true;
                stack.push(x);
            }
            None => {
                circuit.push(v);
                stack.pop();
            }
        }
    }
    circuit.reverse();
    circuit
}

/// Keeps the first occurrence of every node of a closed walk.
fn shortcut(n: usize, walk: &[usize]) -> Vec<usize> {
    let mut seen = vec![false; n];
    walk.iter()
        .copied()
        .filter(|&v| !std::mem::replace(&mut seen[v], true))
        .collect()
}

/// Christofides tour on the undirected weights `(w(i,j) + w(j,i)) / 2` (ms):
/// minimum spanning tree, exact minimum-weight perfect matching of its
/// odd-degree vertices, Euler circuit of the union (Hierholzer) and
/// shortcutting of repeated vertices.
///
/// Returns a permutation of `0..n` starting at 0 (`[]` for `n == 0`), to be
/// read as a cycle. For a metric `w` its cost is at most 1.5 times the optimal
/// tour; for an asymmetric `w` the better of the two orientations costs at
/// most the symmetrised tour cost (the two orientations sum to twice it), which
/// is how the RING overlay (\[Marfoq20\] Prop. 3.3 / 3.6) uses it on the arc delays `d_o`.
/// Deterministic (ties by lowest index).
///
/// Above [`EXACT_MATCHING_MAX_NODES`] nodes the matching is approximate
/// ([`christofides_matching_is_exact`]).
pub fn christofides_tour(w: &DenseMatrix) -> Vec<usize> {
    christofides_tour_with(w, EXACT_MATCHING_MAX_NODES)
}

/// [`christofides_tour`] with the exact-matching limit as a parameter:
/// exact matching up to `exact_max_nodes` nodes, approximate above.
///
/// A symmetric `w` is read in place (no `n x n` copy).
pub fn christofides_tour_with(w: &DenseMatrix, exact_max_nodes: usize) -> Vec<usize> {
    let s = w.symmetric();
    let n = s.n();
    if n == 0 {
        return Vec::new();
    }
    let mut multigraph = minimum_spanning_tree(&s);
    let odd = odd_degree_nodes(n, &multigraph);
    multigraph.extend(if n <= exact_max_nodes {
        min_weight_perfect_matching(&s, &odd, false)
    } else {
        approx_min_weight_perfect_matching(&s, &odd)
    });
    let walk = euler_circuit(n, &multigraph);
    let tour = shortcut(n, &walk);
    debug_assert_eq!(tour.len(), n);
    tour
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{directed_ring_cost, minimum_spanning_tree};
    use super::*;

    /// Minimum perfect matching weight by recursion (first node with each other).
    fn brute_matching(s: &DenseMatrix, nodes: &[usize]) -> f64 {
        if nodes.is_empty() {
            return 0.0;
        }
        let (a, rest) = (nodes[0], &nodes[1..]);
        (0..rest.len())
            .map(|k| {
                let others: Vec<usize> = rest
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| i != k)
                    .map(|(_, &v)| v)
                    .collect();
                s.get(a, rest[k]) + brute_matching(s, &others)
            })
            .fold(f64::INFINITY, f64::min)
    }

    fn matching_weight(s: &DenseMatrix, m: &[Edge]) -> f64 {
        m.iter().map(|&(u, v)| s.get(u, v)).sum()
    }

    #[test]
    fn matching_is_optimal_on_small_sets() {
        let mut r = rng(11);
        for it in 0..300 {
            let n = 2 + it % 12;
            let s = if it % 2 == 0 {
                random_symmetric(n, &mut r, it % 3 == 0)
            } else {
                euclidean(&random_points(n, &mut r))
            };
            let mut nodes = random_permutation(n, &mut r);
            nodes.truncate(n - n % 2);
            let m = min_weight_perfect_matching(&s, &nodes, true);
            let mut covered: Vec<usize> = m.iter().flat_map(|&(u, v)| [u, v]).collect();
            covered.sort_unstable();
            let mut expected = nodes.clone();
            expected.sort_unstable();
            assert_eq!(covered, expected);
            let (got, best) = (matching_weight(&s, &m), brute_matching(&s, &nodes));
            assert!(
                (got - best).abs() <= 1e-9 * best.max(1.0),
                "it={it}: got {got}, optimum {best}"
            );
        }
    }

    #[test]
    fn matching_handles_equal_and_tiny_weights() {
        let s = DenseMatrix::from_fn(6, |_, _| 7.0).unwrap();
        assert_eq!(
            min_weight_perfect_matching(&s, &[0, 1, 2, 3, 4, 5], true).len(),
            3
        );
        // Weights far below 1e-6 are still resolved (scale is relative).
        let pts: Vec<(f64, f64)> = [(0.0, 0.0), (1e-9, 0.0), (5e-9, 0.0), (6e-9, 0.0)].into();
        let s = euclidean(&pts);
        assert_eq!(
            min_weight_perfect_matching(&s, &[0, 1, 2, 3], true),
            vec![(0, 1), (2, 3)]
        );
    }

    /// The approximate matching is perfect and, on geometric instances,
    /// as light as the exact one (the optimum pairs near neighbours).
    #[test]
    fn approximate_matching_is_perfect_and_close_to_exact() {
        let mut r = rng(21);
        for n in [2, 10, 40, 120] {
            let w = euclidean(&random_points(n, &mut r));
            let mut nodes = random_permutation(n, &mut r);
            nodes.truncate(n - n % 2);
            let approx = approx_min_weight_perfect_matching(&w, &nodes);
            let mut covered: Vec<usize> = approx.iter().flat_map(|&(u, v)| [u, v]).collect();
            covered.sort_unstable();
            let mut expected = nodes.clone();
            expected.sort_unstable();
            assert_eq!(covered, expected);
            let exact = matching_weight(&w, &min_weight_perfect_matching(&w, &nodes, true));
            let got = matching_weight(&w, &approx);
            assert!(
                got >= exact - 1e-9 && got <= 1.05 * exact + 1e-9,
                "n={n}: {got} vs {exact}"
            );
        }
    }

    /// Up to the limit the tour is the exact-matching one; forcing the
    /// approximate matching still gives a tour.
    #[test]
    fn exact_below_the_limit_and_approximate_above() {
        assert!(christofides_matching_is_exact(EXACT_MATCHING_MAX_NODES));
        assert!(!christofides_matching_is_exact(
            EXACT_MATCHING_MAX_NODES + 1
        ));
        let mut r = rng(22);
        for n in [5, 60, 150] {
            let w = euclidean(&random_points(n, &mut r));
            assert_eq!(
                christofides_tour(&w),
                christofides_tour_with(&w, usize::MAX)
            );
            let approx = christofides_tour_with(&w, 0);
            assert!(is_permutation(&approx, n));
        }
    }

    #[test]
    fn euler_circuit_and_shortcut() {
        // Two triangles sharing node 0.
        let edges = [(0, 1), (1, 2), (0, 2), (0, 3), (3, 4), (0, 4)];
        let walk = euler_circuit(5, &edges);
        assert_eq!(walk.len(), 7);
        assert_eq!(walk.first(), walk.last());
        let mut used: Vec<Edge> = walk
            .windows(2)
            .map(|p| (p[0].min(p[1]), p[0].max(p[1])))
            .collect();
        used.sort_unstable();
        let mut all = edges.to_vec();
        all.sort_unstable();
        assert_eq!(used, all);
        assert_eq!(shortcut(5, &walk).len(), 5);
    }

    #[test]
    fn christofides_within_one_and_a_half_of_optimum() {
        let mut r = rng(12);
        let mut worst: f64 = 0.0;
        for it in 0..400 {
            let n = 1 + it % 8;
            let w = euclidean(&random_points(n, &mut r));
            let tour = christofides_tour(&w);
            assert!(is_permutation(&tour, n));
            let (opt, _) = brute_force_ring(&w);
            let c = directed_ring_cost(&w, &tour);
            assert!(c <= 1.5 * opt + 1e-9, "it={it} n={n}: {c} > 1.5 * {opt}");
            if opt > 0.0 {
                worst = worst.max(c / opt);
            }
        }
        println!("christofides worst ratio to optimum (n <= 8): {worst:.4}");
    }

    #[test]
    fn christofides_bounded_by_mst_plus_matching_on_larger_instances() {
        let mut r = rng(13);
        for n in [9, 20, 57, 120, 200] {
            let w = euclidean(&random_points(n, &mut r));
            let tour = christofides_tour(&w);
            assert!(is_permutation(&tour, n));
            let mst = minimum_spanning_tree(&w);
            let odd = odd_degree_nodes(n, &mst);
            let bound = tree_weight(&w, &mst)
                + matching_weight(&w, &min_weight_perfect_matching(&w, &odd, true));
            assert!(directed_ring_cost(&w, &tour) <= bound + 1e-6);
        }
    }

    #[test]
    fn christofides_finds_the_polygon_on_shuffled_regular_polygon() {
        let mut r = rng(14);
        for n in [4, 5, 7, 12, 31] {
            let label = random_permutation(n, &mut r);
            let mut pts = vec![(0.0, 0.0); n];
            for (k, &l) in label.iter().enumerate() {
                let a = std::f64::consts::TAU * k as f64 / n as f64;
                pts[l] = (100.0 * a.cos(), 100.0 * a.sin());
            }
            let w = euclidean(&pts);
            let perimeter: f64 = (0..n).map(|k| w.get(label[k], label[(k + 1) % n])).sum();
            let tour = christofides_tour(&w);
            let c = directed_ring_cost(&w, &tour);
            assert!(
                (c - perimeter).abs() < 1e-9 * perimeter,
                "n={n}: {c} vs {perimeter}"
            );
        }
    }

    #[test]
    fn christofides_tiny_cases() {
        let w0 = DenseMatrix::new(0, vec![]).unwrap();
        assert!(christofides_tour(&w0).is_empty());
        for n in 1..=3 {
            let w = DenseMatrix::from_fn(n, |i, j| (i + 2 * j) as f64).unwrap();
            assert!(is_permutation(&christofides_tour(&w), n));
        }
    }
}
