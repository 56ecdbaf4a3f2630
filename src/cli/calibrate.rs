//! `fedtopo calibrate`: fit the network model to a measured run's log.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use fedtopo::calibrate::links::fit_links;
use fedtopo::calibrate::{fit, Fit, FittedCapacity, RunLog};
use fedtopo::csv_file::read_bounded;
use fedtopo::report::table::Table;
use fedtopo::report::{render_json, OutputFormat};

use super::args::{NetworkArgs, PlacementArgs, Setup, UnderlayArgs};
use super::choice::choice;
use super::output::{out, outln};

/// Options of `fedtopo calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    #[command(flatten)]
    placement: PlacementArgs,
    /// The measured run: CSV `kind,round,from,to,start_ms,end_ms[,bits]`
    /// (`compute` rows: a silo's local steps of a round; `transfer` rows:
    /// a model from `from` to `to`), silos by label; what `fedtopo simulate
    /// --log` writes.
    #[arg(long, value_name = "FILE")]
    log: PathBuf,
    /// Write the fitted model to DIR: silos.csv (`--silos-csv`), and the
    /// measured pairs as latency.csv (one-way, `--matrix-values one-way`)
    /// and bandwidth.csv (`--bandwidth-matrix`).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Output format: table, csv or json.
    #[arg(long, value_parser = choice(OutputFormat::ALL, OutputFormat::name), default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

fn capacity(c: Option<FittedCapacity>) -> String {
    match c {
        None => "-".into(),
        Some(c) if c.identified => format!("{:.4e}", c.bps),
        Some(c) => format!(">= {:.4e}", c.bps),
    }
}

fn silo_table(f: &Fit, labels: &[String]) -> Table {
    let mut t = Table::new(["silo", "compute (ms/step)", "up (bit/s)", "down (bit/s)"]);
    for (s, l) in f.silos.iter().zip(labels) {
        t.row([
            l.clone(),
            s.compute_ms.map_or("-".into(), |c| format!("{c:.3}")),
            capacity(s.up),
            capacity(s.down),
        ]);
    }
    t
}

/// Runs `fedtopo calibrate`.
pub fn run(a: CalibrateArgs) -> Result<()> {
    let Setup {
        model, underlay, ..
    } = Setup::load(&a.underlay, &a.network, &a.placement)?;
    let labels = model.connectivity.placement().labels(&underlay);
    let text = read_bounded(&a.log)?;
    let log = RunLog::parse(
        &text,
        &a.log.display().to_string(),
        &labels,
        model.workload.model_bits,
    )?;
    let f = fit(&log, &model).with_context(|| format!("fitting {}", a.log.display()))?;
    let kept = f.pairs.iter().filter(|p| !p.latency_fitted).count();
    if kept > 0 {
        eprintln!(
            "note: {kept} of {} pairs carried models of one size only: their latency is the \
             underlay's (the log cannot tell latency from bandwidth)",
            f.pairs.len()
        );
    }
    let errors = [
        ("compute spans", f.compute_error),
        ("transfers", f.transfer_error),
        ("round ends (one step)", f.round_error),
    ];
    match a.format {
        OutputFormat::Table => {
            outln!("{}", silo_table(&f, &labels).to_terminal());
            let mut t = Table::new(["fit error", "compared", "mean", "largest"]);
            for (what, e) in errors {
                t.row([
                    what.to_string(),
                    e.count.to_string(),
                    format!("{:.3}%", 100.0 * e.mean),
                    format!("{:.3}%", 100.0 * e.max),
                ]);
            }
            outln!("{}", t.to_terminal());
            outln!(
                "{} pairs measured, {} with a core bottleneck; \">=\": a lower bound (the link never limited the run)",
                f.pairs.len(),
                f.pairs.iter().filter(|p| p.core_bps.is_some()).count()
            );
        }
        OutputFormat::Csv => out!("{}", silo_table(&f, &labels).to_csv()),
        OutputFormat::Json => out!(
            "{}",
            render_json(&serde_json::json!({ "labels": labels, "fit": f }))
        ),
    }
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let write = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
        };
        write("silos.csv", f.silos_csv(&labels))?;
        let (lat, bw) = f.matrices_csv(&labels);
        write("latency.csv", lat)?;
        write("bandwidth.csv", bw)?;
        if let Some(links) = fit_links(&f, &model, &underlay) {
            eprintln!(
                "links: {} fitted ({} pairs' latencies over the underlay's routes, largest \
                 residual {:.3} ms{}; {} core-limited pairs, {} not explained within 5%); \
                 routes are the underlay's and are not recomputed",
                links.links.len(),
                links.latency_pairs,
                links.latency_max_residual_ms,
                if links.clamped > 0 {
                    format!(", {} negative latencies set to 0", links.clamped)
                } else {
                    String::new()
                },
                links.capacity_pairs,
                links.capacity_unexplained
            );
            write("links.csv", links.links_csv(&underlay))?;
        }
    }
    Ok(())
}
