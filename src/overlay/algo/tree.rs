//! Spanning trees: Prim's MST (\[Marfoq20\] Prop. 3.1) and a Hamiltonian path in the
//! cube of a tree (candidate (a) of Algorithm 1); delta-Prim (Algorithm 2) is in
//! `delta_prim.rs`.

use super::{DenseMatrix, Edge};

/// Normalises an undirected edge to `(min, max)`.
#[inline]
pub(super) fn edge(u: usize, v: usize) -> Edge {
    (u.min(v), u.max(v))
}

/// Lexicographic "strictly better" on `(weight, index)` pairs, so that ties
/// on weight go to the lowest index (deterministic output).
#[inline]
pub(super) fn better(w: f64, i: usize, best_w: f64, best_i: usize) -> bool {
    w < best_w || (w == best_w && i < best_i)
}

/// Minimum spanning tree of the complete undirected graph on `0..n` with edge
/// weight `(w(i,j) + w(j,i)) / 2` (= `w(i,j)` for a symmetric `w`, ms).
///
/// Prim's algorithm in `O(n^2)` from node 0; ties go to the lowest index (both
/// for the node joining the tree and for its attachment point), so the output
/// is deterministic. Edges are returned as `(u, v)` with `u < v`, in the order
/// Prim adds them; `n - 1` edges (none for `n <= 1`). This is the MST overlay
/// of \[Marfoq20\] Prop. 3.1.
pub fn minimum_spanning_tree(w: &DenseMatrix) -> Vec<Edge> {
    let s = w.symmetric();
    minimum_spanning_tree_by_rows(s.n(), |v, row| row.copy_from_slice(s.row(v)))
}

/// [`minimum_spanning_tree`] of the symmetric weights whose row `v`
/// `fill_row(v, row)` writes into `row` (length `n`), each row asked for
/// once, when `v` joins the tree: no `n x n` matrix (800 MB at 10,000
/// silos). The same tree as [`minimum_spanning_tree`] on the matrix of
/// those rows.
pub fn minimum_spanning_tree_by_rows(
    n: usize,
    mut fill_row: impl FnMut(usize, &mut [f64]),
) -> Vec<Edge> {
    if n == 0 {
        return Vec::new();
    }
    let mut row = vec![0.0; n];
    let mut in_tree = vec![false; n];
    let mut key = vec![f64::INFINITY; n];
    let mut parent = vec![usize::MAX; n];
    let mut edges = Vec::with_capacity(n - 1);
    let mut next = 0;
    for _ in 0..n {
        let v = next;
        in_tree[v] = true;
        if parent[v] != usize::MAX {
            edges.push(edge(parent[v], v));
        }
        fill_row(v, &mut row);
        let mut best = (f64::INFINITY, usize::MAX);
        for x in 0..n {
            if in_tree[x] {
                continue;
            }
            if better(row[x], v, key[x], parent[x]) {
                key[x] = row[x];
                parent[x] = v;
            }
            if best.1 == usize::MAX || key[x] < best.0 {
                best = (key[x], x);
            }
        }
        next = best.1;
    }
    edges
}

/// Adjacency lists of a spanning tree on `0..n`, each sorted by index.
///
/// # Panics
/// If `tree` is not a spanning tree of `0..n`.
fn tree_adjacency(n: usize, tree: &[Edge]) -> Vec<Vec<usize>> {
    assert!(
        n > 0 && tree.len() == n - 1,
        "a spanning tree on {n} nodes needs {} edges, got {}",
        n.saturating_sub(1),
        tree.len()
    );
    let mut adj = vec![Vec::new(); n];
    for &(u, v) in tree {
        assert!(
            u < n && v < n && u != v,
            "bad tree edge ({u}, {v}) for n = {n}"
        );
        adj[u].push(v);
        adj[v].push(u);
    }
    for a in &mut adj {
        a.sort_unstable();
    }
    adj
}

