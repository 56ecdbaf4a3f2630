//! Matching decomposition of a base graph by proper edge colouring.
//!
//! MATCHA (\[Wang19\] Sec. 3, step 1) splits the base graph into
//! disjoint matchings. A proper edge colouring does exactly that: each colour
//! class is a matching. We use the Misra–Gries algorithm (at most
//! max-degree + 1 colours, Vizing's bound) as implemented by
//! `rustworkx-core`.

use rustworkx_core::coloring::misra_gries_edge_color;
use rustworkx_core::petgraph::graph::{NodeIndex, UnGraph};

use super::MatchaError;

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
