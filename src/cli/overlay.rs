//! `fedtopo overlay`: build one overlay and write it out.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::overlay::export::ExportedOverlay;
use fedtopo::timing::cycle_time;

use super::args::{center_policy, NetworkArgs, UnderlayArgs};
use super::compare::ExportFormat;

/// Options of `fedtopo overlay`.
#[derive(Debug, Args)]
pub struct OverlayArgs {
    /// Overlay: star, mst, delta-mbst, ring, ring-opt, complete, or a random
    /// graph (er:p=P|k=K, ba:m=M, regular:k=K, chung-lu:gamma=G,k=K, torus).
    kind: OverlayKind,
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    /// STAR centre: load, first, fastest, or a silo label/id.
    #[arg(long, default_value = "load")]
    center: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Gml)]
    format: ExportFormat,
    /// Output file (default: standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Seed of random overlays (er, ba, regular, chung-lu).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// Runs `fedtopo overlay`.
pub fn run(a: OverlayArgs) -> Result<()> {
    let underlay = a.underlay.load(false)?;
    let model = a.network.delay_model(&underlay)?;
    let options = BuildOptions {
        center: center_policy(&a.center, &underlay)?,
        seed: a.seed,
        ..BuildOptions::default()
    };
    let overlay = build_overlay(a.kind, &underlay, &model, &options)?;
    let t = cycle_time(&overlay, &model)?;
    let labels: Vec<String> = underlay.routers.iter().map(|r| r.label.clone()).collect();
    let e = ExportedOverlay::new(&overlay, &labels, Some(&model), Some(t.cycle_time_ms));
    let text = a.format.render(&e);
    match &a.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!(
                "{}: {} arcs, cycle time {:.1} ms, written to {}",
                a.kind,
                overlay.arc_count(),
                t.cycle_time_ms,
                path.display()
            );
        }
        None => print!("{text}"),
    }
    Ok(())
}
