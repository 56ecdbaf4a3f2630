//! What one grid point computes, per experiment kind.
//!
//! Every kind starts from the same network point ([`NetworkPoint`]): the
//! underlay with the job's access and core capacities, path model, workload
//! and STAR centre. Then
//! * `compare`: the overlay's max-plus cycle time ([`crate::timing`]); for
//!   MATCHA kinds, the paper's round estimate (\[Marfoq20\] App. H.6: total duration of
//!   1000 seeded rounds / 999, as published);
//! * `simulate`: the same cycle time plus an event replay of `rounds` rounds
//!   ([`crate::replay`]) with the job's network model and stragglers; MATCHA
//!   kinds replay their seeded per-round schedule.

use std::path::Path;

use crate::evaluate::{EvaluatedOverlay, OverlayTiming};
use crate::graph::failures::FailureSpec;
use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::network::NetworkKind;
use crate::overlay::build::{BuildOptions, CenterPolicy, OverlayKind};
use crate::replay::{ReplayOptions, Straggler};
use crate::report::breakdown::{breakdown_summaries, BreakdownRun, BreakdownSummary};
use crate::report::replay::round_stats;

use super::grid::Job;
use super::point::{delay_point, fail, labelled_axis_cells, parse_axis};
use super::row::{Cell, ResultRow};
use super::spec::ExperimentKind;
use super::ExperimentError;

/// The network of one grid point.
struct NetworkPoint {
    kind: OverlayKind,
    /// The overlay's name as the experiment file gives it (`file:PATH`
    /// relative to the file), for the rows.
    name: String,
    model: DelayModel,
    center: usize,
}

fn network_point(
    job: &Job,
    underlay: &Underlay,
    base_dir: &Path,
) -> Result<NetworkPoint, ExperimentError> {
    let kind = job
        .get("overlay")
        .parse::<OverlayKind>()
        .map_err(|e| fail(job, format!("{e}")))?;
    let (model, center) = delay_point(job, underlay, base_dir)?;
    Ok(NetworkPoint {
        name: kind.to_string(),
        // `file:PATH` overlays are relative to the experiment file.
        kind: kind.relative_to(base_dir),
        model,
        center,
    })
}

/// The axis columns every kind's row starts with (`center` resolved to the
/// centre silo's label).
fn axis_cells(job: &Job, underlay: &Underlay, p: &NetworkPoint, extra: &[&str]) -> ResultRow {
    labelled_axis_cells(job, underlay, &p.model, &p.name, p.center, extra)
}

/// Computes one grid point of an experiment of `kind`. Files named by the
/// job (`access_csv`) are relative to `base_dir`, the experiment file's
/// directory. `run_dir` is the job's own directory (training runs keep their per-round `metrics.csv`
/// and checkpoints there, so an interrupted job resumes).
pub fn run_job(
    kind: ExperimentKind,
    job: &Job,
    underlay: &Underlay,
    base_dir: &Path,
    run_dir: &Path,
) -> Result<ResultRow, ExperimentError> {
    match kind {
        ExperimentKind::Compare => compare_job(job, underlay, base_dir),
        ExperimentKind::Simulate => simulate_job(job, underlay, base_dir),
        ExperimentKind::Train => train_job(job, underlay, base_dir, run_dir),
        ExperimentKind::Program => super::program_job::program_job(job, underlay, base_dir),
    }
}

/// The job's random failures (`failures` axis, when the file gives it).
fn job_failures(job: &Job) -> Result<Option<FailureSpec>, ExperimentError> {
    if !job.has("failures") {
        return Ok(None);
    }
    FailureSpec::parse_optional(job.get("failures"))
        .map_err(|e| fail(job, format!("failures `{}`: {e}", job.get("failures"))))
}

/// `axes` plus `failures` when the experiment has that axis.
fn with_failures<'a>(job: &Job, axes: &[&'a str]) -> Vec<&'a str> {
    let mut v = axes.to_vec();
    if job.has("failures") {
        v.push("failures");
    }
    v
}

