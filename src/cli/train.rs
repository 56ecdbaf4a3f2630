//! `fedtopo train`: train a real model with DPASGD on several overlays and
//! compare them in simulated wall-clock time.

use super::output::out;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use fedtopo::net::silos::DataSizes;
use fedtopo::report::breakdown::{
    breakdown_file_text, breakdown_summaries, breakdown_table, BreakdownRun,
};
use fedtopo::report::train_curves::plot_runs;
use fedtopo::train::asynchronous::AsyncTrainOptions;
use fedtopo::train::checkpoint::RunOptions;
use fedtopo::train::data::FederatedData;
use fedtopo::train::report::{render_csv, render_summary_csv, summarize, write_atomic};
use fedtopo::train::session::{with_data_labels, Session};
use fedtopo::train::trainer::Trainer;

use super::args::{build_options, CenterArgs, NetworkArgs, UnderlayArgs};
use super::training::TrainingArgs;

/// Options of `fedtopo train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    #[arg(long, help = super::args::overlays_help("Overlays to train on (a file's arc weights, and the families' own matrices, are the consensus under `--consensus auto`)"), default_value = "star,mst,ring", value_parser = super::args::overlay_list)]
    overlays: super::args::OverlayList,
    /// MATCHA communication budget Cb, in [0.001, 1] (activations drawn from --seed).
    #[arg(long, default_value_t = 0.5, value_parser = super::args::parse_budget)]
    budget: f64,
    #[command(flatten)]
    center: CenterArgs,
    #[command(flatten)]
    training: TrainingArgs,
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
    /// Protocol: `sync` (rounds, DPASGD), `async-gossip` (each silo
    /// averages with a random neighbour of the overlay as soon as both are
    /// free, AD-PSGD style) or `fedbuff[:K]` (buffered asynchronous
    /// aggregation at the STAR centre, K updates per server step,
    /// staleness-weighted; default K = min(10, N); overlay `star`). Async
    /// runs spend the computations of --rounds rounds (rounds x N), are
    /// evaluated every --eval-every x N computations and are not
    /// checkpointed.
    #[arg(long, default_value = "sync", value_parser = super::args::protocol)]
    protocol: super::args::ProtocolArg,
    /// Write where every round's time went to FILE, as `simulate
    /// --breakdown` (CSV of every silo-round: compute, transfer and waiting
    /// time, ms, and the silo whose model it waited for; JSON when FILE
    /// ends in `.json`), and print a summary per overlay on stderr. A
    /// resumed run records from round 0 (its clock replays the rounds done).
    #[arg(long, value_name = "FILE")]
    breakdown: Option<PathBuf>,
    #[command(flatten)]
    dcliques: super::dcliques::DCliquesArgs,
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
        None => format!("partition {}", a.training.partition),
    };
    eprintln!(
        "data: {}, {} silos, {} training examples ({from}); per silo: {}",
        data.name,
        held.len(),
        held.iter().sum::<usize>(),
        list.join(" ")
    );
    if sizes.is_some() {
        let text = fedtopo::csv_file::csv_text(false, |w| {
            w.write_record(["silo", "examples"])?;
            for (label, n) in labels.iter().zip(&list) {
                w.write_record([label.as_str(), n.as_str()])?;
            }
            Ok(())
        })?;
        write_atomic(&a.out.join("partition.csv"), text.as_bytes())?;
    }
    Ok(())
}

