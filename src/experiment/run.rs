//! Running the jobs of an experiment, in parallel, resumably.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::net::underlay::Underlay;
use crate::progress::counted::Progress;

use super::grid::{Job, Shard};
use super::jobs::run_job;
use super::spec::ExperimentSpec;
use super::validate::validate_grid;
pub use super::validate::{resolve_underlay, shared_dir};
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
    /// Show progress on stderr: a bar on a terminal, else a line every few
    /// seconds ([`crate::progress::counted`]).
    pub progress: bool,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    /// Jobs in this run's slice.
    pub selected: usize,
    /// Jobs computed now.
    pub computed: usize,
    /// Jobs skipped because a result of this build was already stored.
    pub reused: usize,
    /// Stored results computed by other code (another source fingerprint),
    /// recomputed now.
    pub stale: usize,
    /// What loading the underlays dropped or approximated (components kept
    /// out by `largest_component = true`, estimated positions, default lengths).
    pub notes: Vec<String>,
}

/// Runs the jobs of `spec` selected by `opts.shard`, skipping those already
/// stored unless `opts.force`. Results are stored per job as they finish.
///
/// # Examples
///
/// An experiment file's grid, run and assembled as `fedtopo run` does:
/// two overlays on a built-in underlay, 2 x 2 grid points.
/// ```
/// use fedtopo::experiment::{assemble, expand, run_jobs, ExperimentSpec, RunOptions};
///
/// let spec = ExperimentSpec::parse(
///     r#"
///     name = "ring-vs-star"
///     kind = "compare"
///     [grid]
///     underlay = ["aws-gaia"]
///     overlay = ["star", "ring"]
///     access = ["1G", "10G"]
///     "#,
///     "ring-vs-star.toml",
/// )?;
/// let jobs = expand(&spec.grid);
/// let out = std::env::temp_dir().join(format!("fedtopo-doc-run-{}", std::process::id()));
/// let opts = RunOptions {
///     out: out.clone(),
///     base_dir: ".".into(),
///     threads: Some(1),
///     shard: None,
///     force: false,
///     progress: false,
/// };
/// let summary = run_jobs(&spec, &jobs, &opts)?;
/// assert_eq!((summary.selected, summary.computed), (4, 4));
/// // results.csv and results.md, the rows in grid order.
/// let rows = assemble(&spec, &jobs, &out, ".".as_ref())?;
/// assert_eq!(rows.len(), 4);
/// // `overlay` varies fastest: star then ring at 1 Gbit/s access.
/// assert_eq!(rows[0].column("overlay").as_deref(), Some("star"));
/// assert_eq!(rows[1].column("overlay").as_deref(), Some("ring"));
/// let ms = |i: usize| rows[i].number("cycle_time_ms").unwrap();
/// assert!(ms(1) < ms(0));
/// assert!(out.join("results.csv").is_file());
/// std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run_jobs(
    spec: &ExperimentSpec,
    jobs: &[Job],
    opts: &RunOptions,
) -> Result<RunSummary, ExperimentError> {
    let selected: Vec<&Job> = jobs
        .iter()
        .filter(|j| opts.shard.is_none_or(|s| s.contains(j)))
        .collect();
    // Jobs to run; `restart` ones (stale or forced) drop their working
    // directory first, so a training job does not resume a checkpoint of
    // other code. An interrupted job (no result yet) resumes.
    let mut todo = Vec::new();
    let mut restart = std::collections::BTreeSet::new();
    let mut stale = 0;
    let mut unreadable = Vec::new();
    for job in &selected {
        match store::status(&opts.out, job)? {
            store::Stored::Fresh(_) if !opts.force => {}
            store::Stored::Missing => todo.push(*job),
            store::Stored::Unreadable(why) => {
                unreadable.push(format!(
                    "{}: not a readable result ({why}); recomputed",
                    store::job_path(&opts.out, job).display()
                ));
                restart.insert(job.index);
                todo.push(*job);
            }
            st => {
                stale += usize::from(st == store::Stored::Stale);
                restart.insert(job.index);
                todo.push(*job);
            }
        }
    }
    // Every grid point is checked (and every underlay loaded) before any job runs.
    let underlays = validate_grid(spec, jobs, &opts.base_dir)?;
    // `opts.out` holds this experiment's results, or none yet.
    let changed = store::claim(spec, &opts.out)?;
    let mut notes = load_notes(&underlays);
    notes.extend(changed);
    notes.extend(knob_warnings(jobs));
    notes.extend(unreadable);
    let bar = Progress::new(
        &format!("run {}", spec.name),
        "jobs",
        todo.len() as u64,
        opts.progress,
        "",
    );
    // Jobs differ in cost (a 10-silo underlay next to a 90-silo one): the
    // eta weighs each by its expected cost, not by one job each.
    let weights: Vec<f64> = todo
        .iter()
        .map(|j| job_weight(j, underlays.get(j.get("underlay"))))
        .collect();
    bar.set_work_total(weights.iter().sum());
    let failed = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .map_err(|e| ExperimentError::Invalid(format!("cannot start worker threads: {e}")))?;
    let results: Vec<Result<(), ExperimentError>> = pool.install(|| {
        todo.par_iter()
            .zip(&weights)
            .map(|(job, &weight)| {
                if failed.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let dir = store::run_dir(&opts.out, job);
                let r = store::clear_dir(&dir, restart.contains(&job.index))
                    .and_then(|()| {
                        let underlay = &underlays[job.get("underlay")];
                        run_job(spec.kind, job, underlay, &opts.base_dir, &dir)
                    })
                    .and_then(|row| store::save(&opts.out, job, &row));
                if r.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                bar.inc_work(weight);
                r
            })
            .collect()
    });
    bar.finish();
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    Ok(RunSummary {
        selected: selected.len(),
        computed: todo.len(),
        reused: selected.len() - todo.len(),
        stale,
        notes,
    })
}

