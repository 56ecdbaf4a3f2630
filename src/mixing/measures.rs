//! Mixing measures of a consensus matrix `W` (row-major, `n x n`, rows sum
//! to 1).

use nalgebra::{Complex, DMatrix};

use super::avx2::avx2_dispatch;
use super::krylov::SparseMatrix;
use super::spectrum::{
    check_finite, complex_eigenvalues, gelfand_radius, is_permutation, spectral_radius,
    symmetric_eigenvalues, SpectrumError,
};

/// `W` as a nalgebra matrix.
pub(crate) fn to_matrix(n: usize, w: &[f64]) -> DMatrix<f64> {
    DMatrix::from_row_slice(n, n, w)
}

/// Second-largest eigenvalue modulus of `W`: the largest `|lambda|` over
/// the eigenvalues of `W` other than one eigenvalue 1 (the consensus).
///
/// For symmetric `W` this is `||W - J/n||_2`, the quantity \[Boyd04\]
/// minimise; consensus error shrinks by about this factor per round. For
/// non-symmetric `W` (directed overlays) the eigenvalues are complex and
/// the modulus is taken. `0` for `n <= 1`; exactly 1 for a permutation
/// matrix (it moves models without averaging them: no mixing).
///
/// Bounded work ([`super::spectrum`]): when the QR iteration does not
/// converge within its bound, a row-stochastic `W` falls back to the
/// spectral radius of `(I - 11^T/n) W` (the eigenvalues of `W` with one
/// eigenvalue 1 replaced by 0) by Gelfand's formula.
///
/// # Errors
/// A non-finite entry; no convergence on a matrix whose rows do not sum
/// to 1 (no fallback there).
pub fn slem(n: usize, w: &[f64]) -> Result<f64, SpectrumError> {
    let m = match matrix_of_slem(n, w)? {
        Ok(known) => return Ok(known),
        Err(m) => m,
    };
    let symmetric = (0..n).all(|i| (0..i).all(|j| (m[(i, j)] - m[(j, i)]).abs() <= 1e-12));
    let eigenvalues: Result<Vec<Complex<f64>>, SpectrumError> = if symmetric {
        symmetric_eigenvalues(&m).map(|e| e.iter().map(|&l| Complex::new(l, 0.0)).collect())
    } else {
        complex_eigenvalues(&m)
    };
    match eigenvalues {
        Ok(mut e) => {
            // Drop the eigenvalue closest to 1 (the consensus direction).
            let one = Complex::new(1.0, 0.0);
            if let Some(k) =
                (0..n).min_by(|&a, &b| (e[a] - one).norm().total_cmp(&(e[b] - one).norm()))
            {
                e.remove(k);
            }
            Ok(e.iter().fold(0.0, |s, l| s.max(l.norm())))
        }
        Err(SpectrumError::NoConvergence { .. }) if row_stochastic(n, w) => {
            // (I - 11^T/n) W = W - 1 (1^T W / n).
            let mean_row = m.row_mean();
            let deflated = DMatrix::from_fn(n, n, |i, j| m[(i, j)] - mean_row[j]);
            Ok(gelfand_radius(&deflated))
        }
        Err(e) => Err(e),
    }
}

/// [`slem`] of a symmetric doubly stochastic `W` (its largest eigenvalue
/// is the consensus 1) without a full eigendecomposition: Householder
/// tridiagonalisation, then the second-largest and the smallest
/// eigenvalues by bisection on the Sturm counts of the tridiagonal matrix,
/// to rounding; `max(|lambda_2|, |lambda_n|)`. The same value as [`slem`]
/// within a few units in the last place (test), but not bit for bit, at
/// about half its work on 87 silos: the augmentation's fast gaps of
/// symmetric candidates (`design::arc_scores::Current::fast_gap`).
///
/// # Errors
/// A non-finite entry.
pub fn symmetric_stochastic_slem(n: usize, w: &[f64]) -> Result<f64, SpectrumError> {
    let m = match matrix_of_slem(n, w)? {
        Ok(known) => return Ok(known),
        Err(m) => m,
    };
    let t = nalgebra::linalg::SymmetricTridiagonal::new(m);
    let (alpha, beta) = (t.diagonal(), t.off_diagonal());
    let (alpha, beta) = (alpha.as_slice(), beta.as_slice());
    let kth = |k| super::tridiagonal::tridiagonal_kth(alpha, beta, k).unwrap_or(f64::NAN);
    let (second, smallest) = (kth(n - 2), kth(0));
    Ok(second.abs().max(smallest.abs()))
}

