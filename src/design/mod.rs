//! Overlay design beyond the throughput paper: overlays chosen for the
//! time to a target, cycle time *and* mixing.
//!
//! * [`augment`](mod@augment): add arcs to a designed overlay (ring-opt, delta-MBST),
//!   best mixing gain first, while the cycle time does not grow (the
//!   paper's future work, \[Marfoq20\] Sec. 6), and the Pareto front of
//!   cycle time against mixing;
//! * [`search`]: the candidates of `fedtopo design`, ranked by predicted
//!   wall-clock time to a target (cycle time x predicted rounds);
//! * [`export`]: candidates written as overlay files that train as
//!   designed (weights included);
//! * [`predictor`]: the fitted rounds predictor (mixing time, silos,
//!   effective neighbours, time-varying, label heterogeneity), fitted with
//!   censored runs, shipped fitted on `experiments/design` ([`fitted`]);
//! * [`calibrate`]: measured runs (reached or censored) fit the rounds
//!   predictor; the measured winner and its ties;
//! * `verify` (feature `train`): probe runs, calibration and full runs
//!   of the top candidates on the designed network.

pub mod arc_scores;
pub mod augment;
pub mod calibrate;
pub mod calibration;
pub mod cycle_screen;
pub mod export;
pub mod figures;
pub mod fitted;
pub mod label_share;
pub mod mixing_rows;
pub mod predictor;
pub mod search;
#[cfg(feature = "train")]
pub mod verify;

pub use augment::{
    augment, AugmentError, AugmentOptions, AugmentPoint, Augmentation, MAX_AUGMENT_SILOS,
};
