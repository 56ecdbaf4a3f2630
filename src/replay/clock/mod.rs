//! Round clocks, the seam between training and the network simulator: a [`RoundClock`]
//! turns the overlay of each round into the wall-clock time (ms) at which
//! every silo finishes that round.
//!
//! The trainer runs rounds `k = 0, 1, 2, ...` as fast as the machine allows
//! and asks the clock, round by round, when they *would* have ended on the
//! simulated network. [`MaxPlusClock`] implements the paper's max-plus
//! recurrence in closed form; [`EngineClock`] replays the rounds event by
//! event in the discrete-event engine ([`crate::engine`]) over any network
//! model ([`crate::network::NetworkKind`]: `maxplus | paper | flow`). With the `maxplus`
//! network both give the same times to rounding (tested, an independent
//! cross-check), and [`EngineClock`] computes the event replay's times bit
//! for bit from the recurrence in the engine's order of additions instead
//! of handling events (`recurrence`, also tested against the events).
//! [`CliqueAveragingClock`] times two-phase Clique Averaging rounds with
//! the max-plus recurrence of [`crate::timing::two_phase`];
//! [`AllReduceClock`] times all-reduce rounds (ring or mesh) with the chunk
//! recurrences of [`crate::timing::allreduce`].
//!
//! Clocks are timing, not training: they live in the replay layer so that
//! any layer below the trainer can hand one out.

use thiserror::Error;

use crate::graph::Overlay;
use crate::timing::TimingError;
use crate::units::Ms;

use super::{ReplayError, RoundParticipation, SiloRound};

mod allreduce;
mod clique_averaging;
mod engine;
mod maxplus;
mod recording;
mod recurrence;

pub use allreduce::AllReduceClock;
pub use clique_averaging::CliqueAveragingClock;
pub use engine::EngineClock;
pub use maxplus::MaxPlusClock;
pub use recording::RecordingClock;

/// Why a clock could not time a round.
#[derive(Debug, Error)]
pub enum ClockError {
    /// Rounds must be timed in order `0, 1, 2, ...`.
    #[error("round {got} timed out of order (expected round {expected})")]
    OutOfOrder {
        /// The round the clock expected.
        expected: u64,
        /// The round it was given.
        got: u64,
    },
    /// The overlay does not fit the network.
    #[error(transparent)]
    Timing(#[from] TimingError),
    /// The event-driven replay failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// Anything a clock implementation wants to report.
    #[error("{0}")]
    Other(String),
}

/// The checks every closed-form clock makes before timing round `k`:
/// rounds in order (`expected` is the next one) and an overlay of the
/// clock's `silos`.
pub(crate) fn check_round(
    k: u64,
    expected: u64,
    overlay: &Overlay,
    silos: usize,
) -> Result<(), ClockError> {
    if k != expected {
        return Err(ClockError::OutOfOrder { expected, got: k });
    }
    if overlay.silo_count() != silos {
        return Err(TimingError::SizeMismatch {
            overlay: overlay.silo_count(),
            network: silos,
        }
        .into());
    }
    Ok(())
}

/// Wall-clock times of training rounds on a simulated network.
///
/// Contract: the clock starts with every silo at time 0 ms; the `k`-th call
/// (`k = 0, 1, ...`, in order, one call per round) receives round `k`'s
/// overlay and returns `t(k+1)`, the time (ms since the start) at which each
/// silo has finished round `k` (local steps, sends, receives and averaging),
/// one entry per silo. Times never decrease from one round to the next.
/// A clock is deterministic: the same overlays give the same times, so a
/// resumed run rebuilds its clock by replaying the rounds already done.
pub trait RoundClock {
    /// End times (ms, one per silo) of round `k` on `overlay`.
    fn round_end_times(&mut self, k: u64, overlay: &Overlay) -> Result<Vec<Ms>, ClockError>;

    /// As [`Self::round_end_times`], into `out` (its contents replaced):
    /// a caller that times round after round into one buffer (Python's
    /// `Clock.step`) then allocates nothing per round on clocks that
    /// override it ([`EngineClock`]).
    fn round_end_times_into(
        &mut self,
        k: u64,
        overlay: &Overlay,
        out: &mut Vec<Ms>,
    ) -> Result<(), ClockError> {
        *out = self.round_end_times(k, overlay)?;
        Ok(())
    }

    /// Records where each round's time goes from round 0 on
    /// ([`Self::breakdown`]).
    ///
    /// # Errors
    /// [`ClockError::Other`] for a clock that records none (the default),
    /// or once a round has been timed.
    fn record_breakdown(&mut self) -> Result<(), ClockError> {
        Err(ClockError::Other(
            "this clock records no time breakdown (the event clocks do: EngineClock)".into(),
        ))
    }

    /// Where the last round timed went, silo by silo
    /// ([`crate::replay::breakdown`]), when the clock records it
    /// ([`Self::record_breakdown`]); `None` otherwise.
    fn breakdown(&self) -> Option<&[SiloRound]> {
        None
    }

    /// Who took part in the last round timed, under an availability policy
    /// other than `wait` ([`crate::replay::churn`]): the models each silo
    /// averaged, who took its local steps, who rejoined from whom. `None`
    /// when every silo took part in the usual way (every clock without
    /// churn).
    fn participation(&self) -> Option<&RoundParticipation> {
        None
    }
}
