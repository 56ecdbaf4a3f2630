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

use crate::connectivity::{ConnectivityOptions, PathModel};
use crate::delay::DelayModel;
use crate::network::NetworkKind;
use crate::overlay::build::{
    build_overlay, build_schedule, overlay_cycle_time, BuildOptions, CenterPolicy, OverlayKind,
};
use crate::overlay::dcliques::timing::replay_clique_averaging;
use crate::overlay::matcha::{cycle::maxplus_rate, round_estimate, MatchaOptions, MatchaSchedule};
use crate::replay::{replay, ReplayOptions, Straggler};
use crate::report::replay::round_stats;
use crate::scenario::NetworkSpec;
use crate::underlay::Underlay;
use crate::units::parse_bandwidth;
use crate::workload::Workload;

use super::grid::Job;
use super::row::{Cell, ResultRow};
use super::spec::ExperimentKind;
use super::ExperimentError;

/// The network of one grid point.
struct NetworkPoint {
    kind: OverlayKind,
    model: DelayModel,
    center: usize,
}

pub(super) fn fail(job: &Job, message: String) -> ExperimentError {
    ExperimentError::Job {
        index: job.index,
        key: job.key(),
        message,
    }
}

fn network_point(job: &Job, underlay: &Underlay) -> Result<NetworkPoint, ExperimentError> {
    let kind: OverlayKind = job
        .get("overlay")
        .parse()
        .map_err(|e| fail(job, format!("{e}")))?;
    let (model, center) = delay_point(job, underlay)?;
    Ok(NetworkPoint {
        kind,
        model,
        center,
    })
}

/// The delay model (\[Marfoq20\] eq. 3) of a grid point: the underlay with the job's
/// access and core capacities, path model and workload, and the centre
/// silo (the STAR centre, or a program's server) with its own access.
pub(super) fn delay_point(
    job: &Job,
    underlay: &Underlay,
) -> Result<(DelayModel, usize), ExperimentError> {
    let fail = |m: String| fail(job, m);
    let access = parse_bandwidth(job.get("access")).map_err(|e| fail(e.to_string()))?;
    let core = match job.get("core_capacity") {
        "file" => None,
        c => Some(parse_bandwidth(c).map_err(|e| fail(e.to_string()))?),
    };
    let path_model = match job.get("connectivity") {
        "paper" => PathModel::Paper,
        "bottleneck" => PathModel::Bottleneck,
        other => {
            return Err(fail(format!(
                "connectivity `{other}`: expected paper or bottleneck"
            )))
        }
    };
    let steps: u32 = job.get("local_steps").parse().map_err(|_| {
        fail(format!(
            "local_steps `{}` is not a whole number",
            job.get("local_steps")
        ))
    })?;
    let workload = Workload::preset(job.get("workload"), steps).ok_or_else(|| {
        fail(format!(
            "workload `{}`: expected shakespeare, femnist, sent140 or inaturalist",
            job.get("workload")
        ))
    })?;
    let spec = NetworkSpec {
        connectivity: ConnectivityOptions {
            model: path_model,
            core_capacity_bps: core,
            ..ConnectivityOptions::default()
        },
        access_bps: access,
        workload,
    };
    let mut model = spec.delay_model(underlay);
    let policy = CenterPolicy::parse(job.get("center"), underlay).map_err(fail)?;
    let center = policy.resolve(underlay, &model);
    if job.get("center_access") != "same" {
        let c = parse_bandwidth(job.get("center_access")).map_err(|e| fail(e.to_string()))?;
        model.access.set(center, c, c);
    }
    Ok((model, center))
}

/// The axis columns every kind's row starts with (`center` resolved to the
/// centre silo's label).
fn axis_cells(job: &Job, underlay: &Underlay, p: &NetworkPoint, extra: &[&str]) -> ResultRow {
    labelled_axis_cells(job, underlay, &p.kind.to_string(), p.center, extra)
}

/// [`axis_cells`] with the `overlay` column's text and the centre given.
pub(super) fn labelled_axis_cells(
    job: &Job,
    underlay: &Underlay,
    overlay: &str,
    center: usize,
    extra: &[&str],
) -> ResultRow {
    let mut row = ResultRow::default();
    row.push("underlay", underlay.name.as_str())
        .push("overlay", overlay);
    for a in [
        "access",
        "center_access",
        "local_steps",
        "workload",
        "core_capacity",
        "connectivity",
    ] {
        row.push(a, job.get(a));
    }
    row.push("center", underlay.routers[center].label.as_str());
    for a in extra {
        row.push(a, job.get(a));
    }
    row
}

/// Computes one grid point of an experiment of `kind`. `run_dir` is the
/// job's own directory (training runs keep their per-round `metrics.csv`
/// and checkpoints there, so an interrupted job resumes).
pub fn run_job(
    kind: ExperimentKind,
    job: &Job,
    underlay: &Underlay,
    run_dir: &Path,
) -> Result<ResultRow, ExperimentError> {
    match kind {
        ExperimentKind::Compare => compare_job(job, underlay),
        ExperimentKind::Simulate => simulate_job(job, underlay),
        ExperimentKind::Train => train_job(job, underlay, run_dir),
        ExperimentKind::Program => super::program_job::program_job(job, underlay),
    }
}

