//! `fedtopo underlay list|info`.

use anyhow::Result;
use clap::{Args, Subcommand};
use serde::Serialize;

use fedtopo::builtin::{BUILTIN_UNDERLAYS, DEFAULT_UNDERLAY};
use fedtopo::connectivity::ConnectivityOptions;
use fedtopo::report::table::serde_csv;
use fedtopo::report::{render_json, OutputFormat};
use fedtopo::underlay::diameter::{diameter, EXACT_DIAMETER_MAX_ROUTERS};
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
    /// Above the exact limit only: how far the diameter values are bounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    diameter_bounds: Option<DiameterBounds>,
    notes: Vec<String>,
}

/// How far the diameter of a large underlay is bounded (see
/// `fedtopo::underlay::diameter`): `diameter_km` and `diameter_ms` are the
/// longest route found, `diameter_hops` the most hops found.
#[derive(Debug, Serialize)]
struct DiameterBounds {
    /// Upper bound on the longest route, km.
    km_upper: f64,
    /// Upper bound on its latency, ms.
    ms_upper: f64,
    /// Whether `diameter_km` is proven exact.
    km_exact: bool,
    /// Always true: `diameter_hops` is a lower bound.
    hops_lower_bound: bool,
    /// Sources whose shortest-path tree was computed.
    sources_scanned: usize,
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
    let d = diameter(&u);
    let latency = ConnectivityOptions::default();
    // The latency of a route grows with its length, so the largest latency
    // is that of the longest route (0 ms with a single router).
    let ms = |km: f64| {
        if n < 2 {
            0.0
        } else {
            latency.route_latency_ms(km)
        }
    };
    let (dkm, dhops, dms) = (d.km, d.hops, ms(d.km));
    let bounds = (!d.all_pairs).then(|| DiameterBounds {
        km_upper: d.km_upper,
        ms_upper: ms(d.km_upper),
        km_exact: d.km_exact(),
        hops_lower_bound: true,
        sources_scanned: d.sources,
    });
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
        diameter_bounds: bounds,
        notes: report_lines(&u),
    };
    if let Some(b) = &info.diameter_bounds {
        info.notes.push(format!(
            "diameter from {} of {n} routers' shortest-path trees (all pairs only up to {} routers): {}; hops {} is the most found, a lower bound",
            b.sources_scanned,
            EXACT_DIAMETER_MAX_ROUTERS,
            if b.km_exact {
                format!("{dkm:.0} km is exact (every other pair is provably no longer)")
            } else {
                format!("the longest route is between {dkm:.0} and {:.0} km", b.km_upper)
            },
            dhops
        ));
    }
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
            match &info.diameter_bounds {
                None => println!(
                    "diameter      {:.0} km, {} hops, {:.1} ms (paper latency model: 0.0085 ms/km + 4 ms)",
                    info.diameter_km, info.diameter_hops, info.diameter_ms
                ),
                Some(b) if b.km_exact => println!(
                    "diameter      {:.0} km, at least {} hops, {:.1} ms (paper latency model: 0.0085 ms/km + 4 ms; see note)",
                    info.diameter_km, info.diameter_hops, info.diameter_ms
                ),
                Some(b) => println!(
                    "diameter      {:.0} to {:.0} km, at least {} hops, {:.1} to {:.1} ms (bounds; paper latency model: 0.0085 ms/km + 4 ms; see note)",
                    info.diameter_km, b.km_upper, info.diameter_hops, info.diameter_ms, b.ms_upper
                ),
            }
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
