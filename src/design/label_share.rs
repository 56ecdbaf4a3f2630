//! How much of a data split's heterogeneity is label skew: the share of
//! the silos' gradient heterogeneity that their label counts alone
//! explain. It tells two kinds of skewed data apart that look the same by
//! their label distributions (both have a label heterogeneity near 0.8 in
//! `experiments/design`): two label shards per silo of one image set
//! (share ~1: a silo's images of a class look like everyone's, so
//! balancing labels, as D-Cliques do, or one averaging step removes the
//! skew) and LEAF's Synthetic, where every silo labels its features by its
//! own model (share ~0.2: only mixing over many silos and rounds removes
//! it). The rounds predictor ([`super::predictor`]) lets its slopes depend
//! on it.
//!
//! The gradients are read at the one model every run starts from without
//! training, a linear softmax classifier at zero weights, the setting of
//! \[LeBars23\]'s (Le Bars, Bellet, Tommasi, Lavoie, Kermarrec, AISTATS
//! 2023) heterogeneity of the silos' gradients: silo `i`'s gradient over
//! its `m_i` examples `(x, y)` of `C` classes (a constant 1 appended to
//! `x` for the bias) is `g_i = (1/m_i) sum x (1/C - e_y)^T`. Its spread
//! `(1/n) sum_i ||g_i - g||^2` (`g` the plain mean over silos) against the
//! spread of the label-only gradients, where each example's `x` is
//! replaced by the pooled mean features of its class.

use crate::train::data::FederatedData;