fn build_options(center: usize, seed: u64) -> BuildOptions {
    BuildOptions {
        center: CenterPolicy::Silo(center),
        seed,
        matcha: MatchaOptions {
            seed,
            ..MatchaOptions::default()
        },
        ..BuildOptions::default()
    }
}

/// `compare`: the overlay's max-plus cycle time.
fn compare_job(job: &Job, underlay: &Underlay) -> Result<ResultRow, ExperimentError> {
    let p = network_point(job, underlay)?;
    let options = build_options(p.center, 0);
    let schedule = build_schedule(p.kind, underlay, &p.model, &options)
        .map_err(|e| fail(job, e.to_string()))?;
    if let Some(s) = schedule {
        // MATCHA: the paper's round estimate (App. H.6, published convention).
        let est = round_estimate(&s, &p.model, options.matcha.rounds)
            .map_err(|e| fail(job, e.to_string()))?;
        let mut row = axis_cells(job, underlay, &p, &[]);
        row.push("silos", underlay.node_count())
            .push("arcs", "")
            .push("max_degree", "")
            .push("cycle_time_ms", est.published_ms)
            .push("rounds_per_s", 1000.0 / est.published_ms);
        let maxplus = maxplus_rate(&s, &p.model, options.matcha.rounds)
            .map_err(|e| fail(job, e.to_string()))?;
        matcha_cells(&mut row, p.kind, &options, Some((&s, maxplus)));
        return Ok(row);
    }
    let overlay = build_overlay(p.kind, underlay, &p.model, &options)
        .map_err(|e| fail(job, e.to_string()))?;
    let t = overlay_cycle_time(p.kind, &overlay, &p.model, &options)
        .map_err(|e| fail(job, e.to_string()))?;
    let mut row = axis_cells(job, underlay, &p, &[]);
    row.push("silos", underlay.node_count())
        .push("arcs", overlay.arc_count())
        .push("max_degree", overlay.max_degree())
        .push("cycle_time_ms", t.cycle_time_ms)
        .push("rounds_per_s", t.rounds_per_second());
    matcha_cells(&mut row, p.kind, &options, None);
    Ok(row)
}

/// The MATCHA columns of a compare row (empty for static overlays): base
/// graph, budget `Cb`, the mixing matrix's `rho` (\[Wang19\]: per-round
/// contraction of `E[W^T W]`, which sets how many rounds training needs)
/// and the exact max-plus growth rate of the same seeded rounds (ms per
/// round, at most the round estimate), so that a budget sweep (paper
/// \[Marfoq20\] Table 10) can be plotted against `matcha_budget` by `matcha_base`.
fn matcha_cells(
    row: &mut ResultRow,
    kind: OverlayKind,
    options: &BuildOptions,
    s: Option<(&MatchaSchedule, f64)>,
) {
    matcha_variant_cells(row, kind, options.matcha.budget);
    match s {
        Some((s, maxplus_ms)) => row
            .push("matcha_rho", s.design().mixing.rho)
            .push("matcha_maxplus_ms", maxplus_ms),
        None => row.push("matcha_rho", "").push("matcha_maxplus_ms", ""),
    };
}

/// `matcha_base` and `matcha_budget` (the variant's budget, else
/// `default_budget`) of a MATCHA row; empty for static overlays.
fn matcha_variant_cells(row: &mut ResultRow, kind: OverlayKind, default_budget: f64) {
    match kind {
        OverlayKind::Matcha(m) => row
            .push("matcha_base", m.base.name())
            .push("matcha_budget", m.budget_or(default_budget)),
        _ => row.push("matcha_base", "").push("matcha_budget", ""),
    };
}

