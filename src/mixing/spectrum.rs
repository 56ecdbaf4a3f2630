//! Eigenvalues with a bounded amount of work.
//!
//! nalgebra's `Schur::new`, `SymmetricEigen::new`, `complex_eigenvalues`
//! and `symmetric_eigenvalues` iterate until convergence without a bound;
//! the implicit double-shift QR iteration of `Schur` does not converge on
//! some exactly structured matrices (a permutation, the projection
//! `I - J/n` of a schedule of empty rounds) and NaN entries stop every
//! convergence test. Every eigenvalue computation of fedtopo goes through
//! this module instead: at most [`qr_iterations`] QR iterations (LAPACK's
//! `30 max(10, n)`), entries checked finite first, and for spectral radii
//! a fallback that always terminates ([`gelfand_radius`]). The one
//! exception, [`symmetric_eigenvalues`] (eigenvalues of a symmetric
//! matrix without eigenvectors), has no such bound in nalgebra; the
//! symmetric QR iteration converges on every finite symmetric matrix (see
//! there).

use nalgebra::{Complex, DMatrix, DVector, SymmetricEigen};

use super::francis::francis_eigenvalues;

/// Why an eigenvalue computation gave no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpectrumError {
    /// An entry is NaN or infinite.
    #[error("matrix entry ({row},{col}) = {value} is not a finite number")]
    NotFinite {
        /// Row (from 0).
        row: usize,
        /// Column (from 0).
        col: usize,
        /// The entry.
        value: f64,
    },
    /// The QR iteration did not converge within its bound.
    #[error(
        "the {what} eigenvalue iteration did not converge within {iterations} iterations on a \
         {n} x {n} matrix"
    )]
    NoConvergence {
        /// Which routine (`symmetric`, `non-symmetric`).
        what: &'static str,
        /// Matrix size.
        n: usize,
        /// The bound reached.
        iterations: usize,
    },
}

/// Most QR iterations on an `n x n` matrix: `30 max(10, n)`, LAPACK's
/// bound (`ITMAX` of `dhseqr`/`dlahqr`).
pub fn qr_iterations(n: usize) -> usize {
    30 * n.max(10)
}

/// Squarings of [`gelfand_radius`] at most (`||A^(2^64)||`).
pub const GELFAND_SQUARINGS: u32 = 64;

/// `Ok` when every entry of `m` is finite.
///
/// # Errors
/// [`SpectrumError::NotFinite`] naming the first entry (row-major) that is not.
pub fn check_finite(m: &DMatrix<f64>) -> Result<(), SpectrumError> {
    for row in 0..m.nrows() {
        for col in 0..m.ncols() {
            let value = m[(row, col)];
            if !value.is_finite() {
                return Err(SpectrumError::NotFinite { row, col, value });
            }
        }
    }
    Ok(())
}

/// Eigenvalues and eigenvectors of the symmetric matrix `m` (its lower
/// triangle is read), in at most [`qr_iterations`] QR iterations.
///
/// # Errors
/// A non-finite entry, or no convergence within the bound.
pub fn symmetric_eigen(
    m: DMatrix<f64>,
) -> Result<SymmetricEigen<f64, nalgebra::Dyn>, SpectrumError> {
    check_finite(&m)?;
    let n = m.nrows();
    let iterations = qr_iterations(n);
    SymmetricEigen::try_new(m, f64::EPSILON, iterations).ok_or(SpectrumError::NoConvergence {
        what: "symmetric",
        n,
        iterations,
    })
}

/// Eigenvalues of the symmetric matrix `m` (its lower triangle is read),
/// without eigenvectors: the same Householder tridiagonalisation and the
/// same implicit QR sweeps as [`symmetric_eigen`] (nalgebra's
/// `do_decompose`, which skips only the accumulation of the rotations
/// when no eigenvectors are asked for), so the same eigenvalues to the
/// bit (test `symmetric_eigenvalues_equal_the_decomposition`), without
/// the work of accumulating the eigenvector matrix (`cargo bench --bench
/// design`, `eigen/*`).
///
/// nalgebra's eigenvalue-only entry point has no iteration bound; the
/// symmetric tridiagonal QR iteration with Wilkinson's shift converges
/// for every finite symmetric matrix (Wilkinson 1968; Parlett, "The
/// Symmetric Eigenvalue Problem", 1998, Sec. 8.10: global and at least
/// quadratic), and the entries are checked finite first (NaN is what stops
/// its convergence test), so the sweep ends. The iteration counts
/// observed stay far below [`qr_iterations`] (about 2 per eigenvalue).
///
/// # Errors
/// A non-finite entry.
pub fn symmetric_eigenvalues(m: &DMatrix<f64>) -> Result<DVector<f64>, SpectrumError> {
    check_finite(m)?;
    Ok(m.symmetric_eigenvalues())
}

