//! Command-line parsing and dispatch. Each sub-command lives in its own file.

mod args;
mod augment;
mod calibrate;
mod choice;
mod compare;
mod dcliques;
mod design;
mod draw;
mod error_text;
mod examples;
mod mixing;
#[cfg(not(feature = "train"))]
mod no_train;
mod output;
mod overlay;
mod report_page;
mod reproduce;
mod run;
mod simulate;
mod tornado;
mod trace;
#[cfg(feature = "train")]
mod train;
mod training;
mod underlay;
#[cfg(feature = "train")]
mod verify;

use std::io::IsTerminal;

use anyhow::Result;

use clap::{Parser, Subcommand};
pub use error_text::error_text;
pub use output::{StdoutError, BROKEN_PIPE_EXIT};

/// Which communication topology trains fastest on this network?
#[derive(Debug, Parser)]
#[command(name = "fedtopo", version, about, long_about = None, after_help = examples::FEDTOPO)]
struct Cli {
    /// Print tables at their full width. By default a table printed to a
    /// terminal fits its width (`COLUMNS`, else the terminal's, else 100):
    /// long headers wrap and long text (a critical circuit) is cut with
    /// `…`. Off a terminal (a file, a pipe) tables are always full width.
    #[arg(long, global = true)]
    wide: bool,
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
    /// Draw the underlay, and an overlay on it, as an SVG map (longitude,
    /// latitude; arcs coloured by delay, the critical circuit highlighted).
    #[command(after_help = examples::DRAW)]
    Draw(draw::DrawArgs),
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
    /// Not in this build: needs the `train` feature (docs/train.md,
    /// "Training on the simulated network (feature `train`)").
    #[cfg(not(feature = "train"))]
    #[command(hide = true)]
    Train(no_train::AnyArgs),
    /// Regenerate published MATCHA tables: ours vs published.
    #[command(after_help = examples::REPRODUCE)]
    #[command(subcommand)]
    Reproduce(reproduce::ReproduceCommand),
    /// Fit the network model (compute, access links, pair latencies) to
    /// a measured run's log, and report the fit error.
    #[command(after_help = examples::CALIBRATE)]
    Calibrate(calibrate::CalibrateArgs),
    /// Replay training rounds in wall-clock time (event engine).
    #[command(after_help = examples::SIMULATE)]
    Simulate(simulate::SimulateArgs),
    /// Write a network-dynamics trace (for --trace): diurnal bandwidth or
    /// exponential on/off churn, seeded.
    #[command(after_help = examples::TRACE)]
    #[command(subcommand)]
    Trace(trace::TraceCommand),
    /// TornadoAggregate and ring-based hierarchies (Lee et al. 2021): round
    /// programs timed on an underlay, clustering cost ([Lee21] Table 3).
    #[command(after_help = examples::TORNADO)]
    #[command(subcommand)]
    Tornado(tornado::TornadoCommand),
}

/// The command line's grammar: [`Cli`], with every option that takes a
/// value accepting values that look like negative numbers (`--seed -1`),
/// so that they reach the option's own parser, whose message names the
/// option and its accepted range, instead of clap's "to pass '-1' as a
/// value, use '-- -1'", which names neither.
fn command() -> clap::Command {
    fn accept_negative_numbers(c: clap::Command) -> clap::Command {
        c.mut_args(|a| {
            if a.get_action().takes_values() {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        })
        .mut_subcommands(accept_negative_numbers)
    }
    accept_negative_numbers(<Cli as clap::CommandFactory>::command())
}

/// Test hook: with this variable set, `fedtopo` parses its command line
/// (every option through its value parser, as a real run does) and exits
/// with status 0 without running the command. `tests/docs.rs` checks the
/// manual's examples that are too slow to run, or need files a test does
/// not make, this way. The stand-ins of the `train` feature's commands in
/// a build without it parse nothing, so they run (and fail, saying so).
const PARSE_ONLY: &str = "FEDTOPO_PARSE_ONLY";

impl Command {
    /// A stand-in for a command of the `train` feature, in a build without
    /// it: it takes any arguments unparsed ([`no_train`]).
    fn is_stand_in(&self) -> bool {
        #[cfg(not(feature = "train"))]
        {
            matches!(
                self,
                Command::Train(_)
                    | Command::Reproduce(reproduce::ReproduceCommand::DcliquesConvergence(_))
            )
        }
        #[cfg(feature = "train")]
        {
            false
        }
    }
}

/// Columns of the terminal on stdout (`None`: not a terminal or unknown).
fn stdout_columns() -> Option<usize> {
    console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| usize::from(cols))
}

