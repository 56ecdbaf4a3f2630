//! `fedtopo design`: search overlay families for the least predicted
//! wall-clock time to a target on this network, export the candidates,
//! calibrate on measured runs and verify by training. The work is the
//! library's ([`fedtopo::design`]); this file parses and prints.

use super::output::{out, outln};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use fedtopo::csv_file::serde_csv;
use fedtopo::design::calibrate::{
    calibrate, measured_winner, read_summary, verified_count, Calibration, MeasuredWinner,
    VERIFY_PROBES, VERIFY_PROBE_ROUNDS, VERIFY_TOP, VERIFY_WINDOW,
};
use fedtopo::design::export::export_all;
use fedtopo::design::search::{
    design_search, Candidate, CandidateOverlay, DesignOptions, RoundsPredictor,
};
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::mixing::FastestOptions;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::underlay::Underlay;
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{BuildOptions, OverlayKind};
use fedtopo::overlay::matcha::MatchaVariant;
use fedtopo::report::table::Table;
use fedtopo::report::{render_json, OutputFormat};

use super::args::{CenterArgs, NetworkArgs, PlacementArgs, Setup, UnderlayArgs};
use super::choice::choice;
use super::training::TrainingArgs;

/// The candidate kinds searched by default
/// ([`fedtopo::design::search::DEFAULT_CANDIDATES`]).
const DEFAULT_OVERLAYS: &str = fedtopo::design::search::DEFAULT_CANDIDATES;

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
    /// static ones also with fastest-mixing weights). A default kind that
    /// does not fit the network (e.g. `regular:k=4` on 3 silos) is skipped
    /// with a note; a kind given here that does not fit is an error.
    #[arg(
        long,
        default_value = DEFAULT_OVERLAYS,
        value_parser = super::args::overlay_list
    )]
    overlays: super::args::OverlayList,
    #[command(flatten)]
    center: CenterArgs,
    /// Rounds predictor: `fitted` (the default: `ln rounds` from mixing
    /// time, silos, effective neighbours, time variation and label
    /// heterogeneity, fitted on the runs of experiments/design, see
    /// experiments/design/README.md) or `proxy` (--base-rounds + mixing
    /// time, the earlier guess). --calibrate and --verify fit the level of
    /// `fitted` (its shape kept) or the line of `proxy` on measured runs.
    #[arg(long, default_value = "fitted", value_parser = ["fitted", "proxy"])]
    predictor: String,
    /// Label heterogeneity of the data the fitted predictor ranks for, in
    /// [0, 1]: 0 for iid data, 0.8 for two label shards of ten classes per
    /// silo (the mean total-variation distance between a silo's labels
    /// and all silos'). Under --verify, the loaded data's own value.
    #[arg(long, default_value_t = 0.0, value_parser = super::args::real(0.0, true, 1.0, true))]
    label_heterogeneity: f64,
    /// Share of the data's heterogeneity that its label counts explain, in
    /// [0, 1] (matters with --label-heterogeneity above 0): 1 when a
    /// silo's examples of a class look like every silo's (label shards of
    /// one data set), about 0.2 when every silo labels its features by its
    /// own model (LEAF Synthetic). Under --verify, the loaded data's own
    /// value (see docs/design.md).
    #[arg(long, default_value_t = fedtopo::design::search::DEFAULT_LABEL_SHARE, value_parser = super::args::real(0.0, true, 1.0, true))]
    label_share: f64,
    /// Rounds exact averaging needs to reach the target (the proxy's
    /// topology-independent part): predicted rounds = this + mixing time
    /// (with `--predictor proxy`).
    #[arg(long, default_value_t = 15.0, value_parser = super::args::real(0.0, false, fedtopo::design::calibration::MAX_BASE_ROUNDS, true))]
    base_rounds: f64,
    /// Do not add fastest-mixing-weight variants.
    #[arg(long)]
    no_fastest: bool,
    /// Do not add the arc-augmented ring-opt and delta-MBST.
    #[arg(long)]
    no_augmented: bool,
    /// Decay gamma of the effective number of neighbours ([Vogels22]).
    #[arg(long, default_value_t = 0.95, value_parser = super::args::real(0.0, true, 1.0, false))]
    gamma: f64,
    /// Seed of MATCHA's and random overlays' draws (and, with --verify, of
    /// the data, initialisation and batches).
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
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
    /// train` command: the first --top of the ranking, and the next ones
    /// predicted within --window of the best (at most --top more).
    #[arg(long, default_value_t = VERIFY_TOP as u64, value_parser = super::args::whole::<u64>(1, u64::MAX))]
    top: u64,
    /// Besides the --top, verify (or name) every candidate predicted within
    /// this factor of the best predicted time, at most --top more: the
    /// default 1.4 is about (1 + 0.18)^2, two predictions each off by the
    /// predictor's median out-of-sample error (18%) in opposite directions.
    /// 1 verifies the --top only.
    #[arg(long, default_value_t = VERIFY_WINDOW, value_parser = super::args::real(1.0, true, 1e6, true))]
    window: f64,
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
    #[arg(long, default_value_t = VERIFY_PROBES as u64, value_parser = super::args::whole::<u64>(1, 10_000))]
    probes: u64,
    /// --verify trains every run to the target or its rounds: without it, a
    /// run stops once its wall clock passes the best time to the target
    /// measured before it (it can no longer win or tie), and with the
    /// fitted predictor the top candidates train before the probes. The
    /// winner and its time are the same; the training is shorter.
    #[arg(long, requires = "verify")]
    no_race: bool,
    /// Rounds of each probe run of --verify.
    #[arg(long, default_value_t = VERIFY_PROBE_ROUNDS, value_parser = super::args::whole::<u64>(1, fedtopo::replay::MAX_ROUNDS))]
    probe_rounds: u64,
    /// Rounds each candidate is replayed to time it when --network is
    /// `paper` or `flow`: its mean round on that network ranks it (transfers
    /// share links there). On `maxplus` (the default) the exact max-plus
    /// cycle time of [Marfoq20] eq. (3) does, and nothing is replayed.
    #[arg(long, default_value_t = fedtopo::design::search::DEFAULT_REPLAY_ROUNDS, value_parser = super::args::whole::<u64>(1, fedtopo::replay::MAX_ROUNDS))]
    replay_rounds: u64,
    /// Also write DIR/report.html: one self-contained page (no network
    /// needed to view it) with the candidate table, cycle time against
    /// mixing time, the predicted winner's map and the network.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    #[command(flatten)]
    training: TrainingArgs,
    /// Options after `--` (no longer taken: the training options are given
    /// with the others).
    #[arg(last = true, hide = true)]
    after_dashes: Vec<String>,
}

