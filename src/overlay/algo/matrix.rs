//! Dense square matrices of delays / weights.

use std::borrow::Cow;

use rayon::prelude::*;
use thiserror::Error;

/// Errors raised when building a [`DenseMatrix`].
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MatrixError {
    /// `data.len()` is not `n * n`.
    #[error("matrix data has {got} entries, expected {n} x {n} = {expected}")]
    WrongLength {
        /// Side of the matrix.
        n: usize,
        /// `n * n`.
        expected: usize,
        /// Actual number of entries.
        got: usize,
    },
    /// An off-diagonal entry is NaN or infinite.
    #[error("matrix entry ({i}, {j}) is not finite: {value}")]
    NonFinite {
        /// Row.
        i: usize,
        /// Column.
        j: usize,
        /// Offending value.
        value: f64,
    },
}

/// Dense `n x n` matrix of `f64`, row-major; entry `(i, j)` is the weight or
/// delay (ms) from node `i` to node `j`.
///
/// The diagonal is ignored: whatever is passed there is neither checked nor
/// kept, and [`DenseMatrix::get`] returns `0.0` for `(i, i)`. Every
/// off-diagonal entry is finite (checked at construction).
#[derive(Debug, Clone, PartialEq)]
pub struct DenseMatrix {
    n: usize,
    data: Vec<f64>,
}

impl DenseMatrix {
    /// Builds a matrix from row-major `data` of length `n * n`.
    ///
    /// # Errors
    /// [`MatrixError::WrongLength`] if `data.len() != n * n`,
    /// [`MatrixError::NonFinite`] if an off-diagonal entry is NaN or infinite.
    pub fn new(n: usize, mut data: Vec<f64>) -> Result<Self, MatrixError> {
        let expected = n.saturating_mul(n);
        if data.len() != expected {
            return Err(MatrixError::WrongLength {
                n,
                expected,
                got: data.len(),
            });
        }
        for i in 0..n {
            for j in 0..n {
                let value = data[i * n + j];
                if i == j {
                    data[i * n + j] = 0.0;
                } else if !value.is_finite() {
                    return Err(MatrixError::NonFinite { i, j, value });
                }
            }
        }
        Ok(Self { n, data })
    }

    /// Builds a matrix with entry `(i, j) = f(i, j)`; `f` is only called for
    /// `i != j` (the diagonal is set to `0.0`).
    ///
    /// # Errors
    /// [`MatrixError::NonFinite`] if `f` returns NaN or an infinity.
    pub fn from_fn(n: usize, mut f: impl FnMut(usize, usize) -> f64) -> Result<Self, MatrixError> {
        let mut data = Vec::with_capacity(n * n);
        for i in 0..n {
            for j in 0..n {
                data.push(if i == j { 0.0 } else { f(i, j) });
            }
        }
        Self::new(n, data)
    }

    /// Like [`Self::from_fn`], with every non-finite off-diagonal value of
    /// `f` replaced by `f64::MAX` (and the diagonal 0), so it cannot fail.
    pub fn from_fn_saturating(n: usize, mut f: impl FnMut(usize, usize) -> f64) -> Self {
        let mut data = Vec::with_capacity(n.saturating_mul(n));
        for i in 0..n {
            for j in 0..n {
                let v = if i == j { 0.0 } else { f(i, j) };
                data.push(if v.is_finite() { v } else { f64::MAX });
            }
        }
        DenseMatrix { n, data }
    }

