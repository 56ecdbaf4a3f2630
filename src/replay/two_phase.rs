//! Event replay of two-phase Clique Averaging rounds (D-Cliques, Bellet et
//! al. 2021) as an [`EventProtocol`] on the [`super::harness`]: gradients
//! to clique neighbours, then models to all neighbours, message by message
//! over any [`NetworkModel`]. The rounds and their max-plus recurrence are
//! described in [`crate::timing::two_phase`]; with the
//! [`crate::network::MaxPlusNetwork`] the replay equals that recurrence.

use crate::engine::fx::FxHashMap;

use serde::Serialize;

use super::harness::{EventProtocol, Harness, Link};
use crate::graph::Overlay;
use crate::net::delay::DelayModel;
use crate::network::{NetworkModel, NetworkStats, Transfer};
use crate::overlay::dcliques::CliqueTopology;
use crate::timing::TimingError;
use crate::units::Ms;

/// Result of [`replay_clique_averaging`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CliqueReplay {
    /// Topology name.
    pub topology: String,
    /// Network model name.
    pub network: String,
    /// `starts[k][i]`: time silo `i` starts round `k`, ms.
    pub starts: Vec<Vec<Ms>>,
    /// Gradient messages sent.
    pub gradient_messages: u64,
    /// Model messages sent.
    pub model_messages: u64,
    /// Events handled.
    pub events: u64,
    /// Messages (gradients and models) per ordered silo pair, sorted.
    pub arc_transfers: Vec<((usize, usize), u64)>,
    /// Network counters.
    pub network_stats: NetworkStats,
}

impl CliqueReplay {
    /// As a [`super::ReplayResult`] (for the replay reports); `transfers`
    /// counts gradient and model messages.
    pub fn into_replay_result(self) -> super::ReplayResult {
        super::ReplayResult {
            overlay: self.topology,
            network: self.network,
            starts: self.starts,
            events: self.events,
            transfers: self.gradient_messages + self.model_messages,
            arc_transfers: self.arc_transfers,
            network_stats: self.network_stats,
            trace: None,
            breakdown: None,
            churn: None,
        }
    }

    /// Mean round duration, `max_i t_i(K) / K`, ms.
    pub fn mean_round_ms(&self) -> Ms {
        let k = self.starts.len() - 1;
        let last = self.starts[k].iter().copied().fold(0.0, f64::max);
        last / k.max(1) as f64
    }
}

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
pub enum CliqueReplayError {
    /// Sizes or graph problems.
    #[error(transparent)]
    Timing(#[from] TimingError),
    /// Some silo never finished (a network model lost a message).
    #[error("replay stalled: silo {silo} stuck in round {round}")]
    Deadlock {
        /// Silo.
        silo: usize,
        /// Round.
        round: u64,
    },
    /// An availability policy other than `wait` (not covered by Clique
    /// Averaging's two phases).
    #[error(
        "availability {0}: Clique Averaging's two-phase rounds only wait for silos that are \
         down; use availability wait"
    )]
    Churn(String),
}

/// The protocol's timer: silo `i` finished computing its gradient.
type ComputeDone = usize;

/// Two-phase rounds `0..rounds` (module docs).
struct TwoPhaseProtocol<'a> {
    delay: &'a DelayModel,
    g: Overlay,
    m: Overlay,
    g_out: Vec<Vec<usize>>,
    m_out: Vec<Vec<usize>>,
    rounds: u64,
    round: Vec<u64>,
    /// 0: computing / waiting for gradients; 1: waiting for models.
    phase: Vec<u8>,
    compute_done: Vec<bool>,
    /// Messages received, keyed by (receiver, 2 * round + phase).
    received: FxHashMap<(usize, u64), usize>,
    starts: Vec<Vec<Ms>>,
    gradient_messages: u64,
    model_messages: u64,
    arc_transfers: FxHashMap<(usize, usize), u64>,
}

