//! Cycle time of a **mesh all-reduce** round (new, not in \[Marfoq20\]):
//! every silo ends the round with the exact average of all models, as on
//! STAR and on the ring all-reduce ([`super::allreduce`]), in two steps of
//! direct sends between every pair of silos instead of `2(n-1)` steps
//! around a ring.
//!
//! Each model is cut into `n` chunks of `M/n` bit, and silo `j` owns chunk
//! `j` (a sharded parameter server: every silo serves `1/n` of the model).
//!
//! 1. **Reduce-scatter.** After its local step, silo `i` sends chunk `j`
//!    of its model to every silo `j != i`; `j` averages the `n` copies of
//!    its chunk once all have arrived.
//! 2. **All-gather.** Silo `j` sends its averaged chunk to every silo
//!    `k != j`, once it holds all copies of its chunk and its link is free
//!    of step 1; `k` holds the average once all `n - 1` averaged chunks
//!    have arrived.
//!
//! In each step a silo sends `n - 1` chunks at once and receives `n - 1`,
//! so with the delays of \[Marfoq20\] eq. (3) at out- and in-degree `n - 1`
//! (`d(i,j)` = [`DelayModel::comm_ms`] for one chunk, latency included;
//! `b(i) = max_j d(i,j) - l(i,j)`: how long `i`'s link is busy with one
//! step's chunks):
//!
//! ```text
//! s_i(k)   = t_i(k) + s Tc(i)
//! u_j(k)   = max( s_j(k) + b(j),  max_{i != j} s_i(k) + d(i,j) )
//! t_k(k+1) = max( u_k(k) + b(k),  max_{j != k} u_j(k) + d(j,k) )
//! ```
//!
//! Only `max` and `+` of constants appear: `t(k+1) = A2 (x) A1 (x) t(k)` in
//! max-plus algebra. The cycle time is the maximum cycle mean of the
//! product `A2 A1`; instead of forming it (`O(n^3)`), Howard runs on the
//! two-layer digraph of both steps (`2n` nodes, `2n^2` arcs: silo `i` at
//! layer 0 is node `i`, at layer 1 node `n + i`). Every circuit of that
//! digraph alternates layers, so its circuits of `2m` arcs are the circuits
//! of `m` rounds of the product, and the round's cycle time is twice the
//! layered digraph's maximum cycle mean. The tests check it against Karp
//! on the product and against the recurrence's growth rate.
//!
//! On the paper's model (eq. (3)) a core link is not shared between the
//! transfers that cross it, so the `n(n-1)` transfers of a step each get
//! the path's full capacity; the flow network
//! ([`crate::network::FlowNetwork`]) shares it, and its replay
//! ([`crate::replay::allreduce`]) shows what that costs on a given
//! underlay.

use super::{Timing, TimingError};
use crate::maxplus::{Arc, WeightedDigraph};
use crate::net::delay::DelayModel;
use crate::units::Ms;

/// One mesh all-reduce round on a delay model: the chunk delays of the
/// module docs, computed once.
#[derive(Debug, Clone)]
pub struct MeshAllReduceRound {
    n: usize,
    /// `d(i,j)` at `i * n + j`: latency plus transfer of one chunk from
    /// `i` to `j` at degrees `n - 1`, ms (`0` on the diagonal, unused).
    chunk_ms: Vec<Ms>,
    /// `b(i)`: how long one step's chunks occupy `i`'s link, ms.
    busy_ms: Vec<Ms>,
    /// `s Tc(i)`, ms.
    compute_ms: Vec<Ms>,
}

