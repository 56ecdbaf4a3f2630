//! `fedtopo tornado`: TornadoAggregate and ring-based hierarchies ([Lee21])
//! as round programs: timing on an underlay, [Lee21] Table 3.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};

use fedtopo::network::NetworkKind;
use fedtopo::program::grouping::{named_partition, LabelCounts};
use fedtopo::program::outcome::{
    ordering, reference_records, LearnRecord, RunSummary, SeedStats, Spread,
};
use fedtopo::program::reproduce::table3;
use fedtopo::program::sim::{simulate, StepCosts};
use fedtopo::program::Method;
use fedtopo::units::{gigabytes, BITS_PER_GB};

use super::args::{center_policy, NetworkArgs, UnderlayArgs};
use super::choice::choice;

/// Sub-commands of `fedtopo tornado`.
#[derive(Debug, Subcommand)]
pub enum TornadoCommand {
    /// Time the [Lee21] Table 4 programs on an underlay: wall-clock per step,
    /// messages and bytes per node and per core link.
    Time(Box<TimeArgs>),
    /// [Lee21] Table 3: clustering-cost reduction of CLUSTER, ours vs published.
    Clustering(ClusteringArgs),
    /// Train under every program on label-skewed data: softmax regression
    /// (pure-Rust reference learner) or, with `--trainer torch`, the libtorch
    /// batched trainer; with an underlay, also the bytes and wall-clock to a
    /// target accuracy; with `--seeds`, statistics over seeds.
    Learn(Box<LearnArgs>),
}

