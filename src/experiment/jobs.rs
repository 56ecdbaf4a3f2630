//! What one grid point computes, per experiment kind.
//!
//! Every kind starts from the same network point ([`NetworkPoint`]): the
//! underlay with the job's access and core capacities, path model, workload
//! and STAR centre. Then
//! * `compare`: the overlay's max-plus cycle time ([`crate::timing`]); for
//!   MATCHA kinds, the paper's round estimate (App. H.6: total duration of
//!   1000 seeded rounds / 999, as published);
//! * `simulate`: the same cycle time plus an event replay of `rounds` rounds
//!   ([`crate::replay`]) with the job's network model and stragglers; MATCHA
//!   kinds replay their seeded per-round schedule.

use crate::connectivity::{ConnectivityOptions, PathModel};
use crate::delay::DelayModel;
use crate::network::NetworkKind;
use crate::overlay::build::{
    build_overlay, build_schedule, BuildOptions, CenterPolicy, OverlayKind,
};
use crate::overlay::matcha::{round_estimate, MatchaOptions};
use crate::replay::{replay, ReplayOptions, Straggler};
use crate::report::replay::round_stats;
use crate::scenario::NetworkSpec;
use crate::timing::cycle_time;
use crate::underlay::Underlay;
use crate::units::parse_bandwidth;
use crate::workload::Workload;

use super::assemble::{Cell, ResultRow};
use super::grid::Job;
use super::spec::ExperimentKind;
use super::ExperimentError;

/// The network of one grid point.
struct NetworkPoint {
    kind: OverlayKind,
    model: DelayModel,
    center: usize,
}

fn fail(job: &Job, message: String) -> ExperimentError {
    ExperimentError::Job {
        index: job.index,
        key: job.key(),
        message,
    }
}

fn network_point(job: &Job, underlay: &Underlay) -> Result<NetworkPoint, ExperimentError> {
    let fail = |m: String| fail(job, m);
    let kind: OverlayKind = job
        .get("overlay")
        .parse()
        .map_err(|e| fail(format!("{e}")))?;
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
    Ok(NetworkPoint {
        kind,
        model,
        center,
    })
}

/// The axis columns every kind's row starts with (`center` resolved to the
/// centre silo's label).
fn axis_cells(job: &Job, underlay: &Underlay, p: &NetworkPoint, extra: &[&str]) -> ResultRow {
    let mut row = ResultRow::default();
    row.push("underlay", underlay.name.as_str())
        .push("overlay", p.kind.to_string());
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
    row.push("center", underlay.routers[p.center].label.as_str());
    for a in extra {
        row.push(a, job.get(a));
    }
    row
}

/// Computes one grid point of an experiment of `kind`.
pub fn run_job(
    kind: ExperimentKind,
    job: &Job,
    underlay: &Underlay,
) -> Result<ResultRow, ExperimentError> {
    match kind {
        ExperimentKind::Compare => compare_job(job, underlay),
        ExperimentKind::Simulate => simulate_job(job, underlay),
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
    let schedule =
        build_schedule(p.kind, underlay, &options).map_err(|e| fail(job, e.to_string()))?;
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
        return Ok(row);
    }
    let overlay = build_overlay(p.kind, underlay, &p.model, &options)
        .map_err(|e| fail(job, e.to_string()))?;
    let t = cycle_time(&overlay, &p.model).map_err(|e| fail(job, e.to_string()))?;
    let mut row = axis_cells(job, underlay, &p, &[]);
    row.push("silos", underlay.node_count())
        .push("arcs", overlay.arc_count())
        .push("max_degree", overlay.max_degree())
        .push("cycle_time_ms", t.cycle_time_ms)
        .push("rounds_per_s", t.rounds_per_second());
    Ok(row)
}

/// `simulate`: an event replay next to the max-plus cycle time.
fn simulate_job(job: &Job, underlay: &Underlay) -> Result<ResultRow, ExperimentError> {
    let p = network_point(job, underlay)?;
    let f = |m: String| fail(job, m);
    let network: NetworkKind = job.get("network").parse().map_err(|e| f(format!("{e}")))?;
    let rounds: u64 = job
        .get("rounds")
        .parse()
        .ok()
        .filter(|&r| r > 0)
        .ok_or_else(|| {
            f(format!(
                "rounds `{}`: expected a whole number >= 1",
                job.get("rounds")
            ))
        })?;
    let straggler: Straggler = job.get("straggler").parse().map_err(f)?;
    let seed: u64 = job
        .get("seed")
        .parse()
        .map_err(|_| f(format!("seed `{}` is not a whole number", job.get("seed"))))?;
    let options = build_options(p.center, seed);
    let ropts = ReplayOptions {
        rounds,
        straggler,
        seed,
    };
    let mut net = network.build(&p.model);
    // Per-round kinds (MATCHA) have no static cycle time and no fixed arcs.
    let schedule = build_schedule(p.kind, underlay, &options).map_err(|e| f(e.to_string()))?;
    let (result, arcs, max_degree, tau) = match schedule {
        Some(s) => {
            let r = replay(&s, &p.model, net.as_mut(), &ropts).map_err(|e| f(e.to_string()))?;
            (r, None, None, None)
        }
        None => {
            let o = build_overlay(p.kind, underlay, &p.model, &options)
                .map_err(|e| f(e.to_string()))?;
            let tau = cycle_time(&o, &p.model)
                .map_err(|e| f(e.to_string()))?
                .cycle_time_ms;
            let r = replay(&o, &p.model, net.as_mut(), &ropts).map_err(|e| f(e.to_string()))?;
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

