//! `fedtopo design`: search overlay families for the least predicted
//! wall-clock time to a target on this network, and export the winner.

use super::output::{out, outln};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use fedtopo::delay::DelayModel;
use fedtopo::design::calibration::{first_duplicate, measured_value};
use fedtopo::design::search::{
    design_search, repredict, Candidate, CandidateOverlay, DesignOptions, RoundsPredictor,
};
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::mixing::FastestOptions;
use fedtopo::overlay::build::{parse_overlay_list, BuildOptions};
use fedtopo::overlay::export::{silo_positions, ExportedOverlay};
use fedtopo::report::table::{serde_csv, Table};
use fedtopo::report::{render_json, OutputFormat};
use fedtopo::underlay::Underlay;

use super::args::{file_safe, CenterArgs, NetworkArgs, PlacementArgs, Setup, UnderlayArgs};
use super::choice::choice;

/// The candidate kinds searched by default; a default kind that cannot be
/// built on the network (e.g. `regular:k=4` on 2 or 3 silos) is skipped
/// with a note.
const DEFAULT_OVERLAYS: &str = "star,mst,delta-mbst,ring,ring-opt,matcha,matcha+,regular:k=4,dcliques-ring,exp,exp-1peer,base:k=1,base:k=2,base:k=3,d-equistatic,od-equidyn,multigraph,multigraph:base=ring-opt";

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
    overlays: String,
    #[command(flatten)]
    center: CenterArgs,
    /// Rounds exact averaging needs to reach the target (the proxy's
    /// topology-independent part): predicted rounds = this + mixing time.
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
    /// Seed of MATCHA's and random overlays' draws.
    #[arg(long, default_value_t = 0, value_parser = super::args::whole::<u64>(0, u64::MAX))]
    seed: u64,
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
    /// Candidates verified by the printed `fedtopo train` command.
    #[arg(long, default_value_t = 4, value_parser = super::args::whole::<usize>(0, usize::MAX as u64))]
    top: usize,
    /// Calibrate the rounds predictor on measured runs: a `summary.csv` of
    /// `fedtopo train` (its `rounds_to_target`); rows are matched to
    /// candidates by overlay name or by the file stem of `file:` overlays
    /// written by `--out`. Fits predicted rounds = a + b x mixing time by
    /// least squares (its RMS relative error is printed), re-ranks, and
    /// reports the measured winner.
    #[arg(long, value_name = "SUMMARY_CSV")]
    calibrate: Option<PathBuf>,
    /// Calibrate and verify by training (feature `train`, needs --out):
    /// short runs (--probe-rounds) of --probes candidates spread over the
    /// mixing times fit the predictor, then the --top candidates of the new
    /// ranking are trained in full and the measured winner is reported.
    /// The training options (dataset, model, target, rounds, and the same
    /// network options as here) follow `--`: `fedtopo design --out d
    /// --verify -- --dataset synthetic --target-acc 0.8 --rounds 200`.
    #[arg(long, requires = "out")]
    verify: bool,
    /// Probe overlays of --verify.
    #[arg(long, default_value_t = 3, value_parser = super::args::whole::<usize>(0, usize::MAX as u64))]
    probes: usize,
    /// Rounds of each probe run of --verify.
    #[arg(long, default_value_t = 50, value_parser = super::args::whole::<u64>(1, fedtopo::replay::MAX_ROUNDS))]
    probe_rounds: u64,
    /// Also write DIR/report.html: one self-contained page (no network
    /// needed to view it) with the candidate table, cycle time against
    /// mixing time, the predicted winner's map and the network.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Options of the `fedtopo train` runs of --verify.
    #[arg(last = true, value_name = "TRAIN_OPTIONS")]
    train_options: Vec<String>,
}

