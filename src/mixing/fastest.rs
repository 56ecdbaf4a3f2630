//! Fastest-mixing symmetric weights on an undirected graph (\[Boyd04\]).
//!
//! Choose one weight `w_l >= 0` per edge `l = {i, j}`; the consensus
//! matrix is `W = I - sum_l w_l (e_i - e_j)(e_i - e_j)^T` (symmetric, rows
//! sum to 1, `W_ij = w_l` on edges, 0 off them), feasible when every
//! diagonal entry `1 - sum_{l at i} w_l` is `>= 0`. Minimise the
//! second-largest eigenvalue modulus `||W - J/n||_2` (\[Boyd04\]: the
//! fastest mixing Markov chain problem, a semidefinite program).
//!
//! Solved by a projected subgradient method (as \[Boyd04\] propose for
//! large graphs): a
//! subgradient of `||W - J/n||_2` at `w` is `-(u_i - u_j)^2` per edge when
//! the extreme eigenvalue is `lambda_2` (unit eigenvector `u`) and
//! `+(v_i - v_j)^2` when it is `-lambda_n` (eigenvector `v`), averaged
//! over a multiple eigenvalue's eigenvectors; steps
//! `alpha_k = alpha_0 w_mean / sqrt(k)` along the normalised subgradient, each
//! followed by the Euclidean projection onto the feasible set (Dykstra's
//! alternating projections onto `w >= 0` and the per-node half-spaces).
//! Started from Metropolis–Hastings weights (feasible); the best iterate is
//! kept, so the result never mixes slower than Metropolis–Hastings. The
//! method converges to the optimum; it does not certify it (no dual bound):
//! the iterations run and the SLEM reached are reported.

use nalgebra::DMatrix;

use crate::mixing::ConsensusMatrix;

use super::krylov::{Reorthogonalisation, SpectralError, WarmStart};
use super::spectrum::{symmetric_eigen, SpectrumError};

/// Largest work `iterations x n³` the commands run fastest-mixing weights
/// for unless asked with fewer iterations: the default 2000 iterations up
/// to 300 silos. Each iteration is a dense `n x n` symmetric
/// eigendecomposition; 2000 of them at 300 silos took 2.7 min on a loaded
/// 2-core machine (`fedtopo mixing aws-gaia --silos 300 --overlays mst
/// --iterations 41`: 3.1 s for 40 iterations), at 2000 silos they would
/// take hours.
pub const MAX_FASTEST_WORK: f64 = 2000.0 * 300.0 * 300.0 * 300.0;

/// Why fastest-mixing weights of `iterations` iterations on `n` silos are
/// beyond [`MAX_FASTEST_WORK`], naming the iterations that would fit;
/// `None` when they are within it.
pub fn fastest_work_note(n: usize, iterations: usize) -> Option<String> {
    let cube = (n as f64).powi(3);
    if iterations as f64 * cube <= MAX_FASTEST_WORK {
        return None;
    }
    let fits = (MAX_FASTEST_WORK / cube).floor();
    let times = iterations as f64 * cube / MAX_FASTEST_WORK;
    Some(format!(
        "fastest-mixing weights skipped: {iterations} subgradient iterations on {n} silos, each a \
         {n}x{n} eigendecomposition, are {times:.1} times the bound (2000 iterations at 300 \
         silos, about 3 min on 2 cores); {} run within it",
        if fits >= 1.0 {
            format!("--iterations {fits} or fewer")
        } else {
            "no iteration count".to_string()
        }
    ))
}

/// Settings of [`fastest_mixing`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FastestOptions {
    /// Subgradient iterations (>= 1).
    pub iterations: usize,
    /// Initial step `alpha_0` (> 0), relative to the mean
    /// Metropolis–Hastings weight.
    pub step: f64,
    /// How the Lanczos extreme eigenpairs (above 64 silos) keep their basis
    /// orthogonal: [`Reorthogonalisation::Classical`] (the default, fast),
    /// or the historical [`Reorthogonalisation::Modified`] (slower; the
    /// weights differ by the rounding of the iterates).
    pub reorthogonalisation: Reorthogonalisation,
}

impl Default for FastestOptions {
    fn default() -> Self {
        FastestOptions {
            iterations: 2000,
            step: 0.5,
            reorthogonalisation: Reorthogonalisation::Classical,
        }
    }
}