impl TwoPhaseProtocol<'_> {
    fn start_round(&mut self, i: usize, k: u64, now: Ms, link: &mut Link<'_, ComputeDone>) {
        self.round[i] = k;
        self.phase[i] = 0;
        self.compute_done[i] = false;
        self.starts[k as usize][i] = now;
        if k < self.rounds {
            let end = self
                .delay
                .compute_end_ms(i, now, self.delay.compute_round_ms(i));
            if end.is_finite() {
                link.schedule_at(end, i);
            }
        }
    }

    fn send(
        &mut self,
        o_is_grad: bool,
        from: usize,
        to: usize,
        k: u64,
        link: &mut Link<'_, ComputeDone>,
    ) {
        let o = if o_is_grad { &self.g } else { &self.m };
        let t = Transfer {
            from,
            to,
            round: 2 * k + u64::from(!o_is_grad),
            bits: self.delay.workload.model_bits,
            out_deg: o.out_degree(from),
            in_deg: o.in_degree(to),
        };
        *self.arc_transfers.entry((from, to)).or_insert(0) += 1;
        if o_is_grad {
            self.gradient_messages += 1;
        } else {
            self.model_messages += 1;
        }
        link.send(t);
    }

    fn got(&self, i: usize, key: u64) -> usize {
        self.received.get(&(i, key)).copied().unwrap_or(0)
    }

    fn advance(&mut self, i: usize, link: &mut Link<'_, ComputeDone>) {
        loop {
            let k = self.round[i];
            if k >= self.rounds {
                return;
            }
            let now = link.now();
            if self.phase[i] == 0 {
                if !self.compute_done[i] || self.got(i, 2 * k) < self.g.in_degree(i) {
                    return;
                }
                self.received.remove(&(i, 2 * k));
                self.phase[i] = 1;
                for j in self.m_out[i].clone() {
                    self.send(false, i, j, k, link);
                }
            } else {
                if self.got(i, 2 * k + 1) < self.m.in_degree(i) {
                    return;
                }
                self.received.remove(&(i, 2 * k + 1));
                self.start_round(i, k + 1, now, link);
                return;
            }
        }
    }
}

impl EventProtocol for TwoPhaseProtocol<'_> {
    type Event = ComputeDone;
    type Stall = CliqueReplayError;

    fn start(&mut self, link: &mut Link<'_, ComputeDone>) {
        for i in 0..self.round.len() {
            self.start_round(i, 0, 0.0, link);
        }
    }

    fn on_event(&mut self, i: ComputeDone, link: &mut Link<'_, ComputeDone>) {
        self.compute_done[i] = true;
        let k = self.round[i];
        for j in self.g_out[i].clone() {
            self.send(true, i, j, k, link);
        }
        self.advance(i, link);
    }

    fn on_delivered(&mut self, t: Transfer, link: &mut Link<'_, ComputeDone>) {
        *self.received.entry((t.to, t.round)).or_insert(0) += 1;
        self.advance(t.to, link);
    }

    fn finished(&self) -> bool {
        self.round.iter().all(|&k| k >= self.rounds)
    }

    fn stall(&self) -> CliqueReplayError {
        let silo = self
            .round
            .iter()
            .position(|&k| k < self.rounds)
            .unwrap_or(0);
        CliqueReplayError::Deadlock {
            silo,
            round: self.round.get(silo).copied().unwrap_or(0),
        }
    }
}

