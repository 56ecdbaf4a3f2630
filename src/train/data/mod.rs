//! Federated datasets: a pool of training examples split among silos, and a
//! shared test set. Pure Rust (no libtorch) and seeded: the same seed gives
//! the same bytes.
//!
//! * [`synthetic`]: the FedProx / LEAF `Synthetic(alpha, beta)` family
//!   (built in, no download; the default).
//! * [`mnist`]: MNIST from IDX files in a directory.
//! * [`cifar`]: CIFAR-10 from its binary batches in a directory.
//! * [`partition`]: iid, shards, one class per silo, Dirichlet, lognormal
//!   sizes, and the paper's "half at random, half to the closest silo".
//! * [`sized`]: the same schemes with given silo sizes (the silo file's
//!   `data` column).

pub mod cifar;
pub mod load;
pub mod mnist;
pub mod partition;
pub mod sized;
pub mod synthetic;

use thiserror::Error;

/// Why a dataset could not be loaded or split.
#[derive(Debug, Error)]
pub enum DataError {
    /// I/O error on a data file.
    #[error("{path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// A data file is not in the expected format.
    #[error("{path}: {message}")]
    Format {
        /// File.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A parameter is out of range.
    #[error("{0}")]
    Invalid(String),
}

/// Labelled examples, row-major: example `k` is
/// `features[k*dim .. (k+1)*dim]` with label `labels[k]` in `0..classes`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Features, `len() * dim` values.
    pub features: Vec<f32>,
    /// Labels.
    pub labels: Vec<i64>,
    /// Features per example.
    pub dim: usize,
    /// Number of classes.
    pub classes: usize,
    /// `(channels, height, width)` for images (`dim = c*h*w`), `None` for vectors.
    pub image: Option<(usize, usize, usize)>,
}

impl Dataset {
    /// Checks that `test` has this training set's example shape (the
    /// model is built for one): the same features per example and, for
    /// images, the same `(channels, height, width)`, whatever the pixel
    /// count (28x28 and 14x56 differ).
    ///
    /// # Errors
    /// Both shapes, for a message naming the data set.
    pub fn check_same_shape(&self, test: &Dataset) -> Result<(), String> {
        if self.dim == test.dim && self.image == test.image && self.classes == test.classes {
            return Ok(());
        }
        let shape = |d: &Dataset| match d.image {
            Some((c, h, w)) => format!("{c}x{h}x{w} images"),
            None => format!("vectors of {}", d.dim),
        };
        Err(format!(
            "the training set holds {} in {} classes but the test set {} in {} classes; \
             both need the same shape",
            shape(self),
            self.classes,
            shape(test),
            test.classes
        ))
    }

    /// Number of examples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when there is no example.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The examples at `idx`, in that order.
    pub fn select(&self, idx: &[usize]) -> Dataset {
        let mut features = Vec::with_capacity(idx.len() * self.dim);
        for &k in idx {
            features.extend_from_slice(&self.features[k * self.dim..(k + 1) * self.dim]);
        }
        Dataset {
            features,
            labels: idx.iter().map(|&k| self.labels[k]).collect(),
            dim: self.dim,
            classes: self.classes,
            image: self.image,
        }
    }

    /// Checks that sizes agree and labels are in range.
    pub fn validate(&self, what: &str) -> Result<(), DataError> {
        if self.features.len() != self.labels.len() * self.dim {
            return Err(DataError::Invalid(format!(
                "{what}: {} features for {} examples of dimension {}",
                self.features.len(),
                self.labels.len(),
                self.dim
            )));
        }
        if let Some(&l) = self
            .labels
            .iter()
            .find(|&&l| l < 0 || l as usize >= self.classes)
        {
            return Err(DataError::Invalid(format!(
                "{what}: label {l} outside 0..{}",
                self.classes
            )));
        }
        Ok(())
    }
}

/// Training pool split among silos, plus a test set shared by all silos.
#[derive(Debug, Clone, PartialEq)]
pub struct FederatedData {
    /// Name ("synthetic(1,1)", "mnist", ...).
    pub name: String,
    /// All training examples.
    pub train: Dataset,
    /// Test examples (every silo's model is evaluated on all of them).
    pub test: Dataset,
    /// `silos[i]`: indices into `train` held by silo `i` (non-empty).
    pub silos: Vec<Vec<usize>>,
}

impl FederatedData {
    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.silos.len()
    }

    /// Checks the split: every silo non-empty, indices in range.
    pub fn validate(&self) -> Result<(), DataError> {
        self.train.validate("train")?;
        self.test.validate("test")?;
        for (i, s) in self.silos.iter().enumerate() {
            if s.is_empty() {
                return Err(DataError::Invalid(format!("silo {i} holds no example")));
            }
            if s.iter().any(|&k| k >= self.train.len()) {
                return Err(DataError::Invalid(format!("silo {i}: index out of range")));
            }
        }
        Ok(())
    }
}