/// `simulate`: an event replay next to the max-plus cycle time.
fn simulate_job(job: &Job, underlay: &Underlay) -> Result<ResultRow, ExperimentError> {
    let p = network_point(job, underlay)?;
    let f = |m: String| fail(job, m);
    let network: NetworkKind = job.get("network").parse().map_err(|e| f(format!("{e}")))?;
    let rounds: u64 = parse_axis(job, "rounds", "a whole number >= 1")?;
    if rounds == 0 {
        return Err(f("rounds must be at least 1".into()));
    }
    let straggler: Straggler = job.get("straggler").parse().map_err(f)?;
    let seed: u64 = parse_axis(job, "seed", "a whole number")?;
    let options = build_options(p.center, seed);
    let ropts = ReplayOptions {
        rounds,
        straggler,
        seed,
    };
    let mut net = network.build(&p.model);
    // Per-round kinds (MATCHA) have no static cycle time and no fixed arcs.
    let schedule =
        build_schedule(p.kind, underlay, &p.model, &options).map_err(|e| f(e.to_string()))?;
    let (result, arcs, max_degree, tau) = match schedule {
        Some(s) => {
            let r = replay(&s, &p.model, net.as_mut(), &ropts).map_err(|e| f(e.to_string()))?;
            (r, None, None, None)
        }
        None => {
            let o = build_overlay(p.kind, underlay, &p.model, &options)
                .map_err(|e| f(e.to_string()))?;
            let tau = overlay_cycle_time(p.kind, &o, &p.model, &options)
                .map_err(|e| f(e.to_string()))?
                .cycle_time_ms;
            let r = match p.kind {
                // Two phases per round: gradients inside cliques, then models.
                OverlayKind::DCliques(d) if d.clique_averaging => {
                    if straggler != Straggler::None {
                        return Err(f(format!(
                            "{}: stragglers are not supported for Clique Averaging replays",
                            p.kind
                        )));
                    }
                    let t = options
                        .dcliques
                        .topology(d, p.model.silo_count())
                        .map_err(|e| f(e.to_string()))?;
                    replay_clique_averaging(&t, &p.model, net.as_mut(), rounds)
                        .map_err(|e| f(e.to_string()))?
                        .into_replay_result()
                }
                _ => replay(&o, &p.model, net.as_mut(), &ropts).map_err(|e| f(e.to_string()))?,
            };
            (r, Some(o.arc_count()), Some(o.max_degree()), Some(tau))
        }
    };
    let stats = round_stats(&result);
    let mut row = axis_cells(
        job,
        underlay,
        &p,
        &["network", "rounds", "straggler", "seed"],
    );
    // Empty cells where a column does not apply (MATCHA).
    let opt = |v: Option<usize>| v.map_or(Cell::from(""), Into::into);
    row.push("silos", underlay.node_count())
        .push("arcs", opt(arcs))
        .push("max_degree", opt(max_degree))
        .push("cycle_time_ms", tau.map_or(Cell::from(""), Into::into))
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
    Ok(row)
}

pub(super) fn parse_axis<T: std::str::FromStr>(
    job: &Job,
    axis: &str,
    what: &str,
) -> Result<T, ExperimentError> {
    job.get(axis)
        .parse()
        .map_err(|_| fail(job, format!("{axis} `{}`: expected {what}", job.get(axis))))
}

/// `train`: DPASGD on the overlay, every round timed by the event engine
/// ([`crate::train::session`]); the row summarises the run against the
/// job's target, the per-round records are `RUN_DIR/metrics.csv`.
#[cfg(feature = "train")]
fn train_job(job: &Job, underlay: &Underlay, run_dir: &Path) -> Result<ResultRow, ExperimentError> {
    use crate::overlay::dcliques::placement::DCliquesBuild;
    use crate::train::checkpoint::RunOptions;
    use crate::train::consensus::ConsensusRule;
    use crate::train::model::ModelKind;
    use crate::train::optim::LrSchedule;
    use crate::train::report::summarize;
    use crate::train::session::{
        load_dataset, parse_optimizer, parse_target, with_data_labels, Session,
    };
    use crate::train::trainer::{ExecMode, TrainConfig};

    let p = network_point(job, underlay)?;
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
    let target = parse_target(job.get("target")).map_err(|e| f(e.to_string()))?;
    let positions: Option<Vec<(f64, f64)>> = underlay.routers.iter().map(|r| r.lat_lon).collect();
    let data = load_dataset(
        job.get("dataset"),
        job.get("partition"),
        p.model.silo_count(),
        positions.as_deref(),
        seed,
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
    let mut options = build_options(p.center, seed);
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
        failures: None,
    };
    let opts = RunOptions {
        rounds,
        eval_every,
        checkpoint_every: 20,
        dir: Some(run_dir.to_path_buf()),
        stop_after: None,
    };
    let records = session
        .train(p.kind, &opts, |_, _| {})
        .map_err(|e| f(e.to_string()))?;
    let name = p.kind.to_string();
    let s = summarize(&[(name, records)], target, None)
        .pop()
        .ok_or_else(|| f("no rounds were trained".into()))?;
    let mut row = axis_cells(
        job,
        underlay,
        &p,
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
    let opt_f = |v: Option<f64>| v.map_or(Cell::from(""), Cell::from);
    row.push("silos", p.model.silo_count())
        .push("ms_per_round", s.ms_per_round)
        .push("final_wall_clock_ms", s.final_wall_clock_ms)
        .push(
            "rounds_to_target",
            s.rounds_to_target.map_or(Cell::from(""), Cell::from),
        )
        .push("time_to_target_ms", opt_f(s.time_to_target_ms))
        .push("final_train_loss", s.final_train_loss)
        .push("final_test_acc", s.final_test_acc);
    matcha_variant_cells(&mut row, p.kind, MatchaOptions::default().budget);
    Ok(row)
}

/// `train`: without the `train` feature there is no trainer to run.
#[cfg(not(feature = "train"))]
fn train_job(
    job: &Job,
    _underlay: &Underlay,
    _run_dir: &Path,
) -> Result<ResultRow, ExperimentError> {
    Err(fail(
        job,
        "kind = \"train\" needs fedtopo built with `--features train` (libtorch: scripts/libtorch.sh)"
            .into(),
    ))
}