/// Replays `rounds` Clique Averaging rounds of `t` message by message over
/// `network` (gradients to clique neighbours, then models to all
/// neighbours; module docs). `t_i(0) = 0`.
///
/// # Errors
/// [`CliqueReplayError::Timing`] when `t` and `delay` disagree on the
/// number of silos, [`CliqueReplayError::Deadlock`] when a silo never
/// finishes.
pub fn replay_clique_averaging(
    t: &CliqueTopology,
    delay: &DelayModel,
    network: &mut dyn NetworkModel,
    rounds: u64,
) -> Result<CliqueReplay, CliqueReplayError> {
    if t.node_count() != delay.silo_count() {
        return Err(TimingError::SizeMismatch {
            overlay: t.node_count(),
            network: delay.silo_count(),
        }
        .into());
    }
    if let Some(d) = delay.dynamics.as_ref() {
        if d.policy != crate::net::dynamics::AvailabilityPolicy::Wait {
            return Err(CliqueReplayError::Churn(d.policy.name()));
        }
    }
    let n = t.node_count();
    let g = t.gradient_overlay();
    let m = t.overlay();
    let protocol = TwoPhaseProtocol {
        delay,
        g_out: g.out_neighbours(),
        m_out: m.out_neighbours(),
        g,
        m,
        rounds,
        round: vec![0; n],
        phase: vec![0; n],
        compute_done: vec![false; n],
        received: FxHashMap::default(),
        starts: vec![vec![f64::NAN; n]; rounds as usize + 1],
        gradient_messages: 0,
        model_messages: 0,
        arc_transfers: FxHashMap::default(),
    };
    let mut h = Harness::new(protocol, network);
    h.run_to_end()?;
    let events = h.events();
    let network = h.network_name().to_string();
    let network_stats = h.network_stats();
    let p = h.into_protocol();
    let mut arc_transfers: Vec<_> = p.arc_transfers.into_iter().collect();
    arc_transfers.sort_unstable();
    Ok(CliqueReplay {
        arc_transfers,
        network_stats,
        topology: t.name.clone(),
        network,
        starts: p.starts,
        gradient_messages: p.gradient_messages,
        model_messages: p.model_messages,
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maxplus::{recurrence_slope, Recurrence};
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;
    use crate::network::{FlowNetwork, MaxPlusNetwork};
    use crate::overlay::dcliques::{
        build_topology, DCliquesOptions, InterClique, LabelDistributions, TopologyKind,
    };
    use crate::timing::two_phase::{two_phase_cycle_time, two_phase_graph};

    fn model(access_bps: f64) -> DelayModel {
        let u = load_underlay(None, &LoadOptions::default()).unwrap();
        NetworkSpec {
            access_bps,
            ..NetworkSpec::default()
        }
        .delay_model(&u)
    }

    fn topologies(n: usize) -> Vec<CliqueTopology> {
        let labels = LabelDistributions::one_class_per_node(n, 4).unwrap();
        let o = DCliquesOptions {
            max_size: 4,
            steps: 100,
            ..DCliquesOptions::default()
        };
        let mut v = Vec::new();
        for inter in [
            InterClique::Ring,
            InterClique::Full,
            InterClique::SmallWorld { ns: 2 },
        ] {
            let k = TopologyKind::DCliques {
                construction: crate::overlay::dcliques::Construction::Greedy,
                inter,
            };
            v.push(build_topology(k, &labels, &o).unwrap());
        }
        v.push(build_topology(TopologyKind::RandomRegular { degree: 4 }, &labels, &o).unwrap());
        v
    }

    /// Two-phase recurrence written out directly (module docs), one round.
    fn two_phase_step(t: &CliqueTopology, m: &DelayModel, x: &[f64]) -> Vec<f64> {
        let g = t.gradient_overlay();
        let o = t.overlay();
        let n = x.len();
        let mut u: Vec<f64> = (0..n).map(|j| x[j] + m.compute_round_ms(j)).collect();
        for &(i, j) in g.arcs() {
            let d = m.arc_delay(i, j, g.out_degree(i), g.in_degree(j));
            u[j] = u[j].max(x[i] + d);
        }
        let mut y = u.clone();
        for &(i, j) in o.arcs() {
            let d = m.arc_delay(i, j, o.out_degree(i), o.in_degree(j)) - m.compute_round_ms(i);
            y[j] = y[j].max(u[i] + d);
        }
        y
    }

    #[test]
    fn replay_equals_two_phase_recurrence_and_howard() {
        for access in [1e10, 1e8] {
            let m = model(access);
            let n = m.silo_count();
            for t in topologies(n) {
                let rounds = 30;
                let r =
                    replay_clique_averaging(&t, &m, &mut MaxPlusNetwork::new(&m), rounds).unwrap();
                let graph =
                    two_phase_graph(&t.name, &t.gradient_overlay(), &t.overlay(), &m).unwrap();
                let mut rec = Recurrence::new(&graph, vec![0.0; n]).unwrap();
                let mut x = vec![0.0; n];
                for k in 1..=rounds as usize {
                    x = two_phase_step(&t, &m, &x);
                    let p = rec.next();
                    for i in 0..n {
                        let tol = 1e-9 * x[i].max(1.0);
                        assert!(
                            (r.starts[k][i] - x[i]).abs() <= tol,
                            "{} k={k} i={i}",
                            t.name
                        );
                        assert!((p[i] - x[i]).abs() <= tol, "{} k={k} i={i}", t.name);
                    }
                }
                let tau = two_phase_cycle_time(&t.name, &t.gradient_overlay(), &t.overlay(), &m)
                    .unwrap()
                    .cycle_time_ms;
                let slope = recurrence_slope(&graph, &vec![0.0; n], 2000);
                assert!(
                    slope >= tau - 1e-9 && slope - tau < 0.02 * tau,
                    "{} {slope} {tau}",
                    t.name
                );
                assert_eq!(
                    r.gradient_messages,
                    rounds * 2 * t.intra_edges().len() as u64
                );
                assert_eq!(r.model_messages, rounds * 2 * t.edges().len() as u64);
                // The gradient phase costs time: never faster than plain D-SGD.
                let plain = crate::timing::cycle_time(&t.overlay(), &m)
                    .unwrap()
                    .cycle_time_ms;
                assert!(tau >= plain - 1e-9 * plain, "{} {tau} < {plain}", t.name);
                if t.intra_edges().is_empty() {
                    assert!((tau - plain).abs() <= 1e-9 * plain);
                }
            }
        }
    }

    #[test]
    fn flow_replay_runs_and_counts() {
        let m = model(1e8);
        let t = &topologies(m.silo_count())[1];
        let r = replay_clique_averaging(t, &m, &mut FlowNetwork::new(&m), 5).unwrap();
        assert!(r.mean_round_ms() > 0.0);
        assert_eq!(r.model_messages, 5 * 2 * t.edges().len() as u64);
    }

    #[test]
    fn size_mismatch_is_an_error() {
        let m = model(1e10);
        let labels = LabelDistributions::one_class_per_node(m.silo_count() + 1, 2).unwrap();
        let t =
            build_topology(TopologyKind::DEFAULT, &labels, &DCliquesOptions::default()).unwrap();
        assert!(replay_clique_averaging(&t, &m, &mut MaxPlusNetwork::new(&m), 2).is_err());
    }
}