/// What every SLEM starts with: `Ok(value)` when it is known without an
/// eigenvalue (0 for `n <= 1`, 1 for a permutation), else `Err(W)` as a
/// matrix, checked finite.
fn matrix_of_slem(n: usize, w: &[f64]) -> Result<Result<f64, DMatrix<f64>>, SpectrumError> {
    if n <= 1 {
        return Ok(Ok(0.0));
    }
    let m = to_matrix(n, w);
    check_finite(&m)?;
    if is_permutation(n, w) {
        return Ok(Ok(1.0));
    }
    Ok(Err(m))
}

/// True when every row of `w` sums to 1 within 1e-9.
fn row_stochastic(n: usize, w: &[f64]) -> bool {
    (0..n).all(|i| (w[i * n..(i + 1) * n].iter().sum::<f64>() - 1.0).abs() <= 1e-9)
}

/// Spectral gap `1 - SLEM` ([`slem`]): 1 for exact averaging (`J/n`), 0
/// for no mixing (`I`, a permutation) or a disconnected overlay.
///
/// # Errors
/// As [`slem`].
pub fn spectral_gap(n: usize, w: &[f64]) -> Result<f64, SpectrumError> {
    Ok(1.0 - slem(n, w)?)
}

/// Effective number of neighbours of `W` at decay `gamma` in `[0, 1)`, in
/// the variance-reduction form of \[Vogels22\]: every silo adds unit-variance
/// noise each round and mixes with `W` after decaying its state by `gamma`
/// (`y(t+1) = W (gamma y(t) + noise(t))`); the stationary variance of a
/// silo's state is `sum_{t>=1} gamma^(2(t-1)) ||e_i^T W^t||^2`, against
/// `1 / (1 - gamma^2)` without communication. The effective number of
/// neighbours is the ratio of the two, averaged over silos (mean of the
/// variances):
///
/// `n_eff = (1 / (1 - gamma^2)) / ((1/n) sum_{t>=1} gamma^(2(t-1)) ||W^t||_F^2)`.
///
/// 1 for `W = I`, `n` for `W = J/n`; larger is better. The series is summed
/// until its terms fall below 1e-12 of the sum (at most 100,000 terms).
pub fn effective_neighbours(n: usize, w: &[f64], gamma: f64) -> f64 {
    effective_neighbours_periodic(n, &[w], gamma)
}

/// [`effective_neighbours`] of a time-varying overlay whose round `t`
/// (from 1) mixes with `rounds[(t - 1) % rounds.len()]`: `W^t` becomes the
/// product `W(t) ... W(1)`. Exact for periodic schedules given one period;
/// for random schedules (MATCHA) given sampled rounds, an estimate. NaN for
/// no rounds or `gamma` outside `[0, 1)`.
pub fn effective_neighbours_periodic(n: usize, rounds: &[&[f64]], gamma: f64) -> f64 {
    if n == 0 || rounds.is_empty() || !(0.0..1.0).contains(&gamma) {
        return f64::NAN;
    }
    // Sparse rounds times the dense power, row by row: O(nnz n) a term
    // instead of O(n^3).
    let ms: Vec<SparseMatrix> = rounds
        .iter()
        .map(|w| SparseMatrix::from_dense(n, w))
        .collect();
    // Rounds that all keep averages (rows summing to 1) leave a consensus
    // product `1 pi^T` unchanged: once the product is one, every later
    // term is the same geometric factor times it.
    let row_stochastic = rounds.iter().all(|w| {
        w.chunks(n)
            .all(|row| (row.iter().sum::<f64>() - 1.0).abs() <= 1e-12)
    });
    let mut power = rounds[0].to_vec();
    let mut next = vec![0.0; n * n];
    let zeros = vec![0.0; n];
    let mut sum = 0.0;
    let mut decay = 1.0;
    for t in 1..=100_000usize {
        let term = decay * power.iter().map(|x| x * x).sum::<f64>() / n as f64;
        sum += term;
        if term <= 1e-12 * sum {
            break;
        }
        decay *= gamma * gamma;
        let m = &ms[t % ms.len()];
        sparse_times_dense(n, m, &power, &zeros, &mut next);
        // A static overlay whose power no longer changes (exact averaging
        // J/n, STAR), or a product of row-stochastic rounds that reached
        // consensus (every row the same, `1 pi^T`: a time-varying schedule
        // such as MATCHA or Base-(k+1) after its exact-consensus round):
        // the remaining terms are geometric, summed in closed form instead
        // of O(nnz n) products until they fade (issue 24: 268 terms at
        // gamma = 0.95, 50 s for MATCHA at 1,000 silos).
        let settled = if ms.len() == 1 {
            next.iter()
                .zip(&power)
                .all(|(a, b)| (a - b).abs() <= 1e-15 * (1.0 + b.abs()))
        } else {
            row_stochastic && is_consensus(n, &next)
        };
        std::mem::swap(&mut power, &mut next);
        if settled {
            let term = decay * power.iter().map(|x| x * x).sum::<f64>() / n as f64;
            sum += term / (1.0 - gamma * gamma);
            break;
        }
    }
    (1.0 / (1.0 - gamma * gamma)) / sum
}