/// The candidates as a table; `round_time` heads the column of their time
/// per round (`cycle time (ms)` on `maxplus`, the mean replayed round on
/// another network).
fn table(c: &[Candidate], round_time: &str) -> Table {
    let measured = c
        .iter()
        .any(|x| x.measured_rounds.is_some() || x.rounds_tried.is_some());
    let mut header = vec![
        "rank",
        "overlay",
        "weights",
        "arcs",
        round_time,
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
                (None, Some(n)) if x.stopped_behind_ms.is_some() => {
                    format!("behind the best after {n}")
                }
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
    })
    .shrink([2]);
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
) -> Result<()> {
    if candidates
        .first()
        .is_some_and(|w| !w.predicted_time_ms.is_finite())
    {
        outln!("no predicted winner: no candidate mixes (see the notes)");
    } else if let Some(w) = candidates.first() {
        outln!(
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
        outln!(
            "predictor: {} ({}), RMS relative error {:.1} % over the runs that reached the target",
            predictor.formula(),
            predictor.source,
            100.0 * err
        );
    }
    if let Some(c) = calibration {
        if c.censored > 0 {
            outln!(
                "calibration: {} run(s) reached the target, {} did not within their rounds \
                 (used as lower bounds; {} predicted below its bound)",
                c.reached,
                c.censored,
                c.below_bound
            );
        }
    }
    #[cfg(feature = "train")]
    if let Some(v) = verification {
        if let Some((err, k)) = v.out_of_sample {
            outln!(
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
            outln!(
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
                outln!(
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
            outln!(
                "measured winner: none: no measured candidate reached the target (rounds tried: {})",
                rounds.join(", ")
            );
        }
        None => {}
    }
    Ok(())
}

#[cfg(feature = "train")]
type VerifyReport = fedtopo::design::verify::Verification;
#[cfg(not(feature = "train"))]
type VerifyReport = ();

/// `--report DIR`: the candidates, the trade-off picture and the
/// predicted winner's map as a self-contained HTML page.
fn write_report(
    dir: &std::path::Path,
    candidates: &[Candidate],
    predictor: &RoundsPredictor,
    underlay: &Underlay,
    model: &DelayModel,
    spec: &fedtopo::net::scenario::NetworkSpec,
    build: &BuildOptions,
) -> Result<()> {
    use fedtopo::report::map::{draw_map, overlay_map, MapLayer, MapOptions};
    use fedtopo::report::plot::{line_plot, Axes, Series};
    let mut page = super::report_page::page(&format!(
        "fedtopo design: {} ({} silos)",
        underlay.name,
        model.silo_count()
    ));
    let s = page.section("Candidates");
    s.paragraph(&format!(
        "{} candidates ranked by predicted time to the target = cycle time x predicted rounds ({}: {}).",
        candidates.len(),
        predictor.source,
        predictor.formula()
    ));
    s.table(&table(candidates, "cycle time (ms)"));
    // Cycle time against mixing time, one point per candidate.
    let series: Vec<Series> = candidates
        .iter()
        .filter(|c| c.mixing_time.is_finite() && c.mixing_time > 0.0)
        .map(|c| Series {
            name: c.name.clone(),
            points: vec![(c.mixing_time, c.cycle_time_ms)],
        })
        .collect();
    let left_out = candidates.len() - series.len();
    let (lo, hi) = series.iter().fold((f64::INFINITY, 0.0f64), |a, s| {
        (a.0.min(s.points[0].0), a.1.max(s.points[0].0))
    });
    let axes = Axes {
        x_label: "mixing time (rounds)".into(),
        y_label: "cycle time (ms)".into(),
        log_x: hi > 20.0 * lo,
        ..Axes::default()
    };
    let s = page.section("Cycle time against mixing time");
    if series.is_empty() {
        s.error("no candidate has a finite mixing time");
    } else {
        match line_plot(
            "cycle time against mixing time, one point per candidate",
            &axes,
            &series,
        ) {
            Ok(svg) => s.figure(
                &svg,
                "lower left is better: predicted time = cycle time x predicted rounds",
            ),
            Err(e) => s.error(&format!("no plot: {e}")),
        };
    }
    if left_out > 0 {
        s.note(&format!(
            "{left_out} candidate(s) with an infinite mixing time (no consensus) are not drawn."
        ));
    }
    if let Some(w) = candidates.first() {
        let s = page.section("Map of the predicted winner");
        s.subheading(&w.name);
        let opts = MapOptions::default();
        let svg = match &w.overlay {
            CandidateOverlay::Kind(kind) => EvaluatedOverlay::build(*kind, underlay, model, build)
                .map_err(|e| e.to_string())
                .and_then(|e| {
                    let t = e.cycle_time(model).map_err(|e| e.to_string())?;
                    overlay_map(underlay, model, &e, Some(&t), &opts).map_err(|e| e.to_string())
                }),
            CandidateOverlay::Static { overlay, .. } => {
                let circuit = fedtopo::timing::cycle_time(overlay, model)
                    .map(|t| t.critical_circuit)
                    .unwrap_or_default();
                draw_map(
                    underlay,
                    model,
                    MapLayer::Overlay {
                        overlay,
                        critical_circuit: &circuit,
                        cycle_time_ms: Some(w.cycle_time_ms),
                    },
                    &opts,
                )
                .map_err(|e| e.to_string())
            }
        };
        match svg {
            Ok(svg) => s.figure(&svg, "arcs coloured by eq. (3) delay (ms); a static overlay's critical circuit highlighted, a schedule's arcs as wide as the share of rounds they are active in"),
            Err(e) => s.error(&format!("no map: {e}")),
        };
    }
    let network = fedtopo::net::description::NetworkDescription::new(underlay, spec, model)?;
    super::report_page::network_section(&mut page, underlay, model, &network);
    super::report_page::write(&page, dir)
}

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
    let mut kinds = a.overlays.kinds.clone();
    let mut predictor = match a.predictor.as_str() {
        "proxy" => RoundsPredictor::checked_proxy(a.base_rounds)
            .map_err(|e| anyhow::anyhow!("--base-rounds: {e}"))?,
        _ => RoundsPredictor::fitted(a.label_heterogeneity, a.label_share),
    };
    let setup = Setup::load(&a.underlay, &a.network, &a.placement)?;
    let mut knobs = a.center.knobs();
    knobs.extend([
        ("seed", a.seed.to_string()),
        ("budget", a.budget.to_string()),
    ]);
    knobs.extend(a.dcliques.knobs());
    #[cfg_attr(not(feature = "train"), allow(unused_mut))]
    let mut build = setup.build_options(&knobs)?;
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
    // The fitted predictor ranks for the data that will train.
    #[cfg(feature = "train")]
    if let (Some(p), true) = (&prepared, predictor.model.is_some()) {
        predictor = RoundsPredictor::fitted_for(&p.data);
    }
    #[cfg(not(feature = "train"))]
    {
        if a.verify {
            bail!(
                "--verify trains models: this fedtopo is built without the `train` feature (see \
                 docs/train.md, \"Training on the simulated network\"); calibrate from a train run's \
                 summary with --calibrate instead"
            );
        }
    }
    // Bounded work: fastest-mixing weights and arc augmentation grow as
    // n^3 per iteration / n^2 eigendecompositions per added arc.
    let n = model.silo_count();
    let fastest_note = fedtopo::mixing::fastest_work_note(n, FastestOptions::default().iterations);
    if let (false, Some(note)) = (a.no_fastest, &fastest_note) {
        eprintln!("note: design: {note} (the [fastest] candidates are left out)");
    }
    let augment_fits = n <= fedtopo::design::MAX_AUGMENT_SILOS;
    if !a.no_augmented && !augment_fits {
        eprintln!(
            "note: design: the arc-augmented candidates (ring-opt+aug, delta-mbst+aug) are left out: \
             augmenting times every missing arc at each step, beyond {} silos hours of work \
             ({n} silos here)",
            fedtopo::design::MAX_AUGMENT_SILOS
        );
    }
    let matcha_plus = OverlayKind::Matcha(MatchaVariant::MATCHA_PLUS);
    if a.overlays.text == DEFAULT_OVERLAYS
        && n > fedtopo::design::search::MAX_MATCHA_PLUS_SILOS
        && kinds.contains(&matcha_plus)
    {
        kinds.retain(|k| *k != matcha_plus);
        eprintln!(
            "note: design: matcha+ is left out: its activation probabilities take a dense {n} x {n} \
             eigendecomposition per solver step, beyond {} silos minutes of work (ask for it with \
             --overlays to run it)",
            fedtopo::design::search::MAX_MATCHA_PLUS_SILOS
        );
    }
    let options = DesignOptions {
        kinds,
        fastest_weights: !a.no_fastest && fastest_note.is_none(),
        augmented: !a.no_augmented && augment_fits,
        gamma: a.gamma,
        skip_unbuildable: a.overlays.text == DEFAULT_OVERLAYS,
        network: a.training.network_model,
        replay_rounds: a.replay_rounds,
        ..DesignOptions::default()
    };
    if a.training.network_model != NetworkKind::Maxplus {
        eprintln!(
            "note: design: round times are the mean round of a {}-round replay of each candidate \
             on the {} network (--replay-rounds), not the max-plus cycle time of eq. (3)",
            a.replay_rounds, a.training.network_model
        );
    }
    let search = design_search(&underlay, &model, &build, &options, &predictor)?;
    for s in &search.skipped {
        eprintln!(
            "note: default candidate {} skipped: it does not fit this network ({})",
            s.kind, s.reason
        );
    }
    let mut candidates = search.candidates;
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
                window: a.window,
                eval_every,
                dir: dir.clone(),
                race: !a.no_race,
            },
        )?;
        if !v.stopped_behind.is_empty() {
            eprintln!(
                "note: {} run(s) stopped once slower than the best time measured before them \
                 (not reached: a lower bound; --no-race trains them to the target or their rounds): {}",
                v.stopped_behind.len(),
                v.stopped_behind.join(", ")
            );
        }
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
        eprintln!("note: {s}: no overlay file (Clique Averaging, all-reduce); train it by name");
    }
    let winner = measured_winner(&candidates, eval_every);
    match a.format {
        OutputFormat::Table => {
            outln!(
                "{} ({} silos): {} candidates, predicted rounds = {}",
                underlay.name,
                model.silo_count(),
                candidates.len(),
                predictor.source
            );
            let round_time = match a.training.network_model {
                NetworkKind::Maxplus => "cycle time (ms)".to_string(),
                network => format!("{network} round (ms)"),
            };
            outln!("{}", table(&candidates, &round_time));
            for c in &candidates {
                if let Some(note) = &c.note {
                    eprintln!("note: {}: {note}", c.name);
                }
            }
            summary_lines(
                &candidates,
                &predictor,
                calibration.as_ref(),
                winner.as_ref(),
                eval_every,
                verification.as_ref(),
            )?;
        }
        OutputFormat::Csv => out!("{}", serde_csv(&candidates)?),
        OutputFormat::Json => out!(
            "{}",
            render_json(&serde_json::json!({
                "underlay": underlay.name,
                "silos": model.silo_count(),
                "predictor": predictor,
                "network": a.training.network_model.name(),
                "replay_rounds": (a.training.network_model != NetworkKind::Maxplus).then_some(a.replay_rounds),
                "calibration": calibration,
                "verification": verification,
                "winner": winner.as_ref().map(|w| &candidates[w.index].name),
                "ties": winner.as_ref().map(|w| w.ties.iter().map(|&k| candidates[k].name.clone()).collect::<Vec<_>>()),
                "candidates": candidates,
            }))
        ),
    }
    if let Some(dir) = &a.report {
        write_report(
            dir,
            &candidates,
            &predictor,
            &underlay,
            &model,
            &spec,
            &build,
        )?;
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
        // The exported candidates in ranking order (an all-reduce is not
        // exported): their first --top, and those within --window.
        let exported: Vec<(f64, String)> = candidates
            .iter()
            .filter_map(|c| Some((c.predicted_time_ms, format!("file:{}", c.file.as_ref()?))))
            .collect();
        let predicted: Vec<f64> = exported.iter().map(|e| e.0).collect();
        let top: Vec<String> = exported
            .into_iter()
            .take(verified_count(&predicted, a.top as usize, a.window))
            .map(|e| e.1)
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
