//! Eigenvalues of a real square matrix by the implicit double-shift
//! (Francis) QR iteration, without the Schur vectors.
//!
//! [`super::spectrum::complex_eigenvalues`] used nalgebra's
//! `Schur::try_new`, the only nalgebra entry point with an iteration
//! bound; it accumulates the orthogonal `Q` and updates the whole
//! quasi-triangular `T` at every step, work the eigenvalues do not need.
//! Here the same iteration runs on the active (unreduced) block only:
//!
//! * the matrix is scaled by its largest entry modulus and reduced to
//!   upper Hessenberg form by nalgebra's own Householder reduction
//!   (`Hessenberg`, the step `Schur` starts with);
//! * each sweep chases the bulge of the double shift (the eigenvalues of
//!   the trailing 2x2 block) down the active block `[start, end]` by 3x3
//!   Householder reflections and one final 2x2 one (Golub and Van Loan,
//!   "Matrix Computations", 4th ed., Alg. 7.5.1 and 7.5.2; Francis 1961),
//!   applied to the rows and columns of the active block only: entries
//!   outside it never feed back into it, so they are left alone;
//! * a subdiagonal entry deflates when `|h(k+1,k)| <= eps (|h(k,k)| +
//!   |h(k+1,k+1)|)`; a 2x2 block with real eigenvalues is split by a
//!   rotation, one with complex ones is read by the closed formula.
//!
//! Every arithmetic step is the one of nalgebra 0.33's `Schur` (the same
//! reflection vectors, normalised the same way, the same products in the
//! same order, the same shifts, deflation test and iteration count), so
//! the eigenvalues are those of `Schur::try_new(m, eps,
//! max_iterations).complex_eigenvalues()` to the bit, in the same order,
//! and it gives up after the same number of sweeps (test
//! `equals_nalgebra_schur_to_the_bit`). What is saved: forming `Q` from
//! the Householder vectors, applying every reflection to `Q`, and the
//! parts of the reflections outside the active block (`cargo bench
//! --bench design`, `eigen/complex*`).

use nalgebra::{Complex, DMatrix, Hessenberg};

use super::avx2::avx2_dispatch;

avx2_dispatch! {
    /// Eigenvalues of `m` (square, at least 3 x 3, finite entries, not all 0)
    /// in at most `max_iterations` sweeps (at least 1); `None` when the
    /// iteration has not converged by then (exactly when nalgebra's
    /// `Schur::try_new(m, eps, max_iterations)` returns `None`).
    pub(crate) fn francis_eigenvalues(
        m: &DMatrix<f64>,
        eps: f64,
        max_iterations: usize,
    ) -> Option<Vec<Complex<f64>>> => francis_eigenvalues_portable
}

/// [`francis_eigenvalues`] for any CPU.
#[inline(always)]
fn francis_eigenvalues_portable(
    m: &DMatrix<f64>,
    eps: f64,
    max_iterations: usize,
) -> Option<Vec<Complex<f64>>> {
    let n = m.nrows();
    debug_assert!(n >= 3 && m.ncols() == n && max_iterations >= 1);
    let amax = m.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    debug_assert!(amax > 0.0 && amax.is_finite());
    let scaled = m.map(|x| x / amax);
    let mut h = Hessenberg::new(scaled).unpack_h();
    let t = h.as_mut_slice();
    // Column-major: entry (i, j) at i + j n.
    let at = |i: usize, j: usize| i + j * n;

    let mut sweeps = 0;
    let (mut start, mut end) = delimit(t, n, eps, n - 1);
    while end != start {
        if end - start + 1 > 2 {
            bulge_chase(t, n, start, end);
        } else {
            split_real_pair(t, n, start);
            if end > 2 {
                end -= 2;
            } else {
                break;
            }
        }
        (start, end) = delimit(t, n, eps, end);
        sweeps += 1;
        if sweeps == max_iterations {
            return None;
        }
    }

    // Read the eigenvalues off the scaled-back diagonal blocks.
    let value = |i: usize, j: usize| t[at(i, j)] * amax;
    let mut out = Vec::with_capacity(n);
    let mut k = 0;
    while k + 1 < n {
        if value(k + 1, k) == 0.0 {
            out.push(Complex::new(value(k, k), 0.0));
            k += 1;
        } else {
            // A 2x2 block left coupled has complex eigenvalues.
            let (hmm, hnm, hmn, hnn) = (
                value(k, k),
                value(k + 1, k),
                value(k, k + 1),
                value(k + 1, k + 1),
            );
            let val = (hmm - hnn) * 0.5;
            let discr = hnm * hmn + val * val;
            let sqrt_discr = Complex::new(0.0, (-discr).sqrt());
            let half_tra = (hnn + hmm) * 0.5;
            out.push(Complex::new(half_tra, 0.0) + sqrt_discr);
            out.push(Complex::new(half_tra, 0.0) - sqrt_discr);
            k += 2;
        }
    }
    if k + 1 == n {
        out.push(Complex::new(value(k, k), 0.0));
    }
    Some(out)
}

