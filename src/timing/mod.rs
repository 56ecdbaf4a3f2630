//! Cycle time of an overlay on a network: the max-plus linear system of the
//! (\[Marfoq20\] Sec. 2, "Cycle time"):
//!
//! ```text
//! t_i(k+1) = max_{j in N_i^in u {i}} ( t_j(k) + d_o(j,i) ),   d_o(i,i) = s*Tc(i)
//! ```
//!
//! The cycle time `tau` (ms per round) is the maximum cycle mean of the
//! weighted digraph with the \[Marfoq20\] eq. (3) delays, computed by Howard's policy
//! iteration ([`crate::maxplus::howard`]); Karp's algorithm is the
//! independent cross-check.

pub mod allreduce;
pub mod mesh_allreduce;
pub mod two_phase;

use rayon::prelude::*;
use serde::Serialize;
use thiserror::Error;

use crate::graph::{Overlay, Protocol};
use crate::maxplus::{self, Arc, CycleTime, MaxPlusError, WeightedDigraph};
use crate::net::delay::DelayModel;
use crate::units::Ms;

pub mod multigraph;
pub mod schedule;

/// Why a cycle time could not be computed.
#[derive(Debug, Error)]
pub enum TimingError {
    /// The overlay and the delay model disagree on the number of silos.
    #[error("the overlay has {overlay} silos but the network has {network}")]
    SizeMismatch {
        /// Silos in the overlay.
        overlay: usize,
        /// Silos in the delay model.
        network: usize,
    },
    /// The max-plus computation failed (e.g. not strongly connected).
    #[error("overlay `{overlay}`: {source}")]
    MaxPlus {
        /// Overlay name.
        overlay: String,
        /// The cause.
        source: MaxPlusError,
    },
    /// A schedule's cycle-time estimate was asked for too few rounds or seeds.
    #[error("{0}")]
    Sampling(String),
}

/// Cycle time with the algorithm that produced it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    /// Cycle time, ms per round.
    pub cycle_time_ms: Ms,
    /// A critical circuit (silo indices; for STAR: centre, leaf).
    pub critical_circuit: Vec<usize>,
}

impl Timing {
    /// Rounds per second, `1000 / tau`.
    pub fn rounds_per_second(&self) -> f64 {
        1e3 / self.cycle_time_ms
    }
}

/// The max-plus digraph of `overlay`: arc `i -> j` with the \[Marfoq20\] eq. (3) delay
/// for the overlay's degrees, plus the self-loop `d_o(i,i) = s*Tc(i)`.
pub fn maxplus_graph(
    overlay: &Overlay,
    model: &DelayModel,
) -> Result<WeightedDigraph, TimingError> {
    check_size(overlay, model)?;
    let n = overlay.silo_count();
    let mut arcs = Vec::with_capacity(overlay.arc_count() + n);
    for &(i, j) in overlay.arcs() {
        let weight = model.arc_delay(i, j, overlay.out_degree(i), overlay.in_degree(j));
        arcs.push(Arc {
            from: i,
            to: j,
            weight,
        });
    }
    for i in 0..n {
        arcs.push(Arc {
            from: i,
            to: i,
            weight: model.compute_round_ms(i),
        });
    }
    WeightedDigraph::new(n, arcs).map_err(|source| TimingError::MaxPlus {
        overlay: overlay.name.clone(),
        source,
    })
}

/// Cycle time of an undirected overlay in closed form, O(arcs): the largest
/// of `(d_o(i,j) + d_o(j,i)) / 2` over its edges and `s*Tc(i)` over silos.
///
/// Exact for undirected *trees*, whose only elementary circuits are the
/// 2-circuits of their edges and the self-loops (\[Marfoq20\] Sec. 2.3); for
/// undirected graphs with cycles it is a lower bound. Used to rank the
/// delta-MBST candidates fast; the result is re-checked with Howard.
pub fn undirected_tree_cycle_time(overlay: &Overlay, model: &DelayModel) -> Ms {
    let d = |i: usize, j: usize| model.arc_delay(i, j, overlay.out_degree(i), overlay.in_degree(j));
    let edges = overlay
        .arcs()
        .iter()
        .map(|&(i, j)| (d(i, j) + d(j, i)) / 2.0)
        .fold(f64::NEG_INFINITY, f64::max);
    (0..overlay.silo_count())
        .map(|i| model.compute_round_ms(i))
        .fold(edges, f64::max)
}

