//! The one mixing-matrix type: [`ConsensusMatrix`], the consensus (gossip)
//! matrix `A` of a round (\[Marfoq20\] eq. 2): after its local steps silo `i`
//! replaces its model by `sum_j A_ij theta_j`.
//!
//! Layout and invariants: `n x n`, dense, row-major `f64` (weights, no
//! unit). Row `i` holds the weights silo `i` gives to its own model and to
//! the models it *receives*: a non-zero `A_ij` (`j != i`) needs the arc
//! `j -> i` in the round's overlay ([`ConsensusMatrix::check_support`]).
//! Rows sum to 1 (row-stochastic: checked by [`ConsensusMatrix::from_rows`],
//! true by construction for the rules of [`crate::mixing::consensus`]);
//! entries are `>= 0` except a diagonal that MATCHA's `I - alpha L` can make
//! negative. Columns need not sum to 1: a matrix is doubly stochastic only
//! when the rule makes it so (the degree rules on undirected overlays,
//! `half` on a ring, fastest-mixing weights, exact averaging);
//! [`ConsensusMatrix::column_sum_error`] says how far it is.
//!
//! The eigen-solvers of [`crate::mixing`] read it as a row-major slice
//! ([`ConsensusMatrix::as_slice`]); nalgebra's `DMatrix` is only a local
//! conversion inside them ([`ConsensusMatrix::to_dmatrix`]).

use std::path::Path;

use serde::Serialize;
use thiserror::Error;

use crate::graph::{Overlay, Protocol};

/// A dense row-major `n x n` matrix of mixing weights (see the module
/// documentation for its invariants).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConsensusMatrix {
    n: usize,
    data: Vec<f64>,
}

/// Why a consensus matrix could not be built (read, checked, or made by a
/// rule of [`crate::mixing::consensus`]).
#[derive(Debug, Error)]
pub enum ConsensusError {
    /// A user matrix has the wrong shape.
    #[error("consensus matrix must be {n} x {n}, got {rows} row(s) of {cols} column(s)")]
    Shape {
        /// Silos.
        n: usize,
        /// Rows read.
        rows: usize,
        /// Columns in the offending row.
        cols: usize,
    },
    /// A user matrix row does not sum to 1.
    #[error("row {row} of the consensus matrix sums to {sum}, not 1")]
    RowSum {
        /// Row index.
        row: usize,
        /// Its sum.
        sum: f64,
    },
    /// A user matrix entry is negative or not a number.
    #[error("consensus matrix entry ({row},{col}) = {value}: expected a finite number, >= 0 off the diagonal")]
    Entry {
        /// Row.
        row: usize,
        /// Column.
        col: usize,
        /// Value.
        value: f64,
    },
    /// A user matrix gives weight to a silo whose model is not received.
    #[error(
        "consensus matrix gives weight to ({row},{col}) but the overlay has no arc {col} -> {row}"
    )]
    NotAnArc {
        /// Receiving silo.
        row: usize,
        /// Sending silo.
        col: usize,
    },
    /// The `half` rule needs every silo to receive exactly one model.
    #[error("the `half` rule needs in-degree 1 at every silo (a directed ring); silo {silo} has {indeg}")]
    NotARing {
        /// Offending silo.
        silo: usize,
        /// Its in-degree.
        indeg: usize,
    },
    /// An all-reduce (ring or mesh) computes the exact (or data-weighted) average:
    /// no other consensus rule applies to it.
    #[error(
        "consensus rule `{rule}` does not apply to an all-reduce, which computes the exact \
         average (use auto, average or fedavg)"
    )]
    AllReduceRule {
        /// The rule asked for.
        rule: String,
    },
    /// Fastest-mixing weights do not apply (directed overlay).
    #[error(transparent)]
    Mixing(#[from] crate::mixing::MixingError),
    /// The matrix file could not be read or parsed.
    #[error("reading consensus matrix {path}: {message}")]
    File {
        /// Path.
        path: String,
        /// What went wrong.
        message: String,
    },
}

impl ConsensusMatrix {
    /// The identity (no communication).
    pub fn identity(n: usize) -> Self {
        Self::from_fn(n, |i, j| if i == j { 1.0 } else { 0.0 })
    }

    /// Exact averaging, `A = 11^T / n` (STAR / FedAvg with equal weights).
    pub fn average(n: usize) -> Self {
        Self::from_fn(n, |_, _| 1.0 / n as f64)
    }

    /// The matrix whose row-major entries are `data` (`n * n` of them),
    /// as a rule computed it (unchecked: the rules make rows sum to 1).
    pub(crate) fn from_row_major(n: usize, data: Vec<f64>) -> Self {
        debug_assert_eq!(data.len(), n * n);
        ConsensusMatrix { n, data }
    }

