//! `fedtopo train`: train a real model with DPASGD on several overlays and
//! compare them in simulated wall-clock time.

use super::output::out;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{parse_overlay_list, BuildOptions};
use fedtopo::overlay::matcha::MatchaOptions;
use fedtopo::report::train_curves::plot_runs;
use fedtopo::silos::DataSizes;
use fedtopo::train::checkpoint::RunOptions;
use fedtopo::train::consensus::ConsensusRule;
use fedtopo::train::data::FederatedData;
use fedtopo::train::model::ModelKind;
use fedtopo::train::optim::{LrSchedule, OptimizerKind};
use fedtopo::train::report::{render_summary_csv, summarize, write_atomic, Target};
use fedtopo::train::session::{load_dataset, with_data_labels, Session};
use fedtopo::train::trainer::{ExecMode, TrainConfig, Trainer};

use super::args::{center_policy, CenterArgs, NetworkArgs, UnderlayArgs};
use super::choice::choice;

/// Options of `fedtopo train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    /// Overlays to train on, comma-separated (star, mst, delta-mbst, ring,
    /// ring-opt, complete, matcha, matcha+, exp, exp-1peer, base:k=K,
    /// d-equistatic, od-equidyn, multigraph[:...], or file:PATH; a file's
    /// arc weights, and the families' own matrices, are the consensus under
    /// `--consensus auto`).
    #[arg(long, default_value = "star,mst,ring", value_parser = super::args::overlay_list)]
    overlays: String,
    /// Network model timing the rounds in the event engine: maxplus ([Marfoq20] eq. 3),
    /// paper ([Marfoq20] App. F), flow (max-min fair sharing).
    #[arg(long = "network", value_parser = choice(NetworkKind::ALL, NetworkKind::name), default_value_t = NetworkKind::Maxplus)]
    network_model: NetworkKind,
    /// MATCHA communication budget Cb, in [0.001, 1] (activations drawn from --seed).
    #[arg(long, default_value_t = 0.5, value_parser = super::args::parse_budget)]
    budget: f64,
    #[command(flatten)]
    center: CenterArgs,
    /// `synthetic`, `synthetic:ALPHA,BETA`, `mnist:DIR` or `cifar10:DIR`.
    #[arg(long, default_value = "synthetic")]
    dataset: String,
    /// Partition of MNIST/CIFAR among silos: iid, shards[:K], one-class,
    /// dirichlet:ALPHA, lognormal[:SIGMA], geo (synthetic data is split by its generator).
    #[arg(long, default_value = "shards:2")]
    partition: String,
    /// Model: logreg, mlp[:HIDDEN], lenet, gn-lenet.
    #[arg(long, default_value = "logreg")]
    model: String,
    /// Optimiser: sgd or adam.
    #[arg(long, default_value = "sgd")]
    optimizer: String,
    /// SGD momentum.
    #[arg(long, default_value_t = 0.0, value_parser = super::args::real(0.0, true, 1.0, false))]
    momentum: f64,
    /// Learning rate.
    #[arg(long, default_value_t = 0.05, value_parser = super::args::real(0.0, false, f64::INFINITY, false))]
    lr: f64,
    /// Learning-rate schedule: constant or inv-sqrt (lr / sqrt(round + 1)).
    #[arg(long, default_value = "constant")]
    lr_schedule: String,
    /// Mini-batch size per silo and local step.
    #[arg(long, default_value_t = 32, value_parser = super::args::whole::<usize>(1, 1 << 20))]
    batch_size: usize,
    /// Consensus rule: auto, local-degree, mh, half, average, fedavg, decavg,
    /// matcha:ALPHA, fastest, file:PATH. Data sizes weight `decavg` and
    /// `fedavg` (A_ij = s_j / sum s), and `auto` on STAR when --silos-csv has
    /// a `data` column (FedAvg); the other rules ignore them. `fastest`:
    /// fastest-mixing symmetric weights of an undirected overlay ([Boyd04];
    /// `fedtopo mixing` shows the gain).
    #[arg(long, default_value = "auto")]
    consensus: String,
    /// Communication rounds.
    #[arg(long, default_value_t = 200, value_parser = super::args::round_count())]
    rounds: u64,
    /// Evaluate every this many rounds.
    #[arg(long, default_value_t = 5, value_parser = super::args::whole::<u64>(1, u64::MAX))]
    eval_every: u64,
    /// Evaluate on at most this many training and test examples.
    #[arg(long, default_value_t = 4000, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    eval_samples: usize,
    /// Target mean test accuracy for the time-to-target summary (without
    /// --target-acc or --target-loss the summary has no target columns).
    #[arg(long, value_parser = super::args::real(0.0, true, 1.0, true))]
    target_acc: Option<f64>,
    /// Target mean training loss (instead of accuracy).
    #[arg(long, value_parser = super::args::real(0.0, true, f64::INFINITY, false))]
    target_loss: Option<f64>,
    /// Use the trained model's real size (32 bit per parameter) as M for timing.
    #[arg(long)]
    real_model_size: bool,
    /// Seed of data, initialisation and batches.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Output directory (one sub-directory per overlay, summary.csv, curves.svg).
    #[arg(long, default_value = "out/train")]
    out: PathBuf,
    /// Checkpoint every this many rounds (0: only at the end).
    #[arg(long, default_value_t = 20, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    checkpoint_every: u64,
    /// Ignore existing checkpoints in --out and start over.
    #[arg(long)]
    fresh: bool,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
    /// Print the summary on stderr, not stdout (`design --verify` keeps its
    /// own stdout for its table / CSV / JSON).
    #[arg(long, hide = true)]
    summary_to_stderr: bool,
    /// Initialisation: `coordinated` (every silo starts from the same model)
    /// or uncoordinated He-uniform per silo scaled by a gain: `none` (g = 1),
    /// `sqrt-n`, `pi` (g = 1/||pi|| of the DecAvg walk; Badie-Modiri et al.).
    #[arg(long, default_value = "coordinated")]
    init_gain: String,
    /// Random failures, drawn from --seed: `none`, `node-down:Q` or
    /// `link-down:Q` (each node / directed link down in a round with
    /// probability Q, the failure probability, in [0, 1)), or `node-up:P` /
    /// `link-up:P` (up with probability P = 1 - Q). The older `node:P` /
    /// `link:P` mean `node-up:P` (deprecated, with a warning).
    #[arg(long, default_value = "none")]
    failures: String,
    #[command(flatten)]
    dcliques: super::dcliques::DCliquesArgs,
}

