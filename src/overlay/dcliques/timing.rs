//! Wall-clock timing of D-Cliques rounds with Clique Averaging on a real
//! network (new, not in the paper): nodes are silos of an underlay.
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
//! Gradients have the size of the model. With \[Marfoq20\] eq. (3) delays and the
//! degrees of each phase's overlay (`dg`, `dm` = communication part of
//! \[Marfoq20\] eq. 3, without the computation):
//!
//! ```text
//! u_j(k)   = max( t_j(k) + s Tc(j),  max_{i in Ng(j)} t_i(k) + s Tc(i) + dg(i,j) )
//! t_j(k+1) = max( u_j(k),            max_{i in Nm(j)} u_i(k) + dm(i,j) )
//! ```
//!
//! i.e. `t(k+1) = Am (x) Ag (x) t(k)` in max-plus algebra; the cycle time
//! is the maximum cycle mean of the product matrix (Howard). The event
//! replay [`replay_clique_averaging`] runs the same protocol message by
//! message over any [`NetworkModel`] (with the max-plus network it equals
//! the recurrence exactly; with the flow network, gradients and models
//! share links).

use std::collections::HashMap;

use serde::Serialize;

use crate::delay::DelayModel;
use crate::engine::{run, Handler, Scheduler};
use crate::maxplus::{self, Arc, WeightedDigraph};
use crate::network::{EngineTimers, NetEvent, NetworkModel, Transfer};
use crate::overlay::Overlay;
use crate::timing::{Timing, TimingError};
use crate::units::Ms;

use super::CliqueTopology;

fn check(t: &CliqueTopology, model: &DelayModel) -> Result<(), TimingError> {
    if t.node_count() != model.silo_count() {
        return Err(TimingError::SizeMismatch {
            overlay: t.node_count(),
            network: model.silo_count(),
        });
    }
    Ok(())
}

/// Communication part of \[Marfoq20\] eq. (3) for arc `i -> j` of `o`, ms.
fn comm(model: &DelayModel, o: &Overlay, i: usize, j: usize) -> Ms {
    model.arc_delay(i, j, o.out_degree(i), o.in_degree(j)) - model.compute_round_ms(i)
}

/// The max-plus digraph of one Clique Averaging round: arc `i -> j` with
/// weight `max_l (Ag(l,i) + Am(j,l))`, the longest path from `t_i(k)` to
/// `t_j(k+1)` through the two phases (module docs).
pub fn clique_averaging_graph(
    t: &CliqueTopology,
    model: &DelayModel,
) -> Result<WeightedDigraph, TimingError> {
    check(t, model)?;
    let n = t.node_count();
    let g = t.gradient_overlay();
    let m = t.overlay();
    // Phase 1 arcs into l: (i, weight), self included.
    let mut into: Vec<Vec<(usize, f64)>> = (0..n)
        .map(|l| vec![(l, model.compute_round_ms(l))])
        .collect();
    for &(i, l) in g.arcs() {
        into[l].push((i, model.compute_round_ms(i) + comm(model, &g, i, l)));
    }
    // Phase 2 arcs out of l: (j, weight), self included.
    let mut out: Vec<Vec<(usize, f64)>> = (0..n).map(|l| vec![(l, 0.0)]).collect();
    for &(l, j) in m.arcs() {
        out[l].push((j, comm(model, &m, l, j)));
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
        overlay: t.name.clone(),
        source,
    })
}

/// Cycle time (ms per round) of Clique Averaging rounds on `model`.
pub fn clique_averaging_cycle_time(
    t: &CliqueTopology,
    model: &DelayModel,
) -> Result<Timing, TimingError> {
    let g = clique_averaging_graph(t, model)?;
    let c = maxplus::howard(&g).map_err(|source| TimingError::MaxPlus {
        overlay: t.name.clone(),
        source,
    })?;
    Ok(Timing {
        cycle_time_ms: c.value,
        critical_circuit: c.circuit,
    })
}

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
    pub network_stats: crate::network::NetworkStats,
}

impl CliqueReplay {
    /// As a [`crate::replay::ReplayResult`] (for the replay reports);
    /// `transfers` counts gradient and model messages.
    pub fn into_replay_result(self) -> crate::replay::ReplayResult {
        crate::replay::ReplayResult {
            overlay: self.topology,
            network: self.network,
            starts: self.starts,
            events: self.events,
            transfers: self.gradient_messages + self.model_messages,
            arc_transfers: self.arc_transfers,
            network_stats: self.network_stats,
        }
    }

    /// Mean round duration, `max_i t_i(K) / K`, ms.
    pub fn mean_round_ms(&self) -> Ms {
        let k = self.starts.len() - 1;
        let last = self.starts[k].iter().copied().fold(0.0, f64::max);
        last / k.max(1) as f64
    }
}

enum Ev {
    ComputeDone(usize),
    Net(u64),
}

impl NetEvent for Ev {
    fn net_timer(token: u64) -> Self {
        Ev::Net(token)
    }
}

