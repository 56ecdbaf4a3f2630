//! Federated data sets by name: synthetic, MNIST, Fashion-MNIST, CIFAR-10,
//! split among silos, and the silos' label counts D-Cliques are built on.
//! Needs no libtorch: `fedtopo design` and the design experiment's figures
//! read data without training.

use crate::net::silos::DataSizes;
use crate::overlay::dcliques::placement::{DCliquesBuild, LabelSource};

use super::partition::Partition;
use super::sized::split_sized;
use super::synthetic::{generate, SyntheticSpec};
use super::{cifar, mnist, DataError, FederatedData};

/// D-Cliques built from the silos' real label counts in `data`.
pub fn with_data_labels(mut build: DCliquesBuild, data: &FederatedData) -> DCliquesBuild {
    let counts = data
        .silos
        .iter()
        .map(|s| {
            let mut c = vec![0; data.train.classes];
            for &k in s {
                c[data.train.labels[k] as usize] += 1;
            }
            c
        })
        .collect();
    build.labels = LabelSource::Counts(counts);
    build
}

/// Loads a federated dataset for `silos` silos: `synthetic` (LEAF
/// Synthetic(1, 1)), `synthetic:ALPHA,BETA`, `mnist:DIR`, `fashion-mnist[:DIR]`
/// (default DIR: [`mnist::FASHION_MNIST_DIR`], Debian's package) or `cifar10:DIR`
/// (split by `partition`, e.g. `shards:2`; `positions` are the silos'
/// (lat, lon) for the geographic partition). Everything drawn from `seed`.
///
/// `sizes` (the silo file's `data` column) fixes the examples of every
/// silo: synthetic data generates exactly that many per silo (at most
/// [`super::synthetic::MAX_SYNTHETIC_EXAMPLES`] in all), MNIST/CIFAR
/// are split by [`split_sized`] (refused, naming the file, when the sizes
/// add up to more than the training set). `None`: the schemes' own sizes.
pub fn load_dataset(
    dataset: &str,
    partition: &str,
    silos: usize,
    positions: Option<&[(f64, f64)]>,
    seed: u64,
    sizes: Option<&DataSizes>,
) -> Result<FederatedData, DataError> {
    let bad = DataError::Invalid;
    let from_file = |m: String| match sizes {
        Some(d) => bad(format!("{}: data column: {m}", d.source)),
        None => bad(m),
    };
    if let Some(d) = sizes {
        if d.samples.len() != silos {
            return Err(from_file(format!(
                "{} data sizes for {silos} silos",
                d.samples.len()
            )));
        }
    }
    let (kind, arg) = dataset.split_once(':').unwrap_or((dataset, ""));
    match kind {
        "synthetic" => {
            let mut spec = SyntheticSpec::default();
            if !arg.is_empty() {
                let parse = |v: &str| {
                    v.trim().parse::<f64>().map_err(|_| {
                        bad(format!(
                            "dataset synthetic:ALPHA,BETA: `{v}` is not a number"
                        ))
                    })
                };
                let (al, be) = arg.split_once(',').ok_or_else(|| {
                    bad(format!(
                        "dataset `{dataset}`: expected synthetic:ALPHA,BETA"
                    ))
                })?;
                spec.alpha = parse(al)?;
                spec.beta = parse(be)?;
            }
            spec.sizes = sizes.map(|d| d.samples.clone());
            generate(&spec, silos, seed).map_err(|e| from_file(e.to_string()))
        }
        "mnist" | "fashion-mnist" | "cifar10" | "cifar" => {
            // Fashion-MNIST defaults to where Debian's package puts it.
            let arg = match (kind, arg) {
                ("fashion-mnist", "") => mnist::FASHION_MNIST_DIR,
                (_, a) => a,
            };
            if arg.is_empty() {
                return Err(bad(format!(
                    "dataset {kind}:DIR needs the directory of the data files"
                )));
            }
            let dir = std::path::Path::new(arg);
            let (train, test) = match kind {
                "mnist" => mnist::load(dir),
                "fashion-mnist" => mnist::load(dir).map_err(|e| {
                    DataError::Invalid(format!(
                        "{e} (Debian's package dataset-fashion-mnist installs Fashion-MNIST in {}: \
                         scripts/fashion-mnist.sh)",
                        mnist::FASHION_MNIST_DIR
                    ))
                }),
                _ => cifar::load(dir),
            }
            .map_err(|e| bad(e.to_string()))?;
            train
                .check_same_shape(&test)
                .map_err(|e| bad(format!("{kind}:{arg}: {e}")))?;
            let part = Partition::parse(partition).map_err(|e| bad(e.to_string()))?;
            let silos = match sizes {
                None => part
                    .split(&train, silos, positions, seed)
                    .map_err(|e| bad(e.to_string()))?,
                Some(d) => split_sized(&part, &train, &d.samples, positions, seed)
                    .map_err(|e| from_file(format!("{kind}, partition {partition}: {e}")))?,
            };
            Ok(FederatedData {
                name: kind.to_string(),
                train,
                test,
                silos,
            })
        }
        other => Err(bad(format!(
            "unknown dataset `{other}`; expected synthetic, mnist:DIR, fashion-mnist[:DIR] or cifar10:DIR"
        ))),
    }
}