    /// [`Self::from_fn_saturating`] with the rows computed in parallel
    /// (same values: every entry is `f(i, j)` alone).
    pub fn from_fn_saturating_par(n: usize, f: impl Fn(usize, usize) -> f64 + Sync) -> Self {
        let mut data = vec![0.0; n.saturating_mul(n)];
        if n > 0 {
            data.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
                for (j, x) in row.iter_mut().enumerate() {
                    let v = if i == j { 0.0 } else { f(i, j) };
                    *x = if v.is_finite() { v } else { f64::MAX };
                }
            });
        }
        DenseMatrix { n, data }
    }

    /// A symmetric matrix with entry `f(i, j)` at `(i, j)` and `(j, i)`
    /// for `i < j` (`f` is called once per pair), non-finite values
    /// saturated to `f64::MAX` as [`Self::from_fn_saturating_par`] does:
    /// equal to it when `f(i, j) == f(j, i)` bit for bit. The pairs are
    /// computed in square tiles (row tiles in parallel), so that an `f`
    /// reading both `(i, j)` and `(j, i)` of a row-major table keeps the
    /// transposed reads in cache (issue 28); the lower triangle is then
    /// mirrored tile by tile.
    pub fn from_fn_symmetric_saturating_par(
        n: usize,
        f: impl Fn(usize, usize) -> f64 + Sync,
    ) -> Self {
        let mut data = vec![0.0; n.saturating_mul(n)];
        if n > 0 {
            data.par_chunks_mut(n * TILE)
                .enumerate()
                .for_each(|(b, rows)| {
                    let i0 = b * TILE;
                    for j0 in (i0..n).step_by(TILE) {
                        for (r, row) in rows.chunks_mut(n).enumerate() {
                            let i = i0 + r;
                            let from = j0.max(i + 1);
                            let to = (j0 + TILE).min(n).max(from);
                            for (j, x) in (from..to).zip(&mut row[from..to]) {
                                let v = f(i, j);
                                *x = if v.is_finite() { v } else { f64::MAX };
                            }
                        }
                    }
                });
            for_each_upper_pair_tiled(n, |i, j| {
                data[j * n + i] = data[i * n + j];
                true
            });
        }
        DenseMatrix { n, data }
    }

    /// Number of rows (= columns).
    #[inline]
    pub fn n(&self) -> usize {
        self.n
    }

    /// Entry `(i, j)` (ms); `0.0` on the diagonal.
    ///
    /// # Panics
    /// If `i >= n` or `j >= n`.
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        assert!(
            i < self.n && j < self.n,
            "index ({i}, {j}) out of range for n = {}",
            self.n
        );
        self.data[i * self.n + j]
    }

    /// Row `i` as a slice (entry `j` is `(i, j)`).
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.n..(i + 1) * self.n]
    }

    /// The symmetric matrix with entries `(w(i,j) + w(j,i)) / 2`.
    ///
    /// For an already symmetric matrix this is an exact copy (`(a + a) / 2 == a`
    /// in floating point). This is the undirected weight `d^(u)` of the proof
    /// of \[Marfoq20\] Prop. 3.1.
    pub fn symmetrized(&self) -> Self {
        let mut out = self.clone();
        out.symmetrize();
        out
    }

    /// [`Self::symmetrized`] in place (the same values, no second `n x n`
    /// matrix: 800 MB at 10,000 silos). The pairs are visited in square
    /// tiles of `TILE` x `TILE` entries, so the transposed reads stay
    /// in cache (issue 28: a column walk misses it on every entry).
    pub fn symmetrize(&mut self) {
        let n = self.n;
        let data = &mut self.data;
        for_each_upper_pair_tiled(n, |i, j| {
            let a = data[i * n + j];
            let b = data[j * n + i];
            let m = if a == b { a } else { 0.5 * a + 0.5 * b };
            data[i * n + j] = m;
            data[j * n + i] = m;
            true
        });
    }

    /// This matrix when it is already symmetric (borrowed, no copy), else
    /// [`Self::symmetrized`]: the same values either way.
    pub fn symmetric(&self) -> Cow<'_, Self> {
        if self.is_symmetric() {
            Cow::Borrowed(self)
        } else {
            Cow::Owned(self.symmetrized())
        }
    }

    /// Largest absolute off-diagonal entry (`0.0` if `n < 2`).
    pub fn max_abs(&self) -> f64 {
        self.data.iter().fold(0.0_f64, |m, &x| m.max(x.abs()))
    }

    /// Whether `(i, j) == (j, i)` exactly for all pairs.
    pub fn is_symmetric(&self) -> bool {
        let (n, data) = (self.n, &self.data);
        for_each_upper_pair_tiled(n, |i, j| data[i * n + j] == data[j * n + i])
    }
}

/// Side of the square tiles in which [`DenseMatrix::symmetrize`] and
/// [`DenseMatrix::is_symmetric`] visit the pairs (64 x 64 doubles: two
/// tiles of 32 KB each).
const TILE: usize = 64;

