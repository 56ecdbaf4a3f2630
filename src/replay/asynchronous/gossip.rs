//! Asynchronous gossip (AD-PSGD style, \[Lian18\]): every silo computes,
//! then averages its model with one neighbour of the overlay, chosen at
//! random (seeded), **as soon as both are free**, then computes again.
//!
//! A silo is *free* when it neither computes nor exchanges. When silo `i`
//! finishes a computation it first serves the earliest silo waiting for it;
//! otherwise it picks a neighbour `j`: if `j` is free (idle, possibly
//! itself waiting for a third silo, which it then stops waiting for) the
//! exchange starts at once, else `i` queues behind `j` and is served when
//! `j` next becomes free. An exchange sends both models at once over the
//! network (`i -> j` and `j -> i`, each `M` bits, one transfer per sender
//! and receiver for eq. (3)'s shares) and ends when the second arrives;
//! both silos then hold the average. No waiting chain can close on itself
//! (a silo waits only for a busy one), so the run always ends.

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{check_options, AsyncError, AsyncOp, AsyncOptions, AsyncRun};
use crate::graph::Overlay;
use crate::net::delay::DelayModel;
use crate::network::{NetworkModel, Transfer};
use crate::replay::harness::{EventProtocol, Link};
use crate::units::Ms;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Computing,
    Exchanging,
    /// Neither: waiting for a partner, or out of computations.
    Idle,
}

#[derive(Debug, Clone)]
struct Silo {
    state: State,
    waiting_on: Option<usize>,
    waiters: VecDeque<usize>,
    count: u64,
    compute_start: Ms,
}

#[derive(Debug, Clone, Copy)]
struct Exchange {
    a: usize,
    b: usize,
    start_ms: Ms,
    remaining: u8,
}

struct Gossip<'m> {
    model: &'m DelayModel,
    neighbours: Vec<Vec<usize>>,
    silos: Vec<Silo>,
    exchanges: Vec<Option<Exchange>>,
    free_exchanges: Vec<usize>,
    rng: ChaCha8Rng,
    budget: u64,
    started: u64,
    transfers: u64,
    ops: Vec<AsyncOp>,
}

impl Gossip<'_> {
    fn start_compute(&mut self, i: usize, link: &mut Link<'_, usize>) {
        self.started += 1;
        let s = &mut self.silos[i];
        s.state = State::Computing;
        s.compute_start = link.now();
        // Paused while a trace takes the silo down; never ends if it
        // never comes back (the run then stalls, naming the silo).
        let end = self
            .model
            .compute_end_ms(i, link.now(), self.model.compute_round_ms(i));
        if end.is_finite() {
            link.schedule_at(end, i);
        }
    }

    fn begin_exchange(&mut self, a: usize, b: usize, link: &mut Link<'_, usize>) {
        for x in [a, b] {
            self.silos[x].state = State::Exchanging;
            self.silos[x].waiting_on = None;
        }
        let ex = Exchange {
            a,
            b,
            start_ms: link.now(),
            remaining: 2,
        };
        let id = match self.free_exchanges.pop() {
            Some(id) => {
                self.exchanges[id] = Some(ex);
                id
            }
            None => {
                self.exchanges.push(Some(ex));
                self.exchanges.len() - 1
            }
        };
        let bits = self.model.workload.model_bits;
        for (from, to) in [(a, b), (b, a)] {
            self.transfers += 1;
            link.send(Transfer {
                from,
                to,
                round: id as u64,
                bits,
                out_deg: 1,
                in_deg: 1,
            });
        }
    }

    /// Silo `i` is free: serve its earliest waiter, or find a partner.
    fn ready(&mut self, i: usize, link: &mut Link<'_, usize>) {
        self.silos[i].state = State::Idle;
        if let Some(w) = self.silos[i].waiters.pop_front() {
            self.begin_exchange(w, i, link);
            return;
        }
        let nb = &self.neighbours[i];
        let j = nb[self.rng.gen_range(0..nb.len())];
        if self.silos[j].state == State::Idle {
            if let Some(k) = self.silos[j].waiting_on.take() {
                self.silos[k].waiters.retain(|&w| w != j);
            }
            self.begin_exchange(i, j, link);
        } else {
            self.silos[i].waiting_on = Some(j);
            self.silos[j].waiters.push_back(i);
        }
    }

    /// Silo `x` ended an exchange: it computes again while the budget
    /// lasts; otherwise it stays free for the silos waiting for it.
    fn after_exchange(&mut self, x: usize, link: &mut Link<'_, usize>) {
        if self.started < self.budget {
            self.start_compute(x, link);
        } else {
            self.silos[x].state = State::Idle;
            if let Some(w) = self.silos[x].waiters.pop_front() {
                self.begin_exchange(w, x, link);
            }
        }
    }
}

