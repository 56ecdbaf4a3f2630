//! Network models: how long a model transfer between two silos takes, behind
//! one trait, [`NetworkModel`], driven by the event engine ([`crate::engine`]).
//!
//! * [`maxplus::MaxPlusNetwork`]: the arc delay of \[Marfoq20\] eq. (3), independent
//!   transfers (messages do not interfere). The replay then equals the
//!   max-plus recurrence.
//! * [`paper::PaperNetwork`]: the published time simulator (\[Marfoq20\] Appendix F,
//!   Algorithm 3), with downloads serialised at the receiver.
//! * [`flow::FlowNetwork`]: fluid max-min fair sharing of silo uplinks,
//!   downlinks and core links, recomputed by progressive filling.
//!
//! A model receives transfers with [`NetworkModel::start`], asks for timer
//! callbacks through [`Timers`] and reports finished transfers (the last bit
//! arrived at the receiver) into the `delivered` vector.

pub mod flow;
pub mod maxmin;
pub mod maxplus;
pub mod paper;

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::engine::{EventId, Scheduler};
use crate::net::delay::DelayModel;
use crate::units::{Bits, Ms};

pub use flow::FlowNetwork;
pub use maxplus::MaxPlusNetwork;
pub use paper::PaperNetwork;

/// One model transfer `from -> to`, sent in round `round` of an overlay in
/// which `from` sends to `out_deg` silos and `to` receives from `in_deg`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transfer {
    /// Sending silo.
    pub from: usize,
    /// Receiving silo.
    pub to: usize,
    /// Round whose aggregation waits for this model: the sender's round,
    /// or for a lagged arc ([`crate::graph::OverlaySchedule::arc_lag`]) the
    /// later round the receiver uses it in.
    pub round: u64,
    /// Size, bit.
    pub bits: Bits,
    /// Out-degree of the sender in this round's overlay (or phase, for STAR).
    pub out_deg: usize,
    /// In-degree of the receiver in this round's overlay (or phase).
    pub in_deg: usize,
}

/// Timer service the engine offers to a network model: a timer fires
/// [`NetworkModel::on_timer`] with its `token` at time `at` (ms).
pub trait Timers {
    /// Current simulated time, ms.
    fn now(&self) -> Ms;
    /// Sets a timer at absolute time `at` (ms, `>= now`).
    fn set(&mut self, at: Ms, token: u64) -> EventId;
    /// Cancels a timer; false if it already fired or was cancelled.
    fn cancel(&mut self, id: EventId) -> bool;
}

/// An event type that can carry a network model's timer token.
pub trait NetEvent {
    /// The event that fires the network timer `token`.
    fn net_timer(token: u64) -> Self;
}

/// The [`Timers`] a replay offers its network model: timers become events
/// of the replay's own [`Scheduler`] (built by [`NetEvent::net_timer`]).
pub struct EngineTimers<'q, E>(pub &'q mut Scheduler<E>);

impl<E: NetEvent> Timers for EngineTimers<'_, E> {
    #[inline]
    fn now(&self) -> Ms {
        self.0.now()
    }
    #[inline]
    fn set(&mut self, at: Ms, token: u64) -> EventId {
        self.0.schedule_at(at, E::net_timer(token))
    }
    fn cancel(&mut self, id: EventId) -> bool {
        self.0.cancel(id)
    }
}

/// A network: accepts transfers, reports when they are delivered.
pub trait NetworkModel {
    /// Short name (`maxplus`, `paper`, `flow`).
    fn name(&self) -> &'static str;
    /// Starts transfer `t` at `timers.now()`; deliveries that are immediate
    /// may be pushed to `delivered` directly.
    fn start(&mut self, t: Transfer, timers: &mut dyn Timers, delivered: &mut Vec<Transfer>);
    /// A timer of this model fired.
    fn on_timer(&mut self, token: u64, timers: &mut dyn Timers, delivered: &mut Vec<Transfer>);
    /// Model-specific counters for reports (e.g. rate recomputations).
    fn stats(&self) -> NetworkStats {
        NetworkStats::default()
    }
}

/// Counters a network model may report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct NetworkStats {
    /// Max-min rate recomputations (flow model).
    pub recomputations: u64,
    /// Flows whose rate was recomputed, summed over recomputations.
    pub flows_recomputed: u64,
    /// Largest number of flows active at once.
    pub max_active_flows: usize,
}

/// Which network model to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NetworkKind {
    /// \[Marfoq20\] Eq. (3) arc delays: the replay equals the max-plus recurrence.
    Maxplus,
    /// The published simulator (\[Marfoq20\] Appendix F, Algorithm 3).
    Paper,
    /// Fluid max-min fair sharing over access and core links.
    Flow,
}

impl NetworkKind {
    /// Every network model, in the order they are listed to users.
    pub const ALL: [NetworkKind; 3] = [NetworkKind::Maxplus, NetworkKind::Paper, NetworkKind::Flow];

    /// The model's name.
    pub fn name(self) -> &'static str {
        match self {
            NetworkKind::Maxplus => "maxplus",
            NetworkKind::Paper => "paper",
            NetworkKind::Flow => "flow",
        }
    }

    /// Builds the model for `delay`.
    pub fn build<'a>(self, delay: &'a DelayModel) -> Box<dyn NetworkModel + 'a> {
        match self {
            NetworkKind::Maxplus => Box::new(MaxPlusNetwork::new(delay)),
            NetworkKind::Paper => Box::new(PaperNetwork::new(delay)),
            NetworkKind::Flow => Box::new(FlowNetwork::new(delay)),
        }
    }
}

impl fmt::Display for NetworkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown network model name.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[error("unknown network model `{0}`; expected maxplus, paper or flow")]
pub struct UnknownNetwork(pub String);

impl FromStr for NetworkKind {
    type Err = UnknownNetwork;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "maxplus" => Ok(NetworkKind::Maxplus),
            "paper" => Ok(NetworkKind::Paper),
            "flow" => Ok(NetworkKind::Flow),
            other => Err(UnknownNetwork(other.to_string())),
        }
    }
}

/// A slab of in-flight transfers addressed by token (slot index).
#[derive(Debug)]
pub(crate) struct Slab<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    #[inline]
    pub(crate) fn insert(&mut self, t: T) -> usize {
        if let Some(i) = self.free.pop() {
            self.slots[i] = Some(t);
            i
        } else {
            self.slots.push(Some(t));
            self.slots.len() - 1
        }
    }
    #[inline]
    pub(crate) fn remove(&mut self, i: usize) -> T {
        let t = self.slots[i].take().expect("live slab slot");
        self.free.push(i);
        t
    }
    pub(crate) fn get(&self, i: usize) -> &T {
        self.slots[i].as_ref().expect("live slab slot")
    }
}