/// Calls `f(i, j)` for every pair `i < j < n`, tile by tile (row tiles in
/// order, then column tiles from the diagonal's, then rows and columns in
/// order within a tile), until `f` returns `false`; returns whether it
/// never did. Every pair is visited exactly once.
fn for_each_upper_pair_tiled(n: usize, mut f: impl FnMut(usize, usize) -> bool) -> bool {
    for i0 in (0..n).step_by(TILE) {
        for j0 in (i0..n).step_by(TILE) {
            for i in i0..(i0 + TILE).min(n) {
                for j in j0.max(i + 1)..(j0 + TILE).min(n) {
                    if !f(i, j) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_checks_length_and_finiteness() {
        assert!(matches!(
            DenseMatrix::new(2, vec![0.0; 3]),
            Err(MatrixError::WrongLength {
                expected: 4,
                got: 3,
                ..
            })
        ));
        assert!(matches!(
            DenseMatrix::new(2, vec![0.0, f64::NAN, 1.0, 0.0]),
            Err(MatrixError::NonFinite { i: 0, j: 1, .. })
        ));
        // Diagonal is ignored (even if infinite) and reads back as 0.
        let m = DenseMatrix::new(2, vec![f64::INFINITY, 1.0, 2.0, f64::NAN]).unwrap();
        assert_eq!(m.get(0, 0), 0.0);
        assert_eq!(m.get(1, 1), 0.0);
        assert_eq!(m.get(0, 1), 1.0);
        assert_eq!(m.get(1, 0), 2.0);
        assert!(DenseMatrix::new(0, vec![]).is_ok());
    }

    #[test]
    fn from_fn_and_symmetrized() {
        let m = DenseMatrix::from_fn(3, |i, j| (10 * i + j) as f64).unwrap();
        assert_eq!(m.get(1, 2), 12.0);
        assert_eq!(m.row(2), &[20.0, 21.0, 0.0]);
        assert!(!m.is_symmetric());
        let s = m.symmetrized();
        assert!(s.is_symmetric());
        assert_eq!(s.get(1, 2), 16.5);
        assert_eq!(s.symmetrized(), s);
        assert_eq!(m.max_abs(), 21.0);
        assert!(DenseMatrix::from_fn(2, |_, _| f64::INFINITY).is_err());
    }

    /// The tiled walks equal the plain ones across tile edges: every pair
    /// once, the same symmetrised values bit for bit, and an asymmetry
    /// anywhere (the first pair, the last, a tile corner) is found.
    #[test]
    fn tiled_symmetrize_equals_the_plain_walk() {
        for n in [1, 2, 63, 64, 65, 129, 200] {
            let mut seen = vec![0u8; n * n];
            for_each_upper_pair_tiled(n, |i, j| {
                assert!(i < j && j < n);
                seen[i * n + j] += 1;
                true
            });
            for i in 0..n {
                for j in 0..n {
                    assert_eq!(seen[i * n + j], u8::from(i < j), "n={n} ({i},{j})");
                }
            }
            let m = DenseMatrix::from_fn(n, |i, j| ((i * 7919 + j * 104729) % 1013) as f64 / 7.0)
                .unwrap();
            let mut plain = m.data.clone();
            for i in 0..n {
                for j in i + 1..n {
                    let (a, b) = (plain[i * n + j], plain[j * n + i]);
                    let v = if a == b { a } else { 0.5 * a + 0.5 * b };
                    plain[i * n + j] = v;
                    plain[j * n + i] = v;
                }
            }
            let s = m.symmetrized();
            assert!(s
                .data
                .iter()
                .zip(&plain)
                .all(|(x, y)| x.to_bits() == y.to_bits()));
            assert!(s.is_symmetric());
            for (i, j) in [(0, 1), (n.saturating_sub(2), n - 1), (63, 64), (64, 127)] {
                if j < n && i < j {
                    let mut t = s.clone();
                    t.data[j * n + i] += 1.0;
                    assert!(!t.is_symmetric(), "n={n} ({i},{j})");
                }
            }
        }
    }

    /// The symmetric tiled build equals the plain parallel one for a
    /// symmetric function (every entry, saturation included), calling the
    /// function once per pair.
    #[test]
    fn symmetric_build_equals_the_plain_build() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        for n in [0, 1, 2, 64, 65, 150] {
            let f = |i: usize, j: usize| {
                let (a, b) = (i.min(j), i.max(j));
                if (a + b) % 17 == 5 {
                    f64::INFINITY
                } else {
                    ((a * 31 + b * 7) % 101) as f64 / 3.0
                }
            };
            let calls = AtomicUsize::new(0);
            let sym = DenseMatrix::from_fn_symmetric_saturating_par(n, |i, j| {
                calls.fetch_add(1, Ordering::Relaxed);
                assert!(i < j);
                f(i, j)
            });
            assert_eq!(calls.into_inner(), n * n.saturating_sub(1) / 2);
            let plain = DenseMatrix::from_fn_saturating_par(n, f);
            assert!(sym
                .data
                .iter()
                .zip(&plain.data)
                .all(|(x, y)| x.to_bits() == y.to_bits()));
            assert_eq!(sym.data.len(), plain.data.len());
        }
    }
}