fn check_size(overlay: &Overlay, model: &DelayModel) -> Result<(), TimingError> {
    if overlay.silo_count() != model.silo_count() {
        return Err(TimingError::SizeMismatch {
            overlay: overlay.silo_count(),
            network: model.silo_count(),
        });
    }
    Ok(())
}

/// Cycle time of `overlay` on `model`, ms per round.
///
/// * Gossip overlays: maximum cycle mean of [`maxplus_graph`] (Howard).
/// * Server-client (STAR): one round is a broadcast from the centre `c` then
///   a gather to it, so `tau = max_i ( d_o(c,i) - s*Tc(c) + d_o(i,c) )`,
///   which is the paper's `2 * (tau_tree - s*Tc) + s*Tc` for the undirected
///   star with cycle time `tau_tree` (\[Marfoq20\] Sec. 3).
pub fn cycle_time(overlay: &Overlay, model: &DelayModel) -> Result<Timing, TimingError> {
    match overlay.protocol {
        Protocol::Gossip => {
            let g = maxplus_graph(overlay, model)?;
            let ct = maxplus::howard(&g).map_err(|source| TimingError::MaxPlus {
                overlay: overlay.name.clone(),
                source,
            })?;
            Ok(from_cycle_time(ct))
        }
        Protocol::ServerClient { center } => star_cycle_time(overlay, model, center),
    }
}

/// As [`cycle_time`] for gossip overlays, with Karp's algorithm (cross-check).
pub fn cycle_time_karp(overlay: &Overlay, model: &DelayModel) -> Result<Timing, TimingError> {
    let g = maxplus_graph(overlay, model)?;
    let ct = maxplus::karp(&g).map_err(|source| TimingError::MaxPlus {
        overlay: overlay.name.clone(),
        source,
    })?;
    Ok(from_cycle_time(ct))
}

/// Howard's cycle time of the max-plus digraph `g` of the rounds named
/// `name` (the timing of shapes with a graph of their own: two-phase
/// rounds, ring all-reduce).
pub(crate) fn howard_timing(name: &str, g: &WeightedDigraph) -> Result<Timing, TimingError> {
    maxplus::howard(g)
        .map(from_cycle_time)
        .map_err(|source| TimingError::MaxPlus {
            overlay: name.to_string(),
            source,
        })
}

fn from_cycle_time(ct: CycleTime) -> Timing {
    Timing {
        cycle_time_ms: ct.value,
        critical_circuit: ct.circuit,
    }
}

fn star_cycle_time(overlay: &Overlay, model: &DelayModel, c: usize) -> Result<Timing, TimingError> {
    check_size(overlay, model)?;
    let n = overlay.silo_count();
    if n == 1 {
        return Ok(Timing {
            cycle_time_ms: model.compute_round_ms(0),
            critical_circuit: vec![0],
        });
    }
    let (cycle_time_ms, leaf) = star_round(
        model,
        c,
        (overlay.out_degree(c), overlay.in_degree(c)),
        |i| (overlay.out_degree(i), overlay.in_degree(i)),
    );
    Ok(Timing {
        cycle_time_ms,
        critical_circuit: vec![c, leaf],
    })
}

/// `max_i ( d_o(c,i) - s*Tc(c) + d_o(i,c) )` over the silos `i != c` with
/// the given `(out, in)` degrees, and the first leaf reaching it.
fn star_round(
    model: &DelayModel,
    c: usize,
    (out_c, in_c): (usize, usize),
    leaf_degrees: impl Fn(usize) -> (usize, usize),
) -> (Ms, usize) {
    let mut best = (f64::NEG_INFINITY, c);
    for i in (0..model.silo_count()).filter(|&i| i != c) {
        let (out_i, in_i) = leaf_degrees(i);
        let down = model.arc_delay(c, i, out_c, in_i) - model.compute_round_ms(c);
        let up = model.arc_delay(i, c, out_i, in_c);
        if down + up > best.0 {
            best = (down + up, i);
        }
    }
    best
}

