//! `fedtopo underlay list|info`.

use anyhow::Result;
use clap::{Args, Subcommand};
use serde::Serialize;

use fedtopo::builtin::{BUILTIN_UNDERLAYS, DEFAULT_UNDERLAY};
use fedtopo::connectivity::{Connectivity, ConnectivityOptions};
use fedtopo::report::table::serde_csv;
use fedtopo::report::{render_json, OutputFormat};
use fedtopo::underlay::EstimatedPosition;
use fedtopo::units::format_bandwidth;

use super::args::UnderlayArgs;
use super::choice::choice;
use super::load_notes::report_lines;

/// `fedtopo underlay ...`
#[derive(Debug, Subcommand)]
pub enum UnderlayCommand {
    /// List the built-in underlays.
    #[command(after_help = super::examples::UNDERLAY_LIST)]
    List,
    /// Summarise an underlay: size, diameter, and what was missing or approximated.
    #[command(after_help = super::examples::UNDERLAY_INFO)]
    Info(InfoArgs),
}

/// Options of `fedtopo underlay info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    /// Output format: table, csv (one row of the summary; estimated
    /// positions counted, notes joined by ` | `) or json (everything).
    #[arg(long, value_parser = choice(OutputFormat::ALL, OutputFormat::name), default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

/// Runs an underlay command.
pub fn run(c: UnderlayCommand) -> Result<()> {
    match c {
        UnderlayCommand::List => {
            for (name, about, _) in BUILTIN_UNDERLAYS {
                let star = if name == DEFAULT_UNDERLAY {
                    " (default)"
                } else {
                    ""
                };
                println!("{name}{star}: {about}");
            }
            Ok(())
        }
        UnderlayCommand::Info(a) => info(a),
    }
}

/// Summary of an underlay.
#[derive(Debug, Serialize)]
struct Info {
    name: String,
    routers: usize,
    links: usize,
    directed_source: bool,
    total_length_km: f64,
    diameter_km: f64,
    diameter_hops: u32,
    diameter_ms: f64,
    min_capacity_bps: f64,
    max_capacity_bps: f64,
    routers_without_coordinates: usize,
    /// Routers without coordinates whose position was estimated (node,
    /// neighbours averaged, position).
    estimated_positions: Vec<EstimatedPosition>,
    notes: Vec<String>,
}

/// One CSV row of [`Info`].
#[derive(Debug, Serialize)]
struct InfoRow<'a> {
    name: &'a str,
    routers: usize,
    links: usize,
    directed_source: bool,
    total_length_km: f64,
    diameter_km: f64,
    diameter_hops: u32,
    diameter_ms: f64,
    min_capacity_bps: f64,
    max_capacity_bps: f64,
    routers_without_coordinates: usize,
    estimated_positions: usize,
    notes: String,
}

fn info(a: InfoArgs) -> Result<()> {
    let u = a.underlay.load(true)?;
    let n = u.node_count();
    if n > fedtopo::placement::MAX_SILOS {
        anyhow::bail!(
            "{}: {n} routers are more than the {} whose diameter `underlay info` computes (all-pairs routes need dense router x router matrices, at least 24 bytes x N^2 = {:.1} GB here)",
            u.name,
            fedtopo::placement::MAX_SILOS,
            24.0 * (n as f64).powi(2) / 1e9
        );
    }
    let conn = Connectivity::new(&u, &ConnectivityOptions::default());
    let (mut dkm, mut dhops, mut dms) = (0.0f64, 0u32, 0.0f64);
    for i in 0..n {
        for j in 0..n {
            dkm = dkm.max(conn.length_km(i, j));
            dhops = dhops.max(conn.hops(i, j));
            dms = dms.max(conn.latency_ms(i, j));
        }
    }
    let caps = u.links.iter().map(|l| l.capacity_bps);
    let mut info = Info {
        name: u.name.clone(),
        routers: n,
        links: u.link_count(),
        directed_source: u.directed_source,
        // + 0.0: the empty sum is -0.0.
        total_length_km: u.links.iter().map(|l| l.length_km).sum::<f64>() + 0.0,
        diameter_km: dkm,
        diameter_hops: dhops,
        diameter_ms: dms,
        min_capacity_bps: caps.clone().fold(f64::INFINITY, f64::min),
        max_capacity_bps: caps.fold(0.0, f64::max),
        routers_without_coordinates: u.routers.iter().filter(|r| r.lat_lon.is_none()).count(),
        estimated_positions: u.report.estimated_positions.clone(),
        notes: report_lines(&u),
    };
    if n < 2 {
        info.notes.push(format!(
            "only {n} router: compare, simulate, overlay and run refuse it (timing an overlay needs at least 2 silos)"
        ));
    }
    match a.format {
        OutputFormat::Json => print!("{}", render_json(&info)),
        OutputFormat::Csv => {
            let row = InfoRow {
                name: &info.name,
                routers: info.routers,
                links: info.links,
                directed_source: info.directed_source,
                total_length_km: info.total_length_km,
                diameter_km: info.diameter_km,
                diameter_hops: info.diameter_hops,
                diameter_ms: info.diameter_ms,
                min_capacity_bps: info.min_capacity_bps,
                max_capacity_bps: info.max_capacity_bps,
                routers_without_coordinates: info.routers_without_coordinates,
                estimated_positions: info.estimated_positions.len(),
                notes: info.notes.join(" | "),
            };
            print!("{}", serde_csv(&[row])?);
        }
        OutputFormat::Table => {
            println!("underlay      {}", info.name);
            println!("routers       {} (one silo each)", info.routers);
            println!("links         {}", info.links);
            println!("total length  {:.0} km", info.total_length_km);
            println!(
                "diameter      {:.0} km, {} hops, {:.1} ms (paper latency model: 0.0085 ms/km + 4 ms)",
                info.diameter_km, info.diameter_hops, info.diameter_ms
            );
            if info.links == 0 {
                println!("capacities    none (no links)");
            } else {
                println!(
                    "capacities    {} .. {}",
                    format_bandwidth(info.min_capacity_bps),
                    format_bandwidth(info.max_capacity_bps)
                );
            }
            println!(
                "no coords     {} router(s), {} position(s) estimated",
                info.routers_without_coordinates,
                info.estimated_positions.len()
            );
            for line in &info.notes {
                println!("note          {line}");
            }
        }
    }
    Ok(())
}
