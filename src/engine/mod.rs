//! A small, generic discrete-event core: simulated time, an event queue with
//! deterministic ordering, cancellation, a run loop and a trace hook.
//!
//! # Time
//! Simulated time is an `f64` number of **milliseconds** ([`crate::units::Ms`]),
//! ordered by `f64::total_cmp`; NaN is rejected when scheduling. Floats rather
//! than integer nanoseconds because the replay in `maxplus` mode must
//! reproduce the max-plus recurrence of [`crate::maxplus::Recurrence`] to
//! float rounding: rounding every delay to an integer number of ns would add
//! up to 0.5 ns per arc and per round, an error that grows with the number of
//! rounds. An `f64` holds a 10-day run to better than 1 ns.
//!
//! # Ordering
//! Events are popped by increasing time; events at the same time pop in the
//! order they were scheduled (every event gets a sequence number, its
//! [`EventId`]). Runs are therefore deterministic. The queue is a 4-ary
//! min-heap on one packed integer key per event, the time's bits in
//! `total_cmp` order then the sequence number (`heap.rs`): no allocation
//! once it has grown to the run's largest number of pending events.
//!
//! # Cancellation
//! [`Scheduler::cancel`] is amortised O(1): a cancelled event stays in the
//! heap and is skipped when it reaches the top (lazy deletion). One bit per
//! event records "fired or cancelled", over a window that starts at the
//! oldest event still queued (`done.rs`), so memory does not grow with the
//! number of events ever scheduled. When cancelled entries
//! outnumber the pending events (plus a slack of 1024), the heap is rebuilt
//! without them (`O(heap)`, paid for by those cancellations), so a model
//! that re-times its events often (the flow model) keeps a small heap. The
//! pop order is a total order on (time, id), so compaction never changes it.
//!
//! ```
//! use fedtopo::engine::{run, Handler, Scheduler};
//! struct Count(u32);
//! impl Handler<u32> for Count {
//!     fn handle(&mut self, now: f64, ev: u32, q: &mut Scheduler<u32>) {
//!         self.0 += 1;
//!         if ev > 0 { q.schedule_in(1.5, ev - 1); }
//!         assert!(now >= 0.0);
//!     }
//! }
//! let mut q = Scheduler::new();
//! q.schedule_at(0.0, 3);
//! let mut h = Count(0);
//! let stats = run(&mut q, &mut h, None);
//! assert_eq!(h.0, 4);
//! assert_eq!(stats.events, 4);
//! assert_eq!(q.now(), 4.5);
//! ```

mod done;
pub mod fx;
mod heap;

use crate::units::Ms;
use done::DoneBits;
use heap::{key_id, key_time_of, pack, QuadHeap};

/// Identifier of a scheduled event: its sequence number (unique per
/// [`Scheduler`], increasing in scheduling order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId(pub u64);

/// Called with `(time ms, id, event)` for every event as it fires.
pub type TraceHook<E> = Box<dyn FnMut(Ms, EventId, &E)>;

/// The event queue and the simulation clock.
pub struct Scheduler<E> {
    /// Pending and cancelled-but-not-yet-skipped events, by (time, id).
    heap: QuadHeap<E>,
    now: Ms,
    next_id: u64,
    /// Which events fired or were cancelled.
    done: DoneBits,
    pending: usize,
    trace: Option<TraceHook<E>>,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> std::fmt::Debug for Scheduler<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("now", &self.now)
            .field("pending", &self.pending)
            .field("scheduled", &self.next_id)
            .finish()
    }
}

impl<E> Scheduler<E> {
    /// An empty queue at time 0 ms.
    pub fn new() -> Self {
        Scheduler {
            heap: QuadHeap::new(),
            now: 0.0,
            next_id: 0,
            done: DoneBits::default(),
            pending: 0,
            trace: None,
        }
    }

    /// Current simulated time, ms.
    #[inline]
    pub fn now(&self) -> Ms {
        self.now
    }

    /// Number of pending (scheduled, not fired, not cancelled) events.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// True when no event is pending.
    pub fn is_empty(&self) -> bool {
        self.pending == 0
    }