/// The expected cost of `job`, the progress eta's weight: silos² (routes,
/// cycle times and overlay builds grow at least as the silo pairs) times
/// the job's `rounds` when it replays or trains rounds. A rough model: it
/// only has to rank a 90-silo job above a 10-silo one.
fn job_weight(job: &Job, underlay: Option<&Underlay>) -> f64 {
    let routers = underlay.map_or(1, Underlay::node_count);
    let silos = crate::net::scenario::NetworkSpec::from_knobs(|k| Some(job.get(k)))
        .map_or(routers, |s| s.placement.silo_count(routers));
    let rounds: f64 = job.get("rounds").trim().parse().unwrap_or(1.0);
    (silos as f64).powi(2) * rounds.max(1.0)
}

/// Grid values that parse but are likely mistakes (a bandwidth written as
/// a bare number below 1 kbit/s, legacy `failures` spellings), each once.
fn knob_warnings(jobs: &[Job]) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for job in jobs {
        for (key, w) in
            crate::net::scenario::NetworkSpec::knob_warnings(|k| job.has(k).then(|| job.get(k)))
        {
            out.insert(format!("{key} = {w}"));
        }
        if let Ok(Some(f)) =
            crate::graph::failures::FailureSpec::parse_optional(job.get("failures"))
        {
            if let Some(w) = f.legacy_warning() {
                out.insert(format!("failures = {w}"));
            }
        }
    }
    out.into_iter().collect()
}

/// What loading the underlays dropped or approximated, one line each.
fn load_notes(underlays: &BTreeMap<String, Underlay>) -> Vec<String> {
    let mut notes = Vec::new();
    for u in underlays.values() {
        let r = &u.report;
        if !r.dropped_components.is_empty() {
            notes.push(format!(
                "{}: kept the largest connected component ({} routers); dropped components of {:?} routers",
                u.name,
                u.node_count(),
                r.dropped_components
            ));
        }
        for e in &r.estimated_positions {
            let used: Vec<String> = e.neighbours.iter().map(ToString::to_string).collect();
            notes.push(format!(
                "{}: estimated the position of {} (no Latitude/Longitude) as ({:.4}, {:.4}), the mean of: {}",
                u.name,
                e.node,
                e.lat_lon.0,
                e.lat_lon.1,
                used.join(", ")
            ));
        }
        if r.lengths_defaulted > 0 {
            notes.push(format!(
                "{}: {} link length(s) set to default_length_km (no `distance`, no position)",
                u.name, r.lengths_defaulted
            ));
        }
        if !r.dropped_nodes.is_empty() && r.dropped_components.is_empty() {
            notes.push(format!(
                "{}: dropped {} node(s): {}",
                u.name,
                r.dropped_nodes.len(),
                r.dropped_nodes.join("; ")
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::expand;
    use crate::net::scenario::load_underlay;
    use crate::net::underlay::LoadOptions;

    /// The eta weighs a job by silos² x rounds: on a 11-router underlay a
    /// job of 4 silos per router (44 silos) is 16 times one of 11 silos,
    /// and 100 rounds 100 times 1.
    #[test]
    fn jobs_weigh_by_silos_squared_and_rounds() {
        let spec = ExperimentSpec::parse(
            "name='w'\nkind='simulate'\n[grid]\nunderlay=['aws-gaia']\noverlay=['ring']\n\
             silos_per_router=[1, 4]\nrounds=[1, 100]\n",
            "w.toml",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let u = load_underlay(Some("aws-gaia"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(u.node_count(), 11);
        let jobs = expand(&spec.grid);
        let weight = |per_router: &str, rounds: &str| {
            let j = jobs
                .iter()
                .find(|j| j.get("silos_per_router") == per_router && j.get("rounds") == rounds)
                .unwrap_or_else(|| panic!("no job {per_router} {rounds}"));
            job_weight(j, Some(&u))
        };
        assert_eq!(weight("1", "1"), 121.0);
        assert_eq!(weight("4", "1"), 16.0 * 121.0);
        assert_eq!(weight("4", "100"), 1600.0 * 121.0);
    }
}