avx2_dispatch! {
    /// `out = 1 start^T + w m` for a sparse `n x n` round `w` and a dense
    /// row-major `n x n` matrix `m`: each row of `out` starts at `start` and
    /// adds `w(i, k) m(k, .)` in the order of `w`'s row, O(nnz n) instead of a
    /// dense O(n^3) product.
    fn sparse_times_dense(
        n: usize,
        w: &SparseMatrix,
        m: &[f64],
        start: &[f64],
        out: &mut [f64],
    ) => sparse_times_dense_rows
}

/// [`sparse_times_dense`], portable.
#[inline(always)]
fn sparse_times_dense_rows(n: usize, w: &SparseMatrix, m: &[f64], start: &[f64], out: &mut [f64]) {
    for i in 0..n {
        let row = &mut out[i * n..(i + 1) * n];
        row.copy_from_slice(start);
        for (k, v) in w.row(i) {
            for (x, p) in row.iter_mut().zip(&m[k * n..(k + 1) * n]) {
                *x += v * p;
            }
        }
    }
}

/// Whether every row of the `n x n` matrix `p` equals its first row (to
/// 1e-15 relative): a consensus product `1 pi^T`.
fn is_consensus(n: usize, p: &[f64]) -> bool {
    let first = &p[..n];
    p.chunks(n).skip(1).all(|row| {
        row.iter()
            .zip(first)
            .all(|(a, b)| (a - b).abs() <= 1e-15 * (1.0 + b.abs()))
    })
}

/// The first round `t` (from 1) after which the product `W(t) ... W(1)`
/// of doubly stochastic rounds is exact averaging `J/n` (relative residual
/// below 1e-12): finite-time exact consensus (STAR: 1; Base-(k+1): its
/// period). `None` when it never is within the rounds given, or the rounds
/// are not doubly stochastic.
pub fn exact_consensus_round(n: usize, rounds: &[&[f64]]) -> Option<usize> {
    if n == 0 || !rounds.iter().all(|w| is_doubly_stochastic(n, w)) {
        return None;
    }
    // For doubly stochastic rounds, (W_t - J/n) ... (W_1 - J/n) equals
    // P_t - J/n with P_t = W_t ... W_1: the product is kept dense and
    // multiplied by each sparse round, O(nnz n) a round instead of a dense
    // O(n^3) product (issue 24: MATCHA+ at 1,000 silos spent minutes here).
    // Round t is exact when ||P_t - J/n|| <= 1e-12 ||P_{t-1} - J/n||
    // max(||W_t - J/n||, 1) (Frobenius norms).
    let centre = 1.0 / n as f64;
    let off_centre = |m: &[f64]| {
        m.iter()
            .map(|x| (x - centre) * (x - centre))
            .sum::<f64>()
            .sqrt()
    };
    let mut product = vec![0.0; n * n];
    for i in 0..n {
        product[i * n + i] = 1.0;
    }
    let mut next = vec![0.0; n * n];
    let zeros = vec![0.0; n];
    let mut residual = off_centre(&product);
    for (t, w) in rounds.iter().enumerate() {
        sparse_times_dense(
            n,
            &SparseMatrix::from_dense(n, w),
            &product,
            &zeros,
            &mut next,
        );
        std::mem::swap(&mut product, &mut next);
        let before = residual * off_centre(w).max(1.0);
        residual = off_centre(&product);
        if residual <= 1e-12 * before {
            return Some(t + 1);
        }
    }
    None
}

/// Whether every row and column of the `n x n` matrix `w` sums to 1
/// (within 1e-9), read row by row.
fn is_doubly_stochastic(n: usize, w: &[f64]) -> bool {
    let mut columns = vec![0.0; n];
    for row in w.chunks(n) {
        if (row.iter().sum::<f64>() - 1.0).abs() > 1e-9 {
            return false;
        }
        columns.iter_mut().zip(row).for_each(|(c, x)| *c += x);
    }
    columns.iter().all(|c| (c - 1.0).abs() <= 1e-9)
}

