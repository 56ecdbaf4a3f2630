//! A round program in the event engine on a real underlay: who sends what
//! to whom and when, wall-clock per step, bytes and messages per node and
//! per core link.
//!
//! The program is unrolled into a task graph ([`TaskGraph`]):
//!
//! * `Compute(t, i)`: node `i` computes local step `t` (`Tc(i)` ms, the
//!   [`DelayModel`]'s per-step compute time), after its model for step `t`
//!   is ready;
//! * `Msg`: one model transfer (`M` bit) through the [`NetworkModel`]; a hop
//!   or an upload starts when its sender has computed step `t`, a broadcast
//!   when the aggregate exists;
//! * `Join`: zero-time synchronisation (an aggregation once all uploads
//!   arrived; a node's model for step `t+1`, once its incoming model arrived
//!   *and* its own step-`t` computation finished).
//!
//! A node that neither computes nor receives in step `t` keeps its model
//! (no waiting). Nodes advance independently: groups without global
//! communication are not synchronised. Transfer degrees for \[Marfoq20\] eq. (3) are
//! counted per step and phase (uploads/hops vs broadcasts), so with the
//! [`crate::network::MaxPlusNetwork`] a leader's `k` broadcasts each take
//! `k M / Cup`, as in the STAR analysis of the throughput paper.
//!
//! [`TaskGraph::longest_path_ms`] times the same graph with \[Marfoq20\] eq. (3) delays
//! directly (a longest path, the max-plus recurrence), an independent check
//! of the event-driven run with the max-plus network.

use serde::Serialize;
use thiserror::Error;

use super::spec::{Op, Program};
use crate::net::delay::DelayModel;
use crate::network::{MaxPlusNetwork, NetworkModel, Transfer};
use crate::replay::harness::{EventProtocol, Harness, Link};
use crate::units::{Bits, Ms};

/// Why a program could not be timed.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum SimError {
    /// Program and network sizes differ.
    #[error("the program has {program} nodes but the network has {network} silos")]
    SizeMismatch {
        /// Nodes of the program.
        program: usize,
        /// Silos of the delay model.
        network: usize,
    },
    /// Some task never ran (a network model lost a transfer).
    #[error("{0} tasks never completed (a transfer was never delivered)")]
    Stuck(usize),
    /// An availability policy other than `wait`: a round program's task
    /// graph is fixed (every step waits for what it depends on).
    #[error(
        "availability {0}: a round program's steps wait for the silos they depend on; use \
         availability wait"
    )]
    Churn(String),
}

/// What a task does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TaskKind {
    /// Local computation of `node`, ms.
    Compute {
        /// The node.
        node: usize,
        /// Duration, ms.
        ms: Ms,
    },
    /// A model transfer.
    Msg {
        /// Sender.
        from: usize,
        /// Receiver.
        to: usize,
        /// Senders' messages in this step and phase.
        out_deg: usize,
        /// Receiver's messages in this step and phase.
        in_deg: usize,
    },
    /// Zero-time synchronisation.
    Join,
}

/// One task and the tasks that wait for it.
#[derive(Debug, Clone)]
pub struct Task {
    /// What it does.
    pub kind: TaskKind,
    /// Tasks it waits for (all created before it).
    pub deps: Vec<usize>,
}

/// The unrolled program.
#[derive(Debug, Clone)]
pub struct TaskGraph {
    /// Tasks in creation (topological) order.
    pub tasks: Vec<Task>,
    /// `ready[t][i]`: task after which node `i`'s model for step `t+1` is
    /// ready (`None`: time 0), `t = 0..=T`.
    pub ready: Vec<Vec<Option<usize>>>,
    /// Model size, bit.
    pub bits: Bits,
}

