//! Cheap extreme eigenvalues of sparse consensus matrices: Krylov
//! (Rayleigh–Ritz) bounds and a Lanczos SLEM, for the arc augmentation and
//! the design search, where a full eigendecomposition per candidate is too
//! slow.
//!
//! Every consensus matrix `W` here has rows summing to 1, so `W 1 = 1` and,
//! in an orthonormal basis `(1/sqrt(n), Q)` with `Q` spanning `1⊥`, `W` is
//! block upper triangular with blocks `1` and `Q^T W Q`: the eigenvalues of
//! `Q^T W Q` are exactly the eigenvalues of `W` other than the consensus
//! one. All subspaces below are kept orthogonal to `1`, so the SLEM is the
//! spectral radius of the compressed operator.
//!
//! * [`krylov_ritz`]: the Rayleigh–Ritz values of `W` on a small Krylov
//!   subspace `span{S, WS, W^2 S, ...}` of start vectors `S` (Lanczos in
//!   block form, Saad, "Numerical Methods for Large Eigenvalue Problems",
//!   2nd ed., 2011, ch. 6). For **symmetric** `W` (Cauchy interlacing,
//!   Courant–Fischer) every Ritz value lies in `[lambda_n, lambda_2]`, so
//!   `max(theta_max, -theta_min) <= SLEM`: a rigorous lower bound on the
//!   SLEM, i.e. an upper bound on the spectral gap, from a few sparse
//!   products. For non-symmetric `W` the Ritz values are estimates only.
//! * [`lanczos_slem`]: the SLEM of a symmetric `W` by Lanczos with full
//!   reorthogonalisation, iterated until both extreme Ritz values have a
//!   residual below the tolerance (then each is within that residual of an
//!   eigenvalue), at most `n - 1` steps (then the Krylov space is all of
//!   `1⊥` and the Ritz values are the eigenvalues): bounded, and a typed
//!   error when the residuals do not fall.

use nalgebra::{Complex, DMatrix};

use super::avx2::avx2_dispatch;
use super::spectrum::{complex_eigenvalues, gelfand_radius, symmetric_eigenvalues, SpectrumError};
use super::tridiagonal::tridiagonal_extreme;

/// A square matrix known by its products `y = M x`.
pub trait Operator {
    /// Order `n` of the matrix.
    fn order(&self) -> usize;
    /// `y = M x` (`x`, `y` of length `n`).
    fn apply(&self, x: &[f64], y: &mut [f64]);
}

impl Operator for SparseMatrix {
    fn order(&self) -> usize {
        self.n
    }
    fn apply(&self, x: &[f64], y: &mut [f64]) {
        self.mul(x, y);
    }
}

/// A sparse matrix with some rows replaced (a candidate's consensus
/// matrix: the rows its added arc changes), without copying the rest.
pub struct PatchedRows<'a> {
    /// The matrix the rows replace rows of.
    pub base: &'a SparseMatrix,
    /// `(row, its (column, value) entries)`, rows distinct.
    pub rows: &'a [(usize, Vec<(usize, f64)>)],
}

impl Operator for PatchedRows<'_> {
    fn order(&self) -> usize {
        self.base.n
    }
    fn apply(&self, x: &[f64], y: &mut [f64]) {
        self.base.mul(x, y);
        for (i, row) in self.rows {
            y[*i] = row.iter().map(|&(j, v)| v * x[j]).sum();
        }
    }
}

/// A sparse square matrix in compressed rows (CSR).
#[derive(Debug, Clone, PartialEq)]
pub struct SparseMatrix {
    n: usize,
    row_start: Vec<usize>,
    cols: Vec<usize>,
    vals: Vec<f64>,
}

impl SparseMatrix {
    /// The nonzeros of a row-major dense `n x n` matrix.
    pub fn from_dense(n: usize, w: &[f64]) -> SparseMatrix {
        let mut m = SparseMatrix {
            n,
            row_start: Vec::with_capacity(n + 1),
            cols: Vec::new(),
            vals: Vec::new(),
        };
        m.row_start.push(0);
        for i in 0..n {
            for j in 0..n {
                let x = w[i * n + j];
                if x != 0.0 {
                    m.cols.push(j);
                    m.vals.push(x);
                }
            }
            m.row_start.push(m.cols.len());
        }
        m
    }

    /// Rows given as `(column, value)` lists (any order of columns).
    pub fn from_rows(rows: &[Vec<(usize, f64)>]) -> SparseMatrix {
        let mut m = SparseMatrix {
            n: rows.len(),
            row_start: Vec::with_capacity(rows.len() + 1),
            cols: Vec::new(),
            vals: Vec::new(),
        };
        m.row_start.push(0);
        for r in rows {
            for &(j, x) in r {
                m.cols.push(j);
                m.vals.push(x);
            }
            m.row_start.push(m.cols.len());
        }
        m
    }

