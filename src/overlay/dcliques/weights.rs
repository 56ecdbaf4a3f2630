//! Metropolis-Hastings mixing weights (\[Bellet21\] Sec. 2):
//! `W_ij = 1 / (max(deg i, deg j) + 1)` for every edge `{i, j}`,
//! `W_ii = 1 - sum_{j != i} W_ij`. Symmetric and doubly stochastic; degrees
//! exclude the node itself.

/// Sparse rows of `W`: `rows[i]` lists `(j, W_ij)` for `j = i` and every
/// neighbour of `i`, sorted by `j`.
pub fn metropolis_hastings(n: usize, edges: &[(usize, usize)]) -> Vec<Vec<(usize, f64)>> {
    let mut deg = vec![0usize; n];
    for &(a, b) in edges {
        deg[a] += 1;
        deg[b] += 1;
    }
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        let w = 1.0 / (deg[a].max(deg[b]) + 1) as f64;
        rows[a].push((b, w));
        rows[b].push((a, w));
    }
    for (i, row) in rows.iter_mut().enumerate() {
        let off: f64 = row.iter().map(|&(_, w)| w).sum();
        row.push((i, 1.0 - off));
        row.sort_by_key(|&(j, _)| j);
    }
    rows
}

/// Dense `W` (row-major `n x n`) from [`metropolis_hastings`].
pub fn metropolis_hastings_dense(n: usize, edges: &[(usize, usize)]) -> Vec<f64> {
    let mut w = vec![0.0; n * n];
    for (i, row) in metropolis_hastings(n, edges).into_iter().enumerate() {
        for (j, v) in row {
            w[i * n + j] = v;
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked example: two 10-cliques (nodes 0..10 and 10..20)
    /// joined by one edge B--G (B = 1, G = 11).
    #[test]
    fn worked_example() {
        let mut edges = Vec::new();
        for base in [0, 10] {
            for a in base..base + 10 {
                for b in a + 1..base + 10 {
                    edges.push((a, b));
                }
            }
        }
        let (b, g) = (1, 11);
        edges.push((b, g));
        let w = metropolis_hastings_dense(20, &edges);
        let at = |i: usize, j: usize| w[i * 20 + j];
        // A node of G's clique without inter edge (A = 12): self 12/110,
        // to G (degree 10) 10/110, to every other neighbour 11/110.
        let a = 12;
        assert!((at(a, a) - 12.0 / 110.0).abs() < 1e-15);
        assert!((at(a, g) - 10.0 / 110.0).abs() < 1e-15);
        for j in (10..20).filter(|&j| j != a && j != g) {
            assert!((at(a, j) - 11.0 / 110.0).abs() < 1e-15);
        }
        // B: all 11 weights (self included) are 1/11.
        let row_b: Vec<f64> = (0..20).map(|j| at(b, j)).filter(|&v| v > 0.0).collect();
        assert_eq!(row_b.len(), 11);
        assert!(row_b.iter().all(|&v| (v - 1.0 / 11.0).abs() < 1e-15));
        // Symmetric, doubly stochastic.
        for i in 0..20 {
            let r: f64 = (0..20).map(|j| at(i, j)).sum();
            assert!((r - 1.0).abs() < 1e-12);
            for j in 0..20 {
                assert_eq!(at(i, j), at(j, i));
            }
        }
    }
}
