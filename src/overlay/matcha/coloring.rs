//! Matching decomposition of a base graph by proper edge colouring.
//!
//! MATCHA (\[Wang19\] Sec. 3, step 1) splits the base graph into
//! disjoint matchings. A proper edge colouring does exactly that: each colour
//! class is a matching. We use the Misra–Gries algorithm (at most
//! max-degree + 1 colours, Vizing's bound) as implemented by
//! `rustworkx-core`, except on large complete graphs (MATCHA's base graph
//! `Gc` of every pair of silos), where Misra–Gries costs about `N^2.4` (60 s
//! at 500 silos) and the round-robin 1-factorisation [`complete_graph_matchings`]
//! gives an optimal colouring in `O(N^2)`: `N - 1` perfect matchings for even
//! `N`, `N` matchings of `(N - 1) / 2` edges for odd `N` (the chromatic index of
//! `K_N`). Any proper colouring is a MATCHA decomposition (\[Wang19\] Sec. 3).
//! Below [`CLOSED_FORM_MIN_SILOS`] the Misra–Gries colouring is kept, so the
//! paper underlays (at most 315 silos, sprint) keep their committed outputs.

use rustworkx_core::coloring::misra_gries_edge_color;
use rustworkx_core::petgraph::graph::{NodeIndex, UnGraph};

use super::MatchaError;

/// Fewest silos for which the complete graph is split by the closed-form
/// round-robin colouring ([`complete_graph_matchings`]) rather than
/// Misra–Gries. Above every paper underlay (sprint: 315 silos), so their
/// MATCHA designs and committed outputs are those of Misra–Gries.
pub const CLOSED_FORM_MIN_SILOS: usize = 400;

/// Whether the normalised (sorted, deduplicated, `a < b`) `edges` over `n`
/// vertices are every pair: the complete graph `K_n`.
pub fn is_complete(n: usize, normalized_edges: &[(usize, usize)]) -> bool {
    n >= 2 && normalized_edges.len() == n * (n - 1) / 2
}

/// The round-robin 1-factorisation of the complete graph `K_n` (`n >= 2`):
/// an optimal proper edge colouring in `O(n^2)`.
///
/// Even `n`: `n - 1` perfect matchings; matching `r` pairs `n - 1` with `r`
/// and `(r + i) mod (n - 1)` with `(r - i) mod (n - 1)` for `i = 1..n/2`.
/// Odd `n`: the factorisation of `K_{n+1}` with the extra vertex `n` dropped,
/// `n` matchings of `(n - 1) / 2` edges (vertex `r` unmatched in matching
/// `r`). Each matching is sorted, edges `(a, b)` with `a < b`; every edge of
/// `K_n` is in exactly one (checked by the tests against
/// [`check_decomposition`]).
pub fn complete_graph_matchings(n: usize) -> Vec<Vec<(usize, usize)>> {
    if n < 2 {
        return Vec::new();
    }
    // Even order of the factorised graph: n, or n + 1 with a dummy vertex.
    let even = n + n % 2;
    let m = even - 1;
    (0..m)
        .map(|r| {
            let mut edges = Vec::with_capacity(even / 2);
            if even - 1 < n {
                edges.push((r, even - 1));
            }
            for i in 1..even / 2 {
                let a = (r + i) % m;
                let b = (r + m - i) % m;
                edges.push((a.min(b), a.max(b)));
            }
            edges.sort_unstable();
            edges
        })
        .collect()
}