/// The overlays' build options of `job` at `p`: the build knobs
/// ([`BuildOptions::from_knobs`], the CLI's parser) with `seed`, and the
/// STAR centre resolved at the point.
fn build_options(
    job: &Job,
    underlay: &Underlay,
    p: &NetworkPoint,
    seed: u64,
) -> Result<BuildOptions, ExperimentError> {
    let seed = seed.to_string();
    let knob = |key: &str| match key {
        "seed" => Some(seed.as_str()),
        "center" => None,
        other => job.has(other).then(|| job.get(other)),
    };
    let mut options = BuildOptions::from_knobs(knob, underlay, p.model.connectivity.placement())
        .map_err(|e| fail(job, e.to_string()))?;
    options.center = CenterPolicy::Silo(p.center);
    Ok(options)
}

/// `compare`: the overlay's max-plus cycle time; for schedules the paper's
/// round estimate in the published convention (\[Marfoq20\] App. H.6: total
/// duration of the sampled rounds over `rounds - 1`).
fn compare_job(
    job: &Job,
    underlay: &Underlay,
    base_dir: &Path,
) -> Result<ResultRow, ExperimentError> {
    let p = network_point(job, underlay, base_dir)?;
    let f = |m: String| fail(job, m);
    if p.model.dynamics.is_some() {
        return Err(f(
            "kind = \"compare\" computes the max-plus cycle time, a closed form that \
             cannot follow a trace: use kind = \"simulate\" (event replay with traces)"
                .into(),
        ));
    }
    let options = build_options(job, underlay, &p, 0)?;
    let overlay = EvaluatedOverlay::build(p.kind, underlay, &p.model, &options)
        .map_err(|e| f(e.to_string()))?;
    let t = overlay.cycle_time(&p.model).map_err(|e| f(e.to_string()))?;
    let mut row = axis_cells(job, underlay, &p, &[]);
    row.push("silos", p.model.silo_count());
    push_degrees(&mut row, &overlay);
    row.push("cycle_time_ms", t.published_ms())
        .push("rounds_per_s", 1000.0 / t.published_ms());
    matcha_cells(&mut row, &overlay, &options, &t);
    Ok(row)
}

/// `arcs` and `max_degree` of a static overlay; empty cells for schedules
/// (no fixed arcs).
fn push_degrees(row: &mut ResultRow, overlay: &EvaluatedOverlay) {
    let d = overlay.degree_stats();
    if d.per_round {
        row.push("arcs", "").push("max_degree", "");
    } else {
        row.push("arcs", d.arcs).push("max_degree", d.max_degree);
    }
}

/// The MATCHA columns of a compare row (empty for static overlays): base
/// graph, budget `Cb`, the mixing matrix's `rho` (\[Wang19\]: per-round
/// contraction of `E[W^T W]`, which sets how many rounds training needs)
/// and the exact max-plus growth rate of the same seeded rounds (ms per
/// round, at most the round estimate), so that a budget sweep (paper
/// \[Marfoq20\] Table 10) can be plotted against `matcha_budget` by `matcha_base`.
fn matcha_cells(
    row: &mut ResultRow,
    overlay: &EvaluatedOverlay,
    options: &BuildOptions,
    t: &OverlayTiming,
) {
    matcha_variant_cells(row, overlay.kind(), options.matcha.budget);
    match (overlay.mixing(), &t.schedule) {
        (Some(m), Some(s)) => row
            .push("matcha_rho", m.rho)
            .push("matcha_maxplus_ms", s.maxplus_ms),
        _ => row.push("matcha_rho", "").push("matcha_maxplus_ms", ""),
    };
}

/// `matcha_base` and `matcha_budget` (the variant's budget, else
/// `default_budget`) of a MATCHA row; empty for other kinds.
fn matcha_variant_cells(row: &mut ResultRow, kind: OverlayKind, default_budget: f64) {
    match kind.matcha_variant() {
        Some(m) => row
            .push("matcha_base", m.base.name())
            .push("matcha_budget", m.budget_or(default_budget)),
        None => row.push("matcha_base", "").push("matcha_budget", ""),
    };
}