    /// `W = I - sum_l w_l (e_i - e_j)(e_i - e_j)^T` of the symmetric
    /// weights `w` on `edges` (nodes below `n`): row `i` holds the weights
    /// of its edges in edge order, then its diagonal `1 - sum` (subtracted
    /// in edge order). Built in place, without a list per row. The dense
    /// `W` of [`super::fastest`] has the same off-diagonal entries; its
    /// diagonal sums the row first, then subtracts (another rounding).
    pub fn from_edge_weights(n: usize, edges: &[(usize, usize)], w: &[f64]) -> SparseMatrix {
        let mut row_start = vec![0usize; n + 1];
        for &(a, b) in edges.iter().take(w.len()) {
            row_start[a + 1] += 1;
            row_start[b + 1] += 1;
        }
        for i in 0..n {
            row_start[i + 1] += row_start[i] + 1;
        }
        let nnz = row_start[n];
        let mut cols = vec![0usize; nnz];
        let mut vals = vec![0.0; nnz];
        let mut next: Vec<usize> = row_start[..n].to_vec();
        let mut diag = vec![1.0; n];
        for (&(a, b), &wl) in edges.iter().zip(w) {
            (cols[next[a]], vals[next[a]]) = (b, wl);
            next[a] += 1;
            (cols[next[b]], vals[next[b]]) = (a, wl);
            next[b] += 1;
            diag[a] -= wl;
            diag[b] -= wl;
        }
        for (i, &d) in diag.iter().enumerate() {
            (cols[next[i]], vals[next[i]]) = (i, d);
        }
        SparseMatrix {
            n,
            row_start,
            cols,
            vals,
        }
    }

    /// Order of the matrix.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The `(column, value)` entries of row `i`.
    pub fn row(&self, i: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        (self.row_start[i]..self.row_start[i + 1]).map(move |k| (self.cols[k], self.vals[k]))
    }

    /// `y = M x`.
    pub fn mul(&self, x: &[f64], y: &mut [f64]) {
        for (i, yi) in y.iter_mut().enumerate().take(self.n) {
            let mut s = 0.0;
            for k in self.row_start[i]..self.row_start[i + 1] {
                s += self.vals[k] * x[self.cols[k]];
            }
            *yi = s;
        }
    }

    /// The dense row-major matrix.
    pub fn to_dense(&self) -> Vec<f64> {
        let n = self.n;
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for k in self.row_start[i]..self.row_start[i + 1] {
                w[i * n + self.cols[k]] += self.vals[k];
            }
        }
        w
    }
}

/// Why a fast spectral computation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpectralError {
    /// The iteration cap was reached before the residuals fell below the
    /// tolerance.
    #[error(
        "Lanczos did not converge in {iterations} iterations (residual {residual:e}, \
         tolerance {tolerance:e})"
    )]
    NotConverged {
        /// Iterations run.
        iterations: usize,
        /// Largest residual of the extreme Ritz pairs at the end.
        residual: f64,
        /// Tolerance asked for.
        tolerance: f64,
    },
    /// The small projected eigenproblem did not converge (bounded QR).
    #[error("the projected {size} x {size} eigenproblem did not converge")]
    Projected {
        /// Order of the projected matrix.
        size: usize,
    },
    /// Bad input (sizes, non-finite values).
    #[error("spectral input: {0}")]
    Invalid(String),
    /// A dense eigenvalue computation failed ([`super::spectrum`]).
    #[error(transparent)]
    Dense(#[from] SpectrumError),
}

