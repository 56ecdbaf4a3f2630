//! How fast an overlay mixes: measures of a consensus (gossip) matrix and
//! the fastest-mixing symmetric weights of an undirected overlay.
//!
//! The throughput paper optimises the time per round; the number of rounds
//! to a target depends on how fast the consensus step averages the models.
//! This module gives the mixing side:
//!
//! * [`matrix`]: [`ConsensusMatrix`], the one mixing-matrix type (every
//!   consensus matrix is one; its invariants are documented there);
//! * [`consensus`]: the rules that choose a round's consensus matrix
//!   (local-degree, Metropolis–Hastings, MATCHA, DecAvg, fastest, ...);
//! * [`measures`]: the second-largest eigenvalue modulus (SLEM) and spectral
//!   gap `1 - SLEM` of a consensus matrix, and the effective number of
//!   neighbours (\[Vogels22\]);
//! * [`fastest`]: fastest-mixing symmetric weights on an undirected graph
//!   (\[Boyd04\]), by a projected subgradient method started from
//!   Metropolis–Hastings weights;
//! * [`spectrum`]: eigenvalues with a bounded amount of work (every dense
//!   eigenvalue computation goes through it), the non-symmetric ones by
//!   `francis` (the double-shift QR iteration without Schur vectors);
//! * [`krylov`]: cheap extreme eigenvalues of sparse consensus matrices
//!   (Lanczos SLEM, Krylov Ritz bounds) for the augmentation and the
//!   fastest-mixing weights above 64 silos.
//!
//! Matrices are row-major `n x n` slices of `f64`, row `i` the weights silo
//! `i` gives to the models it averages (`W[i][j] > 0` only when `j -> i` is
//! an arc or `j = i`).

mod avx2;
pub mod consensus;
pub mod fastest;
mod francis;
pub mod krylov;
pub mod matrix;
pub mod measures;
pub mod spectrum;
mod tridiagonal;

pub use fastest::{
    fastest_mixing, fastest_work_note, undirected_edges, FastestMixing, FastestOptions,
    MixingError, MAX_FASTEST_WORK,
};
pub use matrix::{ConsensusError, ConsensusMatrix};
pub use measures::{
    effective_neighbours, effective_neighbours_periodic, exact_consensus_round, slem,
    slem_per_round, spectral_gap,
};
pub use spectrum::{is_permutation, SpectrumError};
