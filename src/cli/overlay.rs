//! `fedtopo overlay`: build one overlay and write it out.

use super::output::out;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;

use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::overlay::build::OverlayKind;
use fedtopo::overlay::dcliques::count::edge_counts;
use fedtopo::overlay::export::{silo_positions, ExportedOverlay};

use super::args::{build_options, CenterArgs, NetworkArgs, UnderlayArgs};
use super::compare::ExportFormat;

/// Options of `fedtopo overlay`.
#[derive(Debug, Args)]
pub struct OverlayArgs {
    /// Overlay: star, mst, delta-mbst, ring, ring-opt, complete, a random
    /// graph (er:p=P|k=K, ba:m=M, regular:k=K, chung-lu:gamma=G,k=K, torus),
    /// dcliques[-greedy|-random|-oneclass][-ring|-fractal|-smallworld|-full][+ca],
    /// dc-random-regular10, dc-diverse-random10, dc-node-ring, dc-grid, dc-fully-connected,
    /// matcha[+], exp, exp-1peer, base:k=K, d-equistatic, od-equidyn (along
    /// the ring-opt tour; `:order=identity` for the silos' order),
    /// multigraph[:base=ring|ring-opt|mst|delta-mbst|star,t_max=T,weak=idle|background]
    /// ([Do23]), or file:PATH (a GML, node-link JSON, CSV or per-round file).
    /// Schedules (MATCHA, exp-1peer, base, od-equidyn, multigraph, per-round
    /// files) are written per round in JSON (not multigraph:weak=background,
    /// whose arcs span rounds).
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
    /// Output file (default: standard output; `-`: standard output even
    /// when it is a terminal and the text is longer than a screenful, which
    /// is otherwise refused).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Seed of random overlays (er, ba, regular, chung-lu).
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// D-Cliques overlays only: build the topology over this many abstract
    /// nodes instead of the underlay's silos (no timing).
    #[arg(long, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
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

/// Rows of a terminal whose size is unknown (and of `LINES` unset).
const DEFAULT_SCREEN_ROWS: usize = 24;

/// Whether `lines` lines of output would go to a terminal screen of
/// `screen_rows` rows without the user asking: refused when stdout is a
/// terminal, no `-o` was given (`-o -` asks for stdout explicitly) and the
/// text is longer than a screenful (`overlay matcha` is megabytes of JSON).
fn refuse_on_terminal(
    output: Option<&Path>,
    stdout_is_terminal: bool,
    lines: usize,
    screen_rows: usize,
) -> bool {
    output.is_none() && stdout_is_terminal && lines > screen_rows
}

/// Rows of the terminal on stdout: `LINES` when it holds a number >= 5,
/// else the terminal's, else [`DEFAULT_SCREEN_ROWS`].
fn screen_rows() -> usize {
    let env = std::env::var("LINES")
        .ok()
        .and_then(|l| l.trim().parse::<usize>().ok());
    let term = console::Term::stdout()
        .size_checked()
        .map(|(rows, _)| usize::from(rows));
    env.filter(|&r| r >= 5)
        .or(term.filter(|&r| r >= 5))
        .unwrap_or(DEFAULT_SCREEN_ROWS)
}

/// Writes `text` (`what`: `GML`, `JSON`) to `output` or standard output
/// (`None` or `-`); refuses more than a screenful to a terminal unless the
/// output is `-`. Returns the file written, if any.
fn emit(output: &Option<PathBuf>, what: &str, text: &str) -> Result<Option<PathBuf>> {
    let stdout = output.as_deref().is_none_or(|p| p == Path::new("-"));
    if !stdout {
        let path = output.clone().unwrap_or_default();
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        return Ok(Some(path));
    }
    let lines = text.lines().count();
    let rows = screen_rows();
    if refuse_on_terminal(
        output.as_deref(),
        std::io::stdout().is_terminal(),
        lines,
        rows,
    ) {
        bail!(
            "not printing {lines} lines ({} bytes) of {what} to the terminal, more than its {rows} \
             rows: write it to a file with `-o FILE`, pipe it (`| less`), or print it anyway \
             with `-o -`",
            text.len()
        );
    }
    out!("{text}");
    Ok(None)
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
    emit(&a.output, a.format.name(), &a.format.render(&e))?;
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
    let mut knobs = a.center.knobs();
    knobs.push(("seed", a.seed.to_string()));
    knobs.extend(a.dcliques.knobs());
    let options = build_options(&knobs, &underlay, model.connectivity.placement())?;
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
    let (what, text) = if overlay.is_schedule() {
        let e = fedtopo::design::export::schedule_with_weights(&overlay, &labels)?;
        if let Some(note) = e.connectivity_note() {
            eprintln!("warning: {note}");
        }
        ("JSON", e.to_json())
    } else {
        let e = fedtopo::design::export::overlay_with_weights(
            &overlay,
            &labels,
            &model,
            Some(t.cycle_time_ms),
        )?
        .with_positions(silo_positions(&underlay, placement));
        (a.format.name(), a.format.render(&e))
    };
    if let Some(path) = emit(&a.output, what, &text)? {
        eprintln!(
            "{}: {} arcs, cycle time {:.1} ms, written to {}",
            a.kind,
            overlay.degree_stats().arcs,
            t.cycle_time_ms,
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_than_a_screenful_to_a_terminal_is_refused_unless_asked() {
        // `overlay matcha` on a terminal: 5.6 MB of JSON, refused.
        assert!(refuse_on_terminal(None, true, 200_000, 50));
        assert!(
            !refuse_on_terminal(None, true, 50, 50),
            "a screenful is fine"
        );
        assert!(
            !refuse_on_terminal(None, false, 200_000, 50),
            "a pipe or file"
        );
        let dash = PathBuf::from("-");
        assert!(
            !refuse_on_terminal(Some(&dash), true, 200_000, 50),
            "-o - asks for it"
        );
        let file = PathBuf::from("ring.gml");
        assert!(!refuse_on_terminal(Some(&file), true, 200_000, 50));
    }
}
