//! Cycle time of a **ring all-reduce** round (new, not in \[Marfoq20\]):
//! every silo ends the round with the exact average of all models, as on
//! STAR, but the models travel in chunks around a ring instead of through
//! one centre.
//!
//! The protocol is the bandwidth-optimal ring all-reduce (reduce-scatter,
//! then all-gather): along a tour `s_0 -> s_1 -> ... -> s_(n-1) -> s_0`,
//! each model is cut into `n` chunks of `M/n` bit; in each of `2(n-1)`
//! steps every silo sends one chunk to the next silo of the tour. Step `s`
//! of silo `p` needs the chunk of step `s-1` from its predecessor (it adds
//! its own part in the reduce-scatter, forwards it in the all-gather) and
//! its link free of its own step `s-1`. With the delays of \[Marfoq20\]
//! eq. (3) for one chunk on arc `p -> p+1` (one sender, one receiver:
//! `dm(p) = l(p, p+1) + max(M/n/Cup(p), M/n/Cdn(p+1), M/n/A(p, p+1))`, of
//! which `dm(p) - l(p, p+1)` occupies `p`'s link):
//!
//! ```text
//! send_0(p) = t_p(k) + s Tc(p)
//! recv_s(p+1) = send_s(p) + dm(p)
//! send_s(p) = max( send_(s-1)(p) + dm(p) - l(p, p+1),  recv_(s-1)(p) )
//! t_p(k+1) = max( recv_(2n-3)(p),  send_(2n-3)(p) + dm(p) - l(p, p+1) )
//! ```
//!
//! `t_p(k+1)` is when `p` holds the average and its link is idle. Only
//! `max` and `+` of constants appear, so `t(k+1) = A (x) t(k)` in max-plus
//! algebra; column `j` of `A` is one round started from `t = e_j` (`0` at
//! `j`, `-inf` elsewhere), and the cycle time is the maximum cycle mean of
//! `A` (Howard; Karp is the cross-check in the tests).

use rayon::prelude::*;

use super::{Timing, TimingError};
use crate::maxplus::{Arc, WeightedDigraph};
use crate::net::delay::DelayModel;
use crate::units::Ms;

/// How an exact all-reduce moves its chunks: around a ring (this module)
/// or directly between every pair of silos ([`super::mesh_allreduce`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllReduceSchedule {
    /// `2(n-1)` steps along a tour (silo indices in sending order).
    Ring(Vec<usize>),
    /// Two steps of direct sends (reduce-scatter, all-gather).
    Mesh,
}

impl AllReduceSchedule {
    /// The ring's tour; `None` for the mesh.
    pub fn tour(&self) -> Option<&[usize]> {
        match self {
            AllReduceSchedule::Ring(tour) => Some(tour),
            AllReduceSchedule::Mesh => None,
        }
    }

    /// `ring` or `mesh`.
    pub fn name(&self) -> &'static str {
        match self {
            AllReduceSchedule::Ring(_) => "ring",
            AllReduceSchedule::Mesh => "mesh",
        }
    }
}

/// One all-reduce round of either schedule on a delay model.
#[derive(Debug, Clone)]
pub enum AllReduce {
    /// Around a ring.
    Ring(AllReduceRound),
    /// Between every pair.
    Mesh(super::mesh_allreduce::MeshAllReduceRound),
}

impl AllReduce {
    /// The round of `schedule` on `model`.
    ///
    /// # Errors
    /// As [`AllReduceRound::new`] for a ring.
    pub fn new(model: &DelayModel, schedule: &AllReduceSchedule) -> Result<Self, TimingError> {
        Ok(match schedule {
            AllReduceSchedule::Ring(tour) => AllReduce::Ring(AllReduceRound::new(model, tour)?),
            AllReduceSchedule::Mesh => {
                AllReduce::Mesh(super::mesh_allreduce::MeshAllReduceRound::new(model))
            }
        })
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        match self {
            AllReduce::Ring(r) => r.silo_count(),
            AllReduce::Mesh(r) => r.silo_count(),
        }
    }