/// Complex eigenvalues of the square matrix `m` by the implicit
/// double-shift QR iteration of a real Schur decomposition, in at most
/// [`qr_iterations`] QR iterations.
///
/// From 3 x 3 up the eigenvalues only (`super::francis`: no Schur
/// vectors, only the active block updated), bit for bit the eigenvalues
/// of nalgebra's `Schur::try_new(m, f64::EPSILON, qr_iterations(n))`
/// and failing exactly when it fails; smaller (and zero) matrices by
/// `Schur::try_new` itself.
///
/// # Errors
/// A non-finite entry, or no convergence within the bound (a permutation
/// matrix can cause it: the shifts of the QR iteration stall on it).
pub fn complex_eigenvalues(m: &DMatrix<f64>) -> Result<Vec<Complex<f64>>, SpectrumError> {
    check_finite(m)?;
    let n = m.nrows();
    let iterations = qr_iterations(n);
    let no_convergence = SpectrumError::NoConvergence {
        what: "non-symmetric",
        n,
        iterations,
    };
    if n >= 3 && m.iter().any(|&x| x != 0.0) {
        return francis_eigenvalues(m, f64::EPSILON, iterations).ok_or(no_convergence);
    }
    let schur =
        nalgebra::Schur::try_new(m.clone(), f64::EPSILON, iterations).ok_or(no_convergence)?;
    Ok(schur.complex_eigenvalues().iter().copied().collect())
}

/// Spectral radius `max |lambda|` of `m`: from its eigenvalues
/// ([`complex_eigenvalues`]) when the QR iteration converges, otherwise
/// by [`gelfand_radius`]. Always terminates.
///
/// # Errors
/// A non-finite entry.
pub fn spectral_radius(m: &DMatrix<f64>) -> Result<f64, SpectrumError> {
    match complex_eigenvalues(m) {
        Ok(e) => Ok(e.iter().fold(0.0f64, |r, l| r.max(l.norm()))),
        Err(SpectrumError::NoConvergence { .. }) => Ok(gelfand_radius(m)),
        Err(e) => Err(e),
    }
}

/// Spectral radius of `m` by Gelfand's formula `rho = lim ||A^k||^(1/k)`,
/// taken along `k = 2^j` by repeated squaring: `A^(2^j) = e^(L_j) B_j`
/// with `||B_j||_F = 1`, `log rho ~ L_j / 2^j`. The estimate's error is
/// `log C / 2^j` for `C` the transient growth of `A^k / rho^k` (bounded
/// for diagonalisable `A`, polynomial in `k` otherwise), so after
/// [`GELFAND_SQUARINGS`] squarings it is far below the rounding error;
/// stops earlier once a squaring changes `log rho` by less than 1e-17.
/// Exact for normal matrices (a permutation: every `||B_j||` is 1).
/// A nilpotent `m` gives 0. Entries must be finite.
pub fn gelfand_radius(m: &DMatrix<f64>) -> f64 {
    let c = m.norm();
    if c == 0.0 || !c.is_finite() {
        return if c == 0.0 { 0.0 } else { f64::NAN };
    }
    let mut b = m / c;
    let mut log_rho = c.ln();
    let mut weight = 1.0;
    for _ in 0..GELFAND_SQUARINGS {
        b = &b * &b;
        weight *= 0.5;
        let c = b.norm();
        if c == 0.0 {
            return 0.0;
        }
        b /= c;
        let step = weight * c.ln();
        log_rho += step;
        if step.abs() <= 1e-17 {
            break;
        }
    }
    log_rho.exp()
}