/// Options of `fedtopo tornado learn`.
#[derive(Debug, Args)]
pub struct LearnArgs {
    #[command(flatten)]
    time: TimeArgs,
    /// Train on this many nodes without timing (no underlay needed).
    #[arg(long)]
    nodes: Option<usize>,
    /// Target test accuracy for bytes / wall-clock to target.
    #[arg(long, default_value_t = 0.7)]
    target: f64,
    /// SGD learning rate.
    #[arg(long, default_value_t = 0.03)]
    lr: f64,
    /// Mini-batch size.
    #[arg(long, default_value_t = 10)]
    batch: usize,
    /// Feature dimension of the synthetic data.
    #[arg(long, default_value_t = 20)]
    dim: usize,
    /// Class-mean separation of the synthetic data.
    #[arg(long, default_value_t = 1.0)]
    separation: f64,
    /// Evaluate every this many steps.
    #[arg(long, default_value_t = 100)]
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
    #[arg(long, default_value_t = 10_000)]
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
    /// Steps T to simulate ([Lee21] Table 4's global period is 100).
    #[arg(long, default_value_t = 100)]
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
    #[arg(long)]
    groups: Option<usize>,
    /// Seed of the partition, groupings and rings.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write nodes.csv and links.csv (per method) to this directory.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Options of `fedtopo tornado clustering`.
#[derive(Debug, Args)]
pub struct ClusteringArgs {
    /// Nodes.
    #[arg(long, default_value_t = 100)]
    nodes: usize,
    /// Groups |G|.
    #[arg(long, default_value_t = 10)]
    groups: usize,
    /// Seeds 0..SEEDS (partition and medoids), averaged.
    #[arg(long, default_value_t = 20)]
    seeds: u64,
    /// Dirichlet concentration of the FedShakespeare-like partition.
    #[arg(long, default_value_t = 200.0)]
    concentration: f64,
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
    let mut t = Table::new();
    t.load_style(UTF8_BORDERS_ONLY);
    t.set_header(vec![
        "dataset (published)",
        "assignment",
        "our partition",
        "initial",
        "final",
        "1 - final/initial",
        "per-seed range",
        "(initial-final)/final",
        "published initial",
        "published final",
        "published reduction",
    ]);
    for r in rows {
        t.add_row(vec![
            r.dataset,
            format!("{:?}", r.assign).to_lowercase(),
            r.partition,
            format!("{:.3}", r.initial),
            format!("{:.3}", r.final_cost),
            format!("{:.1}%", 100.0 * r.reduction),
            format!(
                "{:.1}%..{:.1}%",
                100.0 * r.reduction_range.0,
                100.0 * r.reduction_range.1
            ),
            format!("{:.1}%", 100.0 * r.reduction_paper),
            format!("{:.3}", r.published.0),
            format!("{:.3}", r.published.1),
            format!("{:.1}% (= (i-f)/f)", 100.0 * r.published.2),
        ]);
    }
    println!("{t}");
    Ok(())
}

fn labels(p: Partition, n: usize, seed: u64) -> Result<LabelCounts> {
    let name = match p {
        Partition::Mnist => "mnist",
        Partition::FedproxMnist => "fedprox-mnist",
        Partition::Shakespeare => "shakespeare",
    };
    Ok(named_partition(name, n, seed)?)
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
    let mut table = Table::new();
    table.load_style(UTF8_BORDERS_ONLY);
    table.set_header(vec![
        "method",
        "architecture",
        "|G|",
        "C",
        "computing/step",
        "messages",
        "GB sent",
        "server GB in+out",
        "busiest link GB",
        "wall-clock (s)",
        "ms/step",
    ]);
    let mut nodes_csv = String::from("method,silo,label,sent_msgs,recv_msgs,sent_bits,recv_bits\n");
    let mut links_csv = String::from("method,link,a,b,msgs,bits\n");
    for m in methods {
        let mut p = m.defaults();
        if let Some(g) = a.groups {
            if g == 0 {
                bail!("--groups must be at least 1");
            }
            p.groups = g;
        }
        if p.groups > n {
            eprintln!("note: {m}: {} groups on {n} silos; using {n}", p.groups);
            p.groups = n;
        }
        let spec = p
            .build(&data, server, a.seed)
            .with_context(|| format!("building {m}"))?;
        let program = spec.program(a.steps);
        let mut net = a.network_model.build(&model);
        let r = simulate(&program, &model, net.as_mut(), underlay.links.len())
            .with_context(|| format!("timing {m}"))?;
        let c = &r.counters;
        let busiest = c.link_bits.iter().copied().fold(0.0, f64::max);
        let computing: usize = program.steps.iter().map(|s| s.active.len()).sum();
        let chains = match spec.intra {
            fedtopo::program::Intra::Ring { chains } => chains.to_string(),
            _ => match spec.inter {
                fedtopo::program::Inter::Ring { chains } => chains.to_string(),
                _ => "-".into(),
            },
        };
        table.add_row(vec![
            m.name().to_string(),
            p.architecture.name().to_string(),
            spec.groups.len().to_string(),
            chains,
            format!("{:.1}", computing as f64 / a.steps as f64),
            c.messages().to_string(),
            format!("{:.2}", gigabytes(c.bits())),
            format!(
                "{:.2}",
                gigabytes(c.sent_bits[server] + c.recv_bits[server])
            ),
            format!("{:.2}", gigabytes(busiest)),
            format!("{:.2}", r.makespan_ms() / 1e3),
            format!("{:.1}", r.ms_per_step()),
        ]);
        for i in 0..n {
            nodes_csv.push_str(&format!(
                "{m},{i},{},{},{},{},{}\n",
                underlay.routers[i].label,
                c.sent_msgs[i],
                c.recv_msgs[i],
                c.sent_bits[i],
                c.recv_bits[i]
            ));
        }
        for (l, link) in underlay.links.iter().enumerate() {
            links_csv.push_str(&format!(
                "{m},{l},{},{},{},{}\n",
                underlay.routers[link.a].label,
                underlay.routers[link.b].label,
                c.link_msgs[l],
                c.link_bits[l]
            ));
        }
    }
    println!(
        "{}: {n} silos, server {} ({}), {} network, {} steps, M = {} bit, Tc = {} ms",
        underlay.name,
        server,
        underlay.routers[server].label,
        a.network_model,
        a.steps,
        model.workload.model_bits,
        model.workload.compute_ms
    );
    println!("{table}");
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for (name, text) in [("nodes.csv", nodes_csv), ("links.csv", links_csv)] {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
        }
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

/// One method trained under one seed.
struct Run {
    method: Method,
    seed: u64,
    records: Vec<LearnRecord>,
    summary: RunSummary,
}

fn learn(a: LearnArgs) -> Result<()> {
    use fedtopo::program::learn::{Dataset, LearnOptions};
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
    let mut timed = if a.nodes.is_none() {
        let underlay = t.underlay.load(true)?;
        let model = t.network.delay_model(&underlay)?;
        Some((underlay, model))
    } else {
        None
    };
    let n = match (&timed, a.nodes) {
        (Some((_, m)), _) => m.silo_count(),
        (None, Some(n)) if n >= 2 => n,
        _ => bail!("--nodes must be at least 2"),
    };
    let server = match &timed {
        Some((u, m)) => center_policy(&t.server, u)?.resolve(u, m),
        None => 0,
    };
    let classes = labels(t.partition, n, seeds[0])?.classes();
    let mut bits = MNIST_LOGREG_BITS;
    if a.real_model_size {
        let params = match &torch {
            Some(s) => torch_params(s, a.dim, classes)?,
            None => classes * (a.dim + 1),
        };
        bits = 32.0 * params as f64;
        if let Some((_, model)) = &mut timed {
            model.workload.model_bits = bits;
            model.workload.name = "trained-model".into();
        }
    }
    let methods = Method::parse_list(&t.methods)?;
    let mut runs: Vec<Run> = Vec::new();
    for &seed in &seeds {
        let data = labels(t.partition, n, seed)?;
        let o = LearnOptions {
            dim: a.dim,
            separation: a.separation,
            lr: a.lr,
            batch: a.batch,
            steps: t.steps,
            eval_every: a.eval_every,
            seed,
            ..LearnOptions::default()
        };
        let ds = Dataset::synthetic(&data, &o);
        for &m in &methods {
            let spec = m
                .defaults()
                .with_groups(t.groups, n)
                .build(&data, server, seed)
                .with_context(|| format!("building {m}"))?;
            let program = spec.program(t.steps);
            let costs = match &timed {
                Some((u, model)) => {
                    let mut net = t.network_model.build(model);
                    StepCosts::timed(&program, model, net.as_mut(), u.links.len())
                        .with_context(|| format!("timing {m}"))?
                }
                None => StepCosts::untimed(&program, bits),
            };
            let records = match &torch {
                None => reference_records(&spec, &data, &ds, &o, &costs),
                Some(s) => torch_train(s, &spec, &data, &ds, seed, &a, &costs)
                    .with_context(|| format!("training {m} (seed {seed})"))?,
            };
            let summary = RunSummary::of(&records, &costs, a.target);
            runs.push(Run {
                method: m,
                seed,
                records,
                summary,
            });
        }
    }
    let seed_text = if seeds.len() == 1 {
        format!("seed {}", seeds[0])
    } else {
        format!(
            "seeds {}",
            seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        )
    };
    match &timed {
        Some((u, model)) => println!(
            "{}: {n} silos, server {server} ({}), {} network, {} steps, M = {} bit, Tc = {} ms, partition {:?}, {seed_text}",
            u.name, u.routers[server].label, t.network_model, t.steps, model.workload.model_bits, model.workload.compute_ms, t.partition
        ),
        None if a.real_model_size => println!(
            "{n} nodes (no timing; GB at M = {bits} bit), {} steps, partition {:?}, {seed_text}",
            t.steps, t.partition
        ),
        None => println!(
            "{n} nodes (no timing; GB at M = 7850 x 32 bit), {} steps, partition {:?}, {seed_text}",
            t.steps, t.partition
        ),
    }
    if let Some(s) = &torch {
        println!(
            "{}, lr {}, batch {}, eval every {} steps",
            torch_describe(s),
            a.lr,
            a.batch,
            a.eval_every
        );
    }
    let with_loss = torch.is_some();
    if seeds.len() == 1 {
        println!("{}", single_seed_table(&runs, a.target, with_loss));
    } else {
        println!(
            "{}",
            multi_seed_table(&runs, &methods, &seeds, a.target, with_loss)
        );
    }
    if let Some(dir) = &t.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for (name, text) in [
            ("curves.csv", curves_csv(&runs)),
            ("summary.csv", summary_csv(&runs)),
        ] {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
        }
    }
    Ok(())
}

fn secs(ms: Option<f64>, digits: usize) -> String {
    ms.map_or("-".into(), |w| format!("{:.d$}", w / 1e3, d = digits))
}

fn single_seed_table(runs: &[Run], target: f64, with_loss: bool) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_BORDERS_ONLY);
    let mut header = vec![
        "method".to_string(),
        "final acc".into(),
        "best acc".into(),
        format!("steps to {:.0}%", 100.0 * target),
        "GB to target".into(),
        "wall-clock to target (s)".into(),
        "GB total".into(),
        "wall-clock total (s)".into(),
    ];
    if with_loss {
        header.push("final train loss".into());
    }
    table.set_header(header);
    for r in runs {
        let s = &r.summary;
        let mut row = vec![
            r.method.name().to_string(),
            format!("{:.3}", s.final_accuracy),
            format!("{:.3}", s.best_accuracy),
            s.hit.map_or("not reached".into(), |h| h.step.to_string()),
            s.hit
                .map_or("-".into(), |h| format!("{:.2}", gigabytes(h.bits))),
            s.hit.map_or("-".into(), |h| secs(h.wall_clock_ms, 1)),
            format!("{:.2}", gigabytes(s.total_bits)),
            secs(s.total_ms, 1),
        ];
        if with_loss {
            row.push(s.final_train_loss.map_or("-".into(), |l| format!("{l:.3}")));
        }
        table.add_row(row);
    }
    table
}