/// Per-round SLEM of a sequence of rounds: `SLEM(W(R) ... W(1))^(1/R)`,
/// the geometric-mean contraction of the consensus error per round (equal
/// to [`slem`] for one symmetric matrix; 0 for finite-time exact
/// consensus, e.g. Base-(k+1) over its period; 1 when every round is a
/// permutation, which never averages). NaN for no rounds. Bounded work
/// ([`super::spectrum::spectral_radius`]).
///
/// # Errors
/// As [`slem`].
pub fn slem_per_round(n: usize, rounds: &[&[f64]]) -> Result<f64, SpectrumError> {
    if rounds.is_empty() {
        return Ok(f64::NAN);
    }
    if rounds.len() == 1 {
        return slem(n, rounds[0]);
    }
    for w in rounds {
        check_finite(&to_matrix(n, w))?;
    }
    if n > 1 && rounds.iter().all(|w| is_permutation(n, w)) {
        return Ok(1.0);
    }
    // The consensus error of doubly stochastic rounds evolves by
    // `W(t) - J/n`; the product is renormalised every round (a fast
    // schedule underflows over many rounds) and the scales are summed in
    // logs. A round that cancels the error (relative norm below 1e-12:
    // finite-time exact consensus) gives 0.
    let doubly = rounds
        .iter()
        .all(|w| (0..n).all(|j| ((0..n).map(|i| w[i * n + j]).sum::<f64>() - 1.0).abs() <= 1e-9));
    if !doubly {
        let mut product = DMatrix::<f64>::identity(n, n);
        for w in rounds {
            product = to_matrix(n, w) * product;
        }
        let s = slem(n, product.transpose().as_slice())?;
        return Ok(if s <= 1e-15 {
            0.0
        } else {
            s.powf(1.0 / rounds.len() as f64)
        });
    }
    // `(W - J/n) m = W m - 1 (column means of m)^T`: the sparse round
    // times the dense error, O(nnz n) instead of a dense O(n^3) product
    // (issue 24: 45% of a 1,000-silo design). Row-major `m`.
    let mut m = vec![-1.0 / n as f64; n * n];
    for i in 0..n {
        m[i * n + i] += 1.0;
    }
    let mut next = vec![0.0; n * n];
    let mut means = vec![0.0; n];
    let frobenius = |a: &[f64]| a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut log_scale = 0.0;
    for w in rounds {
        let step_norm = w
            .iter()
            .map(|x| (x - 1.0 / n as f64) * (x - 1.0 / n as f64))
            .sum::<f64>()
            .sqrt();
        let before = frobenius(&m) * step_norm;
        means.iter_mut().for_each(|x| *x = 0.0);
        for row in m.chunks(n) {
            means.iter_mut().zip(row).for_each(|(c, x)| *c += x);
        }
        // Negated: every row of `(W - J/n) m` starts at minus the means.
        means.iter_mut().for_each(|c| *c = -(*c / n as f64));
        let sparse = SparseMatrix::from_dense(n, w);
        sparse_times_dense(n, &sparse, &m, &means, &mut next);
        std::mem::swap(&mut m, &mut next);
        let after = frobenius(&m);
        if after <= 1e-12 * before || after == 0.0 {
            return Ok(0.0);
        }
        log_scale += after.ln();
        m.iter_mut().for_each(|x| *x /= after);
    }
    let radius = spectral_radius(&DMatrix::from_row_slice(n, n, &m))?;
    if radius <= 1e-15 {
        return Ok(0.0);
    }
    Ok(((log_scale + radius.ln()) / rounds.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn slem(n: usize, w: &[f64]) -> f64 {
        super::slem(n, w).unwrap_or_else(|e| panic!("{e}"))
    }

    fn slem_per_round(n: usize, rounds: &[&[f64]]) -> f64 {
        super::slem_per_round(n, rounds).unwrap_or_else(|e| panic!("{e}"))
    }

    fn bits(x: &[f64]) -> Vec<u64> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    /// The sparse-dense product the CPU runs (AVX2 when it has it) gives
    /// the portable build's bits.
    #[test]
    fn sparse_times_dense_is_the_same_on_every_cpu() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 37;
        let w: Vec<f64> = (0..n * n)
            .map(|_| {
                if rng.gen_bool(0.2) {
                    rng.gen_range(-1.0..1.0)
                } else {
                    0.0
                }
            })
            .collect();
        let sparse = SparseMatrix::from_dense(n, &w);
        let m: Vec<f64> = (0..n * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let start: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let (mut fast, mut portable) = (vec![0.0; n * n], vec![0.0; n * n]);
        sparse_times_dense(n, &sparse, &m, &start, &mut fast);
        sparse_times_dense_rows(n, &sparse, &m, &start, &mut portable);
        assert_eq!(bits(&fast), bits(&portable));
    }

    fn average(n: usize) -> Vec<f64> {
        vec![1.0 / n as f64; n * n]
    }

    fn identity(n: usize) -> Vec<f64> {
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            w[i * n + i] = 1.0;
        }
        w
    }

    /// Directed ring with weights 1/2: eigenvalues (1 + e^(2 pi i k/n))/2,
    /// modulus |cos(pi k / n)|; the SLEM is cos(pi / n).
    fn half_ring(n: usize) -> Vec<f64> {
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            w[i * n + i] = 0.5;
            w[i * n + (i + n - 1) % n] = 0.5;
        }
        w
    }

    #[test]
    fn slem_of_known_matrices() {
        assert!(slem(5, &average(5)).abs() < 1e-12);
        assert!((slem(5, &identity(5)) - 1.0).abs() < 1e-12);
        for n in [3, 4, 7, 10] {
            let expected = (std::f64::consts::PI / n as f64).cos();
            assert!((slem(n, &half_ring(n)) - expected).abs() < 1e-9, "n = {n}");
        }
        assert_eq!(spectral_gap(1, &[1.0]), Ok(1.0));
    }

    /// Local-degree (Metropolis) weights of a random undirected graph:
    /// symmetric and doubly stochastic.
    fn random_local_degree(rng: &mut ChaCha8Rng, n: usize, tree: bool) -> Vec<f64> {
        let mut adj = vec![false; n * n];
        for i in 1..n {
            let j = rng.gen_range(0..i);
            adj[i * n + j] = true;
            adj[j * n + i] = true;
        }
        if !tree {
            for _ in 0..n {
                let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
                if i != j {
                    adj[i * n + j] = true;
                    adj[j * n + i] = true;
                }
            }
        }
        let deg: Vec<usize> = (0..n)
            .map(|i| adj[i * n..(i + 1) * n].iter().filter(|&&a| a).count())
            .collect();
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                if adj[i * n + j] {
                    w[i * n + j] = 1.0 / (1 + deg[i].max(deg[j])) as f64;
                }
            }
            w[i * n + i] = 1.0 - w[i * n..(i + 1) * n].iter().sum::<f64>();
        }
        w
    }

    #[test]
    fn symmetric_stochastic_slem_equals_the_dense_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for case in 0..120 {
            let n = rng.gen_range(2..60);
            let w = random_local_degree(&mut rng, n, case % 3 == 0);
            let (fast, dense) = (symmetric_stochastic_slem(n, &w).unwrap(), slem(n, &w));
            assert!((fast - dense).abs() <= 1e-14, "n = {n}: {fast} vs {dense}");
        }
        // Disconnected (a second eigenvalue 1), the average, the identity.
        let mut w = identity(4);
        for (i, j) in [(0, 1), (1, 0), (2, 3), (3, 2)] {
            w[i * 4 + j] = 0.5;
            w[i * 4 + i] = 0.5;
        }
        assert!((symmetric_stochastic_slem(4, &w).unwrap() - 1.0).abs() <= 1e-15);
        assert!(symmetric_stochastic_slem(6, &average(6)).unwrap().abs() <= 1e-15);
        assert_eq!(symmetric_stochastic_slem(3, &identity(3)), Ok(1.0));
        assert_eq!(symmetric_stochastic_slem(1, &[1.0]), Ok(0.0));
        assert!(symmetric_stochastic_slem(2, &[0.5, f64::NAN, 0.5, 0.5]).is_err());
    }

    #[test]
    fn effective_neighbours_consensus_tail_equals_the_series() {
        // The series summed term by term, without the closed-form tail.
        fn series(n: usize, rounds: &[Vec<f64>], gamma: f64) -> f64 {
            let mut power = rounds[0].clone();
            let (mut sum, mut decay) = (0.0, 1.0);
            for t in 1..20_000usize {
                let term = decay * power.iter().map(|x| x * x).sum::<f64>() / n as f64;
                sum += term;
                if term <= 1e-17 * sum {
                    break;
                }
                decay *= gamma * gamma;
                let w = &rounds[t % rounds.len()];
                let mut next = vec![0.0; n * n];
                for i in 0..n {
                    for k in 0..n {
                        for j in 0..n {
                            next[i * n + j] += w[i * n + k] * power[k * n + j];
                        }
                    }
                }
                power = next;
            }
            (1.0 / (1.0 - gamma * gamma)) / sum
        }
        // Pairwise averaging along hypercube dimension `d` of 8 silos.
        let dim = |d: usize| {
            let mut w = vec![0.0; 64];
            for i in 0..8 {
                w[i * 8 + i] = 0.5;
                w[i * 8 + (i ^ (1 << d))] = 0.5;
            }
            w
        };
        // Exact consensus after 4 rounds, an identity round first (its
        // product I is settled but not consensus: no early tail).
        let base = vec![identity(8), dim(0), dim(1), dim(2)];
        // Random matchings (MATCHA-like) converging geometrically.
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut next_rand = || rng.gen::<u32>() as usize;
        let matchings: Vec<Vec<f64>> = (0..6)
            .map(|_| {
                let mut w = identity(8);
                for _ in 0..3 {
                    let (a, b) = (next_rand() % 8, next_rand() % 8);
                    if a != b && w[a * 8 + a] == 1.0 && w[b * 8 + b] == 1.0 {
                        w[a * 8 + a] = 0.5;
                        w[b * 8 + b] = 0.5;
                        w[a * 8 + b] = 0.5;
                        w[b * 8 + a] = 0.5;
                    }
                }
                w
            })
            .collect();
        for rounds in [&base, &matchings] {
            let refs: Vec<&[f64]> = rounds.iter().map(Vec::as_slice).collect();
            for gamma in [0.5, 0.95, 0.99] {
                let fast = effective_neighbours_periodic(8, &refs, gamma);
                let slow = series(8, rounds, gamma);
                assert!(
                    (fast - slow).abs() <= 1e-9 * slow,
                    "{gamma}: {fast} vs {slow}"
                );
            }
        }
        assert!(!is_consensus(8, &identity(8)));
        assert!(is_consensus(8, &average(8)));
    }

    /// The sparse exact-consensus round equals the dense normalised
    /// product it replaced, on exact (hypercube, with identity rounds
    /// between), converging (random matchings) and non-doubly-stochastic
    /// schedules.
    #[test]
    fn exact_consensus_round_equals_the_dense_product() {
        fn dense(n: usize, rounds: &[&[f64]]) -> Option<usize> {
            let doubly = rounds.iter().all(|w| {
                (0..n).all(|j| ((0..n).map(|i| w[i * n + j]).sum::<f64>() - 1.0).abs() <= 1e-9)
            });
            if n == 0 || !doubly {
                return None;
            }
            let centre = DMatrix::<f64>::from_element(n, n, 1.0 / n as f64);
            let mut m = DMatrix::<f64>::identity(n, n) - &centre;
            for (t, w) in rounds.iter().enumerate() {
                let step = to_matrix(n, w) - &centre;
                let before = m.norm() * step.norm().max(1.0);
                m = step * m;
                let after = m.norm();
                if after <= 1e-12 * before {
                    return Some(t + 1);
                }
                m /= after;
            }
            None
        }
        let n = 16;
        let pair = |pairs: &[(usize, usize)]| {
            let mut w = identity(n);
            for &(a, b) in pairs {
                w[a * n + a] = 0.5;
                w[b * n + b] = 0.5;
                w[a * n + b] = 0.5;
                w[b * n + a] = 0.5;
            }
            w
        };
        let dim = |d: usize| {
            let pairs: Vec<(usize, usize)> = (0..n)
                .filter(|i| i & (1 << d) == 0)
                .map(|i| (i, i | (1 << d)))
                .collect();
            pair(&pairs)
        };
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut rand = || rng.gen_range(0..n);
        // One random pair averages per round (never exact).
        let matchings: Vec<Vec<f64>> = (0..30)
            .map(|_| {
                let a = rand();
                pair(&[(a, (a + 1 + rand() % (n - 1)) % n)])
            })
            .collect();
        let mut skewed = identity(n);
        skewed[0] = 0.5;
        skewed[1] = 0.5;
        let schedules: Vec<Vec<Vec<f64>>> = vec![
            (0..4).map(dim).collect(),
            vec![
                dim(0),
                identity(n),
                dim(1),
                dim(2),
                identity(n),
                dim(3),
                dim(0),
            ],
            vec![dim(0), dim(1), dim(2)],
            matchings,
            vec![average(n)],
            vec![identity(n), average(n)],
            vec![skewed, average(n)],
        ];
        let mut exact = 0;
        for rounds in &schedules {
            let refs: Vec<&[f64]> = rounds.iter().map(Vec::as_slice).collect();
            let got = exact_consensus_round(n, &refs);
            assert_eq!(got, dense(n, &refs));
            exact += usize::from(got.is_some());
        }
        assert_eq!(exact, 4, "hypercube twice, averaging twice");
    }

    #[test]
    fn effective_neighbours_bounds() {
        for gamma in [0.0, 0.5, 0.9, 0.99] {
            assert!((effective_neighbours(6, &average(6), gamma) - 6.0).abs() < 1e-9);
            assert!((effective_neighbours(6, &identity(6), gamma) - 1.0).abs() < 1e-9);
        }
        // gamma = 0: one mixing step, 1 / (mean squared row norm).
        let w = half_ring(4);
        assert!((effective_neighbours(4, &w, 0.0) - 2.0).abs() < 1e-12);
        // More decay memory -> more neighbours reached on a ring.
        let a = effective_neighbours(8, &half_ring(8), 0.5);
        let b = effective_neighbours(8, &half_ring(8), 0.9);
        assert!(1.0 < a && a < b && b < 8.0, "{a} {b}");
        assert!(effective_neighbours(3, &average(3), 1.0).is_nan());
        // A static overlay given as a one-round period is the same.
        let w = half_ring(5);
        assert_eq!(
            effective_neighbours_periodic(5, &[&w], 0.7),
            effective_neighbours(5, &w, 0.7)
        );
    }

    /// One-peer exponential graph on 4 nodes (shifts 1 then 2, weights
    /// 1/2): the product of the period is exact averaging.
    #[test]
    fn per_round_slem_of_a_finite_time_schedule() {
        let shift = |s: usize| {
            let mut w = vec![0.0; 16];
            for i in 0..4 {
                w[i * 4 + i] = 0.5;
                w[i * 4 + (i + s) % 4] = 0.5;
            }
            w
        };
        let (a, b) = (shift(1), shift(2));
        assert_eq!(slem_per_round(4, &[&a, &b]), 0.0);
        assert!((slem_per_round(4, &[&a]) - slem(4, &a)).abs() < 1e-15);
        let full = effective_neighbours_periodic(4, &[&a, &b], 0.5);
        let one = effective_neighbours(4, &a, 0.5);
        assert!(full > one, "{full} {one}");
        assert!(slem_per_round(4, &[]).is_nan());
        assert_eq!(exact_consensus_round(4, &[&a, &b]), Some(2));
        assert_eq!(exact_consensus_round(4, &[&a, &a, &a]), None);
        assert_eq!(exact_consensus_round(4, &[&average(4)]), Some(1));
    }

    /// The renormalised product equals the plain product's SLEM (when the
    /// plain one does not underflow), for random matching-based rounds
    /// `I - alpha L` (MATCHA-like, doubly stochastic).
    #[test]
    fn per_round_slem_matches_the_plain_product() {
        let n = 8;
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut next = move || rng.gen::<u32>() as usize;
        let rounds: Vec<Vec<f64>> = (0..6)
            .map(|_| {
                let mut w = identity(n);
                for _ in 0..3 {
                    let (a, b) = (next() % n, next() % n);
                    if a != b && w[a * n + a] >= 0.3 && w[b * n + b] >= 0.3 {
                        w[a * n + b] += 0.3;
                        w[b * n + a] += 0.3;
                        w[a * n + a] -= 0.3;
                        w[b * n + b] -= 0.3;
                    }
                }
                w
            })
            .collect();
        let refs: Vec<&[f64]> = rounds.iter().map(Vec::as_slice).collect();
        let mut product = DMatrix::<f64>::identity(n, n);
        for w in &refs {
            product = to_matrix(n, w) * product;
        }
        let plain = slem(n, product.transpose().as_slice()).powf(1.0 / 6.0);
        let fast = slem_per_round(n, &refs);
        assert!((plain - fast).abs() < 1e-9, "{plain} vs {fast}");
    }

    /// The sparse per-round SLEM equals the dense renormalised product it
    /// replaced (to rounding), on doubly stochastic schedules with
    /// asymmetric rounds, and gives 0 where that one did (exact consensus).
    #[test]
    fn per_round_slem_equals_the_dense_renormalised_product() {
        fn dense(n: usize, rounds: &[&[f64]]) -> f64 {
            let centre = DMatrix::<f64>::from_element(n, n, 1.0 / n as f64);
            let mut m = DMatrix::<f64>::identity(n, n) - &centre;
            let mut log_scale = 0.0;
            for w in rounds {
                let step = to_matrix(n, w) - &centre;
                let before = m.norm() * step.norm();
                m = step * m;
                let after = m.norm();
                if after <= 1e-12 * before || after == 0.0 {
                    return 0.0;
                }
                log_scale += after.ln();
                m /= after;
            }
            let radius = spectral_radius(&m).unwrap_or_else(|e| panic!("{e}"));
            if radius <= 1e-15 {
                return 0.0;
            }
            ((log_scale + radius.ln()) / rounds.len() as f64).exp()
        }
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut rand = move || rng.gen::<f64>();
        for n in [5, 40] {
            // Doubly stochastic, not symmetric: a mix of a cyclic shift
            // and the identity, then a random pair averages.
            let rounds: Vec<Vec<f64>> = (0..25)
                .map(|_| {
                    let a = 0.2 + 0.6 * rand();
                    let mut w = vec![0.0; n * n];
                    for i in 0..n {
                        w[i * n + i] += a;
                        w[i * n + (i + 1) % n] += 1.0 - a;
                    }
                    let (x, y) = (
                        (rand() * n as f64) as usize % n,
                        (rand() * n as f64) as usize % n,
                    );
                    if x != y {
                        let (rx, ry) = (
                            w[x * n..(x + 1) * n].to_vec(),
                            w[y * n..(y + 1) * n].to_vec(),
                        );
                        for j in 0..n {
                            let v = 0.5 * (rx[j] + ry[j]);
                            w[x * n + j] = v;
                            w[y * n + j] = v;
                        }
                    }
                    w
                })
                .collect();
            let refs: Vec<&[f64]> = rounds.iter().map(Vec::as_slice).collect();
            let (fast, slow) = (slem_per_round(n, &refs), dense(n, &refs));
            assert!(
                fast > 0.0 && (fast - slow).abs() <= 1e-12 * slow,
                "{n}: {fast} vs {slow}"
            );
        }
        let dim = |d: usize| {
            let mut w = vec![0.0; 64];
            for i in 0..8 {
                w[i * 8 + i] = 0.5;
                w[i * 8 + (i ^ (1 << d))] = 0.5;
            }
            w
        };
        let exact = [dim(0), dim(1), dim(2)];
        let refs: Vec<&[f64]> = exact.iter().map(Vec::as_slice).collect();
        assert_eq!(slem_per_round(8, &refs), 0.0);
        assert_eq!(dense(8, &refs), 0.0);
    }

    /// A directed ring with weight 1 on every arc (a cyclic permutation),
    /// a product of permutations, and a schedule of empty rounds (every
    /// round `I`): the QR iteration used to spin on them; now SLEM 1, no
    /// mixing, in bounded time.
    #[test]
    fn permutations_and_empty_rounds_do_not_mix_and_terminate() {
        for n in [2, 3, 4, 11, 22, 33] {
            let ring: Vec<f64> = (0..n * n)
                .map(|k| {
                    if k % n == (k / n + n - 1) % n {
                        1.0
                    } else {
                        0.0
                    }
                })
                .collect();
            assert_eq!(slem(n, &ring), 1.0, "n {n}");
            assert_eq!(slem_per_round(n, &[&ring, &ring]), 1.0);
            let i = identity(n);
            assert_eq!(slem_per_round(n, &[&i, &i, &i]), 1.0);
            // A permutation round then an averaging-free but non-permutation
            // round (I with one 1/2-1/2 pair): the projection path, bounded.
            let mut pair = identity(n);
            pair[0] = 0.5;
            pair[1] = 0.5;
            pair[n] = 0.5;
            pair[n + 1] = 0.5;
            let s = slem_per_round(n, &[&ring, &pair]);
            assert!(
                s.is_finite() && (0.0..=1.0 + 1e-9).contains(&s),
                "n {n}: {s}"
            );
            // The ring's product with the identity is the ring: same answer.
            assert_eq!(slem_per_round(n, &[&ring, &i]), 1.0);
            // Effective neighbours of a permutation: 1 (nothing averaged).
            assert!((effective_neighbours(n, &ring, 0.95) - 1.0).abs() < 1e-9);
        }
        let mut bad = identity(3);
        bad[1] = f64::NAN;
        assert!(matches!(
            super::slem(3, &bad),
            Err(SpectrumError::NotFinite { row: 0, col: 1, .. })
        ));
    }
}
