//! `fedtopo tornado`: TornadoAggregate and ring-based hierarchies (Lee et
//! al. 2021) as round programs: timing on an underlay, Table 3, training.
//! Argument parsing only: the runs are `fedtopo::reproduce::tornado`, the
//! tables and CSV files `fedtopo::reproduce::tornado::render`.

use super::output::{out, outln};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};

use fedtopo::network::NetworkKind;
use fedtopo::program::grouping::{named_partition, LabelCounts};
use fedtopo::program::learn::LearnOptions;
use fedtopo::program::Method;
use fedtopo::report::OutputFormat;
use fedtopo::reproduce::tornado::learn::{learn_methods, LearnSetup, Timing};
use fedtopo::reproduce::tornado::render::{
    clustering_table, learn as learn_report, time as time_report,
};
use fedtopo::reproduce::tornado::table3;
use fedtopo::reproduce::tornado::time::{time_methods, TimeOptions};
use fedtopo::reproduce::tornado::torch::TorchLearner;

use super::args::{center_policy, NetworkArgs, UnderlayArgs};
use super::choice::choice;

/// Sub-commands of `fedtopo tornado`.
#[derive(Debug, Subcommand)]
pub enum TornadoCommand {
    /// Time the [Lee21] Table 4 programs on an underlay: wall-clock per step,
    /// messages and bytes per node and per core link.
    #[command(after_help = super::examples::TORNADO_TIME)]
    Time(Box<TimeArgs>),
    /// [Lee21] Table 3: clustering-cost reduction of CLUSTER, ours vs published.
    #[command(after_help = super::examples::TORNADO_CLUSTERING)]
    Clustering(ClusteringArgs),
    /// Train under every program on label-skewed data: softmax regression
    /// (pure-Rust reference learner) or, with `--trainer torch`, the libtorch
    /// batched trainer; with an underlay, also the bytes and wall-clock to a
    /// target accuracy; with `--seeds`, statistics over seeds.
    #[command(after_help = super::examples::TORNADO_LEARN)]
    Learn(Box<LearnArgs>),
}

/// Options of `fedtopo tornado learn`.
#[derive(Debug, Args)]
pub struct LearnArgs {
    #[command(flatten)]
    time: TimeArgs,
    /// Train on this many nodes without timing (no underlay needed).
    #[arg(long, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    nodes: Option<usize>,
    /// Target test accuracy for bytes / wall-clock to target.
    #[arg(long, default_value_t = 0.7, value_parser = super::args::real(0.0, true, 1.0, true))]
    target: f64,
    /// SGD learning rate.
    #[arg(long, default_value_t = 0.03, value_parser = super::args::real(0.0, false, f64::INFINITY, false))]
    lr: f64,
    /// Mini-batch size.
    #[arg(long, default_value_t = 10, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    batch: usize,
    /// Feature dimension of the synthetic data.
    #[arg(long, default_value_t = 20, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    dim: usize,
    /// Class-mean separation of the synthetic data.
    #[arg(long, default_value_t = 1.0, value_parser = super::args::real(0.0, false, f64::INFINITY, false))]
    separation: f64,
    /// Evaluate every this many steps.
    #[arg(long, default_value_t = 100, value_parser = super::args::whole::<u64>(1, u64::MAX))]
    eval_every: u64,
    /// Learner: `reference` (pure-Rust softmax regression) or `torch` (the
    /// libtorch batched trainer; needs a build with `--features train`).
    #[arg(long, value_enum, default_value_t = Learner::Reference)]
    trainer: Learner,
    /// Seeds `A..B` (B excluded) or a comma-separated list, overriding
    /// --seed; each seed draws its own partition, groups, rings, data,
    /// initialisation and batches. Several seeds: mean ± std over seeds.
    #[arg(long)]
    seeds: Option<String>,
    /// Data: `synthetic` (Gaussian classes on the label-skewed partition)
    /// or `mnist:DIR` (torch trainer: MNIST IDX files in DIR, split by the
    /// same label counts).
    #[arg(long, default_value = "synthetic")]
    dataset: String,
    /// Torch trainer: model (logreg, mlp[:H], mlp:H0-H1-H2, lenet, gn-lenet;
    /// default logreg).
    #[arg(long)]
    model: Option<String>,
    /// Torch trainer: optimiser sgd, sgd:MOMENTUM or adam (default sgd).
    #[arg(long)]
    optimizer: Option<String>,
    /// Torch trainer: evaluate on at most this many training and test examples.
    #[arg(long, default_value_t = 10_000, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    eval_samples: usize,
    /// Use the trained model's size (32 bit per parameter) as the model
    /// size M for bytes and timing (default: the workload's M with an
    /// underlay, 7850 x 32 bit without).
    #[arg(long)]
    real_model_size: bool,
}

