//! `fedtopo compare`: cycle time of several overlays on one underlay.

use super::output::out;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use fedtopo::evaluate::compare::{compare_overlays, Comparison};
use fedtopo::evaluate::EvalError;
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::net::description::NetworkDescription;
use fedtopo::overlay::export::{silo_positions, ExportedOverlay};
use fedtopo::report::{render_csv, render_json, render_table, OutputFormat};

use super::args::{
    build_options, file_safe, CenterArgs, NetworkArgs, PlacementArgs, Setup, UnderlayArgs,
};
use super::choice::choice;

/// Format of exported overlay files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// GML (networkx `read_gml`).
    Gml,
    /// Graphviz DOT.
    Dot,
    /// JSON.
    Json,
}

impl ExportFormat {
    /// The format's name in messages (`GML`, `DOT`, `JSON`).
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Gml => "GML",
            ExportFormat::Dot => "DOT",
            ExportFormat::Json => "JSON",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            ExportFormat::Gml => "gml",
            ExportFormat::Dot => "dot",
            ExportFormat::Json => "json",
        }
    }

    /// The text of `e` in this format.
    pub fn render(self, e: &ExportedOverlay) -> String {
        match self {
            ExportFormat::Gml => e.to_gml(),
            ExportFormat::Dot => e.to_dot(),
            ExportFormat::Json => e.to_json(),
        }
    }
}

/// Options of `fedtopo compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    #[command(flatten)]
    placement: PlacementArgs,
    #[arg(long, help = super::args::overlays_help("Overlays to compare"), default_value = "star,mst,delta-mbst,ring,ring-opt", value_parser = super::args::overlay_list)]
    overlays: super::args::OverlayList,
    #[command(flatten)]
    center: CenterArgs,
    /// Output format.
    #[arg(long, value_parser = choice(OutputFormat::ALL, OutputFormat::name), default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Also write every overlay to this directory (schedules as
    /// NAME.rounds.json, readable with `--overlays file:PATH`).
    #[arg(long)]
    export_dir: Option<PathBuf>,
    /// Format of the exported overlays.
    #[arg(long, value_enum, default_value_t = ExportFormat::Gml)]
    export_format: ExportFormat,
    /// MATCHA communication budget Cb, in [0.001, 1].
    #[arg(long, default_value_t = 0.5, value_parser = super::args::parse_budget)]
    budget: f64,
    /// Seed of MATCHA's per-round activations.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Rounds sampled for MATCHA's cycle time (1 to 1000000).
    #[arg(long, default_value_t = 1000, value_parser = super::args::matcha_rounds)]
    matcha_rounds: u64,
    #[command(flatten)]
    dcliques: super::dcliques::DCliquesArgs,
    /// Also write DIR/report.html: one self-contained page (no network
    /// needed to view it) with the table, a map of every overlay and the
    /// network.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
}

/// Runs `fedtopo compare`.
pub fn run(a: CompareArgs) -> Result<()> {
    let kinds = a.overlays.kinds.clone();
    let setup = Setup::load(&a.underlay, &a.network, &a.placement)?;
    let Setup {
        underlay,
        spec,
        model,
    } = setup;
    let mut knobs = a.center.knobs();
    knobs.extend([
        ("seed", a.seed.to_string()),
        ("budget", a.budget.to_string()),
        ("matcha_rounds", a.matcha_rounds.to_string()),
    ]);
    knobs.extend(a.dcliques.knobs());
    let options = build_options(&knobs, &underlay, model.connectivity.placement())?;
    let mut cmp = compare_overlays(&underlay, &model, &kinds, &options)?;
    cmp.network = Some(NetworkDescription::new(&underlay, &spec, &model)?);
    let text = match a.format {
        OutputFormat::Table => render_table(&cmp),
        OutputFormat::Csv => render_csv(&cmp),
        OutputFormat::Json => render_json(&cmp),
    };
    out!("{text}");
    if let Some(dir) = &a.report {
        write_report(dir, &cmp, &underlay, &model)?;
    }
    if let Some(dir) = &a.export_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let placement = model.connectivity.placement();
        let labels = placement.labels(&underlay);
        let positions = silo_positions(&underlay, placement);
        // Schedules (MATCHA, per-round files) are written per round, in JSON.
        for (overlay, row) in cmp.overlays.iter().zip(&cmp.rows) {
            let stem = file_safe(&row.overlay);
            let (path, text) = if overlay.is_schedule() {
                let e = match fedtopo::design::export::schedule_with_weights(overlay, &labels) {
                    Err(fedtopo::design::export::ExportError::Eval(
                        e @ EvalError::LaggedRounds { .. },
                    )) => {
                        eprintln!("note: not exported: {e}");
                        continue;
                    }
                    r => r?,
                };
                if let Some(note) = e.connectivity_note() {
                    eprintln!("warning: {note} (--matcha-rounds)");
                }
                (dir.join(format!("{stem}.rounds.json")), e.to_json())
            } else {
                let e = fedtopo::design::export::overlay_with_weights(
                    overlay,
                    &labels,
                    &model,
                    Some(row.cycle_time_ms),
                )?
                .with_positions(positions.clone());
                (
                    dir.join(format!("{stem}.{}", a.export_format.extension())),
                    a.export_format.render(&e),
                )
            };
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}

/// `--report DIR`: the comparison as a self-contained HTML page.
fn write_report(
    dir: &std::path::Path,
    cmp: &Comparison,
    underlay: &fedtopo::net::underlay::Underlay,
    model: &fedtopo::net::delay::DelayModel,
) -> Result<()> {
    let mut page = super::report_page::page(&format!(
        "fedtopo compare: {} ({} silos)",
        cmp.underlay, cmp.silos
    ));
    let t = fedtopo::report::comparison_table(cmp, |r| match &r.schedule {
        Some(s) => format!(
            "schedule over {} rounds: max-plus rate {:.1} ms, round estimate {:.1} ms",
            s.rounds, s.maxplus_ms, s.mean_round_ms
        ),
        None => r.critical_circuit.join(" -> "),
    });
    let s = page.section("Cycle times");
    s.table(&t);
    if let Some(c) = &cmp.star_center {
        s.note(&format!(
            "speed-up vs STAR centred at {c} (--center {})",
            cmp.star_center_policy.as_deref().unwrap_or("")
        ));
    }
    for r in &cmp.rows {
        if let Some(x) = &r.approximation {
            s.note(&format!("{}: {x}", r.overlay));
        }
    }
    let overlays: Vec<&EvaluatedOverlay> = cmp.overlays.iter().collect();
    super::report_page::maps(page.section("Maps"), underlay, model, &overlays);
    if let Some(n) = &cmp.network {
        super::report_page::network_section(&mut page, underlay, model, n);
    }
    super::report_page::write(&page, dir)
}
