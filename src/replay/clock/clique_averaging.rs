//! [`CliqueAveragingClock`]: round end times of two-phase Clique Averaging
//! rounds (D-Cliques, \[Bellet21\]) from the max-plus recurrence of
//! [`crate::timing::two_phase`].

use super::{ClockError, RoundClock};
use crate::graph::Overlay;
use crate::net::delay::DelayModel;
use crate::timing::TimingError;
use crate::units::Ms;

/// Wall-clock times of Clique Averaging rounds: gradients travel on the
/// fixed gradient overlay (intra-clique arcs), models on the round's
/// overlay; two phases per round as in [`crate::timing::two_phase`]
/// (`dm` = [`DelayModel::comm_ms`], the communication part of Marfoq et
/// al. 2020, eq. (3)):
///
/// ```text
/// u_j = max( t_j + s Tc(j), max_{i in Ng(j)} t_i + d_o^g(i,j) )
/// t_j(k+1) = max( u_j, max_{i in Nm(j)} u_i + dm(i,j) )
/// ```
#[derive(Debug, Clone)]
pub struct CliqueAveragingClock {
    model: DelayModel,
    gradients: Overlay,
    t: Vec<Ms>,
    next: u64,
}

impl CliqueAveragingClock {
    /// A clock on `model` with gradient overlay `gradients`, silos at 0 ms.
    pub fn new(model: DelayModel, gradients: Overlay) -> Self {
        let n = model.silo_count();
        CliqueAveragingClock {
            model,
            gradients,
            t: vec![0.0; n],
            next: 0,
        }
    }
}

impl RoundClock for CliqueAveragingClock {
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError> {
        if k != self.next {
            return Err(ClockError::OutOfOrder {
                expected: self.next,
                got: k,
            });
        }
        let n = self.t.len();
        if overlay.silo_count() != n || self.gradients.silo_count() != n {
            return Err(TimingError::SizeMismatch {
                overlay: overlay.silo_count(),
                network: n,
            }
            .into());
        }
        let m = &self.model;
        let g = &self.gradients;
        let mut u: Vec<Ms> = (0..n).map(|j| self.t[j] + m.compute_round_ms(j)).collect();
        for &(i, j) in g.arcs() {
            let d = m.arc_delay(i, j, g.out_degree(i), g.in_degree(j));
            u[j] = u[j].max(self.t[i] + d);
        }
        let mut next = u.clone();
        let bits = m.workload.model_bits;
        for &(i, j) in overlay.arcs() {
            let d = m.comm_ms(i, j, overlay.out_degree(i), overlay.in_degree(j), bits);
            next[j] = next[j].max(u[i] + d);
        }
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
    use crate::overlay::dcliques::test_topology as topo;
    use crate::timing::two_phase::two_phase_cycle_time;

    #[test]
    fn clock_matches_two_phase_cycle_time() {
        let u = load_underlay(None, &LoadOptions::default()).unwrap();
        let m = NetworkSpec::default().delay_model(&u);
        let t = topo(m.silo_count());
        let mut c = CliqueAveragingClock::new(m.clone(), t.gradient_overlay());
        let o = t.overlay();
        let rounds = 3000;
        let mut last = Vec::new();
        for k in 0..rounds {
            last = c.round_end_times(k, &o).unwrap();
        }
        let slope = last.iter().copied().fold(0.0, f64::max) / rounds as f64;
        let tau = two_phase_cycle_time(&t.name, &t.gradient_overlay(), &t.overlay(), &m)
            .unwrap()
            .cycle_time_ms;
        assert!(
            slope >= tau - 1e-9 && slope - tau < 0.01 * tau,
            "{slope} {tau}"
        );
        assert!(c.round_end_times(0, &o).is_err());
    }
}
