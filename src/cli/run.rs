//! `fedtopo run` and `fedtopo merge`: experiments as data.

use super::output::out;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use fedtopo::experiment::{
    assemble, check_grid_size, check_source, claim, expand, import_jobs, run_jobs, ExperimentSpec,
    RunOptions, Shard,
};

/// Options of `fedtopo run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Experiment file (TOML), e.g. experiments/fig3-access-sweep/experiment.toml.
    experiment: PathBuf,
    /// Output directory (default: the experiment file's directory).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker threads, 1 to 1024 (default: all cores). Results do not depend on it.
    #[arg(long, value_parser = super::args::threads())]
    threads: Option<usize>,
    /// Run only slice i of n of the grid: the jobs whose index is i modulo n.
    /// Shards are numbered from 0: `--shard 0/4` ... `--shard 3/4` cover
    /// the grid. A Slurm array `--array=0-3` gives i in SLURM_ARRAY_TASK_ID
    /// as is (scripts/slurm-sweep.sh subtracts SLURM_ARRAY_TASK_MIN, so
    /// `--array=1-4` works too). Join the shards with `fedtopo merge`.
    #[arg(long, value_parser = Shard::parse)]
    shard: Option<Shard>,
    /// Recompute jobs that already have a stored result.
    #[arg(long)]
    force: bool,
    /// Run a grid of more than 100,000 points (refused by default: every
    /// point is held in memory, about 1 KB each, and checked before any job
    /// runs).
    #[arg(long)]
    allow_large_grid: bool,
    /// Also write DIR/report.html: one self-contained page (no network
    /// needed to view it) with the results tables and every plot of the
    /// experiment (not with --shard: merge the shards first).
    #[arg(long, value_name = "DIR", conflicts_with = "shard")]
    report: Option<PathBuf>,
}

/// Options of `fedtopo merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Experiment file (TOML) the shards ran.
    experiment: PathBuf,
    /// Output directories of the shards.
    #[arg(long = "from", required = true)]
    from: Vec<PathBuf>,
    /// Where to write the merged results (default: the experiment file's directory).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Merge a grid of more than 100,000 points (see `run --allow-large-grid`).
    #[arg(long)]
    allow_large_grid: bool,
}

fn spec_dir(path: &Path) -> PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Runs `fedtopo run`.
pub fn run(a: RunArgs) -> Result<()> {
    let spec = ExperimentSpec::load(&a.experiment)?;
    let dir = spec_dir(&a.experiment);
    let out = a.out.unwrap_or_else(|| dir.clone());
    check_grid_size(&spec.grid, a.allow_large_grid)
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.experiment.display()))?;
    let jobs = expand(&spec.grid);
    let opts = RunOptions {
        out: out.clone(),
        base_dir: dir.clone(),
        threads: a.threads,
        shard: a.shard,
        force: a.force,
        progress: true,
    };
    let summary = run_jobs(&spec, &jobs, &opts)?;
    for n in &summary.notes {
        eprintln!("note: {n}");
    }
    if summary.stale > 0 {
        eprintln!(
            "note: {} stored result(s) were computed by other code (another fedtopo source); recomputed",
            summary.stale
        );
    }
    eprintln!(
        "{}: {} job(s) selected, {} computed, {} already done",
        spec.name, summary.selected, summary.computed, summary.reused
    );
    if let Some(s) = a.shard {
        eprintln!(
            "shard {}/{} done; join the shards with `fedtopo merge {} --from DIR ...`",
            s.index,
            s.count,
            a.experiment.display()
        );
        return Ok(());
    }
    let rows = assemble(&spec, &jobs, &out, &dir)?;
    eprintln!(
        "{} rows written to {}",
        rows.len(),
        out.join("results.csv").display()
    );
    let md = fedtopo::input_file::read_text(
        &out.join("results.md"),
        fedtopo::input_file::MAX_INPUT_BYTES,
    )
    .with_context(|| format!("reading {}", out.join("results.md").display()))?;
    out!("{md}");
    if let Some(report) = &a.report {
        write_report(report, &spec, &out, &md)?;
    }
    Ok(())
}

/// `--report DIR`: the assembled results (results.md, summary) and every
/// plot as one self-contained HTML page.
fn write_report(dir: &Path, spec: &ExperimentSpec, out: &Path, md: &str) -> Result<()> {
    // results.md opens with the experiment's description.
    let mut page = super::report_page::page(&format!("fedtopo run: {}", spec.name));
    page.section("Results").markdown(md).note(&format!(
        "Every column: {} (and results.md, summary.csv when aggregated).",
        out.join("results.csv").display()
    ));
    if !spec.plots.is_empty() {
        let s = page.section("Plots");
        for p in &spec.plots {
            let path = out.join(&p.file);
            s.subheading(&p.file);
            match std::fs::read_to_string(&path) {
                Ok(svg) => s.figure(&svg, p.title.as_deref().unwrap_or("")),
                Err(e) => s.error(&format!("{}: {e}", path.display())),
            };
        }
    }
    super::report_page::write(&page, dir)
}

/// Runs `fedtopo merge`.
pub fn merge(a: MergeArgs) -> Result<()> {
    let spec = ExperimentSpec::load(&a.experiment)?;
    let dir = spec_dir(&a.experiment);
    let out = a.out.unwrap_or_else(|| dir.clone());
    check_grid_size(&spec.grid, a.allow_large_grid)
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.experiment.display()))?;
    let jobs = expand(&spec.grid);
    for from in &a.from {
        check_source(&spec, from)?;
    }
    if let Some(note) = claim(&spec, &out)? {
        eprintln!("note: {note}");
    }
    for from in &a.from {
        let n = import_jobs(&jobs, from, &out)?;
        eprintln!("{}: {n} job result(s)", from.display());
    }
    let rows = assemble(&spec, &jobs, &out, &dir)?;
    eprintln!(
        "{} rows written to {}",
        rows.len(),
        out.join("results.csv").display()
    );
    Ok(())
}
