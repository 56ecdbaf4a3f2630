//! `fedtopo reproduce`: regenerate the paper tables, ours vs published.

use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand};

use fedtopo::reproduce::{markdown, ring_opt_markdown, throughput_tables};

/// `fedtopo reproduce ...`
#[derive(Debug, Subcommand)]
pub enum ReproduceCommand {
    /// Tables 3, 6, 7 of Marfoq et al. 2020 (STAR, MST, delta-MBST, RING).
    ThroughputTables(TablesArgs),
}

/// Options of `fedtopo reproduce throughput-tables`.
#[derive(Debug, Args)]
pub struct TablesArgs {
    /// Directory with the paper's underlays (gaia.gml, amazon_us.gml, ...).
    #[arg(long, default_value = "../shared/underlays/paper")]
    underlays: PathBuf,
    /// Where to write results.csv and results.md.
    #[arg(long, default_value = "experiments/throughput-tables")]
    out: PathBuf,
}

/// Runs a reproduce command.
pub fn run(c: ReproduceCommand) -> Result<()> {
    let ReproduceCommand::ThroughputTables(a) = c;
    let (rows, computed) = throughput_tables(&a.underlays)
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("reading the paper underlays in {}", a.underlays.display()))?;
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in &rows {
        w.serialize(r)?;
    }
    let csv_text = String::from_utf8(w.into_inner()?)?;
    let md = format!(
        "## Ours vs published\n\n{}\n## RING vs ring-opt (ours)\n\n{}",
        markdown(&rows),
        ring_opt_markdown(&computed)
    );
    std::fs::create_dir_all(&a.out)?;
    std::fs::write(a.out.join("results.csv"), csv_text)?;
    std::fs::write(a.out.join("results.md"), &md)?;
    print!("{md}");
    let worst = rows
        .iter()
        .max_by(|x, y| x.relative_error.abs().total_cmp(&y.relative_error.abs()));
    if let Some(w) = worst {
        eprintln!(
            "largest relative error: {:+.2}% (table {}, {}, {})",
            100.0 * w.relative_error,
            w.table,
            w.underlay,
            w.overlay
        );
    }
    Ok(())
}
