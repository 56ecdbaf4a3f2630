//! `fedtopo design`: search overlay families for the least predicted
//! wall-clock time to a target on this network, export the candidates,
//! calibrate on measured runs and verify by training. The work is the
//! library's ([`fedtopo::design`]); this file parses and prints.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use fedtopo::design::calibrate::{
    calibrate, measured_winner, read_summary, Calibration, MeasuredWinner,
};
use fedtopo::design::export::export_all;
use fedtopo::design::search::{design_candidates, Candidate, DesignOptions, RoundsPredictor};
use fedtopo::overlay::build::parse_overlay_list;
use fedtopo::report::table::{serde_csv, Table};
use fedtopo::report::{render_json, OutputFormat};

use super::args::{CenterArgs, NetworkArgs, PlacementArgs, Setup, UnderlayArgs};
use super::choice::choice;
use super::training::TrainingArgs;

/// Options of `fedtopo design`.
#[derive(Debug, Args)]
pub struct DesignArgs {
    #[command(flatten)]
    underlay: UnderlayArgs,
    #[command(flatten)]
    network: NetworkArgs,
    #[command(flatten)]
    placement: PlacementArgs,
    /// Overlay kinds searched (each with its default weights; undirected
    /// static ones also with fastest-mixing weights).
    #[arg(
        long,
        default_value = "star,mst,delta-mbst,ring,ring-opt,matcha,matcha+,regular:k=4,dcliques-ring,exp,exp-1peer,base:k=1,base:k=2,base:k=3,d-equistatic,od-equidyn",
        value_parser = super::args::overlay_list
    )]
    overlays: String,
    #[command(flatten)]
    center: CenterArgs,
    /// Rounds exact averaging needs to reach the target (the proxy's
    /// topology-independent part): predicted rounds = this + mixing time.
    #[arg(long, default_value_t = 15.0)]
    base_rounds: f64,
    /// Do not add fastest-mixing-weight variants.
    #[arg(long)]
    no_fastest: bool,
    /// Do not add the arc-augmented ring-opt and delta-MBST.
    #[arg(long)]
    no_augmented: bool,
    /// Decay gamma of the effective number of neighbours ([Vogels22]).
    #[arg(long, default_value_t = 0.95)]
    gamma: f64,
    /// Seed of MATCHA's and random overlays' draws (and, with --verify, of
    /// the data, initialisation and batches).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// MATCHA communication budget Cb, in [0.001, 1].
    #[arg(long, default_value_t = 0.5, value_parser = super::args::parse_budget)]
    budget: f64,
    #[command(flatten)]
    dcliques: super::dcliques::DCliquesArgs,
    /// Output format of the candidate table.
    #[arg(long, value_parser = choice(OutputFormat::ALL, OutputFormat::name), default_value_t = OutputFormat::Table)]
    format: OutputFormat,
    /// Directory for candidates.csv and every candidate's overlay under
    /// overlays/ (NAME.gml and NAME.json, or NAME.rounds.json for a
    /// schedule; consensus weights included), readable with
    /// `--overlays file:PATH`; prints the `fedtopo train` command that
    /// verifies the top candidates.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Candidates verified (--verify) or named in the printed `fedtopo
    /// train` command.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..))]
    top: u64,
    /// Calibrate the rounds predictor on measured runs: a `summary.csv` of
    /// `fedtopo train` (its `rounds_to_target`; a run that did not reach
    /// the target is a lower bound at its `rounds`); rows are matched to
    /// candidates by overlay name or by the file stem of `file:` overlays
    /// written by `--out`. Fits predicted rounds = a + b x mixing time,
    /// prints its RMS relative error, re-ranks, and reports the measured
    /// winner.
    #[arg(long, value_name = "SUMMARY_CSV")]
    calibrate: Option<PathBuf>,
    /// Calibrate and verify by training (feature `train`, needs --out and a
    /// target): short runs (--probe-rounds) of --probes candidates spread
    /// over the mixing times fit the predictor, then the --top candidates
    /// of the new ranking are trained (--rounds) and the measured winner is
    /// reported. Every run is timed on this command's network (--access,
    /// --core-capacity, --silos-csv, ...) and trains from the exported file
    /// of its candidate; accuracy is evaluated every round unless
    /// --eval-every says otherwise. The training options are `train`'s
    /// (--dataset, --model, --target-acc, --rounds, ...).
    #[arg(long, requires = "out")]
    verify: bool,
    /// Probe overlays of --verify.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    probes: u64,
    /// Rounds of each probe run of --verify.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    probe_rounds: u64,
    #[command(flatten)]
    training: TrainingArgs,
    /// Options after `--` (no longer taken: the training options are given
    /// with the others).
    #[arg(last = true, hide = true)]
    after_dashes: Vec<String>,
}

