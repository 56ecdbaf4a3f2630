//! `fedtopo simulate`: replay training rounds in wall-clock time.

use super::output::{out, outln};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use fedtopo::calibrate::RunLog;
use fedtopo::csv_file::append_columns;
use fedtopo::csv_file::serde_csv;
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::net::description::NetworkDescription;
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::BuildOptions;
use fedtopo::replay::{ReplayOptions, Straggler, TraceWindow};
use fedtopo::report::breakdown::{
    breakdown_file_text, breakdown_summaries, breakdown_table, BreakdownRun,
};
use fedtopo::report::gantt::gantt_svg;
use fedtopo::report::replay::{
    link_usage_labelled, links_csv, replay_summary, replay_summary_table, rounds_csv, starts_csv,
    timeline_svg,
};
use fedtopo::report::table::Table;
use fedtopo::report::{render_json, OutputFormat};

use super::args::{file_safe, CenterArgs, NetworkArgs, PlacementArgs, Setup, UnderlayArgs};
use super::choice::choice;

/// Options of `fedtopo simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    #[command(flatten)]
    placement: PlacementArgs,
    #[arg(long, help = super::args::overlays_help("Overlays to replay"), default_value = "star,mst,delta-mbst,ring", value_parser = super::args::overlay_list)]
    overlays: super::args::OverlayList,
    #[command(flatten)]
    center: CenterArgs,
    /// Number of rounds K.
    #[arg(long, default_value_t = 100, value_parser = super::args::whole::<u64>(1, u64::MAX))]
    rounds: u64,
    /// Network model: maxplus ([Marfoq20] eq. 3), paper ([Marfoq20] App. F), flow (max-min fair).
    #[arg(long = "network", value_parser = choice(NetworkKind::ALL, NetworkKind::name), default_value_t = NetworkKind::Maxplus)]
    network_model: NetworkKind,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Random compute times: `none` or `lognormal:SIGMA`.
    #[arg(long, default_value = "none")]
    straggler: String,
    /// Random failures, drawn from --seed: `none`, `node-down:Q` or
    /// `link-down:Q` (each node / directed link down in a round with
    /// probability Q, the failure probability, in [0, 1)), or `node-up:P` /
    /// `link-up:P` (up with probability P = 1 - Q). The older `node:P` /
    /// `link:P` mean `node-up:P` (deprecated, with a warning).
    #[arg(long, default_value = "none")]
    failures: String,
    /// Output format of the summary: table, csv or json.
    #[arg(long, value_parser = choice(OutputFormat::ALL, OutputFormat::name), default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Directory for starts.csv, rounds.csv, links.csv, silos.csv (every
    /// silo's compute time and access capacities), timeline.svg (rounds
    /// completed against time) and gantt-OVERLAY.svg (a round timeline per
    /// overlay: per silo compute / send / wait, and the critical path).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Where each round's time goes: write every silo's rounds to FILE
    /// (CSV: compute, transfer and waiting time, ms, and the silo whose
    /// model it waited for; JSON when FILE ends in `.json`, with the
    /// per-round means and the run's critical path) and, with the table
    /// format, print a summary per overlay (mean compute / transfer / wait
    /// per silo and round, and what the critical path is made of).
    #[arg(long, value_name = "FILE")]
    breakdown: Option<PathBuf>,
    /// Write the run's log to FILE (CSV `kind,round,from,to,start_ms,end_ms,bits`:
    /// every computation and every transfer), the format `fedtopo
    /// calibrate --log` fits a network model to. One overlay only.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Rounds shown in the round timelines (gantt-OVERLAY.svg), from
    /// --timeline-from on.
    #[arg(long, default_value_t = 4, value_parser = super::args::whole::<u64>(1, 100))]
    timeline_rounds: u64,
    /// First round shown in the round timelines (0: from the start).
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, 1_000_000))]
    timeline_from: u64,
    #[command(flatten)]
    dcliques: super::dcliques::DCliquesArgs,
    /// Protocol: `sync` (rounds) or an asynchronous one, `async-gossip`
    /// (each silo averages with a random neighbour of the overlay as soon
    /// as both are free) or `fedbuff[:K]` (buffered aggregation at the STAR
    /// centre, on `star`), run for the computations of --rounds rounds
    /// (rounds x N). Prints each run's computations, transfers and
    /// makespan (`fedtopo train --protocol` trains with them).
    #[arg(long, default_value = "sync", value_parser = super::args::protocol)]
    protocol: super::args::ProtocolArg,
    /// Also write DIR/report.html: one self-contained page (no network
    /// needed to view it) with the summary table, the rounds-completed
    /// curves, every overlay's round timeline and map, and the network.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
}