/// Parses the command line and runs the command, with tables fitted to
/// the terminal ([`fedtopo::report::table::terminal_table_width`]) and a
/// progress reporter on stderr ([`fedtopo::progress`]).
pub fn run() -> Result<()> {
    let cli = match command()
        .try_get_matches()
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        // `--help` and `--version` go to stdout: through `output::print`,
        // so that a failed write is an error there too.
        Err(e) if !e.use_stderr() => {
            let text = e.render();
            return Ok(output::print(&if std::io::stdout().is_terminal() {
                text.ansi().to_string()
            } else {
                text.to_string()
            })?);
        }
        Err(e) => e.exit(),
    };
    if std::env::var_os(PARSE_ONLY).is_some() && !cli.command.is_stand_in() {
        return Ok(());
    }
    let width = fedtopo::report::table::terminal_table_width(
        cli.wide,
        std::io::stdout().is_terminal(),
        std::env::var("COLUMNS").ok().as_deref(),
        stdout_columns(),
    );
    fedtopo::report::table::set_terminal_width(width);
    let stderr_columns = console::Term::stderr()
        .size_checked()
        .map(|(_, cols)| usize::from(cols));
    let _progress = fedtopo::progress::Reporter::install(
        fedtopo::progress::ReporterConfig::for_stderr(stderr_columns),
        Box::new(std::io::stderr()),
    );
    match cli.command {
        Command::Compare(a) => compare::run(a),
        Command::Mixing(a) => mixing::run(a),
        Command::Augment(a) => augment::run(a),
        Command::Design(a) => design::run(*a),
        Command::Draw(a) => draw::run(a),
        Command::Overlay(a) => overlay::run(a),
        Command::Underlay(c) => underlay::run(c),
        Command::Run(a) => run::run(a),
        Command::Merge(a) => run::merge(a),
        #[cfg(feature = "train")]
        Command::Train(a) => train::run_train(*a),
        #[cfg(not(feature = "train"))]
        Command::Train(a) => no_train::run("train", a),
        Command::Simulate(a) => simulate::run(a),
        Command::Trace(c) => trace::run(c),
        Command::Calibrate(a) => calibrate::run(a),
        Command::Reproduce(c) => reproduce::run(c),
        Command::Tornado(c) => tornado::run(c),
    }
}

#[cfg(test)]
mod tests {
    use std::any::TypeId;

    /// Every option of every command whose value is a number, with the
    /// arguments its command needs (`fedtopo overlay KIND`, `run FILE`).
    fn numeric_options() -> Vec<(Vec<String>, String)> {
        fn walk(c: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
            let mut prefix = path.clone();
            for a in c.get_arguments() {
                if a.is_positional() && a.is_required_set() {
                    // `overlay <KIND>`, `run <FILE>`, `merge <DIR>`: a value
                    // every one of them parses.
                    prefix.push("ring".into());
                }
            }
            let numeric = [
                TypeId::of::<u64>(),
                TypeId::of::<usize>(),
                TypeId::of::<u32>(),
                TypeId::of::<f64>(),
            ];
            for a in c.get_arguments() {
                let Some(long) = a.get_long() else { continue };
                if a.get_action().takes_values()
                    && numeric.iter().any(|t| a.get_value_parser().type_id() == *t)
                {
                    out.push((prefix.clone(), long.to_string()));
                }
            }
            for s in c.get_subcommands() {
                let mut p = path.clone();
                p.push(s.get_name().to_string());
                walk(s, p, out);
            }
        }
        let mut out = Vec::new();
        walk(&super::command(), vec!["fedtopo".into()], &mut out);
        out
    }

    /// Issue 25 item 11: `--OPTION -1` (and `--OPTION=-1`) for every
    /// numeric option of every command is refused by the option's own
    /// parser, naming the option and its range, never with clap's "use
    /// `-- -1`" hint (which names neither).
    #[test]
    fn negative_values_name_the_option_and_its_range() {
        let options = numeric_options();
        assert!(
            options.len() > 60,
            "{} numeric options found",
            options.len()
        );
        for (prefix, long) in &options {
            for argv in [
                [prefix.clone(), vec![format!("--{long}"), "-1".into()]].concat(),
                [prefix.clone(), vec![format!("--{long}=-1")]].concat(),
            ] {
                let err = match super::command().try_get_matches_from(&argv) {
                    Ok(_) => panic!("`{}` was accepted", argv.join(" ")),
                    Err(e) => e,
                };
                let text = err.render().to_string();
                assert_eq!(
                    err.kind(),
                    clap::error::ErrorKind::ValueValidation,
                    "`{}`: {text}",
                    argv.join(" ")
                );
                assert!(
                    text.contains(&format!("'--{long}"))
                        && (text.contains("expected") || text.contains("must be"))
                        && !text.contains("-- -1"),
                    "`{}`: {text}",
                    argv.join(" ")
                );
            }
        }
    }

    /// Values in range still parse; the parsers keep their defaults.
    #[test]
    fn defaults_and_valid_values_still_parse() {
        for argv in [
            vec!["fedtopo", "compare", "--seed", "7"],
            vec!["fedtopo", "mixing", "--gamma", "0", "--rounds", "1"],
            vec!["fedtopo", "design", "--base-rounds", "1e6"],
            vec!["fedtopo", "run", "x.toml", "--threads", "1024"],
            vec!["fedtopo", "tornado", "clustering"],
        ] {
            if let Err(e) = super::command().try_get_matches_from(&argv) {
                panic!("`{}`: {}", argv.join(" "), e.render());
            }
        }
        for argv in [
            vec!["fedtopo", "design", "--base-rounds", "1e308"],
            vec!["fedtopo", "mixing", "--gamma", "1"],
            vec!["fedtopo", "run", "x.toml", "--threads", "1025"],
            vec!["fedtopo", "compare", "--seed", "1.5"],
        ] {
            assert!(
                super::command().try_get_matches_from(&argv).is_err(),
                "`{}` accepted",
                argv.join(" ")
            );
        }
    }
}