    /// Number of events ever scheduled.
    pub fn scheduled(&self) -> u64 {
        self.next_id
    }

    /// Installs a hook called for every event as it fires (before its handler).
    pub fn set_trace(&mut self, hook: TraceHook<E>) {
        self.trace = Some(hook);
    }

    /// Schedules `event` at absolute time `time` (ms).
    ///
    /// # Panics
    /// If `time` is NaN or earlier than [`Scheduler::now`] (a handler bug:
    /// the past cannot be changed).
    #[inline]
    pub fn schedule_at(&mut self, time: Ms, event: E) -> EventId {
        assert!(
            time >= self.now,
            "event scheduled at {time} ms, before now = {} ms",
            self.now
        );
        let id = self.next_id;
        self.next_id += 1;
        let heap = &self.heap;
        self.done
            .add(id, || heap.keys().iter().map(|&k| key_id(k)).min());
        self.heap.push(pack(time, id), event);
        self.pending += 1;
        EventId(id)
    }

    /// Schedules `event` `delay` ms from now (`delay >= 0`).
    #[inline]
    pub fn schedule_in(&mut self, delay: Ms, event: E) -> EventId {
        self.schedule_at(self.now + delay, event)
    }

    /// Cancels a pending event. Returns `false` (and does nothing) when the
    /// event already fired, was already cancelled, or was never scheduled.
    pub fn cancel(&mut self, id: EventId) -> bool {
        if id.0 >= self.next_id || self.done.contains(id.0) {
            return false;
        }
        self.done.insert(id.0);
        self.pending -= 1;
        if self.heap.len() > 2 * self.pending + 1024 {
            let done = &self.done;
            self.heap.retain(|k| !done.contains(key_id(k)));
        }
        true
    }

    /// Time of the next pending event, if any.
    pub fn peek_time(&mut self) -> Option<Ms> {
        self.skip_cancelled();
        self.heap.peek_key().map(key_time_of)
    }

    #[inline]
    fn skip_cancelled(&mut self) {
        while let Some(top) = self.heap.peek_key() {
            if self.done.contains(key_id(top)) {
                self.heap.pop();
            } else {
                break;
            }
        }
    }

    /// Removes the next event, advances the clock to its time, calls the
    /// trace hook and returns it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Ms, EventId, E)> {
        self.skip_cancelled();
        let e = self.heap.pop()?;
        let (time, id) = (key_time_of(e.key), key_id(e.key));
        self.done.insert(id);
        self.pending -= 1;
        self.now = time;
        let id = EventId(id);
        if let Some(hook) = self.trace.as_mut() {
            hook(time, id, &e.event);
        }
        Some((time, id, e.event))
    }
}

/// Reacts to events; may schedule or cancel others.
pub trait Handler<E> {
    /// Handles `event` fired at `now` (ms).
    fn handle(&mut self, now: Ms, event: E, queue: &mut Scheduler<E>);
}

/// What a [`run`] did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RunStats {
    /// Events handled.
    pub events: u64,
    /// Simulated time at the end, ms.
    pub end_ms: Ms,
}

