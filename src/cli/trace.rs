//! `fedtopo trace`: write network-dynamics traces from seeded generators
//! (diurnal bandwidth, exponential on/off churn), for `--trace`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use fedtopo::net::dynamics::generate::{to_csv, Churn, Diurnal, TraceRow};
use fedtopo::net::scenario::PlacementSpec;

use super::args::{PlacementArgs, UnderlayArgs};
use super::output::out;

/// A time in seconds, > 0 and at most a trace's latest time.
fn secs() -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    super::args::real(
        0.0,
        false,
        fedtopo::net::dynamics::read::MAX_TRACE_TIME_S,
        true,
    )
}

/// The generators.
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Diurnal bandwidth: every silo's access capacity follows a day's
    /// cosine between --base and --base * (1 - --depth), held constant over
    /// steps of --step-s, each silo with a phase drawn from --seed.
    #[command(after_help = super::examples::TRACE_DIURNAL)]
    Diurnal(DiurnalArgs),
    /// Exponential on/off churn: every silo is up at 0, then alternates
    /// exponential up times (mean --mean-up-s) and down times (mean
    /// --mean-down-s), drawn from --seed.
    #[command(after_help = super::examples::TRACE_CHURN)]
    Churn(ChurnArgs),
}

/// Where the trace goes and for which silos.
#[derive(Debug, Args)]
pub struct TraceTarget {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    placement: PlacementArgs,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Length of the trace, s.
    #[arg(long, default_value_t = 86400.0, value_parser = secs())]
    duration_s: f64,
    /// Write the trace to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
}

/// Options of `fedtopo trace diurnal`.
#[derive(Debug, Args)]
pub struct DiurnalArgs {
    #[command(flatten)]
    target: TraceTarget,
    /// Peak access capacity (`1G`, `100Mbps`).
    #[arg(long, default_value = "10G")]
    base: String,
    /// Relative depth of the trough, in [0, 1).
    #[arg(long, default_value_t = 0.5, value_parser = super::args::real(0.0, true, 1.0, false))]
    depth: f64,
    /// Period, s.
    #[arg(long, default_value_t = 86400.0, value_parser = secs())]
    period_s: f64,
    /// Step of the piecewise-constant series, s.
    #[arg(long, default_value_t = 3600.0, value_parser = secs())]
    step_s: f64,
}

/// Options of `fedtopo trace churn`.
#[derive(Debug, Args)]
pub struct ChurnArgs {
    #[command(flatten)]
    target: TraceTarget,
    /// Mean up time, s.
    #[arg(long, default_value_t = 3600.0, value_parser = secs())]
    mean_up_s: f64,
    /// Mean down time, s.
    #[arg(long, default_value_t = 300.0, value_parser = secs())]
    mean_down_s: f64,
}

impl TraceTarget {
    /// The silo labels of the placement on the underlay.
    fn labels(&self) -> Result<Vec<String>> {
        let underlay = self.underlay.load(true)?;
        let p = &self.placement;
        let spec = match (p.silos_per_router, p.silos) {
            (Some(k), _) => PlacementSpec::PerRouter(k),
            (None, Some(n)) => PlacementSpec::Spread {
                silos: n,
                seed: p.placement_seed,
            },
            (None, None) => PlacementSpec::OnePerRouter,
        };
        Ok(spec.place(&underlay)?.labels(&underlay))
    }

    fn write(&self, rows: &[TraceRow]) -> Result<()> {
        let text = to_csv(rows);
        match &self.out {
            Some(path) => {
                std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
            }
            None => {
                out!("{text}");
                Ok(())
            }
        }
    }
}

/// Runs `fedtopo trace`.
pub fn run(c: TraceCommand) -> Result<()> {
    match c {
        TraceCommand::Diurnal(a) => {
            let base = fedtopo::units::parse_bandwidth(&a.base)
                .map_err(|e| anyhow::anyhow!("--base: {e}"))?;
            let g = Diurnal {
                base_bps: base,
                depth: a.depth,
                period_s: a.period_s,
                step_s: a.step_s,
                duration_s: a.target.duration_s,
            };
            let rows = g
                .rows(&a.target.labels()?, a.target.seed)
                .map_err(|e| anyhow::anyhow!("--{e}"))?;
            a.target.write(&rows)
        }
        TraceCommand::Churn(a) => {
            let g = Churn {
                mean_up_s: a.mean_up_s,
                mean_down_s: a.mean_down_s,
                duration_s: a.target.duration_s,
            };
            let rows = g
                .rows(&a.target.labels()?, a.target.seed)
                .map_err(|e| anyhow::anyhow!("--{e}"))?;
            a.target.write(&rows)
        }
    }
}