/// Share of `data`'s gradient heterogeneity that its silos' label counts
/// explain, in `[0, 1]` (see the module docs): the spread of the
/// label-only gradients over the spread of the gradients, clamped; 0 when
/// every silo has the same gradient (nothing to explain).
pub fn label_explained_share(data: &FederatedData) -> f64 {
    let all = spread(&silo_gradients(data, false));
    let labels = spread(&silo_gradients(data, true));
    if all > 0.0 && labels.is_finite() {
        (labels / all).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// `(1/n) sum_i ||g_i - g||^2` over the silos' gradients `grads`.
fn spread(grads: &[Vec<f64>]) -> f64 {
    let n = grads.len();
    if n == 0 {
        return 0.0;
    }
    let mut mean = vec![0.0f64; grads[0].len()];
    for g in grads {
        for (a, b) in mean.iter_mut().zip(g) {
            *a += b / n as f64;
        }
    }
    grads
        .iter()
        .map(|g| {
            g.iter()
                .zip(&mean)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
        })
        .sum::<f64>()
        / n as f64
}

/// Every silo's zero-weight gradient, `C x (dim + 1)` row-major (see the
/// module docs); with `label_only`, each example's features replaced by
/// the pooled mean features of its class.
fn silo_gradients(data: &FederatedData, label_only: bool) -> Vec<Vec<f64>> {
    let d = &data.train;
    let classes = d.classes.max(1);
    let dim = d.dim + 1;
    let label = |k: usize| (d.labels[k].max(0) as usize).min(classes - 1);
    // Per-class feature sums, the bias (count) last.
    let class_sums = |examples: &mut dyn Iterator<Item = usize>| {
        let mut sums = vec![0.0f64; classes * dim];
        for k in examples {
            let y = label(k);
            let row = &mut sums[y * dim..(y + 1) * dim];
            let x = d.features.get(k * d.dim..(k + 1) * d.dim).unwrap_or(&[]);
            for (r, &v) in row.iter_mut().zip(x) {
                *r += f64::from(v);
            }
            row[dim - 1] += 1.0;
        }
        sums
    };
    let pooled_means = label_only.then(|| {
        let mut sums = class_sums(&mut data.silos.iter().flatten().copied());
        for row in sums.chunks_mut(dim) {
            let count = row[dim - 1];
            if count > 0.0 {
                row.iter_mut().for_each(|v| *v /= count);
            }
        }
        sums
    });
    data.silos
        .iter()
        .map(|silo| {
            let mut sums = class_sums(&mut silo.iter().copied());
            if let Some(means) = &pooled_means {
                for (row, mean) in sums.chunks_mut(dim).zip(means.chunks(dim)) {
                    let count = row[dim - 1];
                    for (r, m) in row.iter_mut().zip(mean) {
                        *r = count * m;
                    }
                }
            }
            let mut total = vec![0.0f64; dim];
            for row in sums.chunks(dim) {
                for (t, v) in total.iter_mut().zip(row) {
                    *t += v;
                }
            }
            let m = silo.len().max(1) as f64;
            let c = classes as f64;
            sums.chunks(dim)
                .flat_map(|row| total.iter().zip(row).map(move |(t, s)| (t / c - s) / m))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::data::Dataset;

    /// Four silos, two classes, one feature: `x(silo, class)` gives each
    /// example's feature, `classes_of(silo)` which classes a silo holds
    /// (4 examples each).
    fn split(
        x: impl Fn(usize, usize) -> f32,
        classes_of: impl Fn(usize) -> Vec<usize>,
    ) -> FederatedData {
        let (mut features, mut labels, mut silos) = (Vec::new(), Vec::new(), Vec::new());
        for s in 0..4 {
            let mut own = Vec::new();
            for c in classes_of(s) {
                for _ in 0..4 {
                    own.push(labels.len());
                    labels.push(c as i64);
                    features.push(x(s, c));
                }
            }
            silos.push(own);
        }
        let train = Dataset {
            features,
            labels,
            dim: 1,
            classes: 2,
            image: None,
        };
        FederatedData {
            name: "test".into(),
            test: train.clone(),
            train,
            silos,
        }
    }

    #[test]
    fn label_skew_with_shared_features_is_all_label_explained() {
        // Silos 0, 1 hold class 0, silos 2, 3 class 1; a class's feature
        // is the same everywhere.
        let d = split(|_, c| 1.0 + c as f32, |s| vec![s / 2]);
        assert!((label_explained_share(&d) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn balanced_labels_with_own_features_explain_nothing() {
        // Every silo holds both classes; features differ by silo.
        let d = split(|s, c| s as f32 - c as f32, |_| vec![0, 1]);
        assert_eq!(label_explained_share(&d), 0.0);
        // Identical silos: no heterogeneity, share 0.
        let same = split(|_, c| c as f32, |_| vec![0, 1]);
        assert_eq!(label_explained_share(&same), 0.0);
    }

    #[test]
    fn mixed_skew_lies_between() {
        // Label skew plus features shifted in silos 1 and 3 (one of each
        // class pair).
        let d = split(
            |s, c| 1.0 + c as f32 + 3.0 * (s % 2) as f32,
            |s| vec![s / 2],
        );
        let share = label_explained_share(&d);
        assert!(share > 0.05 && share < 0.95, "{share}");
    }

    /// The experiment's data settings: LEAF Synthetic, whose silos label
    /// by their own models, against Fashion-MNIST's two label shards per
    /// silo (when Debian's package is installed, as in CI).
    #[test]
    fn synthetic_and_label_shards_are_told_apart() {
        use crate::train::data::load::load_dataset;
        use crate::train::data::mnist::FASHION_MNIST_DIR;
        let share = |dataset: &str, partition: &str| {
            let d = load_dataset(dataset, partition, 20, None, 0, None)
                .unwrap_or_else(|e| panic!("{dataset} {partition}: {e}"));
            label_explained_share(&d)
        };
        for skew in ["synthetic:0,0", "synthetic:1,1"] {
            let s = share(skew, "iid");
            assert!(s < 0.6, "{skew}: {s}");
        }
        if !std::path::Path::new(FASHION_MNIST_DIR).is_dir() {
            assert!(
                std::env::var_os("FEDTOPO_REQUIRE_DATASETS").is_none(),
                "FEDTOPO_REQUIRE_DATASETS is set but {FASHION_MNIST_DIR} is absent"
            );
            eprintln!("skipped: {FASHION_MNIST_DIR} absent (scripts/fashion-mnist.sh installs it)");
            return;
        }
        let shards = share("fashion-mnist", "shards:2");
        assert!(shards > 0.95, "{shards}");
    }
}
