//! `fedtopo augment`: add arcs to a designed overlay while its cycle time
//! does not grow, and the Pareto front of cycle time against mixing.

use super::output::{out, outln};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use fedtopo::csv_file::serde_csv;
use fedtopo::design::{augment, AugmentOptions, AugmentPoint};
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::overlay::export::{silo_positions, ExportedOverlay};
use fedtopo::report::plot::{line_plot, Axes, Series};
use fedtopo::report::table::Table;
use fedtopo::report::{render_json, OutputFormat};

use super::args::{NetworkArgs, PlacementArgs, Setup, UnderlayArgs};
use super::choice::choice;

/// Options of `fedtopo augment`.
#[derive(Debug, Args)]
pub struct AugmentArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    #[command(flatten)]
    placement: PlacementArgs,
    /// The overlay to augment (a gossip overlay: ring-opt, delta-mbst, mst,
    /// ring, file:PATH, ...).
    #[arg(long, default_value = "ring-opt")]
    from: String,
    /// Relative cycle-time tolerance of the augmented overlay (0: no
    /// slower at all; 0.05: at most 5 % slower).
    #[arg(long, default_value_t = 0.0, value_parser = super::args::real(0.0, true, f64::INFINITY, false))]
    tolerance: f64,
    /// Arcs added past the tolerance to trace the Pareto front.
    #[arg(long, default_value_t = 30, value_parser = super::args::whole::<usize>(0, usize::MAX as u64))]
    front_steps: usize,
    /// Decay gamma of the effective number of neighbours ([Vogels22]).
    #[arg(long, default_value_t = 0.95, value_parser = super::args::real(0.0, true, 1.0, false))]
    gamma: f64,
    /// Score every candidate that keeps the cycle time exactly (the
    /// reference greedy, slow). By default undirected overlays are scored
    /// lazily under rigorous bounds (the same choices) and directed ones
    /// exactly only for the candidates of best estimated gap.
    #[arg(long)]
    exhaustive: bool,
    /// Output format of the steps.
    #[arg(long, value_parser = choice(OutputFormat::ALL, OutputFormat::name), default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Directory for points.csv, front-gap.svg, front-neighbours.svg and
    /// the augmented overlay (augmented.gml, augmented.json).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Augment more than 200 silos anyway (each step times every missing
    /// arc: the work grows as silos^5, hours to days).
    #[arg(long)]
    force: bool,
}

fn table(points: &[AugmentPoint], labels: &[String]) -> Table {
    let mut t = Table::new([
        "step",
        "phase",
        "added",
        "arcs",
        "cycle time (ms)",
        "spectral gap",
        "eff. neighbours",
        "front",
    ]);
    for p in points {
        let name = |i: usize| labels.get(i).map_or("?", String::as_str);
        t.row([
            p.step.to_string(),
            match p.phase {
                0 => "base".to_string(),
                1 => "within".to_string(),
                _ => "front".to_string(),
            },
            match (p.added_from, p.added_to) {
                (Some(a), Some(b)) => format!("{} -> {}", name(a), name(b)),
                _ => "-".to_string(),
            },
            p.arcs.to_string(),
            format!("{:.1}", p.cycle_time_ms),
            format!("{:.4}", p.spectral_gap),
            format!("{:.2}", p.effective_neighbours),
            match (p.front_gap, p.front_neighbours) {
                (true, true) => "gap, nb".to_string(),
                (true, false) => "gap".to_string(),
                (false, true) => "nb".to_string(),
                (false, false) => String::new(),
            },
        ]);
    }
    t.align_right([0, 3, 4, 5, 6]).shrink([2]);
    t
}

fn front_svg(points: &[AugmentPoint], neighbours: bool, title: &str) -> Result<String> {
    let value = |p: &AugmentPoint| {
        if neighbours {
            p.effective_neighbours
        } else {
            p.spectral_gap
        }
    };
    let on = |p: &AugmentPoint| {
        if neighbours {
            p.front_neighbours
        } else {
            p.front_gap
        }
    };
    let mut front: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| on(p))
        .map(|p| (p.cycle_time_ms, value(p)))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut series = vec![Series {
        name: "Pareto front".into(),
        points: front,
    }];
    for (name, phase) in [("base", 0u8), ("within tolerance", 1)] {
        let mut pts: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.phase == phase)
            .map(|p| (p.cycle_time_ms, value(p)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        if !pts.is_empty() {
            series.push(Series {
                name: name.into(),
                points: pts,
            });
        }
    }
    let axes = Axes {
        x_label: "cycle time (ms)".into(),
        y_label: if neighbours {
            "effective number of neighbours".into()
        } else {
            "spectral gap (local-degree weights)".into()
        },
        ..Axes::default()
    };
    line_plot(title, &axes, &series).map_err(|e| anyhow::anyhow!("SVG plot: {e}"))
}

