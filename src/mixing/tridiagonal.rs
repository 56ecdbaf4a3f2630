//! Extreme eigenpairs of the symmetric tridiagonal matrices of the
//! Lanczos iteration ([`super::krylov`]): the eigenvalue by bisection on
//! Sturm counts, the eigenvector by inverse iteration.
//!
//! The bisection is the fastest-mixing weights' largest single cost after
//! the Lanczos steps themselves (two extremes at every convergence check
//! of 2000 subgradient iterations). [`multisect`] evaluates seven points
//! a pass instead of one; their Sturm sequences are independent (two
//! divisions to a vector instruction), so a pass costs little more than
//! one sequence's latency (the chain of divisions) while it narrows the
//! interval eight times instead of two: about half the time (1.9 times
//! faster on a 50 x 50 Lanczos-like matrix, release build). It ends at the same
//! two adjacent floating-point numbers as [`bisect`], so at the same
//! eigenvalue to the bit (test `multisection_equals_bisection`): the
//! computed Sturm predicate is monotone in `x` (below), bisection and
//! multisection keep the threshold between its `false` and `true` points
//! bracketed, and both stop only when no floating-point number is left
//! between the brackets.
//!
//! Monotone: IEEE rounding is monotone, so `a_i - x` decreases with `x`;
//! along pivots that are all negative (the largest eigenvalue's test) a
//! larger `x` gives each `d_i = (a_i - x) - b_(i-1)^2 / d_(i-1)` no larger
//! by induction (a more negative `d_(i-1)` makes `-b^2 / d_(i-1)` no
//! larger), and likewise along pivots that are all positive (the smallest
//! one's); a zero pivot counts as negative at every `x` where it occurs.
//! Hence "all pivots negative" and "some pivot negative" are monotone in
//! `x` (Kahan, "Accurate eigenvalues of a symmetric tri-diagonal matrix",
//! 1966; Demmel, Dhillon and Ren, ETNA 3, 1995).

/// Euclidean norm, summed in order (as `krylov`'s).
fn norm(a: &[f64]) -> f64 {
    a.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The Sturm predicate of `T - x I`: whether more than `target`
/// eigenvalues lie below `x`, `target` being 0 (the smallest) or `k - 1`
/// (the largest). The count is decided at the first pivot that settles it
/// (a negative one for 0, a non-negative one for `k - 1`), so the scan
/// stops there; the same answers as the full count.
struct Sturm<'a> {
    alpha: &'a [f64],
    /// `b_(i-1)^2` for pivot `i >= 1` (index 0 unused).
    off: Vec<f64>,
    largest: bool,
    /// What a zero pivot becomes (negated): `EPSILON` times the
    /// Gershgorin span.
    zero_pivot: f64,
}

