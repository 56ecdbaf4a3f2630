//! The seam between training and the network simulator: a [`RoundClock`]
//! turns the overlay of each round into the wall-clock time (ms) at which
//! every silo finishes that round.
//!
//! The trainer runs rounds `k = 0, 1, 2, ...` as fast as the machine allows
//! and asks the clock, round by round, when they *would* have ended on the
//! simulated network. [`MaxPlusClock`] implements the paper's max-plus
//! recurrence exactly; the event engine (issue 4) implements the same trait
//! for its network models (`maxplus | paper | flow`), and plugs in here
//! without changes to the trainer.

use thiserror::Error;

use crate::delay::DelayModel;
use crate::overlay::{Overlay, Protocol};
use crate::timing::{self, TimingError};
use crate::units::Ms;

/// Why a clock could not time a round.
#[derive(Debug, Error)]
pub enum ClockError {
    /// Rounds must be timed in order `0, 1, 2, ...`.
    #[error("round {got} timed out of order (expected round {expected})")]
    OutOfOrder {
        /// The round the clock expected.
        expected: u64,
        /// The round it was given.
        got: u64,
    },
    /// The overlay does not fit the network.
    #[error(transparent)]
    Timing(#[from] TimingError),
    /// Anything a clock implementation wants to report.
    #[error("{0}")]
    Other(String),
}

/// Wall-clock times of training rounds on a simulated network.
///
/// Contract: the clock starts with every silo at time 0 ms; the `k`-th call
/// (`k = 0, 1, ...`, in order, one call per round) receives round `k`'s
/// overlay and returns `t(k+1)`, the time (ms since the start) at which each
/// silo has finished round `k` (local steps, sends, receives and averaging),
/// one entry per silo. Times never decrease from one round to the next.
/// A clock is deterministic: the same overlays give the same times, so a
/// resumed run rebuilds its clock by replaying the rounds already done.
pub trait RoundClock {
    /// End times (ms, one per silo) of round `k` on `overlay`.
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError>;
}

/// The exact max-plus recurrence of the paper (Sec. 2, "Cycle time"):
///
/// ```text
/// t_i(k+1) = max_{j in N_i^in u {i}} ( t_j(k) + d_o(j,i) ),   d_o(i,i) = s*Tc(i)
/// ```
///
/// with the eq. (3) arc delays of the round's overlay
/// ([`timing::maxplus_graph`]). For a server-client overlay (STAR, centre
/// `c`) every silo waits for the whole gather/broadcast:
/// `t_i(k+1) = max_j t_j(k) + max_i ( d_o(c,i) - s*Tc(c) + d_o(i,c) )`,
/// the per-round STAR time of [`timing::cycle_time`].
#[derive(Debug, Clone)]
pub struct MaxPlusClock {
    model: DelayModel,
    t: Vec<Ms>,
    next: u64,
}

impl MaxPlusClock {
    /// A clock on `model`, every silo at time 0.
    pub fn new(model: DelayModel) -> Self {
        let n = model.silo_count();
        MaxPlusClock {
            model,
            t: vec![0.0; n],
            next: 0,
        }
    }

    /// The delay model.
    pub fn model(&self) -> &DelayModel {
        &self.model
    }
}

impl RoundClock for MaxPlusClock {
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError> {
        if k != self.next {
            return Err(ClockError::OutOfOrder {
                expected: self.next,
                got: k,
            });
        }
        let next = match overlay.protocol {
            Protocol::ServerClient { .. } => {
                let tau = timing::cycle_time(overlay, &self.model)?.cycle_time_ms;
                let start = self.t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                vec![start + tau; self.t.len()]
            }
            Protocol::Gossip => {
                let g = timing::maxplus_graph(overlay, &self.model)?;
                let mut next = vec![f64::NEG_INFINITY; self.t.len()];
                for a in g.arcs() {
                    next[a.to] = next[a.to].max(self.t[a.from] + a.weight);
                }
                next
            }
        };
        self.t.clone_from(&next);
        self.next += 1;
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlay::build::{build_overlay, BuildOptions, OverlayKind};
    use crate::scenario::{load_underlay, NetworkSpec};
    use crate::underlay::LoadOptions;

    fn aws() -> (crate::underlay::Underlay, DelayModel) {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
        let m = NetworkSpec::default().delay_model(&u);
        (u, m)
    }

    /// Slope of the clock over many rounds equals the cycle time computed by
    /// Howard's algorithm (independent method), within the recurrence bound.
    #[test]
    fn clock_slope_matches_cycle_time() {
        let (u, m) = aws();
        for kind in [OverlayKind::Star, OverlayKind::Mst, OverlayKind::Ring] {
            let o = build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap();
            let tau = timing::cycle_time(&o, &m).unwrap().cycle_time_ms;
            let mut c = MaxPlusClock::new(m.clone());
            let rounds = 2000;
            let mut last = Vec::new();
            for k in 0..rounds {
                let t = c.round_end_times(k, &o).unwrap();
                assert_eq!(t.len(), 22);
                if !last.is_empty() {
                    assert!(t.iter().zip(&last).all(|(a, b)| a >= b));
                }
                last = t;
            }
            let slope = last.iter().copied().fold(0.0, f64::max) / rounds as f64;
            assert!(slope >= tau - 1e-9, "{kind}: {slope} < {tau}");
            assert!(slope <= tau * 1.01, "{kind}: {slope} vs {tau}");
        }
    }

    #[test]
    fn first_round_is_max_incoming_arc_delay() {
        let (u, m) = aws();
        let o = build_overlay(OverlayKind::Ring, &u, &m, &BuildOptions::default()).unwrap();
        let mut c = MaxPlusClock::new(m.clone());
        let t = c.round_end_times(0, &o).unwrap();
        for (i, &ti) in t.iter().enumerate() {
            let j = o.in_neighbours()[i][0];
            let d = m.arc_delay(j, i, o.out_degree(j), o.in_degree(i));
            assert!((ti - d.max(m.compute_round_ms(i))).abs() < 1e-9);
        }
        assert!(matches!(
            c.round_end_times(5, &o),
            Err(ClockError::OutOfOrder {
                expected: 1,
                got: 5
            })
        ));
    }
}
