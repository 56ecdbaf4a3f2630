//! The one protocol harness: a message-passing protocol run in the event
//! engine ([`crate::engine`]) over a [`NetworkModel`].
//!
//! The harness owns what every protocol-on-a-network simulation needs and
//! nothing protocol-specific: the event queue, the network model, the timer
//! plumbing between them ([`EngineTimers`] on the harness's own event
//! type), the buffer of
//! delivered transfers and the deadlock check (the queue ran dry while the
//! protocol has not finished). A protocol ([`EventProtocol`]) only reacts:
//! to its start, to its own timers (e.g. "silo `i` finished computing") and
//! to delivered transfers, and acts through a [`Link`] (schedule a timer,
//! send a transfer).
//!
//! Protocols on it: the round replay ([`super::RoundStepper`],
//! [`super::replay`]), the two-phase Clique Averaging replay
//! ([`super::two_phase`]) and round programs
//! ([`crate::program::sim::simulate`]).
//!
//! # Order of reactions
//! Events are handled in the engine's order (time, then FIFO). After each
//! event (and after [`EventProtocol::start`]) the harness hands the
//! transfers the network delivered meanwhile to
//! [`EventProtocol::on_delivered`], last delivered first, until none is
//! left (transfers a reaction sends that the network delivers at once are
//! handed over in the same pass). Runs are therefore deterministic.

use crate::engine::{self, Handler, RunStats, Scheduler};
use crate::network::{EngineTimers, NetEvent, NetworkModel, NetworkStats, Transfer};
use crate::units::Ms;

/// An event of the harness: a protocol timer or a network-model timer.
#[derive(Debug, Clone, Copy)]
enum Ev<E> {
    /// A timer the protocol set ([`Link::schedule_at`]).
    Protocol(E),
    /// A timer of the network model (its token).
    Net(u64),
}

impl<E> NetEvent for Ev<E> {
    fn net_timer(token: u64) -> Self {
        Ev::Net(token)
    }
}

/// What a protocol can do while it reacts: read the clock, set timers of
/// its own and send transfers through the network model.
pub struct Link<'h, E> {
    queue: &'h mut Scheduler<Ev<E>>,
    net: &'h mut dyn NetworkModel,
    delivered: &'h mut Vec<Transfer>,
}

impl<E> Link<'_, E> {
    /// Current simulated time, ms.
    pub fn now(&self) -> Ms {
        self.queue.now()
    }

    /// Fires [`EventProtocol::on_event`] with `event` at time `at` (ms,
    /// `>= now`).
    pub fn schedule_at(&mut self, at: Ms, event: E) {
        self.queue.schedule_at(at, Ev::Protocol(event));
    }

    /// Fires [`EventProtocol::on_event`] with `event` `delay` ms from now.
    pub fn schedule_in(&mut self, delay: Ms, event: E) {
        self.queue.schedule_in(delay, Ev::Protocol(event));
    }

    /// Starts transfer `t` now; [`EventProtocol::on_delivered`] gets it back
    /// when its last bit has arrived.
    pub fn send(&mut self, t: Transfer) {
        self.net
            .start(t, &mut EngineTimers(&mut *self.queue), self.delivered);
    }
}

/// A message-passing protocol the [`Harness`] drives.
pub trait EventProtocol {
    /// The protocol's own timer events.
    type Event;
    /// Why the protocol could not finish (see [`Self::stall`]).
    type Stall;

    /// Sets the first timers / sends the first transfers, at time 0 ms.
    fn start(&mut self, link: &mut Link<'_, Self::Event>);

    /// A timer set with [`Link::schedule_at`] fired.
    fn on_event(&mut self, event: Self::Event, link: &mut Link<'_, Self::Event>);

    /// Transfer `t` (sent with [`Link::send`]) has been delivered.
    fn on_delivered(&mut self, t: Transfer, link: &mut Link<'_, Self::Event>);

    /// True when the protocol has nothing left to do (a run to the end
    /// that stops with the protocol unfinished is a deadlock).
    fn finished(&self) -> bool;

    /// The deadlock report, asked for when the event queue ran dry before
    /// the protocol finished (or reached what the caller waited for).
    fn stall(&self) -> Self::Stall;
}

/// The network a harness drives: borrowed (a caller's model) or owned.
pub enum Net<'a> {
    /// A model the caller keeps.
    Borrowed(&'a mut dyn NetworkModel),
    /// A model the harness owns.
    Owned(Box<dyn NetworkModel + 'a>),
}

impl<'a> std::ops::Deref for Net<'a> {
    type Target = dyn NetworkModel + 'a;
    fn deref(&self) -> &Self::Target {
        match self {
            Net::Borrowed(n) => &**n,
            Net::Owned(n) => &**n,
        }
    }
}

impl std::ops::DerefMut for Net<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Net::Borrowed(n) => &mut **n,
            Net::Owned(n) => &mut **n,
        }
    }
}

impl<'a> From<&'a mut dyn NetworkModel> for Net<'a> {
    fn from(n: &'a mut dyn NetworkModel) -> Self {
        Net::Borrowed(n)
    }
}