fn table(c: &[Candidate]) -> Table {
    let measured = c
        .iter()
        .any(|x| x.measured_rounds.is_some() || x.rounds_tried.is_some());
    let mut header = vec![
        "rank",
        "overlay",
        "weights",
        "arcs",
        "cycle time (ms)",
        "spectral gap",
        "eff. nb.",
        "mixing time",
        "pred. rounds",
        "pred. time (s)",
    ];
    if measured {
        header.extend(["meas. rounds", "meas. time (s)"]);
    }
    let mut t = Table::new(header);
    for (i, x) in c.iter().enumerate() {
        let mut row = vec![
            (i + 1).to_string(),
            x.display_name(),
            x.weights.clone(),
            x.arcs.to_string(),
            format!("{:.1}", x.cycle_time_ms),
            format!("{:.4}", x.spectral_gap),
            format!("{:.2}", x.effective_neighbours),
            format!("{:.1}", x.mixing_time),
            format!("{:.1}", x.predicted_rounds),
            format!("{:.2}", x.predicted_time_ms / 1e3),
        ];
        if measured {
            row.push(match (x.measured_rounds, x.rounds_tried) {
                (Some(r), _) => format!("{r:.0}"),
                (None, Some(n)) => format!("not reached in {n}"),
                (None, None) => "-".into(),
            });
            row.push(
                x.measured_time_ms
                    .map_or("-".into(), |t| format!("{:.2}", t / 1e3)),
            );
        }
        t.row(row);
    }
    t.align_right(if measured {
        vec![0, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    } else {
        vec![0, 3, 4, 5, 6, 7, 8, 9]
    });
    t
}

/// What calibration used, for stderr: unmatched and unused runs.
fn calibration_notes(c: &Calibration) {
    if !c.unmatched.is_empty() {
        eprintln!(
            "note: calibration: {} run(s) match no candidate, not used: {}",
            c.unmatched.len(),
            c.unmatched.join(", ")
        );
    }
    if !c.unused.is_empty() {
        eprintln!(
            "note: calibration: {} run(s) give neither rounds to the target nor a bound \
             (no `rounds` column, or a candidate that does not mix), not used: {}",
            c.unused.len(),
            c.unused.join(", ")
        );
    }
    if let Some(why) = &c.kept {
        eprintln!("note: calibration: {why}; the predictor is kept");
    }
}

/// ` (file PATH)` when the candidate was exported.
fn file_note(c: &Candidate) -> String {
    c.file
        .as_ref()
        .map_or(String::new(), |f| format!("; file {f}"))
}

/// The lines after the table: winners, predictor, errors.
fn summary_lines(
    candidates: &[Candidate],
    predictor: &RoundsPredictor,
    calibration: Option<&Calibration>,
    winner: Option<&MeasuredWinner>,
    eval_every: u64,
    #[cfg_attr(not(feature = "train"), allow(unused_variables))] verification: Option<
        &VerifyReport,
    >,
) {
    if let Some(w) = candidates.first() {
        println!(
            "predicted winner: {} (weights: {}), {:.1} ms per round x {:.1} rounds = {:.2} s{}",
            w.display_name(),
            w.weights,
            w.cycle_time_ms,
            w.predicted_rounds,
            w.predicted_time_ms / 1e3,
            file_note(w)
        );
    }
    if let Some(err) = predictor.rms_relative_error {
        println!(
            "predictor: rounds = {:.2} + {:.3} x mixing time ({}), RMS relative error {:.1} % over the runs that reached the target",
            predictor.a,
            predictor.b,
            predictor.source,
            100.0 * err
        );
    }
    if let Some(c) = calibration {
        if c.censored > 0 {
            println!(
                "calibration: {} run(s) reached the target, {} did not within their rounds \
                 (used as lower bounds; {} predicted below its bound)",
                c.reached, c.censored, c.below_bound
            );
        }
    }
    #[cfg(feature = "train")]
    if let Some(v) = verification {
        if let Some((err, k)) = v.out_of_sample {
            println!(
                "verification: predicted vs measured rounds of the {k} verified candidate(s) that were not probes and reached the target: RMS relative error {:.1} % (out of sample)",
                100.0 * err
            );
        }
    }
    let tried: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.measured_rounds.is_some() || c.rounds_tried.is_some())
        .collect();
    match winner {
        Some(w) => {
            let c = &candidates[w.index];
            println!(
                "measured winner: {} (weights: {}), {:.2} s to the target ({} rounds){}",
                c.display_name(),
                c.weights,
                c.measured_time_ms.unwrap_or(f64::NAN) / 1e3,
                c.measured_rounds.map_or("?".into(), |r| format!("{r:.0}")),
                file_note(c)
            );
            if !w.ties.is_empty() {
                let ties: Vec<String> = w
                    .ties
                    .iter()
                    .map(|&k| {
                        let t = &candidates[k];
                        format!(
                            "{} ({:.2} s)",
                            t.display_name(),
                            t.measured_time_ms.unwrap_or(f64::NAN) / 1e3
                        )
                    })
                    .collect();
                println!(
                    "tied with it within one evaluation step ({eval_every} rounds): {}",
                    ties.join(", ")
                );
            }
        }
        None if !tried.is_empty() => {
            let rounds: Vec<String> = tried
                .iter()
                .map(|c| {
                    format!(
                        "{} ({})",
                        c.display_name(),
                        c.rounds_tried.map_or("?".into(), |n| n.to_string())
                    )
                })
                .collect();
            println!(
                "measured winner: none: no measured candidate reached the target (rounds tried: {})",
                rounds.join(", ")
            );
        }
        None => {}
    }
}

