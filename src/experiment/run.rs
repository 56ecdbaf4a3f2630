//! Running the jobs of an experiment, in parallel, resumably.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::builtin::builtin_underlay;
use crate::connectivity::{ConnectivityOptions, PathModel};
use crate::overlay::build::{build_overlay, BuildOptions, CenterPolicy, OverlayKind};
use crate::scenario::{load_underlay, NetworkSpec};
use crate::timing::cycle_time;
use crate::underlay::{LoadOptions, Underlay};
use crate::units::parse_bandwidth;
use crate::workload::Workload;

use super::assemble::ResultRow;
use super::grid::{Job, Shard};
use super::spec::ExperimentSpec;
use super::{store, ExperimentError};

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Output directory (job results go to `OUT/jobs/`).
    pub out: PathBuf,
    /// Directory that relative underlay paths are resolved against
    /// (the experiment file's directory).
    pub base_dir: PathBuf,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// Run only this slice of the grid.
    pub shard: Option<Shard>,
    /// Recompute jobs that already have a result.
    pub force: bool,
    /// Show a progress bar on stderr (hidden when stderr is not a terminal).
    pub progress: bool,
}

/// What a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSummary {
    /// Jobs in this run's slice.
    pub selected: usize,
    /// Jobs computed now.
    pub computed: usize,
    /// Jobs skipped because a result was already stored.
    pub reused: usize,
}

/// The `shared/` directory: `$FEDTOPO_SHARED`, else `../shared` beside the crate.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("FEDTOPO_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// Resolves an underlay spec of the grid to something [`load_underlay`] takes.
pub fn resolve_underlay(spec: &str, base_dir: &Path) -> String {
    if let Some(rel) = spec.strip_prefix("shared:") {
        return shared_dir()
            .join("underlays")
            .join(rel)
            .display()
            .to_string();
    }
    if spec.starts_with("builtin:") || builtin_underlay(spec).is_some() {
        return spec.to_string();
    }
    let p = Path::new(spec);
    if p.is_absolute() {
        spec.to_string()
    } else {
        base_dir.join(p).display().to_string()
    }
}

/// Runs the jobs of `spec` selected by `opts.shard`, skipping those already
/// stored unless `opts.force`. Results are stored per job as they finish.
pub fn run_jobs(
    spec: &ExperimentSpec,
    jobs: &[Job],
    opts: &RunOptions,
) -> Result<RunSummary, ExperimentError> {
    let selected: Vec<&Job> = jobs
        .iter()
        .filter(|j| opts.shard.is_none_or(|s| s.contains(j)))
        .collect();
    let mut todo = Vec::new();
    for job in &selected {
        if opts.force || store::load(&opts.out, job)?.is_none() {
            todo.push(*job);
        }
    }
    let underlays = load_underlays(&todo, &opts.base_dir)?;
    let bar = progress_bar(todo.len() as u64, opts.progress, &spec.name);
    let failed = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .map_err(|e| ExperimentError::Invalid(format!("cannot start worker threads: {e}")))?;
    let results: Vec<Result<(), ExperimentError>> = pool.install(|| {
        todo.par_iter()
            .map(|job| {
                if failed.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let r = run_job(job, &underlays[&job.underlay])
                    .and_then(|row| store::save(&opts.out, job, &row));
                if r.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                bar.inc(1);
                r
            })
            .collect()
    });
    bar.finish_and_clear();
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    Ok(RunSummary {
        selected: selected.len(),
        computed: todo.len(),
        reused: selected.len() - todo.len(),
    })
}

fn progress_bar(len: u64, show: bool, name: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} jobs, {elapsed} (eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(name.to_string());
    bar
}

fn load_underlays(
    jobs: &[&Job],
    base_dir: &Path,
) -> Result<BTreeMap<String, Underlay>, ExperimentError> {
    let mut map = BTreeMap::new();
    for job in jobs {
        if !map.contains_key(&job.underlay) {
            let resolved = resolve_underlay(&job.underlay, base_dir);
            let u = load_underlay(Some(&resolved), &LoadOptions::default()).map_err(|e| {
                ExperimentError::Invalid(format!("underlay `{}`: {e}", job.underlay))
            })?;
            map.insert(job.underlay.clone(), u);
        }
    }
    Ok(map)
}

/// Computes one grid point: the overlay's cycle time on its network.
pub fn run_job(job: &Job, underlay: &Underlay) -> Result<ResultRow, ExperimentError> {
    let fail = |message: String| ExperimentError::Job {
        index: job.index,
        key: job.key(),
        message,
    };
    let kind: OverlayKind = job.overlay.parse().map_err(|e| fail(format!("{e}")))?;
    let access = parse_bandwidth(&job.access).map_err(|e| fail(e.to_string()))?;
    let core = match job.core_capacity.as_str() {
        "file" => None,
        c => Some(parse_bandwidth(c).map_err(|e| fail(e.to_string()))?),
    };
    let model_kind = match job.connectivity.as_str() {
        "paper" => PathModel::Paper,
        "bottleneck" => PathModel::Bottleneck,
        other => {
            return Err(fail(format!(
                "connectivity `{other}`: expected paper or bottleneck"
            )))
        }
    };
    let workload = Workload::preset(&job.workload, job.local_steps).ok_or_else(|| {
        fail(format!(
            "workload `{}`: expected shakespeare, femnist, sent140 or inaturalist",
            job.workload
        ))
    })?;
    let spec = NetworkSpec {
        connectivity: ConnectivityOptions {
            model: model_kind,
            core_capacity_bps: core,
            ..ConnectivityOptions::default()
        },
        access_bps: access,
        workload,
    };
    let mut model = spec.delay_model(underlay);
    let policy = CenterPolicy::parse(&job.center, underlay).map_err(fail)?;
    let center = policy.resolve(underlay, &model);
    if job.center_access != "same" {
        let c = parse_bandwidth(&job.center_access).map_err(|e| fail(e.to_string()))?;
        model.access.set(center, c, c);
    }
    let options = BuildOptions {
        center: CenterPolicy::Silo(center),
        ..BuildOptions::default()
    };
    let overlay =
        build_overlay(kind, underlay, &model, &options).map_err(|e| fail(e.to_string()))?;
    let t = cycle_time(&overlay, &model).map_err(|e| fail(e.to_string()))?;
    Ok(ResultRow {
        underlay: underlay.name.clone(),
        overlay: kind.to_string(),
        access: job.access.clone(),
        center_access: job.center_access.clone(),
        local_steps: job.local_steps,
        workload: job.workload.clone(),
        core_capacity: job.core_capacity.clone(),
        connectivity: job.connectivity.clone(),
        center: underlay.routers[center].label.clone(),
        silos: underlay.node_count(),
        arcs: overlay.arc_count(),
        max_degree: overlay.max_degree(),
        cycle_time_ms: t.cycle_time_ms,
        rounds_per_s: t.rounds_per_second(),
    })
}
