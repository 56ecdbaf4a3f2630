//! Which events are done (fired or cancelled), in memory that does not
//! grow with the number of events ever scheduled.
//!
//! One bit per sequence number, over a window of 64-bit words that starts
//! at the oldest event still in the queue: every id below the window is
//! done (an event leaves the queue only by firing or by being cancelled).
//! When the window has doubled since it was last trimmed, the queue is
//! scanned for its oldest id and the words below it are dropped, `O(queue)`
//! paid for by the `>= 32` events per word scheduled meanwhile. An endless
//! run (a training clock) therefore keeps a bounded window and, once it
//! has reached its size, allocates nothing.

use std::collections::VecDeque;

/// Smallest window (words) worth trimming.
const MIN_TRIM_WORDS: usize = 64;

/// The done bits of a [`super::Scheduler`] (module docs).
#[derive(Debug, Default)]
pub(crate) struct DoneBits {
    /// Bit `id % 64` of word `id / 64 - base`: event `id` is done.
    words: VecDeque<u64>,
    /// Word index of `words[0]`: ids below `64 * base` are all done.
    base: u64,
    /// Window length (words) at which the next new word trims first.
    trim_at: usize,
}

impl DoneBits {
    /// True when event `id` fired or was cancelled (or is below the
    /// window). Ids never scheduled read as not done.
    #[inline]
    pub(crate) fn contains(&self, id: u64) -> bool {
        match (id / 64).checked_sub(self.base) {
            None => true,
            Some(w) => self
                .words
                .get(w as usize)
                .is_some_and(|x| (x >> (id % 64)) & 1 == 1),
        }
    }

    /// Marks event `id` done (a no-op below the window, done already).
    #[inline]
    pub(crate) fn insert(&mut self, id: u64) {
        if let Some(w) = (id / 64).checked_sub(self.base) {
            if let Some(x) = self.words.get_mut(w as usize) {
                *x |= 1 << (id % 64);
            }
        }
    }

    /// Makes room for the bit of `id`, the next sequence number (ids come
    /// in increasing order). Before a new word, when the window has
    /// doubled, calls `oldest` for the smallest id still queued (`None`:
    /// the queue is empty) and drops the words below it.
    #[inline]
    pub(crate) fn add(&mut self, id: u64, oldest: impl FnOnce() -> Option<u64>) {
        let word = id / 64;
        if word < self.base + self.words.len() as u64 {
            return;
        }
        if self.words.len() >= self.trim_at {
            let low = oldest().map_or(id, |o| o.min(id)) / 64;
            while self.base < low && !self.words.is_empty() {
                self.words.pop_front();
                self.base += 1;
            }
            if self.words.is_empty() {
                self.base = word;
            }
            self.trim_at = (2 * self.words.len()).max(MIN_TRIM_WORDS);
        }
        while self.base + (self.words.len() as u64) <= word {
            self.words.push_back(0);
        }
    }

    /// Words in the window (for tests).
    #[cfg(test)]
    pub(crate) fn window_words(&self) -> usize {
        self.words.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An endless stream of events, each fired a little after it was
    /// scheduled, keeps a bounded window; bits read back as set.
    #[test]
    fn window_stays_bounded_and_reads_back() {
        let mut d = DoneBits::default();
        let lag = 300u64;
        for id in 0..1_000_000u64 {
            let oldest = id.saturating_sub(lag);
            d.add(id, || Some(oldest));
            assert!(!d.contains(id));
            if id >= lag {
                d.insert(id - lag);
                assert!(d.contains(id - lag));
            }
            assert!(!d.contains(id + 1), "never scheduled");
        }
        assert!(
            d.window_words() <= 2 * MIN_TRIM_WORDS,
            "{}",
            d.window_words()
        );
        assert!(d.contains(5), "below the window: done");
    }

    /// One old event still queued keeps its word (and all later ones).
    #[test]
    fn an_old_pending_event_is_kept() {
        let mut d = DoneBits::default();
        for id in 0..100_000u64 {
            d.add(id, || Some(7));
            if id != 7 {
                d.insert(id);
            }
        }
        assert!(!d.contains(7));
        assert!(d.contains(6) && d.contains(8) && d.contains(99_999));
        d.insert(7);
        assert!(d.contains(7));
    }
}
