//! D-Cliques options shared by `overlay`, `compare`, `simulate` and `train`.

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

use fedtopo::overlay::dcliques::labels::MNIST_TRAIN_COUNTS;
use fedtopo::overlay::dcliques::placement::{DCliquesBuild, LabelSource};
use fedtopo::overlay::dcliques::DCliquesOptions;

/// Label distributions of the D-Cliques nodes (one node per silo).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LabelsArg {
    /// MNIST label counts, sorted and cut into 2 shards per node (HAL Sec. 4.1).
    Shards,
    /// One class per node (node i holds class i mod --classes).
    OneClass,
}

/// D-Cliques construction options (for `dcliques...` and `dc-...` overlays).
#[derive(Debug, Clone, Args)]
pub struct DCliquesArgs {
    /// D-Cliques: maximum clique size M.
    #[arg(long = "dc-clique-size", default_value_t = 10)]
    pub dc_clique_size: usize,
    /// D-Cliques: Greedy Swap steps K.
    #[arg(long = "dc-steps", default_value_t = 1000)]
    pub dc_steps: usize,
    /// D-Cliques: intra-clique edges removed per clique.
    #[arg(long = "dc-remove-intra", default_value_t = 0)]
    pub dc_remove_intra: usize,
    /// D-Cliques: seed of the label partition and of the topology.
    #[arg(long = "dc-seed", default_value_t = 0)]
    pub dc_seed: u64,
    /// D-Cliques: label distributions of the nodes.
    #[arg(long = "dc-labels", value_enum, default_value_t = LabelsArg::Shards)]
    pub dc_labels: LabelsArg,
    /// D-Cliques: number of classes for --dc-labels one-class.
    #[arg(long = "dc-classes", default_value_t = 10)]
    pub dc_classes: usize,
}

impl DCliquesArgs {
    /// The library options.
    pub fn build(&self) -> Result<DCliquesBuild> {
        if self.dc_clique_size == 0 {
            bail!("--dc-clique-size must be at least 1");
        }
        if self.dc_classes == 0 {
            bail!("--dc-classes must be at least 1");
        }
        Ok(DCliquesBuild {
            options: DCliquesOptions {
                max_size: self.dc_clique_size,
                steps: self.dc_steps,
                remove_intra: self.dc_remove_intra,
                seed: self.dc_seed,
            },
            labels: match self.dc_labels {
                LabelsArg::Shards => LabelSource::Shards {
                    class_counts: MNIST_TRAIN_COUNTS.to_vec(),
                    shards_per_node: 2,
                },
                LabelsArg::OneClass => LabelSource::OneClass {
                    classes: self.dc_classes,
                },
            },
        })
    }
}