#[cfg(feature = "train")]
type VerifyReport = fedtopo::design::verify::Verification;
#[cfg(not(feature = "train"))]
type VerifyReport = ();

/// Runs `fedtopo design`.
pub fn run(a: DesignArgs) -> Result<()> {
    if !a.after_dashes.is_empty() {
        bail!(
            "design takes the training options of --verify directly (e.g. `--verify --dataset \
             fashion-mnist --target-acc 0.8 --rounds 200`), not after `--`; the network options \
             (--access, --core-capacity, ...) apply to the training runs too. Found after `--`: {}",
            a.after_dashes.join(" ")
        );
    }
    let kinds = parse_overlay_list(&a.overlays)?;
    let mut predictor = RoundsPredictor::checked_proxy(a.base_rounds)
        .map_err(|e| anyhow::anyhow!("--base-rounds: {e}"))?;
    let setup = Setup::load(&a.underlay, &a.network, &a.placement)?;
    let mut build = setup.build_options(&a.center, a.seed)?;
    build.matcha.budget = a.budget;
    build.dcliques = a.dcliques.build()?;
    #[cfg_attr(not(feature = "train"), allow(unused_mut))]
    let Setup {
        underlay,
        spec,
        mut model,
    } = setup;
    // The data comes first under --verify: D-Cliques are designed on its
    // labels, and --real-model-size times the network with the model.
    #[cfg(feature = "train")]
    let prepared = if a.verify {
        Some(super::verify::prepare(
            &a.training,
            a.seed,
            &underlay,
            &spec,
            &mut model,
            &mut build,
        )?)
    } else {
        None
    };
    #[cfg(not(feature = "train"))]
    {
        let _ = &spec;
        if a.verify {
            bail!(
                "--verify trains models: this fedtopo is built without the `train` feature (see \
                 README \"Training on the simulated network\"); calibrate from a train run's \
                 summary with --calibrate instead"
            );
        }
    }
    let options = DesignOptions {
        kinds,
        fastest_weights: !a.no_fastest,
        augmented: !a.no_augmented,
        gamma: a.gamma,
        ..DesignOptions::default()
    };
    let mut candidates = design_candidates(&underlay, &model, &build, &options, &predictor)?;
    let mut calibration = None;
    if let Some(path) = &a.calibrate {
        let runs = read_summary(path).with_context(|| "--calibrate".to_string())?;
        let c = calibrate(
            &mut candidates,
            &mut predictor,
            &runs,
            &path.display().to_string(),
        )?;
        calibration_notes(&c);
        calibration = Some(c);
    }
    // The evaluation step of the measured runs, for ties: every round under
    // --verify; `train`'s default for a --calibrate summary.
    let eval_every = a
        .training
        .eval_every
        .unwrap_or(if a.verify { 1 } else { 5 });
    #[cfg_attr(not(feature = "train"), allow(unused_mut))]
    let mut verification: Option<VerifyReport> = None;
    #[cfg(feature = "train")]
    if let (Some(p), Some(dir)) = (&prepared, &a.out) {
        let v = super::verify::run(
            p,
            &a.training,
            &underlay,
            &model,
            &build,
            &mut candidates,
            &mut predictor,
            super::verify::Plan {
                probes: a.probes as usize,
                probe_rounds: a.probe_rounds,
                top: a.top as usize,
                eval_every,
                dir: dir.clone(),
            },
        )?;
        calibration_notes(&v.calibration);
        for n in &v.notes {
            eprintln!("note: {n}");
        }
        calibration = Some(v.calibration.clone());
        verification = Some(v);
    }
    let mut skipped = Vec::new();
    if let Some(dir) = &a.out {
        skipped = export_all(
            &dir.join("overlays"),
            &mut candidates,
            &underlay,
            &model,
            &build,
        )?;
        let p = dir.join("candidates.csv");
        std::fs::write(&p, serde_csv(&candidates)?)
            .with_context(|| format!("writing {}", p.display()))?;
    }
    for s in &skipped {
        eprintln!("note: {s}: Clique Averaging has no overlay file; train it by name");
    }
    let winner = measured_winner(&candidates, eval_every);
    match a.format {
        OutputFormat::Table => {
            println!(
                "{} ({} silos): {} candidates, predicted rounds = {}",
                underlay.name,
                model.silo_count(),
                candidates.len(),
                predictor.source
            );
            println!("{}", table(&candidates));
            summary_lines(
                &candidates,
                &predictor,
                calibration.as_ref(),
                winner.as_ref(),
                eval_every,
                verification.as_ref(),
            );
        }
        OutputFormat::Csv => print!("{}", serde_csv(&candidates)?),
        OutputFormat::Json => print!(
            "{}",
            render_json(&serde_json::json!({
                "underlay": underlay.name,
                "silos": model.silo_count(),
                "predictor": predictor,
                "calibration": calibration,
                "verification": verification,
                "winner": winner.as_ref().map(|w| &candidates[w.index].name),
                "ties": winner.as_ref().map(|w| w.ties.iter().map(|&k| candidates[k].name.clone()).collect::<Vec<_>>()),
                "candidates": candidates,
            }))
        ),
    }
    if let Some(dir) = &a.out {
        let overlays = dir.join("overlays");
        if a.verify {
            eprintln!(
                "wrote {}/candidates.csv, {} overlay(s) under {}, training runs under {}/probes and {}/verify, features and outcomes of every run in {}/runs.csv",
                dir.display(),
                candidates.len() - skipped.len(),
                overlays.display(),
                dir.display(),
                dir.display(),
                dir.display()
            );
            return Ok(());
        }
        let top: Vec<String> = candidates
            .iter()
            .filter_map(|c| c.file.as_ref())
            .take(a.top as usize)
            .map(|p| format!("file:{p}"))
            .collect();
        // The same network: the printed command repeats its options.
        let network: String = a
            .network
            .as_flags()
            .iter()
            .map(|f| format!(" {f}"))
            .collect();
        eprintln!(
            "wrote {}/candidates.csv and {} overlay(s) under {}; verify the top {} with:\n  \
             fedtopo train{}{network} --overlays {} --target-acc ACC --out {}/train\n\
             then: fedtopo design ... --calibrate {}/train/summary.csv",
            dir.display(),
            candidates.len() - skipped.len(),
            overlays.display(),
            top.len(),
            a.underlay
                .underlay
                .as_deref()
                .map_or(String::new(), |u| format!(" {u}")),
            top.join(","),
            dir.display(),
            dir.display()
        );
        if a.placement.silos.is_some() || a.placement.silos_per_router.is_some() {
            eprintln!(
                "note: `fedtopo train` places one silo per router; train this placement with \
                 `design --verify` instead"
            );
        }
    }
    Ok(())
}
