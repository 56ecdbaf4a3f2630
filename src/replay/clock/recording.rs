//! A clock that keeps every round's time breakdown of the clock it wraps:
//! the trainer's way to report where each round's time went
//! ([`crate::replay::breakdown`]) without changing how it drives a clock.

use super::{ClockError, RoundClock};
use crate::graph::Overlay;
use crate::replay::breakdown::{Breakdown, SiloRound, MAX_BREAKDOWN_ROWS};
use crate::replay::ReplayError;
use crate::units::Ms;

/// Wraps a [`RoundClock`] that records breakdowns
/// ([`RoundClock::record_breakdown`]) and gathers the silo-rounds of every
/// round it times, at most [`MAX_BREAKDOWN_ROWS`] of them.
pub struct RecordingClock<'c> {
    inner: &'c mut dyn RoundClock,
    silos: usize,
    rows: Vec<SiloRound>,
}

impl<'c> RecordingClock<'c> {
    /// Starts recording on `inner` (no round timed yet) for `rounds`
    /// rounds of `silos` silos; `None` when `inner` records no breakdown
    /// (its [`RoundClock::record_breakdown`] refused, e.g. the two-phase
    /// Clique Averaging clock, or it has timed a round already).
    ///
    /// # Errors
    /// [`ReplayError::BreakdownTooLarge`] when `rounds x silos` exceeds
    /// [`MAX_BREAKDOWN_ROWS`], refused before any round runs.
    pub fn new(
        inner: &'c mut dyn RoundClock,
        silos: usize,
        rounds: u64,
    ) -> Result<Option<Self>, ClockError> {
        let rows = rounds.saturating_mul(silos as u64);
        if rows > MAX_BREAKDOWN_ROWS {
            return Err(ReplayError::BreakdownTooLarge {
                rounds,
                silos,
                rows,
                max: MAX_BREAKDOWN_ROWS,
            }
            .into());
        }
        if inner.record_breakdown().is_err() {
            return Ok(None);
        }
        Ok(Some(RecordingClock {
            inner,
            silos,
            rows: Vec::new(),
        }))
    }

    /// Every round timed so far, ordered by round then silo.
    pub fn into_breakdown(self) -> Breakdown {
        Breakdown::from_rows(self.silos, self.rows)
    }
}

impl RoundClock for RecordingClock<'_> {
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError> {
        let t = self.inner.round_end_times(k, overlay)?;
        let round = self.inner.breakdown().unwrap_or_default();
        let rows = (self.rows.len() + round.len()) as u64;
        if rows > MAX_BREAKDOWN_ROWS {
            return Err(ReplayError::BreakdownTooLarge {
                rounds: k + 1,
                silos: self.silos,
                rows,
                max: MAX_BREAKDOWN_ROWS,
            }
            .into());
        }
        self.rows.extend_from_slice(round);
        Ok(t)
    }

    fn breakdown(&self) -> Option<&[SiloRound]> {
        self.inner.breakdown()
    }

    fn participation(&self) -> Option<&crate::replay::RoundParticipation> {
        self.inner.participation()
    }
}