struct Sim<'a> {
    delay: &'a DelayModel,
    net: &'a mut dyn NetworkModel,
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
    received: HashMap<(usize, u64), usize>,
    delivered: Vec<Transfer>,
    starts: Vec<Vec<Ms>>,
    gradient_messages: u64,
    model_messages: u64,
    arc_transfers: HashMap<(usize, usize), u64>,
}

impl Sim<'_> {
    fn start_round(&mut self, i: usize, k: u64, now: Ms, q: &mut Scheduler<Ev>) {
        self.round[i] = k;
        self.phase[i] = 0;
        self.compute_done[i] = false;
        self.starts[k as usize][i] = now;
        if k < self.rounds {
            q.schedule_at(now + self.delay.compute_round_ms(i), Ev::ComputeDone(i));
        }
    }

    fn send(&mut self, o_is_grad: bool, from: usize, to: usize, k: u64, q: &mut Scheduler<Ev>) {
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
        self.net.start(t, &mut EngineTimers(q), &mut self.delivered);
    }

    fn got(&self, i: usize, key: u64) -> usize {
        self.received.get(&(i, key)).copied().unwrap_or(0)
    }

    fn advance(&mut self, i: usize, q: &mut Scheduler<Ev>) {
        loop {
            let k = self.round[i];
            if k >= self.rounds {
                return;
            }
            let now = q.now();
            if self.phase[i] == 0 {
                if !self.compute_done[i] || self.got(i, 2 * k) < self.g.in_degree(i) {
                    return;
                }
                self.received.remove(&(i, 2 * k));
                self.phase[i] = 1;
                for j in self.m_out[i].clone() {
                    self.send(false, i, j, k, q);
                }
            } else {
                if self.got(i, 2 * k + 1) < self.m.in_degree(i) {
                    return;
                }
                self.received.remove(&(i, 2 * k + 1));
                self.start_round(i, k + 1, now, q);
                return;
            }
        }
    }
}

impl Handler<Ev> for Sim<'_> {
    fn handle(&mut self, _now: Ms, ev: Ev, q: &mut Scheduler<Ev>) {
        match ev {
            Ev::ComputeDone(i) => {
                self.compute_done[i] = true;
                let k = self.round[i];
                for j in self.g_out[i].clone() {
                    self.send(true, i, j, k, q);
                }
                self.advance(i, q);
            }
            Ev::Net(token) => self
                .net
                .on_timer(token, &mut EngineTimers(q), &mut self.delivered),
        }
        while let Some(t) = self.delivered.pop() {
            *self.received.entry((t.to, t.round)).or_insert(0) += 1;
            self.advance(t.to, q);
        }
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
}

/// Replays `rounds` Clique Averaging rounds of `t` message by message over
/// `network` (gradients to clique neighbours, then models to all
/// neighbours; module docs). `t_i(0) = 0`.
pub fn replay_clique_averaging(
    t: &CliqueTopology,
    delay: &DelayModel,
    network: &mut dyn NetworkModel,
    rounds: u64,
) -> Result<CliqueReplay, CliqueReplayError> {
    check(t, delay)?;
    let n = t.node_count();
    let g = t.gradient_overlay();
    let m = t.overlay();
    let mut sim = Sim {
        delay,
        net: network,
        g_out: g.out_neighbours(),
        m_out: m.out_neighbours(),
        g,
        m,
        rounds,
        round: vec![0; n],
        phase: vec![0; n],
        compute_done: vec![false; n],
        received: HashMap::new(),
        delivered: Vec::new(),
        starts: vec![vec![f64::NAN; n]; rounds as usize + 1],
        gradient_messages: 0,
        model_messages: 0,
        arc_transfers: HashMap::new(),
    };
    let mut q = Scheduler::new();
    for i in 0..n {
        sim.start_round(i, 0, 0.0, &mut q);
    }
    let stats = run(&mut q, &mut sim, None);
    if let Some(i) = (0..n).find(|&i| sim.round[i] < rounds) {
        return Err(CliqueReplayError::Deadlock {
            silo: i,
            round: sim.round[i],
        });
    }
    let mut arc_transfers: Vec<_> = sim.arc_transfers.into_iter().collect();
    arc_transfers.sort_unstable();
    Ok(CliqueReplay {
        arc_transfers,
        network_stats: sim.net.stats(),
        topology: t.name.clone(),
        network: sim.net.name().to_string(),
        starts: sim.starts,
        gradient_messages: sim.gradient_messages,
        model_messages: sim.model_messages,
        events: stats.events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maxplus::{recurrence_slope, Recurrence};
    use crate::network::{FlowNetwork, MaxPlusNetwork};
    use crate::overlay::dcliques::{
        build_topology, DCliquesOptions, InterClique, LabelDistributions, TopologyKind,
    };
    use crate::scenario::{load_underlay, NetworkSpec};
    use crate::underlay::LoadOptions;

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
                let graph = clique_averaging_graph(&t, &m).unwrap();
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
                let tau = clique_averaging_cycle_time(&t, &m).unwrap().cycle_time_ms;
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
        assert!(clique_averaging_cycle_time(&t, &m).is_err());
        assert!(replay_clique_averaging(&t, &m, &mut MaxPlusNetwork::new(&m), 2).is_err());
    }
}