/// True when `w` (row-major `n x n`) is a permutation matrix: in every row
/// and every column exactly one entry 1, the others 0. Its eigenvalues
/// are roots of unity: it moves the models, it never averages them.
pub fn is_permutation(n: usize, w: &[f64]) -> bool {
    if w.len() != n * n {
        return false;
    }
    let mut column_hit = vec![false; n];
    for i in 0..n {
        let mut one = None;
        for j in 0..n {
            let v = w[i * n + j];
            if v == 1.0 && one.is_none() {
                one = Some(j);
            } else if v != 0.0 {
                return false;
            }
        }
        match one {
            Some(j) if !column_hit[j] => column_hit[j] = true,
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The cyclic shift `i -> i + s mod n`.
    fn shift(n: usize, s: usize) -> DMatrix<f64> {
        DMatrix::from_fn(n, n, |i, j| if j == (i + s) % n { 1.0 } else { 0.0 })
    }

    #[test]
    fn permutations_are_recognised() {
        for n in 1..8 {
            for s in 0..n {
                let m = shift(n, s);
                let rows: Vec<f64> = m.transpose().as_slice().to_vec();
                assert!(is_permutation(n, &rows), "n {n} shift {s}");
            }
        }
        assert!(!is_permutation(2, &[0.5, 0.5, 0.5, 0.5]));
        assert!(!is_permutation(2, &[1.0, 0.0, 1.0, 0.0]));
        assert!(!is_permutation(2, &[1.0, 0.0, 0.0]));
        assert!(!is_permutation(2, &[1.0, 1e-300, 0.0, 1.0]));
    }

    /// The eigenvalue-only sweep gives the decomposition's eigenvalues to
    /// the bit (same tridiagonalisation, same rotations), on random
    /// symmetric matrices and on structured ones (multiple eigenvalues,
    /// local-degree matrices of rings), and refuses a NaN.
    #[test]
    fn symmetric_eigenvalues_equal_the_decomposition() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut next = move || rng.gen::<f64>() - 0.5;
        let mut cases: Vec<DMatrix<f64>> = Vec::new();
        for n in [1, 2, 3, 5, 17, 60, 87] {
            let a = DMatrix::from_fn(n, n, |_, _| next());
            cases.push(&a + a.transpose());
            cases.push(DMatrix::identity(n, n));
            cases.push(DMatrix::from_element(n, n, 1.0 / n as f64));
            // Ring with local-degree weights 1/3: eigenvalues of multiplicity 2.
            cases.push(DMatrix::from_fn(n, n, |i, j| {
                if i == j || j == (i + 1) % n || i == (j + 1) % n {
                    1.0 / 3.0
                } else {
                    0.0
                }
            }));
        }
        for m in cases {
            let fast = symmetric_eigenvalues(&m).unwrap_or_else(|e| panic!("{e}"));
            let full = symmetric_eigen(m.clone())
                .unwrap_or_else(|e| panic!("{e}"))
                .eigenvalues;
            let bits = |v: &DVector<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&full), "n {}", m.nrows());
        }
        let mut bad = DMatrix::<f64>::identity(3, 3);
        bad[(2, 1)] = f64::NAN;
        assert!(matches!(
            symmetric_eigenvalues(&bad),
            Err(SpectrumError::NotFinite { row: 2, col: 1, .. })
        ));
    }

    /// Gelfand's formula against the eigenvalues on matrices where the QR
    /// iteration converges, and exactly 1 on permutations.
    #[test]
    fn gelfand_radius_matches_the_eigenvalues() {
        let half = |n: usize| {
            DMatrix::from_fn(n, n, |i, j| {
                if i == j || j == (i + n - 1) % n {
                    0.5
                } else {
                    0.0
                }
            })
        };
        for n in [3, 5, 8] {
            let j = DMatrix::from_element(n, n, 1.0 / n as f64);
            let m = half(n) - &j;
            let expected = (std::f64::consts::PI / n as f64).cos();
            let by_eig = spectral_radius(&m).unwrap_or_else(|e| panic!("{e}"));
            assert!((by_eig - expected).abs() < 1e-12, "{by_eig} vs {expected}");
            let g = gelfand_radius(&m);
            assert!((g - expected).abs() < 1e-12, "n {n}: {g} vs {expected}");
            assert!((gelfand_radius(&shift(n, 1)) - 1.0).abs() < 1e-15);
        }
        // A Jordan block: radius 0.5, transient growth.
        let jordan = DMatrix::from_row_slice(3, 3, &[0.5, 1.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.5]);
        assert!((gelfand_radius(&jordan) - 0.5).abs() < 1e-12);
        // Nilpotent: 0.
        let nil = DMatrix::from_row_slice(2, 2, &[0.0, 1.0, 0.0, 0.0]);
        assert_eq!(gelfand_radius(&nil), 0.0);
        assert_eq!(gelfand_radius(&DMatrix::zeros(3, 3)), 0.0);
    }

    /// The matrices that made the unbounded QR iteration spin return, with
    /// a result or a typed error.
    #[test]
    fn hard_matrices_terminate() {
        for n in [2, 3, 11, 22, 40] {
            let proj = DMatrix::<f64>::identity(n, n) - DMatrix::from_element(n, n, 1.0 / n as f64);
            let r = spectral_radius(&proj).unwrap_or_else(|e| panic!("{e}"));
            assert!((r - 1.0).abs() < 1e-9, "n {n}: {r}");
            let p = shift(n, 1) - DMatrix::from_element(n, n, 1.0 / n as f64);
            let r = spectral_radius(&p).unwrap_or_else(|e| panic!("{e}"));
            assert!((r - 1.0).abs() < 1e-9, "n {n}: {r}");
            match complex_eigenvalues(&shift(n, 1)) {
                Ok(e) => assert!(e.iter().all(|l| (l.norm() - 1.0).abs() < 1e-9)),
                Err(e) => assert!(matches!(e, SpectrumError::NoConvergence { .. })),
            }
        }
        let mut nan = DMatrix::<f64>::identity(3, 3);
        nan[(1, 2)] = f64::NAN;
        assert!(matches!(
            spectral_radius(&nan),
            Err(SpectrumError::NotFinite { row: 1, col: 2, .. })
        ));
        assert!(symmetric_eigenvalues(&nan).is_err());
    }
}