/// Pops and handles events until the queue is empty or the next event is
/// later than `until` (ms; those events stay queued).
pub fn run<E, H: Handler<E> + ?Sized>(
    queue: &mut Scheduler<E>,
    handler: &mut H,
    until: Option<Ms>,
) -> RunStats {
    let mut events = 0;
    loop {
        if let Some(limit) = until {
            match queue.peek_time() {
                Some(t) if t <= limit => {}
                _ => break,
            }
        }
        let Some((now, _, ev)) = queue.pop() else {
            break;
        };
        handler.handle(now, ev, queue);
        events += 1;
    }
    RunStats {
        events,
        end_ms: queue.now(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = Scheduler::new();
        q.schedule_at(2.0, "c");
        q.schedule_at(1.0, "a");
        q.schedule_at(2.0, "d");
        q.schedule_at(1.0, "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|e| e.2)).collect();
        assert_eq!(order, ["a", "b", "c", "d"]);
        assert_eq!(q.now(), 2.0);
    }

    #[test]
    fn cancel_skips_and_reports() {
        let mut q = Scheduler::new();
        let a = q.schedule_at(1.0, 1);
        let b = q.schedule_at(2.0, 2);
        assert!(q.cancel(a));
        assert!(!q.cancel(a), "double cancel");
        assert_eq!(q.pending(), 1);
        assert_eq!(q.peek_time(), Some(2.0));
        assert_eq!(q.pop().map(|e| e.2), Some(2));
        assert!(!q.cancel(b), "already fired");
        assert!(!q.cancel(EventId(99)), "never scheduled");
        assert!(q.pop().is_none());
        assert!(q.is_empty());
    }

    #[test]
    fn trace_hook_sees_every_fired_event() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let s2 = seen.clone();
        let mut q = Scheduler::new();
        q.set_trace(Box::new(move |t, id, e: &u8| {
            s2.borrow_mut().push((t, id.0, *e))
        }));
        q.schedule_at(3.0, 7);
        let c = q.schedule_at(1.0, 8);
        q.schedule_at(2.0, 9);
        q.cancel(c);
        while q.pop().is_some() {}
        assert_eq!(*seen.borrow(), vec![(2.0, 2, 9), (3.0, 0, 7)]);
    }

    #[test]
    fn run_stops_at_horizon() {
        struct Tick;
        impl Handler<()> for Tick {
            fn handle(&mut self, _now: Ms, _e: (), q: &mut Scheduler<()>) {
                q.schedule_in(1.0, ());
            }
        }
        let mut q = Scheduler::new();
        q.schedule_at(0.0, ());
        let s = run(&mut q, &mut Tick, Some(10.0));
        assert_eq!(s.events, 11);
        assert_eq!(q.pending(), 1);
        assert_eq!(q.peek_time(), Some(11.0));
    }

    /// Random schedules, cancels (of pending, fired and unknown ids) and
    /// pops, far past the done window's first trims, against a reference
    /// queue (an ordered set and a set of done ids): same pops, same
    /// cancel answers, same pending count.
    #[test]
    fn matches_a_reference_queue_over_many_events() {
        use std::collections::{BTreeSet, HashSet};
        for seed in 1..4u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut rnd = move |m: u64| rng.gen_range(0..m);
            let mut q = Scheduler::new();
            let mut refq: BTreeSet<(u64, u64)> = BTreeSet::new();
            let mut done: HashSet<u64> = HashSet::new();
            let mut next = 0u64;
            for _ in 0..200_000 {
                match rnd(10) {
                    0..=3 => {
                        // Ties are frequent: delays on a coarse grid.
                        let at = q.now() + rnd(8) as f64 * 0.5;
                        let id = q.schedule_at(at, next);
                        assert_eq!(id, EventId(next));
                        refq.insert((heap::time_key(at), next));
                        next += 1;
                    }
                    4 => {
                        let id = if rnd(3) == 0 {
                            next.saturating_sub(1 + rnd(5000))
                        } else {
                            next.saturating_sub(1 + rnd(200))
                        };
                        let id = id + rnd(2) * 1_000_000 * u64::from(rnd(50) == 0);
                        let live = id < next && !done.contains(&id);
                        assert_eq!(q.cancel(EventId(id)), live, "cancel {id}");
                        if live {
                            done.insert(id);
                            refq.retain(|&(_, i)| i != id);
                        }
                    }
                    _ => {
                        let want = refq.pop_first();
                        let got = q.pop().map(|(t, id, e)| (heap::time_key(t), id.0, e));
                        assert_eq!(got, want.map(|(t, i)| (t, i, i)));
                        if let Some((_, i)) = want {
                            done.insert(i);
                        }
                    }
                }
                assert_eq!(q.pending(), refq.len());
            }
            assert!(q.done.window_words() < 1024, "{}", q.done.window_words());
        }
    }

    #[test]
    #[should_panic(expected = "before now")]
    fn scheduling_in_the_past_panics() {
        let mut q = Scheduler::new();
        q.schedule_at(5.0, ());
        q.pop();
        q.schedule_at(1.0, ());
    }
}
