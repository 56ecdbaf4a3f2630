//! `kind = "program"`: one round program (a method of \[Lee21\],
//! \[Lee21\] Table 4, named by the `overlay` axis) on the grid point's underlay:
//! grouped on synthetic label-skewed data (`partition`), timed step by step
//! in the event engine (`network`), trained by the reference learner
//! ([`crate::program::learn`]) for `rounds` steps; the row gives the final
//! accuracy and the steps, bytes and wall-clock to the `target` accuracy.
//! The same code path as `fedtopo tornado learn` (reference trainer).

use crate::net::underlay::Underlay;
use crate::network::NetworkKind;
use crate::program::grouping::named_partition;
use crate::program::learn::{Dataset, LearnOptions};
use crate::program::outcome::{reference_records, RunSummary};
use crate::program::sim::StepCosts;
use crate::program::Method;
use crate::units::gigabytes;

use super::grid::Job;
use super::point::{delay_point, fail, labelled_axis_cells, parse_axis};
use super::row::{Cell, ResultRow};
use super::ExperimentError;

/// Runs one `program` grid point.
pub(super) fn program_job(
    job: &Job,
    underlay: &Underlay,
    base_dir: &std::path::Path,
) -> Result<ResultRow, ExperimentError> {
    let f = |m: String| fail(job, m);
    let method: Method = job.get("overlay").parse().map_err(|e| f(format!("{e}")))?;
    let (model, server) = delay_point(job, underlay, base_dir)?;
    let network: NetworkKind = job.get("network").parse().map_err(|e| f(format!("{e}")))?;
    let steps: u64 = parse_axis(job, "rounds", "a whole number of steps >= 1")?;
    let seed: u64 = parse_axis(job, "seed", "a whole number")?;
    let lr: f64 = parse_axis(job, "lr", "a number")?;
    let separation: f64 = parse_axis(job, "separation", "a number")?;
    let batch: usize = parse_axis(job, "batch_size", "a whole number >= 1")?;
    let eval_every: u64 = parse_axis(job, "eval_every", "a whole number >= 1")?;
    if steps == 0 || batch == 0 || eval_every == 0 {
        return Err(f("rounds, batch_size and eval_every must be >= 1".into()));
    }
    if !(lr.is_finite() && lr > 0.0 && separation.is_finite() && separation > 0.0) {
        return Err(f("lr and separation must be numbers > 0".into()));
    }
    let target: f64 = job
        .get("target")
        .strip_prefix("acc:")
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| {
            f(format!(
                "target `{}`: expected acc:X (the reference learner reports test accuracy)",
                job.get("target")
            ))
        })?;
    let n = model.silo_count();
    let labels = named_partition(job.get("partition"), n, seed).map_err(|e| f(e.to_string()))?;
    let options = LearnOptions {
        separation,
        lr,
        batch,
        steps,
        eval_every,
        seed,
        ..LearnOptions::default()
    };
    let data = Dataset::synthetic(&labels, &options);
    let params = method.defaults().with_groups(None, n);
    let spec = params
        .build(&labels, server, seed)
        .map_err(|e| f(format!("building {method}: {e}")))?;
    let program = spec.program(steps);
    let mut net = network.build(&model);
    let costs = StepCosts::timed(&program, &model, net.as_mut(), underlay.links.len())
        .map_err(|e| f(format!("timing {method}: {e}")))?;
    let records = reference_records(&spec, &labels, &data, &options, &costs);
    let s = RunSummary::of(&records, &costs, target);
    let mut row = labelled_axis_cells(
        job,
        underlay,
        &model,
        method.name(),
        server,
        &[
            "network",
            "rounds",
            "seed",
            "partition",
            "separation",
            "lr",
            "batch_size",
            "target",
            "eval_every",
        ],
    );
    let opt = |v: Option<f64>| v.map_or(Cell::from(""), Cell::from);
    row.push("silos", n)
        .push("architecture", params.architecture.name())
        .push("groups", spec.groups.len())
        .push("final_accuracy", s.final_accuracy)
        .push("best_accuracy", s.best_accuracy)
        .push(
            "steps_to_target",
            s.hit.map_or(Cell::from(""), |h| Cell::from(h.step)),
        )
        .push("gb_to_target", opt(s.hit.map(|h| gigabytes(h.bits))))
        .push(
            "time_to_target_ms",
            opt(s.hit.and_then(|h| h.wall_clock_ms)),
        )
        .push("total_gb", gigabytes(s.total_bits))
        .push("total_ms", opt(s.total_ms));
    Ok(row)
}
