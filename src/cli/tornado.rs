//! `fedtopo tornado`: TornadoAggregate and ring-based hierarchies (Lee et
//! al. 2021) as round programs: timing on an underlay, Table 3.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};

use fedtopo::network::NetworkKind;
use fedtopo::program::grouping::{near_iid_partition, two_class_partition, LabelCounts};
use fedtopo::program::reproduce::table3;
use fedtopo::program::sim::simulate;
use fedtopo::program::Method;

use super::args::{center_policy, NetworkArgs, UnderlayArgs};

/// Sub-commands of `fedtopo tornado`.
#[derive(Debug, Subcommand)]
pub enum TornadoCommand {
    /// Time the Table 4 programs on an underlay: wall-clock per step,
    /// messages and bytes per node and per core link.
    Time(Box<TimeArgs>),
    /// Table 3: clustering-cost reduction of CLUSTER, ours vs published.
    Clustering(ClusteringArgs),
    /// Train softmax regression (pure-Rust reference learner) under every
    /// program on label-skewed synthetic data; with an underlay, also the
    /// bytes and wall-clock to a target accuracy.
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
}

/// Synthetic label partition used for grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Partition {
    /// 10 classes, 2 per node, power-law sizes (MNIST in FedML).
    Mnist,
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
    /// Methods, comma-separated, or `all` (Table 4 parameters).
    #[arg(long, default_value = "all")]
    methods: String,
    /// Steps T to simulate (Table 4's global period is 100).
    #[arg(long, default_value_t = 100)]
    steps: u64,
    /// Network model: maxplus (eq. 3), paper (Appendix F), flow (max-min fair).
    #[arg(long = "network", value_enum, default_value_t = NetworkKind::Flow)]
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
    Ok(match p {
        Partition::Mnist => two_class_partition(n, 10, 2, seed)?,
        Partition::Shakespeare => near_iid_partition(n, 80, 200.0, seed)?,
    })
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
    let gb = |bits: f64| bits / 8e9;
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
            format!("{:.2}", gb(c.bits())),
            format!("{:.2}", gb(c.sent_bits[server] + c.recv_bits[server])),
            format!("{:.2}", gb(busiest)),
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

fn learn(a: LearnArgs) -> Result<()> {
    use fedtopo::program::learn::{train, Dataset, LearnOptions};
    let t = &a.time;
    if t.steps == 0 || a.eval_every == 0 || a.batch == 0 {
        bail!("--steps, --eval-every and --batch must be at least 1");
    }
    if !(a.lr.is_finite() && a.lr > 0.0 && a.separation.is_finite() && a.separation > 0.0) {
        bail!("--lr and --separation must be finite and > 0");
    }
    let timed = if a.nodes.is_none() {
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
    let data = labels(t.partition, n, t.seed)?;
    let o = LearnOptions {
        dim: a.dim,
        separation: a.separation,
        lr: a.lr,
        batch: a.batch,
        steps: t.steps,
        eval_every: a.eval_every,
        seed: t.seed,
        ..LearnOptions::default()
    };
    let ds = Dataset::synthetic(&data, &o);
    let mut table = Table::new();
    table.load_style(UTF8_BORDERS_ONLY);
    table.set_header(vec![
        "method".to_string(),
        "final acc".into(),
        "best acc".into(),
        format!("steps to {:.0}%", 100.0 * a.target),
        "GB to target".into(),
        "wall-clock to target (s)".into(),
        "GB total".into(),
        "wall-clock total (s)".into(),
    ]);
    let mut curves = String::from("method,step,accuracy,gb_sent,wall_clock_s\n");
    for m in Method::parse_list(&t.methods)? {
        let mut p = m.defaults();
        if let Some(g) = t.groups {
            p.groups = g;
        }
        p.groups = p.groups.min(n);
        let spec = p
            .build(&data, server, t.seed)
            .with_context(|| format!("building {m}"))?;
        let evals = train(&spec, &data, &ds, &o);
        let program = spec.program(t.steps);
        let mut cum_bits = Vec::with_capacity(program.steps.len());
        let mut acc_bits = 0.0;
        for s in &program.steps {
            acc_bits += s.messages().len() as f64;
            cum_bits.push(acc_bits);
        }
        let (bits, ends) = match &timed {
            Some((u, model)) => {
                let mut net = t.network_model.build(model);
                let r = simulate(&program, model, net.as_mut(), u.links.len())?;
                let b = model.workload.model_bits;
                (
                    cum_bits.iter().map(|c| c * b).collect::<Vec<_>>(),
                    Some(r.step_ends),
                )
            }
            None => (cum_bits.iter().map(|c| c * 7850.0 * 32.0).collect(), None),
        };
        let gb = |b: f64| b / 8e9;
        for e in &evals {
            let k = e.t as usize - 1;
            curves.push_str(&format!(
                "{m},{},{:.4},{:.4},{}\n",
                e.t,
                e.accuracy,
                gb(bits[k]),
                ends.as_ref()
                    .map_or(String::new(), |w| format!("{:.3}", w[k] / 1e3))
            ));
        }
        let best = evals.iter().map(|e| e.accuracy).fold(0.0, f64::max);
        let hit = evals.iter().find(|e| e.accuracy >= a.target);
        let last = program.steps.len() - 1;
        let wall = |k: usize| {
            ends.as_ref()
                .map_or("-".to_string(), |w| format!("{:.1}", w[k] / 1e3))
        };
        table.add_row(vec![
            m.name().to_string(),
            format!("{:.3}", evals.last().map_or(0.0, |e| e.accuracy)),
            format!("{best:.3}"),
            hit.map_or("not reached".into(), |e| e.t.to_string()),
            hit.map_or("-".into(), |e| format!("{:.2}", gb(bits[e.t as usize - 1]))),
            hit.map_or("-".into(), |e| wall(e.t as usize - 1)),
            format!("{:.2}", gb(bits[last])),
            wall(last),
        ]);
    }
    match &timed {
        Some((u, model)) => println!(
            "{}: {n} silos, server {server} ({}), {} network, {} steps, M = {} bit, Tc = {} ms, partition {:?}, seed {}",
            u.name, u.routers[server].label, t.network_model, t.steps, model.workload.model_bits, model.workload.compute_ms, t.partition, t.seed
        ),
        None => println!(
            "{n} nodes (no timing; GB at M = 7850 x 32 bit), {} steps, partition {:?}, seed {}",
            t.steps, t.partition, t.seed
        ),
    }
    println!("{table}");
    if let Some(dir) = &t.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let p = dir.join("curves.csv");
        std::fs::write(&p, curves).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
