//! The Multigraph topology (\[Do23\]: Do, Nguyen, Pham, Tran, Tjiputra,
//! Tran, Nguyen, "Reducing Training Time in Cross-Silo Federated Learning
//! using Multigraph Topology", ICCV 2023, arXiv 2207.09657), built on a base
//! overlay of the network (RING in the paper's Table 3; MST, delta-MBST or
//! STAR too). Read from the paper and its public code (aioz-ai/MultigraphFL,
//! `graph_utils/utils/utils.py`: `generate_multigraph`,
//! `compute_cycle_time_multigraph`), not copied.
//!
//! * **Multigraph** (\[Do23\] Algorithm 1): every arc `e = i -> j` of the base
//!   overlay becomes `m_e = min(t_max, round(d_e / d_min))` parallel edges,
//!   `d_e` the arc's delay (\[Marfoq20\] eq. 3 with degrees 1, as their code:
//!   `s Tc(i) + l(i,j) + max(M/Cup(i), M/Cdn(j), M/A(i,j))`, ms), `d_min` the
//!   least over the base's arcs, `round` Python's (halves to even),
//!   `t_max = 5` by default. One of the `m_e` edges is *strong*, the others
//!   *weak*: slow arcs get more weak edges.
//! * **Parsing** (\[Do23\] Algorithm 2): the multigraph is cut into a period of
//!   `S = lcm(m_e)` simple graphs ("states"); arc `e` is strong in round `k`
//!   iff `k mod m_e = 0` (all strong in round 0). Round `k`'s overlay holds the
//!   strong arcs; a silo none of whose arcs is strong is *isolated*: it only
//!   computes and averages nothing, without waiting for anyone.
//!
//! What a weak edge does between two strong rounds is where the paper's
//! timing and a plain schedule differ ([`WeakEdges`]): their cycle-time
//! accounting shortens the delay of an arc that turns strong again by the
//! time its weak rounds took, i.e. the transfer ran in the background across
//! the weak rounds (`weak=background`: the arc's model left the sender `m_e -
//! 1` rounds before the round that uses it, a lagged arc,
//! [`crate::graph::OverlaySchedule::arc_lag`]); `weak=idle` (the default) has
//! no transfer on weak rounds, so a strong arc carries the model of its own
//! round, as every other schedule here (and as fedtopo's trainer mixes).
//! Their own figure, an average over a fixed number of rounds of a per-round
//! proxy, is reimplemented in [`crate::timing::multigraph`].
//!
//! Consensus weights: the local-degree rule (\[Marfoq20\] eq. 22-23) on every
//! round's overlay (1/2 on a strong ring arc, 1 on the diagonal of an
//! isolated silo).

use serde::Serialize;

use crate::graph::{Overlay, PeriodicSchedule};
use crate::mixing::consensus::local_degree;
use crate::mixing::ConsensusMatrix;
use crate::net::delay::DelayModel;

/// \[Do23\]'s default `t_max`, the most parallel edges of one arc.
pub const T_MAX: u32 = 5;
/// Largest `t_max` accepted: the period is `lcm(m_e) <= lcm(1..=t_max)`
/// (2520 rounds at 10).
pub const MAX_T_MAX: u32 = 10;

/// What a weak edge does in the rounds it is weak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WeakEdges {
    /// Nothing: a strong arc carries the model of its round (a plain
    /// periodic schedule).
    #[default]
    Idle,
    /// The transfer runs across the weak rounds: the strong arc of round `k`
    /// carries the model its sender finished in round `k - m_e + 1`, right
    /// after the arc's previous strong round (\[Do23\]'s cycle-time
    /// accounting; a stale model for training).
    Background,
}

impl WeakEdges {
    /// The name used in `weak=NAME`.
    pub fn name(self) -> &'static str {
        match self {
            WeakEdges::Idle => "idle",
            WeakEdges::Background => "background",
        }
    }
}

/// The base overlay the multigraph is built on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MultigraphBase {
    /// RING (Christofides, \[Marfoq20\] Prop. 3.3): \[Do23\]'s Table 3.
    #[default]
    Ring,
    /// `ring-opt` (RING improved by local search).
    RingOpt,
    /// MST (\[Marfoq20\] Prop. 3.1), both arcs of every edge.
    Mst,
    /// delta-MBST (\[Marfoq20\] Algorithm 1), both arcs of every edge.
    DeltaMbst,
    /// STAR's edges as a gossip overlay (both arcs of every edge; the
    /// centre is the STAR's), not the server-client protocol.
    Star,
}

impl MultigraphBase {
    /// The overlay name (`ring`, `ring-opt`, `mst`, `delta-mbst`, `star`).
    pub fn name(self) -> &'static str {
        match self {
            MultigraphBase::Ring => "ring",
            MultigraphBase::RingOpt => "ring-opt",
            MultigraphBase::Mst => "mst",
            MultigraphBase::DeltaMbst => "delta-mbst",
            MultigraphBase::Star => "star",
        }
    }

    /// Parses an overlay name.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "ring" => MultigraphBase::Ring,
            "ring-opt" | "ringopt" => MultigraphBase::RingOpt,
            "mst" => MultigraphBase::Mst,
            "delta-mbst" | "mbst" => MultigraphBase::DeltaMbst,
            "star" => MultigraphBase::Star,
            _ => return None,
        })
    }
}