/// Hamiltonian path in the cube `T^3` of a spanning tree `T` on `0..n`:
/// every node appears once and consecutive nodes are at tree distance `<= 3`
/// (Sekanina 1960 / Karaganis 1968: the cube of a connected graph is
/// Hamiltonian). Candidate (a) of \[Marfoq20\] Algorithm 1 (delta-MBST): turning the path
/// into an undirected overlay gives maximum degree 2.
///
/// Construction: root `T` at node 0 and walk it depth-first (children by
/// increasing index), emitting a node *before* its subtree when its depth is
/// even and *after* it when its depth is odd. Iterative, so deep trees (long
/// paths) cannot overflow the stack. Returns `[]` for `n == 0`.
///
/// # Panics
/// If `tree` is not a spanning tree of `0..n` (wrong edge count, bad index,
/// or disconnected).
pub fn hamiltonian_path_in_cube(n: usize, tree: &[Edge]) -> Vec<usize> {
    if n == 0 {
        assert!(tree.is_empty(), "edges given for an empty tree");
        return Vec::new();
    }
    let adj = tree_adjacency(n, tree);
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    // (node, depth, exiting)
    let mut stack = vec![(0_usize, 0_usize, false)];
    seen[0] = true;
    while let Some((v, depth, exiting)) = stack.pop() {
        if exiting {
            if depth % 2 == 1 {
                order.push(v);
            }
            continue;
        }
        if depth % 2 == 0 {
            order.push(v);
        }
        stack.push((v, depth, true));
        for &c in adj[v].iter().rev() {
            if !seen[c] {
                seen[c] = true;
                stack.push((c, depth + 1, false));
            }
        }
    }
    assert!(order.len() == n, "tree edges do not connect all {n} nodes");
    order
}

#[cfg(test)]
mod tests {
    use super::super::delta_prim::delta_prim;
    use super::super::test_support::*;
    use super::*;
    use rand::Rng;

    /// Kruskal with a sort (independent reference).
    fn kruskal_weight(w: &DenseMatrix) -> f64 {
        let n = w.n();
        let mut pairs: Vec<(f64, usize, usize)> = (0..n)
            .flat_map(|i| ((i + 1)..n).map(move |j| (i, j)))
            .map(|(i, j)| (w.get(i, j), i, j))
            .collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut comp: Vec<usize> = (0..n).collect();
        let mut total = 0.0;
        for (x, i, j) in pairs {
            let (ci, cj) = (comp[i], comp[j]);
            if ci != cj {
                total += x;
                comp.iter_mut().filter(|c| **c == cj).for_each(|c| *c = ci);
            }
        }
        total
    }

    /// Straightforward O(n^3) delta-Prim: cheapest `(w, x, u)` over all open
    /// tree nodes `u` and outside nodes `x`.
    fn naive_delta_prim(w: &DenseMatrix, delta: usize, root: usize) -> Option<Vec<Edge>> {
        let s = w.symmetrized();
        let n = s.n();
        let mut in_tree = vec![false; n];
        let mut deg = vec![0; n];
        in_tree[root] = true;
        let mut edges = Vec::new();
        for _ in 1..n {
            let mut best: Option<(f64, usize, usize)> = None;
            for x in (0..n).filter(|&x| !in_tree[x]) {
                for u in (0..n).filter(|&u| in_tree[u] && deg[u] < delta) {
                    let c = (s.get(u, x), x, u);
                    if best.is_none_or(|b| c.0 < b.0 || (c.0 == b.0 && (c.1, c.2) < (b.1, b.2))) {
                        best = Some(c);
                    }
                }
            }
            let (_, x, u) = best?;
            in_tree[x] = true;
            deg[x] += 1;
            deg[u] += 1;
            edges.push(edge(u, x));
        }
        Some(edges)
    }

    fn max_degree(n: usize, edges: &[Edge]) -> usize {
        let mut deg = vec![0; n];
        for &(u, v) in edges {
            deg[u] += 1;
            deg[v] += 1;
        }
        deg.into_iter().max().unwrap_or(0)
    }