fn load_data(
    a: &TrainArgs,
    n: usize,
    positions: Option<&[(f64, f64)]>,
    sizes: Option<&DataSizes>,
) -> Result<FederatedData> {
    Ok(load_dataset(
        &a.dataset,
        &a.partition,
        n,
        positions,
        a.seed,
        sizes,
    )?)
}

/// States the partition used (stderr), and writes it to `OUT/partition.csv`
/// (`silo,examples`) when the silo file's `data` column set it.
fn report_partition(
    a: &TrainArgs,
    data: &FederatedData,
    labels: &[String],
    sizes: Option<&DataSizes>,
) -> Result<()> {
    let held: Vec<usize> = data.silos.iter().map(Vec::len).collect();
    let list: Vec<String> = held.iter().map(usize::to_string).collect();
    let from = match sizes {
        Some(d) => format!("the data column of {}", d.source),
        None => format!("partition {}", a.partition),
    };
    eprintln!(
        "data: {}, {} silos, {} training examples ({from}); per silo: {}",
        data.name,
        held.len(),
        held.iter().sum::<usize>(),
        list.join(" ")
    );
    if sizes.is_some() {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(["silo", "examples"])?;
        for (label, n) in labels.iter().zip(&list) {
            w.write_record([label.as_str(), n.as_str()])?;
        }
        let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
        write_atomic(&a.out.join("partition.csv"), &bytes)?;
    }
    Ok(())
}

fn config(a: &TrainArgs) -> Result<TrainConfig> {
    let model = ModelKind::parse(&a.model).with_context(|| {
        format!(
            "unknown model `{}`; expected logreg, mlp[:H], lenet, gn-lenet",
            a.model
        )
    })?;
    let optimizer = match a.optimizer.to_ascii_lowercase().as_str() {
        "sgd" => OptimizerKind::Sgd {
            momentum: a.momentum,
        },
        "adam" => OptimizerKind::Adam {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        },
        o => bail!("unknown optimizer `{o}`; expected sgd or adam"),
    };
    let lr_schedule = match a.lr_schedule.as_str() {
        "constant" => LrSchedule::Constant,
        "inv-sqrt" | "1/sqrt" => LrSchedule::InvSqrt,
        o => bail!("unknown --lr-schedule `{o}`; expected constant or inv-sqrt"),
    };
    Ok(TrainConfig {
        model,
        optimizer,
        lr: a.lr,
        lr_schedule,
        local_steps: a.network.local_steps,
        batch_size: a.batch_size,
        consensus: ConsensusRule::parse(&a.consensus)?,
        eval_samples: a.eval_samples,
        seed: a.seed,
        mode: ExecMode::Batched,
    })
}