/// Python's `round` of a float: to the nearest integer, halves to even
/// (\[Do23\]'s code rounds `d_e / d_min` with it).
fn round_half_even(x: f64) -> f64 {
    x.round_ties_even()
}

/// The multigraph of a base overlay: the base's arcs and how many parallel
/// edges each has.
#[derive(Debug, Clone, PartialEq)]
pub struct Multigraph {
    /// The base overlay, as a gossip overlay.
    pub base: Overlay,
    /// `m_e >= 1` for every arc of `base`, in its (sorted) arc order.
    pub multiplicity: Vec<u32>,
}

impl Multigraph {
    /// \[Do23\] Algorithm 1 on `base` with delays from `model`: `m_e =
    /// min(t_max, round(d_e / d_min))`, `t_max` clamped to
    /// `1..=`[`MAX_T_MAX`]. Every `m_e` is 1 when the least delay is not
    /// positive (no ratio to take).
    pub fn new(base: &Overlay, model: &DelayModel, t_max: u32) -> Multigraph {
        let t_max = t_max.clamp(1, MAX_T_MAX);
        let delays: Vec<f64> = base
            .arcs()
            .iter()
            .map(|&(i, j)| model.arc_delay(i, j, 1, 1))
            .collect();
        let d_min = delays.iter().copied().fold(f64::INFINITY, f64::min);
        let multiplicity = delays
            .iter()
            .map(|&d| {
                if d_min > 0.0 && d_min.is_finite() && d.is_finite() {
                    round_half_even(d / d_min).clamp(1.0, t_max as f64) as u32
                } else {
                    1
                }
            })
            .collect();
        Multigraph {
            base: Overlay::from_arcs(&base.name, base.silo_count(), base.arcs().to_vec()),
            multiplicity,
        }
    }

    /// The multigraph of `base` with the given multiplicities (one per arc,
    /// in sorted arc order, each clamped to `1..=`[`MAX_T_MAX`]); `None` when
    /// the lengths differ.
    pub fn with_multiplicities(base: &Overlay, multiplicity: Vec<u32>) -> Option<Multigraph> {
        (multiplicity.len() == base.arc_count()).then(|| Multigraph {
            base: Overlay::from_arcs(&base.name, base.silo_count(), base.arcs().to_vec()),
            multiplicity: multiplicity
                .into_iter()
                .map(|m| m.clamp(1, MAX_T_MAX))
                .collect(),
        })
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.base.silo_count()
    }

    /// The period `S = lcm(m_e)` of the parsed states (\[Do23\] Algorithm 2),
    /// rounds (1 for a base without arcs).
    pub fn period(&self) -> u64 {
        fn gcd(a: u64, b: u64) -> u64 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        self.multiplicity
            .iter()
            .fold(1u64, |l, &m| l / gcd(l, m as u64) * m as u64)
    }

    /// True when arc number `a` (sorted order) is strong in round `k`.
    pub fn is_strong(&self, a: usize, k: u64) -> bool {
        k.is_multiple_of(self.multiplicity[a] as u64)
    }

    /// The strong arcs of round `k` (\[Do23\] Algorithm 2's state `k mod S`).
    pub fn round_overlay(&self, name: &str, k: u64) -> Overlay {
        let arcs = self
            .base
            .arcs()
            .iter()
            .enumerate()
            .filter(|&(a, _)| self.is_strong(a, k))
            .map(|(_, &arc)| arc);
        Overlay::from_arcs(name, self.silo_count(), arcs)
    }

    /// Silos with no strong arc in round `k` (they compute and move on).
    pub fn isolated(&self, k: u64) -> Vec<usize> {
        let o = self.round_overlay("", k);
        (0..self.silo_count())
            .filter(|&i| o.in_degree(i) == 0 && o.out_degree(i) == 0)
            .collect()
    }

    /// One period of rounds as a schedule named `name`; with
    /// [`WeakEdges::Background`] the strong arc `e` of round `k > 0` is lagged
    /// by `m_e - 1` rounds ([`crate::graph::OverlaySchedule::arc_lag`]).
    pub fn schedule(&self, name: &str, weak: WeakEdges) -> PeriodicSchedule {
        let period = self.period();
        let rounds: Vec<Overlay> = (0..period).map(|k| self.round_overlay(name, k)).collect();
        let lags: Vec<Vec<u64>> = rounds
            .iter()
            .map(|o| {
                o.arcs()
                    .iter()
                    .map(|arc| match weak {
                        WeakEdges::Idle => 0,
                        WeakEdges::Background => {
                            let a = self.base.arcs().binary_search(arc).unwrap_or(0);
                            u64::from(self.multiplicity[a].saturating_sub(1))
                        }
                    })
                    .collect()
            })
            .collect();
        PeriodicSchedule::new(name, self.silo_count(), rounds)
            .expect("a period has at least one round, every round on the base's silos")
            .with_lags(lags)
            .expect("one lag per strong arc of every round")
    }

    /// The local-degree consensus matrix (\[Marfoq20\] eq. 22-23) of every
    /// round of the period: `1 / (1 + max(indeg i, indeg j))` on a strong arc
    /// `j -> i`, the rest of the row on the diagonal.
    pub fn round_weights(&self) -> Vec<ConsensusMatrix> {
        (0..self.period())
            .map(|k| local_degree(&self.round_overlay("", k)))
            .collect()
    }
}