    /// `t(k+1)` from `t(k)`, ms per silo.
    pub fn end_times(&self, start: &[Ms]) -> Vec<Ms> {
        match self {
            AllReduce::Ring(r) => r.end_times(start),
            AllReduce::Mesh(r) => r.end_times(start),
        }
    }

    /// Cycle time, ms per round.
    ///
    /// # Errors
    /// [`TimingError::MaxPlus`] for a graph the max-plus algebra rejects.
    pub fn cycle_time(&self, name: &str) -> Result<Timing, TimingError> {
        match self {
            AllReduce::Ring(r) => r.cycle_time(name),
            AllReduce::Mesh(r) => r.cycle_time(name),
        }
    }
}

/// One ring all-reduce round on `model` along `tour` (a permutation of the
/// silos): the chunk delays of the module docs, computed once.
#[derive(Debug, Clone)]
pub struct AllReduceRound {
    tour: Vec<usize>,
    /// `dm(p)`: latency plus transfer of one chunk from tour position `p`
    /// to `p + 1`, ms.
    chunk_ms: Vec<Ms>,
    /// `dm(p) - l(p, p+1)`: how long one chunk occupies `p`'s link, ms.
    busy_ms: Vec<Ms>,
    /// `s Tc(s_p)`, ms.
    compute_ms: Vec<Ms>,
}

impl AllReduceRound {
    /// The round of `model` along `tour`.
    ///
    /// # Errors
    /// [`TimingError::SizeMismatch`] when `tour` is not as long as the
    /// network has silos, [`TimingError::Sampling`] when it is not a
    /// permutation of them.
    pub fn new(model: &DelayModel, tour: &[usize]) -> Result<Self, TimingError> {
        let n = model.silo_count();
        if tour.len() != n {
            return Err(TimingError::SizeMismatch {
                overlay: tour.len(),
                network: n,
            });
        }
        let mut seen = vec![false; n];
        for &s in tour {
            if s >= n || std::mem::replace(&mut seen[s], true) {
                return Err(TimingError::Sampling(format!(
                    "a ring all-reduce tour must visit each of the {n} silos once (silo {s})"
                )));
            }
        }
        let chunk_bits = model.workload.model_bits / n.max(1) as f64;
        let next = |p: usize| tour[(p + 1) % n];
        let chunk_ms: Vec<Ms> = (0..n)
            .map(|p| model.comm_ms(tour[p], next(p), 1, 1, chunk_bits))
            .collect();
        let busy_ms = (0..n)
            .map(|p| (chunk_ms[p] - model.connectivity.latency_ms(tour[p], next(p))).max(0.0))
            .collect();
        Ok(AllReduceRound {
            compute_ms: tour.iter().map(|&s| model.compute_round_ms(s)).collect(),
            tour: tour.to_vec(),
            chunk_ms,
            busy_ms,
        })
    }

    /// The tour, silo indices in ring order.
    pub fn tour(&self) -> &[usize] {
        &self.tour
    }

    /// How long one chunk occupies the link of tour position `p`
    /// (`dm(p) - l(p, p+1)`, ms), by position.
    pub fn busy_ms(&self) -> &[Ms] {
        &self.busy_ms
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.tour.len()
    }

    /// `t(k+1)` from `t(k)` (ms per silo, indexed by silo; `-inf` allowed:
    /// a silo that never starts).
    pub fn end_times(&self, start: &[Ms]) -> Vec<Ms> {
        let n = self.tour.len();
        let mut end = vec![f64::NEG_INFINITY; n];
        if n == 1 {
            end[self.tour[0]] = start[self.tour[0]] + self.compute_ms[0];
            return end;
        }
        // Step 0: every position sends once its local step is done.
        let mut send: Vec<Ms> = (0..n)
            .map(|p| start[self.tour[p]] + self.compute_ms[p])
            .collect();
        let mut recv = vec![f64::NEG_INFINITY; n];
        let arrived = |send: &[Ms], recv: &mut [Ms]| {
            for p in 0..n {
                recv[(p + 1) % n] = send[p] + self.chunk_ms[p];
            }
        };
        arrived(&send, &mut recv);
        for _step in 1..2 * (n - 1) {
            for p in 0..n {
                send[p] = (send[p] + self.busy_ms[p]).max(recv[p]);
            }
            arrived(&send, &mut recv);
        }
        for p in 0..n {
            end[self.tour[p]] = recv[p].max(send[p] + self.busy_ms[p]);
        }
        end
    }