/// Which learner trains the programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Learner {
    /// Pure-Rust softmax regression (`program::learn`).
    Reference,
    /// The libtorch batched trainer (`program::train`, feature `train`).
    Torch,
}

/// Synthetic label partition used for grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Partition {
    /// 10 classes, 2 random classes per node, near-balanced, power-law sizes.
    Mnist,
    /// The label counts of FedML's MNIST (FedProx's generator: digits u and
    /// u+1 of 1000 devices, log-normal shares), `--nodes` devices sampled.
    FedproxMnist,
    /// 80 classes near a Zipf distribution (FedShakespeare-like).
    Shakespeare,
}

/// Options of `fedtopo tornado time`.
#[derive(Debug, Args)]
pub struct TimeArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    /// Methods, comma-separated, or `all` ([Lee21] Table 4 parameters).
    #[arg(long, default_value = "all")]
    methods: String,
    /// Steps T to simulate ([Lee21] Table 4's global period is 100; at most 1000000).
    #[arg(long, default_value_t = 100, value_parser = super::args::whole::<u64>(1, fedtopo::replay::MAX_ROUNDS))]
    steps: u64,
    /// Network model: maxplus ([Marfoq20] eq. 3), paper ([Marfoq20] App. F), flow (max-min fair).
    #[arg(long = "network", value_parser = choice(NetworkKind::ALL, NetworkKind::name), default_value_t = NetworkKind::Flow)]
    network_model: NetworkKind,
    /// Global aggregator: load, first, fastest, or a silo label/id.
    #[arg(long, default_value = "load")]
    server: String,
    /// Synthetic label partition for the groupings.
    #[arg(long, value_enum, default_value_t = Partition::Mnist)]
    partition: Partition,
    /// Override |G| for every grouped method (capped at the node count).
    #[arg(long, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    groups: Option<usize>,
    /// Seed of the partition, groupings and rings.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Write nodes.csv and links.csv (per method) to this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Output format of the table: table, csv or json (the heading goes to
    /// stderr for csv and json).
    #[arg(long, value_parser = choice(OutputFormat::ALL, OutputFormat::name), default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

/// Options of `fedtopo tornado clustering`.
#[derive(Debug, Args)]
pub struct ClusteringArgs {
    /// Nodes.
    #[arg(long, default_value_t = 100, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    nodes: usize,
    /// Groups |G|.
    #[arg(long, default_value_t = 10, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    groups: usize,
    /// Seeds 0..SEEDS (partition and medoids), averaged.
    #[arg(long, default_value_t = 20, value_parser = super::args::whole::<u64>(1, u64::MAX))]
    seeds: u64,
    /// Dirichlet concentration of the FedShakespeare-like partition.
    #[arg(long, default_value_t = 200.0, value_parser = super::args::real(0.0, false, f64::INFINITY, false))]
    concentration: f64,
    /// Output format: table, csv or json (cells as in the table).
    #[arg(long, value_parser = choice(OutputFormat::ALL, OutputFormat::name), default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

/// Runs `fedtopo tornado`.
pub fn run(c: TornadoCommand) -> Result<()> {
    match c {
        TornadoCommand::Time(a) => time(*a),
        TornadoCommand::Clustering(a) => clustering(a),
        TornadoCommand::Learn(a) => learn(*a),
    }
}

fn clustering(a: ClusteringArgs) -> Result<()> {
    if a.seeds == 0 {
        bail!("--seeds must be at least 1");
    }
    let rows = table3(a.nodes, a.groups, a.seeds, a.concentration)?;
    out!("{}", clustering_table(&rows).render(a.format));
    Ok(())
}

fn partition_name(p: Partition) -> &'static str {
    match p {
        Partition::Mnist => "mnist",
        Partition::FedproxMnist => "fedprox-mnist",
        Partition::Shakespeare => "shakespeare",
    }
}

fn labels(p: Partition, n: usize, seed: u64) -> Result<LabelCounts> {
    Ok(named_partition(partition_name(p), n, seed)?)
}

