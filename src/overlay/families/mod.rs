//! Topology families of the decentralized-learning literature, put on the
//! underlay: the static and one-peer exponential graphs (\[Ying21\],
//! [`exponential`]), the Base-(k+1) graph (\[Takezawa23\],
//! [`base_graph`]) and EquiTopo's D-EquiStatic and OD-EquiDyn (\[Song22\],
//! [`equitopo`]; the undirected U-EquiStatic and OU-EquiDyn are not
//! implemented), and the Multigraph topology (\[Do23\], [`multigraph`]),
//! which is built on a base overlay of the network (RING by default) rather
//! than on abstract nodes ([`crate::overlay::build::build`] builds it).
//!
//! The papers define them on abstract nodes `0..n`; on a real network the
//! node order matters (a node talks most to the next ones). [`build`]
//! places node `p` on the `p`-th silo of the `ring-opt` tour by default
//! ([`FamilyOrder::RingOpt`]: the families' shortest hops, `i -> i + 1`,
//! are then the arcs of the best directed ring found), on silo `p`
//! ([`FamilyOrder::Identity`], `order=identity`), or on the order a local
//! search finds from the `ring-opt` tour for the family's exact cycle time
//! ([`FamilyOrder::Search`], `order=search`, [`placement`]).
//!
//! `exp` is one static overlay; its consensus weights `1 / (tau + 1)` are
//! exactly what the `local-degree` rule gives a circulant graph, so it
//! brings none of its own. `d-equistatic` is static with its own weights.
//! `exp-1peer`, `base:k=K` and `od-equidyn` are periodic schedules and bring
//! one consensus matrix per round of their period.

pub mod base_graph;
pub mod equitopo;
pub mod exponential;
pub mod multigraph;
pub mod placement;
pub mod spec;
#[cfg(test)]
mod tests;

use thiserror::Error;

use crate::graph::{Overlay, PeriodicSchedule};
use crate::mixing::ConsensusMatrix;
use crate::net::delay::DelayModel;
use crate::overlay::algo::RingSearch;
use crate::overlay::ring::ring_opt_tour;

pub use spec::{Family, FamilyOrder, FamilySpec, FamilySpecError};

/// Why a family could not be built on a network.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FamilyError {
    /// Fewer than 2 silos.
    #[error("`{overlay}` needs at least 2 silos; the network has {silos}")]
    TooSmall {
        /// Overlay name.
        overlay: String,
        /// Silos of the network.
        silos: usize,
    },
    /// `multigraph` is built on a base overlay of the network, not on
    /// abstract nodes: [`crate::overlay::build::build`] builds it.
    #[error("`{overlay}` is built on a base overlay of the network: build it with overlay::build")]
    NeedsBaseOverlay {
        /// Overlay name.
        overlay: String,
    },
    /// Base-(k+1) with `k >= n`: a degree no silo can have.
    #[error(
        "`{overlay}`: maximum degree k = {k} needs more than k silos, the network has {silos} \
         (use k <= {max})",
        max = silos.saturating_sub(1)
    )]
    DegreeTooLarge {
        /// Overlay name.
        overlay: String,
        /// The degree asked for.
        k: usize,
        /// Silos of the network.
        silos: usize,
    },
    /// The placement search could not time a candidate order.
    #[error("`{overlay}`: placement search: {message}")]
    Placement {
        /// Overlay name.
        overlay: String,
        /// The timing error.
        message: String,
    },
}

/// A family built on the silos.
#[derive(Debug, Clone)]
pub enum FamilyBuilt {
    /// The same overlay every round (`exp`, `d-equistatic`).
    Static {
        /// The overlay.
        overlay: Overlay,
        /// Its consensus matrix when the family has its own (`d-equistatic`;
        /// `exp`'s is the `local-degree` rule's).
        weights: Option<ConsensusMatrix>,
    },
    /// One overlay per round of a period, with its consensus matrix.
    Periodic {
        /// The rounds of one period.
        schedule: PeriodicSchedule,
        /// Round `r`'s consensus matrix (row `i`: what silo `i` gives to its
        /// own model and to each model it receives), doubly stochastic.
        weights: Vec<ConsensusMatrix>,
    },
}