fn parse_straggler(s: &str) -> Result<Straggler> {
    s.parse().map_err(|e: String| anyhow::anyhow!("--{e}"))
}

/// The summary rows as a table for the report page.
fn replay_summary_table_rows(rows: &[fedtopo::report::replay::ReplaySummaryRow]) -> Table {
    let mut t = Table::new([
        "overlay",
        "network",
        "rounds",
        "mean round (ms)",
        "steady (ms)",
        "p95 (ms)",
        "max-plus cycle time (ms)",
        "ratio",
        "makespan (ms)",
    ]);
    for r in rows {
        t.row([
            r.overlay.clone(),
            r.network.clone(),
            r.rounds.to_string(),
            format!("{:.1}", r.mean_round_ms),
            format!("{:.1}", r.steady_round_ms),
            format!("{:.1}", r.p95_round_ms),
            r.cycle_time_ms.map_or("-".into(), |t| format!("{t:.1}")),
            r.steady_over_cycle_time
                .map_or("-".into(), |x| format!("{x:.3}")),
            format!("{:.1}", r.makespan_ms),
        ]);
    }
    t
}

/// Creates the output file `path` now, so that a path that cannot be
/// written fails before the replays rather than after them.
pub(super) fn create_now(path: Option<&PathBuf>) -> Result<Option<std::fs::File>> {
    path.map(|p| std::fs::File::create(p).with_context(|| format!("writing {}", p.display())))
        .transpose()
}

