//! Overlay design beyond the throughput paper: overlays chosen for the
//! time to a target, cycle time *and* mixing.
//!
//! * [`augment`]: add arcs to a designed overlay (ring-opt, delta-MBST),
//!   best mixing gain first, while the cycle time does not grow (the
//!   paper's future work, \[Marfoq20\] Sec. 6), and the Pareto front of
//!   cycle time against mixing;
//! * [`search`]: the candidates of `fedtopo design`, ranked by predicted
//!   wall-clock time to a target (cycle time x predicted rounds).

pub mod arc_scores;
pub mod augment;
pub mod cycle_screen;
pub mod figures;
pub mod search;

pub use augment::{augment, AugmentError, AugmentOptions, AugmentPoint, Augmentation};