/// The mixing matrices of one period of `family` on abstract nodes `0..n`,
/// `n >= 2` (one matrix for the static ones); `seed` draws EquiTopo's shifts
/// when the spec gives no seed of its own. None for `multigraph`, which
/// depends on the network's delays ([`multigraph`]).
pub fn abstract_matrices(family: Family, n: usize, seed: u64) -> Vec<ConsensusMatrix> {
    match family {
        Family::Exp => vec![exponential::static_matrix(n)],
        Family::ExpOnePeer => exponential::one_peer_period(n),
        Family::Base { k } => base_graph::base_graph(n, k),
        Family::EquiStatic { m, seed: s } => vec![equitopo::d_equistatic(
            n,
            m.unwrap_or_else(|| exponential::tau(n)).max(1),
            s.unwrap_or(seed),
        )],
        Family::EquiDyn {
            eta,
            seed: s,
            rounds,
        } => equitopo::od_equidyn(n, eta.0, rounds, s.unwrap_or(seed)),
        Family::Multigraph { .. } => Vec::new(),
    }
}

/// The silo of every abstract node under `spec`'s order: `order[p]` hosts
/// node `p` (`order=search`: [`placement::search_order`] from the
/// `ring-opt` tour, its moves drawn from `seed`).
///
/// # Errors
/// [`FamilyError::Placement`] when the search cannot time an order.
pub fn node_order(
    spec: FamilySpec,
    model: &DelayModel,
    search: &RingSearch,
    seed: u64,
) -> Result<Vec<usize>, FamilyError> {
    node_order_with_tour(spec, model, seed, || ring_opt_tour(model, search))
}

/// [`node_order`] with the ring-opt tour given by `ring_opt` (see
/// [`build_with_tour`]).
fn node_order_with_tour(
    spec: FamilySpec,
    model: &DelayModel,
    seed: u64,
    ring_opt: impl FnOnce() -> Vec<usize>,
) -> Result<Vec<usize>, FamilyError> {
    Ok(match spec.order {
        FamilyOrder::RingOpt => ring_opt(),
        FamilyOrder::Identity => (0..model.silo_count()).collect(),
        FamilyOrder::Search => {
            placement::search_order(
                spec,
                model,
                ring_opt(),
                seed,
                &placement::PlacementOptions::default(),
            )
            .map_err(|e| FamilyError::Placement {
                overlay: spec.to_string(),
                message: e.to_string(),
            })?
            .order
        }
    })
}

/// `w` with node `p` moved to silo `order[p]`, and its arcs `(j, i)` (silo
/// `i` gives weight to `j`'s model).
fn on_silos(w: &ConsensusMatrix, order: &[usize]) -> (ConsensusMatrix, Vec<(usize, usize)>) {
    let n = order.len();
    let mut m = ConsensusMatrix::zeros(n);
    for (p, row) in w.rows().enumerate() {
        for (q, &x) in row.iter().enumerate() {
            m[(order[p], order[q])] = x;
        }
    }
    (m, arcs_on_silos(w, order))
}

/// The arcs `(j, i)` of `w` with node `p` on silo `order[p]` (silo `i`
/// gives weight to `j`'s model), in [`on_silos`]'s order.
fn arcs_on_silos(w: &ConsensusMatrix, order: &[usize]) -> Vec<(usize, usize)> {
    let mut arcs = Vec::new();
    for (p, row) in w.rows().enumerate() {
        for (q, &x) in row.iter().enumerate() {
            if p != q && x != 0.0 {
                arcs.push((order[q], order[p]));
            }
        }
    }
    arcs
}