impl<'a> Sturm<'a> {
    fn new(alpha: &'a [f64], beta: &[f64], largest: bool, span: f64) -> Sturm<'a> {
        let b = |i: usize| if i < beta.len() { beta[i] } else { 0.0 };
        let off = (0..alpha.len())
            .map(|i| if i > 0 { b(i - 1) * b(i - 1) } else { 0.0 })
            .collect();
        Sturm {
            alpha,
            off,
            largest,
            zero_pivot: -f64::EPSILON * span,
        }
    }

    /// Pivot `i` from the previous one `d` (`d` unused for `i = 0`).
    #[inline(always)]
    fn pivot(&self, i: usize, x: f64, d: f64) -> f64 {
        let a = self.alpha[i];
        let p = a - x - if i > 0 { self.off[i] / d } else { 0.0 };
        if p == 0.0 {
            self.zero_pivot
        } else {
            p
        }
    }

    /// The predicate's answer once pivot `p` settles it.
    #[inline(always)]
    fn settled(&self, p: f64) -> Option<bool> {
        if self.largest && p >= 0.0 {
            Some(false)
        } else if !self.largest && p < 0.0 {
            Some(true)
        } else {
            None
        }
    }

    /// The number of eigenvalues below `x` (every pivot of `T - x I`, the
    /// negative ones counted; no early stop).
    fn count_below(&self, x: f64) -> usize {
        let mut d = 1.0f64;
        let mut count = 0;
        for i in 0..self.alpha.len() {
            d = self.pivot(i, x, d);
            count += usize::from(d < 0.0);
        }
        count
    }

    /// The predicate at `x`.
    fn at(&self, x: f64) -> bool {
        let mut d = 1.0f64;
        for i in 0..self.alpha.len() {
            d = self.pivot(i, x, d);
            if let Some(answer) = self.settled(d) {
                return answer;
            }
        }
        self.largest
    }

    /// The predicate at [`LANES`] points, their pivot sequences
    /// interleaved without branches (independent chains of divisions,
    /// two to a vector instruction); a settled answer is kept while the
    /// other points' sequences go on.
    fn at_lanes(&self, x: [f64; LANES]) -> [bool; LANES] {
        let k = self.alpha.len();
        if k == 0 {
            return [self.largest; LANES];
        }
        let mut d = [0.0f64; LANES];
        let a = self.alpha[0];
        for l in 0..LANES {
            let p = a - x[l] - 0.0;
            d[l] = if p == 0.0 { self.zero_pivot } else { p };
        }
        // largest: every pivot so far negative; smallest: some pivot
        // negative.
        let mut flag = [false; LANES];
        for l in 0..LANES {
            flag[l] = d[l] < 0.0;
        }
        for i in 1..k {
            if self.largest && !flag.iter().any(|&f| f) || !self.largest && flag.iter().all(|&f| f)
            {
                break;
            }
            let (a, off) = (self.alpha[i], self.off[i]);
            for l in 0..LANES {
                let p = a - x[l] - off / d[l];
                d[l] = if p == 0.0 { self.zero_pivot } else { p };
            }
            for l in 0..LANES {
                let negative = d[l] < 0.0;
                flag[l] = if self.largest {
                    flag[l] && negative
                } else {
                    flag[l] || negative
                };
            }
        }
        flag
    }
}

/// Points a pass of [`multisect`] evaluates (the interior midpoints of
/// the interval cut in `LANES + 1` equal parts by repeated halving).
const LANES: usize = 7;

/// The threshold of the Sturm predicate in `[lo, hi]` (the Gershgorin
/// interval) by bisection: at most 200 halvings, each at the rounded
/// midpoint, until no floating-point number lies strictly between the
/// brackets; then their rounded midpoint.
fn bisect(sturm: &Sturm, lo: f64, hi: f64) -> f64 {
    bisect_by(|x| sturm.at(x), lo, hi, 200)
}

/// The threshold of a monotone predicate (false at `lo`, true at `hi`) by
/// at most `halvings` halvings at the rounded midpoint, until no
/// floating-point number lies strictly between the brackets; then their
/// rounded midpoint.
fn bisect_by(above: impl Fn(f64) -> bool, mut lo: f64, mut hi: f64, halvings: usize) -> f64 {
    for _ in 0..halvings {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if above(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The [`LANES`] points that cut `[lo, hi]` (midpoint `mid`) into eight
/// parts by repeated rounded halving, in increasing order.
fn cut_points(lo: f64, mid: f64, hi: f64) -> [f64; LANES] {
    let half = |a: f64, b: f64| 0.5 * (a + b);
    let (q1, q3) = (half(lo, mid), half(mid, hi));
    [
        half(lo, q1),
        q1,
        half(q1, mid),
        mid,
        half(mid, q3),
        q3,
        half(q3, hi),
    ]
}

/// Most passes of [`multisect`] (each narrows about eight times).
const MULTISECTION_PASSES: usize = 80;

/// [`bisect`]'s value by passes of [`LANES`] points ([`cut_points`]): `None`, for [`bisect`] to run, when the
/// interval is not finite and ordered, when the answers contradict
/// monotonicity (they cannot, see the module docs; a guard), or when the
/// brackets end closer than `2^-180` of the start width (then bisection
/// might have stopped at its 200 halvings before them).
fn multisect(sturm: &Sturm, lo: f64, hi: f64) -> Option<f64> {
    if !(lo.is_finite() && hi.is_finite() && lo < hi) || sturm.alpha.is_empty() {
        return None;
    }
    let width = hi - lo;
    let (mut lo, mut hi) = (lo, hi);
    for _ in 0..MULTISECTION_PASSES {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            // No number strictly between: bisection's brackets too, if it
            // got here within its 200 halvings (about log2 of the width
            // ratio, plus a few for rounding).
            return ((hi - lo) * 2f64.powi(180) >= width).then_some(mid);
        }
        let points = cut_points(lo, mid, hi);
        let answers = sturm.at_lanes(points);
        let (mut new_lo, mut new_hi) = (lo, hi);
        for (&x, &above) in points.iter().zip(&answers) {
            // Points on a bracket (a narrow interval) are not evaluated
            // by bisection; skipped.
            if !(x > lo && x < hi) {
                continue;
            }
            if above {
                new_hi = new_hi.min(x);
            } else {
                new_lo = new_lo.max(x);
            }
        }
        if new_lo >= new_hi {
            return None;
        }
        (lo, hi) = (new_lo, new_hi);
    }
    None
}

/// The Gershgorin interval `(lo, hi)` holding every eigenvalue of the
/// symmetric tridiagonal matrix with diagonal `alpha` and off-diagonal
/// `beta` (entries of `beta` past the last row are ignored).
fn gershgorin(alpha: &[f64], beta: &[f64]) -> (f64, f64) {
    let b = |i: usize| if i < beta.len() { beta[i] } else { 0.0 };
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (i, &a) in alpha.iter().enumerate() {
        let r = b(i).abs() + if i > 0 { b(i - 1).abs() } else { 0.0 };
        lo = lo.min(a - r);
        hi = hi.max(a + r);
    }
    (lo, hi)
}

/// The largest (or smallest) eigenvalue of the symmetric tridiagonal
/// matrix with diagonal `alpha` and off-diagonal `beta`, by bisection on
/// Sturm sequence counts to rounding (seven points a pass,
/// [`multisect`], the same value as one point a pass, [`bisect`]), and its
/// unit eigenvector by two steps of inverse iteration (tridiagonal
/// elimination with partial pivoting).
pub(super) fn tridiagonal_extreme(alpha: &[f64], beta: &[f64], largest: bool) -> (f64, Vec<f64>) {
    let k = alpha.len();
    let (lo, hi) = gershgorin(alpha, beta);
    let span = (hi - lo).abs().max(1e-300);
    let sturm = Sturm::new(alpha, beta, largest, span);
    let theta = multisect(&sturm, lo, hi).unwrap_or_else(|| bisect(&sturm, lo, hi));
    // Inverse iteration on T - theta I.
    let shift = theta + if largest { 1e-13 } else { -1e-13 } * (1.0 + theta.abs());
    let mut x = vec![1.0; k];
    for _ in 0..2 {
        x = solve_tridiagonal(alpha, beta, shift, &x);
        let nx = norm(&x);
        if !(nx.is_finite() && nx > 0.0) {
            x = vec![1.0 / (k as f64).sqrt(); k];
            break;
        }
        for v in x.iter_mut() {
            *v /= nx;
        }
    }
    (theta, x)
}

/// The `k`-th smallest eigenvalue (from 0) of the symmetric tridiagonal
/// matrix with diagonal `alpha` and off-diagonal `beta`, by bisection on
/// the Sturm count (the number of negative pivots of `T - x I`, a zero
/// pivot counted negative as in [`Sturm`]) until no floating-point number
/// lies between the brackets: within a few units in the last place of the
/// eigenvalue, like the QR iteration's, at `O(n)` per halving instead of a
/// full eigendecomposition. `None` when `k` is out of range or an entry is
/// not finite.
pub(crate) fn tridiagonal_kth(alpha: &[f64], beta: &[f64], k: usize) -> Option<f64> {
    let n = alpha.len();
    if k >= n {
        return None;
    }
    let (lo, hi) = gershgorin(alpha, beta);
    if !(lo.is_finite() && hi.is_finite()) {
        return None;
    }
    if lo == hi {
        return Some(lo);
    }
    let sturm = Sturm::new(alpha, beta, false, hi - lo);
    // Brackets just outside the interval: more than `k` eigenvalues lie
    // below `hi` and none below `lo` (every eigenvalue lies in `[lo, hi]`);
    // from a bracket near zero, reaching adjacent floats can take about
    // 1,100 halvings.
    let pad = f64::EPSILON * (hi - lo).max(lo.abs()).max(hi.abs());
    Some(bisect_by(
        |x| sturm.count_below(x) > k,
        lo - pad,
        hi + pad,
        2100,
    ))
}

/// Solves `(T - shift I) x = rhs` for the symmetric tridiagonal `T` by
/// Gaussian elimination with partial pivoting (LAPACK `dgtsv`'s scheme; a
/// zero pivot is replaced by a tiny one: inverse iteration wants the
/// near-singular solve).
fn solve_tridiagonal(alpha: &[f64], beta: &[f64], shift: f64, rhs: &[f64]) -> Vec<f64> {
    let k = alpha.len();
    if k == 0 {
        return Vec::new();
    }
    let mut d: Vec<f64> = alpha.iter().map(|a| a - shift).collect();
    let mut dl: Vec<f64> = beta.iter().take(k - 1).copied().collect();
    let mut du = dl.clone();
    let mut du2 = vec![0.0; k.saturating_sub(2)];
    let mut x = rhs.to_vec();
    let tiny = 1e-290;
    for i in 0..k - 1 {
        if d[i].abs() >= dl[i].abs() {
            if d[i] == 0.0 {
                d[i] = tiny;
            }
            let f = dl[i] / d[i];
            d[i + 1] -= f * du[i];
            x[i + 1] -= f * x[i];
            dl[i] = 0.0;
        } else {
            let f = d[i] / dl[i];
            d[i] = dl[i];
            let temp = d[i + 1];
            d[i + 1] = du[i] - f * temp;
            if i + 2 < k {
                du2[i] = du[i + 1];
                du[i + 1] = -f * du2[i];
            }
            du[i] = temp;
            x.swap(i, i + 1);
            x[i + 1] -= f * x[i];
        }
    }
    if d[k - 1] == 0.0 {
        d[k - 1] = tiny;
    }
    x[k - 1] /= d[k - 1];
    if k >= 2 {
        x[k - 2] = (x[k - 2] - du[k - 2] * x[k - 1]) / d[k - 2];
    }
    for i in (0..k.saturating_sub(2)).rev() {
        x[i] = (x[i] - du[i] * x[i + 1] - du2[i] * x[i + 2]) / d[i];
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mixing::krylov::seeded_vector;
    use crate::mixing::spectrum::symmetric_eigenvalues;
    use nalgebra::DMatrix;

    /// The `n x n` symmetric tridiagonal matrix of `alpha` and `beta`.
    fn dense_tridiagonal(alpha: &[f64], beta: &[f64]) -> DMatrix<f64> {
        let n = alpha.len();
        DMatrix::from_fn(n, n, |i, j| {
            if i == j {
                alpha[i]
            } else if i + 1 == j {
                beta[i]
            } else if j + 1 == i {
                beta[j]
            } else {
                0.0
            }
        })
    }

    #[test]
    fn kth_eigenvalue_equals_the_dense_spectrum() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for case in 0..200 {
            let n: usize = rng.gen_range(1..40);
            // Clustered and zero entries too (ties, split matrices).
            let draw = |rng: &mut rand_chacha::ChaCha8Rng| match rng.gen_range(0..4) {
                0 => 0.0,
                1 => 0.5,
                _ => rng.gen_range(-1.0..1.0),
            };
            let alpha: Vec<f64> = (0..n).map(|_| draw(&mut rng)).collect();
            let beta: Vec<f64> = (0..n.saturating_sub(1)).map(|_| draw(&mut rng)).collect();
            let t = dense_tridiagonal(&alpha, &beta);
            let mut dense: Vec<f64> = t.symmetric_eigenvalues().iter().copied().collect();
            dense.sort_by(f64::total_cmp);
            for (k, &want) in dense.iter().enumerate() {
                let got = tridiagonal_kth(&alpha, &beta, k).unwrap();
                assert!(
                    (got - want).abs() <= 1e-13,
                    "case {case} k {k}: {got} vs {want}"
                );
            }
            assert_eq!(tridiagonal_kth(&alpha, &beta, n), None);
        }
        assert_eq!(tridiagonal_kth(&[f64::NAN], &[], 0), None);
    }

    /// The fast path of the Sturm counts (stop at the deciding pivot)
    /// gives the full count's extreme eigenvalues: against the dense
    /// eigenvalues of random tridiagonal matrices, to rounding.
    #[test]
    fn tridiagonal_extremes_match_the_dense_eigenvalues() {
        let mut v = seeded_vector(400, 3).into_iter();
        for k in [1usize, 2, 3, 7, 20, 60] {
            let alpha: Vec<f64> = (0..k).map(|_| v.next().unwrap_or(0.1)).collect();
            let beta: Vec<f64> = (1..k).map(|_| v.next().unwrap_or(0.2)).collect();
            let t = dense_tridiagonal(&alpha, &beta);
            let e = symmetric_eigenvalues(&t).unwrap_or_else(|e| panic!("{e}"));
            let max = e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let min = e.iter().copied().fold(f64::INFINITY, f64::min);
            let (hi, x) = tridiagonal_extreme(&alpha, &beta, true);
            let (lo, _) = tridiagonal_extreme(&alpha, &beta, false);
            assert!((hi - max).abs() < 1e-13, "k {k}: {hi} vs {max}");
            assert!((lo - min).abs() < 1e-13, "k {k}: {lo} vs {min}");
            assert!((norm(&x) - 1.0).abs() < 1e-12);
        }
    }

    /// Multisection ends at bisection's value to the bit, for both
    /// extremes, on random tridiagonal matrices of many sizes and scales,
    /// Lanczos-like ones (a clustered extreme), ones with zero and
    /// repeated entries (zero pivots) and with a tiny extreme eigenvalue
    /// (multisection then declines, bisection decides).
    #[test]
    fn multisection_equals_bisection() {
        let mut v = seeded_vector(200_000, 11).into_iter().cycle();
        let mut next = move || v.next().unwrap_or(0.5);
        let mut cases: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
        for k in [1usize, 2, 3, 4, 5, 8, 13, 21, 40, 60, 87] {
            for scale in [1e-8, 1e-3, 1.0, 1e3] {
                let alpha: Vec<f64> = (0..k).map(|_| scale * next()).collect();
                let beta: Vec<f64> = (1..k).map(|_| scale * next()).collect();
                cases.push((alpha, beta));
            }
            // Lanczos-like: diagonal near 0.9, small couplings.
            let alpha: Vec<f64> = (0..k).map(|_| 0.9 + 0.05 * next()).collect();
            let beta: Vec<f64> = (1..k).map(|_| 0.01 * next().abs()).collect();
            cases.push((alpha, beta));
            // Zero pivots: integer entries, zeros.
            let alpha: Vec<f64> = (0..k).map(|i| (i % 3) as f64).collect();
            let beta: Vec<f64> = (1..k).map(|i| if i % 4 == 0 { 0.0 } else { 1.0 }).collect();
            cases.push((alpha, beta));
            cases.push((vec![0.0; k], vec![0.0; k.saturating_sub(1)]));
            cases.push((vec![0.25; k], vec![0.5; k.saturating_sub(1)]));
            // An extreme eigenvalue near 0.
            let alpha: Vec<f64> = (0..k).map(|i| -(i as f64) - 1e-200).collect();
            cases.push((alpha, vec![0.0; k.saturating_sub(1)]));
            // Beta one longer than needed (ignored past the last pivot).
            let alpha: Vec<f64> = (0..k).map(|_| next()).collect();
            let beta: Vec<f64> = (0..k).map(|_| next()).collect();
            cases.push((alpha, beta));
        }
        let mut multisected = 0;
        for (alpha, beta) in &cases {
            for largest in [true, false] {
                let b = |i: usize| if i < beta.len() { beta[i] } else { 0.0 };
                let (lo, hi) = gershgorin(alpha, beta);
                let span = (hi - lo).abs().max(1e-300);
                let sturm = Sturm::new(alpha, beta, largest, span);
                let reference = bisect(&sturm, lo, hi);
                if let Some(fast) = multisect(&sturm, lo, hi) {
                    multisected += 1;
                    assert_eq!(
                        fast.to_bits(),
                        reference.to_bits(),
                        "k {} largest {largest}: {fast} vs {reference}",
                        alpha.len()
                    );
                }
                // The predicate is the historical closure's (inlined in
                // tridiagonal_extreme before), and its answers at
                // several points at once are the one-point ones.
                let historical = |x: f64| {
                    let mut d = 1.0f64;
                    for (i, &a) in alpha.iter().enumerate() {
                        let off = if i > 0 { b(i - 1) * b(i - 1) } else { 0.0 };
                        d = a - x - if i > 0 { off / d } else { 0.0 };
                        if d == 0.0 {
                            d = -f64::EPSILON * span;
                        }
                        if largest && d >= 0.0 {
                            return false;
                        }
                        if !largest && d < 0.0 {
                            return true;
                        }
                    }
                    largest
                };
                for j in 0..=16 {
                    let x = lo + (hi - lo) * j as f64 / 16.0;
                    assert_eq!(sturm.at(x), historical(x));
                }
                let points = cut_points(lo, 0.5 * (lo + hi), hi);
                let lanes = sturm.at_lanes(points);
                for (x, a) in points.iter().zip(lanes) {
                    assert_eq!(sturm.at(*x), a);
                }
                let (theta, _) = tridiagonal_extreme(alpha, beta, largest);
                assert_eq!(theta.to_bits(), reference.to_bits());
            }
        }
        assert!(
            multisected > cases.len(),
            "{multisected} of {}",
            2 * cases.len()
        );
    }
}
