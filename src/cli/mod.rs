//! Command-line parsing and dispatch. Each sub-command lives in its own file.

mod args;
mod augment;
mod choice;
mod compare;
mod dcliques;
mod design;
mod error_text;
mod examples;
mod mixing;
#[cfg(not(feature = "train"))]
mod no_train;
mod overlay;
mod reproduce;
mod run;
mod simulate;
mod tornado;
#[cfg(feature = "train")]
mod train;
mod training;
mod underlay;
#[cfg(feature = "train")]
mod verify;

use anyhow::Result;

use clap::{Parser, Subcommand};
pub use error_text::error_text;

/// Which communication topology trains fastest on this network?
#[derive(Debug, Parser)]
#[command(name = "fedtopo", version, about, long_about = None, after_help = examples::FEDTOPO)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compare the cycle time of overlays on an underlay.
    #[command(after_help = examples::COMPARE)]
    Compare(compare::CompareArgs),
    /// Spectral gap and effective number of neighbours of overlays, with
    /// the default and the fastest-mixing consensus weights.
    #[command(after_help = examples::MIXING)]
    Mixing(mixing::MixingArgs),
    /// Add arcs to a designed overlay while its cycle time does not grow;
    /// the Pareto front of cycle time against mixing.
    #[command(after_help = examples::AUGMENT)]
    Augment(augment::AugmentArgs),
    /// Search overlay families for the least predicted wall-clock time to a
    /// target on this network (cycle time x predicted rounds).
    #[command(after_help = examples::DESIGN)]
    Design(Box<design::DesignArgs>),
    /// Build one overlay and write it out (GML, DOT or JSON).
    #[command(after_help = examples::OVERLAY)]
    Overlay(overlay::OverlayArgs),
    /// Inspect underlays.
    #[command(after_help = examples::UNDERLAY)]
    #[command(subcommand)]
    Underlay(underlay::UnderlayCommand),
    /// Run an experiment file (a parameter grid), in parallel, resumably.
    #[command(after_help = examples::RUN)]
    Run(run::RunArgs),
    /// Join the results of sharded runs of an experiment.
    #[command(after_help = examples::MERGE)]
    Merge(run::MergeArgs),
    /// Train a real model (DPASGD) on several overlays and compare them in
    /// simulated wall-clock time (needs the `train` feature).
    #[cfg(feature = "train")]
    #[command(after_help = examples::TRAIN)]
    Train(Box<train::TrainArgs>),
    /// Not in this build: needs the `train` feature (README section
    /// "Training on the simulated network (feature `train`)").
    #[cfg(not(feature = "train"))]
    #[command(hide = true)]
    Train(no_train::AnyArgs),
    /// Regenerate published MATCHA tables: ours vs published.
    #[command(after_help = examples::REPRODUCE)]
    #[command(subcommand)]
    Reproduce(reproduce::ReproduceCommand),
    /// Replay training rounds in wall-clock time (event engine).
    #[command(after_help = examples::SIMULATE)]
    Simulate(simulate::SimulateArgs),
    /// TornadoAggregate and ring-based hierarchies (Lee et al. 2021): round
    /// programs timed on an underlay, clustering cost ([Lee21] Table 3).
    #[command(after_help = examples::TORNADO)]
    #[command(subcommand)]
    Tornado(tornado::TornadoCommand),
}

/// Parses the command line and runs the command.
pub fn run() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Compare(a) => compare::run(a),
        Command::Mixing(a) => mixing::run(a),
        Command::Augment(a) => augment::run(a),
        Command::Design(a) => design::run(*a),
        Command::Overlay(a) => overlay::run(a),
        Command::Underlay(c) => underlay::run(c),
        Command::Run(a) => run::run(a),
        Command::Merge(a) => run::merge(a),
        #[cfg(feature = "train")]
        Command::Train(a) => train::run_train(*a),
        #[cfg(not(feature = "train"))]
        Command::Train(a) => no_train::run("train", a),
        Command::Simulate(a) => simulate::run(a),
        Command::Reproduce(c) => reproduce::run(c),
        Command::Tornado(c) => tornado::run(c),
    }
}