/// [`star_cycle_time_at`] for every centre `c` (entry `c`), ms: the same
/// values bit for bit, in O(n^2) with the `(c, i)` pairs visited in square
/// tiles so that the reads of `d(i, c)` (a column of the model's tables)
/// stay in cache (issue 28: one centre at a time, they missed it on almost
/// every read at 10,000 silos). Tiles of centres run in parallel.
pub fn star_cycle_times(model: &DelayModel) -> Vec<Ms> {
    const TILE: usize = 64;
    let n = model.silo_count();
    if n == 1 {
        return vec![model.compute_round_ms(0)];
    }
    let starts: Vec<usize> = (0..n).step_by(TILE).collect();
    starts
        .into_par_iter()
        .flat_map_iter(|c0| {
            let c1 = (c0 + TILE).min(n);
            let mut best = vec![f64::NEG_INFINITY; c1 - c0];
            for i0 in (0..n).step_by(TILE) {
                let i1 = (i0 + TILE).min(n);
                for (c, best) in (c0..c1).zip(best.iter_mut()) {
                    let tc = model.compute_round_ms(c);
                    for i in (i0..i1).filter(|&i| i != c) {
                        // The expression of `star_round` with leaf degrees (1, 1).
                        let down = model.arc_delay(c, i, n - 1, 1) - tc;
                        let up = model.arc_delay(i, c, 1, n - 1);
                        if down + up > *best {
                            *best = down + up;
                        }
                    }
                }
            }
            best
        })
        .collect()
}

/// Cycle time of the STAR over all silos centred at `c`, ms: the value
/// [`cycle_time`] gives for `overlay::star::star(n, c)`, in O(n) without
/// building the overlay (the centre has degree `n - 1` both ways, every
/// leaf degree 1).
///
/// # Panics
/// If `c` is not a silo of `model`.
pub fn star_cycle_time_at(model: &DelayModel, c: usize) -> Ms {
    let n = model.silo_count();
    assert!(c < n, "centre {c} outside 0..{n}");
    if n == 1 {
        return model.compute_round_ms(0);
    }
    star_round(model, c, (n - 1, n - 1), |_| (1, 1)).0
}

/// Test helper: the delay model of a built-in underlay (`None`: the
/// default) or of a paper underlay file, at access capacity `access`.
#[cfg(test)]
pub(crate) fn test_model(name: Option<&str>, access: &str) -> DelayModel {
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::{LoadOptions, Underlay};
    let u = match name {
        None => load_underlay(None, &LoadOptions::default()).unwrap(),
        Some(file) => Underlay::load(
            std::path::Path::new(&format!(
                "{}/underlays/paper/{file}.gml",
                env!("CARGO_MANIFEST_DIR")
            )),
            &LoadOptions::default(),
        )
        .unwrap(),
    };
    NetworkSpec::from_knobs(|k| (k == "access").then_some(access))
        .unwrap()
        .delay_model(&u)
}

/// Test helper: the growth rate of `round` (ms per round) from a start at
/// 0: `(max t(k0 + span) - max t(k0)) / span`, `t(k+1) = round(t(k))`.
#[cfg(test)]
pub(crate) fn growth_rate(
    n: usize,
    round: impl Fn(&[Ms]) -> Vec<Ms>,
    k0: usize,
    span: usize,
) -> Ms {
    let max = |t: &[Ms]| t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut t = vec![0.0; n];
    let mut t0 = 0.0;
    for k in 0..k0 + span {
        t = round(&t);
        if k + 1 == k0 {
            t0 = max(&t);
        }
    }
    (max(&t) - t0) / span as f64
}

/// Test helper: two round maps (`t(k) -> t(k+1)`) agree to 1e-9 over
/// `rounds` rounds from uneven starts (silo `i` starts `i` ms late).
#[cfg(test)]
pub(crate) fn assert_same_rounds(
    n: usize,
    a: impl Fn(&[Ms]) -> Vec<Ms>,
    b: impl Fn(&[Ms]) -> Vec<Ms>,
    rounds: usize,
) {
    let mut t: Vec<Ms> = (0..n).map(|i| i as f64).collect();
    for _ in 0..rounds {
        let (x, y) = (a(&t), b(&t));
        for (p, q) in x.iter().zip(&y) {
            assert!((p - q).abs() <= 1e-9 * p.abs().max(1.0), "{p} {q}");
        }
        t = x;
    }
}
