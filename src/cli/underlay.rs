//! `fedtopo underlay list|info`.

use super::output::{out, outln};
use anyhow::Result;
use clap::{Args, Subcommand};
use serde::Serialize;

use fedtopo::csv_file::serde_csv;
use fedtopo::net::builtin::{BUILTIN_UNDERLAYS, DEFAULT_UNDERLAY};
use fedtopo::report::underlay_info::UnderlayInfo;
use fedtopo::report::{render_json, OutputFormat};
use fedtopo::units::format_bandwidth;

use super::args::UnderlayArgs;
use super::choice::choice;

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
                outln!("{name}{star}: {about}");
            }
            Ok(())
        }
        UnderlayCommand::Info(a) => info(a),
    }
}

/// One CSV row of [`UnderlayInfo`].
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
    let info = UnderlayInfo::new(&u);
    match a.format {
        OutputFormat::Json => out!("{}", render_json(&info)),
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
            out!("{}", serde_csv(&[row])?);
        }
        OutputFormat::Table => {
            outln!("underlay      {}", info.name);
            outln!("routers       {} (one silo each)", info.routers);
            outln!("links         {}", info.links);
            if let Some(m) = &u.measured {
                // A latency matrix: no lengths or routes, only measured pairs.
                let l = m
                    .latency_ms
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| k / m.n != k % m.n);
                let (lo, hi) = l.fold((f64::INFINITY, 0.0f64), |(lo, hi), (_, &v)| {
                    (lo.min(v), hi.max(v))
                });
                outln!(
                    "latency       {lo:.1} .. {hi:.1} ms one-way between sites (measured matrix; every pair its own route)"
                );
            } else {
                outln!("total length  {:.0} km", info.total_length_km);
            }
            match &info.diameter_bounds {
                _ if u.measured.is_some() => {}
                None => outln!(
                    "diameter      {:.0} km, {} hops, {:.1} ms (paper latency model: 0.0085 ms/km + 4 ms)",
                    info.diameter_km, info.diameter_hops, info.diameter_ms
                ),
                Some(b) if b.km_exact => outln!(
                    "diameter      {:.0} km, at least {} hops, {:.1} ms (paper latency model: 0.0085 ms/km + 4 ms; see note)",
                    info.diameter_km, info.diameter_hops, info.diameter_ms
                ),
                Some(b) => outln!(
                    "diameter      {:.0} to {:.0} km, at least {} hops, {:.1} to {:.1} ms (bounds; paper latency model: 0.0085 ms/km + 4 ms; see note)",
                    info.diameter_km, b.km_upper, info.diameter_hops, info.diameter_ms, b.ms_upper
                ),
            }
            if info.links == 0 {
                outln!("capacities    none (no links)");
            } else {
                outln!(
                    "capacities    {} .. {}",
                    format_bandwidth(info.min_capacity_bps),
                    format_bandwidth(info.max_capacity_bps)
                );
            }
            outln!(
                "no coords     {} router(s), {} position(s) estimated",
                info.routers_without_coordinates,
                info.estimated_positions.len()
            );
            for line in &info.notes {
                outln!("note          {line}");
            }
        }
    }
    Ok(())
}