/// `x - (mean of x) 1`: the component of `x` orthogonal to `1`.
fn remove_mean(x: &mut [f64]) {
    if x.is_empty() {
        return;
    }
    let m = x.iter().sum::<f64>() / x.len() as f64;
    for v in x.iter_mut() {
        *v -= m;
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// [`dot`] of four vectors of `x`'s length with `x`, to the bit (each
/// summed in order from the same start as `Iterator::sum`), side by side:
/// four independent chains of additions instead of one after another.
#[inline(always)]
fn dots4(q: [&[f64]; 4], x: &[f64]) -> [f64; 4] {
    if q.iter().any(|v| v.len() != x.len()) {
        return q.map(|v| dot(v, x));
    }
    let zero: f64 = std::iter::empty::<f64>().sum();
    let mut s = [zero; 4];
    for ((((y, a), b), c), d) in x.iter().zip(q[0]).zip(q[1]).zip(q[2]).zip(q[3]) {
        s[0] += a * y;
        s[1] += b * y;
        s[2] += c * y;
        s[3] += d * y;
    }
    s
}

/// The dot product of a Krylov projection: [`Sequential`] or
/// [`PartialSums`], chosen at compile time so that it is inlined into the
/// projection's AVX2 build.
trait DotProduct {
    /// `a . b`.
    fn dot(a: &[f64], b: &[f64]) -> f64;
    /// `q_k . x` for four `q_k`, each to the bit of [`Self::dot`]`(q_k, x)`.
    fn dot4(q: [&[f64]; 4], x: &[f64]) -> [f64; 4];
}

/// [`dot`]: summed in order.
struct Sequential;

impl DotProduct for Sequential {
    #[inline(always)]
    fn dot(a: &[f64], b: &[f64]) -> f64 {
        dot(a, b)
    }
    #[inline(always)]
    fn dot4(q: [&[f64]; 4], x: &[f64]) -> [f64; 4] {
        dots4(q, x)
    }
}

/// [`fast_dot`]: four partial sums.
struct PartialSums;

impl DotProduct for PartialSums {
    #[inline(always)]
    fn dot(a: &[f64], b: &[f64]) -> f64 {
        fast_dot(a, b)
    }
    #[inline(always)]
    fn dot4(q: [&[f64]; 4], x: &[f64]) -> [f64; 4] {
        if q.iter().any(|v| v.len() != x.len()) {
            return q.map(|v| fast_dot(v, x));
        }
        fast_dots4(q, x)
    }
}

/// `a . b` with four partial sums (vectorisable; the rounding differs from
/// the sequential [`dot`]). Inlined, so that the AVX2 builds of its
/// callers compile it for AVX2 too (the same operations, the same bits).
#[inline(always)]
fn fast_dot(a: &[f64], b: &[f64]) -> f64 {
    let (mut s0, mut s1, mut s2, mut s3) = (0.0, 0.0, 0.0, 0.0);
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        s0 += x[0] * y[0];
        s1 += x[1] * y[1];
        s2 += x[2] * y[2];
        s3 += x[3] * y[3];
    }
    let tail: f64 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    (s0 + s1) + (s2 + s3) + tail
}

/// [`fast_dot`] of each of `q` with `x`, into `out` (cleared first), to the
/// bit: four vectors per pass over `x`, each with [`fast_dot`]'s partial
/// sums in its order, so four independent chains of additions run side by
/// side and `x` is read once per four (the Lanczos reorthogonalisation's
/// coefficients, its largest cost).
#[inline(always)]
fn fast_dots(q: &[Vec<f64>], x: &[f64], out: &mut Vec<f64>) {
    out.clear();
    let mut groups = q.chunks_exact(4);
    for g in &mut groups {
        if g.iter().any(|v| v.len() != x.len()) {
            out.extend(g.iter().map(|v| fast_dot(v, x)));
            continue;
        }
        out.extend(fast_dots4([&g[0], &g[1], &g[2], &g[3]], x));
    }
    out.extend(groups.remainder().iter().map(|v| fast_dot(v, x)));
}

/// [`fast_dot`] of four vectors of `x`'s length with `x`, side by side.
#[inline(always)]
fn fast_dots4(q: [&[f64]; 4], x: &[f64]) -> [f64; 4] {
    let mut s = [[0.0f64; 4]; 4];
    let chunks = x
        .chunks_exact(4)
        .zip(q[0].chunks_exact(4))
        .zip(q[1].chunks_exact(4))
        .zip(q[2].chunks_exact(4))
        .zip(q[3].chunks_exact(4));
    for ((((y, a), b), c), d) in chunks {
        for (sv, v) in s.iter_mut().zip([a, b, c, d]) {
            sv[0] += v[0] * y[0];
            sv[1] += v[1] * y[1];
            sv[2] += v[2] * y[2];
            sv[3] += v[3] * y[3];
        }
    }
    let tail_start = x.len() - x.len() % 4;
    let mut out = [0.0; 4];
    for ((o, sv), v) in out.iter_mut().zip(&s).zip(q) {
        let tail: f64 = v[tail_start..]
            .iter()
            .zip(&x[tail_start..])
            .map(|(x, y)| x * y)
            .sum();
        *o = (sv[0] + sv[1]) + (sv[2] + sv[3]) + tail;
    }
    out
}

/// `r -= sum_k c_k q_k`, the `q_k` subtracted one after another from each
/// entry (in `k` order, as a loop over `k` would: the same bits), four of
/// them per pass over `r`.
#[inline(always)]
fn subtract_combination(r: &mut [f64], q: &[Vec<f64>], c: &[f64]) {
    let mut groups = q.chunks_exact(4).zip(c.chunks_exact(4));
    for (g, cg) in &mut groups {
        if g.iter().any(|v| v.len() < r.len()) {
            for (qk, &ck) in g.iter().zip(cg) {
                for (ri, qi) in r.iter_mut().zip(qk) {
                    *ri -= ck * qi;
                }
            }
            continue;
        }
        let (a, b, cc, d) = (&g[0], &g[1], &g[2], &g[3]);
        for ((((ri, a), b), cq), d) in r.iter_mut().zip(a).zip(b).zip(cc).zip(d) {
            *ri = *ri - cg[0] * a - cg[1] * b - cg[2] * cq - cg[3] * d;
        }
    }
    let done = q.len() - q.len() % 4;
    for (qk, &ck) in q[done..].iter().zip(&c[done.min(c.len())..]) {
        for (ri, qi) in r.iter_mut().zip(qk) {
            *ri -= ck * qi;
        }
    }
}

fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

/// Orthogonalises `x` against `1` and `basis` (two passes of Gram–Schmidt)
/// and normalises it; `false` when nothing independent is left.
fn orthonormalise(x: &mut [f64], basis: &[Vec<f64>]) -> bool {
    orthonormalise_by::<Sequential>(x, basis)
}

/// [`orthonormalise`] with the dot product `D` ([`fast_dot`] where only
/// the rounding changes and nothing depends on it bit for bit).
#[inline(always)]
fn orthonormalise_by<D: DotProduct>(x: &mut [f64], basis: &[Vec<f64>]) -> bool {
    let before = norm(x);
    if !(before.is_finite() && before > 0.0) {
        return false;
    }
    for _ in 0..2 {
        remove_mean(x);
        for q in basis {
            let c = D::dot(q, x);
            for (xi, qi) in x.iter_mut().zip(q) {
                *xi -= c * qi;
            }
        }
    }
    let after = norm(x);
    if after.is_nan() || after <= 1e-10 * before {
        return false;
    }
    for v in x.iter_mut() {
        *v /= after;
    }
    true
}

/// The projected matrix `H = V^T W V` on the Krylov subspace
/// `span{S, W S, ..., W^(depth-1) S}` orthogonalised against `1`, and the
/// orthonormal basis `V` (columns as vectors). Start vectors (any slices
/// or vectors: `&[&[f64]]`, `&[Vec<f64>]`) that add nothing independent
/// are skipped; `H` is empty when no direction is left.
pub fn krylov_projection(
    w: &impl Operator,
    starts: &[impl AsRef<[f64]>],
    depth: usize,
) -> (DMatrix<f64>, Vec<Vec<f64>>) {
    krylov_projection_by::<Sequential>(w, starts, depth)
}

avx2_dispatch! {
    /// [`krylov_projection`] with the dot product `D`.
    fn krylov_projection_by[D: DotProduct][D](
        w: &impl Operator,
        starts: &[impl AsRef<[f64]>],
        depth: usize,
    ) -> (DMatrix<f64>, Vec<Vec<f64>>) => krylov_projection_portable
}

/// [`krylov_projection_by`] for any CPU.
#[inline(always)]
fn krylov_projection_portable<D: DotProduct>(
    w: &impl Operator,
    starts: &[impl AsRef<[f64]>],
    depth: usize,
) -> (DMatrix<f64>, Vec<Vec<f64>>) {
    let orthonormalise = |x: &mut [f64], basis: &[Vec<f64>]| orthonormalise_by::<D>(x, basis);
    let n = w.order();
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut images: Vec<Vec<f64>> = Vec::new();
    let mut block: Vec<Vec<f64>> = Vec::new();
    for s in starts {
        let mut x = s.as_ref().to_vec();
        if x.len() == n && orthonormalise(&mut x, &basis) {
            basis.push(x.clone());
            block.push(x);
        }
    }
    for level in 0..depth {
        let mut next = Vec::new();
        for x in &block {
            let mut y = vec![0.0; n];
            w.apply(x, &mut y);
            images.push(y.clone());
            if level + 1 < depth {
                next.push(y);
            }
        }
        block.clear();
        for mut y in next {
            if basis.len() >= n.saturating_sub(1) {
                break;
            }
            if orthonormalise(&mut y, &basis) {
                basis.push(y.clone());
                block.push(y);
            }
        }
        if block.is_empty() {
            break;
        }
    }
    // Every basis vector has its image (the last level's were computed).
    let k = basis.len().min(images.len());
    let mut h = DMatrix::zeros(k, k);
    for c in 0..k {
        // Four rows at a time (the same values: [`DotProduct::dot4`]).
        let mut r = 0;
        while r + 4 <= k {
            let q = [&basis[r], &basis[r + 1], &basis[r + 2], &basis[r + 3]];
            let values = D::dot4(q.map(Vec::as_slice), &images[c]);
            for (d, v) in values.into_iter().enumerate() {
                h[(r + d, c)] = v;
            }
            r += 4;
        }
        for r in r..k {
            h[(r, c)] = D::dot(&basis[r], &images[c]);
        }
    }
    basis.truncate(k);
    (h, basis)
}

/// Ritz values of `W` on the Krylov subspace of `starts` (see
/// [`krylov_projection`]). For symmetric `W` they are real (the projected
/// matrix is symmetrised against rounding) and each lies within
/// `[lambda_n, lambda_2]` of `W` on `1⊥` (up to rounding, whatever the
/// rounding of the basis: dot products with partial sums are used there;
/// non-symmetric `W` keeps the sequential ones, as its Ritz values are
/// estimates that rank candidates). For non-symmetric `W` whose
/// small projected eigenproblem does not converge within its bounded
/// iterations, one value: the projected matrix's spectral radius (what
/// [`largest_modulus`] of the Ritz values would give).
///
/// # Errors
/// [`SpectralError::Projected`] when the small symmetric eigenproblem
/// does not converge within its bounded iterations.
pub fn krylov_ritz(
    w: &impl Operator,
    starts: &[impl AsRef<[f64]>],
    depth: usize,
    symmetric: bool,
) -> Result<Vec<Complex<f64>>, SpectralError> {
    let (h, _) = if symmetric {
        krylov_projection_by::<PartialSums>(w, starts, depth)
    } else {
        krylov_projection(w, starts, depth)
    };
    projected_eigenvalues(h, symmetric)
}

/// Eigenvalues of a small dense matrix, bounded iterations
/// ([`super::spectrum`]); for a non-symmetric matrix whose QR iteration
/// does not converge within its bound, only its spectral radius (one
/// value, [`gelfand_radius`]).
fn projected_eigenvalues(
    h: DMatrix<f64>,
    symmetric: bool,
) -> Result<Vec<Complex<f64>>, SpectralError> {
    let k = h.nrows();
    if k == 0 {
        return Ok(Vec::new());
    }
    let projected = |e: SpectrumError| match e {
        SpectrumError::NoConvergence { .. } => SpectralError::Projected { size: k },
        e => SpectralError::Dense(e),
    };
    if symmetric {
        let s = (&h + h.transpose()) * 0.5;
        let e = symmetric_eigenvalues(&s).map_err(projected)?;
        Ok(e.iter().map(|&l| Complex::new(l, 0.0)).collect())
    } else {
        match complex_eigenvalues(&h) {
            // The bounded QR iteration stalls on some exactly structured
            // matrices (a permutation-like H): its spectral radius by
            // Gelfand's formula, which always terminates, as one value.
            Err(SpectrumError::NoConvergence { .. }) => {
                Ok(vec![Complex::new(gelfand_radius(&h), 0.0)])
            }
            other => other.map_err(projected),
        }
    }
}

/// Real and imaginary parts of an approximate eigenvector of the
/// eigenvalue of largest modulus of `W` on `1⊥`: the Ritz vector of a
/// Krylov subspace of dimension up to `depth` from a fixed pseudo-random
/// start (Arnoldi; the small eigenvector by inverse iteration). Start
/// vectors for [`krylov_ritz`] on matrices close to `W`.
///
/// # Errors
/// [`SpectralError::Projected`] when the small eigenproblem does not
/// converge.
pub fn dominant_ritz_vectors(
    w: &impl Operator,
    depth: usize,
) -> Result<(Vec<f64>, Vec<f64>), SpectralError> {
    let n = w.order();
    let start = seeded_vector(n, 17);
    let (h, basis) = krylov_projection(w, &[&start], depth);
    let k = h.nrows();
    if k == 0 {
        return Ok((vec![0.0; n], vec![0.0; n]));
    }
    let values = projected_eigenvalues(h.clone(), false)?;
    let theta = values.iter().copied().fold(Complex::new(0.0, 0.0), |a, b| {
        if b.norm() > a.norm() {
            b
        } else {
            a
        }
    });
    let hc: DMatrix<Complex<f64>> = h.map(|x| Complex::new(x, 0.0));
    let shift = theta + Complex::new(1e-10 * (1.0 + theta.norm()), 0.0);
    let shifted = hc - DMatrix::<Complex<f64>>::identity(k, k) * shift;
    let lu = shifted.lu();
    let mut z = nalgebra::DVector::<Complex<f64>>::from_element(k, Complex::new(1.0, 0.0));
    for _ in 0..3 {
        match lu.solve(&z) {
            Some(next) => {
                let nn = next.norm();
                if !(nn.is_finite() && nn > 0.0) {
                    break;
                }
                z = next / Complex::new(nn, 0.0);
            }
            None => break,
        }
    }
    let mut re = vec![0.0; n];
    let mut im = vec![0.0; n];
    for (c, q) in basis.iter().enumerate().take(k) {
        for i in 0..n {
            re[i] += z[c].re * q[i];
            im[i] += z[c].im * q[i];
        }
    }
    Ok((re, im))
}

/// The largest modulus among `values`, 0 for none.
pub fn largest_modulus(values: &[Complex<f64>]) -> f64 {
    values.iter().fold(0.0, |m, l| m.max(l.norm()))
}

/// Extreme eigenpairs of a symmetric `W` on `1⊥` ([`lanczos_slem`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SymmetricExtremes {
    /// `lambda_2`: the largest eigenvalue on `1⊥`.
    pub largest: f64,
    /// `lambda_n`: the smallest eigenvalue.
    pub smallest: f64,
    /// A unit eigenvector (Ritz vector) of `largest`, orthogonal to `1`.
    pub largest_vector: Vec<f64>,
    /// A unit eigenvector (Ritz vector) of `smallest`.
    pub smallest_vector: Vec<f64>,
    /// Lanczos steps run.
    pub iterations: usize,
}

