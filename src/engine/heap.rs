//! The event queue's priority queue: a 4-ary min-heap on a packed `u128`
//! key (time, then sequence number).
//!
//! A 4-ary heap is half as deep as a binary one, and the four children of
//! a node are adjacent, so a sift-down compares them within one or two
//! cache lines; sift-ups (every schedule) move fewer levels. Keys are
//! compared as one integer: the time's bits mapped to an unsigned integer
//! with the order of [`f64::total_cmp`] ([`time_key`]) in the high 64 bits,
//! the event's sequence number in the low 64. Keys are unique (sequence
//! numbers are), so the pop order is the total order of `(time, id)`,
//! whatever the heap's shape: the same order as the `BinaryHeap` the engine
//! used before (property-tested).

/// Children per node.
const ARITY: usize = 4;

/// `t`'s bits as an unsigned integer ordered as [`f64::total_cmp`] orders
/// `t` (negative numbers reversed below the positive ones).
#[inline]
pub(crate) fn time_key(t: f64) -> u64 {
    let b = t.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// The time whose [`time_key`] is `k`.
#[inline]
pub(crate) fn key_time(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The packed key of an event at `time` (ms) with sequence number `id`.
#[inline]
pub(crate) fn pack(time: f64, id: u64) -> u128 {
    (u128::from(time_key(time)) << 64) | u128::from(id)
}

/// Time (ms) of a packed key.
#[inline]
pub(crate) fn key_time_of(key: u128) -> f64 {
    key_time((key >> 64) as u64)
}

/// Sequence number of a packed key.
#[inline]
pub(crate) fn key_id(key: u128) -> u64 {
    key as u64
}

/// A heap entry.
pub(crate) struct Entry<E> {
    pub(crate) key: u128,
    pub(crate) event: E,
}

/// A 4-ary min-heap of entries by key (module docs). Keys and events sit
/// in two parallel vectors, so that comparisons read only keys (four
/// children: 64 bytes).
pub(crate) struct QuadHeap<E> {
    keys: Vec<u128>,
    events: Vec<E>,
}

impl<E> QuadHeap<E> {
    pub(crate) fn new() -> Self {
        QuadHeap {
            keys: Vec::new(),
            events: Vec::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Key of the smallest entry.
    #[inline]
    pub(crate) fn peek_key(&self) -> Option<u128> {
        self.keys.first().copied()
    }

    /// Every key, in no particular order.
    pub(crate) fn keys(&self) -> &[u128] {
        &self.keys
    }

    #[inline]
    pub(crate) fn push(&mut self, key: u128, event: E) {
        self.keys.push(key);
        self.events.push(event);
        self.sift_up(self.keys.len() - 1);
    }

    /// Removes and returns the smallest entry.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Entry<E>> {
        let key = self.keys.pop()?;
        let event = self.events.pop()?;
        if self.keys.is_empty() {
            return Some(Entry { key, event });
        }
        let top = Entry {
            key: std::mem::replace(&mut self.keys[0], key),
            event: std::mem::replace(&mut self.events[0], event),
        };
        self.sift_down(0);
        Some(top)
    }

    /// Keeps the entries whose key `keep` accepts (and restores the heap
    /// order).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(u128) -> bool) {
        let mut i = 0;
        while i < self.keys.len() {
            if keep(self.keys[i]) {
                i += 1;
            } else {
                self.keys.swap_remove(i);
                self.events.swap_remove(i);
            }
        }
        let n = self.keys.len();
        if n > 1 {
            for i in (0..=(n - 2) / ARITY).rev() {
                self.sift_down(i);
            }
        }
    }

    #[inline]
    fn swap(&mut self, a: usize, b: usize) {
        self.keys.swap(a, b);
        self.events.swap(a, b);
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let key = self.keys[i];
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.keys[parent] <= key {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }

    /// Moves entry `i` down while a child is smaller, swapping it with
    /// its smallest child.
    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let n = self.keys.len();
        let key = self.keys[i];
        loop {
            let first = ARITY * i + 1;
            let best = if first + ARITY <= n {
                let k = &self.keys[first..first + ARITY];
                let a = if k[1] < k[0] { 1 } else { 0 };
                let b = if k[3] < k[2] { 3 } else { 2 };
                first + if k[b] < k[a] { b } else { a }
            } else if first < n {
                (first + 1..n).fold(
                    first,
                    |m, c| {
                        if self.keys[c] < self.keys[m] {
                            c
                        } else {
                            m
                        }
                    },
                )
            } else {
                return;
            };
            if key <= self.keys[best] {
                return;
            }
            self.swap(i, best);
            i = best;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::{Ordering, Reverse};
    use std::collections::BinaryHeap;

    /// The order of the engine's former `BinaryHeap` entries: time by
    /// `total_cmp`, then id.
    struct Old(f64, u64);
    impl PartialEq for Old {
        fn eq(&self, o: &Self) -> bool {
            self.cmp(o) == Ordering::Equal
        }
    }
    impl Eq for Old {}
    impl PartialOrd for Old {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Old {
        fn cmp(&self, o: &Self) -> Ordering {
            self.0.total_cmp(&o.0).then_with(|| self.1.cmp(&o.1))
        }
    }

    #[test]
    fn time_key_orders_as_total_cmp_and_round_trips() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -1.5,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1e-300,
            1.0,
            1.0 + f64::EPSILON,
            2.5e6,
            f64::MAX,
            f64::INFINITY,
        ];
        for a in xs {
            assert_eq!(key_time(time_key(a)).to_bits(), a.to_bits());
            for b in xs {
                assert_eq!(time_key(a).cmp(&time_key(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
    }

    /// A time drawn from a few values (many ties), small integers or any
    /// non-NaN float.
    fn time() -> impl Strategy<Value = f64> {
        prop_oneof![
            (0u8..4).prop_map(f64::from),
            (0u32..1000).prop_map(|x| f64::from(x) * 0.25),
            any::<f64>().prop_filter("not NaN", |x| !x.is_nan()),
        ]
    }

    proptest! {
        /// Interleaved pushes and pops (and a retain) pop in exactly the
        /// order of a `BinaryHeap` on (time by `total_cmp`, id), ties
        /// included.
        #[test]
        fn pops_in_binary_heap_order(
            ops in prop::collection::vec((time(), 0u8..3), 0..400),
            drop_every in 2u64..7,
        ) {
            let mut q = QuadHeap::new();
            let mut old = BinaryHeap::new();
            for (id, &(t, op)) in ops.iter().enumerate() {
                let id = id as u64;
                q.push(pack(t, id), id);
                old.push(Reverse(Old(t, id)));
                if op == 0 {
                    let a = q.pop().map(|e| (key_time_of(e.key).to_bits(), key_id(e.key), e.event));
                    let b = old.pop().map(|Reverse(Old(t, i))| (t.to_bits(), i, i));
                    prop_assert_eq!(a, b);
                }
                if id == 200 {
                    q.retain(|k| !key_id(k).is_multiple_of(drop_every));
                    old.retain(|Reverse(o)| !o.1.is_multiple_of(drop_every));
                }
                prop_assert_eq!(q.len(), old.len());
                prop_assert_eq!(
                    q.peek_key().map(key_id),
                    old.peek().map(|Reverse(o)| o.1)
                );
            }
            while let Some(Reverse(Old(t, i))) = old.pop() {
                let e = q.pop().expect("same length");
                prop_assert_eq!((key_time_of(e.key).to_bits(), key_id(e.key), e.event), (t.to_bits(), i, i));
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
