//! MATCHA (\[Wang19\]), the randomised overlay the throughput paper
//! compares against (\[Marfoq20\] App. G.3, H.6, Tables 3, 6, 7, 10).
//!
//! Pipeline, one file per stage:
//! 1. [`coloring`]: split a base graph into matchings (Misra–Gries proper
//!    edge colouring, at most max-degree + 1 colours).
//! 2. [`optimize`]: activation probabilities maximising `lambda_2` under the
//!    communication budget `Cb`, then the mixing parameter `alpha`; both with
//!    certified optimality gaps.
//! 3. [`schedule`]: [`MatchaSchedule`], an [`OverlaySchedule`] whose round `k`
//!    is a pure function of `(seed, k)`, with mixing matrix `W = I - alpha L`.
//!
//! Timing a schedule (the paper's round estimate and the exact max-plus growth
//! rate) is not a builder's job: see [`crate::timing::schedule`].
//!
//! Base graphs ([`MatchaBase`]): **MATCHA** starts from the connectivity graph
//! `Gc` (every pair of silos), **MATCHA+** from the underlay `Gu`, as in the
//! paper's text and \[Marfoq20\] Table 3 (the authors' code swaps the two labels). MATCHA
//! can start from any other overlay (\[Marfoq20\] Table 10: over delta-MBST, over RING).
//!
//! [`OverlaySchedule`]: crate::graph::OverlaySchedule

pub mod coloring;
pub mod optimize;
pub mod schedule;
pub mod variant;

use std::sync::Arc;

use serde::Serialize;
use thiserror::Error;

use crate::graph::Overlay;
use crate::net::underlay::Underlay;

pub use coloring::{
    check_decomposition, complete_graph_matchings, matching_decomposition,
    misra_gries_decomposition, CLOSED_FORM_MIN_SILOS,
};
pub use optimize::{
    activation_probabilities, complete_graph_activation, complete_graph_mixing, mixing_parameter,
    ActivationSolution, MixingSolution, SolverOptions,
};
pub use schedule::MatchaSchedule;
pub use variant::{MatchaOn, MatchaVariant, MatchaVariantError};

/// Why MATCHA could not be built.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MatchaError {
    /// An edge is a self-loop or names a silo outside `0..n`.
    #[error("edge ({a}, {b}) is a self-loop or names a silo outside 0..{n}")]
    BadEdge {
        /// One end.
        a: usize,
        /// The other end.
        b: usize,
        /// Number of silos.
        n: usize,
    },
    /// The base graph has no edge.
    #[error("the MATCHA base graph has no edge")]
    NoEdges,
    /// The base graph is disconnected, so `lambda_2 = 0` whatever the probabilities.
    #[error(
        "the MATCHA base graph is disconnected (lambda_2 = 0); use a connected underlay or overlay"
    )]
    Disconnected,
    /// The communication budget is not in `[MIN_BUDGET, 1]`.
    #[error(
        "communication budget {0} must be in [0.001, 1] (the solver's time grows as 1/budget)"
    )]
    BadBudget(f64),
    /// The base overlay and the network have different silo counts.
    #[error("the base graph has {base} silos but the network has {network}")]
    SizeMismatch {
        /// Silos of the base graph.
        base: usize,
        /// Silos of the network.
        network: usize,
    },
    /// The base overlay could not be built.
    #[error("MATCHA base overlay {0}")]
    Base(String),
    /// An eigenvalue computation of the optimisation failed (bounded,
    /// [`crate::mixing::spectrum`]).
    #[error("MATCHA optimisation: {0}")]
    Spectrum(#[from] crate::mixing::SpectrumError),
    /// MATCHA's base graphs are over routers: it needs one silo per router.
    #[error("MATCHA schedules need one silo per router (drop --silos / --silos-per-router, or silos / silos_per_router in experiment files)")]
    NotOnePerRouter,
}

/// The graph MATCHA decomposes into matchings.
#[derive(Debug, Clone, PartialEq)]
pub enum MatchaBase {
    /// The connectivity graph `Gc`: every pair of silos (paper's MATCHA).
    Connectivity,
    /// The underlay `Gu`: the physical links between silos (paper's MATCHA+).
    Underlay,
    /// Any overlay, made undirected (\[Marfoq20\] Table 10: MATCHA over delta-MBST / RING).
    Overlay(Overlay),
}