fn table(c: &[Candidate]) -> Table {
    let measured = c.iter().any(|x| x.measured_rounds.is_some());
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
            x.name.clone(),
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
            row.push(x.measured_rounds.map_or("-".into(), |r| format!("{r:.0}")));
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

/// The file stem of a candidate's exported overlay.
fn candidate_stem(name: &str) -> String {
    file_safe(&name.replace([' ', '[', ']'], "_"))
        .trim_end_matches('_')
        .to_string()
}

/// One measured run of a `fedtopo train` summary.
struct Measured {
    overlay: String,
    rounds_to_target: Option<f64>,
    time_to_target_ms: Option<f64>,
    /// Mean round duration of the run, ms (when the summary has it).
    #[cfg_attr(not(feature = "train"), allow(dead_code))]
    ms_per_round: Option<f64>,
}

/// Reads the `overlay`, `rounds_to_target` and `time_to_target_ms`
/// columns of a `fedtopo train` summary.csv.
fn read_summary(path: &std::path::Path) -> Result<Vec<Measured>> {
    let text = fedtopo::input_file::read_text(path, fedtopo::input_file::MAX_INPUT_BYTES)
        .with_context(|| format!("--calibrate {}", path.display()))?;
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r
        .headers()
        .with_context(|| format!("--calibrate {}: reading the header", path.display()))?
        .clone();
    // A summary's other columns are not read, but a column named twice is
    // ambiguous.
    fedtopo::csv_file::Columns::unique(&h)
        .map_err(|m| anyhow::anyhow!("--calibrate {}:1: {m}", path.display()))?;
    let col = |name: &str| {
        h.iter().position(|c| c == name).ok_or_else(|| {
            anyhow::anyhow!(
                "--calibrate {}: expected a `fedtopo train` summary.csv with column `{name}` \
                 (a summary has the time-to-target columns only when train ran with \
                 --target-acc or --target-loss)",
                path.display()
            )
        })
    };
    let (o, rt, tt) = (
        col("overlay")?,
        col("rounds_to_target")?,
        col("time_to_target_ms")?,
    );
    let per_round = h.iter().position(|c| c == "ms_per_round");
    let mut out = Vec::new();
    let mut lines = Vec::new();
    for (k, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("--calibrate {}:{}", path.display(), k + 2))?;
        let line = rec.position().map_or(k as u64 + 2, |p| p.line());
        let num = |i: usize| -> Result<Option<f64>> {
            measured_value(rec.get(i).unwrap_or("")).map_err(|e| {
                anyhow::anyhow!(
                    "--calibrate {}:{line}:{}: column `{}`: {e}",
                    path.display(),
                    i + 1,
                    &h[i]
                )
            })
        };
        lines.push(line);
        out.push(Measured {
            overlay: rec.get(o).unwrap_or("").to_string(),
            rounds_to_target: num(rt)?,
            time_to_target_ms: num(tt)?,
            ms_per_round: match per_round {
                Some(i) => num(i)?,
                None => None,
            },
        });
    }
    if let Some((name, first, second)) =
        first_duplicate(out.iter().map(|m| m.overlay.as_str()).zip(lines))
    {
        anyhow::bail!(
            "--calibrate {}:{second}:{}: overlay `{name}` is measured twice (lines {first} and \
             {second}): give one row per overlay",
            path.display(),
            o + 1
        );
    }
    Ok(out)
}

/// The candidate a measured overlay name designates: the same name, or a
/// `file:` path whose stem is the candidate's exported stem.
fn matches(candidate: &Candidate, overlay: &str) -> bool {
    if candidate.name == overlay {
        return true;
    }
    let Some(path) = overlay.strip_prefix("file:") else {
        return false;
    };
    let file = std::path::Path::new(path)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or("");
    let stem = file
        .strip_suffix(".rounds.json")
        .or_else(|| file.strip_suffix(".gml"))
        .or_else(|| file.strip_suffix(".json"))
        .unwrap_or(file);
    stem == candidate_stem(&candidate.name)
}

