//! Asynchronous protocols in the event engine: asynchronous gossip
//! ([`gossip`], AD-PSGD style, Lian et al. 2018) and buffered asynchronous
//! server aggregation ([`buffered`], FedBuff, Nguyen et al. 2022), run as
//! [`super::harness::EventProtocol`]s over any network model.
//!
//! A run does not produce rounds: it produces the **log of model
//! operations in the order the engine executed them** ([`AsyncOp`]):
//! local computations, pairwise averages, downloads of the server's model,
//! arrivals of updates at the server and server aggregations, each with
//! its simulated time (ms). The trainer
//! (`crate::train::asynchronous`, feature `train`) applies the log to real
//! models in that order, so every update carries exactly the staleness the
//! network gave it.
//!
//! Both protocols stop starting computations once `computations` local
//! computations have started in all (the budget a synchronous run of
//! `computations / N` rounds spends); computations and transfers under
//! way then finish. Every model is [`crate::net::workload::Workload::model_bits`]
//! bits; a silo's computation lasts `s * Tc(i)` ms
//! ([`crate::net::delay::DelayModel::compute_round_ms`]). Under a network trace
//! ([`crate::net::dynamics`]) transfers follow the network model's changing
//! rates and a computation pauses while its silo is down.

pub mod buffered;
pub mod gossip;

use serde::Serialize;

use crate::network::NetworkStats;
use crate::units::Ms;

/// One model operation of an asynchronous run (module docs), at `at_ms`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum AsyncOp {
    /// Silo `silo` ran its local steps on its own model, from `start_ms`
    /// to `at_ms`: its `count`-th computation (from 0). Its model did not
    /// change meanwhile (no protocol touches a computing silo's model).
    Compute {
        /// The silo.
        silo: usize,
        /// Its computations before this one.
        count: u64,
        /// Start, ms.
        start_ms: Ms,
        /// End (the update is applied then), ms.
        at_ms: Ms,
    },
    /// Gossip: silos `a` and `b` exchanged models (both transfers started
    /// at `start_ms`) and both replaced theirs by the average at `at_ms`,
    /// when the second transfer arrived.
    Average {
        /// One silo.
        a: usize,
        /// The other.
        b: usize,
        /// When the exchange started, ms.
        start_ms: Ms,
        /// When both models had arrived, ms.
        at_ms: Ms,
    },
    /// Buffered: the server sent its model of version `version` to `silo`
    /// at `at_ms` (the silo's model becomes that model; it starts
    /// computing when the transfer arrives).
    Download {
        /// The client silo.
        silo: usize,
        /// The server model's version.
        version: u64,
        /// Send time, ms.
        at_ms: Ms,
    },
    /// Buffered: the update of `silo` (its model minus the version-`base`
    /// model it started from) reached the server at `at_ms` and joined the
    /// buffer.
    Upload {
        /// The client silo.
        silo: usize,
        /// The server version it computed from.
        base: u64,
        /// Arrival, ms.
        at_ms: Ms,
    },
    /// Buffered: the server applied its buffer at `at_ms`, making version
    /// `version`: `(silo, staleness)` of each update in arrival order
    /// (staleness: versions made since the update's base).
    Aggregate {
        /// The new version.
        version: u64,
        /// When, ms.
        at_ms: Ms,
        /// The buffered updates.
        updates: Vec<(usize, u64)>,
    },
}

impl AsyncOp {
    /// The operation's time, ms.
    pub fn at_ms(&self) -> Ms {
        match self {
            AsyncOp::Compute { at_ms, .. }
            | AsyncOp::Average { at_ms, .. }
            | AsyncOp::Download { at_ms, .. }
            | AsyncOp::Upload { at_ms, .. }
            | AsyncOp::Aggregate { at_ms, .. } => *at_ms,
        }
    }
}

/// Which asynchronous protocol: `async-gossip` or `fedbuff[:K]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsyncProtocol {
    /// Asynchronous gossip on the overlay's neighbours ([`gossip`]).
    Gossip,
    /// Buffered aggregation at the STAR centre with a buffer of `K`
    /// updates ([`buffered`]); `None`: `min(10, N - 1)` (FedBuff's
    /// default, at most the clients).
    Buffered {
        /// `K`.
        buffer: Option<usize>,
    },
}

impl AsyncProtocol {
    /// Parses a protocol choice: `sync` (`None`: synchronous rounds) or an
    /// asynchronous protocol (the CLI's `--protocol`, experiment files'
    /// `protocol` axis).
    ///
    /// # Errors
    /// Anything else, with the accepted spellings.
    pub fn parse_choice(s: &str) -> Result<Option<AsyncProtocol>, String> {
        match s.trim() {
            "sync" => Ok(None),
            other => other.parse().map(Some),
        }
    }

