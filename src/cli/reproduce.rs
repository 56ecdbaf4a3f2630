//! `fedtopo reproduce matcha-tables`: MATCHA columns of the paper tables, ours vs published.

use super::output::out;
use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand};

/// `fedtopo reproduce ...`
#[derive(Debug, Subcommand)]
pub enum ReproduceCommand {
    /// MATCHA / MATCHA+ columns of [Marfoq20] Tables 3, 6, 7 and the budget sweep of Table 10.
    #[command(after_help = super::examples::MATCHA_TABLES)]
    MatchaTables(MatchaTablesArgs),
    /// Scaling exponents of ||pi|| with n on random graphs ([BadieModiri24] Fig. 5).
    #[command(after_help = super::examples::INIT_GAIN_EXPONENTS)]
    InitGainExponents(InitGainExponentsArgs),
    /// D-Cliques edge/message table (n = 100, 1000) and Greedy Swap skew.
    #[command(after_help = super::examples::DCLIQUES_TABLE)]
    DcliquesTable(DcliquesTableArgs),
    /// D-Cliques convergence on label-skewed data (needs the `train` feature).
    #[cfg(feature = "train")]
    #[command(after_help = super::examples::DCLIQUES_CONVERGENCE)]
    DcliquesConvergence(super::dcliques::ConvergenceArgs),
    /// Not in this build: needs the `train` feature (docs/train.md,
    /// "Training on the simulated network (feature `train`)").
    #[cfg(not(feature = "train"))]
    #[command(hide = true)]
    DcliquesConvergence(super::no_train::AnyArgs),
}

/// Options of `fedtopo reproduce init-gain-exponents`.
#[derive(Debug, Args)]
pub struct InitGainExponentsArgs {
    /// Graph sizes, comma-separated.
    #[arg(
        long,
        default_value = "128,256,512,1024,2048,4096,8192",
        value_delimiter = ',',
        value_parser = super::args::whole::<usize>(0, usize::MAX as u64)
    )]
    sizes: Vec<usize>,
    /// Seeds 0..N per size.
    #[arg(long, default_value_t = 10, value_parser = super::args::whole::<u64>(1, u64::MAX))]
    seeds: u64,
    /// Expected mean degree of every family (BA: m = k/2).
    #[arg(long, default_value_t = 8, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    mean_degree: usize,
    /// Where to write exponents.csv, points.csv and exponents.md.
    #[arg(long, default_value = "experiments/init-gain")]
    out: PathBuf,
}

/// Options of `fedtopo reproduce dcliques-table`.
#[derive(Debug, Args)]
pub struct DcliquesTableArgs {
    /// Where to write edges.csv, skew.csv and results.md.
    #[arg(long, default_value = "experiments/dcliques")]
    out: PathBuf,
    /// Seed of the partition and of the topologies.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Experiments (seeds) for the skew statistics.
    #[arg(long, default_value_t = 100, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    experiments: u64,
}

/// Options of `fedtopo reproduce matcha-tables`.
#[derive(Debug, Args)]
pub struct MatchaTablesArgs {
    /// Directory with the paper's underlays (gaia.gml, amazon_us.gml, ...);
    /// default: the copies shipped in the repository, `underlays/paper/` of
    /// the fedtopo source this binary was built from.
    #[arg(long, value_name = "DIR")]
    underlays: Option<PathBuf>,
    /// Where to write results.csv and results.md.
    #[arg(long, default_value = "experiments/matcha")]
    out: PathBuf,
    /// Seed of the reported round estimate.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Seeds for the spread and the max-plus confidence interval (0..N).
    #[arg(long, default_value_t = 10, value_parser = super::args::whole::<u64>(1, u64::MAX))]
    seeds: u64,
    /// Rounds sampled per estimate (1 to 1000000).
    #[arg(long, default_value_t = 1000, value_parser = super::args::matcha_rounds)]
    matcha_rounds: u64,
}

