//! `fedtopo design`: search overlay families for the least predicted
//! wall-clock time to a target on this network, and export the winner.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use fedtopo::delay::DelayModel;
use fedtopo::design::search::{
    repredict, Candidate, CandidateOverlay, DesignOptions, RoundsPredictor,
};
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::overlay::build::{parse_overlay_list, BuildOptions};
use fedtopo::overlay::export::{silo_positions, ExportedOverlay};
use fedtopo::report::table::{serde_csv, Table};
use fedtopo::report::{render_json, OutputFormat};
use fedtopo::underlay::Underlay;

use super::args::{file_safe, CenterArgs, NetworkArgs, PlacementArgs, Setup, UnderlayArgs};
use super::choice::choice;

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
    /// Seed of MATCHA's and random overlays' draws.
    #[arg(long, default_value_t = 0)]
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
    #[arg(long, default_value_t = 4)]
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
    #[arg(long, default_value_t = 3)]
    probes: usize,
    /// Rounds of each probe run of --verify.
    #[arg(long, default_value_t = 50)]
    probe_rounds: u64,
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
    });
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
    for (k, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("--calibrate {}:{}", path.display(), k + 2))?;
        let num = |i: usize| -> Result<Option<f64>> {
            let t = rec.get(i).unwrap_or("").trim();
            if t.is_empty() {
                return Ok(None);
            }
            t.parse::<f64>().map(Some).map_err(|_| {
                anyhow::anyhow!(
                    "--calibrate {}:{}: `{t}` is not a number",
                    path.display(),
                    k + 2
                )
            })
        };
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

/// Runs `fedtopo design`.
pub fn run(a: DesignArgs) -> Result<()> {
    let kinds = parse_overlay_list(&a.overlays)?;
    if !(a.base_rounds.is_finite() && a.base_rounds >= 0.0) {
        anyhow::bail!(
            "--base-rounds {}: expected a finite number >= 0",
            a.base_rounds
        );
    }
    let setup = Setup::load(&a.underlay, &a.network, &a.placement)?;
    let build = setup.build_options(&a.center, a.seed)?;
    let Setup {
        underlay, model, ..
    } = setup;
    let options = DesignOptions {
        kinds,
        fastest_weights: !a.no_fastest,
        augmented: !a.no_augmented,
        gamma: a.gamma,
        ..DesignOptions::default()
    };
    let mut predictor = RoundsPredictor::proxy(a.base_rounds);
    let total = options.kinds.len() + if options.augmented { 2 } else { 0 };
    let bar = fedtopo::report::progress::Progress::new(
        "design",
        "candidates",
        total as u64,
        true,
        "{prefix}: [{bar:30}] {pos}/{len} {msg}",
    );
    let mut candidates = fedtopo::design::search::design_candidates_with_progress(
        &underlay,
        &model,
        &build,
        &options,
        &predictor,
        &mut |done, _, what| {
            bar.set_message(what);
            bar.set_position(done as u64);
        },
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    bar.finish();
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
            println!(
                "{} ({} silos): {} candidates, predicted rounds = {}",
                underlay.name,
                model.silo_count(),
                candidates.len(),
                predictor.source
            );
            println!("{}", table(&candidates));
            if let Some(w) = candidates.first() {
                println!(
                    "predicted winner: {} (weights: {}), {:.1} ms per round x {:.1} rounds = {:.2} s",
                    w.name,
                    w.weights,
                    w.cycle_time_ms,
                    w.predicted_rounds,
                    w.predicted_time_ms / 1e3
                );
            }
            if let Some(err) = predictor.rms_relative_error {
                println!(
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
                println!(
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
                println!(
                    "measured winner: {} (weights: {}), {:.2} s to the target ({} rounds)",
                    w.name,
                    w.weights,
                    w.measured_time_ms.unwrap_or(f64::NAN) / 1e3,
                    w.measured_rounds.map_or("?".into(), |r| format!("{r:.0}"))
                );
            }
        }
        OutputFormat::Csv => print!("{}", serde_csv(&candidates)?),
        OutputFormat::Json => print!(
            "{}",
            render_json(&serde_json::json!({
                "underlay": underlay.name,
                "silos": model.silo_count(),
                "predictor": predictor,
                "candidates": candidates,
            }))
        ),
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
