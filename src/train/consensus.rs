//! Consensus (mixing) matrices `A` of an overlay for DPASGD (\[Marfoq20\] eq. 2):
//! after its local steps silo `i` replaces its model by `sum_j A_ij theta_j`.
//!
//! Row `i` holds the weights silo `i` gives to the models it *receives*: a
//! non-zero `A_ij` (`j != i`) needs the arc `j -> i` in the overlay. Every
//! matrix here is row-stochastic (rows sum to 1, entries >= 0 except for a
//! too-large MATCHA `alpha`); for undirected overlays the degree-based rules
//! are symmetric and therefore doubly stochastic.
//!
//! Pure Rust (no libtorch), so the rules are tested without the `train`
//! feature.

use std::path::Path;

use serde::Serialize;
use thiserror::Error;

use crate::evaluate::EvaluatedOverlay;
use crate::graph::{Overlay, Protocol};
use crate::replay::RoundParticipation;

/// A dense row-major `n x n` matrix of mixing weights.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConsensusMatrix {
    n: usize,
    data: Vec<f64>,
}

/// Why a consensus matrix could not be built.
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

    /// A matrix with entries `f(i, j)`.
    pub fn from_fn(n: usize, f: impl Fn(usize, usize) -> f64) -> Self {
        let data = (0..n * n).map(|k| f(k / n, k % n)).collect();
        ConsensusMatrix { n, data }
    }

    /// This round's matrix re-normalised by who took part in it under
    /// churn ([`crate::replay::churn`]):
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
    pub fn with_participation(&self, p: &RoundParticipation) -> ConsensusMatrix {
        let n = self.n;
        let mut data = vec![0.0; n * n];
        for i in 0..n {
            data[i * n + i] = 1.0;
        }
        for i in 0..n {
            let Some(used) = p.used.get(i).and_then(Option::as_ref) else {
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
            let Some(from) = p.joined.get(i).and_then(Option::as_ref) else {
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
        for (i, r) in rows.iter().enumerate() {
            if r.len() != n {
                return Err(ConsensusError::Shape {
                    n,
                    rows: n,
                    cols: r.len(),
                });
            }
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
        Ok(ConsensusMatrix {
            n,
            data: rows.into_iter().flatten().collect(),
        })
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

/// How the consensus matrix of a round's overlay is chosen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum ConsensusRule {
    /// STAR (server-client) -> exact average; directed ring -> `half`;
    /// anything else -> `local-degree`.
    Auto,
    /// Local-degree rule (paper eqs. 22-23): `A_ij = 1/(1 + max(indeg(i),
    /// indeg(j)))` for every arc `j -> i`, `A_ii = 1 - sum_j A_ij`.
    LocalDegree,
    /// Metropolis–Hastings on the undirected graph underlying the overlay:
    /// `A_ij = 1/(1 + max(deg(i), deg(j)))` for every edge `{i,j}` (degree of
    /// the undirected neighbourhood, self excluded), `A_ii` the rest. Equal to
    /// `local-degree` on undirected overlays; on a directed overlay it only
    /// uses neighbours whose model is actually received (arcs `j -> i`).
    MetropolisHastings,
    /// Directed ring: `A_ii = A_{i,pred(i)} = 1/2` (optimal for the ring).
    Half,
    /// Exact averaging `11^T/n` whatever the overlay (server-client).
    Average,
    /// MATCHA's `I - alpha L`, `L` the Laplacian of the round's (undirected) overlay.
    Matcha {
        /// Step `alpha` (MATCHA picks it by an SDP on the schedule).
        alpha: f64,
    },
    /// DecAvg (\[BadieModiri24\] eq. 2): `A_ij = s_j / (s_i + sum_{l ->
    /// i} s_l)` over the silo and the models it receives, `s` the data
    /// sizes (`None`: equal, `1 / (indeg(i) + 1)`). Only the round's arcs
    /// count, so failed links and nodes drop out and the weights renormalise.
    DecAvg {
        /// Training examples per silo.
        sizes: Option<Vec<f64>>,
    },
    /// Fastest-mixing symmetric weights of the (undirected) overlay
    /// (\[Boyd04\], [`crate::mixing::fastest`]): the least second-largest
    /// eigenvalue modulus over the overlay's edges. Directed overlays
    /// (rings) are refused.
    Fastest,
    /// FedAvg's data-weighted average (\[Marfoq20\] eq. 1 with `p_i` the
    /// size of silo `i`'s local dataset, their App. H.5 on STAR):
    /// `A_ij = s_j / sum_l s_l` for every `i`, whatever the overlay
    /// (server-client), `s` the data sizes (`None`: equal, i.e. `Average`).
    /// `auto` picks it on STAR when the silo file gives data sizes.
    WeightedAverage {
        /// Training examples per silo.
        sizes: Option<Vec<f64>>,
    },
    /// The user's matrix (checked against each round's arcs).
    Custom(ConsensusMatrix),
    /// One matrix per round of a periodic schedule's period, brought by the
    /// overlay (`exp-1peer`, `base:k=K`; [`EvaluatedOverlay::round_consensus_weights`]):
    /// round `k` uses entry `k mod period`. A weight on an arc missing from
    /// the round's overlay (a failed node or link) stays with the receiver.
    PerRound(Vec<ConsensusMatrix>),
}

impl ConsensusRule {
    /// Parses `auto`, `local-degree`, `mh`/`metropolis-hastings`, `half`,
    /// `average`, `fedavg`/`weighted-average`, `matcha:ALPHA`, `decavg`,
    /// `fastest`, or `file:PATH`.
    ///
    /// Which rules use the silos' data sizes: `decavg` and `fedavg` (the
    /// trainer fills in the sizes of the data partition, which are the silo
    /// file's `data` column when it has one), and `auto` on STAR when the
    /// silo file has a `data` column (then `fedavg`; otherwise the equal
    /// average, \[Marfoq20\]'s `p_i = 1`). The degree rules, `half`,
    /// `average`, `matcha:ALPHA`, `fastest` and file matrices never do.
    pub fn parse(text: &str) -> Result<Self, ConsensusError> {
        let t = text.trim();
        Ok(match t.to_ascii_lowercase().as_str() {
            "auto" => ConsensusRule::Auto,
            "local-degree" | "local" => ConsensusRule::LocalDegree,
            "mh" | "metropolis-hastings" | "metropolis" => ConsensusRule::MetropolisHastings,
            "half" | "ring" => ConsensusRule::Half,
            "average" | "star" => ConsensusRule::Average,
            "decavg" | "dec-avg" => ConsensusRule::DecAvg { sizes: None },
            "fastest" | "fmmc" => ConsensusRule::Fastest,
            "fedavg" | "weighted-average" => ConsensusRule::WeightedAverage { sizes: None },
            s if s.starts_with("matcha:") => {
                let a = &t["matcha:".len()..];
                let alpha: f64 = a.parse().map_err(|_| ConsensusError::File {
                    path: text.into(),
                    message: format!("`{a}` is not a number (expected matcha:ALPHA)"),
                })?;
                // W = I - alpha L: NaN or infinite weights would spread
                // through every model; alpha > 1 overshoots past swapping.
                if !(alpha > 0.0 && alpha <= 1.0) {
                    return Err(ConsensusError::File {
                        path: text.into(),
                        message: format!(
                            "alpha `{a}` out of range: expected matcha:ALPHA with ALPHA a number \
                             in (0, 1] (W = I - ALPHA L)"
                        ),
                    });
                }
                ConsensusRule::Matcha { alpha }
            }
            s if s.starts_with("file:") => {
                ConsensusRule::Custom(ConsensusMatrix::from_file(Path::new(&t["file:".len()..]))?)
            }
            _ => {
                return Err(ConsensusError::File {
                    path: text.into(),
                    message: "unknown rule; expected auto, local-degree, mh, half, average, \
                              fedavg, matcha:ALPHA, decavg, fastest or file:PATH"
                        .into(),
                })
            }
        })
    }

    /// The rule a run of `overlay` uses: this one, unless it is
    /// [`ConsensusRule::Auto`] and the overlay brings its own consensus, that
    /// is a schedule's `I - alpha L` (MATCHA, \[Wang19\]), a family's
    /// matrices per round ([`EvaluatedOverlay::round_consensus_weights`],
    /// which become [`ConsensusRule::PerRound`]) or the weights of an
    /// overlay file ([`EvaluatedOverlay::consensus_weights`], row-stochastic),
    /// which becomes [`ConsensusRule::Custom`].
    pub fn for_overlay(&self, overlay: &EvaluatedOverlay) -> Result<ConsensusRule, ConsensusError> {
        if *self != ConsensusRule::Auto {
            return Ok(self.clone());
        }
        if let Some(m) = overlay.mixing() {
            return Ok(ConsensusRule::Matcha { alpha: m.alpha });
        }
        if let Some(rounds) = overlay.round_consensus_weights() {
            return Ok(ConsensusRule::PerRound(
                rounds
                    .iter()
                    .map(|w| ConsensusMatrix::from_rows(w.to_vec()))
                    .collect::<Result<_, _>>()?,
            ));
        }
        if let Some(w) = overlay.consensus_weights() {
            return Ok(ConsensusRule::Custom(ConsensusMatrix::from_rows(
                w.to_vec(),
            )?));
        }
        Ok(ConsensusRule::Auto)
    }

    /// True when the matrix depends on the round number, not only on the
    /// round's overlay ([`ConsensusRule::PerRound`]): two rounds with the same
    /// arcs may mix with different weights.
    pub fn depends_on_round(&self) -> bool {
        matches!(self, ConsensusRule::PerRound(_))
    }

    /// The rule `auto` means on `overlay` without weights of its own:
    /// exact averaging on STAR (server-client), `half` on a directed ring
    /// (in-degree 1 everywhere), `local-degree` otherwise.
    pub fn resolve_auto(overlay: &Overlay) -> ConsensusRule {
        let n = overlay.silo_count();
        match overlay.protocol {
            Protocol::ServerClient { .. } => ConsensusRule::Average,
            Protocol::Gossip if n > 1 && (0..n).all(|i| overlay.in_degree(i) == 1) => {
                ConsensusRule::Half
            }
            Protocol::Gossip => ConsensusRule::LocalDegree,
        }
    }

    /// The consensus matrix of `overlay` under this rule (for
    /// [`ConsensusRule::PerRound`], round 0's: use [`Self::matrix_at`]).
    pub fn matrix(&self, overlay: &Overlay) -> Result<ConsensusMatrix, ConsensusError> {
        self.matrix_at(overlay, 0)
    }

    /// The consensus matrix of round `round`, whose overlay is `overlay`,
    /// under this rule (only [`ConsensusRule::PerRound`] depends on the round).
    pub fn matrix_at(
        &self,
        overlay: &Overlay,
        round: u64,
    ) -> Result<ConsensusMatrix, ConsensusError> {
        let n = overlay.silo_count();
        match self {
            ConsensusRule::PerRound(ms) if !ms.is_empty() => {
                let m = &ms[(round % ms.len() as u64) as usize];
                per_round(m, overlay)
            }
            ConsensusRule::PerRound(_) => Ok(local_degree(overlay)),
            ConsensusRule::Auto => Self::resolve_auto(overlay).matrix(overlay),
            ConsensusRule::LocalDegree => Ok(local_degree(overlay)),
            ConsensusRule::MetropolisHastings => Ok(metropolis_hastings(overlay)),
            ConsensusRule::Half => half(overlay),
            ConsensusRule::Average => Ok(ConsensusMatrix::average(n)),
            ConsensusRule::Matcha { alpha } => Ok(matcha(overlay, *alpha)),
            ConsensusRule::DecAvg { sizes } => {
                let rows =
                    super::stationary::decavg_rows(overlay, sizes.as_deref()).map_err(|e| {
                        ConsensusError::File {
                            path: "decavg".into(),
                            message: e.to_string(),
                        }
                    })?;
                let mut data = vec![0.0; n * n];
                for (i, row) in rows.iter().enumerate() {
                    for &(j, w) in row {
                        data[i * n + j] = w;
                    }
                }
                Ok(ConsensusMatrix { n, data })
            }
            ConsensusRule::Fastest => {
                let edges = crate::mixing::undirected_edges(n, overlay.arcs())?;
                let f = crate::mixing::fastest_mixing(n, &edges, &Default::default())?;
                Ok(ConsensusMatrix { n, data: f.matrix })
            }
            ConsensusRule::WeightedAverage { sizes } => {
                let s =
                    super::stationary::sizes_or_ones(overlay, sizes.as_deref()).map_err(|e| {
                        ConsensusError::File {
                            path: "fedavg".into(),
                            message: e.to_string(),
                        }
                    })?;
                let total: f64 = s.iter().sum();
                Ok(ConsensusMatrix::from_fn(n, |_, j| s[j] / total))
            }
            ConsensusRule::Custom(m) => {
                m.check_support(overlay)?;
                Ok(m.clone())
            }
        }
    }
}

/// `m` restricted to the arcs of `overlay`: a weight on a missing arc (a
/// failure) goes to the receiver's own model, so rows still sum to 1.
fn per_round(m: &ConsensusMatrix, overlay: &Overlay) -> Result<ConsensusMatrix, ConsensusError> {
    let n = m.n;
    if overlay.silo_count() != n {
        return Err(ConsensusError::Shape {
            n: overlay.silo_count(),
            rows: n,
            cols: n,
        });
    }
    let mut data = m.data.clone();
    for i in 0..n {
        for j in 0..n {
            if i != j && data[i * n + j] != 0.0 && overlay.arcs().binary_search(&(j, i)).is_err() {
                data[i * n + i] += data[i * n + j];
                data[i * n + j] = 0.0;
            }
        }
    }
    Ok(ConsensusMatrix { n, data })
}

fn fill_diagonal(n: usize, mut data: Vec<f64>) -> ConsensusMatrix {
    for i in 0..n {
        let off: f64 = (0..n).filter(|&j| j != i).map(|j| data[i * n + j]).sum();
        data[i * n + i] = 1.0 - off;
    }
    ConsensusMatrix { n, data }
}

/// Local-degree rule (paper eqs. 22-23).
pub fn local_degree(overlay: &Overlay) -> ConsensusMatrix {
    let n = overlay.silo_count();
    let mut data = vec![0.0; n * n];
    for &(j, i) in overlay.arcs() {
        let d = overlay.in_degree(i).max(overlay.in_degree(j));
        data[i * n + j] = 1.0 / (1.0 + d as f64);
    }
    fill_diagonal(n, data)
}

/// Metropolis–Hastings weights on the undirected neighbourhoods.
pub fn metropolis_hastings(overlay: &Overlay) -> ConsensusMatrix {
    let n = overlay.silo_count();
    let mut nb = vec![std::collections::BTreeSet::new(); n];
    for &(a, b) in overlay.arcs() {
        nb[a].insert(b);
        nb[b].insert(a);
    }
    let mut data = vec![0.0; n * n];
    for &(j, i) in overlay.arcs() {
        data[i * n + j] = 1.0 / (1.0 + nb[i].len().max(nb[j].len()) as f64);
    }
    fill_diagonal(n, data)
}

/// `A_ii = A_{i,pred(i)} = 1/2` for a directed ring.
pub fn half(overlay: &Overlay) -> Result<ConsensusMatrix, ConsensusError> {
    let n = overlay.silo_count();
    let mut data = vec![0.0; n * n];
    for i in 0..n {
        if overlay.in_degree(i) != 1 {
            return Err(ConsensusError::NotARing {
                silo: i,
                indeg: overlay.in_degree(i),
            });
        }
    }
    for &(j, i) in overlay.arcs() {
        data[i * n + j] = 0.5;
    }
    Ok(fill_diagonal(n, data))
}

/// MATCHA's `I - alpha L` on the undirected graph of the overlay's edges.
pub fn matcha(overlay: &Overlay, alpha: f64) -> ConsensusMatrix {
    let n = overlay.silo_count();
    let mut data = vec![0.0; n * n];
    for &(a, b) in overlay.arcs() {
        data[a * n + b] = alpha;
        data[b * n + a] = alpha;
    }
    fill_diagonal(n, data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlay::{complete, star::star};

    fn two_cliques() -> Overlay {
        // Two 10-cliques joined by the edge 1 -- 11 (D-Cliques notes, sec. 3).
        let mut e = Vec::new();
        for base in [0, 10] {
            for a in 0..10 {
                for b in a + 1..10 {
                    e.push((base + a, base + b));
                }
            }
        }
        e.push((1, 11));
        Overlay::from_edges("cliques", 20, &e)
    }

    #[test]
    fn identity_is_recognised_exactly() {
        assert!(ConsensusMatrix::identity(4).is_identity());
        assert!(!ConsensusMatrix::average(4).is_identity());
        assert!(ConsensusMatrix::average(1).is_identity());
        let mut rows = vec![
            vec![1.0, 0.0, 0.0],
            vec![0.0, 1.0, 0.0],
            vec![0.0, 0.0, 1.0],
        ];
        rows[2] = vec![0.0, 1.0, 0.0];
        assert!(!ConsensusMatrix::from_rows(rows).unwrap().is_identity());
    }

    #[test]
    fn local_degree_on_two_cliques_matches_hand_values() {
        let o = two_cliques();
        for a in [local_degree(&o), metropolis_hastings(&o)] {
            // Node 0 (no inter edge, degree 9): self 12/110, to node 1 (degree 10) 10/110, others 11/110.
            assert!((a.get(0, 0) - 12.0 / 110.0).abs() < 1e-12);
            assert!((a.get(0, 1) - 10.0 / 110.0).abs() < 1e-12);
            assert!((a.get(0, 2) - 11.0 / 110.0).abs() < 1e-12);
            // Node 1: every weight, self included, 1/11.
            for j in (0..10).chain([11]) {
                assert!((a.get(1, j) - 1.0 / 11.0).abs() < 1e-12, "{j}");
            }
            assert!(a.is_symmetric(1e-15));
            assert!(a.row_sum_error() < 1e-12 && a.column_sum_error() < 1e-12);
            assert!(a.check_support(&o).is_ok());
        }
    }

    #[test]
    fn undirected_overlays_give_doubly_stochastic_symmetric_matrices() {
        let tree = Overlay::from_edges("t", 6, &[(0, 1), (1, 2), (1, 3), (3, 4), (4, 5)]);
        for o in [tree, complete(7), two_cliques()] {
            for rule in [
                ConsensusRule::Auto,
                ConsensusRule::LocalDegree,
                ConsensusRule::MetropolisHastings,
                ConsensusRule::Matcha { alpha: 0.05 },
            ] {
                let a = rule.matrix(&o).unwrap();
                assert!(a.is_symmetric(1e-14), "{rule:?} {}", o.name);
                assert!(a.row_sum_error() < 1e-12 && a.column_sum_error() < 1e-12);
                assert!(a.as_slice().iter().all(|&x| x >= 0.0));
                a.check_support(&o).unwrap();
            }
        }
    }

    #[test]
    fn complete_overlay_local_degree_is_exact_average() {
        let a = local_degree(&complete(5));
        let avg = ConsensusMatrix::average(5);
        for (x, y) in a.as_slice().iter().zip(avg.as_slice()) {
            assert!((x - y).abs() < 1e-15);
        }
    }

    #[test]
    fn directed_ring_gets_halves_and_star_gets_average() {
        let r = Overlay::directed_ring("ring", 5, &[0, 3, 1, 4, 2]);
        let a = ConsensusRule::Auto.matrix(&r).unwrap();
        assert_eq!(a.get(3, 0), 0.5);
        assert_eq!(a.get(3, 3), 0.5);
        assert_eq!(a.get(0, 3), 0.0);
        assert!(a.row_sum_error() < 1e-15 && a.column_sum_error() < 1e-15);
        assert!(!a.is_symmetric(0.0));
        let s = star(5, 2);
        let a = ConsensusRule::Auto.matrix(&s).unwrap();
        assert!(a.as_slice().iter().all(|&x| (x - 0.2).abs() < 1e-15));
        assert!(matches!(
            ConsensusRule::Half.matrix(&complete(3)),
            Err(ConsensusError::NotARing { .. })
        ));
        // Fastest-mixing weights need an undirected overlay; on the
        // complete graph they are exact averaging.
        assert_eq!(
            ConsensusRule::parse("fastest").ok(),
            Some(ConsensusRule::Fastest)
        );
        let f = ConsensusRule::Fastest
            .matrix(&complete(4))
            .unwrap_or_else(|e| panic!("{e}"));
        for i in 0..4 {
            for j in 0..4 {
                assert!((f.get(i, j) - 0.25).abs() < 1e-9);
            }
        }
        assert!(matches!(
            ConsensusRule::Fastest.matrix(&r),
            Err(ConsensusError::Mixing(_))
        ));
        // On two cliques joined by one edge they mix faster than
        // Metropolis–Hastings, on the same support.
        let o = two_cliques();
        let f = ConsensusRule::Fastest.matrix(&o).unwrap();
        f.check_support(&o).unwrap();
        let mh = metropolis_hastings(&o);
        let gap = |m: &ConsensusMatrix| {
            crate::mixing::spectral_gap(20, m.as_slice()).unwrap_or_else(|e| panic!("{e}"))
        };
        assert!(gap(&f) > gap(&mh) * 1.5, "{} vs {}", gap(&f), gap(&mh));
    }

    #[test]
    fn custom_matrices_are_checked() {
        let r = Overlay::directed_ring("ring", 3, &[0, 1, 2]);
        assert!(matches!(
            ConsensusMatrix::from_rows(vec![vec![0.5, 0.4, 0.0]; 3]),
            Err(ConsensusError::RowSum { row: 0, .. })
        ));
        assert!(matches!(
            ConsensusMatrix::from_rows(vec![vec![1.0, 0.0]]),
            Err(ConsensusError::Shape { .. })
        ));
        // Row 0 receives only from silo 2 on this ring.
        let bad = ConsensusMatrix::from_rows(vec![
            vec![0.5, 0.5, 0.0],
            vec![0.5, 0.5, 0.0],
            vec![0.0, 0.5, 0.5],
        ])
        .unwrap();
        assert!(matches!(
            ConsensusRule::Custom(bad).matrix(&r),
            Err(ConsensusError::NotAnArc { row: 0, col: 1 })
        ));
        let dir = std::env::temp_dir().join(format!("fedtopo-consensus-{}", std::process::id()));
        std::fs::write(&dir, "# ring\n0.5,0,0.5\n0.5 0.5 0\n0,0.5,0.5\n").unwrap();
        let rule = ConsensusRule::parse(&format!("file:{}", dir.display())).unwrap();
        assert_eq!(rule.matrix(&r).unwrap(), half(&r).unwrap());
        std::fs::remove_file(&dir).ok();
        assert!(ConsensusRule::parse("nope").is_err());
        assert_eq!(
            ConsensusRule::parse("matcha:0.2").unwrap(),
            ConsensusRule::Matcha { alpha: 0.2 }
        );
        for bad in [
            "matcha:nan",
            "matcha:inf",
            "matcha:0",
            "matcha:-0.1",
            "matcha:1.5",
        ] {
            let e = ConsensusRule::parse(bad).unwrap_err().to_string();
            assert!(e.contains("(0, 1]"), "{bad}: {e}");
        }
    }

    #[test]
    fn fedavg_weights_every_row_by_data_size() {
        let s = star(4, 1);
        let rule = ConsensusRule::parse("fedavg").unwrap();
        assert_eq!(rule, ConsensusRule::WeightedAverage { sizes: None });
        // No sizes: the equal average.
        assert_eq!(rule.matrix(&s).unwrap(), ConsensusMatrix::average(4));
        let sized = ConsensusRule::WeightedAverage {
            sizes: Some(vec![1.0, 3.0, 4.0, 8.0]),
        };
        let a = sized.matrix(&s).unwrap();
        for i in 0..4 {
            assert_eq!(
                (a.get(i, 0), a.get(i, 1), a.get(i, 2), a.get(i, 3)),
                (0.0625, 0.1875, 0.25, 0.5)
            );
        }
        let bad = ConsensusRule::WeightedAverage {
            sizes: Some(vec![1.0, 0.0, 1.0, 1.0]),
        };
        assert!(bad.matrix(&s).unwrap_err().to_string().contains("fedavg"));
    }

    #[test]
    fn decavg_weights_data_sizes_over_active_neighbours() {
        use crate::graph::failures::{FailureSpec, Failures};
        use crate::graph::OverlaySchedule;
        let o = Overlay::from_edges("p", 3, &[(0, 1), (1, 2)]);
        let rule = ConsensusRule::parse("decavg").unwrap();
        let a = rule.matrix(&o).unwrap();
        assert!((a.get(1, 0) - 1.0 / 3.0).abs() < 1e-15 && a.get(0, 2) == 0.0);
        assert!((a.get(0, 0) - 0.5).abs() < 1e-15);
        let sized = ConsensusRule::DecAvg {
            sizes: Some(vec![1.0, 2.0, 5.0]),
        };
        let a = sized.matrix(&o).unwrap();
        // Row 1: (s0, s1, s2) / 8.
        assert_eq!(
            (a.get(1, 0), a.get(1, 1), a.get(1, 2)),
            (0.125, 0.25, 0.625)
        );
        assert!(a.row_sum_error() < 1e-15);
        a.check_support(&o).unwrap();
        // Failures: isolated silos keep their own model.
        let f = Failures::new(
            crate::overlay::complete(6),
            FailureSpec::parse_optional("node:0.5").unwrap().unwrap(),
            2,
        )
        .unwrap();
        for k in 0..20 {
            let r = f.round(k);
            let a = rule.matrix(&r).unwrap();
            a.check_support(&r).unwrap();
            for i in 0..6 {
                if r.in_degree(i) == 0 {
                    assert_eq!(a.get(i, i), 1.0);
                }
            }
        }
        let bad = ConsensusRule::DecAvg {
            sizes: Some(vec![1.0]),
        };
        assert!(bad
            .matrix(&o)
            .unwrap_err()
            .to_string()
            .contains("1 data size(s) for 3 silos"));
    }

    fn participation(n: usize) -> RoundParticipation {
        RoundParticipation {
            computed: vec![true; n],
            used: vec![None; n],
            joined: vec![None; n],
        }
    }

    /// Every silo taking part as the overlay says leaves the matrix as it
    /// is (gossip: each silo averages all its in-neighbours; STAR: the
    /// centre averages every client, clients take the centre's model).
    #[test]
    fn full_participation_leaves_the_matrix_unchanged() {
        let ring = Overlay::from_edges("ring", 5, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]);
        let a = local_degree(&ring);
        let mut p = participation(5);
        for i in 0..5 {
            p.used[i] = Some(
                ring.arcs()
                    .iter()
                    .filter(|x| x.1 == i)
                    .map(|x| x.0)
                    .collect(),
            );
        }
        let b = a.with_participation(&p);
        for (x, y) in a.as_slice().iter().zip(b.as_slice()) {
            assert!((x - y).abs() < 1e-15);
        }
        let star = ConsensusMatrix::average(4);
        let mut p = participation(4);
        p.used[0] = Some(vec![1, 2, 3]);
        for j in 1..4 {
            p.joined[j] = Some(vec![0]);
        }
        let b = star.with_participation(&p);
        for (x, y) in star.as_slice().iter().zip(b.as_slice()) {
            assert!((x - y).abs() < 1e-15);
        }
    }

    /// A silo missing a model re-normalises over the ones it has, an absent
    /// silo keeps its own, a rejoining silo takes the mean of its senders'
    /// new rows; every row stays stochastic.
    #[test]
    fn missing_models_re_normalise_and_rejoins_take_the_senders_rows() {
        let ring = Overlay::from_edges("ring", 4, &[(0, 1), (1, 2), (2, 3), (3, 0)]);
        let a = local_degree(&ring);
        let mut p = participation(4);
        // Silo 3 absent; 0 misses 3's model; 1 and 2 average as usual; 3
        // rejoins from 0 and 2.
        p.used[0] = Some(vec![1]);
        p.used[1] = Some(vec![0, 2]);
        p.used[2] = Some(vec![1]);
        p.joined[3] = Some(vec![0, 2]);
        let b = a.with_participation(&p);
        let w01 = a.get(0, 1) / (a.get(0, 0) + a.get(0, 1));
        assert!((b.get(0, 1) - w01).abs() < 1e-15 && b.get(0, 3) == 0.0);
        for j in 0..4 {
            let want = (b.get(0, j) + b.get(2, j)) / 2.0;
            assert!((b.get(3, j) - want).abs() < 1e-15);
        }
        assert!(b.row_sum_error() < 1e-12);
        p.joined[3] = None;
        let c = a.with_participation(&p);
        assert_eq!(
            (0..4).map(|j| c.get(3, j)).collect::<Vec<_>>(),
            vec![0.0, 0.0, 0.0, 1.0]
        );
    }
}