impl TaskGraph {
    /// Unrolls `program` with per-step compute times from `delay`.
    pub fn build(program: &Program, delay: &DelayModel) -> Result<TaskGraph, SimError> {
        let n = program.nodes;
        if n != delay.silo_count() {
            return Err(SimError::SizeMismatch {
                program: n,
                network: delay.silo_count(),
            });
        }
        let mut tasks: Vec<Task> = Vec::new();
        let push = |tasks: &mut Vec<Task>, kind, deps: Vec<Option<usize>>| {
            tasks.push(Task {
                kind,
                deps: deps.into_iter().flatten().collect(),
            });
            Some(tasks.len() - 1)
        };
        let tc = |i: usize| delay.compute_round_ms(i) / delay.workload.local_steps.max(1) as f64;
        let mut ready: Vec<Vec<Option<usize>>> = vec![vec![None; n]];
        for step in &program.steps {
            let prev = ready.last().expect("ready[0]").clone();
            let mut done = prev.clone();
            for &i in &step.active {
                done[i] = push(
                    &mut tasks,
                    TaskKind::Compute { node: i, ms: tc(i) },
                    vec![prev[i]],
                );
            }
            // Degrees per phase.
            let msgs = step.messages();
            let mut out_deg = [vec![0usize; n], vec![0usize; n]];
            let mut in_deg = [vec![0usize; n], vec![0usize; n]];
            for m in &msgs {
                out_deg[m.phase as usize][m.from] += 1;
                in_deg[m.phase as usize][m.to] += 1;
            }
            let mut next = done.clone();
            let msg = |tasks: &mut Vec<Task>, from: usize, to: usize, phase: usize, dep| {
                push(
                    tasks,
                    TaskKind::Msg {
                        from,
                        to,
                        out_deg: out_deg[phase][from],
                        in_deg: in_deg[phase][to],
                    },
                    vec![dep],
                )
            };
            for op in &step.ops {
                match op {
                    Op::Hop { from, to } => {
                        let arrive = if from == to {
                            done[*from]
                        } else {
                            msg(&mut tasks, *from, *to, 0, done[*from])
                        };
                        next[*to] = push(&mut tasks, TaskKind::Join, vec![arrive, done[*to]]);
                    }
                    Op::Aggregate {
                        members,
                        leader,
                        targets,
                    } => {
                        let mut deps = Vec::new();
                        for &(m, _) in members {
                            if m == *leader {
                                deps.push(done[m]);
                            } else {
                                deps.push(msg(&mut tasks, m, *leader, 0, done[m]));
                            }
                        }
                        let agg = push(&mut tasks, TaskKind::Join, deps);
                        for &j in targets {
                            let arrive = if j == *leader {
                                agg
                            } else {
                                msg(&mut tasks, *leader, j, 1, agg)
                            };
                            next[j] = push(&mut tasks, TaskKind::Join, vec![arrive, done[j]]);
                        }
                    }
                }
            }
            ready.push(next);
        }
        Ok(TaskGraph {
            tasks,
            ready,
            bits: delay.workload.model_bits,
        })
    }

    /// Completion time of every task with \[Marfoq20\] eq. (3) message delays
    /// ([`MaxPlusNetwork::comm_ms`]), by a longest-path pass, ms.
    pub fn longest_path_ms(&self, delay: &DelayModel) -> Vec<Ms> {
        let net = MaxPlusNetwork::new(delay);
        let mut at = vec![0.0; self.tasks.len()];
        for (k, task) in self.tasks.iter().enumerate() {
            let start = task.deps.iter().map(|&d| at[d]).fold(0.0, f64::max);
            at[k] = start
                + match task.kind {
                    TaskKind::Compute { ms, .. } => ms,
                    TaskKind::Msg {
                        from,
                        to,
                        out_deg,
                        in_deg,
                    } => net.comm_ms(&Transfer {
                        from,
                        to,
                        round: 0,
                        bits: self.bits,
                        out_deg,
                        in_deg,
                    }),
                    TaskKind::Join => 0.0,
                };
        }
        at
    }

    /// End of step `t` (`1..=T`) given task completion times: the latest
    /// time a node's model for step `t+1` is ready, ms.
    pub fn step_ends(&self, at: &[Ms]) -> Vec<Ms> {
        let mut out = Vec::with_capacity(self.ready.len() - 1);
        let mut prev_end: f64 = 0.0;
        for r in &self.ready[1..] {
            let e = r
                .iter()
                .map(|t| t.map_or(0.0, |k| at[k]))
                .fold(prev_end, f64::max);
            out.push(e);
            prev_end = e;
        }
        out
    }
}

