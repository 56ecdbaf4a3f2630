//! How the consensus matrix of a round is chosen: the rules of DPASGD
//! (\[Marfoq20\] eq. 2) and of the decentralized-learning literature
//! (local-degree, Metropolis–Hastings, 1/2 for rings, MATCHA's `I - alpha
//! L`, DecAvg, fastest-mixing, FedAvg's weighted average, exact averaging,
//! a user matrix, a family's matrices per round), each giving a
//! [`ConsensusMatrix`] of a round's overlay.
//!
//! Every matrix here is row-stochastic (rows sum to 1, entries >= 0 except
//! for a too-large MATCHA `alpha`); for undirected overlays the degree-based
//! rules are symmetric and therefore doubly stochastic.
//!
//! Pure Rust (no libtorch): the trainer ([`crate::train`]), the design
//! search and the reports use the same rules. The rule an evaluated
//! overlay brings of its own under `auto` is
//! `ConsensusRule::for_overlay` (in [`crate::evaluate`]).

mod decavg;
mod rules;
#[cfg(test)]
mod tests;

use std::path::Path;

use serde::Serialize;

use crate::graph::{Overlay, Protocol};
pub use crate::mixing::matrix::{ConsensusError, ConsensusMatrix};
pub use decavg::{decavg_rows, sizes_or_ones, DataSizeError};
use rules::per_round;
pub use rules::{half, local_degree, matcha, metropolis_hastings};

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
    /// overlay (`exp-1peer`, `base:k=K`;
    /// [`crate::evaluate::EvaluatedOverlay::round_consensus_weights`]):
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
                    decavg_rows(overlay, sizes.as_deref()).map_err(|e| ConsensusError::File {
                        path: "decavg".into(),
                        message: e.to_string(),
                    })?;
                let mut data = vec![0.0; n * n];
                for (i, row) in rows.iter().enumerate() {
                    for &(j, w) in row {
                        data[i * n + j] = w;
                    }
                }
                Ok(ConsensusMatrix::from_row_major(n, data))
            }
            ConsensusRule::Fastest => {
                let edges = crate::mixing::undirected_edges(n, overlay.arcs())?;
                let f = crate::mixing::fastest_mixing(n, &edges, &Default::default())?;
                Ok(f.matrix)
            }
            ConsensusRule::WeightedAverage { sizes } => {
                let s =
                    sizes_or_ones(overlay, sizes.as_deref()).map_err(|e| ConsensusError::File {
                        path: "fedavg".into(),
                        message: e.to_string(),
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