/// Fastest-mixing weights of an undirected graph.
#[derive(Debug, Clone, PartialEq)]
pub struct FastestMixing {
    /// Number of nodes.
    pub n: usize,
    /// The graph's edges `(i, j)`, `i < j`, sorted, without duplicates.
    pub edges: Vec<(usize, usize)>,
    /// The weight of every edge, in the order of `edges`.
    pub weights: Vec<f64>,
    /// The consensus matrix `W` (symmetric, doubly stochastic).
    pub matrix: ConsensusMatrix,
    /// `||W - J/n||_2` of the weights found.
    pub slem: f64,
    /// `||W - J/n||_2` of the Metropolis–Hastings weights (the start).
    pub metropolis_slem: f64,
    /// Subgradient iterations run.
    pub iterations: usize,
}

impl FastestMixing {
    /// Spectral gap `1 - SLEM` of the weights found.
    pub fn spectral_gap(&self) -> f64 {
        1.0 - self.slem
    }

    /// Spectral gap of the Metropolis–Hastings weights.
    pub fn metropolis_spectral_gap(&self) -> f64 {
        1.0 - self.metropolis_slem
    }
}

/// Why fastest-mixing weights could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MixingError {
    /// An edge names a node outside `0..n`, or is a self-loop.
    #[error("edge ({a}, {b}) is not an edge between two of the {n} nodes")]
    BadEdge {
        /// One endpoint.
        a: usize,
        /// The other endpoint.
        b: usize,
        /// Number of nodes.
        n: usize,
    },
    /// The overlay is directed: symmetric weights need both arcs of every edge.
    #[error(
        "fastest-mixing weights are symmetric: they need an undirected overlay \
         (arc {a} -> {b} has no reverse arc)"
    )]
    Directed {
        /// Tail of the arc without reverse.
        a: usize,
        /// Head.
        b: usize,
    },
    /// Bad options.
    #[error("fastest-mixing options: {0}")]
    Options(String),
    /// An eigenvalue computation failed (bounded, [`super::spectrum`]).
    #[error("mixing measure: {0}")]
    Spectrum(#[from] SpectrumError),
    /// The Lanczos extreme eigenpairs (above 64 silos, [`super::krylov`])
    /// did not converge within their bounded steps.
    #[error("fastest-mixing eigenvalues: {0}")]
    Krylov(#[from] SpectralError),
}

/// The edges `{a, b}` of an undirected overlay given by its arcs (both
/// directions present), sorted `(min, max)` pairs.
///
/// # Errors
/// [`MixingError::Directed`] when an arc has no reverse arc;
/// [`MixingError::BadEdge`] for an out-of-range node or a self-loop.
pub fn undirected_edges(
    n: usize,
    arcs: &[(usize, usize)],
) -> Result<Vec<(usize, usize)>, MixingError> {
    let set: std::collections::BTreeSet<(usize, usize)> = arcs.iter().copied().collect();
    let mut edges = Vec::new();
    for &(a, b) in &set {
        if a >= n || b >= n || a == b {
            return Err(MixingError::BadEdge { a, b, n });
        }
        if !set.contains(&(b, a)) {
            return Err(MixingError::Directed { a, b });
        }
        if a < b {
            edges.push((a, b));
        }
    }
    Ok(edges)
}

/// Fastest-mixing symmetric weights on the undirected graph with `n` nodes
/// and `edges` (each `{a, b}` once, either order).
///
/// # Errors
/// [`MixingError::BadEdge`] for an edge outside `0..n` or a self-loop;
/// [`MixingError::Options`] for zero iterations or a non-positive step;
/// [`MixingError::Spectrum`] when an eigenvalue computation fails.
pub fn fastest_mixing(
    n: usize,
    edges: &[(usize, usize)],
    options: &FastestOptions,
) -> Result<FastestMixing, MixingError> {
    if options.iterations == 0 || !(options.step.is_finite() && options.step > 0.0) {
        return Err(MixingError::Options(format!(
            "expected iterations >= 1 and a finite step > 0, got {} and {}",
            options.iterations, options.step
        )));
    }
    let mut e: Vec<(usize, usize)> = Vec::with_capacity(edges.len());
    for &(a, b) in edges {
        if a >= n || b >= n || a == b {
            return Err(MixingError::BadEdge { a, b, n });
        }
        e.push((a.min(b), a.max(b)));
    }
    e.sort_unstable();
    e.dedup();
    let mut degree = vec![0usize; n];
    for &(a, b) in &e {
        degree[a] += 1;
        degree[b] += 1;
    }
    let start: Vec<f64> = e
        .iter()
        .map(|&(a, b)| 1.0 / (1.0 + degree[a].max(degree[b]) as f64))
        .collect();
    let mut warm = WarmStart::default();
    let (metropolis_slem, _) = extreme(n, &e, &start, &mut warm, options.reorthogonalisation)?;
    // Steps are relative to the typical weight (1/degree).
    let scale = if start.is_empty() {
        1.0
    } else {
        start.iter().sum::<f64>() / start.len() as f64
    };
    let mut best = (metropolis_slem, start.clone());
    let mut w = start;
    let mut projection = Projection::new(n, &e);
    let mut iterations = 0;
    let task = crate::progress::Task::start(
        "fastest-mixing weights",
        "iterations",
        options.iterations as u64,
    );
    if task.is_shown() {
        task.message(&format!("{n} silos"));
        task.hint("fewer subgradient iterations (--iterations) shorten it");
    }
    for k in 1..=options.iterations {
        iterations = k;
        task.set(k as u64 - 1);
        let (value, g) = extreme(n, &e, &w, &mut warm, options.reorthogonalisation)?;
        if value < best.0 {
            best = (value, w.clone());
        }
        let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt();
        if value <= 1e-12 || norm <= 1e-15 {
            break;
        }
        let alpha = options.step * scale / (k as f64).sqrt();
        for (wl, gl) in w.iter_mut().zip(&g) {
            *wl -= alpha * gl / norm;
        }
        w = projection.project(&w);
    }
    let (value, _) = extreme(n, &e, &w, &mut warm, options.reorthogonalisation)?;
    if value < best.0 {
        best = (value, w);
    }
    let (slem, weights) = best;
    Ok(FastestMixing {
        n,
        matrix: ConsensusMatrix::from_row_major(n, matrix(n, &e, &weights)),
        edges: e,
        weights,
        slem,
        metropolis_slem,
        iterations,
    })
}

/// `W` of edge weights `w`, row-major: `w_l` at `(a, b)` and `(b, a)` for
/// edge `l = {a, b}` (the off-diagonal entries of
/// [`super::krylov::SparseMatrix::from_edge_weights`]), and on the diagonal `1 - (the sum
/// of the row's off-diagonal entries in column order)`.
///
/// The diagonal is its own: `from_edge_weights` subtracts the weights from
/// 1 one at a time, the same value in exact arithmetic but not always in
/// floating point (`1 - (0.1 + 0.2 + 0.3)` is one ulp below `1 - 0.1 -
/// 0.2 - 0.3`; a third of random rows of three weights differ), and the
/// fastest-mixing weights up to [`DENSE_EXTREME_MAX`] silos, and every
/// returned matrix, are those of this rounding (test
/// `the_dense_diagonal_sums_the_row_then_subtracts`).
fn matrix(n: usize, edges: &[(usize, usize)], w: &[f64]) -> Vec<f64> {
    let mut m = vec![0.0; n * n];
    for (&(a, b), &wl) in edges.iter().zip(w) {
        m[a * n + b] = wl;
        m[b * n + a] = wl;
    }
    for i in 0..n {
        let off: f64 = (0..n).filter(|&j| j != i).map(|j| m[i * n + j]).sum();
        m[i * n + i] = 1.0 - off;
    }
    m
}

/// Largest order solved by the dense eigendecomposition; larger graphs use
/// block Krylov subspaces warm-started from the previous iterate's extreme
/// eigenvectors ([`crate::mixing::krylov`]).
const DENSE_EXTREME_MAX: usize = 64;

/// `||W - J/n||_2` and a subgradient with respect to the edge weights;
/// `warm`: the extreme eigenvectors of the previous call (updated).
fn extreme(
    n: usize,
    edges: &[(usize, usize)],
    w: &[f64],
    warm: &mut WarmStart,
    reorthogonalisation: Reorthogonalisation,
) -> Result<(f64, Vec<f64>), MixingError> {
    if n <= 1 {
        return Ok((0.0, vec![0.0; w.len()]));
    }
    if n > DENSE_EXTREME_MAX {
        return Ok(super::krylov::extreme_subgradient(
            n,
            edges,
            w,
            warm,
            reorthogonalisation,
        )?);
    }
    Ok(extreme_dense(n, edges, w)?)
}

/// [`extreme`] by the dense symmetric eigendecomposition (bounded,
/// [`super::spectrum::symmetric_eigen`]).
fn extreme_dense(
    n: usize,
    edges: &[(usize, usize)],
    w: &[f64],
) -> Result<(f64, Vec<f64>), SpectrumError> {
    let mut m = DMatrix::from_row_slice(n, n, &matrix(n, edges, w));
    m.add_scalar_mut(-1.0 / n as f64);
    let eig = symmetric_eigen(m)?;
    let value = eig.eigenvalues.iter().fold(0.0f64, |v, l| v.max(l.abs()));
    // Extreme eigenvalues are often multiple (symmetric graphs): average
    // the gradients of every eigenvector within 1e-9 of the extreme, a
    // subgradient that moves the whole eigenspace at once.
    let mut g = vec![0.0; edges.len()];
    let mut count = 0.0;
    for (k, l) in eig.eigenvalues.iter().enumerate() {
        if l.abs() < value - 1e-9 {
            continue;
        }
        let sign = if *l >= 0.0 { -1.0 } else { 1.0 };
        let u = eig.eigenvectors.column(k);
        for (gl, &(a, b)) in g.iter_mut().zip(edges) {
            *gl += sign * (u[a] - u[b]).powi(2);
        }
        count += 1.0;
    }
    for gl in &mut g {
        *gl /= count;
    }
    Ok((value, g))
}

/// The projection of the subgradient iterates onto the feasible weights
/// of one graph: the edges at every node, built once, and the Dykstra
/// corrections' buffers, reused from one iterate to the next.
struct Projection {
    /// The edges (indices) at every node.
    at: Vec<Vec<usize>>,
    /// Dykstra corrections: one per node (on its edges).
    node_corr: Vec<Vec<f64>>,
    /// Dykstra corrections of `w >= 0`.
    pos_corr: Vec<f64>,
}

impl Projection {
    /// The projection onto the feasible weights of `edges` on `n` nodes.
    fn new(n: usize, edges: &[(usize, usize)]) -> Projection {
        let mut at: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (l, &(a, b)) in edges.iter().enumerate() {
            at[a].push(l);
            at[b].push(l);
        }
        let node_corr = at.iter().map(|e| vec![0.0; e.len()]).collect();
        Projection {
            at,
            node_corr,
            pos_corr: vec![0.0; edges.len()],
        }
    }

    /// Euclidean projection of `w` onto `{w >= 0, sum_{l at i} w_l <= 1
    /// for every node i}` by Dykstra's alternating projections (sparse: a
    /// node's set touches only its edges), to a change below 1e-13 per
    /// sweep or 500 sweeps; a final clip keeps the result feasible.
    fn project(&mut self, w: &[f64]) -> Vec<f64> {
        for c in &mut self.node_corr {
            c.fill(0.0);
        }
        self.pos_corr.clear();
        self.pos_corr.resize(w.len(), 0.0);
        project_with(&self.at, &mut self.node_corr, &mut self.pos_corr, w)
    }
}

/// [`Projection::project`] with the edges `at` every node and the Dykstra corrections
/// `node_corr` (per node, on its edges) and `pos_corr` (of `w >= 0`), all
/// zero on entry.
fn project_with(
    at: &[Vec<usize>],
    node_corr: &mut [Vec<f64>],
    pos_corr: &mut [f64],
    w: &[f64],
) -> Vec<f64> {
    let mut x = w.to_vec();
    for _ in 0..500 {
        let mut moved = 0.0;
        for (edges_at, corr) in at.iter().zip(node_corr.iter_mut()) {
            if edges_at.is_empty() {
                continue;
            }
            let total: f64 = edges_at
                .iter()
                .zip(corr.iter())
                .map(|(&l, c)| x[l] + c)
                .sum();
            let shift = ((total - 1.0) / edges_at.len() as f64).max(0.0);
            for (&l, c) in edges_at.iter().zip(corr.iter_mut()) {
                let y = x[l] + *c;
                let p = y - shift;
                *c = y - p;
                moved += (p - x[l]).abs();
                x[l] = p;
            }
        }
        for (xl, c) in x.iter_mut().zip(pos_corr.iter_mut()) {
            let y = *xl + *c;
            let p = y.max(0.0);
            *c = y - p;
            moved += (p - *xl).abs();
            *xl = p;
        }
        if moved <= 1e-13 {
            break;
        }
    }
    for edges_at in at {
        let total: f64 = edges_at.iter().map(|&l| x[l]).sum();
        if total > 1.0 {
            for &l in edges_at {
                x[l] /= total;
            }
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_bound_names_the_iterations_that_fit() {
        assert_eq!(fastest_work_note(300, 2000), None);
        assert_eq!(fastest_work_note(22, 2000), None);
        let note = fastest_work_note(600, 2000).unwrap_or_default();
        assert!(note.contains("8.0 times the bound"), "{note}");
        assert!(note.contains("--iterations 250 or fewer"), "{note}");
        assert!(fastest_work_note(600, 250).is_none());
    }
    use crate::mixing::krylov::SparseMatrix;
    use crate::mixing::measures::slem;
    use std::f64::consts::PI;

    /// The dense matrix has the sparse one's entries off the diagonal and
    /// on it `1 - (sum of the row)`, which rounds differently from the
    /// sparse `1 - w_1 - w_2 - ...` (both kept: the results were computed
    /// with them).
    #[test]
    fn the_dense_diagonal_sums_the_row_then_subtracts() {
        let n = 4;
        let edges = [(0, 1), (0, 2), (0, 3), (1, 2)];
        let w = [0.1, 0.2, 0.3, 0.05];
        let dense = matrix(n, &edges, &w);
        let sparse = SparseMatrix::from_edge_weights(n, &edges, &w).to_dense();
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                assert_eq!(dense[i * n + j].to_bits(), sparse[i * n + j].to_bits());
            }
        }
        assert_eq!(dense[0], 1.0 - (0.1 + 0.2 + 0.3));
        assert_eq!(sparse[0], 1.0 - 0.1 - 0.2 - 0.3);
        assert_ne!(dense[0], sparse[0]);
        assert_eq!(dense[n + 1], 1.0 - (0.1 + 0.05));
    }

    fn solve(n: usize, edges: &[(usize, usize)]) -> FastestMixing {
        fastest_mixing(n, edges, &FastestOptions::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn path(n: usize) -> Vec<(usize, usize)> {
        (0..n - 1).map(|i| (i, i + 1)).collect()
    }

    fn cycle(n: usize) -> Vec<(usize, usize)> {
        (0..n).map(|i| (i, (i + 1) % n)).collect()
    }

    fn check_feasible(f: &FastestMixing) {
        let n = f.n;
        for i in 0..n {
            let row: f64 = (0..n).map(|j| f.matrix[(i, j)]).sum();
            assert!((row - 1.0).abs() < 1e-12);
            for j in 0..n {
                assert!(f.matrix[(i, j)] >= -1e-12, "W[{i}][{j}] < 0");
                assert_eq!(f.matrix[(i, j)], f.matrix[(j, i)]);
            }
        }
        assert!((slem(n, f.matrix.as_slice()).unwrap_or(f64::NAN) - f.slem).abs() < 1e-9);
        assert!(f.slem <= f.metropolis_slem + 1e-12);
    }

    /// On a path the fastest chain moves with probability 1/2 each way
    /// (\[Boyd04\]); SLEM cos(pi/n).
    #[test]
    fn path_reaches_the_known_optimum() {
        for n in [4, 5, 8] {
            let f = solve(n, &path(n));
            check_feasible(&f);
            let opt = (PI / n as f64).cos();
            assert!(
                f.slem - opt < 2e-3 && f.slem >= opt - 1e-9,
                "n {n}: {} vs {opt}",
                f.slem
            );
        }
    }

    /// Even cycle: by symmetry the optimum is uniform, `w = 1/(3 - c)` with
    /// `c = cos(2 pi / n)`, SLEM `(1 + c)/(3 - c)` (lambda_2 and -lambda_n
    /// balanced); Metropolis–Hastings (w = 1/3) is slower.
    #[test]
    fn even_cycle_reaches_the_balanced_optimum() {
        for n in [6, 10] {
            let f = solve(n, &cycle(n));
            check_feasible(&f);
            let c = (2.0 * PI / n as f64).cos();
            let opt = (1.0 + c) / (3.0 - c);
            assert!(
                f.slem - opt < 2e-3 && f.slem >= opt - 1e-9,
                "n {n}: {} vs {opt}",
                f.slem
            );
            assert!(f.metropolis_slem > opt + 0.01);
        }
    }

    /// Star with m > 2 leaves: the centre's constraint binds, w = 1/m,
    /// SLEM 1 - 1/m (Metropolis–Hastings: 1 - 1/(m+1)).
    #[test]
    fn star_reaches_the_constrained_optimum() {
        for m in [5, 21] {
            let edges: Vec<(usize, usize)> = (1..=m).map(|i| (0, i)).collect();
            let f = solve(m + 1, &edges);
            check_feasible(&f);
            let opt = 1.0 - 1.0 / m as f64;
            assert!((f.slem - opt).abs() < 2e-4, "m {m}: {} vs {opt}", f.slem);
            assert!((f.metropolis_slem - (1.0 - 1.0 / (m as f64 + 1.0))).abs() < 1e-9);
        }
    }

    /// Complete graph: Metropolis–Hastings is already exact averaging.
    #[test]
    fn complete_graph_is_exact_averaging() {
        let n = 5;
        let edges: Vec<(usize, usize)> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect();
        let f = solve(n, &edges);
        check_feasible(&f);
        assert!(f.slem < 1e-9);
    }

    #[test]
    fn irregular_graph_improves_and_stays_feasible() {
        // Two triangles joined by a bridge, plus a pendant node.
        let edges = [
            (0, 1),
            (1, 2),
            (0, 2),
            (2, 3),
            (3, 4),
            (4, 5),
            (3, 5),
            (5, 6),
        ];
        let f = solve(7, &edges);
        check_feasible(&f);
        assert!(
            f.slem < f.metropolis_slem - 1e-3,
            "{} vs {}",
            f.slem,
            f.metropolis_slem
        );
    }

    /// Above 64 silos the extreme eigenpairs come from Lanczos: the fast
    /// reorthogonalisation (the default) and the historical one both give
    /// feasible weights whose SLEM is the dense SLEM of their matrix,
    /// never slower than Metropolis–Hastings, and the same optimum to the
    /// subgradient's own accuracy (their iterates differ by rounding).
    #[test]
    fn lanczos_variants_agree_above_64_silos() {
        let n = 70;
        let mut edges = path(n);
        edges.extend((0..25).map(|k| (k * 11 % n, (k * 11 + 2 + k % 5) % n)));
        edges.retain(|&(a, b)| a != b);
        let fast = solve(n, &edges);
        let reference = fastest_mixing(
            n,
            &edges,
            &FastestOptions {
                reorthogonalisation: Reorthogonalisation::Modified,
                ..FastestOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        check_feasible(&fast);
        check_feasible(&reference);
        assert!(fast.slem < fast.metropolis_slem - 1e-3);
        assert!(
            (fast.slem - reference.slem).abs() <= 1e-3 * (1.0 - reference.slem),
            "{} vs {}",
            fast.slem,
            reference.slem
        );
    }

    #[test]
    fn errors() {
        let o = FastestOptions::default();
        assert!(matches!(
            fastest_mixing(3, &[(0, 3)], &o),
            Err(MixingError::BadEdge { .. })
        ));
        assert!(matches!(
            fastest_mixing(3, &[(1, 1)], &o),
            Err(MixingError::BadEdge { .. })
        ));
        let bad = FastestOptions { iterations: 0, ..o };
        assert!(fastest_mixing(3, &[(0, 1)], &bad).is_err());
        assert_eq!(
            undirected_edges(3, &[(0, 1), (1, 0), (1, 2), (2, 1)]),
            Ok(vec![(0, 1), (1, 2)])
        );
        assert_eq!(
            undirected_edges(3, &[(0, 1), (1, 2), (2, 1)]),
            Err(MixingError::Directed { a: 0, b: 1 })
        );
    }
}
