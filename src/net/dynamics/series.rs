//! Piecewise-constant time series and sending bits over a piecewise-constant
//! rate.

use crate::units::{BitsPerSec, Ms};

/// A piecewise-constant series: `values[k]` holds from `times[k]` (ms,
/// strictly increasing) until `times[k + 1]`; before `times[0]` the
/// static value (the caller's) applies.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    times: Vec<Ms>,
    values: Vec<f64>,
}

impl Series {
    /// The series of `points` `(time ms, value)`, times strictly
    /// increasing (the reader checked them).
    pub fn new(points: Vec<(Ms, f64)>) -> Series {
        debug_assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
        let (times, values) = points.into_iter().unzip();
        Series { times, values }
    }

    /// The change times, ms.
    pub fn times(&self) -> &[Ms] {
        &self.times
    }

    /// The values, one per change time.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Number of changes.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True when the series has no change.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The value at time `t` (ms): the last change at or before `t`, or
    /// `base` before the first change.
    #[inline]
    pub fn at(&self, t: Ms, base: f64) -> f64 {
        match self.times.partition_point(|&x| x <= t) {
            0 => base,
            k => self.values[k - 1],
        }
    }

    /// The first change strictly after `t`, ms.
    #[inline]
    pub fn next_after(&self, t: Ms) -> Option<Ms> {
        let k = self.times.partition_point(|&x| x <= t);
        self.times.get(k).copied()
    }
}

/// A piecewise-constant rate as seen from time `t`: its value (bit/s) and
/// the next time it may change (ms, `None`: never).
pub type RateAt<'a> = dyn Fn(Ms) -> (BitsPerSec, Option<Ms>) + 'a;

/// Most rate segments one transfer crosses before it is declared
/// unfinishable (a bound on the work of [`send_ms`], far above any trace
/// a file can hold).
const MAX_SEGMENTS: usize = 10_000_000;

/// Time (ms, from `start`) to send `work` units at `deg` units per bit of
/// the rate `rate(t)` (bit/s, piecewise constant): the `t` at which
/// `integral_start^t rate / deg = work`. Infinite when the rate stays 0
/// (a silo down for good).
///
/// When the rate does not change before the transfer ends the result is
/// `deg * transfer_ms(work, rate)` to the last bit, the static \[Marfoq20\]
/// eq. (3) term, so a trace that never changes a rate leaves every time
/// as it was. Changes to the same value are skipped (they do not split the
/// integral).
pub fn send_ms(start: Ms, work: f64, deg: f64, rate: &RateAt<'_>) -> Ms {
    let (mut r, mut next) = rate(start);
    // Skip changes to the same rate.
    let advance = |mut next: Option<Ms>, r: f64| {
        while let Some(n) = next {
            let (r2, n2) = rate(n);
            if r2 != r {
                break;
            }
            next = n2;
        }
        next
    };
    next = advance(next, r);
    let whole = if r.is_infinite() {
        0.0
    } else {
        deg * (work / r * 1e3)
    };
    match next {
        None if r > 0.0 => return whole,
        Some(n) if r > 0.0 && start + whole <= n => return whole,
        _ => {}
    }
    // Crosses a change: integrate segment by segment (bits left, in units
    // of `work`).
    let mut t = start;
    let mut left = work;
    for _ in 0..MAX_SEGMENTS {
        if r.is_infinite() {
            return t - start;
        }
        let Some(n) = next else {
            return if r > 0.0 {
                t + deg * (left / r * 1e3) - start
            } else {
                f64::INFINITY
            };
        };
        let end = if r > 0.0 {
            t + deg * (left / r * 1e3)
        } else {
            f64::INFINITY
        };
        if end <= n {
            return end - start;
        }
        left -= r / deg * (n - t) / 1e3;
        t = n;
        (r, next) = rate(t);
        next = advance(next, r);
        if left <= 0.0 {
            return t - start;
        }
    }
    f64::INFINITY
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(points: Vec<(Ms, f64)>, base: f64) -> impl Fn(Ms) -> (f64, Option<Ms>) {
        let s = Series::new(points);
        move |t| (s.at(t, base), s.next_after(t))
    }

    #[test]
    fn values_hold_until_the_next_change() {
        let s = Series::new(vec![(10.0, 2.0), (20.0, 3.0)]);
        assert_eq!(s.at(0.0, 1.0), 1.0);
        assert_eq!(s.at(10.0, 1.0), 2.0);
        assert_eq!(s.at(19.9, 1.0), 2.0);
        assert_eq!(s.at(20.0, 1.0), 3.0);
        assert_eq!(s.at(1e9, 1.0), 3.0);
        assert_eq!(s.next_after(0.0), Some(10.0));
        assert_eq!(s.next_after(10.0), Some(20.0));
        assert_eq!(s.next_after(20.0), None);
    }

    /// Hand-computed: 1e6 bit at 1e8 bit/s would take 10 ms; the rate
    /// halves at 4 ms: 4e5 bit sent by then, 6e5 left at 5e7 bit/s = 12 ms,
    /// done at 16 ms.
    #[test]
    fn a_change_mid_transfer_is_integrated() {
        let r = steps(vec![(4.0, 5e7)], 1e8);
        assert!((send_ms(0.0, 1e6, 1.0, &r) - 16.0).abs() < 1e-12);
        // Two transfers' worth (out-degree 2): 2e6 bit, 4 ms at 1e8 then
        // 1.6e6 at 5e7 = 32 ms: 36 ms.
        assert!((send_ms(0.0, 1e6, 2.0, &r) - 36.0).abs() < 1e-12);
        // Starting after the change: the new rate only.
        assert_eq!(send_ms(5.0, 1e6, 1.0, &r), 20.0);
        // Before the change, finishing before it: the static term exactly.
        assert_eq!(send_ms(0.0, 1e5, 1.0, &r), 1e5 / 1e8 * 1e3);
    }

    #[test]
    fn down_intervals_pause_and_a_silo_down_for_good_never_finishes() {
        // Rate 0 from 2 to 7 ms: 1e6 bit at 1e8 = 10 ms of sending, 5 ms
        // paused: done at 15 ms.
        let r = steps(vec![(2.0, 0.0), (7.0, 1e8)], 1e8);
        assert!((send_ms(0.0, 1e6, 1.0, &r) - 15.0).abs() < 1e-12);
        let down = steps(vec![(2.0, 0.0)], 1e8);
        assert_eq!(send_ms(0.0, 1e6, 1.0, &down), f64::INFINITY);
        assert_eq!(send_ms(0.0, 1e5, 1.0, &down), 1.0);
    }

    #[test]
    fn changes_to_the_same_rate_leave_the_static_term() {
        let r = steps(vec![(1.0, 1e8), (2.0, 1e8)], 1e8);
        assert_eq!(send_ms(0.5, 3e7, 3.0, &r), 3.0 * (3e7 / 1e8 * 1e3));
        let inf = steps(vec![(1.0, f64::INFINITY)], 1e8);
        assert_eq!(send_ms(0.0, 1e9, 1.0, &inf), 1.0);
    }
}