/// Checks that `spec` fits `n` silos.
pub fn check_size(spec: FamilySpec, n: usize) -> Result<(), FamilyError> {
    if n < 2 {
        return Err(FamilyError::TooSmall {
            overlay: spec.to_string(),
            silos: n,
        });
    }
    if let Family::Base { k } = spec.family {
        if k >= n {
            return Err(FamilyError::DegreeTooLarge {
                overlay: spec.to_string(),
                k,
                silos: n,
            });
        }
    }
    Ok(())
}

/// Builds `spec` on the silos of `model`, placed by its order
/// ([`node_order`]; `search` is the `ring-opt` local search; `seed` draws
/// EquiTopo's shifts when the spec gives no seed of its own).
pub fn build(
    spec: FamilySpec,
    model: &DelayModel,
    search: &RingSearch,
    seed: u64,
) -> Result<FamilyBuilt, FamilyError> {
    build_with_tour(spec, model, seed, || ring_opt_tour(model, search))
}

/// [`build`] with the ring-opt tour given by `ring_opt` (called only when
/// the family is placed on it or searches from it): the tour
/// `ring_opt_tour(model, search)`, perhaps computed once for many
/// families (`fedtopo design` builds a dozen on one network).
pub fn build_with_tour(
    spec: FamilySpec,
    model: &DelayModel,
    seed: u64,
    ring_opt: impl FnOnce() -> Vec<usize>,
) -> Result<FamilyBuilt, FamilyError> {
    let n = model.silo_count();
    check_size(spec, n)?;
    if let Family::Multigraph { .. } = spec.family {
        return Err(FamilyError::NeedsBaseOverlay {
            overlay: spec.to_string(),
        });
    }
    let order = node_order_with_tour(spec, model, seed, ring_opt)?;
    Ok(place(spec, &order, seed))
}

/// `spec` with node `p` on silo `order[p]` (`order` a permutation of the
/// silos, at least 2).
pub fn place(spec: FamilySpec, order: &[usize], seed: u64) -> FamilyBuilt {
    let mut weights = Vec::new();
    let overlays = abstract_matrices(spec.family, order.len(), seed)
        .iter()
        .map(|w| {
            let (m, arcs) = on_silos(w, order);
            weights.push(m);
            arcs
        })
        .collect();
    let static_weights = match spec.family {
        Family::EquiStatic { .. } => weights.last().cloned(),
        _ => None,
    };
    match shape(spec, order.len(), overlays) {
        Shape::Static(overlay) => FamilyBuilt::Static {
            overlay,
            weights: static_weights,
        },
        Shape::Periodic(schedule) => FamilyBuilt::Periodic { schedule, weights },
    }
}

/// The overlay or schedule of `spec` on `n` silos with the given arcs per
/// round (one round for the static families).
enum Shape {
    Static(Overlay),
    Periodic(PeriodicSchedule),
}

/// [`place`]'s overlays without the consensus matrices: what the
/// placement search times for every order it tries.
fn shape(spec: FamilySpec, n: usize, rounds: Vec<Vec<(usize, usize)>>) -> Shape {
    let name = spec.to_string();
    let mut overlays: Vec<Overlay> = rounds
        .into_iter()
        .map(|arcs| Overlay::from_arcs(&name, n, arcs))
        .collect();
    if !spec.is_schedule() {
        if let Some(overlay) = overlays.pop() {
            return Shape::Static(overlay);
        }
    }
    match PeriodicSchedule::new(&name, n, overlays) {
        Some(schedule) => Shape::Periodic(schedule),
        // Every family has at least one round on n >= 1 silos.
        None => Shape::Static(Overlay::from_arcs(&name, n, [])),
    }
}

/// `spec` on `order` from its abstract matrices `matrices`
/// ([`abstract_matrices`], computed once per search): the overlay or
/// schedule [`place`] builds, without its consensus matrices.
fn placed_shape(spec: FamilySpec, matrices: &[ConsensusMatrix], order: &[usize]) -> Shape {
    let rounds = matrices.iter().map(|w| arcs_on_silos(w, order)).collect();
    shape(spec, order.len(), rounds)
}