/// Matches measured runs to candidates (filling their measured rounds and
/// time), fits the predictor to them and re-ranks; keeps the proxy when no
/// matched run reached the target.
fn calibrate(candidates: &mut [Candidate], predictor: &mut RoundsPredictor, measured: &[Measured]) {
    let mut probes = Vec::new();
    let mut unmatched = Vec::new();
    for m in measured {
        match candidates.iter_mut().find(|c| matches(c, &m.overlay)) {
            Some(c) => {
                c.measured_rounds = m.rounds_to_target;
                c.measured_time_ms = m.time_to_target_ms;
                if let Some(r) = m.rounds_to_target {
                    probes.push((c.mixing_time, r));
                }
            }
            None => unmatched.push(m.overlay.clone()),
        }
    }
    if !unmatched.is_empty() {
        eprintln!(
            "note: calibration: {} run(s) match no candidate, not used: {}",
            unmatched.len(),
            unmatched.join(", ")
        );
    }
    match RoundsPredictor::fit(&probes) {
        Some(p) => {
            *predictor = p;
            repredict(candidates, predictor);
        }
        None => {
            eprintln!("note: calibration: no matched run reached the target; the proxy is kept")
        }
    }
}

/// Candidates for probe runs: `k` spread evenly over the finite mixing times.
#[cfg(feature = "train")]
fn probe_indices(candidates: &[Candidate], k: usize) -> Vec<usize> {
    let mut finite: Vec<usize> = (0..candidates.len())
        .filter(|&i| candidates[i].mixing_time.is_finite())
        .collect();
    finite.sort_by(|&x, &y| {
        candidates[x]
            .mixing_time
            .total_cmp(&candidates[y].mixing_time)
    });
    if finite.len() <= k {
        return finite;
    }
    let mut out: Vec<usize> = (0..k)
        .map(|j| finite[j * (finite.len() - 1) / (k - 1).max(1)])
        .collect();
    out.dedup();
    out
}

/// `args` without `name VALUE` / `name=VALUE`.
#[cfg(feature = "train")]
fn without_option(args: &[String], name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for x in args {
        if skip {
            skip = false;
        } else if x == name {
            skip = true;
        } else if !x.starts_with(&format!("{name}=")) {
            out.push(x.clone());
        }
    }
    out
}

