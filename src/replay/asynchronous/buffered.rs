//! Buffered asynchronous aggregation (FedBuff, \[Nguyen22\]): a server
//! silo keeps the global model; every client downloads it, runs its local
//! steps, and uploads its update (its model minus the one it downloaded);
//! the server adds each arriving update to a buffer and, after `K`
//! arrivals, applies the buffer (each update weighted by its staleness,
//! `crate::train::asynchronous`), making a new version. A client downloads
//! the latest model as soon as its upload has arrived.
//!
//! The server is one of the silos (the STAR centre) and only aggregates,
//! as in FedBuff: the other `N - 1` silos are the clients (as a client with
//! instantaneous transfers the server's silo would make most of the
//! updates from its own data alone). Transfers are `M` bits;
//! for eq. (3)'s static shares a download leaves the server as one of
//! `N - 1` and an upload arrives as one of `N - 1`, as in STAR (under
//! `--network flow` the server's access link is shared by the transfers
//! actually in flight). Updates still in the buffer when the computations
//! run out are not applied ([`super::AsyncRun::unapplied_updates`]).

use super::{check_options, AsyncError, AsyncOp, AsyncOptions, AsyncRun};
use crate::net::delay::DelayModel;
use crate::network::{NetworkModel, Transfer};
use crate::replay::harness::{EventProtocol, Link};
use crate::units::Ms;

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// Client `i` finished computing.
    Computed(usize),
}

struct Buffered<'m> {
    model: &'m DelayModel,
    server: usize,
    buffer_size: usize,
    version: u64,
    buffer: Vec<(usize, u64)>,
    base: Vec<u64>,
    count: Vec<u64>,
    compute_start: Vec<Ms>,
    /// Clients in a download-compute-upload cycle.
    busy: usize,
    budget: u64,
    started: u64,
    transfers: u64,
    ops: Vec<AsyncOp>,
}

impl Buffered<'_> {
    fn n(&self) -> usize {
        self.base.len()
    }

    fn download(&mut self, i: usize, link: &mut Link<'_, Ev>) {
        self.started += 1;
        self.busy += 1;
        self.base[i] = self.version;
        self.ops.push(AsyncOp::Download {
            silo: i,
            version: self.version,
            at_ms: link.now(),
        });
        self.transfers += 1;
        link.send(Transfer {
            from: self.server,
            to: i,
            round: self.version,
            bits: self.model.workload.model_bits,
            out_deg: self.n() - 1,
            in_deg: 1,
        });
    }

    fn compute(&mut self, i: usize, link: &mut Link<'_, Ev>) {
        self.compute_start[i] = link.now();
        // Paused while a trace takes the silo down; never ends if it
        // never comes back (the run then stalls).
        let end = self
            .model
            .compute_end_ms(i, link.now(), self.model.compute_round_ms(i));
        if end.is_finite() {
            link.schedule_at(end, Ev::Computed(i));
        }
    }

    fn arrived(&mut self, i: usize, link: &mut Link<'_, Ev>) {
        self.ops.push(AsyncOp::Upload {
            silo: i,
            base: self.base[i],
            at_ms: link.now(),
        });
        self.buffer.push((i, self.base[i]));
        if self.buffer.len() >= self.buffer_size {
            let updates = self
                .buffer
                .drain(..)
                .map(|(s, base)| (s, self.version - base))
                .collect();
            self.version += 1;
            self.ops.push(AsyncOp::Aggregate {
                version: self.version,
                at_ms: link.now(),
                updates,
            });
        }
        self.busy -= 1;
        if self.started < self.budget {
            self.download(i, link);
        }
    }
}

impl EventProtocol for Buffered<'_> {
    type Event = Ev;
    type Stall = AsyncError;

    fn start(&mut self, link: &mut Link<'_, Ev>) {
        let server = self.server;
        for i in (0..self.n()).filter(|&i| i != server) {
            if self.started < self.budget {
                self.download(i, link);
            }
        }
    }

    fn on_event(&mut self, ev: Ev, link: &mut Link<'_, Ev>) {
        match ev {
            Ev::Computed(i) => {
                self.ops.push(AsyncOp::Compute {
                    silo: i,
                    count: self.count[i],
                    start_ms: self.compute_start[i],
                    at_ms: link.now(),
                });
                self.count[i] += 1;
                self.transfers += 1;
                link.send(Transfer {
                    from: i,
                    to: self.server,
                    round: self.base[i],
                    bits: self.model.workload.model_bits,
                    out_deg: 1,
                    in_deg: self.n() - 1,
                });
            }
        }
    }

    fn on_delivered(&mut self, t: Transfer, link: &mut Link<'_, Ev>) {
        if t.from == self.server {
            self.compute(t.to, link);
        } else {
            self.arrived(t.from, link);
        }
    }

    fn finished(&self) -> bool {
        self.busy == 0
    }

    fn stall(&self) -> AsyncError {
        AsyncError::Stalled {
            at_ms: self.ops.last().map_or(0.0, AsyncOp::at_ms),
            what: format!("{} clients still in a cycle", self.busy),
        }
    }
}

/// Runs buffered asynchronous aggregation with server `server` and buffer
/// size `buffer` (`K`) over `network` (module docs).
///
/// # Errors
/// [`AsyncError::Config`] for fewer than 2 silos, a server out of range,
/// `K` not in `1..=N` or a budget out of range; [`AsyncError::Stalled`]
/// when the network lost a transfer.
pub fn buffered_async(
    model: &DelayModel,
    server: usize,
    buffer: usize,
    network: &mut dyn NetworkModel,
    options: &AsyncOptions,
) -> Result<AsyncRun, AsyncError> {
    let n = model.silo_count();
    check_options(n, options)?;
    super::refuse_churn(model)?;
    if server >= n {
        return Err(AsyncError::Config(format!(
            "server silo {server} out of range (0..{n})"
        )));
    }
    if buffer == 0 || buffer >= n {
        return Err(AsyncError::Config(format!(
            "buffer size {buffer}: expected 1 to the {} clients",
            n - 1
        )));
    }
    let protocol = Buffered {
        model,
        server,
        buffer_size: buffer,
        version: 0,
        buffer: Vec::with_capacity(buffer),
        base: vec![0; n],
        count: vec![0; n],
        compute_start: vec![0.0; n],
        busy: 0,
        budget: options.computations,
        started: 0,
        transfers: 0,
        ops: Vec::new(),
    };
    let (p, events, network_name, stats) = super::run_to_end(protocol, network)?;
    Ok(AsyncRun {
        protocol: format!("fedbuff:{buffer}"),
        network: network_name.into(),
        makespan_ms: p.ops.last().map_or(0.0, AsyncOp::at_ms),
        computations: p.count,
        transfers: p.transfers,
        events,
        unapplied_updates: p.buffer.len(),
        ops: p.ops,
        network_stats: stats,
    })
}