/// Message and byte counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counters {
    /// Messages sent per node.
    pub sent_msgs: Vec<u64>,
    /// Messages received per node.
    pub recv_msgs: Vec<u64>,
    /// Bits sent per node.
    pub sent_bits: Vec<f64>,
    /// Bits received per node.
    pub recv_bits: Vec<f64>,
    /// Messages crossing each core link (index into `Underlay::links`).
    pub link_msgs: Vec<u64>,
    /// Bits crossing each core link.
    pub link_bits: Vec<f64>,
}

impl Counters {
    /// Total messages.
    pub fn messages(&self) -> u64 {
        self.sent_msgs.iter().sum()
    }
    /// Total bits sent.
    pub fn bits(&self) -> f64 {
        self.sent_bits.iter().sum()
    }
}

/// The timed run of a program.
#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    /// Network model name.
    pub network: String,
    /// End of every step `1..=T`, ms.
    pub step_ends: Vec<Ms>,
    /// Counters.
    pub counters: Counters,
    /// Events handled by the engine.
    pub events: u64,
}

impl SimResult {
    /// Makespan, ms.
    pub fn makespan_ms(&self) -> Ms {
        self.step_ends.last().copied().unwrap_or(0.0)
    }
    /// Mean wall-clock per step, ms.
    pub fn ms_per_step(&self) -> Ms {
        if self.step_ends.is_empty() {
            0.0
        } else {
            self.makespan_ms() / self.step_ends.len() as f64
        }
    }
}

/// The protocol's timer: task `k` (a computation) finished.
type TaskDone = usize;

/// The task graph as an [`EventProtocol`] on the replay harness: a task
/// starts once every task it waits for completed; a transfer task is one
/// transfer through the network (its task id travels in
/// [`Transfer::round`]).
struct Exec<'a> {
    graph: &'a TaskGraph,
    delay: &'a DelayModel,
    dependents: Vec<Vec<usize>>,
    left: Vec<u32>,
    at: Vec<Ms>,
    completed: usize,
}

impl Exec<'_> {
    fn start_task(&mut self, k: usize, link: &mut Link<'_, TaskDone>) {
        match self.graph.tasks[k].kind {
            TaskKind::Compute { node, ms } => {
                // Paused while the node is down ([`crate::net::dynamics`]).
                let end = self.delay.compute_end_ms(node, link.now(), ms);
                if end.is_finite() {
                    link.schedule_at(end, k);
                }
            }
            TaskKind::Msg {
                from,
                to,
                out_deg,
                in_deg,
            } => link.send(Transfer {
                from,
                to,
                // The task id travels in the round field.
                round: k as u64,
                bits: self.graph.bits,
                out_deg,
                in_deg,
            }),
            TaskKind::Join => self.complete(k, link),
        }
    }

    fn complete(&mut self, k: usize, link: &mut Link<'_, TaskDone>) {
        let now = link.now();
        let mut stack = vec![k];
        while let Some(k) = stack.pop() {
            self.at[k] = now;
            self.completed += 1;
            for idx in 0..self.dependents[k].len() {
                let d = self.dependents[k][idx];
                self.left[d] -= 1;
                if self.left[d] == 0 {
                    if let TaskKind::Join = self.graph.tasks[d].kind {
                        stack.push(d);
                    } else {
                        self.start_task(d, link);
                    }
                }
            }
        }
    }
}

impl EventProtocol for Exec<'_> {
    type Event = TaskDone;
    type Stall = SimError;

    fn start(&mut self, link: &mut Link<'_, TaskDone>) {
        let roots: Vec<usize> = (0..self.left.len())
            .filter(|&k| self.left[k] == 0)
            .collect();
        for k in roots {
            self.start_task(k, link);
        }
    }

    fn on_event(&mut self, k: TaskDone, link: &mut Link<'_, TaskDone>) {
        self.complete(k, link);
    }

    fn on_delivered(&mut self, t: Transfer, link: &mut Link<'_, TaskDone>) {
        self.complete(t.round as usize, link);
    }

    fn finished(&self) -> bool {
        self.completed == self.left.len()
    }

    fn stall(&self) -> SimError {
        SimError::Stuck(self.left.len() - self.completed)
    }
}