/// `--verify`: probe runs, fit, full runs of the top candidates.
#[cfg(feature = "train")]
fn verify(
    a: &DesignArgs,
    dir: &std::path::Path,
    candidates: &mut [Candidate],
    predictor: &mut RoundsPredictor,
    underlay: &Underlay,
    model: &DelayModel,
    build: &BuildOptions,
) -> Result<Vec<String>> {
    let overlays = dir.join("overlays");
    std::fs::create_dir_all(&overlays)
        .with_context(|| format!("creating {}", overlays.display()))?;
    let train = |files: &[PathBuf], rounds: Option<u64>, out: PathBuf| -> Result<Vec<Measured>> {
        let mut argv: Vec<String> = vec!["fedtopo".into(), "train".into()];
        if let Some(u) = &a.underlay.underlay {
            argv.push(u.clone());
        }
        let list: Vec<String> = files
            .iter()
            .map(|p| format!("file:{}", p.display()))
            .collect();
        argv.extend(["--overlays".into(), list.join(",")]);
        for reserved in ["--overlays", "--out", "--fresh"] {
            if a.train_options
                .iter()
                .any(|o| o == reserved || o.starts_with(&format!("{reserved}=")))
            {
                anyhow::bail!("--verify: give no {reserved} after `--`: design sets it");
            }
        }
        let has = |opt: &str| {
            a.train_options
                .iter()
                .any(|o| o == opt || o.starts_with(&format!("{opt}=")))
        };
        if !has("--target-acc") && !has("--target-loss") {
            anyhow::bail!(
                "--verify: give --target-acc ACC or --target-loss LOSS after `--`: \
                 the design search ranks overlays by their time to that target"
            );
        }
        match rounds {
            // Probe runs: their own round count replaces the user's.
            Some(r) => {
                argv.extend(without_option(&a.train_options, "--rounds"));
                argv.extend(["--rounds".into(), r.to_string()]);
            }
            None => argv.extend(a.train_options.iter().cloned()),
        }
        argv.extend([
            "--out".into(),
            out.display().to_string(),
            "--fresh".into(),
            "--summary-to-stderr".into(),
        ]);
        let cli = <super::Cli as clap::Parser>::try_parse_from(&argv)
            .map_err(|e| anyhow::anyhow!("--verify: the train options after `--`: {e}"))?;
        match cli.command {
            super::Command::Train(t) => super::train::run_train(*t)?,
            _ => anyhow::bail!("--verify: expected a train command"),
        }
        read_summary(&out.join("summary.csv"))
    };
    let probe_ids = probe_indices(candidates, a.probes.max(1));
    let mut files = Vec::new();
    for &i in &probe_ids {
        files.push(export_candidate(
            &overlays,
            &candidates[i],
            underlay,
            model,
            build,
        )?);
    }
    eprintln!(
        "verify: {} probe run(s) of {} rounds",
        files.len(),
        a.probe_rounds
    );
    let measured = train(&files, Some(a.probe_rounds), dir.join("probes"))?;
    calibrate(candidates, predictor, &measured);
    let top: Vec<usize> = (0..candidates.len().min(a.top.max(1))).collect();
    let mut files = Vec::new();
    for &i in &top {
        files.push(export_candidate(
            &overlays,
            &candidates[i],
            underlay,
            model,
            build,
        )?);
    }
    eprintln!("verify: full runs of the top {}", files.len());
    let names: Vec<String> = top.iter().map(|&i| candidates[i].name.clone()).collect();
    let measured = train(&files, None, dir.join("verify"))?;
    for m in &measured {
        if let Some(c) = candidates.iter_mut().find(|c| matches(c, &m.overlay)) {
            c.measured_rounds = m.rounds_to_target;
            c.measured_time_ms = m.time_to_target_ms;
            if let Some(ms) = m.ms_per_round {
                let rel = (ms - c.cycle_time_ms).abs() / c.cycle_time_ms.max(1e-9);
                if rel > 0.05 && !c.weights.contains("matcha") {
                    eprintln!(
                        "note: {}: the training run's {:.1} ms per round differs from the designed {:.1} ms: are the network options after `--` the same as design's?",
                        c.name, ms, c.cycle_time_ms
                    );
                }
            }
        }
    }
    Ok(names)
}

/// `--verify` without the `train` feature.
#[cfg(not(feature = "train"))]
fn verify(
    _a: &DesignArgs,
    _dir: &std::path::Path,
    _candidates: &mut [Candidate],
    _predictor: &mut RoundsPredictor,
    _underlay: &Underlay,
    _model: &DelayModel,
    _build: &BuildOptions,
) -> Result<Vec<String>> {
    anyhow::bail!(
        "--verify trains models: this fedtopo is built without the `train` feature (see README \
         \"Training on the simulated network\"); calibrate from a train run's summary with \
         --calibrate instead"
    )
}

/// Writes a candidate to `dir`; returns the file to train with.
fn export_candidate(
    dir: &std::path::Path,
    winner: &Candidate,
    underlay: &Underlay,
    model: &DelayModel,
    build: &BuildOptions,
) -> Result<PathBuf> {
    let placement = model.connectivity.placement();
    let labels = placement.labels(underlay);
    let positions = silo_positions(underlay, placement);
    let stem = candidate_stem(&winner.name);
    match &winner.overlay {
        CandidateOverlay::Kind(kind) => {
            let e = EvaluatedOverlay::build(*kind, underlay, model, build)?;
            if e.is_schedule() {
                let path = dir.join(format!("{stem}.rounds.json"));
                std::fs::write(&path, e.export_schedule(&labels)?.to_json())
                    .with_context(|| format!("writing {}", path.display()))?;
                return Ok(path);
            }
            let x = e
                .export(&labels, Some(model), Some(winner.cycle_time_ms))?
                .with_positions(positions);
            write_static(dir, &stem, &x)
        }
        CandidateOverlay::Static { overlay, weights } => {
            let mut x =
                ExportedOverlay::new(overlay, &labels, Some(model), Some(winner.cycle_time_ms))
                    .with_positions(positions);
            if let Some(w) = weights {
                x = x.with_weights(w);
            }
            write_static(dir, &stem, &x)
        }
    }
}