    /// `n x n` zeros: a buffer a rule fills in (row by row or entry by
    /// entry) before it is a consensus matrix.
    pub(crate) fn zeros(n: usize) -> Self {
        ConsensusMatrix {
            n,
            data: vec![0.0; n * n],
        }
    }

    /// A matrix with entries `f(i, j)`.
    pub fn from_fn(n: usize, f: impl Fn(usize, usize) -> f64) -> Self {
        let data = (0..n * n).map(|k| f(k / n, k % n)).collect();
        ConsensusMatrix { n, data }
    }

    /// This round's matrix re-normalised by who took part in it under
    /// churn ([`crate::replay::churn`]'s `RoundParticipation`: `used[i]`, the
    /// in-neighbours whose model silo `i` averaged, `None` when it did not
    /// average; `joined[i]`, the silos whose next-round models it starts
    /// from):
    ///
    /// * a silo that averaged the models of `used` keeps its weights on
    ///   itself and on `used`, divided by their sum (uniform over them if
    ///   that sum is not positive, as MATCHA's `I - alpha L` can make it);
    /// * a silo that takes the model of `joined` (a STAR client at the
    ///   centre's broadcast, a silo rejoining) gets the mean of their new
    ///   rows (its own row `e_i` when `joined` is empty);
    /// * an absent silo keeps its own model (`e_i`).
    ///
    /// With every silo taking part as the overlay says, the matrix is
    /// unchanged (to rounding).
    pub fn with_participation(
        &self,
        used: &[Option<Vec<usize>>],
        joined: &[Option<Vec<usize>>],
    ) -> ConsensusMatrix {
        let n = self.n;
        let mut data = vec![0.0; n * n];
        for i in 0..n {
            data[i * n + i] = 1.0;
        }
        for i in 0..n {
            let Some(used) = used.get(i).and_then(Option::as_ref) else {
                continue;
            };
            let mut keep: Vec<usize> = used.iter().copied().filter(|&u| u < n && u != i).collect();
            keep.push(i);
            let sum: f64 = keep.iter().map(|&u| self.data[i * n + u]).sum();
            let row = &mut data[i * n..(i + 1) * n];
            row[i] = 0.0;
            for &u in &keep {
                row[u] = if sum > 1e-12 {
                    self.data[i * n + u] / sum
                } else {
                    1.0 / keep.len() as f64
                };
            }
        }
        let averaged = data.clone();
        for i in 0..n {
            let Some(from) = joined.get(i).and_then(Option::as_ref) else {
                continue;
            };
            let from: Vec<usize> = from.iter().copied().filter(|&u| u < n).collect();
            if from.is_empty() {
                continue;
            }
            let row = &mut data[i * n..(i + 1) * n];
            row.fill(0.0);
            for &u in &from {
                for (x, y) in row.iter_mut().zip(&averaged[u * n..(u + 1) * n]) {
                    *x += y / from.len() as f64;
                }
            }
        }
        ConsensusMatrix { n, data }
    }

    /// Rows of `rows` (checked: square, entries finite, off the diagonal
    /// `>= 0`, rows sum to 1 within 1e-6). A diagonal entry may be negative:
    /// MATCHA's `I - alpha L(k)` has `1 - alpha x degree < 0` on a round
    /// where a silo has many active links (\[Wang19\]).
    pub fn from_rows(rows: Vec<Vec<f64>>) -> Result<Self, ConsensusError> {
        let n = rows.len();
        if let Some(r) = rows.iter().find(|r| r.len() != n) {
            return Err(ConsensusError::Shape {
                n,
                rows: n,
                cols: r.len(),
            });
        }
        ConsensusMatrix {
            n,
            data: rows.into_iter().flatten().collect(),
        }
        .checked()
        .cloned()
    }

    /// This matrix when it passes [`Self::from_rows`]'s checks (entries
    /// finite, off the diagonal `>= 0`, rows sum to 1 within 1e-6), for a
    /// matrix an overlay brought (a file's weights, a family's matrices).
    pub fn checked(&self) -> Result<&Self, ConsensusError> {
        for (i, r) in self.rows().enumerate() {
            for (j, &v) in r.iter().enumerate() {
                if !v.is_finite() || (v < 0.0 && i != j) {
                    return Err(ConsensusError::Entry {
                        row: i,
                        col: j,
                        value: v,
                    });
                }
            }
            let sum: f64 = r.iter().sum();
            if (sum - 1.0).abs() > 1e-6 {
                return Err(ConsensusError::RowSum { row: i, sum });
            }
        }
        Ok(self)
    }