/// Runs `fedtopo augment`.
pub fn run(a: AugmentArgs) -> Result<()> {
    let setup = Setup::load(&a.underlay, &a.network, &a.placement)?;
    let Setup {
        underlay, model, ..
    } = setup;
    let n = model.silo_count();
    if n > fedtopo::design::MAX_AUGMENT_SILOS && !a.force {
        bail!(
            "augment: {n} silos: every step times each of the about {} missing arcs (a max-plus \
             cycle time and a {n}x{n} eigendecomposition each), far beyond the bound of {} silos \
             (about 18 s a step there); give --force to run it anyway",
            n * (n - 1),
            fedtopo::design::MAX_AUGMENT_SILOS
        );
    }
    let kind: OverlayKind = a
        .from
        .parse()
        .map_err(|e| anyhow::anyhow!("--from `{}`: {e}", a.from))?;
    let base = build_overlay(kind, &underlay, &model, &BuildOptions::default())
        .map_err(|e| anyhow::anyhow!("--from `{}`: {e}", a.from))?;
    if !(a.tolerance.is_finite() && a.tolerance >= 0.0) {
        bail!("--tolerance {}: expected a finite number >= 0", a.tolerance);
    }
    let options = AugmentOptions {
        tolerance: a.tolerance,
        front_steps: a.front_steps,
        gamma: a.gamma,
        exhaustive: a.exhaustive,
        neighbours: true,
    };
    let result = augment(&base, &model, &options)?;
    if result.estimated_scans > 0 {
        eprintln!(
            "note: {} is directed on more than {} silos: {} step(s) scored exactly only the \
             candidates of best estimated spectral gap ({} or more; an approximation of the \
             greedy); --exhaustive scores them all",
            a.from,
            fedtopo::design::augment::DIRECTED_EXHAUSTIVE_MAX,
            result.estimated_scans,
            fedtopo::design::augment::DIRECTED_EXACT
        );
    }
    let placement = model.connectivity.placement();
    let labels = placement.labels(&underlay);
    match a.format {
        OutputFormat::Table => {
            outln!(
                "{} ({} silos): augmenting {} (tolerance {})",
                underlay.name,
                model.silo_count(),
                a.from,
                a.tolerance
            );
            outln!("{}", table(&result.points, &labels));
            let base_pt = &result.points[0];
            let last = result
                .points
                .iter()
                .rfind(|p| p.phase <= 1)
                .unwrap_or(base_pt);
            outln!(
                "augmented: {} arcs ({} added), cycle time {:.1} ms (base {:.1}), spectral gap {:.4} (base {:.4}, {:.2}x)",
                last.arcs,
                last.arcs - base_pt.arcs,
                last.cycle_time_ms,
                base_pt.cycle_time_ms,
                last.spectral_gap,
                base_pt.spectral_gap,
                last.spectral_gap / base_pt.spectral_gap
            );
        }
        OutputFormat::Csv => out!("{}", serde_csv(&result.points)?),
        OutputFormat::Json => out!("{}", render_json(&result.points)),
    }
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let write = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
        };
        write("points.csv", serde_csv(&result.points)?)?;
        let title = format!("{}: {} augmented", underlay.name, a.from);
        write("front-gap.svg", front_svg(&result.points, false, &title)?)?;
        write(
            "front-neighbours.svg",
            front_svg(&result.points, true, &title)?,
        )?;
        let t = fedtopo::timing::cycle_time(&result.augmented, &model)?;
        let e = ExportedOverlay::new(
            &result.augmented,
            &labels,
            Some(&model),
            Some(t.cycle_time_ms),
        )
        .with_positions(silo_positions(&underlay, placement));
        write("augmented.gml", e.to_gml())?;
        write("augmented.json", e.to_json())?;
    }
    Ok(())
}