/// Runs a reproduce command. ([Marfoq20] Tables 3, 6, 7 for STAR, MST, delta-MBST and
/// RING are an experiment file: `fedtopo run experiments/throughput-tables/experiment.toml`.)
pub fn run(c: ReproduceCommand) -> Result<()> {
    match c {
        ReproduceCommand::MatchaTables(a) => run_matcha(a),
        ReproduceCommand::InitGainExponents(a) => run_init_gain(a),
        ReproduceCommand::DcliquesTable(a) => run_dcliques(a),
        #[cfg(feature = "train")]
        ReproduceCommand::DcliquesConvergence(a) => super::dcliques::run_convergence(a),
        #[cfg(not(feature = "train"))]
        ReproduceCommand::DcliquesConvergence(a) => {
            super::no_train::run("reproduce dcliques-convergence", a)
        }
    }
}

fn run_init_gain(a: InitGainExponentsArgs) -> Result<()> {
    use fedtopo::reproduce::init_gain::render::{exponents_csv, exponents_page, points_csv};
    use fedtopo::reproduce::init_gain::{exponents, ExponentOptions};
    if a.mean_degree == 0 {
        anyhow::bail!("--mean-degree must be at least 1");
    }
    let opts = ExponentOptions {
        sizes: a.sizes.clone(),
        seeds: a.seeds,
        mean_degree: a.mean_degree,
    };
    let rows = exponents(&opts)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    super::error_text::write_file(&a.out.join("exponents.csv"), exponents_csv(&rows)?)?;
    super::error_text::write_file(&a.out.join("points.csv"), points_csv(&rows))?;
    let md = exponents_page(&rows, &opts);
    super::error_text::write_file(&a.out.join("exponents.md"), &md)?;
    out!("{md}");
    Ok(())
}

fn run_dcliques(a: DcliquesTableArgs) -> Result<()> {
    use fedtopo::reproduce::dcliques::render::{edge_table_csv, results_markdown, skew_stats_csv};
    use fedtopo::reproduce::dcliques::{edge_table, skew_stats};
    let experiments = a.experiments.max(1);
    let rows = edge_table(&[100, 1000], a.seed)?;
    let skew = skew_stats(100, &[0, 100, 200, 400, 1000], experiments, a.seed)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    super::error_text::write_file(&a.out.join("edges.csv"), edge_table_csv(&rows))?;
    super::error_text::write_file(&a.out.join("skew.csv"), skew_stats_csv(&skew))?;
    let md = results_markdown(&rows, &skew, a.seed, experiments);
    super::error_text::write_file(&a.out.join("results.md"), &md)?;
    out!("{md}");
    Ok(())
}

fn run_matcha(a: MatchaTablesArgs) -> Result<()> {
    use fedtopo::overlay::matcha::MatchaOptions;
    use fedtopo::reproduce::matcha::render::{results_csv, results_markdown};
    use fedtopo::reproduce::matcha::{matcha_tables, MatchaReproOptions};
    let opts = MatchaReproOptions {
        matcha: MatchaOptions {
            seed: a.seed,
            rounds: a.matcha_rounds,
            ..MatchaOptions::default()
        },
        seeds: (0..a.seeds.max(1)).collect(),
    };
    let dir = a
        .underlays
        .clone()
        .unwrap_or_else(fedtopo::net::builtin::paper_underlays_dir);
    let ctx = || {
        format!(
            "reading the paper underlays in {} (give their folder with --underlays DIR)",
            dir.display()
        )
    };
    let rows = matcha_tables(&dir, &opts)
        .map_err(|e| anyhow!("{e}"))
        .with_context(ctx)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    super::error_text::write_file(&a.out.join("results.csv"), results_csv(&rows)?)?;
    let md = results_markdown(&rows);
    super::error_text::write_file(&a.out.join("results.md"), &md)?;
    out!("{md}");
    Ok(())
}
