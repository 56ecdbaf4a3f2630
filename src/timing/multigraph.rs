//! \[Do23\]'s own cycle-time figure for a Multigraph schedule (their Table 3),
//! reimplemented from their public code (aioz-ai/MultigraphFL,
//! `compute_cycle_time_multigraph` and `delay_time_step` in
//! `graph_utils/utils/utils.py`; read, not copied), next to which fedtopo
//! puts the exact max-plus rate of the same period
//! ([`crate::timing::schedule::periodic_rate`]) and the event replay.
//!
//! Their figure is an average over a fixed number of rounds `R` (6400 for
//! FEMNIST, 1600 for iNaturalist, 20000 for Sentiment140,
//! [`PUBLISHED_ROUNDS`]) of a per-round number `lambda_k`, computed on the
//! base overlay with every arc `e = i -> j` weighted `w_k(e)`:
//!
//! * round 0, and a strong arc whose previous round was strong too: its
//!   delay `d_e` (\[Marfoq20\] eq. 3 with the base overlay's degrees);
//! * a strong arc after weak rounds: `max(s Tc, d_e - a_e)`, `a_e` the sum of
//!   `lambda` over those weak rounds (the transfer is taken to have run
//!   meanwhile);
//! * a weak arc: 0;
//!
//! and `lambda_k` the maximum cycle mean of that weighted base digraph (their
//! Karp; Howard here). On a ring, `lambda_k` is the sum of the strong arcs'
//! weights over `n`: a weak arc counts as instantaneous, so it is not the
//! duration of any round of a max-plus system (it can be below the exact
//! rate of the background-transfer schedule, and is well below the exact
//! rate when weak arcs carry nothing). When every arc is strong every round
//! it is the base overlay's cycle time.

use serde::Serialize;

use super::TimingError;
use crate::graph::Overlay;
use crate::maxplus::{self, Arc, WeightedDigraph};
use crate::net::delay::DelayModel;
use crate::units::Ms;

/// Rounds \[Do23\]'s code averages over, per workload (its `ROUNDS_DICT`).
pub const PUBLISHED_ROUNDS: [(&str, u64); 3] =
    [("femnist", 6400), ("inaturalist", 1600), ("sent140", 20000)];

/// The rounds \[Do23\] averages over for workload `name`, if it is one of
/// theirs.
pub fn published_rounds(name: &str) -> Option<u64> {
    PUBLISHED_ROUNDS
        .iter()
        .find(|(w, _)| *w == name)
        .map(|&(_, r)| r)
}

/// \[Do23\]'s cycle-time figure of a Multigraph schedule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedEstimate {
    /// Rounds averaged over.
    pub rounds: u64,
    /// `lambda_k` of every round, ms.
    pub per_round_ms: Vec<Ms>,
    /// Their cycle time: the mean of `lambda_k`, ms.
    pub mean_ms: Ms,
}

/// \[Do23\]'s figure (module docs) for the multigraph of `base` whose arc
/// number `a` (sorted order) has `multiplicity[a] >= 1` parallel edges
/// (strong in round `k` iff `k mod m_a = 0`), over `rounds` rounds.
///
/// # Errors
/// [`TimingError::Sampling`] for `rounds == 0` or multiplicities that do
/// not match the arcs; [`TimingError::SizeMismatch`]; [`TimingError::MaxPlus`]
/// when the base is not strongly connected.
pub fn published_estimate(
    base: &Overlay,
    multiplicity: &[u32],
    model: &DelayModel,
    rounds: u64,
) -> Result<PublishedEstimate, TimingError> {
    let n = base.silo_count();
    if n != model.silo_count() {
        return Err(TimingError::SizeMismatch {
            overlay: n,
            network: model.silo_count(),
        });
    }
    if rounds == 0 {
        return Err(TimingError::Sampling("need at least 1 round".into()));
    }
    let arcs = base.arcs();
    if multiplicity.len() != arcs.len() || multiplicity.contains(&0) {
        return Err(TimingError::Sampling(format!(
            "need one multiplicity >= 1 per arc: {} arcs, {} multiplicities",
            arcs.len(),
            multiplicity.len()
        )));
    }
    let delay: Vec<f64> = arcs
        .iter()
        .map(|&(i, j)| model.arc_delay(i, j, base.out_degree(i), base.in_degree(j)))
        .collect();
    let strong = |a: usize, k: u64| k.is_multiple_of(u64::from(multiplicity[a]));
    // Time the transfer of a weak arc has run: the lambdas of its weak rounds.
    let mut ran = vec![0.0; arcs.len()];
    let mut weight = vec![0.0; arcs.len()];
    let mut per_round_ms = Vec::with_capacity(rounds as usize);
    for k in 0..rounds {
        for (a, &(_, j)) in arcs.iter().enumerate() {
            weight[a] = if !strong(a, k) {
                0.0
            } else if k == 0 || strong(a, k - 1) {
                delay[a]
            } else {
                model.compute_round_ms(j).max(delay[a] - ran[a])
            };
        }
        let lambda = max_cycle_mean(base, &weight)?;
        for (a, r) in ran.iter_mut().enumerate() {
            if !strong(a, k) {
                *r = if k > 0 && !strong(a, k - 1) {
                    *r + lambda
                } else {
                    lambda
                };
            }
        }
        per_round_ms.push(lambda);
    }
    let mean_ms = per_round_ms.iter().sum::<f64>() / rounds as f64;
    Ok(PublishedEstimate {
        rounds,
        per_round_ms,
        mean_ms,
    })
}

/// The maximum cycle mean of `base` with arc `a` weighted `weight[a]`, ms.
fn max_cycle_mean(base: &Overlay, weight: &[f64]) -> Result<Ms, TimingError> {
    let arcs = base
        .arcs()
        .iter()
        .zip(weight)
        .map(|(&(from, to), &weight)| Arc { from, to, weight })
        .collect();
    let err = |source| TimingError::MaxPlus {
        overlay: base.name.clone(),
        source,
    };
    let g = WeightedDigraph::new(base.silo_count(), arcs).map_err(err)?;
    Ok(maxplus::howard(&g).map_err(err)?.value)
}