impl MatchaBase {
    /// The base graph's undirected edges over the underlay's silos.
    pub fn edges(&self, underlay: &Underlay) -> (usize, Vec<(usize, usize)>) {
        let n = underlay.node_count();
        let e = match self {
            MatchaBase::Connectivity => (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .collect(),
            MatchaBase::Underlay => underlay.links.iter().map(|l| (l.a, l.b)).collect(),
            MatchaBase::Overlay(o) => {
                return (
                    o.silo_count(),
                    o.arcs()
                        .iter()
                        .map(|&(a, b)| (a.min(b), a.max(b)))
                        .collect(),
                )
            }
        };
        (n, e)
    }
}

/// Smallest communication budget accepted: the activation solver's time
/// grows as `1/budget` (7.4 s at 1e-6, hours at 1e-9), and below 1e-3 a
/// silo talks in fewer than one round in a thousand.
pub const MIN_BUDGET: f64 = 1e-3;

/// Most rounds sampled by MATCHA's cycle-time estimates (the schedule of
/// every sampled round is kept, 8 GB were preallocated at 1e9).
pub const MAX_MATCHA_ROUNDS: u64 = 1_000_000;

/// Whether `budget` is a communication budget MATCHA accepts,
/// `MIN_BUDGET <= budget <= 1`.
pub fn budget_ok(budget: f64) -> bool {
    (MIN_BUDGET..=1.0).contains(&budget)
}

/// Checks a communication budget: what [`budget_ok`] accepts, else the
/// message every front end shows (`--budget`, Python's `budget=`).
///
/// # Errors
/// The message, naming the accepted range.
pub fn check_budget(budget: f64) -> Result<f64, String> {
    if budget_ok(budget) {
        Ok(budget)
    } else {
        Err(format!(
            "expected a communication budget in [{MIN_BUDGET}, 1], found `{budget}` (below \
             {MIN_BUDGET} the MATCHA solver's time grows as 1/budget)"
        ))
    }
}

/// Checks a number of rounds sampled by MATCHA's cycle-time estimates
/// (`--matcha-rounds`, Python's `matcha_rounds=`): 1 to
/// [`MAX_MATCHA_ROUNDS`].
///
/// # Errors
/// The message every front end shows, naming the accepted range.
pub fn check_matcha_rounds(rounds: u64) -> Result<u64, String> {
    if (1..=MAX_MATCHA_ROUNDS).contains(&rounds) {
        Ok(rounds)
    } else {
        Err(matcha_rounds_error(&rounds))
    }
}

/// The message of [`check_matcha_rounds`] for `found` (any number, e.g. a
/// negative one a front end read).
pub fn matcha_rounds_error(found: &dyn std::fmt::Display) -> String {
    format!(
        "expected 1 to {MAX_MATCHA_ROUNDS} rounds sampled for MATCHA's cycle time, found \
         `{found}` (every sampled round is kept in memory)"
    )
}

/// Options of MATCHA.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MatchaOptions {
    /// Communication budget `Cb` in `(0, 1]` (paper: 0.5).
    pub budget: f64,
    /// Seed of the per-round activations.
    pub seed: u64,
    /// Rounds sampled by the cycle-time estimates (paper: 1000).
    pub rounds: u64,
    /// Stopping rules of the activation-probability solver.
    pub solver: SolverOptions,
}

impl Default for MatchaOptions {
    fn default() -> Self {
        MatchaOptions {
            budget: 0.5,
            seed: 0,
            rounds: 1000,
            solver: SolverOptions::default(),
        }
    }
}

/// A solved MATCHA instance: matchings, probabilities, mixing parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatchaDesign {
    /// Name shown in reports ("matcha", "matcha+", ...).
    pub name: String,
    /// Number of silos.
    pub silos: usize,
    /// Communication budget `Cb`.
    pub budget: f64,
    /// The matchings, edges `(a, b)` with `a < b`.
    pub matchings: Vec<Vec<(usize, usize)>>,
    /// Activation probabilities and their certificate.
    pub activation: ActivationSolution,
    /// Mixing parameter and its certificate.
    pub mixing: MixingSolution,
}

impl MatchaDesign {
    /// Decomposes `edges` and solves both optimisation problems. The
    /// complete graph of at least [`CLOSED_FORM_MIN_SILOS`] silos (MATCHA's
    /// `Gc` at scale) gets the closed-form colouring and the closed-form
    /// optima of both problems ([`complete_graph_activation`],
    /// [`complete_graph_mixing`]: exact, zero gap).
    ///
    /// # Errors
    /// See [`MatchaError`].
    pub fn new(
        name: &str,
        n: usize,
        edges: &[(usize, usize)],
        budget: f64,
        solver: &SolverOptions,
    ) -> Result<Self, MatchaError> {
        if !budget_ok(budget) {
            return Err(MatchaError::BadBudget(budget));
        }
        let matchings = matching_decomposition(n, edges)?;
        let closed_form = n >= CLOSED_FORM_MIN_SILOS && matchings == complete_graph_matchings(n);
        let (activation, mixing) = if closed_form {
            // The round-robin factorisation of K_n: both problems have
            // closed-form optima (no n x n eigen-decomposition).
            (
                complete_graph_activation(n, matchings.len(), budget),
                complete_graph_mixing(n, budget),
            )
        } else {
            let activation = activation_probabilities(n, &matchings, budget, solver)?;
            let mixing = mixing_parameter(n, &matchings, &activation.probabilities)?;
            (activation, mixing)
        };
        Ok(MatchaDesign {
            name: name.to_string(),
            silos: n,
            budget,
            matchings,
            activation,
            mixing,
        })
    }

    /// MATCHA on `base` of `underlay`.
    ///
    /// # Errors
    /// See [`MatchaError`].
    pub fn on(
        name: &str,
        base: &MatchaBase,
        underlay: &Underlay,
        options: &MatchaOptions,
    ) -> Result<Self, MatchaError> {
        let (n, edges) = base.edges(underlay);
        if n != underlay.node_count() {
            return Err(MatchaError::SizeMismatch {
                base: n,
                network: underlay.node_count(),
            });
        }
        Self::new(name, n, &edges, options.budget, &options.solver)
    }

    /// The schedule of this design with activation seed `seed`.
    pub fn schedule(self, seed: u64) -> MatchaSchedule {
        MatchaSchedule::new(Arc::new(self), seed)
    }
}

#[cfg(test)]
mod tests;
