//! `fedtopo draw`: the underlay, and an overlay on it, as an SVG map.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::overlay::build::OverlayKind;
use fedtopo::report::map::{draw_map, overlay_map, MapLayer, MapOptions};

use super::args::{CenterArgs, NetworkArgs, PlacementArgs, Setup, UnderlayArgs};

/// Options of `fedtopo draw`.
#[derive(Debug, Args)]
pub struct DrawArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    #[command(flatten)]
    placement: PlacementArgs,
    /// Overlay to draw over the underlay (any name `compare` takes, e.g.
    /// ring-opt, delta-mbst, matcha, exp-1peer, base:k=2, file:PATH);
    /// schedules are drawn as the union of their rounds, each arc as wide
    /// as the share of rounds it is active in. Default: the underlay and
    /// its silos only.
    #[arg(long)]
    overlay: Option<OverlayKind>,
    #[command(flatten)]
    center: CenterArgs,
    /// Output SVG file (default: standard output, unless it is a terminal).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Width of the picture in pixels (its height follows the map).
    #[arg(long, default_value_t = 1000.0, value_parser = super::args::real(500.0, true, 20_000.0, true))]
    width: f64,
    /// MATCHA communication budget Cb, in [0.001, 1].
    #[arg(long, default_value_t = 0.5, value_parser = super::args::parse_budget)]
    budget: f64,
    /// Seed of MATCHA's activations and random overlays.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Rounds of MATCHA drawn (their union) and sampled for its cycle time.
    #[arg(long, default_value_t = 1000, value_parser = super::args::matcha_rounds)]
    matcha_rounds: u64,
}

/// Runs `fedtopo draw`.
pub fn run(a: DrawArgs) -> Result<()> {
    if a.output.is_none() && std::io::stdout().is_terminal() {
        bail!("an SVG picture is not for the terminal: give -o FILE.svg (or redirect standard output)");
    }
    let setup = Setup::load(&a.underlay, &a.network, &a.placement)?;
    let opts = MapOptions {
        width: a.width,
        ..MapOptions::default()
    };
    let svg = match a.overlay {
        None => draw_map(&setup.underlay, &setup.model, MapLayer::Underlay, &opts)?,
        Some(kind) => {
            let mut knobs = a.center.knobs();
            knobs.extend([
                ("seed", a.seed.to_string()),
                ("budget", a.budget.to_string()),
                ("matcha_rounds", a.matcha_rounds.to_string()),
            ]);
            let options = setup.build_options(&knobs)?;
            let overlay = EvaluatedOverlay::build(kind, &setup.underlay, &setup.model, &options)?;
            let timing = overlay.cycle_time(&setup.model)?;
            overlay_map(
                &setup.underlay,
                &setup.model,
                &overlay,
                Some(&timing),
                &opts,
            )?
        }
    };
    match &a.output {
        Some(path) => {
            std::fs::write(path, svg).with_context(|| format!("writing {}", path.display()))?
        }
        None => print!("{svg}"),
    }
    Ok(())
}