/// Runs `fedtopo train`.
pub fn run_train(a: TrainArgs) -> Result<()> {
    let t = &a.training;
    let underlay = a.underlay.load(t.quiet)?;
    let mut spec = a.network.spec(None)?;
    let n = spec.placement.place(&underlay)?.silo_count();
    let positions: Option<Vec<(f64, f64)>> = underlay.routers.iter().map(|r| r.lat_lon).collect();
    let sizes = spec.data_sizes(&underlay)?;
    let data = t.load_data(n, positions.as_deref(), a.seed, sizes.as_ref())?;
    let cfg = t.config(a.network.local_steps, a.seed)?;
    let kinds = a.overlays.kinds.clone();
    let mut knobs = a.center.knobs();
    knobs.extend([
        ("seed", a.seed.to_string()),
        ("budget", a.budget.to_string()),
    ]);
    knobs.extend(a.dcliques.knobs());
    let placement = spec.placement.place(&underlay)?;
    let mut options = build_options(&knobs, &underlay, &placement)?;
    // D-Cliques are built from the silos' real label counts.
    options.dcliques = with_data_labels(options.dcliques, &data);
    let target = t.target()?;
    // The trained model's real size is known only once the trainer is
    // built: an input of the network spec, not a patch on its delay model.
    if t.real_model_size {
        let trainer = Trainer::new(cfg.clone(), &data)?;
        spec = spec.with_model_bits(32.0 * trainer.params_per_silo() as f64, "trained-model");
    }
    let model = spec.build(&underlay)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let labels = model.connectivity.placement().labels(&underlay);
    report_partition(&a, &data, &labels, sizes.as_ref())?;
    if let (Some(p), Some(_)) = (a.protocol.0, &a.breakdown) {
        anyhow::bail!(
            "--breakdown: the time breakdown is for synchronous rounds, not --protocol {p}"
        );
    }
    let breakdown_file = super::simulate::create_now(a.breakdown.as_ref())?;
    let mut runs = Vec::new();
    let mut recorded = Vec::new();
    let session = Session {
        underlay: &underlay,
        model: &model,
        options: &options,
        config: &cfg,
        data: &data,
        partition: &t.partition,
        network: t.network_model,
        init: t.init()?,
        failures: t.failures()?,
    };
    for kind in kinds {
        let dir = a.out.join(super::args::file_safe(&kind.to_string()));
        if a.fresh && dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        let bar = fedtopo::progress::counted::Progress::new(
            &format!("train {kind}"),
            "rounds",
            t.rounds,
            !t.quiet,
            "{prefix:>10} [{bar:30}] {pos}/{len} rounds {msg} ({eta})",
        );
        let opts = RunOptions {
            rounds: t.rounds,
            eval_every: t.eval_every.unwrap_or(5),
            checkpoint_every: a.checkpoint_every,
            dir: Some(dir.clone()),
            stop_after: None,
            stop_at: None,
            stop_behind_ms: None,
        };
        if let Some(protocol) = a.protocol.0 {
            let async_opts = AsyncTrainOptions {
                eval_every: opts.eval_every,
                ..AsyncTrainOptions::default()
            };
            let trained = session.train_async(kind, protocol, t.rounds, &async_opts)?;
            bar.finish();
            let r = &trained.run;
            eprintln!(
                "{protocol} on {kind} ({} network): {} computations (per silo {}..{}), {} transfers, \
                 {:.1} s simulated{}",
                r.network,
                r.computations.iter().sum::<u64>(),
                r.computations.iter().min().unwrap_or(&0),
                r.computations.iter().max().unwrap_or(&0),
                r.transfers,
                r.makespan_ms / 1e3,
                if r.unapplied_updates > 0 {
                    format!(
                        "; {} updates left in the buffer at the end, not applied",
                        r.unapplied_updates
                    )
                } else {
                    String::new()
                }
            );
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            write_atomic(
                &dir.join("metrics.csv"),
                render_csv(&trained.records).as_bytes(),
            )?;
            runs.push((format!("{kind} {protocol}"), trained.records));
            continue;
        }
        let run = session.train_run(kind, &opts, a.breakdown.is_some(), |r, recs| {
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
        if a.breakdown.is_some() && run.breakdown.is_none() {
            eprintln!(
                "note: {kind}: no time breakdown (the two-phase Clique Averaging clock records none)"
            );
        }
        recorded.push((kind.to_string(), run.breakdown));
        runs.push((kind.to_string(), run.records));
    }
    if let (Some(path), Some(mut file)) = (&a.breakdown, breakdown_file) {
        let network = t.network_model.to_string();
        let views: Vec<BreakdownRun> = recorded
            .iter()
            .filter_map(|(overlay, b)| {
                Some(BreakdownRun {
                    overlay,
                    network: &network,
                    breakdown: b.as_ref()?,
                })
            })
            .collect();
        if !t.quiet {
            eprintln!(
                "{}",
                breakdown_table(&breakdown_summaries(&views, &labels)).to_terminal()
            );
        }
        std::io::Write::write_all(
            &mut file,
            breakdown_file_text(path, &views, &labels).as_bytes(),
        )
        .with_context(|| format!("writing {}", path.display()))?;
    }
    let rows = summarize(&runs, target, None);
    let mut summary = render_summary_csv(&rows, target);
    if let Some(d) = model.dynamics.as_ref() {
        // Which model and availability policy timed the rounds (with a
        // trace only: summaries without one keep their columns).
        let name = d.model_name(&t.network_model.to_string());
        summary = fedtopo::csv_file::append_columns(&summary, &[("network_model", name)])?;
    }
    write_atomic(&a.out.join("summary.csv"), summary.as_bytes())?;
    plot_runs(&a.out.join("curves.svg"), &runs).map_err(anyhow::Error::msg)?;
    out!("{summary}");
    eprintln!(
        "wrote {}/{{summary.csv,curves.svg,<overlay>/metrics.csv}}",
        a.out.display()
    );
    Ok(())
}
