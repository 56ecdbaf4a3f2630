//! The general round-program representation: [`ProgramSpec`] (groups,
//! intra- and inter-group operation, intervals) generates the [`Step`]s.

use serde::Serialize;
use thiserror::Error;

use crate::mixing::{ConsensusError, ConsensusMatrix};

/// Intra-group operation, run every `tau1` steps in every active group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Intra {
    /// All members compute; every `tau1` steps they upload to the group
    /// leader, which broadcasts the data-weighted average back (\[Lee21\] eq. 4).
    Star,
    /// `chains` models travel the group's ring: in step `t` chain `c` is held
    /// by ring position `(j + c) mod |N^k|`, `j = floor((t-1)/tau1)`; only the
    /// holders compute; every `tau1` steps each holder hands its model to the
    /// next position (\[Lee21\] Definition 4, Algorithm 2 lines 7-11). Capped at the
    /// group size \[derived\].
    Ring {
        /// Chains per group ring, `C >= 1`.
        chains: usize,
    },
}

/// Inter-group operation, run every `tau1*tau2` steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Inter {
    /// No global communication (pluralistic groups: *stars*, *rings*).
    None,
    /// Global aggregation at the server: every participating model (all
    /// nodes under [`Intra::Star`], the chain holders under [`Intra::Ring`])
    /// is uploaded to the server, which broadcasts the average to every node.
    /// Weights: `|D^i|` per node under `Star`; `|D^k| / C_k` per chain model
    /// of group `k` under `Ring` (\[Lee21\] eq. 4's `sum_k |D^k|/|D| w^k`) \[derived\].
    Star,
    /// Ring of groups carried by `chains` chains (\[Lee21\] Definition 5, Algorithm 1):
    /// in period `l = floor((t-1)/(tau1 tau2))` chain `c` is in group
    /// `ring[(l + c) mod G]`; only the nodes of those groups compute; at the
    /// end of the period each chain's group aggregate (at its leader) is sent
    /// to every node of group `ring[(l + 1 + c) mod G]`.
    Ring {
        /// Chains on the ring of groups, `1 <= C <= G`.
        chains: usize,
    },
}

/// One communication operation of a step (snapshot semantics).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Op {
    /// `w[to] <- w[from]`: a ring hop, one message unless `from == to`.
    Hop {
        /// Holder handing off.
        from: usize,
        /// Next holder.
        to: usize,
    },
    /// `w[target] <- sum_m weight_m w[m] / sum_m weight_m` for every target:
    /// members other than the leader upload to the leader (phase 0), the
    /// leader sends the result to every target other than itself (phase 1).
    Aggregate {
        /// Participating models and their (unnormalised) weights.
        members: Vec<(usize, f64)>,
        /// Node that aggregates.
        leader: usize,
        /// Nodes that receive the aggregate.
        targets: Vec<usize>,
    },
}

/// One model message of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Message {
    /// Sender.
    pub from: usize,
    /// Receiver.
    pub to: usize,
    /// 0: hop or upload (after the sender's computation); 1: broadcast of an
    /// aggregate (after the aggregation).
    pub phase: u8,
}

/// Step `t`: who computes, then which operations run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Step number, from 1.
    pub t: u64,
    /// Nodes computing one local step, sorted.
    pub active: Vec<usize>,
    /// Operations after the computation, snapshot semantics.
    pub ops: Vec<Op>,
    /// True when this step ends with the inter-group operation.
    pub barrier: bool,
}