fn write_static(dir: &std::path::Path, stem: &str, x: &ExportedOverlay) -> Result<PathBuf> {
    let json = dir.join(format!("{stem}.json"));
    std::fs::write(&json, x.to_json()).with_context(|| format!("writing {}", json.display()))?;
    let gml = dir.join(format!("{stem}.gml"));
    std::fs::write(&gml, x.to_gml()).with_context(|| format!("writing {}", gml.display()))?;
    Ok(gml)
}

/// `--report DIR`: the candidates, the trade-off picture and the
/// predicted winner's map as a self-contained HTML page.
fn write_report(
    dir: &std::path::Path,
    candidates: &[Candidate],
    predictor: &RoundsPredictor,
    underlay: &Underlay,
    model: &DelayModel,
    spec: &fedtopo::scenario::NetworkSpec,
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
        "{} candidates ranked by predicted time to the target = cycle time x predicted rounds ({}: rounds = {:.2} + {:.3} x mixing time).",
        candidates.len(),
        predictor.source,
        predictor.a,
        predictor.b
    ));
    s.table(&table(candidates));
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
                "lower left is better: predicted time = cycle time x (a + b x mixing time)",
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
    let network = fedtopo::report::network::NetworkDescription::new(underlay, spec, model)?;
    super::report_page::network_section(&mut page, underlay, model, &network);
    super::report_page::write(&page, dir)
}