impl<'a> From<Box<dyn NetworkModel + 'a>> for Net<'a> {
    fn from(n: Box<dyn NetworkModel + 'a>) -> Self {
        Net::Owned(n)
    }
}

/// The protocol, the network and the delivered buffer: the engine's
/// [`Handler`] (the queue lives beside it in [`Harness`]).
struct Driver<'n, P> {
    protocol: P,
    net: Net<'n>,
    delivered: Vec<Transfer>,
}

impl<P: EventProtocol> Driver<'_, P> {
    fn link<'h>(
        net: &'h mut Net<'_>,
        delivered: &'h mut Vec<Transfer>,
        queue: &'h mut Scheduler<Ev<P::Event>>,
    ) -> Link<'h, P::Event> {
        Link {
            queue,
            net: &mut **net,
            delivered,
        }
    }

    /// Hands every delivered transfer to the protocol, last first.
    fn drain(&mut self, queue: &mut Scheduler<Ev<P::Event>>) {
        while let Some(t) = self.delivered.pop() {
            let mut link = Self::link(&mut self.net, &mut self.delivered, queue);
            self.protocol.on_delivered(t, &mut link);
        }
    }
}

impl<P: EventProtocol> Handler<Ev<P::Event>> for Driver<'_, P> {
    fn handle(&mut self, _now: Ms, ev: Ev<P::Event>, queue: &mut Scheduler<Ev<P::Event>>) {
        match ev {
            Ev::Protocol(e) => {
                let mut link = Self::link(&mut self.net, &mut self.delivered, queue);
                self.protocol.on_event(e, &mut link);
            }
            Ev::Net(token) => {
                self.net
                    .on_timer(token, &mut EngineTimers(queue), &mut self.delivered)
            }
        }
        self.drain(queue);
    }
}

/// A protocol running over a network model in the event engine (module
/// docs). Run it to the end ([`Self::run_to_end`]) or in steps
/// ([`Self::run_until`]).
pub struct Harness<'n, P: EventProtocol> {
    driver: Driver<'n, P>,
    queue: Scheduler<Ev<P::Event>>,
    events: u64,
}

impl<P: EventProtocol> std::fmt::Debug for Harness<'_, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("network", &self.driver.net.name())
            .field("now_ms", &self.queue.now())
            .field("events", &self.events)
            .finish()
    }
}

impl<'n, P: EventProtocol> Harness<'n, P> {
    /// Starts `protocol` on `net` at time 0 ms ([`EventProtocol::start`]).
    pub fn new(protocol: P, net: impl Into<Net<'n>>) -> Self {
        let mut h = Harness {
            driver: Driver {
                protocol,
                net: net.into(),
                delivered: Vec::new(),
            },
            queue: Scheduler::new(),
            events: 0,
        };
        let d = &mut h.driver;
        let mut link = Driver::<P>::link(&mut d.net, &mut d.delivered, &mut h.queue);
        d.protocol.start(&mut link);
        d.drain(&mut h.queue);
        h
    }

    /// Handles every event; then checks that the protocol finished.
    ///
    /// # Errors
    /// [`EventProtocol::stall`] when it did not (a deadlock).
    pub fn run_to_end(&mut self) -> Result<RunStats, P::Stall> {
        let stats = engine::run(&mut self.queue, &mut self.driver, None);
        self.events += stats.events;
        if self.driver.protocol.finished() {
            Ok(stats)
        } else {
            Err(self.driver.protocol.stall())
        }
    }

    /// Handles events, one at a time, until `reached(protocol)` holds
    /// (checked before each event).
    ///
    /// # Errors
    /// [`EventProtocol::stall`] when the queue runs dry first.
    pub fn run_until(&mut self, mut reached: impl FnMut(&P) -> bool) -> Result<(), P::Stall> {
        while !reached(&self.driver.protocol) {
            let Some((now, _, ev)) = self.queue.pop() else {
                return Err(self.driver.protocol.stall());
            };
            self.driver.handle(now, ev, &mut self.queue);
            self.events += 1;
        }
        Ok(())
    }

    /// The protocol.
    pub fn protocol(&self) -> &P {
        &self.driver.protocol
    }

    /// The protocol, mutably (between events only).
    pub fn protocol_mut(&mut self) -> &mut P {
        &mut self.driver.protocol
    }

    /// Events handled so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The network model's name.
    pub fn network_name(&self) -> &'static str {
        self.driver.net.name()
    }

    /// The network model's counters.
    pub fn network_stats(&self) -> NetworkStats {
        self.driver.net.stats()
    }

    /// The protocol, giving up the network.
    pub fn into_protocol(self) -> P {
        self.driver.protocol
    }
}
