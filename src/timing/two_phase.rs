//! Cycle time of two-phase rounds: D-Cliques rounds with Clique Averaging
//! (\[Bellet21\]) on a real network (new, not in the paper): nodes
//! are silos of an underlay.
//!
//! A Clique Averaging round `k` has two communication phases:
//!
//! 1. silo `i` starts at `t_i(k)`, computes its gradient (`s*Tc(i)` ms) and
//!    sends it to its clique neighbours (the *gradient overlay*, intra-clique
//!    arcs); `u_j(k)` is when `j` holds every gradient of its group and
//!    applies the averaged update (no time);
//! 2. `j` sends its updated model to all its neighbours (the *model
//!    overlay*, all arcs) and starts round `k+1` once it holds them all.
//!
//! Gradients have the size of the model. With the delays of \[Marfoq20\]
//! eq. (3), and the degrees of each phase's overlay (`dg`, `dm` =
//! [`DelayModel::comm_ms`], the communication part of eq. (3), without the
//! computation):
//!
//! ```text
//! u_j(k)   = max( t_j(k) + s Tc(j),  max_{i in Ng(j)} t_i(k) + s Tc(i) + dg(i,j) )
//! t_j(k+1) = max( u_j(k),            max_{i in Nm(j)} u_i(k) + dm(i,j) )
//! ```
//!
//! i.e. `t(k+1) = Am (x) Ag (x) t(k)` in max-plus algebra; the cycle time
//! is the maximum cycle mean of the product matrix (Howard). The event
//! replay `replay::two_phase::replay_clique_averaging` runs the same
//! protocol message by message over any network model (with the max-plus
//! network it equals the recurrence exactly; with the flow network,
//! gradients and models share links).

use std::collections::HashMap;

use super::{Timing, TimingError};
use crate::graph::Overlay;
use crate::maxplus::{Arc, WeightedDigraph};
use crate::net::delay::DelayModel;
use crate::units::Ms;

/// Communication part of eq. (3) for arc `i -> j` of `o`, ms.
fn comm(model: &DelayModel, o: &Overlay, i: usize, j: usize) -> Ms {
    model.comm_ms(
        i,
        j,
        o.out_degree(i),
        o.in_degree(j),
        model.workload.model_bits,
    )
}

/// The max-plus digraph of one two-phase round named `name`: gradients on
/// `gradients`, then models on `models` (module docs); arc `i -> j` with
/// weight `max_l (Ag(l,i) + Am(j,l))`, the longest path from `t_i(k)` to
/// `t_j(k+1)` through the two phases.
///
/// # Errors
/// [`TimingError::SizeMismatch`] when an overlay and `model` disagree on
/// the number of silos; [`TimingError::MaxPlus`] for a graph the max-plus
/// algebra rejects.
pub fn two_phase_graph(
    name: &str,
    gradients: &Overlay,
    models: &Overlay,
    model: &DelayModel,
) -> Result<WeightedDigraph, TimingError> {
    for o in [gradients, models] {
        if o.silo_count() != model.silo_count() {
            return Err(TimingError::SizeMismatch {
                overlay: o.silo_count(),
                network: model.silo_count(),
            });
        }
    }
    let n = model.silo_count();
    let (g, m) = (gradients, models);
    // Phase 1 arcs into l: (i, weight), self included.
    let mut into: Vec<Vec<(usize, f64)>> = (0..n)
        .map(|l| vec![(l, model.compute_round_ms(l))])
        .collect();
    for &(i, l) in g.arcs() {
        into[l].push((i, model.compute_round_ms(i) + comm(model, g, i, l)));
    }
    // Phase 2 arcs out of l: (j, weight), self included.
    let mut out: Vec<Vec<(usize, f64)>> = (0..n).map(|l| vec![(l, 0.0)]).collect();
    for &(l, j) in m.arcs() {
        out[l].push((j, comm(model, m, l, j)));
    }
    let mut best: HashMap<(usize, usize), f64> = HashMap::new();
    for l in 0..n {
        for &(i, wg) in &into[l] {
            for &(j, wm) in &out[l] {
                let w = best.entry((i, j)).or_insert(f64::NEG_INFINITY);
                *w = w.max(wg + wm);
            }
        }
    }
    let mut arcs: Vec<Arc> = best
        .into_iter()
        .map(|((from, to), weight)| Arc { from, to, weight })
        .collect();
    arcs.sort_by_key(|a| (a.from, a.to));
    WeightedDigraph::new(n, arcs).map_err(|source| TimingError::MaxPlus {
        overlay: name.to_string(),
        source,
    })
}

/// Cycle time (ms per round) of two-phase rounds named `name` (gradients
/// on `gradients`, models on `models`) on `model`: Howard on
/// [`two_phase_graph`].
///
/// # Errors
/// As [`two_phase_graph`].
pub fn two_phase_cycle_time(
    name: &str,
    gradients: &Overlay,
    models: &Overlay,
    model: &DelayModel,
) -> Result<Timing, TimingError> {
    super::howard_timing(name, &two_phase_graph(name, gradients, models, model)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;

    #[test]
    fn size_mismatch_is_an_error() {
        let u = load_underlay(None, &LoadOptions::default()).unwrap();
        let m = NetworkSpec::default().delay_model(&u);
        let n = m.silo_count();
        let ring = |k: usize| Overlay::directed_ring("r", k, &(0..k).collect::<Vec<_>>());
        assert!(two_phase_cycle_time("x", &ring(n + 1), &ring(n), &m).is_err());
        assert!(two_phase_cycle_time("x", &ring(n), &ring(n + 1), &m).is_err());
        assert!(two_phase_cycle_time("x", &ring(n), &ring(n), &m).is_ok());
    }
}