fn write_files(dir: &std::path::Path, files: [(&str, String); 2]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

fn time(a: TimeArgs) -> Result<()> {
    if a.steps == 0 {
        bail!("--steps must be at least 1");
    }
    let underlay = a.underlay.load(false)?;
    let model = a.network.delay_model(&underlay)?;
    let n = model.silo_count();
    let server = center_policy(&a.server, &underlay)?.resolve(&underlay, &model);
    let methods = Method::parse_list(&a.methods)?;
    let data = labels(a.partition, n, a.seed)?;
    if a.groups == Some(0) && !methods.is_empty() {
        bail!("--groups must be at least 1");
    }
    let rows = time_methods(
        &methods,
        &data,
        &model,
        a.network_model,
        underlay.links.len(),
        server,
        &TimeOptions {
            steps: a.steps,
            groups: a.groups,
            seed: a.seed,
        },
    )?;
    for r in &rows {
        if let Some(g) = r.capped_groups {
            eprintln!("note: {}: {g} groups on {n} silos; using {n}", r.method);
        }
    }
    let heading = time_report::heading(&underlay, &model, server, a.network_model, a.steps);
    match a.format {
        OutputFormat::Table => outln!("{heading}"),
        // Scripts read the rows on stdout; the heading goes to stderr.
        _ => eprintln!("note: {heading}"),
    }
    out!(
        "{}",
        time_report::table(&rows, server, a.steps).render(a.format)
    );
    if let Some(dir) = &a.out {
        write_files(
            dir,
            [
                ("nodes.csv", time_report::nodes_csv(&rows, &underlay)),
                ("links.csv", time_report::links_csv(&rows, &underlay)),
            ],
        )?;
    }
    Ok(())
}

/// Model size without an underlay: the paper's MNIST logistic regression,
/// 7850 parameters of 32 bit.
const MNIST_LOGREG_BITS: f64 = 7850.0 * 32.0;

/// Parses `A..B` (B excluded) or `A,B,C`.
fn parse_seeds(text: &str) -> Result<Vec<u64>> {
    let num = |s: &str| -> Result<u64> {
        s.trim()
            .parse()
            .with_context(|| format!("--seeds `{text}`: `{s}` is not a seed"))
    };
    let seeds: Vec<u64> = match text.split_once("..") {
        Some((a, b)) => (num(a)?..num(b)?).collect(),
        None => text.split(',').map(num).collect::<Result<_>>()?,
    };
    let mut sorted = seeds.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if seeds.is_empty() || sorted.len() != seeds.len() {
        bail!("--seeds `{text}` must name at least one seed, each once (A..B excludes B)");
    }
    Ok(seeds)
}

fn learn(a: LearnArgs) -> Result<()> {
    let t = &a.time;
    if t.steps == 0 || a.eval_every == 0 || a.batch == 0 {
        bail!("--steps, --eval-every and --batch must be at least 1");
    }
    if !(a.lr.is_finite() && a.lr > 0.0 && a.separation.is_finite() && a.separation > 0.0) {
        bail!("--lr and --separation must be finite and > 0");
    }
    let seeds = match &a.seeds {
        Some(s) => parse_seeds(s)?,
        None => vec![t.seed],
    };
    if a.trainer == Learner::Reference
        && (a.model.is_some() || a.optimizer.is_some() || a.dataset != "synthetic")
    {
        bail!("--model, --optimizer and --dataset other than synthetic need --trainer torch");
    }
    let torch = match a.trainer {
        Learner::Torch => Some(torch_setup(&a)?),
        Learner::Reference => None,
    };
    // The network, when timed on an underlay: its spec first, the delay
    // model once the model size is known (the trained model's real size is
    // an input of the spec, not a patch on a finished delay model).
    let network = match a.nodes {
        None => {
            t.network.refuse_trace()?;
            let underlay = t.underlay.load(true)?;
            let spec = t.network.spec(None)?;
            Some((underlay, spec))
        }
        Some(_) => None,
    };
    let n = match (&network, a.nodes) {
        (Some((u, spec)), _) => spec.placement.place(u)?.silo_count(),
        (None, Some(n)) if n >= 2 => n,
        _ => bail!("--nodes must be at least 2"),
    };
    let classes = labels(t.partition, n, seeds[0])?.classes();
    let mut bits = MNIST_LOGREG_BITS;
    if a.real_model_size {
        let params = match &torch {
            Some(s) => s.params(a.dim, classes)?,
            None => classes * (a.dim + 1),
        };
        bits = 32.0 * params as f64;
    }
    let timed = match network {
        Some((underlay, spec)) => {
            let spec = if a.real_model_size {
                spec.with_model_bits(bits, "trained-model")
            } else {
                spec
            };
            let model = spec.build(&underlay)?;
            Some((underlay, model))
        }
        None => None,
    };
    let server = match &timed {
        Some((u, m)) => center_policy(&t.server, u)?.resolve(u, m),
        None => 0,
    };
    let methods = Method::parse_list(&t.methods)?;
    let setup = LearnSetup {
        partition: partition_name(t.partition),
        nodes: n,
        server,
        methods: &methods,
        seeds: &seeds,
        groups: t.groups,
        options: LearnOptions {
            dim: a.dim,
            separation: a.separation,
            lr: a.lr,
            batch: a.batch,
            steps: t.steps,
            eval_every: a.eval_every,
            ..LearnOptions::default()
        },
        target: a.target,
        model_bits: bits,
        timing: timed.as_ref().map(|(u, model)| Timing {
            delay: model,
            network: t.network_model,
            links: u.links.len(),
        }),
    };
    let runs = learn_methods(&setup, torch.as_ref())?;
    let mut heading = learn_report::heading(
        timed.as_ref().map(|(u, model)| learn_report::TimedOn {
            underlay: u,
            delay: model,
            server,
            network: t.network_model,
        }),
        n,
        t.steps,
        &format!("{:?}", t.partition),
        &seeds,
        a.real_model_size.then_some(bits),
    );
    if let Some(s) = &torch {
        heading = format!("{heading}\n{}", torch_description(s, &a));
    }
    match t.format {
        OutputFormat::Table => outln!("{heading}"),
        // Scripts read the rows on stdout; the heading goes to stderr.
        _ => eprintln!("note: {heading}"),
    }
    let with_loss = torch.is_some();
    let (table, footer) = if seeds.len() == 1 {
        (
            learn_report::single_seed_table(&runs, a.target, with_loss),
            None,
        )
    } else {
        let (table, footer) =
            learn_report::multi_seed_rows(&runs, &methods, &seeds, a.target, with_loss);
        (table, Some(footer))
    };
    out!("{}", table.render(t.format));
    match (footer, t.format) {
        (Some(f), OutputFormat::Table) => outln!("{f}"),
        (Some(f), _) => eprintln!("note: {f}"),
        (None, _) => {}
    }
    if let Some(dir) = &t.out {
        write_files(
            dir,
            [
                ("curves.csv", learn_report::curves_csv(&runs)),
                ("summary.csv", learn_report::summary_csv(&runs)),
            ],
        )?;
    }
    Ok(())
}

/// The torch learner from the command line: model, optimiser, data.
#[cfg(feature = "train")]
fn torch_setup(a: &LearnArgs) -> Result<TorchLearner> {
    use fedtopo::train::model::ModelKind;
    use fedtopo::train::optim::LrSchedule;
    use fedtopo::train::session::parse_optimizer;
    use fedtopo::train::trainer::{ExecMode, TrainConfig};
    let name = a.model.as_deref().unwrap_or("logreg");
    let model = ModelKind::parse(name).with_context(|| {
        format!("unknown model `{name}`; expected logreg, mlp[:H], mlp:H0-H1-H2, lenet, gn-lenet")
    })?;
    let optimizer = parse_optimizer(a.optimizer.as_deref().unwrap_or("sgd"))?;
    if a.eval_samples == 0 {
        bail!("--eval-samples must be at least 1");
    }
    let mnist = match a.dataset.split_once(':') {
        None if a.dataset == "synthetic" => None,
        Some(("mnist", dir)) if !dir.is_empty() => {
            if a.time.partition == Partition::Shakespeare {
                bail!("--dataset mnist needs --partition mnist or fedprox-mnist (10 classes)");
            }
            Some(fedtopo::train::data::mnist::load(std::path::Path::new(
                dir,
            ))?)
        }
        _ => bail!(
            "unknown dataset `{}`; expected synthetic or mnist:DIR",
            a.dataset
        ),
    };
    Ok(TorchLearner {
        config: TrainConfig {
            model,
            optimizer,
            lr: a.lr,
            lr_schedule: LrSchedule::Constant,
            local_steps: 1,
            batch_size: a.batch,
            eval_samples: a.eval_samples,
            seed: 0,
            mode: ExecMode::Batched,
            ..TrainConfig::default()
        },
        mnist,
    })
}

#[cfg(feature = "train")]
fn torch_description(s: &TorchLearner, a: &LearnArgs) -> String {
    learn_report::torch_description(s, a.lr, a.batch, a.eval_every)
}

#[cfg(not(feature = "train"))]
fn torch_setup(_: &LearnArgs) -> Result<TorchLearner> {
    bail!(
        "--trainer torch needs the libtorch trainer: build with `--features train` \
         (e.g. scripts/libtorch.sh cargo build --release --features train)"
    )
}

#[cfg(not(feature = "train"))]
fn torch_description(s: &TorchLearner, _: &LearnArgs) -> String {
    match *s {}
}