impl SymmetricExtremes {
    /// `max(lambda_2, -lambda_n)`.
    pub fn slem(&self) -> f64 {
        self.largest.max(-self.smallest).max(0.0)
    }
}

/// A deterministic pseudo-random vector (splitmix64) in `[-1/2, 1/2)^n`.
pub fn seeded_vector(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect()
}

/// Extreme eigenvalues (and Ritz vectors) of a **symmetric** `W` with rows
/// summing to 1, on `1⊥`, by Lanczos with full reorthogonalisation started
/// from `start` (e.g. the previous extreme eigenvectors; a fixed
/// pseudo-random vector is mixed in so no eigenvector is missed by
/// orthogonality). Stops when both extreme Ritz pairs have residual
/// `||W y - theta y|| <= tolerance`, or after `n - 1` steps (the whole of
/// `1⊥`: the Ritz values are then the eigenvalues).
///
/// # Errors
/// [`SpectralError::NotConverged`] when the cap `max_iterations` (below
/// `n - 1`) is reached with a larger residual; [`SpectralError::Invalid`]
/// for a non-finite matrix-vector product.
pub fn lanczos_slem(
    w: &impl Operator,
    start: &[&[f64]],
    tolerance: f64,
    max_iterations: usize,
) -> Result<SymmetricExtremes, SpectralError> {
    lanczos_extremes(
        w,
        start,
        tolerance,
        max_iterations,
        Reorthogonalisation::Classical,
        8,
    )
}