    #[test]
    fn mst_weight_matches_kruskal() {
        let mut r = rng(1);
        for n in (0..40).chain([80, 120]) {
            for integral in [false, true] {
                let w = random_symmetric(n, &mut r, integral);
                let t = minimum_spanning_tree(&w);
                assert!(is_spanning_tree(n, &t), "n={n}: not a spanning tree: {t:?}");
                let (a, b) = (tree_weight(&w, &t), kruskal_weight(&w));
                assert!(
                    (a - b).abs() <= 1e-9 * b.max(1.0),
                    "n={n}: prim {a} kruskal {b}"
                );
            }
        }
    }

    #[test]
    fn mst_of_asymmetric_matrix_uses_symmetrisation() {
        let mut r = rng(2);
        let d = random_asymmetric(30, &mut r);
        let t = minimum_spanning_tree(&d);
        let s = d.symmetrized();
        assert!((tree_weight(&s, &t) - kruskal_weight(&s)).abs() < 1e-9);
    }

    #[test]
    fn mst_is_deterministic_on_ties() {
        // All weights equal: lowest-index ties give the star around 0.
        let w = DenseMatrix::from_fn(5, |_, _| 1.0).unwrap();
        assert_eq!(
            minimum_spanning_tree(&w),
            vec![(0, 1), (0, 2), (0, 3), (0, 4)]
        );
    }

    #[test]
    fn delta_prim_with_large_delta_is_the_mst() {
        let mut r = rng(3);
        for n in 1..40 {
            let w = random_symmetric(n, &mut r, false);
            let mst = minimum_spanning_tree(&w);
            let mst_w = tree_weight(&w, &mst);
            for delta in [n.saturating_sub(1).max(1), n, 1000] {
                let root = r.gen_range(0..n);
                let t = delta_prim(&w, delta, root).expect("cannot get stuck with delta >= n-1");
                assert!(is_spanning_tree(n, &t));
                assert!((tree_weight(&w, &t) - mst_w).abs() <= 1e-9 * mst_w.max(1.0));
                let (mut a, mut b) = (t.clone(), mst.clone());
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(
                    a, b,
                    "n={n} delta={delta}: distinct weights give a unique MST"
                );
            }
        }
    }

    #[test]
    fn delta_prim_respects_degree_bound_and_matches_naive() {
        let mut r = rng(4);
        for n in 1..45 {
            for integral in [false, true] {
                let w = random_symmetric(n, &mut r, integral);
                let root = r.gen_range(0..n);
                for delta in 0..(n + 2) {
                    let got = delta_prim(&w, delta, root);
                    assert_eq!(
                        got,
                        naive_delta_prim(&w, delta, root),
                        "n={n} delta={delta}"
                    );
                    match &got {
                        Some(t) => {
                            assert!(is_spanning_tree(n, t));
                            assert!(max_degree(n, t) <= delta, "n={n} delta={delta}");
                        }
                        None => assert!(delta < 2 && n > delta + 1, "n={n} delta={delta} stuck"),
                    }
                }
            }
        }
    }

    #[test]
    fn delta_prim_degree_bound_binds_on_star_metric() {
        // Node 0 is close to everyone: the MST is a star, delta-Prim must not be.
        let n = 30;
        let w = DenseMatrix::from_fn(n, |i, j| {
            if i == 0 || j == 0 {
                1.0
            } else {
                10.0 + (i + j) as f64
            }
        })
        .unwrap();
        assert_eq!(max_degree(n, &minimum_spanning_tree(&w)), n - 1);
        for delta in 2..n {
            let t = delta_prim(&w, delta, 0).unwrap();
            assert_eq!(max_degree(n, &t), delta);
        }
        assert_eq!(delta_prim(&w, 1, 0), None);
        assert_eq!(delta_prim(&w, 0, 0), None);
    }

