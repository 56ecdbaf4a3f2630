//! Pure graph algorithms behind the RING, MST and delta-MBST overlays
//! (\[Marfoq20\] Section 3 and Appendix D), on dense delay matrices.
//!
//! Nothing here knows about networks: inputs are [`DenseMatrix`] values whose
//! entry `(i, j)` is a weight or delay in ms from node `i` to node `j`.
//!
//! - [`minimum_spanning_tree`]: MST overlay (\[Marfoq20\] Prop. 3.1).
//! - [`delta_prim`], [`hamiltonian_path_in_cube`]: the two candidate families
//!   of the delta-MBST overlay (\[Marfoq20\] Algorithm 1; Algorithm 2 is delta-Prim).
//! - [`christofides_tour`], [`improve_directed_ring`], [`directed_ring_cost`]:
//!   the RING overlay (\[Marfoq20\] Prop. 3.3 / 3.6), Christofides plus asymmetric local
//!   search on the directed arc delays.
//!
//! Undirected algorithms read a possibly asymmetric matrix through its
//! symmetrisation `(w(i,j) + w(j,i)) / 2` (the weight `d^(u)` of the proof of
//! \[Marfoq20\] Prop. 3.1), which leaves symmetric matrices unchanged.

mod christofides;
mod delta_prim;
mod matrix;
mod ring_candidates;
mod ring_search;
mod tree;

pub use christofides::{
    approx_min_weight_perfect_matching, christofides_matching_is_exact, christofides_tour,
    christofides_tour_with, EXACT_MATCHING_MAX_NODES, MATCHING_CANDIDATES, MATCHING_SCALE,
};
pub use delta_prim::{delta_prim, delta_prim_symmetric, TieOrder};
pub use matrix::{DenseMatrix, MatrixError};
pub use ring_search::{directed_ring_cost, improve_directed_ring, RingSearch};
pub use tree::{hamiltonian_path_in_cube, minimum_spanning_tree, minimum_spanning_tree_by_rows};

/// Undirected tree/graph edge `(u, v)` with `u < v`.
pub type Edge = (usize, usize);

