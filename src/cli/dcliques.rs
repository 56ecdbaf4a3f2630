//! D-Cliques options shared by `overlay`, `compare`, `simulate` and `train`.

use anyhow::Result;
use clap::{Args, ValueEnum};

use fedtopo::overlay::dcliques::placement::DCliquesBuild;

/// Label distributions of the D-Cliques nodes (one node per silo).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LabelsArg {
    /// MNIST label counts, sorted and cut into 2 shards per node ([Bellet21] Sec. 4.1).
    Shards,
    /// One class per node (node i holds class i mod --classes).
    OneClass,
}

/// D-Cliques construction options (for `dcliques...` and `dc-...` overlays).
#[derive(Debug, Clone, Args)]
pub struct DCliquesArgs {
    /// D-Cliques: maximum clique size M.
    #[arg(long = "dc-clique-size", default_value_t = 10, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    pub dc_clique_size: usize,
    /// D-Cliques: Greedy Swap steps K.
    #[arg(long = "dc-steps", default_value_t = 1000, value_parser = super::args::whole::<usize>(0, usize::MAX as u64))]
    pub dc_steps: usize,
    /// D-Cliques: intra-clique edges removed per clique.
    #[arg(long = "dc-remove-intra", default_value_t = 0, value_parser = super::args::whole::<usize>(0, usize::MAX as u64))]
    pub dc_remove_intra: usize,
    /// D-Cliques: seed of the label partition and of the topology.
    #[arg(long = "dc-seed", default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    pub dc_seed: u64,
    /// D-Cliques: label distributions of the nodes.
    #[arg(long = "dc-labels", value_enum, default_value_t = LabelsArg::Shards)]
    pub dc_labels: LabelsArg,
    /// D-Cliques: number of classes for --dc-labels one-class.
    #[arg(long = "dc-classes", default_value_t = 10, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    pub dc_classes: usize,
}

impl DCliquesArgs {
    /// The `--dc-*` options as build knobs ([`super::args::build_options`]).
    pub fn knobs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("dc_clique_size", self.dc_clique_size.to_string()),
            ("dc_steps", self.dc_steps.to_string()),
            ("dc_remove_intra", self.dc_remove_intra.to_string()),
            ("dc_seed", self.dc_seed.to_string()),
            (
                "dc_labels",
                match self.dc_labels {
                    LabelsArg::Shards => "shards",
                    LabelsArg::OneClass => "one-class",
                }
                .to_string(),
            ),
            ("dc_classes", self.dc_classes.to_string()),
        ]
    }

    /// The library options: these options' build knobs read by the one
    /// parser, [`DCliquesBuild::from_knobs`].
    pub fn build(&self) -> Result<DCliquesBuild> {
        let knobs = self.knobs();
        DCliquesBuild::from_knobs(super::args::knob_value(&knobs))
            .map_err(super::args::option_error)
    }
}

/// Options of `fedtopo reproduce dcliques-convergence`.
#[cfg(feature = "train")]
#[derive(Debug, Clone, Args)]
pub struct ConvergenceArgs {
    /// Where to write convergence.csv, convergence.md and convergence.svg.
    #[arg(long, default_value = "experiments/dcliques")]
    out: std::path::PathBuf,
    /// Topologies, comma-separated: TOPOLOGY[+ca] (e.g. dcliques-full+ca,
    /// fully-connected, random-regular10).
    #[arg(
        long,
        default_value = "dcliques-full+ca,dcliques-full,fully-connected,random-regular10,dcliques-random-full+ca"
    )]
    topologies: String,
    /// Nodes.
    #[arg(long, default_value_t = 100, value_parser = super::args::whole::<usize>(2, 100_000))]
    nodes: usize,
    /// Rounds (at most 1000000).
    #[arg(long, default_value_t = 300, value_parser = super::args::round_count())]
    rounds: u64,
    /// Evaluate every this many rounds.
    #[arg(long, default_value_t = 10, value_parser = super::args::whole::<u64>(1, u64::MAX))]
    eval_every: u64,
    /// Learning rate.
    #[arg(long, default_value_t = 0.1, value_parser = super::args::real(0.0, false, f64::INFINITY, false))]
    lr: f64,
    /// SGD momentum (0 = none).
    #[arg(long, default_value_t = 0.0, value_parser = super::args::real(0.0, true, 1.0, false))]
    momentum: f64,
    /// Mini-batch per node and step.
    #[arg(long, default_value_t = 16, value_parser = super::args::whole::<usize>(1, 1 << 20))]
    batch_size: usize,
    /// Input dimension of the Gaussian mixture.
    #[arg(long, default_value_t = 20, value_parser = super::args::whole::<usize>(1, 1 << 16))]
    dim: usize,
    /// Spread of the class means (larger = easier).
    #[arg(long, default_value_t = 0.5, value_parser = super::args::real(0.0, false, f64::INFINITY, false))]
    spread: f64,
    /// Seed.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Partition: shards:2 or one-class.
    #[arg(long, default_value = "shards:2")]
    partition: String,
}

/// Runs `fedtopo reproduce dcliques-convergence`.
#[cfg(feature = "train")]
pub fn run_convergence(a: ConvergenceArgs) -> Result<()> {
    use super::output::out;
    use anyhow::Context;
    use fedtopo::overlay::dcliques::TopologyKind;
    use fedtopo::reproduce::dcliques::convergence::{run, Setup};
    use fedtopo::reproduce::dcliques::render::convergence;

    let mut variants = Vec::new();
    for t in a.topologies.split(',').filter(|t| !t.trim().is_empty()) {
        let t = t.trim();
        let (name, ca) = match t.strip_suffix("+ca") {
            Some(n) => (n, true),
            None => (t, false),
        };
        let kind: TopologyKind = name.parse()?;
        variants.push((kind, ca));
    }
    if variants.is_empty() {
        anyhow::bail!("--topologies is empty");
    }
    let setup = Setup {
        nodes: a.nodes,
        rounds: a.rounds,
        eval_every: a.eval_every,
        lr: a.lr,
        momentum: a.momentum,
        batch_size: a.batch_size,
        dim: a.dim,
        spread: a.spread,
        seed: a.seed,
        partition: a.partition.clone(),
        ..Setup::default()
    };
    let runs = run(&setup, &variants)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let md = convergence::markdown(&setup, &runs);
    let svg = convergence::svg(&runs).map_err(anyhow::Error::msg)?;
    super::error_text::write_file(&a.out.join("convergence.csv"), convergence::csv(&runs))?;
    super::error_text::write_file(&a.out.join("convergence.md"), &md)?;
    super::error_text::write_file(&a.out.join("convergence.svg"), svg)?;
    out!("{md}");
    Ok(())
}
