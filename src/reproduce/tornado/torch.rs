//! The libtorch learner of `fedtopo tornado learn --trainer torch`: the
//! trainer configuration and optional MNIST data, the model's size, and one
//! program trained by `program::train::train`. Without the `train`
//! feature [`TorchLearner`] and [`TorchError`] are uninhabited.

#[cfg(feature = "train")]
pub use with_torch::*;
#[cfg(not(feature = "train"))]
pub use without_torch::*;

#[cfg(feature = "train")]
mod with_torch {
    use thiserror::Error;

    use crate::program::grouping::LabelCounts;
    use crate::program::learn::{split_by_counts, Dataset as LearnDataset};
    use crate::program::outcome::LearnRecord;
    use crate::program::sim::StepCosts;
    use crate::program::train::{train, TorchOptions};
    use crate::program::ProgramSpec;
    use crate::train::data::{DataError, Dataset, FederatedData};
    use crate::train::model::{BatchedModel, InputShape};
    use crate::train::trainer::{TrainConfig, TrainError};

    /// Why the torch learner failed.
    #[derive(Debug, Error)]
    pub enum TorchError {
        /// The MNIST pool could not be split by the label counts.
        #[error(transparent)]
        Data(#[from] DataError),
        /// Training failed.
        #[error(transparent)]
        Train(#[from] TrainError),
        /// The model could not be built.
        #[error("{0}")]
        Model(String),
    }

    /// What the torch trainer needs besides the per-seed data.
    #[derive(Debug, Clone)]
    pub struct TorchLearner {
        /// Trainer configuration (its seed is replaced by each run's seed).
        pub config: TrainConfig,
        /// MNIST `(train, test)` when training on MNIST instead of the
        /// reference learner's synthetic data.
        pub mnist: Option<(Dataset, Dataset)>,
    }

    impl TorchLearner {
        /// Parameters per silo of the model on the data (`dim`, `classes`:
        /// the synthetic data's, used without MNIST).
        pub fn params(&self, dim: usize, classes: usize) -> Result<usize, TorchError> {
            let input = match &self.mnist {
                Some((train, _)) => InputShape {
                    dim: train.dim,
                    image: train.image,
                    classes: train.classes,
                },
                None => InputShape {
                    dim,
                    image: None,
                    classes,
                },
            };
            let m = BatchedModel::new(self.config.model, 1, input, 0).map_err(TorchError::Model)?;
            Ok(m.params_per_silo())
        }

        /// Trains `spec` for `steps` steps (evaluating every `eval_every`)
        /// on the synthetic data `ds` or, with MNIST, on MNIST split by
        /// `labels`; seeded by `seed`.
        #[allow(clippy::too_many_arguments)]
        pub fn train(
            &self,
            spec: &ProgramSpec,
            labels: &LabelCounts,
            ds: &LearnDataset,
            seed: u64,
            steps: u64,
            eval_every: u64,
            costs: &StepCosts,
        ) -> Result<Vec<LearnRecord>, TorchError> {
            let data = match &self.mnist {
                None => ds.to_federated(),
                Some((pool, test)) => FederatedData {
                    name: "mnist".into(),
                    silos: split_by_counts(pool, labels, seed)?,
                    train: pool.clone(),
                    test: test.clone(),
                },
            };
            let o = TorchOptions {
                config: TrainConfig {
                    seed,
                    ..self.config.clone()
                },
                steps,
                eval_every,
            };
            Ok(train(spec, labels, &data, &o, costs)?)
        }
    }
}

#[cfg(not(feature = "train"))]
mod without_torch {
    use std::fmt;

    use crate::program::grouping::LabelCounts;
    use crate::program::learn::Dataset as LearnDataset;
    use crate::program::outcome::LearnRecord;
    use crate::program::sim::StepCosts;
    use crate::program::ProgramSpec;

    /// No torch learner without the `train` feature (uninhabited).
    #[derive(Debug, Clone)]
    pub enum TorchLearner {}

    /// No torch errors without the `train` feature (uninhabited).
    #[derive(Debug)]
    pub enum TorchError {}

    impl fmt::Display for TorchError {
        fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
            match *self {}
        }
    }

    impl std::error::Error for TorchError {}

    impl TorchLearner {
        /// Unreachable: there is no torch learner without the feature.
        pub fn params(&self, _: usize, _: usize) -> Result<usize, TorchError> {
            match *self {}
        }

        /// Unreachable: there is no torch learner without the feature.
        #[allow(clippy::too_many_arguments)]
        pub fn train(
            &self,
            _: &ProgramSpec,
            _: &LabelCounts,
            _: &LearnDataset,
            _: u64,
            _: u64,
            _: u64,
            _: &StepCosts,
        ) -> Result<Vec<LearnRecord>, TorchError> {
            match *self {}
        }
    }
}