/// Undirected edges `(a, b)` with `a < b`, sorted, without duplicates.
///
/// # Errors
/// [`MatchaError::BadEdge`] if an edge names a silo `>= n` or is a self-loop.
pub fn normalize_edges(
    n: usize,
    edges: &[(usize, usize)],
) -> Result<Vec<(usize, usize)>, MatchaError> {
    let mut out = Vec::with_capacity(edges.len());
    for &(a, b) in edges {
        if a >= n || b >= n || a == b {
            return Err(MatchaError::BadEdge { a, b, n });
        }
        out.push((a.min(b), a.max(b)));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Splits the undirected graph (`n` vertices, `edges`) into matchings.
///
/// Returns the non-empty colour classes of a Misra–Gries proper edge
/// colouring, each sorted, in colour order; their number is at most
/// max-degree + 1. Every edge (normalised to `a < b`) is in exactly one.
/// A complete graph of at least [`CLOSED_FORM_MIN_SILOS`] vertices gets the
/// closed-form colouring [`complete_graph_matchings`] instead (`n - 1` or `n`
/// colours, the fewest possible).
///
/// # Errors
/// [`MatchaError::BadEdge`] for an edge outside `0..n` or a self-loop,
/// [`MatchaError::NoEdges`] when the graph has no edge.
pub fn matching_decomposition(
    n: usize,
    edges: &[(usize, usize)],
) -> Result<Vec<Vec<(usize, usize)>>, MatchaError> {
    let edges = normalize_edges(n, edges)?;
    if edges.is_empty() {
        return Err(MatchaError::NoEdges);
    }
    if n >= CLOSED_FORM_MIN_SILOS && is_complete(n, &edges) {
        return Ok(complete_graph_matchings(n));
    }
    misra_gries_decomposition(n, &edges)
}

/// The Misra–Gries decomposition of normalised, non-empty `edges` (whatever
/// the graph: the old path of complete graphs too, kept callable for the
/// benches and the cross-checks).
pub fn misra_gries_decomposition(
    n: usize,
    edges: &[(usize, usize)],
) -> Result<Vec<Vec<(usize, usize)>>, MatchaError> {
    let edges = normalize_edges(n, edges)?;
    if edges.is_empty() {
        return Err(MatchaError::NoEdges);
    }
    let mut g = UnGraph::<(), ()>::with_capacity(n, edges.len());
    for _ in 0..n {
        g.add_node(());
    }
    for &(a, b) in &edges {
        g.add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
    }
    let colors = misra_gries_edge_color(&g);
    let k = colors.values().copied().max().map_or(0, |c| c + 1);
    let mut classes = vec![Vec::new(); k];
    for (e, c) in colors {
        classes[c].push(edges[e.index()]);
    }
    let mut classes: Vec<_> = classes.into_iter().filter(|m| !m.is_empty()).collect();
    for m in &mut classes {
        m.sort_unstable();
    }
    Ok(classes)
}

/// What is wrong with a decomposition, if anything: every class must be a
/// matching (no shared vertex), and together they must hold every edge of
/// `edges` exactly once. Used by the tests; cheap enough to run always.
pub fn check_decomposition(
    n: usize,
    edges: &[(usize, usize)],
    matchings: &[Vec<(usize, usize)>],
) -> Result<(), String> {
    let want = normalize_edges(n, edges).map_err(|e| e.to_string())?;
    let mut seen = Vec::new();
    for (j, m) in matchings.iter().enumerate() {
        let mut used = vec![false; n];
        for &(a, b) in m {
            for v in [a, b] {
                if v >= n {
                    return Err(format!("matching {j}: vertex {v} outside 0..{n}"));
                }
                if used[v] {
                    return Err(format!("matching {j}: vertex {v} is matched twice"));
                }
                used[v] = true;
            }
            seen.push((a.min(b), a.max(b)));
        }
    }
    seen.sort_unstable();
    if seen.windows(2).any(|w| w[0] == w[1]) {
        return Err("an edge is in two matchings".into());
    }
    if seen != want {
        return Err(format!(
            "the matchings cover {} edges, the graph has {}",
            seen.len(),
            want.len()
        ));
    }
    Ok(())
}

/// Largest vertex degree of the graph.
pub fn max_degree(n: usize, edges: &[(usize, usize)]) -> usize {
    let mut d = vec![0usize; n];
    for &(a, b) in edges {
        d[a] += 1;
        d[b] += 1;
    }
    d.into_iter().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn complete(n: usize) -> Vec<(usize, usize)> {
        (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect()
    }

    #[test]
    fn complete_graphs_star_ring() {
        for n in 2..=16 {
            let e = complete(n);
            let m = matching_decomposition(n, &e).unwrap();
            check_decomposition(n, &e, &m).unwrap();
            // Chromatic index of K_n is n-1 (n even) or n (n odd); MG uses at most n.
            assert!(m.len() >= if n % 2 == 0 { n - 1 } else { n });
            assert!(m.len() <= n);
        }
        let star: Vec<_> = (1..9).map(|i| (0, i)).collect();
        let m = matching_decomposition(9, &star).unwrap();
        check_decomposition(9, &star, &m).unwrap();
        assert_eq!(m.len(), 8, "each star edge needs its own colour");
        let ring: Vec<_> = (0..10).map(|i| (i, (i + 1) % 10)).collect();
        let m = matching_decomposition(10, &ring).unwrap();
        check_decomposition(10, &ring, &m).unwrap();
        assert!(m.len() == 2 || m.len() == 3);
    }

    #[test]
    fn closed_form_colouring_of_complete_graphs_is_proper_and_optimal() {
        for n in (2..=64).chain([399, 400, 401, 402]) {
            let e = complete(n);
            let m = complete_graph_matchings(n);
            check_decomposition(n, &e, &m).unwrap();
            // The chromatic index of K_n: n - 1 (even n), n (odd n).
            assert_eq!(m.len(), if n % 2 == 0 { n - 1 } else { n }, "n = {n}");
            for (j, class) in m.iter().enumerate() {
                assert_eq!(class.len(), n / 2, "n = {n}, matching {j}");
                assert!(class.windows(2).all(|w| w[0] < w[1]));
                assert!(class.iter().all(|&(a, b)| a < b));
            }
        }
        assert!(complete_graph_matchings(1).is_empty());
        assert!(complete_graph_matchings(0).is_empty());
    }

    #[test]
    fn closed_form_only_for_large_complete_graphs() {
        // Below the threshold: Misra–Gries, as before (paper underlays).
        let n = CLOSED_FORM_MIN_SILOS - 1;
        let e = complete(n);
        assert_eq!(
            matching_decomposition(n, &e).unwrap(),
            misra_gries_decomposition(n, &e).unwrap()
        );
        // At the threshold: the closed form, whatever the edge order.
        let n = CLOSED_FORM_MIN_SILOS;
        let mut e = complete(n);
        e.reverse();
        let e: Vec<_> = e.into_iter().map(|(a, b)| (b, a)).collect();
        assert_eq!(
            matching_decomposition(n, &e).unwrap(),
            complete_graph_matchings(n)
        );
        // One edge short of complete: Misra–Gries.
        let mut e = complete(n);
        e.pop();
        let m = matching_decomposition(n, &e).unwrap();
        check_decomposition(n, &e, &m).unwrap();
        assert_eq!(m, misra_gries_decomposition(n, &e).unwrap());
    }

    #[test]
    fn random_graphs() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200 {
            let n = rng.gen_range(2..40);
            let p: f64 = rng.gen_range(0.05..1.0);
            let e: Vec<_> = complete(n)
                .into_iter()
                .filter(|_| rng.gen_bool(p))
                .collect();
            if e.is_empty() {
                continue;
            }
            let m = matching_decomposition(n, &e).unwrap();
            check_decomposition(n, &e, &m).unwrap();
            assert!(m.len() <= max_degree(n, &e) + 1);
            assert!(m.len() >= max_degree(n, &e));
        }
    }

    #[test]
    fn checker_catches_errors() {
        let e = vec![(0, 1), (1, 2)];
        assert!(check_decomposition(3, &e, std::slice::from_ref(&e)).is_err());
        assert!(check_decomposition(3, &e, &[vec![(0, 1)]]).is_err());
        assert!(check_decomposition(3, &e, &[vec![(0, 1)], vec![(1, 2)], vec![(0, 1)]]).is_err());
        assert!(check_decomposition(3, &e, &[vec![(0, 1)], vec![(2, 1)]]).is_ok());
    }

    #[test]
    fn bad_input() {
        assert!(matches!(
            matching_decomposition(2, &[(0, 2)]),
            Err(MatchaError::BadEdge { .. })
        ));
        assert!(matches!(
            matching_decomposition(2, &[(1, 1)]),
            Err(MatchaError::BadEdge { .. })
        ));
        assert!(matches!(
            matching_decomposition(2, &[]),
            Err(MatchaError::NoEdges)
        ));
    }
}