    /// Reads a CSV/whitespace-separated `n x n` matrix (no header; `#` comments).
    pub fn from_file(path: &Path) -> Result<Self, ConsensusError> {
        let err = |message: String| ConsensusError::File {
            path: path.display().to_string(),
            message,
        };
        let text = crate::input_file::read_text(path, crate::input_file::MAX_INPUT_BYTES)
            .map_err(|e| err(e.to_string()))?;
        let mut rows = Vec::new();
        for (lineno, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let row = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .map(|t| {
                    t.parse::<f64>()
                        .map_err(|_| err(format!("line {}: `{t}` is not a number", lineno + 1)))
                })
                .collect::<Result<Vec<_>, _>>()?;
            rows.push(row);
        }
        Self::from_rows(rows)
    }

    /// Number of silos.
    pub fn n(&self) -> usize {
        self.n
    }

    /// True when `A = I` exactly (nobody communicates: averaging is a no-op).
    pub fn is_identity(&self) -> bool {
        self.data
            .iter()
            .enumerate()
            .all(|(k, &v)| v == if k / self.n == k % self.n { 1.0 } else { 0.0 })
    }

    /// Entry `A_ij`: weight silo `i` gives to silo `j`'s model.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.n + j]
    }

    /// Row-major entries.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }

    /// Row `i`: the weights silo `i` gives to every silo's model.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.n..(i + 1) * self.n]
    }

    /// The rows, in order.
    pub fn rows(&self) -> impl Iterator<Item = &[f64]> + '_ {
        self.data.chunks_exact(self.n.max(1))
    }

    /// Row `i`, mutable (for the rules that fill a matrix in).
    pub(crate) fn row_mut(&mut self, i: usize) -> &mut [f64] {
        &mut self.data[i * self.n..(i + 1) * self.n]
    }

    /// The rows, mutable, in order (for the rules that fill a matrix in).
    pub(crate) fn rows_mut(&mut self) -> std::slice::ChunksExactMut<'_, f64> {
        self.data.chunks_exact_mut(self.n.max(1))
    }

    /// The rows as vectors (the layout of JSON exports and of
    /// fingerprints written before this type existed).
    pub fn to_rows(&self) -> Vec<Vec<f64>> {
        self.rows().map(<[f64]>::to_vec).collect()
    }

    /// The matrix as nalgebra's `DMatrix`, for an eigen-solver (a local
    /// conversion: nothing stores a `DMatrix`).
    pub fn to_dmatrix(&self) -> nalgebra::DMatrix<f64> {
        nalgebra::DMatrix::from_row_slice(self.n, self.n, &self.data)
    }

    /// Largest `|row sum - 1|`.
    pub fn row_sum_error(&self) -> f64 {
        (0..self.n)
            .map(|i| ((0..self.n).map(|j| self.get(i, j)).sum::<f64>() - 1.0).abs())
            .fold(0.0, f64::max)
    }

    /// Largest `|column sum - 1|`.
    pub fn column_sum_error(&self) -> f64 {
        (0..self.n)
            .map(|j| ((0..self.n).map(|i| self.get(i, j)).sum::<f64>() - 1.0).abs())
            .fold(0.0, f64::max)
    }

    /// True when `A = A^T` within `tol`.
    pub fn is_symmetric(&self, tol: f64) -> bool {
        (0..self.n).all(|i| (0..i).all(|j| (self.get(i, j) - self.get(j, i)).abs() <= tol))
    }

    /// Checks that every off-diagonal non-zero is an arc `j -> i` of `overlay`.
    pub fn check_support(&self, overlay: &Overlay) -> Result<(), ConsensusError> {
        if overlay.silo_count() != self.n {
            return Err(ConsensusError::Shape {
                n: overlay.silo_count(),
                rows: self.n,
                cols: self.n,
            });
        }
        if matches!(overlay.protocol, Protocol::ServerClient { .. }) {
            return Ok(()); // the server relays every model
        }
        for i in 0..self.n {
            for j in 0..self.n {
                if i != j && self.get(i, j) != 0.0 && overlay.arcs().binary_search(&(j, i)).is_err()
                {
                    return Err(ConsensusError::NotAnArc { row: i, col: j });
                }
            }
        }
        Ok(())
    }
}

/// `A[(i, j)]`: the weight silo `i` gives to silo `j`'s model.
impl std::ops::Index<(usize, usize)> for ConsensusMatrix {
    type Output = f64;
    fn index(&self, (i, j): (usize, usize)) -> &f64 {
        &self.data[i * self.n + j]
    }
}

/// Writing an entry (the rules that build a matrix); the caller keeps the
/// rows stochastic.
impl std::ops::IndexMut<(usize, usize)> for ConsensusMatrix {
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut f64 {
        &mut self.data[i * self.n + j]
    }
}