    /// The buffer size for `n` silos.
    pub fn buffer_for(&self, n: usize) -> Option<usize> {
        match self {
            AsyncProtocol::Gossip => None,
            AsyncProtocol::Buffered { buffer } => {
                Some(buffer.unwrap_or(10.min(n.saturating_sub(1)).max(1)))
            }
        }
    }
}

impl std::fmt::Display for AsyncProtocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AsyncProtocol::Gossip => write!(f, "async-gossip"),
            AsyncProtocol::Buffered { buffer: None } => write!(f, "fedbuff"),
            AsyncProtocol::Buffered { buffer: Some(k) } => write!(f, "fedbuff:{k}"),
        }
    }
}

impl std::str::FromStr for AsyncProtocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let bad = || {
            format!("protocol `{s}`: expected sync, async-gossip, fedbuff or fedbuff:K (K >= 1)")
        };
        match s {
            "async-gossip" => Ok(AsyncProtocol::Gossip),
            "fedbuff" => Ok(AsyncProtocol::Buffered { buffer: None }),
            _ => {
                let k = s.strip_prefix("fedbuff:").ok_or_else(bad)?;
                match k.trim().parse::<usize>() {
                    Ok(k) if k >= 1 => Ok(AsyncProtocol::Buffered { buffer: Some(k) }),
                    _ => Err(bad()),
                }
            }
        }
    }
}

/// Options of an asynchronous run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AsyncOptions {
    /// Local computations to start in all (module docs), >= 1.
    pub computations: u64,
    /// Seed of the random choices (gossip partners).
    pub seed: u64,
}

/// The result of an asynchronous run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AsyncRun {
    /// Protocol name (`async-gossip`, `fedbuff:K`).
    pub protocol: String,
    /// Network model name.
    pub network: String,
    /// The model operations, in execution order.
    pub ops: Vec<AsyncOp>,
    /// Computations per silo.
    pub computations: Vec<u64>,
    /// Model transfers.
    pub transfers: u64,
    /// Events handled.
    pub events: u64,
    /// Time of the last operation, ms.
    pub makespan_ms: Ms,
    /// Updates that reached the server but were never applied (buffered
    /// aggregation: the buffer was not full when the computations ran
    /// out); 0 for gossip.
    pub unapplied_updates: usize,
    /// Network counters.
    pub network_stats: NetworkStats,
}

/// Why an asynchronous run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AsyncError {
    /// A bad option or overlay.
    #[error("{0}")]
    Config(String),
    /// The run stopped with work left (a network model lost a transfer).
    #[error("asynchronous run stalled at {at_ms} ms: {what}")]
    Stalled {
        /// Simulated time, ms.
        at_ms: Ms,
        /// What was left.
        what: String,
    },
}

/// Refuses an availability policy other than `wait`: asynchronous
/// protocols have no rounds to skip or time out (a silo that is down is
/// simply not free until it is back up).
fn refuse_churn(model: &crate::net::delay::DelayModel) -> Result<(), AsyncError> {
    match model.dynamics.as_ref() {
        Some(d) if d.policy != crate::net::dynamics::AvailabilityPolicy::Wait => {
            Err(AsyncError::Config(format!(
                "availability {}: asynchronous protocols have no synchronous rounds to skip or \
                 time out (a silo that is down is not free until it is back up); use \
                 availability wait",
                d.policy.name()
            )))
        }
        _ => Ok(()),
    }
}

/// Runs `protocol` over `network` to the end; the protocol back, with the
/// run's counters (events, network name, network counters).
fn run_to_end<P>(
    protocol: P,
    network: &mut dyn crate::network::NetworkModel,
) -> Result<(P, u64, &'static str, NetworkStats), AsyncError>
where
    P: super::harness::EventProtocol<Stall = AsyncError>,
{
    let mut h = super::harness::Harness::new(protocol, network);
    h.run_to_end()?;
    let (events, name, stats) = (h.events(), h.network_name(), h.network_stats());
    Ok((h.into_protocol(), events, name, stats))
}

/// Most computations one run may start (the log holds a few operations per
/// computation).
pub const MAX_COMPUTATIONS: u64 = 5_000_000;

fn check_options(n: usize, o: &AsyncOptions) -> Result<(), AsyncError> {
    if n < 2 {
        return Err(AsyncError::Config(format!(
            "an asynchronous run needs at least 2 silos, got {n}"
        )));
    }
    if o.computations == 0 || o.computations > MAX_COMPUTATIONS {
        return Err(AsyncError::Config(format!(
            "computations {}: expected 1 to {MAX_COMPUTATIONS}",
            o.computations
        )));
    }
    Ok(())
}
