//! Command-line parsing and dispatch. Each sub-command lives in its own file.

mod args;
mod compare;
mod overlay;
mod reproduce;
mod simulate;
mod underlay;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// Which communication topology trains fastest on this network?
#[derive(Debug, Parser)]
#[command(name = "fedtopo", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compare the cycle time of overlays on an underlay.
    Compare(compare::CompareArgs),
    /// Build one overlay and write it out (GML, DOT or JSON).
    Overlay(overlay::OverlayArgs),
    /// Inspect underlays.
    #[command(subcommand)]
    Underlay(underlay::UnderlayCommand),
    /// Regenerate published tables: ours vs published.
    #[command(subcommand)]
    Reproduce(reproduce::ReproduceCommand),
    /// Replay training rounds in wall-clock time (event engine).
    Simulate(simulate::SimulateArgs),
}

/// Parses the command line and runs the command.
pub fn run() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Compare(a) => compare::run(a),
        Command::Overlay(a) => overlay::run(a),
        Command::Underlay(c) => underlay::run(c),
        Command::Reproduce(c) => reproduce::run(c),
        Command::Simulate(a) => simulate::run(a),
    }
}
