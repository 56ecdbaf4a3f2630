//! Training coupled to the simulator: train the real model round by round
//! as fast as the machine allows, and let the network simulator tell when
//! each round would have ended on the chosen underlay (\[Marfoq20\] Sec. 4).
//!
//! Round clocks (when each round would have ended) are timing, in
//! [`crate::replay::clock`].
//!
//! Always built (pure Rust, tested without libtorch; the consensus rules
//! the trainer averages with are [`crate::mixing::consensus`]):
//! * [`data`]: synthetic data, MNIST / CIFAR-10 loaders, partitions.
//! * [`report`]: per-round CSV, time-to-target summaries.
//! * [`stationary`]: the DecAvg stationary distribution and the
//!   initialisation gain (\[BadieModiri24\]).
//!
//! With the `train` feature (libtorch via tch, `scripts/libtorch.sh`):
//! * `model`: batched models (logreg, MLP, LeNet, GN-LeNet).
//! * `optim`: SGD with momentum, Adam; constant or `1/sqrt(round)` rate.
//! * `trainer`: DPASGD (\[Marfoq20\] eq. 2) on all silos as one tensor program.
//! * `checkpoint`: resumable runs with atomic outputs.
//! * `session`: one overlay's run on a network (shared by the CLI and
//!   experiment files).
//! * `asynchronous`: asynchronous gossip and buffered aggregation's
//!   model updates, applied in the order the event engine ran them.

pub mod clique_averaging;
pub mod data;
pub mod report;
pub mod stationary;

#[cfg(feature = "train")]
pub mod asynchronous;
#[cfg(feature = "train")]
pub mod checkpoint;
#[cfg(feature = "train")]
pub mod model;
#[cfg(feature = "train")]
pub mod optim;
#[cfg(feature = "train")]
pub mod session;
#[cfg(feature = "train")]
pub mod trainer;