/// How [`lanczos_extremes`] keeps its basis orthogonal (full
/// reorthogonalisation, two passes, against `1` and every basis vector).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reorthogonalisation {
    /// Classical Gram–Schmidt (Giraud et al., Numer. Math. 101, 2005: two
    /// passes give orthogonality to working precision): all coefficients
    /// `Q^T r` first (dot products with four partial sums), then one
    /// update `r -= Q c`; the second pass only when the first cancelled
    /// much of `r`. What [`lanczos_slem`] uses.
    Classical,
    /// Modified Gram–Schmidt twice, one sequential dot product per basis
    /// vector, convergence checked from step 8: the historical scheme,
    /// slower (`cargo bench --bench design`, `fastest-mixing/*`); kept as
    /// the reference the fast one is checked against. The two differ by
    /// rounding (and the step they stop at) only.
    Modified,
}

avx2_dispatch! {
    /// [`lanczos_slem`] with a choice of [`Reorthogonalisation`] and, for the
    /// classical one, the first step whose convergence is checked
    /// (`first_check`, at least 8; the historical modified scheme always
    /// checks from step 8). Convergence is checked on a geometric schedule
    /// (every quarter of the steps so far, at least 4; each check costs a
    /// bisection of the tridiagonal matrix): a caller that knows about how many
    /// steps a similar matrix took (the previous subgradient iterate) skips the
    /// checks that would fail. A later first check can only stop later, with
    /// residuals below the tolerance still.
    ///
    /// # Errors
    /// As [`lanczos_slem`].
    pub fn lanczos_extremes(
        w: &impl Operator,
        start: &[&[f64]],
        tolerance: f64,
        max_iterations: usize,
        reorthogonalisation: Reorthogonalisation,
        first_check: usize,
    ) -> Result<SymmetricExtremes, SpectralError> => lanczos_extremes_portable
}