/// Deflation: from `end` upwards, zeroes the negligible subdiagonal entries
/// below the last unreduced block and returns that block `(start, end)`;
/// `(0, 0)` when nothing is left.
fn delimit(t: &mut [f64], n: usize, eps: f64, end: usize) -> (usize, usize) {
    let at = |i: usize, j: usize| i + j * n;
    let mut last = end;
    while last > 0 {
        let m = last - 1;
        if t[at(last, m)].abs() <= eps * (t[at(last, last)].abs() + t[at(m, m)].abs()) {
            t[at(last, m)] = 0.0;
        } else {
            break;
        }
        last -= 1;
    }
    if last == 0 {
        return (0, 0);
    }
    let mut first = last - 1;
    while first > 0 {
        let m = first - 1;
        let sub = t[at(first, m)];
        if sub == 0.0 || sub.abs() <= eps * (t[at(first, first)].abs() + t[at(m, m)].abs()) {
            t[at(first, m)] = 0.0;
            break;
        }
        first -= 1;
    }
    (first, last)
}

/// Turns `x` into the unit axis `v` of the Householder reflection `I - 2 v
/// v^T` that maps `x` onto a multiple of `e_1`, and returns that multiple
/// with whether the reflection exists (`x` not 0).
fn reflection_axis<const D: usize>(x: &mut [f64; D]) -> (f64, bool) {
    let squares = |x: &[f64; D]| {
        let mut s = x[0] * x[0];
        for v in &x[1..] {
            s += v * v;
        }
        s
    };
    let sq_norm = squares(x);
    let norm = sq_norm.sqrt();
    let (modulus, sign) = if x[0] >= 0.0 {
        (x[0], 1.0)
    } else {
        (-x[0], -1.0)
    };
    let signed_norm = sign * norm;
    let factor = (sq_norm + modulus * norm) * 2.0;
    x[0] += signed_norm;
    if factor == 0.0 {
        return (signed_norm, false);
    }
    let root = factor.sqrt();
    for v in x.iter_mut() {
        *v /= root;
    }
    // Normalised again so that the axis is a unit vector to rounding.
    let length = squares(x).sqrt();
    for v in x.iter_mut() {
        *v /= length;
    }
    (-signed_norm, true)
}

/// `(v . x)` of a reflection axis and `D` consecutive entries, summed in
/// order.
#[inline(always)]
fn axis_dot<const D: usize>(v: &[f64; D], x: &[f64]) -> f64 {
    let mut s = v[0] * x[0];
    for d in 1..D {
        s += v[d] * x[d];
    }
    s
}

/// Applies `I - 2 v v^T` from the left to rows `row..row + D`, columns
/// `cols`, of the column-major `n x n` matrix `t`.
#[inline(always)]
fn reflect_rows_of<const D: usize>(
    t: &mut [f64],
    n: usize,
    v: &[f64; D],
    row: usize,
    cols: std::ops::RangeInclusive<usize>,
) {
    for j in cols {
        let col = &mut t[row + j * n..row + j * n + D];
        let factor = axis_dot(v, col) * -2.0;
        for (c, a) in col.iter_mut().zip(v) {
            *c += factor * a;
        }
    }
}