impl FederatedData {
    /// Label heterogeneity of the partition: the mean over silos of the
    /// total-variation distance between the silo's label distribution and
    /// the pooled one of all silos' examples, `(1/n) sum_i (1/2) sum_y
    /// |p_i(y) - p(y)|`, in `[0, 1)`: 0 when every silo holds the same mix
    /// (iid in expectation: a small positive value from sampling), 0.8 for
    /// two balanced classes of ten per silo (the 2-shard partition), `1 -
    /// 1/C` for one class per silo with `C` balanced classes.
    pub fn label_heterogeneity(&self) -> f64 {
        let classes = self.train.classes.max(1);
        let label = |k: usize| (self.train.labels[k].max(0) as usize).min(classes - 1);
        let mut pooled = vec![0.0f64; classes];
        let mut total = 0.0;
        for s in &self.silos {
            for &k in s {
                pooled[label(k)] += 1.0;
                total += 1.0;
            }
        }
        if total == 0.0 || self.silos.is_empty() {
            return 0.0;
        }
        let sum: f64 = self
            .silos
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| {
                let mut own = vec![0.0f64; classes];
                for &k in s {
                    own[label(k)] += 1.0;
                }
                let m = s.len() as f64;
                0.5 * own
                    .iter()
                    .zip(&pooled)
                    .map(|(a, b)| (a / m - b / total).abs())
                    .sum::<f64>()
            })
            .sum();
        sum / self.silos.len() as f64
    }
}

/// Splits `data` into (train, test) with `test_fraction` of the examples
/// (seeded shuffle).
pub fn train_test_split(data: &Dataset, test_fraction: f64, seed: u64) -> (Dataset, Dataset) {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let mut idx: Vec<usize> = (0..data.len()).collect();
    idx.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    let n_test = ((data.len() as f64) * test_fraction).round() as usize;
    let (test, train) = idx.split_at(n_test.min(data.len()));
    (data.select(train), data.select(test))
}

/// Per-feature standardisation with the training set's statistics
/// (applied to both sets; constant features are only centred).
pub fn standardise(train: &mut Dataset, test: &mut Dataset) {
    let d = train.dim;
    let n = train.len().max(1) as f64;
    let mut mean = vec![0.0f64; d];
    let mut var = vec![0.0f64; d];
    for row in train.features.chunks(d) {
        for (m, &x) in mean.iter_mut().zip(row) {
            *m += x as f64 / n;
        }
    }
    for row in train.features.chunks(d) {
        for ((v, m), &x) in var.iter_mut().zip(&mean).zip(row) {
            *v += (x as f64 - m).powi(2) / n;
        }
    }
    for set in [train, test] {
        for row in set.features.chunks_mut(d) {
            for ((x, m), v) in row.iter_mut().zip(&mean).zip(&var) {
                let s = if *v > 1e-12 { v.sqrt() } else { 1.0 };
                *x = ((*x as f64 - m) / s) as f32;
            }
        }
    }
}

#[cfg(test)]
mod shape_tests {
    use super::{Dataset, FederatedData};

    #[test]
    fn label_heterogeneity_of_known_partitions() {
        // Four silos, four balanced classes, 8 examples each class.
        let labels: Vec<i64> = (0..32).map(|k| k % 4).collect();
        let train = Dataset {
            features: vec![0.0; 32],
            labels,
            dim: 1,
            classes: 4,
            image: None,
        };
        let data = |silos: Vec<Vec<usize>>| FederatedData {
            name: "t".into(),
            train: train.clone(),
            test: train.clone(),
            silos,
        };
        // Same mix everywhere: 0.
        let iid: Vec<Vec<usize>> = (0..4).map(|i| (8 * i..8 * i + 8).collect()).collect();
        assert!(data(iid).label_heterogeneity().abs() < 1e-12);
        // One class per silo: 1 - 1/4.
        let one: Vec<Vec<usize>> = (0..4)
            .map(|c| (0..32).filter(|k| k % 4 == c).collect())
            .collect();
        assert!((data(one).label_heterogeneity() - 0.75).abs() < 1e-12);
        // Two classes per silo, balanced: 1/2.
        let two: Vec<Vec<usize>> = (0..4)
            .map(|i| {
                (0..32)
                    .filter(|&k| k % 4 == i || k % 4 == (i + 1) % 4)
                    .filter(|k| k / 16 == i % 2)
                    .collect()
            })
            .collect();
        assert!((data(two).label_heterogeneity() - 0.5).abs() < 1e-12);
    }

    fn images(h: usize, w: usize) -> Dataset {
        Dataset {
            features: vec![0.0; h * w],
            labels: vec![0],
            dim: h * w,
            classes: 10,
            image: Some((1, h, w)),
        }
    }

    #[test]
    fn train_and_test_shapes_must_match() {
        assert!(images(28, 28).check_same_shape(&images(28, 28)).is_ok());
        // Same pixel count, other shape: refused, naming both.
        let e = images(28, 28)
            .check_same_shape(&images(14, 56))
            .unwrap_err();
        assert!(
            e.contains("1x28x28 images") && e.contains("1x14x56 images"),
            "{e}"
        );
        assert!(images(28, 28).check_same_shape(&images(8, 8)).is_err());
    }
}