fn multi_seed_table(
    runs: &[Run],
    methods: &[Method],
    seeds: &[u64],
    target: f64,
    with_loss: bool,
) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_BORDERS_ONLY);
    let mut header = vec![
        "method".to_string(),
        "final acc (mean ± std)".into(),
        "final acc min..max".into(),
        format!("reached {:.0}%", 100.0 * target),
        "steps to target".into(),
        "GB to target".into(),
        "wall-clock to target (s)".into(),
        "GB total".into(),
        "wall-clock total (s)".into(),
    ];
    if with_loss {
        header.push("final train loss".into());
    }
    table.set_header(header);
    let mut means = Vec::new();
    for &m in methods {
        let mine: Vec<&Run> = runs.iter().filter(|r| r.method == m).collect();
        let summaries: Vec<RunSummary> = mine.iter().map(|r| r.summary).collect();
        let Some(st) = SeedStats::of(&summaries) else {
            continue;
        };
        means.push((m.name().to_string(), st.final_accuracy.mean));
        let opt = |s: Option<Spread>, digits: usize, scale: f64| {
            s.map_or("-".to_string(), |s| s.mean_std(digits, scale))
        };
        let total = |f: &dyn Fn(&RunSummary) -> Option<f64>, digits: usize, scale: f64| {
            let v: Vec<f64> = summaries.iter().filter_map(f).collect();
            opt(Spread::of(&v), digits, scale)
        };
        let mut row = vec![
            m.name().to_string(),
            st.final_accuracy.mean_std(3, 1.0),
            st.final_accuracy.range(3, 1.0),
            format!("{}/{}", st.reached, st.runs),
            opt(st.steps, 0, 1.0),
            opt(st.bits, 2, BITS_PER_GB),
            opt(st.ms, 1, 1e3),
            total(&|s| Some(s.total_bits), 2, BITS_PER_GB),
            total(&|s| s.total_ms, 1, 1e3),
        ];
        if with_loss {
            row.push(total(&|s| s.final_train_loss, 3, 1.0));
        }
        table.add_row(row);
    }
    let mut out = format!(
        "{table}\nmean ± sample std over seeds; steps / GB / wall-clock to target over the seeds that reached it\nordering by mean final accuracy: {}",
        ordering(&means)
    );
    for &s in seeds {
        let items: Vec<(String, f64)> = runs
            .iter()
            .filter(|r| r.seed == s)
            .map(|r| (r.method.name().to_string(), r.summary.final_accuracy))
            .collect();
        out.push_str(&format!("\nseed {s}: {}", ordering(&items)));
    }
    out
}