/// `simulate`: an event replay next to the max-plus cycle time.
fn simulate_job(
    job: &Job,
    underlay: &Underlay,
    base_dir: &Path,
) -> Result<ResultRow, ExperimentError> {
    let p = network_point(job, underlay, base_dir)?;
    let f = |m: String| fail(job, m);
    let network: NetworkKind = job.get("network").parse().map_err(|e| f(format!("{e}")))?;
    let rounds: u64 = parse_axis(job, "rounds", "a whole number >= 1")?;
    crate::replay::check_rounds(rounds, p.model.silo_count()).map_err(f)?;
    let straggler: Straggler = job.get("straggler").parse().map_err(f)?;
    let seed: u64 = parse_axis(job, "seed", "a whole number")?;
    let options = build_options(job, underlay, &p, seed)?;
    let breakdown = job.has("breakdown") && job.get("breakdown").trim() == "true";
    let ropts = ReplayOptions {
        rounds,
        straggler,
        seed,
        breakdown,
        ..ReplayOptions::default()
    };
    let mut net = network.build(&p.model);
    let overlay = EvaluatedOverlay::build(p.kind, underlay, &p.model, &options)
        .map_err(|e| f(e.to_string()))?;
    // MATCHA has no exact cycle time; periodic schedules do (their rate);
    // with a trace the max-plus cycle time no longer applies.
    let tau = if overlay.has_exact_cycle_time() && p.model.dynamics.is_none() {
        Some(
            overlay
                .cycle_time(&p.model)
                .map_err(|e| f(e.to_string()))?
                .cycle_time_ms,
        )
    } else {
        None
    };
    let failures = job_failures(job)?;
    let result = overlay
        .replay(&p.model, net.as_mut(), &ropts, failures, &mut |_| {})
        .map_err(|e| f(e.to_string()))?;
    let stats = round_stats(&result);
    let mut axes = with_failures(job, &["network", "rounds", "straggler", "seed"]);
    if job.has("breakdown") {
        axes.push("breakdown");
    }
    let mut row = axis_cells(job, underlay, &p, &axes);
    row.push("silos", p.model.silo_count());
    push_degrees(&mut row, &overlay);
    row.push("cycle_time_ms", tau.map_or(Cell::from(""), Into::into))
        .push("mean_round_ms", stats.mean_ms)
        .push("steady_round_ms", stats.steady_ms)
        .push("median_round_ms", stats.median_ms)
        .push("p95_round_ms", stats.p95_ms)
        .push("max_round_ms", stats.max_ms)
        .push("makespan_ms", result.makespan_ms())
        .push(
            "steady_over_cycle_time",
            tau.map_or(Cell::from(""), |t| (stats.steady_ms / t).into()),
        )
        .push("events", result.events)
        .push("transfers", result.transfers)
        .push("max_active_flows", result.network_stats.max_active_flows);
    if job.has("trace") {
        // Which model ran: the network model's name (`flow+traces` with a
        // trace, `flow` in rows without one).
        row.push("network_model", result.network.clone());
    }
    if job.has("availability") {
        // What churn did (empty cells under `wait`).
        let c = result.churn.as_ref();
        let cell =
            |f: fn(&crate::replay::ChurnSummary) -> u64| c.map_or(Cell::from(""), |c| f(c).into());
        row.push("silo_rounds_absent", cell(|c| c.silo_rounds_absent))
            .push("absences", cell(|c| c.stats.absences))
            .push("rejoins", cell(|c| c.stats.rejoins))
            .push("models_missed", cell(|c| c.stats.models_missed));
    }
    if job.has("breakdown") {
        let runs = BreakdownRun::of_replays(std::slice::from_ref(&result));
        push_breakdown(&mut row, runs.first().copied());
    }
    Ok(row)
}