/// Runs `fedtopo simulate`.
pub fn run(a: SimulateArgs) -> Result<()> {
    if a.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    // The bound on rounds alone before loading; rounds x silos once placed.
    fedtopo::replay::check_rounds(a.rounds, 0)
        .map_err(|e| anyhow::anyhow!("--rounds {}: {e}", a.rounds))?;
    let straggler = parse_straggler(&a.straggler)?;
    let kinds = a.overlays.kinds.clone();
    if let Some(protocol) = a.protocol.0 {
        return run_async(&a, protocol, &kinds);
    }
    let failures = super::args::failures(&a.failures)?;
    let setup = Setup::load_dynamic(&a.underlay, &a.network, &a.placement)?;
    let Setup {
        underlay,
        spec,
        model,
    } = setup;
    fedtopo::replay::check_rounds(a.rounds, model.silo_count())
        .map_err(|e| anyhow::anyhow!("--rounds {}: {e}", a.rounds))?;
    let options = build_options(&a, &underlay, &model)?;
    let pictures = a.out.is_some() || a.report.is_some();
    if pictures && a.timeline_from >= a.rounds {
        bail!(
            "--timeline-from {}: the replay has rounds 0 to {} (--rounds {})",
            a.timeline_from,
            a.rounds - 1,
            a.rounds
        );
    }
    if a.log.is_some() && kinds.len() != 1 {
        bail!(
            "--log writes the log of one run: give one overlay (--overlays), not {}",
            kinds.len()
        );
    }
    let timeline = TraceWindow {
        first: a.timeline_from,
        count: a.timeline_rounds.min(a.rounds - a.timeline_from),
    };
    let trace = if a.log.is_some() {
        // Every round (the pictures take their window out of it).
        TraceWindow {
            first: 0,
            count: a.rounds,
        }
    } else if pictures {
        timeline
    } else {
        TraceWindow::default()
    };
    let log_file = create_now(a.log.as_ref())?;
    // Created now: a path that cannot be written fails before the replays.
    let breakdown_file = create_now(a.breakdown.as_ref())?;
    let ropts = ReplayOptions {
        rounds: a.rounds,
        straggler,
        seed: a.seed,
        trace,
        breakdown: a.breakdown.is_some(),
    };
    let labels = model.connectivity.placement().labels(&underlay);
    let bar = fedtopo::progress::counted::Progress::new(
        "simulate",
        "rounds",
        a.rounds * kinds.len() as u64,
        true,
        "{msg:>12} [{bar:40}] {pos}/{len} rounds ({eta})",
    );
    let mut results = Vec::new();
    let mut taus = Vec::new();
    let mut overlays = Vec::new();
    for kind in kinds {
        bar.set_message(&kind.to_string());
        let mut net = a.network_model.build(&model);
        let overlay = EvaluatedOverlay::build(kind, &underlay, &model, &options)?;
        if a.log.is_some() {
            // Refused before the replay rather than after it.
            let per_round = overlay.schedule().round(0).arc_count() as u64;
            let max = fedtopo::replay::trace::MAX_TRACED_TRANSFERS as u64;
            if per_round.saturating_mul(a.rounds) > max {
                bail!(
                    "--log: {} rounds of {} transfers each is more than the {max} a log \
                     holds: ask for fewer --rounds",
                    a.rounds,
                    per_round
                );
            }
        }
        // MATCHA (a new seeded overlay every round) has no exact cycle
        // time to compare the replay with; periodic schedules do.
        // With network dynamics the max-plus cycle time does not describe
        // the run: no comparison.
        taus.push(
            if overlay.has_exact_cycle_time() && model.dynamics.is_none() {
                Some(overlay.cycle_time(&model)?.cycle_time_ms)
            } else {
                None
            },
        );
        let mut tick = |k| {
            if k > 0 {
                bar.inc(1)
            }
        };
        results.push(overlay.replay(&model, net.as_mut(), &ropts, failures, &mut tick)?);
        if a.report.is_some() {
            overlays.push(overlay);
        }
    }
    bar.finish();
    if let (Some(path), Some(mut file), Some(r)) = (&a.log, log_file, results.first()) {
        let Some(trace) = r.trace.as_ref() else {
            bail!(
                "--log: {} records no events (Clique Averaging's two phases)",
                r.overlay
            );
        };
        if trace.truncated {
            bail!(
                "--log: more than {} transfers: ask for fewer --rounds",
                fedtopo::replay::trace::MAX_TRACED_TRANSFERS
            );
        }
        let log = RunLog::from_trace(trace, &r.starts, model.workload.model_bits);
        std::io::Write::write_all(&mut file, log.to_csv(&labels).as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        for r in &mut results {
            r.trace = r
                .trace
                .as_ref()
                .map(|t| t.window(timeline.first, timeline.count));
        }
    }
    let rows = replay_summary(&results, &taus);
    let network = NetworkDescription::new(&underlay, &spec, &model)?;
    let recorded = BreakdownRun::of_replays(&results);
    let breakdowns = breakdown_summaries(&recorded, &labels);
    match a.format {
        OutputFormat::Table => {
            outln!("{}", replay_summary_table(&rows));
            if let Some(d) = &model.dynamics {
                outln!("network dynamics: {}", d.describe());
            }
            for r in &rows {
                if let (Some(absent), Some(a), Some(j), Some(m), Some(dr)) = (
                    r.silo_rounds_absent,
                    r.absences,
                    r.rejoins,
                    r.models_missed,
                    r.models_dropped,
                ) {
                    outln!(
                        "churn, {} on {}: {absent} silo-rounds absent, {a} absences, {j} rejoins, \
                         {m} averages without a model, {dr} late models dropped",
                        model
                            .dynamics
                            .as_ref()
                            .map_or(String::new(), |d| d.policy.name()),
                        r.overlay
                    );
                }
            }
            if a.breakdown.is_some() {
                outln!("where the time goes (mean per silo and round; the critical path runs from 0 to the makespan)");
                outln!("{}", breakdown_table(&breakdowns).to_terminal());
            }
        }
        OutputFormat::Csv => out!(
            "{}",
            append_columns(&serde_csv(&rows)?, &network.csv_columns())?
        ),
        OutputFormat::Json => {
            let mut doc = serde_json::json!({
                "underlay": underlay.name,
                "silos": model.silo_count(),
                "rows": rows,
                "network": network,
            });
            if let Some(d) = &model.dynamics {
                doc["dynamics"] = serde_json::json!({
                    "trace": d.source,
                    "changes": d.changes(),
                    "model": "event replay with traces",
                });
            }
            if a.breakdown.is_some() {
                doc["breakdown"] = serde_json::to_value(&breakdowns)?;
            }
            out!("{}", render_json(&doc))
        }
    }
    if let (Some(path), Some(mut file)) = (&a.breakdown, breakdown_file) {
        for r in results.iter().filter(|r| r.breakdown.is_none()) {
            eprintln!(
                "note: {}: no time breakdown (the two-phase Clique Averaging replay records none)",
                r.overlay
            );
        }
        let text = breakdown_file_text(path, &recorded, &labels);
        std::io::Write::write_all(&mut file, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(dir) = &a.report {
        let title = format!("{} — {} network", underlay.name, a.network_model);
        let mut page = super::report_page::page(&format!(
            "fedtopo simulate: {} ({} silos, {} rounds, {} network)",
            underlay.name,
            model.silo_count(),
            a.rounds,
            a.network_model
        ));
        page.section("Rounds")
            .table(&replay_summary_table_rows(&rows))
            .note("ratio: steady-state round time over the max-plus cycle time ([Marfoq20] eq. 3); schedules have none.");
        if !breakdowns.is_empty() {
            page.section("Where the time goes")
                .table(&breakdown_table(&breakdowns))
                .note("mean per silo and round: computing, the last model in flight while the silo idled (transfer), idle before it was sent (wait); the critical path runs from 0 to the makespan.");
        }
        let curves = page.section("Rounds completed");
        match timeline_svg(&results, &title) {
            Ok(svg) => curves.figure(
                &svg,
                "rounds completed against wall-clock time, one line per overlay",
            ),
            Err(e) => curves.error(&format!("no plot: {e}")),
        };
        let timelines = page.section("Round timelines");
        for r in &results {
            timelines.subheading(&r.overlay);
            let t = format!("{}: round timeline of {}", underlay.name, r.overlay);
            match gantt_svg(r, &labels, &t) {
                Ok(svg) => timelines.figure(
                    &svg,
                    "per silo: computing, sending, waiting; red: the critical path",
                ),
                Err(e) => timelines.error(&format!("no round timeline: {e}")),
            };
        }
        let refs: Vec<&EvaluatedOverlay> = overlays.iter().collect();
        super::report_page::maps(page.section("Maps"), &underlay, &model, &refs);
        super::report_page::network_section(&mut page, &underlay, &model, &network);
        super::report_page::write(&page, dir)?;
    }
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let write = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
        };
        write("starts.csv", starts_csv(&results))?;
        write("silos.csv", network.silos_to_csv()?)?;
        write("rounds.csv", rounds_csv(&results))?;
        let router_labels: Vec<String> = underlay.routers.iter().map(|r| r.label.clone()).collect();
        let usage: Vec<_> = results
            .iter()
            .map(|r| (r, link_usage_labelled(r, &model, &labels, &router_labels)))
            .collect();
        write("links.csv", links_csv(&usage))?;
        let title = format!("{} — {} network", underlay.name, a.network_model);
        write(
            "timeline.svg",
            timeline_svg(&results, &title).map_err(|e| anyhow::anyhow!("SVG plot: {e}"))?,
        )?;
        for r in &results {
            let title = format!("{}: round timeline of {}", underlay.name, r.overlay);
            match gantt_svg(r, &labels, &title) {
                Ok(svg) => write(&format!("gantt-{}.svg", file_safe(&r.overlay)), svg)?,
                Err(e) => eprintln!("note: no round timeline: {e}"),
            }
        }
    }
    Ok(())
}

/// The overlays' build options: centre, seeds (MATCHA's too), D-Cliques.
fn build_options(
    a: &SimulateArgs,
    underlay: &fedtopo::net::underlay::Underlay,
    model: &fedtopo::net::delay::DelayModel,
) -> Result<BuildOptions> {
    let mut knobs = a.center.knobs();
    knobs.push(("seed", a.seed.to_string()));
    knobs.extend(a.dcliques.knobs());
    super::args::build_options(&knobs, underlay, model.connectivity.placement())
}

/// `simulate --protocol async-gossip|fedbuff[:K]`: the asynchronous runs'
/// timing, one row per overlay.
fn run_async(
    a: &SimulateArgs,
    protocol: fedtopo::replay::asynchronous::AsyncProtocol,
    kinds: &[fedtopo::overlay::build::OverlayKind],
) -> Result<()> {
    use fedtopo::replay::asynchronous::AsyncOptions;
    for (given, what) in [
        (a.breakdown.is_some(), "--breakdown"),
        (a.log.is_some(), "--log"),
        (a.out.is_some(), "--out"),
        (a.report.is_some(), "--report"),
        (a.straggler.trim() != "none", "--straggler"),
        (a.failures.trim() != "none", "--failures"),
    ] {
        if given {
            bail!("{what} is for synchronous rounds, not --protocol {protocol}");
        }
    }
    let Setup {
        underlay, model, ..
    } = Setup::load_dynamic(&a.underlay, &a.network, &a.placement)?;
    let n = model.silo_count();
    let options = build_options(a, &underlay, &model)?;
    let run_options = AsyncOptions {
        computations: a.rounds.saturating_mul(n as u64),
        seed: a.seed,
    };
    let mut t = Table::new([
        "overlay",
        "protocol",
        "network",
        "computations",
        "per silo (min..max)",
        "transfers",
        "makespan (ms)",
        "ms per N computations",
        "unapplied updates",
    ]);
    let mut rows = Vec::new();
    for &kind in kinds {
        let overlay = EvaluatedOverlay::build(kind, &underlay, &model, &options)?;
        let mut net = a.network_model.build(&model);
        let r = overlay.run_async(protocol, &model, net.as_mut(), &run_options)?;
        let total: u64 = r.computations.iter().sum();
        let (lo, hi) = (
            r.computations.iter().min().copied().unwrap_or(0),
            r.computations.iter().max().copied().unwrap_or(0),
        );
        let per_round = r.makespan_ms / (total as f64 / n as f64).max(f64::MIN_POSITIVE);
        t.row([
            kind.to_string(),
            r.protocol.clone(),
            r.network.clone(),
            total.to_string(),
            format!("{lo}..{hi}"),
            r.transfers.to_string(),
            format!("{:.1}", r.makespan_ms),
            format!("{per_round:.1}"),
            r.unapplied_updates.to_string(),
        ]);
        rows.push(serde_json::json!({
            "overlay": kind.to_string(),
            "protocol": r.protocol,
            "network": r.network,
            "computations": r.computations,
            "transfers": r.transfers,
            "events": r.events,
            "makespan_ms": r.makespan_ms,
            "ms_per_n_computations": per_round,
            "unapplied_updates": r.unapplied_updates,
        }));
    }
    match a.format {
        OutputFormat::Table => outln!("{}", t.to_terminal()),
        OutputFormat::Csv => out!("{}", t.to_csv()),
        OutputFormat::Json => out!("{}", render_json(&serde_json::json!({ "rows": rows }))),
    }
    Ok(())
}