impl MeshAllReduceRound {
    /// The round on `model`.
    pub fn new(model: &DelayModel) -> Self {
        let n = model.silo_count();
        let chunk_bits = model.workload.model_bits / n.max(1) as f64;
        let degree = n.saturating_sub(1).max(1);
        let mut chunk_ms = vec![0.0; n * n];
        let mut busy_ms = vec![0.0f64; n];
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                let d = model.comm_ms(i, j, degree, degree, chunk_bits);
                chunk_ms[i * n + j] = d;
                busy_ms[i] = busy_ms[i].max(d - model.connectivity.latency_ms(i, j));
            }
        }
        MeshAllReduceRound {
            n,
            chunk_ms,
            busy_ms,
            compute_ms: (0..n).map(|i| model.compute_round_ms(i)).collect(),
        }
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.n
    }

    /// `b(i)`: how long one step's `n - 1` chunks occupy silo `i`'s link
    /// (ms), by silo.
    pub fn busy_ms(&self) -> &[Ms] {
        &self.busy_ms
    }

    /// `d(i,j)`, ms: one chunk from `i` to `j` (module docs).
    pub fn chunk_ms(&self, i: usize, j: usize) -> Ms {
        self.chunk_ms[i * self.n + j]
    }

    /// One step of the module docs: `out_j = max(ready_j + b(j), max_{i != j}
    /// ready_i + d(i,j))`.
    fn step(&self, ready: &[Ms]) -> Vec<Ms> {
        let n = self.n;
        (0..n)
            .map(|j| {
                (0..n)
                    .filter(|&i| i != j)
                    .map(|i| ready[i] + self.chunk_ms[i * n + j])
                    .fold(ready[j] + self.busy_ms[j], f64::max)
            })
            .collect()
    }

    /// `t(k+1)` from `t(k)` (ms per silo; `-inf` allowed: a silo that
    /// never starts).
    pub fn end_times(&self, start: &[Ms]) -> Vec<Ms> {
        let sent: Vec<Ms> = start
            .iter()
            .zip(&self.compute_ms)
            .map(|(t, c)| t + c)
            .collect();
        if self.n == 1 {
            return sent;
        }
        self.step(&self.step(&sent))
    }

    /// The two-layer max-plus digraph of the round (module docs): node `i`
    /// is silo `i` when it starts the round, node `n + i` when it holds its
    /// averaged chunk. Arc weights are ms; every circuit alternates
    /// layers.
    ///
    /// # Errors
    /// [`TimingError::MaxPlus`] for a graph the max-plus algebra rejects.
    pub fn layered_graph(&self, name: &str) -> Result<WeightedDigraph, TimingError> {
        let n = self.n;
        let mut arcs = Vec::with_capacity(2 * n * n);
        for i in 0..n {
            for j in 0..n {
                let first = if i == j {
                    self.compute_ms[i] + self.busy_ms[i]
                } else {
                    self.compute_ms[i] + self.chunk_ms[i * n + j]
                };
                arcs.push(Arc {
                    from: i,
                    to: n + j,
                    weight: first,
                });
                let second = if i == j {
                    self.busy_ms[i]
                } else {
                    self.chunk_ms[i * n + j]
                };
                arcs.push(Arc {
                    from: n + i,
                    to: j,
                    weight: second,
                });
            }
        }
        WeightedDigraph::new(2 * n, arcs).map_err(|source| TimingError::MaxPlus {
            overlay: name.to_string(),
            source,
        })
    }

    /// Cycle time (ms per round) of the round repeated: twice the maximum
    /// cycle mean of [`Self::layered_graph`] (Howard), with the critical
    /// circuit as silos (each silo once per visit, layer dropped).
    ///
    /// # Errors
    /// As [`Self::layered_graph`].
    pub fn cycle_time(&self, name: &str) -> Result<Timing, TimingError> {
        let n = self.n;
        if n == 1 {
            return Ok(Timing {
                cycle_time_ms: self.compute_ms[0],
                critical_circuit: vec![0],
            });
        }
        let t = super::howard_timing(name, &self.layered_graph(name)?)?;
        let mut circuit: Vec<usize> = t.critical_circuit.iter().map(|&v| v % n).collect();
        circuit.dedup();
        if circuit.len() > 1 && circuit.first() == circuit.last() {
            circuit.pop();
        }
        Ok(Timing {
            cycle_time_ms: 2.0 * t.cycle_time_ms,
            critical_circuit: circuit,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use super::*;

    use super::super::test_model as model;

    /// The same protocol chunk by chunk with an event queue, processed in
    /// time order (independent of the step recurrence): a silo sends its
    /// `n - 1` chunks of a step together once it holds the step's data
    /// and its link is free.
    fn event_round(r: &MeshAllReduceRound, start: &[Ms]) -> Vec<Ms> {
        let n = r.n;
        // (arrival time bits, from, to, step).
        let mut queue: BinaryHeap<Reverse<(u64, usize, usize, usize)>> = BinaryHeap::new();
        let mut link_free = vec![0.0f64; n];
        let mut got = vec![[0usize; 2]; n];
        let mut last = vec![0.0f64; n];
        let send = |i: usize, at: f64, step: usize, free: &mut [f64], q: &mut BinaryHeap<_>| {
            let t = at.max(free[i]);
            free[i] = t + r.busy_ms[i];
            for j in (0..n).filter(|&j| j != i) {
                q.push(Reverse(((t + r.chunk_ms(i, j)).to_bits(), i, j, step)));
            }
        };
        for i in 0..n {
            let ready = start[i] + r.compute_ms[i];
            link_free[i] = ready;
            send(i, ready, 0, &mut link_free, &mut queue);
        }
        while let Some(Reverse((bits, _, j, step))) = queue.pop() {
            let t = f64::from_bits(bits);
            got[j][step] += 1;
            last[j] = last[j].max(t);
            if step == 0 && got[j][0] == n - 1 {
                send(j, t, 1, &mut link_free, &mut queue);
            }
        }
        (0..n)
            .map(|j| {
                assert_eq!(got[j], [n - 1, n - 1]);
                last[j].max(link_free[j])
            })
            .collect()
    }

    #[test]
    fn the_step_recurrence_equals_an_event_replay_of_the_chunks() {
        for (name, access) in [
            (None, "10G"),
            (Some("geantdistance"), "100M"),
            (Some("exodus"), "1G"),
        ] {
            let m = model(name, access);
            let r = MeshAllReduceRound::new(&m);
            let n = m.silo_count();
            super::super::assert_same_rounds(n, |t| r.end_times(t), |t| event_round(&r, t), 3);
        }
    }

    #[test]
    fn twice_the_layered_cycle_mean_is_the_products_and_the_recurrences_rate() {
        for (name, access) in [
            (None, "10G"),
            (Some("gaia"), "100M"),
            (Some("geantdistance"), "10G"),
        ] {
            let m = model(name, access);
            let n = m.silo_count();
            let r = MeshAllReduceRound::new(&m);
            // The product A2 A1 by columns: one round from each unit vector.
            let mut arcs = Vec::new();
            for j in 0..n {
                let mut e = vec![f64::NEG_INFINITY; n];
                e[j] = 0.0;
                for (i, w) in r.end_times(&e).into_iter().enumerate() {
                    assert!(w.is_finite());
                    arcs.push(Arc {
                        from: j,
                        to: i,
                        weight: w,
                    });
                }
            }
            let product = WeightedDigraph::new(n, arcs).unwrap();
            let karp = crate::maxplus::karp(&product).unwrap().value;
            let t = r.cycle_time("x").unwrap();
            let howard = t.cycle_time_ms;
            assert!((howard - karp).abs() <= 1e-9 * karp, "{howard} {karp}");
            assert!(!t.critical_circuit.is_empty());
            assert!(t.critical_circuit.iter().all(|&s| s < n));
            let rate = super::super::growth_rate(n, |t| r.end_times(t), 50, 500);
            assert!((rate - howard).abs() <= 1e-6 * howard, "{rate} {howard}");
        }
    }

    #[test]
    fn two_chunk_steps_bound_the_cycle_time() {
        // Each round is a local step and two chunk steps: at least twice
        // the fastest chunk, at most the slowest local step plus twice the
        // slowest chunk or busy link.
        let m = model(Some("geantdistance"), "100M");
        let r = MeshAllReduceRound::new(&m);
        let n = r.n;
        let c = r.cycle_time("x").unwrap().cycle_time_ms;
        let off: Vec<f64> = (0..n * n)
            .filter(|k| k / n != k % n)
            .map(|k| r.chunk_ms[k])
            .collect();
        let lo = off.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = off.iter().chain(&r.busy_ms).copied().fold(0.0, f64::max);
        let compute = r.compute_ms.iter().copied().fold(0.0, f64::max);
        assert!(c >= 2.0 * lo, "{c} {lo}");
        assert!(c <= compute + 2.0 * hi + 1e-9, "{c} {hi}");
        // Each silo uploads (n-1)/n of a model per step: at 100 Mbit/s
        // that alone is most of the round.
        let floor = 2.0 * m.workload.model_bits * (n - 1) as f64 / n as f64 / 1e8 * 1e3;
        assert!(c >= floor, "{c} {floor}");
    }
}