/// Helpers shared by the unit tests of this module.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{DenseMatrix, Edge};
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    pub fn rng(seed: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(seed)
    }

    /// Symmetric matrix with i.i.d. uniform weights in `[lo, hi)`; with
    /// `integral`, weights are rounded (many ties).
    pub fn random_symmetric(n: usize, rng: &mut ChaCha8Rng, integral: bool) -> DenseMatrix {
        let mut data = vec![0.0; n * n];
        for i in 0..n {
            for j in (i + 1)..n {
                let x: f64 = rng.gen_range(1.0..100.0);
                let x = if integral { x.round() / 10.0 } else { x };
                data[i * n + j] = x;
                data[j * n + i] = x;
            }
        }
        DenseMatrix::new(n, data).unwrap()
    }

    pub fn random_points(n: usize, rng: &mut ChaCha8Rng) -> Vec<(f64, f64)> {
        (0..n)
            .map(|_| (rng.gen_range(0.0..1000.0), rng.gen_range(0.0..1000.0)))
            .collect()
    }

    pub fn euclidean(points: &[(f64, f64)]) -> DenseMatrix {
        DenseMatrix::from_fn(points.len(), |i, j| {
            let (a, b) = (points[i], points[j]);
            (a.0 - b.0).hypot(a.1 - b.1)
        })
        .unwrap()
    }

    /// Asymmetric delays like the overlay's: a metric part plus independent
    /// per-direction terms.
    pub fn random_asymmetric(n: usize, rng: &mut ChaCha8Rng) -> DenseMatrix {
        let pts = random_points(n, rng);
        let base = euclidean(&pts);
        let up: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..300.0)).collect();
        let dn: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..300.0)).collect();
        let noise: Vec<f64> = (0..n * n).map(|_| rng.gen_range(0.0..200.0)).collect();
        DenseMatrix::from_fn(n, |i, j| {
            base.get(i, j) + up[i].max(dn[j]) + noise[i * n + j]
        })
        .unwrap()
    }

    pub fn random_permutation(n: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        p.shuffle(rng);
        p
    }

    /// Random labelled tree: node `perm[v]` hangs under `perm[rng(0..v)]`,
    /// with a bias parameter to produce deep (path-like) or bushy trees.
    pub fn random_tree(n: usize, rng: &mut ChaCha8Rng) -> Vec<Edge> {
        let perm = random_permutation(n, rng);
        let depth_bias: f64 = rng.gen();
        (1..n)
            .map(|v| {
                let p = if rng.gen::<f64>() < depth_bias {
                    v - 1
                } else {
                    rng.gen_range(0..v)
                };
                let (a, b) = (perm[p], perm[v]);
                (a.min(b), a.max(b))
            })
            .collect()
    }

    /// All-pairs hop distances in a tree.
    pub fn tree_distances(n: usize, tree: &[Edge]) -> Vec<Vec<usize>> {
        let mut adj = vec![Vec::new(); n];
        for &(u, v) in tree {
            adj[u].push(v);
            adj[v].push(u);
        }
        (0..n)
            .map(|s| {
                let mut dist = vec![usize::MAX; n];
                dist[s] = 0;
                let mut queue = std::collections::VecDeque::from([s]);
                while let Some(v) = queue.pop_front() {
                    for &x in &adj[v] {
                        if dist[x] == usize::MAX {
                            dist[x] = dist[v] + 1;
                            queue.push_back(x);
                        }
                    }
                }
                dist
            })
            .collect()
    }

    pub fn is_permutation(tour: &[usize], n: usize) -> bool {
        let mut seen = vec![false; n];
        tour.len() == n
            && tour
                .iter()
                .all(|&v| v < n && !std::mem::replace(&mut seen[v], true))
    }

    /// Whether `edges` is a spanning tree of `0..n` with `u < v` edges.
    pub fn is_spanning_tree(n: usize, edges: &[Edge]) -> bool {
        if n == 0 {
            return edges.is_empty();
        }
        let mut uf: Vec<usize> = (0..n).collect();
        fn find(uf: &mut [usize], x: usize) -> usize {
            let mut r = x;
            while uf[r] != r {
                r = uf[r];
            }
            uf[x] = r;
            r
        }
        edges.len() == n - 1
            && edges.iter().all(|&(u, v)| {
                if u >= v || v >= n {
                    return false;
                }
                let (a, b) = (find(&mut uf, u), find(&mut uf, v));
                uf[a] = b;
                a != b
            })
    }

    pub fn tree_weight(w: &DenseMatrix, edges: &[Edge]) -> f64 {
        edges.iter().map(|&(u, v)| w.get(u, v)).sum()
    }

    /// Optimal directed ring by enumerating all `(n-1)!` cycles through 0.
    pub fn brute_force_ring(d: &DenseMatrix) -> (f64, Vec<usize>) {
        let n = d.n();
        if n <= 1 {
            return (0.0, (0..n).collect());
        }
        let mut best = (f64::INFINITY, Vec::new());
        let mut rest: Vec<usize> = (1..n).collect();
        permute(&mut rest, 0, &mut |p| {
            let mut tour = vec![0];
            tour.extend_from_slice(p);
            let c = super::directed_ring_cost(d, &tour);
            if c < best.0 {
                best = (c, tour);
            }
        });
        best
    }

    fn permute(a: &mut [usize], k: usize, f: &mut impl FnMut(&[usize])) {
        if k == a.len() {
            f(a);
            return;
        }
        for i in k..a.len() {
            a.swap(k, i);
            permute(a, k + 1, f);
            a.swap(k, i);
        }
    }
}

#[cfg(test)]
mod proptests {
    use super::test_support::is_permutation;
    use super::*;
    use proptest::prelude::*;

    /// A square matrix of side 1..12 with arbitrary finite entries (including
    /// zeros, negatives and many ties).
    fn matrix() -> impl Strategy<Value = DenseMatrix> {
        (1_usize..12).prop_flat_map(|n| {
            let entry = prop_oneof![(-1e3..1e3_f64), (0_u8..4).prop_map(f64::from)];
            prop::collection::vec(entry, n * n)
                .prop_map(move |data| DenseMatrix::new(n, data).unwrap())
        })
    }

    proptest! {
        #[test]
        fn nothing_panics_and_outputs_are_valid(d in matrix(), delta in 0_usize..14, seed in any::<u64>()) {
            let n = d.n();
            let mst = minimum_spanning_tree(&d);
            prop_assert!(test_support::is_spanning_tree(n, &mst));
            let root = (seed as usize) % n;
            if let Some(t) = delta_prim(&d, delta, root) {
                prop_assert!(test_support::is_spanning_tree(n, &t));
            } else {
                prop_assert!(delta < 2);
            }
            let path = hamiltonian_path_in_cube(n, &mst);
            prop_assert!(is_permutation(&path, n));
            let tour = christofides_tour(&d);
            prop_assert!(is_permutation(&tour, n));
            let before = directed_ring_cost(&d, &tour);
            let out = improve_directed_ring(&d, tour, &RingSearch::default());
            prop_assert!(is_permutation(&out, n));
            prop_assert!(directed_ring_cost(&d, &out) <= before);
        }
    }
}
