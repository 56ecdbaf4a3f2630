//! The `Synthetic(alpha, beta)` federated dataset of FedProx (\[Li20\]
//! Sec. 5.1; LEAF's generator): every silo `k` has its own model and
//! its own input distribution,
//!
//! ```text
//! u_k ~ N(0, alpha),  W_k ~ N(u_k, 1) (C x d),  b_k ~ N(u_k, 1) (C)
//! B_k ~ N(0, beta),   v_k ~ N(B_k, 1) (d),      x ~ N(v_k, Sigma), Sigma_jj = j^-1.2
//! y = argmax softmax(W_k x + b_k)
//! ```
//!
//! `alpha` controls how much local models differ, `beta` how much local
//! inputs differ; `Synthetic(0, 0)` is nearly iid. Silo sizes follow a
//! lognormal law. Defaults: `d = 60`, `C = 10`. Variances, not standard
//! deviations, are the parameters (as in FedProx).

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal, Normal};

use super::{DataError, Dataset, FederatedData};

/// Parameters of the generator.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticSpec {
    /// Variance of the silo model means.
    pub alpha: f64,
    /// Variance of the silo input means.
    pub beta: f64,
    /// Input dimension.
    pub dim: usize,
    /// Classes.
    pub classes: usize,
    /// Median training examples per silo (lognormal sizes, sigma 0.5, at least 10).
    pub median_per_silo: usize,
    /// Test examples per silo (pooled into the shared test set).
    pub test_per_silo: usize,
    /// Training examples of every silo (the silo file's `data` column),
    /// replacing the lognormal sizes (drawn all the same, so the random
    /// stream only moves by the examples generated). At most
    /// [`MAX_SYNTHETIC_EXAMPLES`] in total.
    pub sizes: Option<Vec<usize>>,
}

/// Largest number of training examples generated with given sizes
/// ([`SyntheticSpec::sizes`]): 10^6 examples of dimension 60 are 240 MB.
pub const MAX_SYNTHETIC_EXAMPLES: usize = 1_000_000;

impl Default for SyntheticSpec {
    fn default() -> Self {
        SyntheticSpec {
            alpha: 1.0,
            beta: 1.0,
            dim: 60,
            classes: 10,
            median_per_silo: 200,
            test_per_silo: 40,
            sizes: None,
        }
    }
}

/// Generates the dataset for `silos` silos from `seed`.
pub fn generate(spec: &SyntheticSpec, silos: usize, seed: u64) -> Result<FederatedData, DataError> {
    if silos == 0 || spec.dim == 0 || spec.classes < 2 {
        return Err(DataError::Invalid(
            "synthetic data needs >= 1 silo, dim >= 1 and >= 2 classes".into(),
        ));
    }
    if !(spec.alpha >= 0.0 && spec.beta >= 0.0 && spec.alpha.is_finite() && spec.beta.is_finite()) {
        return Err(DataError::Invalid(
            "alpha and beta must be finite and >= 0".into(),
        ));
    }
    if let Some(sizes) = &spec.sizes {
        let total: usize = sizes.iter().sum();
        if sizes.len() != silos || sizes.contains(&0) || total > MAX_SYNTHETIC_EXAMPLES {
            return Err(DataError::Invalid(format!(
                "synthetic data: {} data size(s) adding up to {total} for {silos} silos; \
                 expected one size >= 1 per silo, at most {MAX_SYNTHETIC_EXAMPLES} in total",
                sizes.len()
            )));
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let std = Normal::new(0.0, 1.0).expect("valid");
    let sizes = LogNormal::new((spec.median_per_silo.max(1) as f64).ln(), 0.5).expect("valid");
    let (d, c) = (spec.dim, spec.classes);
    let sigma: Vec<f64> = (1..=d).map(|j| (j as f64).powf(-1.2).sqrt()).collect();
    let mut train = empty(d, c);
    let mut test = empty(d, c);
    let mut silo_idx = Vec::with_capacity(silos);
    for silo in 0..silos {
        let u = spec.alpha.sqrt() * std.sample(&mut rng);
        let w: Vec<f64> = (0..c * d).map(|_| u + std.sample(&mut rng)).collect();
        let b: Vec<f64> = (0..c).map(|_| u + std.sample(&mut rng)).collect();
        let bk = spec.beta.sqrt() * std.sample(&mut rng);
        let v: Vec<f64> = (0..d).map(|_| bk + std.sample(&mut rng)).collect();
        let drawn = (sizes.sample(&mut rng) as usize).max(10);
        let n_train = spec.sizes.as_ref().map_or(drawn, |s| s[silo]);
        let start = train.len();
        for (set, n) in [(&mut train, n_train), (&mut test, spec.test_per_silo)] {
            for _ in 0..n {
                let x: Vec<f64> = (0..d)
                    .map(|j| v[j] + sigma[j] * std.sample(&mut rng))
                    .collect();
                let y = (0..c)
                    .map(|l| {
                        let z: f64 = (0..d).map(|j| w[l * d + j] * x[j]).sum::<f64>() + b[l];
                        (l, z)
                    })
                    .fold((0, f64::NEG_INFINITY), |a, e| if e.1 > a.1 { e } else { a })
                    .0;
                set.features.extend(x.iter().map(|&t| t as f32));
                set.labels.push(y as i64);
            }
        }
        silo_idx.push((start..train.len()).collect());
        // Keep the stream position independent of how many draws `sizes` made.
        let _: u64 = rng.gen();
    }
    let data = FederatedData {
        name: format!("synthetic({},{})", spec.alpha, spec.beta),
        train,
        test,
        silos: silo_idx,
    };
    data.validate()?;
    Ok(data)
}

fn empty(dim: usize, classes: usize) -> Dataset {
    Dataset {
        features: Vec::new(),
        labels: Vec::new(),
        dim,
        classes,
        image: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_heterogeneous() {
        let s = SyntheticSpec::default();
        let a = generate(&s, 8, 7).unwrap();
        let b = generate(&s, 8, 7).unwrap();
        assert_eq!(a, b);
        let c = generate(&s, 8, 8).unwrap();
        assert_ne!(a.train.features, c.train.features);
        assert_eq!(a.test.len(), 8 * 40);
        assert!(a.silos.iter().all(|s| s.len() >= 10));
        // Several classes appear.
        let mut seen = [false; 10];
        for &l in &a.train.labels {
            seen[l as usize] = true;
        }
        assert!(seen.iter().filter(|&&x| x).count() >= 3);
        assert!(generate(
            &SyntheticSpec {
                classes: 1,
                ..s.clone()
            },
            3,
            0
        )
        .is_err());
        // Given sizes: exactly those (the first silo's first training
        // example is drawn as before).
        let sized = SyntheticSpec {
            sizes: Some(vec![3, 50, 1, 20, 7, 9, 11, 2]),
            ..s.clone()
        };
        let d = generate(&sized, 8, 7).unwrap();
        let lens: Vec<usize> = d.silos.iter().map(Vec::len).collect();
        assert_eq!(lens, [3, 50, 1, 20, 7, 9, 11, 2]);
        assert_eq!(d.train.features[..60], a.train.features[..60]);
        assert!(generate(&sized, 7, 7).is_err());
        let huge = SyntheticSpec {
            sizes: Some(vec![MAX_SYNTHETIC_EXAMPLES, 1]),
            ..s
        };
        assert!(generate(&huge, 2, 7).is_err());
    }
}