fn curves_csv(runs: &[Run]) -> String {
    let mut out = String::from("method,seed,step,accuracy,train_loss,gb_sent,wall_clock_s\n");
    for r in runs {
        for e in &r.records {
            out.push_str(&format!(
                "{},{},{},{:.4},{},{:.4},{}\n",
                r.method,
                r.seed,
                e.step,
                e.accuracy,
                e.train_loss.map_or(String::new(), |l| format!("{l:.4}")),
                gigabytes(e.bits),
                e.wall_clock_ms
                    .map_or(String::new(), |w| format!("{:.3}", w / 1e3))
            ));
        }
    }
    out
}

fn summary_csv(runs: &[Run]) -> String {
    let mut out = String::from(
        "method,seed,final_acc,best_acc,final_train_loss,steps_to_target,gb_to_target,s_to_target,gb_total,s_total\n",
    );
    let opt = |x: Option<String>| x.unwrap_or_default();
    for r in runs {
        let s = &r.summary;
        out.push_str(&format!(
            "{},{},{:.4},{:.4},{},{},{},{},{:.4},{}\n",
            r.method,
            r.seed,
            s.final_accuracy,
            s.best_accuracy,
            opt(s.final_train_loss.map(|l| format!("{l:.4}"))),
            opt(s.hit.map(|h| h.step.to_string())),
            opt(s.hit.map(|h| format!("{:.4}", gigabytes(h.bits)))),
            opt(s
                .hit
                .and_then(|h| h.wall_clock_ms)
                .map(|w| format!("{:.3}", w / 1e3))),
            gigabytes(s.total_bits),
            opt(s.total_ms.map(|w| format!("{:.3}", w / 1e3))),
        ));
    }
    out
}