/// [`lanczos_extremes`] for any CPU.
#[inline(always)]
fn lanczos_extremes_portable(
    w: &impl Operator,
    start: &[&[f64]],
    tolerance: f64,
    max_iterations: usize,
    reorthogonalisation: Reorthogonalisation,
    first_check: usize,
) -> Result<SymmetricExtremes, SpectralError> {
    let n = w.order();
    if n <= 1 {
        return Ok(SymmetricExtremes {
            largest: 0.0,
            smallest: 0.0,
            largest_vector: vec![0.0; n],
            smallest_vector: vec![0.0; n],
            iterations: 0,
        });
    }
    let cap = max_iterations.min(n - 1).max(1);
    let mut q0 = seeded_vector(n, n as u64);
    let scale = 1e-3 / (n as f64).sqrt();
    for v in q0.iter_mut() {
        *v *= scale;
    }
    for s in start {
        if s.len() == n {
            let ns = norm(s);
            if ns.is_finite() && ns > 0.0 {
                for (a, b) in q0.iter_mut().zip(s.iter()) {
                    *a += b / ns;
                }
            }
        }
    }
    if !orthonormalise(&mut q0, &[]) {
        q0 = seeded_vector(n, 1);
        if !orthonormalise(&mut q0, &[]) {
            return Err(SpectralError::Invalid(
                "no start vector orthogonal to 1".into(),
            ));
        }
    }
    let mut q: Vec<Vec<f64>> = vec![q0];
    let mut alpha: Vec<f64> = Vec::new();
    let mut beta: Vec<f64> = Vec::new();
    let mut y = vec![0.0; n];
    let mut last_residual = f64::INFINITY;
    let mut next_check = match reorthogonalisation {
        Reorthogonalisation::Modified => 8,
        Reorthogonalisation::Classical => first_check.max(8),
    };
    let mut coefficients: Vec<f64> = Vec::new();
    loop {
        let j = q.len() - 1;
        w.apply(&q[j], &mut y);
        if !y.iter().all(|v| v.is_finite()) {
            return Err(SpectralError::Invalid(
                "non-finite matrix-vector product".into(),
            ));
        }
        let a = dot(&q[j], &y);
        alpha.push(a);
        let mut r = y.clone();
        for (ri, qi) in r.iter_mut().zip(&q[j]) {
            *ri -= a * qi;
        }
        if j > 0 {
            let b = beta[j - 1];
            for (ri, qi) in r.iter_mut().zip(&q[j - 1]) {
                *ri -= b * qi;
            }
        }
        // Full reorthogonalisation (twice), and against 1.
        match reorthogonalisation {
            Reorthogonalisation::Modified => {
                for _ in 0..2 {
                    remove_mean(&mut r);
                    for qk in &q {
                        let c = dot(qk, &r);
                        for (ri, qi) in r.iter_mut().zip(qk) {
                            *ri -= c * qi;
                        }
                    }
                }
            }
            Reorthogonalisation::Classical => {
                // A second pass only when the first removed more than
                // 1 - 1/sqrt(2) of the norm ("twice is enough": Daniel,
                // Gragg, Kaufman and Stewart, Math. Comp. 30, 1976).
                for pass in 0..2 {
                    remove_mean(&mut r);
                    let before = fast_dot(&r, &r).sqrt();
                    fast_dots(&q, &r, &mut coefficients);
                    subtract_combination(&mut r, &q, &coefficients);
                    let after = fast_dot(&r, &r).sqrt();
                    if pass == 0 && after >= std::f64::consts::FRAC_1_SQRT_2 * before {
                        remove_mean(&mut r);
                        break;
                    }
                }
            }
        }
        let b = norm(&r);
        let steps = j + 1;
        let exhausted = steps >= n - 1 || b <= 1e-14;
        // Convergence checks on a geometric schedule (each costs O(steps^3)).
        let check = exhausted || steps >= cap || steps == next_check;
        if steps == next_check {
            next_check = steps + (steps / 4).max(4);
        }
        if check {
            // Extreme eigenpairs of the tridiagonal matrix: bisection on
            // Sturm counts and inverse iteration, O(steps) each.
            let (hi, s_hi) = tridiagonal_extreme(&alpha, &beta, true);
            let (lo, s_lo) = tridiagonal_extreme(&alpha, &beta, false);
            last_residual = (b * s_hi[steps - 1].abs()).max(b * s_lo[steps - 1].abs());
            if exhausted || last_residual <= tolerance {
                let ritz = |s: &[f64]| {
                    let mut v = vec![0.0; n];
                    for (qi, &c) in q.iter().zip(s) {
                        for (vj, qj) in v.iter_mut().zip(qi) {
                            *vj += c * qj;
                        }
                    }
                    v
                };
                return Ok(SymmetricExtremes {
                    largest: hi,
                    smallest: lo,
                    largest_vector: ritz(&s_hi),
                    smallest_vector: ritz(&s_lo),
                    iterations: steps,
                });
            }
            if steps >= cap {
                return Err(SpectralError::NotConverged {
                    iterations: steps,
                    residual: last_residual,
                    tolerance,
                });
            }
        }
        beta.push(b);
        for v in r.iter_mut() {
            *v /= b;
        }
        q.push(r);
        let _ = last_residual;
    }
}

/// What [`extreme_subgradient`] carries from one call to the next.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WarmStart {
    /// The previous call's extreme eigenvectors (none at first).
    pub vectors: Vec<Vec<f64>>,
    /// The Lanczos steps the previous call took (0 at first).
    pub iterations: usize,
}