/// Counts messages and bits per node and per core link.
pub fn count(graph: &TaskGraph, delay: &DelayModel, links: usize) -> Counters {
    let n = delay.silo_count();
    let mut c = Counters {
        sent_msgs: vec![0; n],
        recv_msgs: vec![0; n],
        sent_bits: vec![0.0; n],
        recv_bits: vec![0.0; n],
        link_msgs: vec![0; links],
        link_bits: vec![0.0; links],
    };
    for task in &graph.tasks {
        if let TaskKind::Msg { from, to, .. } = task.kind {
            c.sent_msgs[from] += 1;
            c.recv_msgs[to] += 1;
            c.sent_bits[from] += graph.bits;
            c.recv_bits[to] += graph.bits;
            for l in delay.connectivity.route(from, to) {
                if l < links {
                    c.link_msgs[l] += 1;
                    c.link_bits[l] += graph.bits;
                }
            }
        }
    }
    c
}

/// Runs `program` on `delay` through `network` in the event engine;
/// `links` is the number of core links of the underlay (for the counters).
pub fn simulate(
    program: &Program,
    delay: &DelayModel,
    network: &mut dyn NetworkModel,
    links: usize,
) -> Result<SimResult, SimError> {
    if let Some(d) = delay.dynamics.as_ref() {
        if d.policy != crate::net::dynamics::AvailabilityPolicy::Wait {
            return Err(SimError::Churn(d.policy.name()));
        }
    }
    let graph = TaskGraph::build(program, delay)?;
    let m = graph.tasks.len();
    let mut dependents = vec![Vec::new(); m];
    let mut left = vec![0u32; m];
    for (k, t) in graph.tasks.iter().enumerate() {
        left[k] = t.deps.len() as u32;
        for &d in &t.deps {
            dependents[d].push(k);
        }
    }
    let exec = Exec {
        graph: &graph,
        delay,
        dependents,
        left,
        at: vec![f64::NAN; m],
        completed: 0,
    };
    let mut h = Harness::new(exec, network);
    h.run_to_end()?;
    let events = h.events();
    let network_name = h.network_name().to_string();
    let at = h.into_protocol().at;
    Ok(SimResult {
        network: network_name,
        step_ends: graph.step_ends(&at),
        counters: count(&graph, delay, links),
        events,
    })
}

/// What the steps of a program cost: bits sent so far and, when timed on
/// an underlay, the wall-clock at which each step ends. Shared by both
/// learners (`program::learn`, `program::train`) to attach bytes and
/// wall-clock to their evaluations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepCosts {
    /// Model size `M` of one message, bit.
    pub model_bits: Bits,
    /// `bits[t-1]`: bits sent in steps `1..=t` (messages of
    /// [`super::Step::messages`] times `M`).
    pub bits: Vec<Bits>,
    /// `ends_ms[t-1]`: wall-clock end of step `t`, ms ([`simulate`]);
    /// `None` when untimed.
    pub ends_ms: Option<Vec<Ms>>,
}

impl StepCosts {
    /// Bits only (no underlay): every message carries `model_bits`.
    pub fn untimed(program: &Program, model_bits: Bits) -> StepCosts {
        let mut messages = 0usize;
        let bits = program
            .steps
            .iter()
            .map(|s| {
                messages += s.messages().len();
                messages as f64 * model_bits
            })
            .collect();
        StepCosts {
            model_bits,
            bits,
            ends_ms: None,
        }
    }

    /// Bits at the delay model's `M` and step ends from the event engine
    /// over `network` (the times `fedtopo tornado time` reports).
    pub fn timed(
        program: &Program,
        delay: &DelayModel,
        network: &mut dyn NetworkModel,
        links: usize,
    ) -> Result<StepCosts, SimError> {
        let r = simulate(program, delay, network, links)?;
        let mut c = StepCosts::untimed(program, delay.workload.model_bits);
        c.ends_ms = Some(r.step_ends);
        Ok(c)
    }

    /// Number of steps covered.
    pub fn steps(&self) -> usize {
        self.bits.len()
    }

    /// Bits sent up to the end of step `t >= 1` (0 for `t = 0`).
    pub fn bits_at(&self, t: u64) -> Bits {
        match t {
            0 => 0.0,
            _ => self.bits[(t - 1) as usize],
        }
    }

    /// Wall-clock end of step `t >= 1`, ms (`None` when untimed; 0 for `t = 0`).
    pub fn ms_at(&self, t: u64) -> Option<Ms> {
        self.ends_ms.as_ref().map(|e| match t {
            0 => 0.0,
            _ => e[(t - 1) as usize],
        })
    }
}