/// Applies `I - 2 v v^T` from the right to columns `col..col + D`, rows
/// `rows`, of the column-major `n x n` matrix `t`.
///
/// The `D` columns are taken as separate slices, so that the rows, which
/// are independent, are vectorised (the same operations on each entry).
#[inline(always)]
fn reflect_columns_of<const D: usize>(
    t: &mut [f64],
    n: usize,
    v: &[f64; D],
    col: usize,
    rows: std::ops::Range<usize>,
) {
    let mut parts = t[col * n..(col + D) * n]
        .chunks_exact_mut(n)
        .map(|c| &mut c[rows.clone()]);
    let columns: [&mut [f64]; D] = std::array::from_fn(|_| parts.next().unwrap_or_default());
    let len = rows.len();
    if columns.iter().any(|c| c.len() != len) {
        // Never: every column holds the rows (a check that lets the loop
        // below go without bounds checks).
        return;
    }
    let f = v.map(|a| -2.0 * a);
    // Row `i` of every column at once: an index, not an iterator per column.
    #[allow(clippy::needless_range_loop)]
    for i in 0..len {
        let mut w = columns[0][i] * v[0];
        for d in 1..D {
            w += columns[d][i] * v[d];
        }
        for d in 0..D {
            columns[d][i] += f[d] * w;
        }
    }
}

/// One implicit double-shift QR sweep on the unreduced block `[start,
/// end]` (at least 3 x 3) of the Hessenberg matrix `t`. Inlined (with its
/// reflections) into [`francis_eigenvalues_portable`], so that the AVX2
/// build compiles it for AVX2.
#[inline(always)]
fn bulge_chase(t: &mut [f64], n: usize, start: usize, end: usize) {
    let at = |i: usize, j: usize| i + j * n;
    let (m, last) = (end - 1, end);
    let (h11, h12) = (t[at(start, start)], t[at(start, start + 1)]);
    let (h21, h22) = (t[at(start + 1, start)], t[at(start + 1, start + 1)]);
    let h32 = t[at(start + 2, start + 1)];
    let (hnn, hmm) = (t[at(last, last)], t[at(m, m)]);
    let (hnm, hmn) = (t[at(last, m)], t[at(m, last)]);
    // First column of (H - s1 I)(H - s2 I), s1, s2 the trailing block's
    // eigenvalues.
    let tra = hnn + hmm;
    let det = hnn * hmm - hnm * hmn;
    let mut axis = [
        h11 * h11 + h12 * h21 - tra * h11 + det,
        h21 * (h11 + h22 - tra),
        h21 * h32,
    ];
    for k in start..last - 1 {
        let (norm, nonzero) = reflection_axis(&mut axis);
        if nonzero {
            if k > start {
                t[at(k, k - 1)] = norm;
                t[at(k + 1, k - 1)] = 0.0;
                t[at(k + 2, k - 1)] = 0.0;
            }
            reflect_rows_of(t, n, &axis, k, k..=end);
            reflect_columns_of(t, n, &axis, k, start..(k + 4).min(end + 1));
        }
        axis[0] = t[at(k + 1, k)];
        axis[1] = t[at(k + 2, k)];
        if k < last - 2 {
            axis[2] = t[at(k + 3, k)];
        }
    }
    let mut axis = [axis[0], axis[1]];
    let (norm, nonzero) = reflection_axis(&mut axis);
    if nonzero {
        t[at(m, m - 1)] = norm;
        t[at(last, m - 1)] = 0.0;
        reflect_rows_of(t, n, &axis, m, m..=end);
        reflect_columns_of(t, n, &axis, m, start..end + 1);
    }
}

