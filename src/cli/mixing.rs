//! `fedtopo mixing`: spectral gap and effective number of neighbours of
//! each overlay, with the default and the fastest-mixing consensus weights.

use super::output::{out, outln};
use anyhow::Result;
use clap::Args;

use fedtopo::csv_file::serde_csv;
use fedtopo::design::mixing_rows::{mixing_rows, MixingOptions, MixingRow};
use fedtopo::report::table::Table;
use fedtopo::report::{render_json, OutputFormat};

use super::args::{CenterArgs, NetworkArgs, PlacementArgs, Setup, UnderlayArgs};
use super::choice::choice;

/// Options of `fedtopo mixing`.
#[derive(Debug, Args)]
pub struct MixingArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    #[command(flatten)]
    placement: PlacementArgs,
    #[arg(long, help = super::args::overlays_help("Overlays"), default_value = "star,mst,delta-mbst,ring,ring-opt,matcha", value_parser = super::args::overlay_list)]
    overlays: super::args::OverlayList,
    #[command(flatten)]
    center: CenterArgs,
    /// Decay gamma of the effective number of neighbours ([Vogels22]), in [0, 1).
    #[arg(long, default_value_t = 0.95, value_parser = super::args::real(0.0, true, 1.0, false))]
    gamma: f64,
    /// Rounds of a time-varying overlay (MATCHA) the figures are taken over
    /// (at most 1000000).
    #[arg(long, default_value_t = 60, value_parser = super::args::whole::<u64>(1, fedtopo::replay::MAX_ROUNDS))]
    rounds: u64,
    /// Subgradient iterations of the fastest-mixing solver.
    #[arg(long, default_value_t = 2000, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    iterations: usize,
    /// Seed of MATCHA's activations.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Output format.
    #[arg(long, value_parser = choice(OutputFormat::ALL, OutputFormat::name), default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

fn table(rows: &[MixingRow]) -> Table {
    let mut t = Table::new([
        "overlay",
        "cycle time (ms)",
        "weights",
        "spectral gap",
        "eff. neighbours",
        "MH gap",
        "fastest gap",
        "gain",
        "fastest eff. nb.",
    ]);
    for r in rows {
        let gain = match (r.fastest_spectral_gap, r.metropolis_spectral_gap) {
            (Some(f), Some(m)) if m > 0.0 => format!("{:.2}x", f / m),
            _ => r.fastest_note.clone().unwrap_or_else(|| "-".into()),
        };
        t.row([
            r.overlay.clone(),
            format!("{:.1}", r.cycle_time_ms),
            r.rule.clone(),
            format!("{:.4}", r.spectral_gap),
            format!("{:.2}", r.effective_neighbours),
            opt(r.metropolis_spectral_gap, 4),
            opt(r.fastest_spectral_gap, 4),
            gain,
            opt(r.fastest_effective_neighbours, 2),
        ]);
    }
    t.align_right([1, 3, 4, 5, 6, 8]).shrink([2]);
    t
}

/// Runs `fedtopo mixing`.
pub fn run(a: MixingArgs) -> Result<()> {
    let kinds = a.overlays.kinds.clone();
    let setup = Setup::load(&a.underlay, &a.network, &a.placement)?;
    let mut knobs = a.center.knobs();
    knobs.push(("seed", a.seed.to_string()));
    let build = setup.build_options(&knobs)?;
    let Setup {
        underlay, model, ..
    } = setup;
    let options = MixingOptions {
        gamma: a.gamma,
        rounds: a.rounds,
        fastest: fedtopo::mixing::FastestOptions {
            iterations: a.iterations,
            ..Default::default()
        },
    };
    let rows = mixing_rows(&underlay, &model, &kinds, &build, &options)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let skipped = rows
        .iter()
        .any(|r| r.fastest_note.as_deref() == Some(fedtopo::design::mixing_rows::SKIPPED_LARGE));
    if skipped {
        if let Some(note) = fedtopo::mixing::fastest_work_note(model.silo_count(), a.iterations) {
            eprintln!("note: {note}");
        }
    }
    match a.format {
        OutputFormat::Table => {
            outln!("{} ({} silos)", underlay.name, model.silo_count());
            outln!("{}", table(&rows));
            outln!(
                "weights: what `train --consensus auto` uses; MH: Metropolis-Hastings; fastest: \
                 fastest-mixing symmetric weights ([Boyd04], `train --consensus fastest`); \
                 eff. neighbours at gamma {} ([Vogels22])",
                a.gamma
            );
            for r in &rows {
                if let Some(note) = &r.mixing_note {
                    eprintln!("note: {}: {note}", r.overlay);
                }
            }
        }
        OutputFormat::Csv => out!("{}", serde_csv(&rows)?),
        OutputFormat::Json => out!("{}", render_json(&rows)),
    }
    Ok(())
}
