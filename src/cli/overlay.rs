//! `fedtopo overlay`: build one overlay and write it out.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::overlay::build::{BuildOptions, OverlayKind};
use fedtopo::overlay::dcliques::count::edge_counts;
use fedtopo::overlay::export::{silo_positions, ExportedOverlay};

use super::args::{center_policy, CenterArgs, NetworkArgs, UnderlayArgs};
use super::compare::ExportFormat;

/// Options of `fedtopo overlay`.
#[derive(Debug, Args)]
pub struct OverlayArgs {
    /// Overlay: star, mst, delta-mbst, ring, ring-opt, complete, a random
    /// graph (er:p=P|k=K, ba:m=M, regular:k=K, chung-lu:gamma=G,k=K, torus),
    /// dcliques[-greedy|-random|-oneclass][-ring|-fractal|-smallworld|-full][+ca],
    /// dc-random-regular10, dc-diverse-random10, dc-node-ring, dc-grid, dc-fully-connected,
    /// matcha[+], exp, exp-1peer, base:k=K, d-equistatic, od-equidyn (along
    /// the ring-opt tour; `:order=identity` for the silos' order), or
    /// file:PATH (a GML, node-link JSON, CSV or per-round file). Schedules
    /// (MATCHA, exp-1peer, base, od-equidyn, per-round files) are written per
    /// round in JSON.
    kind: OverlayKind,
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    #[command(flatten)]
    center: CenterArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Gml)]
    format: ExportFormat,
    /// Output file (default: standard output).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Seed of random overlays (er, ba, regular, chung-lu).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// D-Cliques overlays only: build the topology over this many abstract
    /// nodes instead of the underlay's silos (no timing).
    #[arg(long)]
    nodes: Option<usize>,
    #[command(flatten)]
    dcliques: super::dcliques::DCliquesArgs,
    /// MATCHA overlays only: also write the solved design as JSON to this
    /// file (silo labels, matchings, activation probabilities, lambda_2 and
    /// its certified upper bound, alpha, rho), e.g. to check the optimum
    /// with another solver (experiments/matcha-sdp-check).
    #[arg(long, value_name = "PATH")]
    matcha_design: Option<PathBuf>,
}

/// What `--matcha-design` writes: the silo labels (index `i` of the
/// matchings is `silos[i]`) and the solved design.
#[derive(serde::Serialize)]
struct MatchaDesignDump<'a> {
    silos: &'a [String],
    design: &'a fedtopo::overlay::matcha::MatchaDesign,
}

/// Writes `text` to `output` or standard output.
fn emit(output: &Option<PathBuf>, text: &str) -> Result<()> {
    match output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
        }
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// `fedtopo overlay dcliques... --nodes N`: the abstract topology.
fn run_abstract(a: &OverlayArgs, n: usize) -> Result<()> {
    let OverlayKind::DCliques(d) = a.kind else {
        bail!(
            "--nodes is only for D-Cliques overlays (dcliques..., dc-...), not `{}`",
            a.kind
        );
    };
    if n == 0 {
        bail!("--nodes must be at least 1");
    }
    let t = a.dcliques.build()?.topology(d, n)?;
    let c = edge_counts(&t);
    let labels: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let e = ExportedOverlay::new(&t.overlay(), &labels, None, None);
    emit(&a.output, &a.format.render(&e))?;
    eprintln!(
        "{}: {} nodes, {} cliques, {} edges ({} intra), {:.2} edges/node, messages/node/round: \
         {:.2} (paper's count), {:.2} (real flow)",
        t.name,
        n,
        t.cliques.len(),
        c.edges,
        c.intra_edges,
        c.edges_per_node,
        c.paper_messages_per_node,
        c.real_messages_per_node
    );
    Ok(())
}

/// Runs `fedtopo overlay`.
pub fn run(a: OverlayArgs) -> Result<()> {
    if let Some(n) = a.nodes {
        return run_abstract(&a, n);
    }
    let underlay = a.underlay.load(false)?;
    let model = a.network.delay_model(&underlay)?;
    let options = BuildOptions {
        center: center_policy(&a.center.center, &underlay)?,
        seed: a.seed,
        dcliques: a.dcliques.build()?,
        ..BuildOptions::default()
    };
    let overlay = EvaluatedOverlay::build(a.kind, &underlay, &model, &options)?;
    let t = overlay.cycle_time(&model)?;
    let placement = model.connectivity.placement();
    let labels = placement.labels(&underlay);
    if let Some(path) = &a.matcha_design {
        let design = overlay.matcha_design().with_context(|| {
            format!(
                "--matcha-design: `{}` is not a MATCHA overlay (matcha, matcha+, matcha:...)",
                a.kind
            )
        })?;
        let dump = MatchaDesignDump {
            silos: &labels,
            design,
        };
        let json = serde_json::to_string(&dump).context("--matcha-design: encoding")?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    let text = if overlay.is_schedule() {
        fedtopo::design::export::schedule_with_weights(&overlay, &labels)?.to_json()
    } else {
        let e = fedtopo::design::export::overlay_with_weights(
            &overlay,
            &labels,
            &model,
            Some(t.cycle_time_ms),
        )?
        .with_positions(silo_positions(&underlay, placement));
        a.format.render(&e)
    };
    match &a.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!(
                "{}: {} arcs, cycle time {:.1} ms, written to {}",
                a.kind,
                overlay.degree_stats().arcs,
                t.cycle_time_ms,
                path.display()
            );
        }
        None => print!("{text}"),
    }
    Ok(())
}