/// Runs `fedtopo design`.
pub fn run(a: DesignArgs) -> Result<()> {
    let kinds = parse_overlay_list(&a.overlays)?;
    fedtopo::design::calibration::check_base_rounds(a.base_rounds).map_err(anyhow::Error::msg)?;
    let setup = Setup::load(&a.underlay, &a.network, &a.placement)?;
    let build = setup.build_options(&a.center, a.seed)?;
    let Setup {
        underlay,
        model,
        spec,
    } = setup;
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
    let options = DesignOptions {
        kinds,
        fastest_weights: !a.no_fastest && fastest_note.is_none(),
        augmented: !a.no_augmented && augment_fits,
        gamma: a.gamma,
        skip_unbuildable: a.overlays == DEFAULT_OVERLAYS,
        ..DesignOptions::default()
    };
    let mut predictor = RoundsPredictor::proxy(a.base_rounds);
    let search = design_search(&underlay, &model, &build, &options, &predictor)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for s in &search.skipped {
        eprintln!(
            "note: default candidate {} skipped: it does not fit this network ({})",
            s.kind, s.reason
        );
    }
    let mut candidates = search.candidates;
    if let Some(path) = &a.calibrate {
        calibrate(&mut candidates, &mut predictor, &read_summary(path)?);
    }
    let mut verified_names = Vec::new();
    if a.verify {
        let dir = a.out.clone().unwrap_or_default();
        verified_names = verify(
            &a,
            &dir,
            &mut candidates,
            &mut predictor,
            &underlay,
            &model,
            &build,
        )?;
    }
    match a.format {
        OutputFormat::Table => {
            outln!(
                "{} ({} silos): {} candidates, predicted rounds = {}",
                underlay.name,
                model.silo_count(),
                candidates.len(),
                predictor.source
            );
            outln!("{}", table(&candidates));
            for c in &candidates {
                if let Some(note) = &c.note {
                    eprintln!("note: {}: {note}", c.name);
                }
            }
            if candidates
                .first()
                .is_some_and(|w| !w.predicted_time_ms.is_finite())
            {
                outln!("no predicted winner: no candidate mixes (see the notes)");
            } else if let Some(w) = candidates.first() {
                outln!(
                    "predicted winner: {} (weights: {}), {:.1} ms per round x {:.1} rounds = {:.2} s",
                    w.name,
                    w.weights,
                    w.cycle_time_ms,
                    w.predicted_rounds,
                    w.predicted_time_ms / 1e3
                );
            }
            if let Some(err) = predictor.rms_relative_error {
                outln!(
                    "predictor: rounds = {:.2} + {:.3} x mixing time, RMS relative error {:.1} % over the measured runs",
                    predictor.a,
                    predictor.b,
                    100.0 * err
                );
            }
            // Out of sample: predicted against measured rounds of the
            // verified candidates (not the probes the fit used).
            let verified: Vec<(f64, f64)> = candidates
                .iter()
                .filter(|c| verified_names.contains(&c.name))
                .filter_map(|c| c.measured_rounds.map(|m| (c.predicted_rounds, m)))
                .collect();
            if !verified.is_empty() {
                let err = (verified
                    .iter()
                    .map(|(p, m)| ((p - m) / m.max(1.0)).powi(2))
                    .sum::<f64>()
                    / verified.len() as f64)
                    .sqrt();
                outln!(
                    "verification: predicted vs measured rounds of the {} verified candidate(s) that reached the target: RMS relative error {:.1} %",
                    verified.len(),
                    100.0 * err
                );
            }
            if let Some(w) = candidates
                .iter()
                .filter(|c| c.measured_time_ms.is_some())
                .min_by(|x, y| {
                    x.measured_time_ms
                        .unwrap_or(f64::INFINITY)
                        .total_cmp(&y.measured_time_ms.unwrap_or(f64::INFINITY))
                })
            {
                outln!(
                    "measured winner: {} (weights: {}), {:.2} s to the target ({} rounds)",
                    w.name,
                    w.weights,
                    w.measured_time_ms.unwrap_or(f64::NAN) / 1e3,
                    w.measured_rounds.map_or("?".into(), |r| format!("{r:.0}"))
                );
            }
        }
        OutputFormat::Csv => out!("{}", serde_csv(&candidates)?),
        OutputFormat::Json => out!(
            "{}",
            render_json(&serde_json::json!({
                "underlay": underlay.name,
                "silos": model.silo_count(),
                "predictor": predictor,
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
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let p = dir.join("candidates.csv");
        std::fs::write(&p, serde_csv(&candidates)?)
            .with_context(|| format!("writing {}", p.display()))?;
        let overlays = dir.join("overlays");
        std::fs::create_dir_all(&overlays)
            .with_context(|| format!("creating {}", overlays.display()))?;
        let mut files = Vec::new();
        for c in &candidates {
            files.push(export_candidate(&overlays, c, &underlay, &model, &build)?);
        }
        let top: Vec<String> = files
            .iter()
            .take(a.top.max(1))
            .map(|p| format!("file:{}", p.display()))
            .collect();
        if a.verify {
            eprintln!(
                "wrote {}/candidates.csv and {} overlay(s) under {}; training runs under {}/probes and {}/verify",
                dir.display(),
                files.len(),
                overlays.display(),
                dir.display(),
                dir.display()
            );
            return Ok(());
        }
        eprintln!(
            "wrote {}/candidates.csv and {} overlay(s) under {}; verify the top {} with:\n  \
             fedtopo train{} --overlays {} --target-acc ACC --out {}/train\n\
             then: fedtopo design ... --calibrate {}/train/summary.csv",
            dir.display(),
            files.len(),
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
    }
    Ok(())
}