/// `||W - J/n||_2` of the symmetric weights `w` on `edges` (`W = I - sum_l
/// w_l (e_i - e_j)(e_i - e_j)^T`) and a subgradient with respect to the
/// edge weights (\[Boyd04\]: `-(u_i - u_j)^2` for a unit eigenvector `u`
/// of `lambda_2`, `+(u_i - u_j)^2` for `lambda_n`, averaged when both are
/// extreme within 1e-9), by [`lanczos_slem`] (residuals below 1e-8, so
/// the values are within about `1e-16 / gap` of the eigenvalues)
/// started from `warm`, the previous call's extreme eigenvectors and step
/// count (updated), reorthogonalising by `reorthogonalisation`. A multiple
/// extreme eigenvalue contributes one eigenvector of its eigenspace: still
/// a subgradient.
///
/// # Errors
/// As [`lanczos_slem`].
pub fn extreme_subgradient(
    n: usize,
    edges: &[(usize, usize)],
    w: &[f64],
    warm: &mut WarmStart,
    reorthogonalisation: Reorthogonalisation,
) -> Result<(f64, Vec<f64>), SpectralError> {
    let m = SparseMatrix::from_edge_weights(n, edges, w);
    let starts: Vec<&[f64]> = warm.vectors.iter().map(Vec::as_slice).collect();
    // Checks from three quarters of the previous iterate's steps.
    let first_check = warm.iterations * 3 / 4;
    let e = lanczos_extremes(&m, &starts, 1e-8, n, reorthogonalisation, first_check)?;
    let value = e.slem();
    let mut g = vec![0.0; edges.len()];
    let mut count = 0.0;
    for (l, u, sign) in [
        (e.largest, &e.largest_vector, -1.0),
        (-e.smallest, &e.smallest_vector, 1.0),
    ] {
        if l < value - 1e-9 {
            continue;
        }
        for (gl, &(a, b)) in g.iter_mut().zip(edges) {
            *gl += sign * (u[a] - u[b]).powi(2);
        }
        count += 1.0;
    }
    for gl in &mut g {
        *gl /= f64::max(count, 1.0);
    }
    *warm = WarmStart {
        vectors: vec![e.largest_vector, e.smallest_vector],
        iterations: e.iterations,
    };
    Ok((value, g))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixing::slem;
    use proptest::prelude::*;

    /// Metropolis–Hastings weights of a random connected graph on `n`
    /// nodes (a path plus random chords): symmetric, rows sum to 1.
    fn random_mh(n: usize, chords: &[(usize, usize)]) -> Vec<f64> {
        let mut adj = vec![std::collections::BTreeSet::new(); n];
        for i in 0..n.saturating_sub(1) {
            adj[i].insert(i + 1);
            adj[i + 1].insert(i);
        }
        for &(a, b) in chords {
            let (a, b) = (a % n, b % n);
            if a != b {
                adj[a].insert(b);
                adj[b].insert(a);
            }
        }
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for &j in &adj[i] {
                w[i * n + j] = 1.0 / (1.0 + adj[i].len().max(adj[j].len()) as f64);
            }
        }
        for i in 0..n {
            let off: f64 = (0..n).filter(|&j| j != i).map(|j| w[i * n + j]).sum();
            w[i * n + i] = 1.0 - off;
        }
        w
    }

    /// The Lanczos extremes and Krylov projections the CPU computes (AVX2
    /// when it has it) are the portable build's, bit for bit.
    #[test]
    fn avx2_builds_give_the_portable_bits() {
        let n = 90;
        let chords: Vec<(usize, usize)> = (0..40).map(|k| (k * 7 + 3, k * 13 + 5)).collect();
        let m = SparseMatrix::from_dense(n, &random_mh(n, &chords));
        let start = seeded_vector(n, 5);
        let scheme = Reorthogonalisation::Classical;
        let fast = lanczos_extremes(&m, &[&start], 1e-10, n, scheme, 8);
        let portable = lanczos_extremes_portable(&m, &[&start], 1e-10, n, scheme, 8);
        let fast = fast.unwrap_or_else(|e| panic!("{e}"));
        let portable = portable.unwrap_or_else(|e| panic!("{e}"));
        let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(fast.largest.to_bits(), portable.largest.to_bits());
        assert_eq!(fast.smallest.to_bits(), portable.smallest.to_bits());
        assert_eq!(bits(&fast.largest_vector), bits(&portable.largest_vector));
        let (h, basis) = krylov_projection_by::<Sequential>(&m, &[&start], 4);
        let (h0, basis0) = krylov_projection_portable::<Sequential>(&m, &[&start], 4);
        assert_eq!(bits(h.as_slice()), bits(h0.as_slice()));
        assert_eq!(basis.len(), basis0.len());
        let (h, basis) = krylov_projection_by::<PartialSums>(&m, &[&start], 4);
        let (h0, basis0) = krylov_projection_portable::<PartialSums>(&m, &[&start], 4);
        assert_eq!(bits(h.as_slice()), bits(h0.as_slice()));
        assert_eq!(basis.len(), basis0.len());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Lanczos SLEM equals the full eigendecomposition's, and every
        /// Krylov Ritz value bound is below it (rigorous for symmetric W).
        #[test]
        fn lanczos_matches_the_full_eigendecomposition(
            n in 2usize..40,
            chords in proptest::collection::vec((0usize..40, 0usize..40), 0..30),
            depth in 1usize..6,
        ) {
            let w = random_mh(n, &chords);
            let full = slem(n, &w).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let m = SparseMatrix::from_dense(n, &w);
            let fast = lanczos_slem(&m, &[], 1e-11, n).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!((fast.slem() - full).abs() < 1e-9, "{} vs {}", fast.slem(), full);
            // The historical reorthogonalisation agrees (the same values
            // up to rounding), and so does a late first check.
            let reference = lanczos_extremes(&m, &[], 1e-11, n, Reorthogonalisation::Modified, 8)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!((reference.slem() - full).abs() < 1e-9);
            prop_assert!((reference.largest - fast.largest).abs() < 1e-9);
            prop_assert!((reference.smallest - fast.smallest).abs() < 1e-9);
            let late = lanczos_extremes(&m, &[], 1e-11, n, Reorthogonalisation::Classical, n)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!((late.slem() - full).abs() < 1e-9);
            let start = seeded_vector(n, 5);
            let ritz = krylov_ritz(&m, &[&start], depth, true).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(largest_modulus(&ritz) <= full + 1e-12);
            // A Ritz vector is an eigenvector: W y = lambda y.
            let mut y = vec![0.0; n];
            m.mul(&fast.largest_vector, &mut y);
            for (a, b) in y.iter().zip(&fast.largest_vector) {
                prop_assert!((a - fast.largest * b).abs() < 1e-8);
            }
        }

        /// Started from an eigenvector, a depth-1 Krylov space gives that
        /// eigenvalue exactly.
        #[test]
        fn krylov_of_an_eigenvector_is_exact(
            n in 3usize..30,
            chords in proptest::collection::vec((0usize..30, 0usize..30), 0..20),
        ) {
            let w = random_mh(n, &chords);
            let m = SparseMatrix::from_dense(n, &w);
            let e = lanczos_slem(&m, &[], 1e-12, n).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let ritz = krylov_ritz(&m, &[&e.largest_vector], 1, true).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(ritz.len(), 1);
            prop_assert!((ritz[0].re - e.largest).abs() < 1e-9);
        }
    }

    /// A warm start (the previous solve's vectors and step count, checks
    /// from 3/4 of its steps) gives the cold solve's value to the
    /// tolerance, for both reorthogonalisations, on a 90-node graph.
    #[test]
    fn warm_subgradient_matches_a_cold_one() {
        let n = 90;
        let chords: Vec<(usize, usize)> = (0..40).map(|k| (k * 7 % n, k * 13 % n)).collect();
        let w = random_mh(n, &chords);
        let mut edges = Vec::new();
        let mut weights = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                if w[i * n + j] != 0.0 {
                    edges.push((i, j));
                    weights.push(w[i * n + j]);
                }
            }
        }
        let full = slem(n, &w).unwrap_or_else(|e| panic!("{e}"));
        for r in [
            Reorthogonalisation::Classical,
            Reorthogonalisation::Modified,
        ] {
            let mut warm = WarmStart::default();
            let (cold, g0) = extreme_subgradient(n, &edges, &weights, &mut warm, r)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(warm.iterations > 0);
            let (again, g1) = extreme_subgradient(n, &edges, &weights, &mut warm, r)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!((cold - full).abs() < 1e-9, "{r:?}: {cold} vs {full}");
            assert!((again - full).abs() < 1e-9, "{r:?}: {again} vs {full}");
            assert_eq!(g0.len(), edges.len());
            // Eigenvectors are defined up to sign: the subgradient is not.
            for (a, b) in g0.iter().zip(&g1) {
                assert!((a - b).abs() < 1e-6, "{r:?}: {a} vs {b}");
            }
        }
    }

    /// The matrix of edge weights built in place is the one built from a
    /// list per row (the same entries in the same order).
    #[test]
    fn edge_weights_build_the_rows_matrix() {
        let n = 7;
        let edges = [(0, 1), (1, 2), (0, 3), (3, 4), (2, 5), (1, 6), (5, 6)];
        let w: Vec<f64> = (0..edges.len()).map(|l| 0.1 + 0.03 * l as f64).collect();
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        let mut diag = vec![1.0; n];
        for (&(a, b), &wl) in edges.iter().zip(&w) {
            rows[a].push((b, wl));
            rows[b].push((a, wl));
            diag[a] -= wl;
            diag[b] -= wl;
        }
        for (i, r) in rows.iter_mut().enumerate() {
            r.push((i, diag[i]));
        }
        assert_eq!(
            SparseMatrix::from_edge_weights(n, &edges, &w),
            SparseMatrix::from_rows(&rows)
        );
    }

    #[test]
    fn sparse_round_trip_and_small_cases() {
        let w = random_mh(6, &[(0, 3), (2, 5)]);
        let m = SparseMatrix::from_dense(6, &w);
        assert_eq!(m.to_dense(), w);
        let one = SparseMatrix::from_dense(1, &[1.0]);
        assert_eq!(
            lanczos_slem(&one, &[], 1e-12, 10).map(|e| e.slem()),
            Ok(0.0)
        );
        // Exact averaging: every eigenvalue on 1⊥ is 0.
        let avg = vec![0.25; 16];
        let e = lanczos_slem(&SparseMatrix::from_dense(4, &avg), &[], 1e-12, 10)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(e.slem() < 1e-12);
    }

    /// A cap below convergence is a typed error, not a wrong answer.
    #[test]
    fn a_tight_cap_is_reported() {
        let n = 60;
        let w = random_mh(n, &[]);
        let m = SparseMatrix::from_dense(n, &w);
        let r = lanczos_slem(&m, &[], 1e-14, 3);
        assert!(
            matches!(r, Err(SpectralError::NotConverged { iterations: 3, .. })),
            "{r:?}"
        );
    }
}