/// The time-breakdown columns of a simulate or train row (empty cells for
/// a row whose `breakdown` is false, or a run that records none).
fn push_breakdown(row: &mut ResultRow, run: Option<BreakdownRun>) {
    let s = breakdown_summaries(run.as_slice(), &[]);
    let cell = |f: fn(&BreakdownSummary) -> f64| s.first().map_or(Cell::from(""), |b| f(b).into());
    row.push("compute_ms_mean", cell(|b| b.compute_ms))
        .push("transfer_ms_mean", cell(|b| b.transfer_ms))
        .push("wait_ms_mean", cell(|b| b.wait_ms))
        .push("critical_compute_share", cell(|b| b.critical_compute_share))
        .push(
            "critical_transfer_share",
            cell(|b| b.critical_transfer_share),
        );
}

/// `train`: DPASGD on the overlay, every round timed by the event engine
/// ([`crate::train::session`]); the row summarises the run against the
/// job's target, the per-round records are `RUN_DIR/metrics.csv`.
#[cfg(feature = "train")]
fn train_job(
    job: &Job,
    underlay: &Underlay,
    base_dir: &Path,
    run_dir: &Path,
) -> Result<ResultRow, ExperimentError> {
    use crate::mixing::consensus::ConsensusRule;
    use crate::overlay::dcliques::placement::DCliquesBuild;
    use crate::train::checkpoint::RunOptions;
    use crate::train::model::ModelKind;
    use crate::train::optim::LrSchedule;
    use crate::train::report::summarize;
    use crate::train::session::{
        load_dataset, parse_optimizer, parse_optional_target, with_data_labels, Session,
    };
    use crate::train::trainer::{ExecMode, TrainConfig};

    let p = network_point(job, underlay, base_dir)?;
    let f = |m: String| fail(job, m);
    let network: NetworkKind = job.get("network").parse().map_err(|e| f(format!("{e}")))?;
    let rounds: u64 = parse_axis(job, "rounds", "a whole number >= 1")?;
    let seed: u64 = parse_axis(job, "seed", "a whole number")?;
    let lr: f64 = parse_axis(job, "lr", "a number")?;
    let batch_size: usize = parse_axis(job, "batch_size", "a whole number >= 1")?;
    let eval_every: u64 = parse_axis(job, "eval_every", "a whole number >= 1")?;
    if rounds == 0 || batch_size == 0 || eval_every == 0 || !(lr.is_finite() && lr > 0.0) {
        return Err(f(
            "rounds, batch_size and eval_every must be >= 1 and lr a number > 0".into(),
        ));
    }
    let target = parse_optional_target(job.get("target")).map_err(|e| f(e.to_string()))?;
    let positions: Option<Vec<(f64, f64)>> = underlay.routers.iter().map(|r| r.lat_lon).collect();
    let data = load_dataset(
        job.get("dataset"),
        job.get("partition"),
        p.model.silo_count(),
        positions.as_deref(),
        seed,
        p.model.data_sizes.as_ref(),
    )
    .map_err(|e| f(e.to_string()))?;
    let config = TrainConfig {
        model: ModelKind::parse(job.get("model")).ok_or_else(|| {
            f(format!(
                "model `{}`: expected logreg, mlp[:H], lenet or gn-lenet",
                job.get("model")
            ))
        })?,
        optimizer: parse_optimizer(job.get("optimizer")).map_err(|e| f(e.to_string()))?,
        lr,
        lr_schedule: LrSchedule::Constant,
        local_steps: p.model.workload.local_steps,
        batch_size,
        consensus: ConsensusRule::parse(job.get("consensus")).map_err(|e| f(e.to_string()))?,
        eval_samples: 4000,
        seed,
        mode: ExecMode::Batched,
    };
    let mut options = build_options(job, underlay, &p, seed)?;
    options.dcliques = with_data_labels(DCliquesBuild::default(), &data);
    let session = Session {
        underlay,
        model: &p.model,
        options: &options,
        config: &config,
        data: &data,
        partition: job.get("partition"),
        network,
        init: None,
        failures: job_failures(job)?,
    };
    let opts = RunOptions {
        rounds,
        eval_every,
        checkpoint_every: 20,
        dir: Some(run_dir.to_path_buf()),
        stop_after: None,
        stop_at: None,
        stop_behind_ms: None,
    };
    let breakdown = job.has("breakdown") && job.get("breakdown").trim() == "true";
    let protocol = if job.has("protocol") {
        crate::replay::asynchronous::AsyncProtocol::parse_choice(job.get("protocol")).map_err(f)?
    } else {
        None
    };
    let (records, recorded) = match protocol {
        Some(protocol) => {
            if breakdown {
                return Err(f(format!(
                    "breakdown: the time breakdown is for synchronous rounds, not protocol {protocol}"
                )));
            }
            let async_opts = crate::train::asynchronous::AsyncTrainOptions {
                eval_every,
                ..Default::default()
            };
            let trained = session
                .train_async(p.kind, protocol, rounds, &async_opts)
                .map_err(|e| f(e.to_string()))?;
            // The per-round records, as a synchronous run keeps them.
            std::fs::create_dir_all(run_dir)
                .map_err(|e| f(format!("{}: {e}", run_dir.display())))?;
            crate::train::report::write_atomic(
                &run_dir.join("metrics.csv"),
                crate::train::report::render_csv(&trained.records).as_bytes(),
            )
            .map_err(|e| f(e.to_string()))?;
            (trained.records, None)
        }
        None => {
            let run = session
                .train_run(p.kind, &opts, breakdown, |_, _| {})
                .map_err(|e| f(e.to_string()))?;
            (run.records, run.breakdown)
        }
    };
    let name = p.name.clone();
    let s = summarize(&[(name, records)], target, None)
        .pop()
        .ok_or_else(|| f("no rounds were trained".into()))?;
    let mut axes = with_failures(
        job,
        &[
            "network",
            "rounds",
            "seed",
            "dataset",
            "partition",
            "model",
            "optimizer",
            "lr",
            "batch_size",
            "consensus",
            "target",
            "eval_every",
        ],
    );
    for axis in ["breakdown", "protocol"] {
        if job.has(axis) {
            axes.push(axis);
        }
    }
    let mut row = axis_cells(job, underlay, &p, &axes);
    let opt_f = |v: Option<f64>| v.map_or(Cell::from(""), Cell::from);
    row.push("silos", p.model.silo_count());
    if job.has("silos_csv") {
        // The partition used (the file's `data` column when it has one).
        let held: Vec<String> = data.silos.iter().map(|s| s.len().to_string()).collect();
        row.push("data_samples", held.join(" "));
    }
    row.push("ms_per_round", s.ms_per_round)
        .push("final_wall_clock_ms", s.final_wall_clock_ms);
    // Without a target (`none`, the default) there are no target columns.
    if target.is_some() {
        row.push(
            "rounds_to_target",
            s.rounds_to_target.map_or(Cell::from(""), Cell::from),
        )
        .push("time_to_target_ms", opt_f(s.time_to_target_ms));
    }
    row.push("final_train_loss", s.final_train_loss)
        .push("final_test_acc", s.final_test_acc);
    matcha_variant_cells(&mut row, p.kind, options.matcha.budget);
    if job.has("breakdown") {
        let overlay = p.kind.to_string();
        let network = network.to_string();
        let run = recorded.as_ref().map(|b| BreakdownRun {
            overlay: &overlay,
            network: &network,
            breakdown: b,
        });
        push_breakdown(&mut row, run);
    }
    Ok(row)
}

/// `train`: without the `train` feature there is no trainer to run.
#[cfg(not(feature = "train"))]
fn train_job(
    job: &Job,
    _underlay: &Underlay,
    _base_dir: &Path,
    _run_dir: &Path,
) -> Result<ResultRow, ExperimentError> {
    Err(fail(
        job,
        "kind = \"train\" needs fedtopo built with `--features train` (libtorch: scripts/libtorch.sh)"
            .into(),
    ))
}