impl Step {
    /// Every message of the step, in operation order (phase 0 before
    /// phase 1 within an aggregation). Self-messages are omitted.
    pub fn messages(&self) -> Vec<Message> {
        let mut out = Vec::new();
        for op in &self.ops {
            match op {
                Op::Hop { from, to } => {
                    if from != to {
                        out.push(Message {
                            from: *from,
                            to: *to,
                            phase: 0,
                        });
                    }
                }
                Op::Aggregate {
                    members,
                    leader,
                    targets,
                } => {
                    for &(m, _) in members {
                        if m != *leader {
                            out.push(Message {
                                from: m,
                                to: *leader,
                                phase: 0,
                            });
                        }
                    }
                    for &j in targets {
                        if j != *leader {
                            out.push(Message {
                                from: *leader,
                                to: j,
                                phase: 1,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    /// Nodes written by the operations, in order (each at most once).
    pub fn targets(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for op in &self.ops {
            match op {
                Op::Hop { to, .. } => out.push(*to),
                Op::Aggregate { targets, .. } => out.extend_from_slice(targets),
            }
        }
        out
    }

    /// The step's operations as a row-stochastic `n x n` mixing matrix
    /// `A` with `w_new[i] = sum_j A[i][j] w[j]` (identity rows for nodes no
    /// operation writes): every operation is linear, and snapshot semantics
    /// is exactly "multiply by `A` once". The bridge to consensus-matrix
    /// trainers, checked as [`ConsensusMatrix::from_rows`] checks a matrix.
    ///
    /// # Errors
    /// Weights that do not make a row-stochastic matrix (an aggregate whose
    /// weights sum to 0, a non-finite weight).
    pub fn mixing_matrix(&self, n: usize) -> Result<ConsensusMatrix, ConsensusError> {
        let mut a = ConsensusMatrix::identity(n);
        for op in &self.ops {
            match op {
                Op::Hop { from, to } => {
                    let row = a.row_mut(*to);
                    row.fill(0.0);
                    row[*from] = 1.0;
                }
                Op::Aggregate {
                    members, targets, ..
                } => {
                    let total: f64 = members.iter().map(|m| m.1).sum();
                    let mut r = vec![0.0; n];
                    for &(m, w) in members {
                        r[m] += w / total;
                    }
                    for &j in targets {
                        a.row_mut(j).copy_from_slice(&r);
                    }
                }
            }
        }
        a.checked()?;
        Ok(a)
    }

    /// Applies the operations to `models` (one parameter vector per node)
    /// with snapshot semantics: all results are computed from the models as
    /// they are on entry, then assigned. The reference semantics the trainer
    /// and the tests follow.
    pub fn apply(&self, models: &mut [Vec<f64>]) {
        let mut writes: Vec<(usize, Vec<f64>)> = Vec::new();
        for op in &self.ops {
            match op {
                Op::Hop { from, to } => writes.push((*to, models[*from].clone())),
                Op::Aggregate {
                    members, targets, ..
                } => {
                    let total: f64 = members.iter().map(|m| m.1).sum();
                    let dim = models[members[0].0].len();
                    let mut avg = vec![0.0; dim];
                    for &(m, w) in members {
                        for (a, x) in avg.iter_mut().zip(&models[m]) {
                            *a += w / total * x;
                        }
                    }
                    for &j in targets {
                        writes.push((j, avg.clone()));
                    }
                }
            }
        }
        for (j, w) in writes {
            models[j] = w;
        }
    }
}

/// Why a program specification is invalid.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum ProgramError {
    /// No nodes.
    #[error("a program needs at least one node")]
    NoNodes,
    /// A group is empty.
    #[error("group {0} is empty")]
    EmptyGroup(usize),
    /// A node is out of range.
    #[error("node {node} in the groups is out of range (there are {n} nodes)")]
    NodeOutOfRange {
        /// The node.
        node: usize,
        /// Number of nodes.
        n: usize,
    },
    /// The groups are not a partition.
    #[error("node {0} is in no group or in more than one group; groups must partition the nodes")]
    NotAPartition(usize),
    /// A zero interval.
    #[error("intervals must be >= 1 (tau1 = {tau1}, tau2 = {tau2})")]
    ZeroInterval {
        /// tau1.
        tau1: u64,
        /// tau2.
        tau2: u64,
    },
    /// A zero or too large chain count.
    #[error("chains must be between 1 and {max}, got {chains}")]
    BadChains {
        /// Requested chains.
        chains: usize,
        /// Largest allowed.
        max: usize,
    },
    /// Ring of rings (RING-rings) is not supported.
    #[error("a ring of groups with rings inside groups (RING-rings) is not supported")]
    RingOfRings,
    /// Weights are missing or not finite and positive.
    #[error("need one finite data size > 0 per node ({n} nodes), got {got} (first bad: {bad:?})")]
    BadWeights {
        /// Nodes.
        n: usize,
        /// Weights given.
        got: usize,
        /// First invalid value.
        bad: Option<f64>,
    },
    /// A leader or the server is out of range.
    #[error("{what} {node} is out of range (there are {n} nodes)")]
    BadLeader {
        /// `leader` or `server`.
        what: &'static str,
        /// The node.
        node: usize,
        /// Number of nodes.
        n: usize,
    },
    /// The ring of groups is not a permutation of the groups.
    #[error("the ring of groups must be a permutation of 0..{0}")]
    BadGroupRing(usize),
}

/// The parameters that generate a program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProgramSpec {
    /// Number of nodes `N`.
    pub nodes: usize,
    /// Groups `N^k`, a partition of `0..N`; each group listed in ring order.
    pub groups: Vec<Vec<usize>>,
    /// Aggregator of each group (need not be a member).
    pub leaders: Vec<usize>,
    /// Global aggregator (a node of the underlay).
    pub server: usize,
    /// Ring order of the groups (a permutation of `0..G`).
    pub group_ring: Vec<usize>,
    /// Data size `|D^i|` of every node (aggregation weights).
    pub data_sizes: Vec<f64>,
    /// Intra-group operation.
    pub intra: Intra,
    /// Inter-group operation.
    pub inter: Inter,
    /// Steps between intra-group operations.
    pub tau1: u64,
    /// Intra-group periods between inter-group operations.
    pub tau2: u64,
}

impl ProgramSpec {
    /// A spec with leaders = first member of each group, server 0, the
    /// groups' ring in index order and equal data sizes; validated.
    pub fn new(
        groups: Vec<Vec<usize>>,
        intra: Intra,
        inter: Inter,
        tau1: u64,
        tau2: u64,
    ) -> Result<ProgramSpec, ProgramError> {
        let nodes = groups.iter().map(Vec::len).sum();
        let leaders = groups
            .iter()
            .map(|g| g.first().copied().unwrap_or(0))
            .collect();
        let spec = ProgramSpec {
            nodes,
            group_ring: (0..groups.len()).collect(),
            groups,
            leaders,
            server: 0,
            data_sizes: vec![1.0; nodes],
            intra,
            inter,
            tau1,
            tau2,
        };
        spec.validate()?;
        Ok(spec)
    }

    /// Checks every invariant the generator relies on.
    pub fn validate(&self) -> Result<(), ProgramError> {
        let n = self.nodes;
        if n == 0 {
            return Err(ProgramError::NoNodes);
        }
        let mut seen = vec![0u32; n];
        for (k, g) in self.groups.iter().enumerate() {
            if g.is_empty() {
                return Err(ProgramError::EmptyGroup(k));
            }
            for &i in g {
                if i >= n {
                    return Err(ProgramError::NodeOutOfRange { node: i, n });
                }
                seen[i] += 1;
            }
        }
        if let Some(i) = seen.iter().position(|&c| c != 1) {
            return Err(ProgramError::NotAPartition(i));
        }
        if self.tau1 == 0 || self.tau2 == 0 {
            return Err(ProgramError::ZeroInterval {
                tau1: self.tau1,
                tau2: self.tau2,
            });
        }
        let g = self.groups.len();
        if let Intra::Ring { chains } = self.intra {
            if chains == 0 {
                return Err(ProgramError::BadChains { chains, max: n });
            }
        }
        if let Inter::Ring { chains } = self.inter {
            if chains == 0 || chains > g {
                return Err(ProgramError::BadChains { chains, max: g });
            }
            if matches!(self.intra, Intra::Ring { .. }) {
                return Err(ProgramError::RingOfRings);
            }
        }
        let bad = self
            .data_sizes
            .iter()
            .copied()
            .find(|w| !(w.is_finite() && *w > 0.0));
        if self.data_sizes.len() != n || bad.is_some() {
            return Err(ProgramError::BadWeights {
                n,
                got: self.data_sizes.len(),
                bad,
            });
        }
        if self.leaders.len() != g {
            return Err(ProgramError::BadLeader {
                what: "leader list of length",
                node: self.leaders.len(),
                n: g,
            });
        }
        for &l in &self.leaders {
            if l >= n {
                return Err(ProgramError::BadLeader {
                    what: "leader",
                    node: l,
                    n,
                });
            }
        }
        if self.server >= n {
            return Err(ProgramError::BadLeader {
                what: "server",
                node: self.server,
                n,
            });
        }
        let mut ring = self.group_ring.clone();
        ring.sort_unstable();
        if ring != (0..g).collect::<Vec<_>>() {
            return Err(ProgramError::BadGroupRing(g));
        }
        Ok(())
    }

    /// Chains of group `k` under [`Intra::Ring`] (capped at the group size).
    fn chains_in(&self, k: usize) -> usize {
        match self.intra {
            Intra::Ring { chains } => chains.min(self.groups[k].len()),
            Intra::Star => 0,
        }
    }

    /// Groups active in step `t` (sorted, distinct).
    pub fn active_groups(&self, t: u64) -> Vec<usize> {
        match self.inter {
            Inter::Ring { chains } => {
                let g = self.groups.len();
                let l = ((t - 1) / (self.tau1 * self.tau2)) as usize;
                let mut ks: Vec<usize> =
                    (0..chains).map(|c| self.group_ring[(l + c) % g]).collect();
                ks.sort_unstable();
                ks
            }
            _ => (0..self.groups.len()).collect(),
        }
    }

    /// Chain holders of group `k` in step `t` under [`Intra::Ring`]: ring
    /// positions `(j + c) mod |N^k|`, `j = floor((t-1)/tau1)`.
    fn holders(&self, k: usize, t: u64) -> Vec<usize> {
        let g = &self.groups[k];
        let j = ((t - 1) / self.tau1) as usize;
        (0..self.chains_in(k))
            .map(|c| g[(j + c) % g.len()])
            .collect()
    }

    /// Step `t >= 1` of the program.
    pub fn step(&self, t: u64) -> Step {
        assert!(t >= 1, "steps are numbered from 1");
        let period = self.tau1 * self.tau2;
        let barrier = !matches!(self.inter, Inter::None) && t.is_multiple_of(period);
        let sync = t.is_multiple_of(self.tau1);
        let groups = self.active_groups(t);
        let mut active = Vec::new();
        for &k in &groups {
            match self.intra {
                Intra::Star => active.extend_from_slice(&self.groups[k]),
                Intra::Ring { .. } => active.extend(self.holders(k, t)),
            }
        }
        active.sort_unstable();
        let mut ops = Vec::new();
        let star_members = |k: usize| -> Vec<(usize, f64)> {
            self.groups[k]
                .iter()
                .map(|&i| (i, self.data_sizes[i]))
                .collect()
        };
        if barrier {
            match self.inter {
                Inter::None => unreachable!("no barrier without an inter-group op"),
                Inter::Star => {
                    let mut members = Vec::new();
                    for k in 0..self.groups.len() {
                        match self.intra {
                            Intra::Star => members.extend(star_members(k)),
                            Intra::Ring { .. } => {
                                let dk: f64 =
                                    self.groups[k].iter().map(|&i| self.data_sizes[i]).sum();
                                let h = self.holders(k, t);
                                let w = dk / h.len() as f64;
                                members.extend(h.into_iter().map(|i| (i, w)));
                            }
                        }
                    }
                    ops.push(Op::Aggregate {
                        members,
                        leader: self.server,
                        targets: (0..self.nodes).collect(),
                    });
                }
                Inter::Ring { chains } => {
                    let g = self.groups.len();
                    let l = ((t - 1) / period) as usize;
                    for c in 0..chains {
                        let src = self.group_ring[(l + c) % g];
                        let dst = self.group_ring[(l + 1 + c) % g];
                        ops.push(Op::Aggregate {
                            members: star_members(src),
                            leader: self.leaders[src],
                            targets: self.groups[dst].clone(),
                        });
                    }
                }
            }
        } else if sync {
            for &k in &groups {
                match self.intra {
                    Intra::Star => ops.push(Op::Aggregate {
                        members: star_members(k),
                        leader: self.leaders[k],
                        targets: self.groups[k].clone(),
                    }),
                    Intra::Ring { .. } => {
                        let grp = &self.groups[k];
                        let j = ((t - 1) / self.tau1) as usize;
                        for c in 0..self.chains_in(k) {
                            ops.push(Op::Hop {
                                from: grp[(j + c) % grp.len()],
                                to: grp[(j + 1 + c) % grp.len()],
                            });
                        }
                    }
                }
            }
        }
        Step {
            t,
            active,
            ops,
            barrier,
        }
    }

    /// The first `steps` steps.
    pub fn program(&self, steps: u64) -> Program {
        Program {
            steps: (1..=steps).map(|t| self.step(t)).collect(),
            nodes: self.nodes,
        }
    }
}

/// A generated program: steps `1..=T`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Program {
    /// Number of nodes.
    pub nodes: usize,
    /// The steps, `steps[t-1]` is step `t`.
    pub steps: Vec<Step>,
}

impl Program {
    /// Total messages.
    pub fn message_count(&self) -> usize {
        self.steps.iter().map(|s| s.messages().len()).sum()
    }
}