impl EventProtocol for Gossip<'_> {
    type Event = usize;
    type Stall = AsyncError;

    fn start(&mut self, link: &mut Link<'_, usize>) {
        for i in 0..self.silos.len() {
            if self.started < self.budget {
                self.start_compute(i, link);
            }
        }
    }

    fn on_event(&mut self, i: usize, link: &mut Link<'_, usize>) {
        let s = &mut self.silos[i];
        self.ops.push(AsyncOp::Compute {
            silo: i,
            count: s.count,
            start_ms: s.compute_start,
            at_ms: link.now(),
        });
        s.count += 1;
        self.ready(i, link);
    }

    fn on_delivered(&mut self, t: Transfer, link: &mut Link<'_, usize>) {
        let id = t.round as usize;
        let Some(ex) = self.exchanges.get_mut(id).and_then(Option::as_mut) else {
            return;
        };
        ex.remaining -= 1;
        if ex.remaining > 0 {
            return;
        }
        let ex = *ex;
        self.exchanges[id] = None;
        self.free_exchanges.push(id);
        self.ops.push(AsyncOp::Average {
            a: ex.a,
            b: ex.b,
            start_ms: ex.start_ms,
            at_ms: link.now(),
        });
        self.after_exchange(ex.a, link);
        self.after_exchange(ex.b, link);
    }

    fn finished(&self) -> bool {
        self.silos
            .iter()
            .all(|s| s.state == State::Idle && s.waiting_on.is_none())
    }

    fn stall(&self) -> AsyncError {
        let busy: Vec<String> = self
            .silos
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state != State::Idle || s.waiting_on.is_some())
            .map(|(i, s)| format!("silo {i} {:?} (waiting on {:?})", s.state, s.waiting_on))
            .collect();
        AsyncError::Stalled {
            at_ms: self.ops.last().map_or(0.0, AsyncOp::at_ms),
            what: busy.join(", "),
        }
    }
}

/// The undirected neighbours of every silo of `overlay`, sorted.
fn neighbours(overlay: &Overlay) -> Result<Vec<Vec<usize>>, AsyncError> {
    let n = overlay.silo_count();
    let mut nb = vec![Vec::new(); n];
    for &(a, b) in overlay.arcs() {
        if a != b {
            nb[a].push(b);
            nb[b].push(a);
        }
    }
    for (i, v) in nb.iter_mut().enumerate() {
        v.sort_unstable();
        v.dedup();
        if v.is_empty() {
            return Err(AsyncError::Config(format!(
                "asynchronous gossip on {}: silo {i} has no neighbour",
                overlay.name
            )));
        }
    }
    Ok(nb)
}

/// Runs asynchronous gossip on the neighbours of `overlay` (its arcs, both
/// ways) over `network` (module docs).
///
/// # Errors
/// [`AsyncError::Config`] for fewer than 2 silos, a silo without
/// neighbour, a budget out of range or an overlay of another size than
/// the model; [`AsyncError::Stalled`] when the network lost a transfer.
pub fn async_gossip(
    overlay: &Overlay,
    model: &DelayModel,
    network: &mut dyn NetworkModel,
    options: &AsyncOptions,
) -> Result<AsyncRun, AsyncError> {
    let n = model.silo_count();
    check_options(n, options)?;
    super::refuse_churn(model)?;
    if overlay.silo_count() != n {
        return Err(AsyncError::Config(format!(
            "overlay {} has {} silos, the network {n}",
            overlay.name,
            overlay.silo_count()
        )));
    }
    let protocol = Gossip {
        model,
        neighbours: neighbours(overlay)?,
        silos: vec![
            Silo {
                state: State::Idle,
                waiting_on: None,
                waiters: VecDeque::new(),
                count: 0,
                compute_start: 0.0,
            };
            n
        ],
        exchanges: Vec::new(),
        free_exchanges: Vec::new(),
        rng: ChaCha8Rng::seed_from_u64(options.seed),
        budget: options.computations,
        started: 0,
        transfers: 0,
        ops: Vec::new(),
    };
    let (p, events, network_name, stats) = super::run_to_end(protocol, network)?;
    Ok(AsyncRun {
        protocol: "async-gossip".into(),
        network: network_name.into(),
        makespan_ms: p.ops.last().map_or(0.0, AsyncOp::at_ms),
        computations: p.silos.iter().map(|s| s.count).collect(),
        transfers: p.transfers,
        events,
        unapplied_updates: 0,
        ops: p.ops,
        network_stats: stats,
    })
}