    #[test]
    fn delta_prim_tiny_cases() {
        let w1 = DenseMatrix::from_fn(1, |_, _| 0.0).unwrap();
        assert_eq!(delta_prim(&w1, 0, 0), Some(vec![]));
        let w2 = DenseMatrix::from_fn(2, |_, _| 3.0).unwrap();
        assert_eq!(delta_prim(&w2, 1, 1), Some(vec![(0, 1)]));
        assert_eq!(delta_prim(&w2, 0, 1), None);
        let w0 = DenseMatrix::new(0, vec![]).unwrap();
        assert_eq!(delta_prim(&w0, 3, 0), Some(vec![]));
        assert_eq!(minimum_spanning_tree(&w0), vec![]);
    }

    fn check_cube_path(n: usize, tree: &[Edge]) {
        let path = hamiltonian_path_in_cube(n, tree);
        assert!(is_permutation(&path, n), "not a permutation: {path:?}");
        let dist = tree_distances(n, tree);
        for p in path.windows(2) {
            assert!(
                dist[p[0]][p[1]] <= 3,
                "tree {tree:?}: {} -> {} at distance {}",
                p[0],
                p[1],
                dist[p[0]][p[1]]
            );
        }
        if n > 1 {
            // The walk even closes into a Hamiltonian cycle of T^3.
            assert!(dist[path[n - 1]][path[0]] <= 3);
        }
    }

    #[test]
    fn cube_path_on_random_trees() {
        let mut r = rng(5);
        for it in 0..5000 {
            let n = 1 + it % 70;
            check_cube_path(n, &random_tree(n, &mut r));
        }
    }

    #[test]
    fn cube_path_on_paths_stars_and_spiders() {
        for n in 1..200 {
            let path: Vec<Edge> = (1..n).map(|v| (v - 1, v)).collect();
            check_cube_path(n, &path);
            let star: Vec<Edge> = (1..n).map(|v| (0, v)).collect();
            check_cube_path(n, &star);
            // Spider with legs of length 3 hanging from the last node.
            let spider: Vec<Edge> = (0..n.saturating_sub(1))
                .map(|v| if v % 3 == 0 { (v, n - 1) } else { (v - 1, v) })
                .map(|(a, b)| (a.min(b), a.max(b)))
                .collect();
            check_cube_path(n, &spider);
        }
        // A deep path does not overflow the stack.
        let n = 200_000;
        let path: Vec<Edge> = (1..n).map(|v| (v - 1, v)).collect();
        assert_eq!(hamiltonian_path_in_cube(n, &path).len(), n);
    }

    #[test]
    #[should_panic(expected = "do not connect")]
    fn cube_path_rejects_disconnected_input() {
        hamiltonian_path_in_cube(4, &[(0, 1), (0, 1), (2, 3)]);
    }

    #[test]
    #[should_panic(expected = "needs 2 edges")]
    fn cube_path_rejects_wrong_edge_count() {
        hamiltonian_path_in_cube(3, &[(0, 1)]);
    }

    #[test]
    fn cube_path_of_mst_is_valid() {
        let mut r = rng(6);
        let w = euclidean(&random_points(150, &mut r));
        let t = minimum_spanning_tree(&w);
        check_cube_path(150, &t);
    }

    /// `cargo test --release -- --ignored --nocapture timing` prints timings.
    #[test]
    #[ignore]
    fn timing_delta_prim_sweep_315() {
        let n = 315;
        for (name, w) in [
            ("euclidean", euclidean(&random_points(n, &mut rng(7)))),
            ("uniform", random_symmetric(n, &mut rng(8), false)),
        ] {
            let t0 = std::time::Instant::now();
            let found = (3..n)
                .filter(|&delta| delta_prim(&w, delta, 0).is_some())
                .count();
            let dt = t0.elapsed().as_secs_f64() * 1e3;
            let t1 = std::time::Instant::now();
            let mst = minimum_spanning_tree(&w);
            let dm = t1.elapsed().as_secs_f64() * 1e3;
            let t2 = std::time::Instant::now();
            let path = hamiltonian_path_in_cube(n, &mst);
            let dh = t2.elapsed().as_secs_f64() * 1e3;
            assert_eq!(path.len(), n);
            println!("{name}: delta-Prim for delta = 3..{n}: {found} trees in {dt:.1} ms; MST {dm:.2} ms; cube path {dh:.3} ms");
        }
    }
}
