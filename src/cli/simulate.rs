//! `fedtopo simulate`: replay training rounds in wall-clock time.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
use indicatif::{ProgressBar, ProgressStyle};

use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{
    build_overlay, overlay_cycle_time, parse_overlay_list, BuildOptions, OverlayKind,
};
use fedtopo::overlay::dcliques::timing::replay_clique_averaging;
use fedtopo::replay::{replay_with_progress, ReplayOptions, Straggler};
use fedtopo::report::replay::{
    link_usage, links_csv, round_stats, rounds_csv, starts_csv, timeline_svg,
};

use super::args::{center_policy, NetworkArgs, UnderlayArgs};

/// Options of `fedtopo simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    /// Overlays to replay, comma-separated, or `all`.
    #[arg(long, default_value = "star,mst,delta-mbst,ring")]
    overlays: String,
    /// STAR centre: load, first, fastest, or a silo label/id.
    #[arg(long, default_value = "load")]
    center: String,
    /// Number of rounds K.
    #[arg(long, default_value_t = 100)]
    rounds: u64,
    /// Network model: maxplus (eq. 3), paper (Appendix F), flow (max-min fair).
    #[arg(long = "network", value_enum, default_value_t = NetworkKind::Maxplus)]
    network_model: NetworkKind,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Random compute times: `none` or `lognormal:SIGMA`.
    #[arg(long, default_value = "none")]
    straggler: String,
    /// Directory for starts.csv, rounds.csv, links.csv and timeline.svg.
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    dcliques: super::dcliques::DCliquesArgs,
}

fn parse_straggler(s: &str) -> Result<Straggler> {
    if s == "none" {
        return Ok(Straggler::None);
    }
    if let Some(v) = s.strip_prefix("lognormal:") {
        let sigma: f64 = v
            .parse()
            .with_context(|| format!("--straggler lognormal:SIGMA: `{v}` is not a number"))?;
        if !(sigma.is_finite() && sigma > 0.0) {
            bail!("--straggler lognormal:SIGMA needs a finite sigma > 0, got {sigma}");
        }
        return Ok(Straggler::LogNormal { sigma });
    }
    bail!("--straggler `{s}`: expected none or lognormal:SIGMA (e.g. lognormal:0.3)")
}

/// Runs `fedtopo simulate`.
pub fn run(a: SimulateArgs) -> Result<()> {
    if a.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let underlay = a.underlay.load(false)?;
    let model = a.network.delay_model(&underlay)?;
    let kinds = parse_overlay_list(&a.overlays)?;
    let options = BuildOptions {
        center: center_policy(&a.center, &underlay)?,
        dcliques: a.dcliques.build()?,
        ..BuildOptions::default()
    };
    let ropts = ReplayOptions {
        rounds: a.rounds,
        straggler: parse_straggler(&a.straggler)?,
        seed: a.seed,
    };
    let labels: Vec<String> = underlay.routers.iter().map(|r| r.label.clone()).collect();
    let bar = ProgressBar::new(a.rounds * kinds.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} rounds ({eta})")
            .expect("valid template"),
    );
    let mut results = Vec::new();
    let mut taus = Vec::new();
    for kind in kinds {
        let overlay = build_overlay(kind, &underlay, &model, &options)?;
        taus.push(overlay_cycle_time(kind, &overlay, &model, &options)?.cycle_time_ms);
        bar.set_message(kind.name());
        let mut net = a.network_model.build(&model);
        if let OverlayKind::DCliques(d) = kind {
            if d.clique_averaging {
                // Two phases per round: gradients inside cliques, then models.
                if ropts.straggler != Straggler::None {
                    bail!("{kind}: --straggler is not supported for Clique Averaging replays");
                }
                let t = options.dcliques.topology(d, model.silo_count())?;
                let r = replay_clique_averaging(&t, &model, net.as_mut(), a.rounds)?;
                bar.inc(a.rounds);
                results.push(r.into_replay_result());
                continue;
            }
        }
        let r = replay_with_progress(&overlay, &model, net.as_mut(), &ropts, &mut |k| {
            if k > 0 {
                bar.inc(1)
            }
        })?;
        results.push(r);
    }
    bar.finish_and_clear();
    let mut table = Table::new();
    table.load_style(UTF8_BORDERS_ONLY);
    table.set_header(vec![
        "overlay",
        "network",
        "rounds",
        "mean round (ms)",
        "steady (ms)",
        "p95 (ms)",
        "max-plus cycle time (ms)",
        "ratio",
    ]);
    for (r, tau) in results.iter().zip(&taus) {
        let s = round_stats(r);
        table.add_row(vec![
            s.overlay.clone(),
            s.network.clone(),
            s.rounds.to_string(),
            format!("{:.1}", s.mean_ms),
            format!("{:.1}", s.steady_ms),
            format!("{:.1}", s.p95_ms),
            format!("{tau:.1}"),
            format!("{:.3}", s.steady_ms / tau),
        ]);
    }
    println!("{table}");
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let write = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
        };
        write("starts.csv", starts_csv(&results))?;
        write("rounds.csv", rounds_csv(&results))?;
        let usage: Vec<_> = results
            .iter()
            .map(|r| (r, link_usage(r, &model, &labels)))
            .collect();
        write("links.csv", links_csv(&usage))?;
        let title = format!("{} — {} network", underlay.name, a.network_model);
        write(
            "timeline.svg",
            timeline_svg(&results, &title).map_err(|e| anyhow::anyhow!("SVG plot: {e}"))?,
        )?;
    }
    Ok(())
}