/// Runs `fedtopo train`.
pub fn run_train(a: TrainArgs) -> Result<()> {
    let underlay = a.underlay.load(a.quiet)?;
    let mut spec = a.network.spec(None)?;
    let n = spec.placement.place(&underlay)?.silo_count();
    let positions: Option<Vec<(f64, f64)>> = underlay.routers.iter().map(|r| r.lat_lon).collect();
    let sizes = spec.data_sizes(&underlay)?;
    let data = load_data(&a, n, positions.as_deref(), sizes.as_ref())?;
    let cfg = config(&a)?;
    let kinds = parse_overlay_list(&a.overlays)?;
    let options = BuildOptions {
        center: center_policy(&a.center.center, &underlay)?,
        seed: a.seed,
        matcha: MatchaOptions {
            budget: a.budget,
            seed: a.seed,
            ..MatchaOptions::default()
        },
        // D-Cliques are built from the silos' real label counts.
        dcliques: with_data_labels(a.dcliques.build()?, &data),
        ..BuildOptions::default()
    };
    let target = match (a.target_acc, a.target_loss) {
        (Some(x), None) if !(0.0..=1.0).contains(&x) => {
            bail!("--target-acc {x}: expected an accuracy between 0 and 1")
        }
        (None, Some(l)) if !(l.is_finite() && l > 0.0) => {
            bail!("--target-loss {l}: expected a finite loss > 0")
        }
        (Some(x), None) => Some(Target::TestAccuracy(x)),
        (None, Some(l)) => Some(Target::TrainLoss(l)),
        // No target: the summary has no time-to-target columns.
        (None, None) => None,
        _ => bail!("give --target-acc or --target-loss, not both"),
    };
    // The trained model's real size is known only once the trainer is
    // built: an input of the network spec, not a patch on its delay model.
    if a.real_model_size {
        let t = Trainer::new(cfg.clone(), &data)?;
        spec = spec.with_model_bits(32.0 * t.params_per_silo() as f64, "trained-model");
    }
    let model = spec.build(&underlay)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let labels = model.connectivity.placement().labels(&underlay);
    report_partition(&a, &data, &labels, sizes.as_ref())?;
    let mut runs = Vec::new();
    let session = Session {
        underlay: &underlay,
        model: &model,
        options: &options,
        config: &cfg,
        data: &data,
        partition: &a.partition,
        network: a.network_model,
        init: match a.init_gain.as_str() {
            "coordinated" => None,
            g => Some(g.parse().with_context(|| {
                format!("--init-gain `{g}`: expected coordinated, none, sqrt-n or pi")
            })?),
        },
        failures: super::args::failures(&a.failures)?,
    };
    for kind in kinds {
        let dir = a.out.join(super::args::file_safe(&kind.to_string()));
        if a.fresh && dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        let bar = fedtopo::report::progress::Progress::new(
            &format!("train {kind}"),
            "rounds",
            a.rounds,
            !a.quiet,
            "{prefix:>10} [{bar:30}] {pos}/{len} rounds {msg} ({eta})",
        );
        let opts = RunOptions {
            rounds: a.rounds,
            eval_every: a.eval_every,
            checkpoint_every: a.checkpoint_every,
            dir: Some(dir.clone()),
            stop_after: None,
        };
        let recs = session.train(kind, &opts, |r, recs| {
            bar.set_position(r);
            if let Some(l) = recs.last() {
                bar.set_message(&format!(
                    "loss {:.4} acc {:.3} t={:.1}s",
                    l.train_loss.mean,
                    l.test_acc.mean,
                    l.wall_clock_ms / 1e3
                ));
            }
        })?;
        bar.finish();
        runs.push((kind.to_string(), recs));
    }
    let rows = summarize(&runs, target, None);
    let summary = render_summary_csv(&rows, target);
    write_atomic(&a.out.join("summary.csv"), summary.as_bytes())?;
    plot_runs(&a.out.join("curves.svg"), &runs).map_err(anyhow::Error::msg)?;
    if a.summary_to_stderr {
        eprint!("{summary}");
    } else {
        out!("{summary}");
    }
    eprintln!(
        "wrote {}/{{summary.csv,curves.svg,<overlay>/metrics.csv}}",
        a.out.display()
    );
    Ok(())
}
