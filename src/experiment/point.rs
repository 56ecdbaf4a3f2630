//! The network point of a grid job, shared by every kind: the delay model
//! from the job's network knobs, the centre silo, the axis columns a result
//! row starts with, and the error of a job.

use std::path::Path;

use crate::net::delay::DelayModel;
use crate::net::scenario::NetworkSpec;
use crate::net::underlay::Underlay;
use crate::overlay::build::CenterPolicy;
use crate::units::parse_bandwidth;

use super::grid::Job;
use super::row::ResultRow;
use super::spec::OPTIONAL_NETWORK_AXES;
use super::ExperimentError;

/// The error of `job`, with its index and key.
pub(super) fn fail(job: &Job, message: String) -> ExperimentError {
    ExperimentError::Job {
        index: job.index,
        key: job.key(),
        message,
    }
}

/// The delay model (\[Marfoq20\] eq. 3) of a grid point: the network knobs
/// of the job ([`NetworkSpec::from_knobs`], the parser the CLI uses too;
/// files relative to `base_dir`), and the centre silo (the STAR centre, or
/// a program's server) with its own access.
pub(super) fn delay_point(
    job: &Job,
    underlay: &Underlay,
    base_dir: &Path,
) -> Result<(DelayModel, usize), ExperimentError> {
    let fail = |m: String| fail(job, m);
    let mut spec =
        NetworkSpec::from_knobs(|key| Some(job.get(key))).map_err(|e| fail(e.to_string()))?;
    // Files are relative to the experiment file, like underlays.
    spec.access_csv = spec.access_csv.map(|p| base_dir.join(p));
    spec.silos_csv = spec.silos_csv.map(|p| base_dir.join(p));
    spec.links_csv = spec.links_csv.map(|p| base_dir.join(p));
    spec.trace = spec.trace.map(|p| base_dir.join(p));
    let mut model = spec.build(underlay).map_err(|e| fail(e.to_string()))?;
    let policy = CenterPolicy::parse(job.get("center"), underlay).map_err(fail)?;
    let policy = policy
        .at_placement(model.connectivity.placement())
        .map_err(fail)?;
    let center = policy.resolve(underlay, &model);
    if job.get("center_access") != "same" {
        let c = parse_bandwidth(job.get("center_access")).map_err(|e| fail(e.to_string()))?;
        model.access.set(center, c, c);
    }
    Ok((model, center))
}

/// The axis columns every kind's row starts with: `overlay` as given, the
/// network axes, `center` as the label of the router of silo `center`, the
/// optional network axes the experiment has, then `extra` axes.
pub(super) fn labelled_axis_cells(
    job: &Job,
    underlay: &Underlay,
    model: &DelayModel,
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
    let router = model.connectivity.placement().router(center);
    row.push("center", underlay.routers[router].label.as_str());
    for a in OPTIONAL_NETWORK_AXES {
        if job.has(a) {
            row.push(a, job.get(a));
        }
    }
    for a in extra {
        row.push(a, job.get(a));
    }
    row
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