/// What the torch trainer needs besides the per-seed data.
#[cfg(feature = "train")]
struct TorchSetup {
    config: fedtopo::train::trainer::TrainConfig,
    /// MNIST `(train, test)` when `--dataset mnist:DIR`.
    mnist: Option<(fedtopo::train::data::Dataset, fedtopo::train::data::Dataset)>,
}

#[cfg(feature = "train")]
fn torch_setup(a: &LearnArgs) -> Result<TorchSetup> {
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
    Ok(TorchSetup {
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

/// Parameters of the torch model on the data (`dim`, `classes`: synthetic).
#[cfg(feature = "train")]
fn torch_params(s: &TorchSetup, dim: usize, classes: usize) -> Result<usize> {
    use fedtopo::train::model::{BatchedModel, InputShape};
    let input = match &s.mnist {
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
    let m = BatchedModel::new(s.config.model, 1, input, 0).map_err(anyhow::Error::msg)?;
    Ok(m.params_per_silo())
}

#[cfg(feature = "train")]
fn torch_describe(s: &TorchSetup) -> String {
    use fedtopo::train::optim::OptimizerKind;
    let optimizer = match s.config.optimizer {
        OptimizerKind::Sgd { momentum: 0.0 } => "sgd".to_string(),
        OptimizerKind::Sgd { momentum } => format!("sgd, momentum {momentum}"),
        OptimizerKind::Adam { .. } => "adam".to_string(),
    };
    format!(
        "learner: torch {} ({optimizer}) on {}",
        s.config.model.name(),
        if s.mnist.is_some() {
            "MNIST split by the label counts"
        } else {
            "the label-skewed Gaussian data of the reference learner"
        }
    )
}

#[cfg(feature = "train")]
fn torch_train(
    s: &TorchSetup,
    spec: &fedtopo::program::ProgramSpec,
    labels: &LabelCounts,
    ds: &fedtopo::program::learn::Dataset,
    seed: u64,
    a: &LearnArgs,
    costs: &StepCosts,
) -> Result<Vec<LearnRecord>> {
    use fedtopo::program::learn::split_by_counts;
    use fedtopo::program::train::{train, TorchOptions};
    use fedtopo::train::data::FederatedData;
    let data = match &s.mnist {
        None => ds.to_federated(),
        Some((pool, test)) => FederatedData {
            name: "mnist".into(),
            silos: split_by_counts(pool, labels, seed)?,
            train: pool.clone(),
            test: test.clone(),
        },
    };
    let o = TorchOptions {
        config: fedtopo::train::trainer::TrainConfig {
            seed,
            ..s.config.clone()
        },
        steps: a.time.steps,
        eval_every: a.eval_every,
    };
    Ok(train(spec, labels, &data, &o, costs)?)
}

/// Without the `train` feature there is no torch learner.
#[cfg(not(feature = "train"))]
enum TorchSetup {}

#[cfg(not(feature = "train"))]
fn torch_setup(_: &LearnArgs) -> Result<TorchSetup> {
    bail!(
        "--trainer torch needs the libtorch trainer: build with `--features train` \
         (e.g. scripts/libtorch.sh cargo build --release --features train)"
    )
}

#[cfg(not(feature = "train"))]
fn torch_params(s: &TorchSetup, _: usize, _: usize) -> Result<usize> {
    match *s {}
}

#[cfg(not(feature = "train"))]
fn torch_describe(s: &TorchSetup) -> String {
    match *s {}
}

#[cfg(not(feature = "train"))]
fn torch_train(
    s: &TorchSetup,
    _: &fedtopo::program::ProgramSpec,
    _: &LabelCounts,
    _: &fedtopo::program::learn::Dataset,
    _: u64,
    _: &LearnArgs,
    _: &StepCosts,
) -> Result<Vec<LearnRecord>> {
    match *s {}
}