    /// The max-plus digraph of the round: arc `j -> i` with weight
    /// `A(i, j)`, the round's end time at `i` started from `e_j` (module
    /// docs), for every finite entry. `O(n^3)`, columns in parallel.
    ///
    /// # Errors
    /// [`TimingError::MaxPlus`] for a graph the max-plus algebra rejects.
    pub fn graph(&self, name: &str) -> Result<WeightedDigraph, TimingError> {
        let n = self.tour.len();
        let columns: Vec<Vec<Arc>> = (0..n)
            .into_par_iter()
            .map(|j| {
                let mut e = vec![f64::NEG_INFINITY; n];
                e[j] = 0.0;
                self.end_times(&e)
                    .into_iter()
                    .enumerate()
                    .filter(|(_, w)| w.is_finite())
                    .map(|(i, weight)| Arc {
                        from: j,
                        to: i,
                        weight,
                    })
                    .collect()
            })
            .collect();
        WeightedDigraph::new(n, columns.into_iter().flatten().collect()).map_err(|source| {
            TimingError::MaxPlus {
                overlay: name.to_string(),
                source,
            }
        })
    }

    /// Cycle time (ms per round) of the round repeated: Howard on
    /// [`Self::graph`].
    ///
    /// # Errors
    /// As [`Self::graph`].
    pub fn cycle_time(&self, name: &str) -> Result<Timing, TimingError> {
        super::howard_timing(name, &self.graph(name)?)
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use super::*;
    use crate::overlay::algo::RingSearch;
    use crate::overlay::ring::ring_opt_tour;

    use super::super::test_model as model;

    /// The same protocol chunk by chunk with an event queue: a chunk is
    /// sent when its silo holds the step's data and its link is free, and
    /// arrives after the eq. (3) chunk delay. Independent of the step
    /// recurrence above (events are processed in time order).
    fn event_round(r: &AllReduceRound, start: &[Ms]) -> Vec<Ms> {
        let n = r.tour.len();
        let steps = 2 * (n - 1);
        // (time bits, position, step) of chunk arrivals at position+1.
        let mut queue: BinaryHeap<Reverse<(u64, usize, usize)>> = BinaryHeap::new();
        let mut link_free = vec![0.0f64; n];
        let mut got = vec![0usize; n];
        let mut last_recv = vec![0.0f64; n];
        let send =
            |p: usize, at: f64, step: usize, link_free: &mut [f64], q: &mut BinaryHeap<_>| {
                let t = at.max(link_free[p]);
                link_free[p] = t + r.busy_ms[p];
                q.push(Reverse(((t + r.chunk_ms[p]).to_bits(), p, step)));
            };
        for p in 0..n {
            let ready = start[r.tour[p]] + r.compute_ms[p];
            link_free[p] = ready;
            send(p, ready, 0, &mut link_free, &mut queue);
        }
        while let Some(Reverse((bits, p, step))) = queue.pop() {
            let t = f64::from_bits(bits);
            let q = (p + 1) % n;
            got[q] += 1;
            last_recv[q] = t;
            if step + 1 < steps {
                send(q, t, step + 1, &mut link_free, &mut queue);
            }
        }
        let mut end = vec![0.0; n];
        for p in 0..n {
            assert_eq!(got[p], steps);
            end[r.tour[p]] = last_recv[p].max(link_free[p]);
        }
        end
    }

    #[test]
    fn the_step_recurrence_equals_an_event_replay_of_the_chunks() {
        for (name, access) in [
            (None, "10G"),
            (Some("geantdistance"), "100M"),
            (Some("exodus"), "1G"),
        ] {
            let m = model(name, access);
            let tour = ring_opt_tour(&m, &RingSearch::default());
            let r = AllReduceRound::new(&m, &tour).unwrap();
            let n = m.silo_count();
            super::super::assert_same_rounds(n, |t| r.end_times(t), |t| event_round(&r, t), 3);
        }
    }

    #[test]
    fn the_round_is_max_plus_linear_and_its_rate_is_the_cycle_time() {
        for (name, access) in [
            (None, "10G"),
            (Some("geantdistance"), "100M"),
            (Some("ebone"), "10G"),
        ] {
            let m = model(name, access);
            let n = m.silo_count();
            let tour = ring_opt_tour(&m, &RingSearch::default());
            let r = AllReduceRound::new(&m, &tour).unwrap();
            let g = r.graph("x").unwrap();
            // A (x) x equals the round itself for an arbitrary x.
            let x: Vec<f64> = (0..n).map(|i| ((i * 37) % 11) as f64 * 3.5).collect();
            let mut ax = vec![f64::NEG_INFINITY; n];
            for a in g.arcs() {
                ax[a.to] = ax[a.to].max(x[a.from] + a.weight);
            }
            for (p, q) in ax.iter().zip(r.end_times(&x)) {
                assert!((p - q).abs() <= 1e-9 * q.abs().max(1.0), "{p} {q}");
            }
            // Howard equals Karp, and the recurrence grows at that rate.
            let howard = r.cycle_time("x").unwrap().cycle_time_ms;
            let karp = crate::maxplus::karp(&g).unwrap().value;
            assert!((howard - karp).abs() <= 1e-9 * howard, "{howard} {karp}");
            let rate = super::super::growth_rate(n, |t| r.end_times(t), 200, 2000);
            // t(k) = k x tau + a bounded transient, slow to die out when
            // circuits come within 1e-5 of the critical one.
            assert!((rate - howard).abs() <= 1e-4 * howard, "{rate} {howard}");
        }
    }

    #[test]
    fn the_cycle_time_is_bounded_by_its_slowest_and_fastest_chunk_steps() {
        // 2(n-1) chunk steps after the local step: each at least the
        // fastest chunk's delay, at most the slowest's (plus waiting for
        // a slower local step upstream, at most the largest local step).
        let m = model(Some("geantdistance"), "100M");
        let n = m.silo_count();
        let tour = ring_opt_tour(&m, &RingSearch::default());
        let r = AllReduceRound::new(&m, &tour).unwrap();
        let c = r.cycle_time("x").unwrap().cycle_time_ms;
        let fold = |f: fn(f64, f64) -> f64, v: &[f64], init| v.iter().copied().fold(init, f);
        let (lo, hi) = (
            fold(f64::min, &r.chunk_ms, f64::INFINITY),
            fold(f64::max, &r.chunk_ms, 0.0),
        );
        let compute = fold(f64::max, &r.compute_ms, 0.0);
        let steps = 2.0 * (n - 1) as f64;
        assert!(c >= steps * lo, "{c} {}", steps * lo);
        assert!(c <= compute + steps * hi, "{c} {}", compute + steps * hi);
        // Much faster than sending whole models: the chunks are M/n bit.
        let star_like = 2.0 * m.workload.model_bits / 1e8 * 1e3 * (n - 1) as f64;
        assert!(c < star_like / 4.0, "{c} {star_like}");
    }

    #[test]
    fn bad_tours_are_errors() {
        let m = model(None, "10G");
        let n = m.silo_count();
        assert!(matches!(
            AllReduceRound::new(&m, &[0]),
            Err(TimingError::SizeMismatch { .. })
        ));
        let mut dup: Vec<usize> = (0..n).collect();
        dup[1] = 0;
        assert!(AllReduceRound::new(&m, &dup).is_err());
        let mut out: Vec<usize> = (0..n).collect();
        out[0] = n;
        assert!(AllReduceRound::new(&m, &out).is_err());
    }
}
