//! [`MaxPlusClock`]: round end times from the max-plus recurrence in
//! closed form.

use super::{ClockError, RoundClock};
use crate::graph::{Overlay, Protocol};
use crate::net::delay::DelayModel;
use crate::timing;
use crate::units::Ms;

/// The exact max-plus recurrence of the paper (Sec. 2, "Cycle time"):
///
/// ```text
/// t_i(k+1) = max_{j in N_i^in u {i}} ( t_j(k) + d_o(j,i) ),   d_o(i,i) = s*Tc(i)
/// ```
///
/// with the eq. (3) arc delays of the round's overlay
/// ([`timing::maxplus_graph`]); `t_i(k)` is the time silo `i` starts round
/// `k`. A server-client overlay (STAR, centre `c`) runs the two-phase
/// protocol of [`crate::replay`]: the centre aggregates once it has computed
/// and received every client's model, and a client starts the next round
/// when the broadcast reaches it:
///
/// ```text
/// t_c(k+1) = max( t_c(k) + s*Tc(c), max_{i != c} t_i(k) + d_o(i,c) )
/// t_j(k+1) = t_c(k+1) + d_o(c,j) - s*Tc(c)                      (j != c)
/// ```
///
/// (`d_o(c,j) - s*Tc(c)` is the communication part of eq. (3),
/// [`DelayModel::comm_ms`]), whose cycle time is [`timing::cycle_time`]'s STAR formula
/// `max_i ( d_o(c,i) - s*Tc(c) + d_o(i,c) )` (when the centre's own
/// computation is not the bottleneck). With the `maxplus` network the
/// event-driven [`super::EngineClock`] computes the same times (tested).
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
        super::check_round(k, self.next, overlay, self.t.len())?;
        let next = match overlay.protocol {
            Protocol::ServerClient { center: c } => {
                let m = &self.model;
                let n = self.t.len();
                let (out_c, in_c) = (overlay.out_degree(c), overlay.in_degree(c));
                let mut tc = self.t[c] + m.compute_round_ms(c);
                for i in (0..n).filter(|&i| i != c) {
                    let up = m.arc_delay(i, c, overlay.out_degree(i), in_c);
                    tc = tc.max(self.t[i] + up);
                }
                (0..n)
                    .map(|j| {
                        if j == c {
                            tc
                        } else {
                            let bits = m.workload.model_bits;
                            tc + m.comm_ms(c, j, out_c, overlay.in_degree(j), bits)
                        }
                    })
                    .collect()
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
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;
    use crate::overlay::build::{build_overlay, BuildOptions, OverlayKind};

    fn aws() -> (crate::net::underlay::Underlay, DelayModel) {
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
