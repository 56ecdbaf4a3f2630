//! TornadoAggregate and ring-based hierarchies (\[Lee21\]) as round
//! programs ([`crate::program`]): the paper's Table 3 (clustering cost),
//! the Table 4 programs timed on an underlay, and training under every
//! program with statistics over seeds. `fedtopo tornado` calls these and
//! prints them with [`crate::reproduce::tornado::render`].
//!
//! * [`clustering`]: Table 3, ours vs published (the published constants).
//! * [`time`]: wall-clock, messages and bytes of every program on a network.
//! * [`learn`]: every program trained under one or several seeds (reference
//!   learner, or the libtorch trainer of [`torch`]).
//! * [`torch`]: what the libtorch learner needs (feature `train`; without
//!   it an uninhabited type).

pub mod clustering;
pub mod learn;
pub mod render;
pub mod time;
pub mod torch;

use thiserror::Error;

use crate::program::grouping::GroupingError;
use crate::program::method::MethodError;
use crate::program::sim::SimError;
use crate::program::Method;

pub use clustering::{table3, ClusteringRow, PUBLISHED_TABLE3};

/// Why a Tornado reproduction failed.
#[derive(Debug, Error)]
pub enum TornadoError {
    /// The label partition could not be drawn.
    #[error(transparent)]
    Partition(#[from] GroupingError),
    /// A method's program could not be built.
    #[error("building {method}")]
    Build {
        /// Method.
        method: Method,
        /// Cause.
        #[source]
        source: MethodError,
    },
    /// A program could not be timed on the network.
    #[error("timing {method}")]
    Timing {
        /// Method.
        method: Method,
        /// Cause.
        #[source]
        source: SimError,
    },
    /// The torch learner failed on one method and seed.
    #[error("training {method} (seed {seed})")]
    Training {
        /// Method.
        method: Method,
        /// Seed.
        seed: u64,
        /// Cause.
        #[source]
        source: torch::TorchError,
    },
}