/// Splits the 2x2 block at `(start, start)` into two 1x1 blocks by a
/// rotation when its eigenvalues are real (and it is not triangular yet).
fn split_real_pair(t: &mut [f64], n: usize, start: usize) {
    let at = |i: usize, j: usize| i + j * n;
    let (p, q) = (start, start + 1);
    let (h00, h01, h10, h11) = (t[at(p, p)], t[at(p, q)], t[at(q, p)], t[at(q, q)]);
    if h10 == 0.0 {
        return;
    }
    let val = (h00 - h11) * 0.5;
    let discr = h10 * h01 + val * val;
    if discr.is_nan() || discr < 0.0 {
        // Complex eigenvalues: the block stays coupled.
        return;
    }
    let root = discr.sqrt();
    let half_tra = (h00 + h11) * 0.5;
    let x1 = half_tra + root - h11;
    let x2 = half_tra - root - h11;
    // The eigenvector component of larger modulus, for a stable rotation.
    let x = if x1.abs() > x2.abs() { x1 } else { x2 };
    let (modulus, sign) = if x >= 0.0 { (x, 1.0) } else { (-x, -1.0) };
    let denom = (modulus * modulus + h10 * h10).sqrt();
    let (c, s) = if denom > 0.0 {
        (modulus / denom, h10 / (sign * denom))
    } else {
        (1.0, 0.0)
    };
    // Rows by the inverse rotation, then columns by the rotation.
    for j in [p, q] {
        let (a, b) = (t[at(p, j)], t[at(q, j)]);
        t[at(p, j)] = a * c - -s * b;
        t[at(q, j)] = -s * a + b * c;
    }
    for i in [p, q] {
        let (a, b) = (t[at(i, p)], t[at(i, q)]);
        t[at(i, p)] = a * c + s * b;
        t[at(i, q)] = -s * a + b * c;
    }
    t[at(q, p)] = 0.0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Deterministic numbers in `[0, 1)`.
    fn numbers(seed: u64) -> impl FnMut() -> f64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        move || rng.gen::<f64>()
    }

    /// The eigenvalues the CPU computes (AVX2 when it has it) are the
    /// portable build's, bit for bit, on random stochastic matrices.
    #[test]
    fn francis_is_the_same_on_every_cpu() {
        let mut next = numbers(11);
        for n in [3usize, 8, 40] {
            let m = stochastic(DMatrix::from_fn(n, n, |_, _| {
                let x = next();
                if x < 0.7 {
                    0.0
                } else {
                    x
                }
            }));
            let fast = francis_eigenvalues(&m, f64::EPSILON, 30 * n.max(10));
            let portable = francis_eigenvalues_portable(&m, f64::EPSILON, 30 * n.max(10));
            let bits = |e: Option<Vec<Complex<f64>>>| {
                e.map(|v| {
                    v.iter()
                        .map(|c| (c.re.to_bits(), c.im.to_bits()))
                        .collect::<Vec<_>>()
                })
            };
            assert_eq!(bits(fast), bits(portable), "n = {n}");
        }
    }

    /// Rows scaled to sum to 1 (rows of zeros get a 1 on the diagonal).
    fn stochastic(mut m: DMatrix<f64>) -> DMatrix<f64> {
        for i in 0..m.nrows() {
            let s: f64 = m.row(i).sum();
            if s == 0.0 {
                m[(i, i)] = 1.0;
            } else {
                m.row_mut(i).scale_mut(1.0 / s);
            }
        }
        m
    }

    /// The test matrices: random dense and sparse (stochastic and not),
    /// local-degree-like matrices of random digraphs, permutations and
    /// permutation-like ones (the QR iteration stalls on them), defective
    /// (Jordan blocks), triangular, with repeated eigenvalues, rank one.
    fn cases() -> Vec<DMatrix<f64>> {
        let mut next = numbers(7);
        let mut out = Vec::new();
        for n in [3, 4, 5, 6, 7, 9, 12, 17, 30, 87] {
            let dense = DMatrix::from_fn(n, n, |_, _| next() - 0.5);
            out.push(dense.clone());
            out.push(stochastic(DMatrix::from_fn(n, n, |_, _| next())));
            let p = 3.0 / n as f64;
            let sparse =
                DMatrix::from_fn(n, n, |i, j| if i == j || next() < p { next() } else { 0.0 });
            out.push(sparse.clone());
            out.push(stochastic(sparse));
            // A directed ring with chords, uniform weights per row.
            let chords = DMatrix::from_fn(n, n, |i, j| {
                if i == j || j == (i + 1) % n || (next() < 1.5 / n as f64) {
                    1.0
                } else {
                    0.0
                }
            });
            out.push(stochastic(chords));
            let shift = DMatrix::from_fn(n, n, |i, j| if j == (i + 1) % n { 1.0 } else { 0.0 });
            out.push(&shift - DMatrix::from_element(n, n, 1.0 / n as f64));
            out.push(&shift * 0.5 + DMatrix::identity(n, n) * 0.5);
            out.push(shift.clone());
            let mut nearly = shift.clone();
            nearly[(0, 1 % n)] = 1.0 - 1e-9;
            nearly[(0, 0)] = 1e-9;
            out.push(nearly);
            let jordan = DMatrix::from_fn(n, n, |i, j| match j.wrapping_sub(i) {
                0 => 0.5,
                1 => 1.0,
                _ => 0.0,
            });
            out.push(jordan);
            out.push(DMatrix::from_fn(
                n,
                n,
                |i, j| if j >= i { next() } else { 0.0 },
            ));
            out.push(DMatrix::identity(n, n));
            out.push(DMatrix::from_element(n, n, 1.0 / n as f64));
            let sym = DMatrix::from_fn(n, n, |_, _| next());
            out.push(&sym + sym.transpose());
            // Block diagonal with 2x2 rotations: complex pairs.
            out.push(DMatrix::from_fn(n, n, |i, j| {
                let (bi, bj) = (i / 2, j / 2);
                if bi != bj || 2 * bi + 1 >= n {
                    if i == j {
                        0.3
                    } else {
                        0.0
                    }
                } else if i == j {
                    0.6
                } else if i < j {
                    0.8
                } else {
                    -0.8
                }
            }));
        }
        out
    }

    fn bits(e: &[Complex<f64>]) -> Vec<(u64, u64)> {
        e.iter().map(|c| (c.re.to_bits(), c.im.to_bits())).collect()
    }

    /// The same eigenvalues, in the same order, as nalgebra's Schur
    /// decomposition, to the bit; and the same failures under small
    /// iteration bounds (the QR iteration gives up after the same sweep).
    #[test]
    fn equals_nalgebra_schur_to_the_bit() {
        let mut compared = 0;
        let mut failed = 0;
        for m in cases() {
            let n = m.nrows();
            for bound in [1, 2, 3, 5, 8, 13, n, 2 * n, 30 * n.max(10)] {
                let ours = francis_eigenvalues(&m, f64::EPSILON, bound);
                let theirs = nalgebra::Schur::try_new(m.clone(), f64::EPSILON, bound)
                    .map(|s| s.complex_eigenvalues().iter().copied().collect::<Vec<_>>());
                match (&ours, &theirs) {
                    (Some(a), Some(b)) => {
                        assert_eq!(bits(a), bits(b), "n {n}, bound {bound}: {m}");
                        compared += 1;
                    }
                    (None, None) => failed += 1,
                    _ => panic!(
                        "n {n}, bound {bound}: ours {:?}, nalgebra {:?}",
                        ours.is_some(),
                        theirs.is_some()
                    ),
                }
            }
        }
        // Both outcomes occur (the bound matters on some cases).
        assert!(compared > 500 && failed > 100, "{compared} {failed}");
    }

    /// Eigenvalues are right: their sum is the trace, and on a matrix of
    /// known spectrum (a similarity transform of a diagonal one) they are
    /// the diagonal to 1e-12.
    #[test]
    fn eigenvalues_are_right() {
        let mut next = numbers(3);
        for n in [3, 5, 10, 40] {
            let d: Vec<f64> = (0..n).map(|k| k as f64 / n as f64 - 0.3).collect();
            let mut s = DMatrix::from_fn(n, n, |_, _| next() - 0.5);
            for i in 0..n {
                s[(i, i)] += 2.0;
            }
            let inverse = s
                .clone()
                .try_inverse()
                .unwrap_or_else(|| panic!("singular"));
            let m = &s * DMatrix::from_diagonal(&nalgebra::DVector::from_vec(d.clone())) * inverse;
            let e = francis_eigenvalues(&m, f64::EPSILON, 30 * n.max(10))
                .unwrap_or_else(|| panic!("n {n}: no convergence"));
            let trace: f64 = e.iter().map(|c| c.re).sum();
            assert!((trace - m.trace()).abs() < 1e-10, "n {n}");
            let mut re: Vec<f64> = e.iter().map(|c| c.re).collect();
            re.sort_by(f64::total_cmp);
            for (a, b) in re.iter().zip(&d) {
                assert!((a - b).abs() < 1e-9, "n {n}: {a} vs {b}");
            }
            assert!(e.iter().all(|c| c.im.abs() < 1e-9));
        }
    }
}
