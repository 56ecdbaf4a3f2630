//! Verifying a design by training (feature `train`): the candidates of
//! [`super::search::design_candidates`] are trained on the network they
//! were designed for, from the very files they are exported to.
//!
//! [`verify`] takes a training [`Session`]: its underlay, delay model
//! (access and core capacities, silo and link files, workload) and build
//! options are the design's, so every training run is timed on the
//! designed network and builds D-Cliques from the data's labels
//! ([`crate::train::session::with_data_labels`]). Steps:
//!
//! 1. **Probes**: `probes` candidates spread over the mixing times train
//!    `probe_rounds` rounds; each run either reaches the target or is
//!    censored ("not reached within R rounds", a lower bound);
//! 2. **Calibration** ([`super::calibrate::calibrate`]): the rounds
//!    predictor is fitted to both and the candidates re-ranked;
//! 3. **Full runs**: the `top` candidates of the new ranking train
//!    `rounds` rounds (a probe that already reached the target is not run
//!    again: the same seed trains the same rounds);
//! 4. the measured winner, and the candidates tied with it within an
//!    evaluation step ([`super::calibrate::measured_winner`]).
//!
//! **Racing** ([`VerifyOptions::race`], on in `design --verify`): a run
//! stops once its wall clock passes the best time to the target measured
//! before it, since it can no longer win or tie (a lower bound on its
//! rounds, written as not reached). With the fitted predictor, whose
//! calibration moves every candidate by one factor and keeps the ranking,
//! the full runs of step 3 go first and the probes race against them. The
//! winner and its time are those of unraced runs; the training is a
//! fraction (experiments/design, the verification replayed on 38 cells:
//! 6.0x the winner's time to the target instead of 15.1x, median).
//!
//! Accuracy is evaluated every `eval_every` rounds (default 1: every
//! round, so that no evaluation step hides a lead); a run stops at the
//! first evaluation that meets the target. Every run's features (mixing
//! time, rounds to exact consensus, effective number of neighbours, static
//! or time-varying, label heterogeneity of the partition, evaluation step)
//! are written next to its measured rounds in `DIR/runs.csv`
//! ([`RunFeatures`]): the data a better rounds predictor is fitted on.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::calibrate::{
    calibrate, measured_winner, spread_over_mixing_times, verified_count, Calibration, MeasuredRun,
    MeasuredWinner,
};
use super::export::{export_candidate, ExportError};
use super::search::{Candidate, CandidateOverlay, RoundsPredictor};
use crate::mixing::consensus::ConsensusRule;
use crate::overlay::build::OverlayKind;
use crate::overlay::file::OverlayPath;
use crate::train::checkpoint::RunOptions;
use crate::train::report::{
    render_summary_csv, summarize, write_atomic, RoundRecord, SummaryRow, Target,
};
use crate::train::session::Session;
use crate::train::trainer::TrainError;

/// Settings of [`verify`].
#[derive(Debug, Clone, PartialEq)]
pub struct VerifyOptions {
    /// Probe candidates (>= 1), spread over the finite mixing times.
    pub probes: usize,
    /// Rounds of each probe run (>= 1).
    pub probe_rounds: u64,
    /// Candidates trained in full after calibration (>= 1), and more when
    /// predicted within [`Self::window`] of the best.
    pub top: usize,
    /// Also train in full every candidate predicted within this factor of
    /// the best predicted time (>= 1; 1: the `top` only), at most `top`
    /// more ([`super::calibrate::verified_count`],
    /// [`super::calibrate::VERIFY_WINDOW`]).
    pub window: f64,
    /// Rounds of each full run (>= 1).
    pub rounds: u64,
    /// Evaluate every this many rounds (>= 1; 1 in `design --verify`).
    pub eval_every: u64,
    /// The target the candidates race to.
    pub target: Target,
    /// Output directory: `overlays/` (the trained files), `probes/` and
    /// `verify/` (one run directory per candidate, `summary.csv`), `runs.csv`.
    pub dir: PathBuf,
    /// Race the runs: stop a run once its wall clock passes the best time
    /// to the target measured before it (plus what an evaluation step
    /// hides), since it can no longer win or tie; the winner and its time
    /// are those of full runs, at a fraction of the training. With the
    /// fitted predictor the top candidates train before the probes (its
    /// calibration keeps the ranking), so the probes race too.
    pub race: bool,
}

/// Which step of [`verify`] a run belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// A short calibration run.
    Probe,
    /// A full run of a top candidate.
    Full,
}

impl Phase {
    /// `probe` or `full`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Probe => "probe",
            Phase::Full => "full",
        }
    }
}

/// Progress of [`verify`], for a progress display.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// A run starts.
    Start {
        /// Probe or full run.
        phase: Phase,
        /// The candidate's name.
        candidate: &'a str,
        /// Rounds it trains at most.
        rounds: u64,
    },
    /// A round ended (`record`: the last evaluation).
    Round {
        /// Rounds done.
        round: u64,
        /// The latest evaluation.
        record: Option<&'a RoundRecord>,
    },
    /// The run ended.
    End,
}

/// One training run's features next to its measured outcome: a row of
/// `runs.csv`, what a rounds predictor is fitted on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunFeatures {
    /// Underlay name.
    pub underlay: String,
    /// Number of silos.
    pub silos: usize,
    /// `probe` or `full`.
    pub phase: Phase,
    /// Candidate name.
    pub candidate: String,
    /// Names merged into it, `; `-separated.
    pub same_as: String,
    /// Consensus weights.
    pub weights: String,
    /// Arcs of its first round.
    pub arcs: usize,
    /// Exact max-plus cycle time (schedules: their exact rate), ms.
    pub cycle_time_ms: f64,
    /// Per-round spectral gap `1 - SLEM`.
    pub spectral_gap: f64,
    /// Spectral mixing time `1 / (1 - SLEM)`, rounds (infinite: does not mix).
    pub spectral_mixing_time: f64,
    /// Rounds to exact consensus, when finite within the rounds examined.
    pub exact_rounds: Option<usize>,
    /// The mixing time the predictor uses: `exact_rounds` when finite, else
    /// the spectral one.
    pub mixing_time: f64,
    /// Effective number of neighbours (\[Vogels22\]).
    pub effective_neighbours: f64,
    /// True for a schedule that changes every round.
    pub time_varying: bool,
    /// True when a round's consensus matrix is not symmetric
    /// ([`super::predictor::is_asymmetric`]).
    pub asymmetric: bool,
    /// Dataset name.
    pub dataset: String,
    /// Partition of the data among silos.
    pub partition: String,
    /// Label heterogeneity of the partition
    /// ([`crate::train::data::FederatedData::label_heterogeneity`]).
    pub label_heterogeneity: f64,
    /// Model.
    pub model: String,
    /// Learning rate.
    pub lr: f64,
    /// Mini-batch size per silo and step.
    pub batch_size: usize,
    /// Local steps per round.
    pub local_steps: u32,
    /// Seed of data, initialisation and batches.
    pub seed: u64,
    /// Evaluation step, rounds.
    pub eval_every: u64,
    /// The target (`test_acc>=0.8`).
    pub target: String,
    /// Rounds the run could train (its budget).
    pub rounds_budget: u64,
    /// Rounds it trained: to the target, its budget, or fewer when stopped
    /// behind the best ([`Self::stopped_behind_ms`]).
    pub rounds_trained: u64,
    /// True when the target was reached within the budget.
    pub reached: bool,
    /// Rounds to the target (empty: not reached within `rounds_budget`, a
    /// censored observation).
    pub rounds_to_target: Option<u64>,
    /// Wall-clock time to the target, ms (empty: not reached).
    pub time_to_target_ms: Option<f64>,
    /// Measured mean round duration, ms.
    pub ms_per_round: f64,
    /// Rounds predicted before this run (the predictor before calibration
    /// for probes and, racing with the fitted predictor, the first full
    /// runs; the calibrated one for the others).
    pub predicted_rounds: f64,
    /// The best time measured before this run (ms, plus what an evaluation
    /// step hides) when the run was stopped for passing it without the
    /// target: a lower bound on its rounds, `rounds_to_target` empty.
    pub stopped_behind_ms: Option<f64>,
}

/// What [`verify`] did and found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verification {
    /// The probe fit.
    pub calibration: Calibration,
    /// Every run's features and outcome, in the order run (also in
    /// `DIR/runs.csv`).
    pub runs: Vec<RunFeatures>,
    /// Names of the candidates trained in full (or measured by a probe
    /// that reached the target).
    pub verified: Vec<String>,
    /// RMS relative error of the predicted against the measured rounds of
    /// the verified candidates that were not probes and reached the target
    /// (out of sample), with their number.
    pub out_of_sample: Option<(f64, usize)>,
    /// The measured winner (indices into the candidates, final order).
    pub winner: Option<MeasuredWinner>,
    /// Candidates whose run was stopped once it could no longer beat (or
    /// tie) the best time measured before it ([`VerifyOptions::race`]).
    pub stopped_behind: Vec<String>,
    /// Warnings (a run whose round duration differs from the designed
    /// cycle time).
    pub notes: Vec<String>,
}

/// Why verification failed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// Bad options.
    #[error("verify: {0}")]
    Options(String),
    /// A candidate could not be exported.
    #[error(transparent)]
    Export(#[from] ExportError),
    /// A training run failed.
    #[error("verify: training {candidate}")]
    Train {
        /// The candidate.
        candidate: String,
        /// The cause.
        source: TrainError,
    },
    /// Calibration failed.
    #[error(transparent)]
    Calibrate(#[from] super::calibrate::CalibrateError),
    /// An output could not be written.
    #[error("writing {path}: {source}")]
    Io {
        /// The file or directory.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> VerifyError + '_ {
    move |source| VerifyError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Candidates for probe runs: `k` spread evenly over the finite mixing
/// times (indices into `candidates`, [`spread_over_mixing_times`]).
pub fn probe_indices(candidates: &[Candidate], k: usize) -> Vec<usize> {
    let taus: Vec<f64> = candidates.iter().map(|c| c.mixing_time).collect();
    spread_over_mixing_times(&taus, k)
}

/// Checks the options against the session before any training.
fn check(session: &Session, options: &VerifyOptions, n: usize) -> Result<(), VerifyError> {
    let bad = |m: &str| Err(VerifyError::Options(m.to_string()));
    if n == 0 {
        return bad("no candidate to verify");
    }
    if options.probes == 0 || options.top == 0 {
        return bad("expected at least one probe and one top candidate");
    }
    if !(options.window.is_finite() && options.window >= 1.0) {
        return bad(&format!(
            "expected a window of at least 1 (a factor on the best predicted time), got {}",
            options.window
        ));
    }
    if options.probe_rounds == 0 || options.rounds == 0 || options.eval_every == 0 {
        return bad("probe rounds, rounds and the evaluation step must be at least 1");
    }
    if session.config.consensus != ConsensusRule::Auto {
        return bad(
            "the design ranks every candidate by the mixing of its own consensus weights \
             (consensus `auto`); verification trains them with those weights, so give no \
             other consensus rule",
        );
    }
    Ok(())
}

/// Trains `candidates` on `session` (probes, calibration of `predictor`,
/// full runs of the new top), records the measured rounds and times (or
/// the rounds tried) on them, exports every trained candidate under
/// `DIR/overlays/` (its [`Candidate::file`]) and writes `DIR/runs.csv`.
/// `candidates` must come from [`super::search::design_candidates`] on the
/// session's underlay, delay model and build options; they end sorted by
/// the calibrated prediction.
///
/// # Errors
/// Bad options, a consensus rule other than `auto`, a candidate that
/// cannot be exported or trained, an output that cannot be written.
pub fn verify(
    session: &Session,
    candidates: &mut [Candidate],
    predictor: &mut RoundsPredictor,
    options: &VerifyOptions,
    progress: impl FnMut(Progress<'_>),
) -> Result<Verification, VerifyError> {
    check(session, options, candidates.len())?;
    let dir = &options.dir;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut runner = Runner {
        session,
        options,
        heterogeneity: session.data.label_heterogeneity(),
        progress,
        runs: Vec::new(),
        notes: Vec::new(),
    };
    let probe_names: Vec<String> = probe_indices(candidates, options.probes)
        .into_iter()
        .map(|i| candidates[i].name.clone())
        .collect();
    let mut full_rows = Vec::new();
    let mut trained_full: Vec<String> = Vec::new();
    // 0. With the fitted predictor, calibration moves every candidate's
    // rounds by one factor and keeps the ranking: racing, the top runs go
    // first, so the probes race against a measured time from the start.
    if options.race && predictor.model.is_some() {
        for name in top_names(candidates, options.top, options.window) {
            full_rows.push(runner.train(candidates, &name, Phase::Full)?);
            trained_full.push(name);
        }
    }

    // 1. Probes (a candidate already trained in full is measured by that run).
    let mut measured = Vec::new();
    let mut probe_rows = Vec::new();
    for name in &probe_names {
        if trained_full.contains(name) {
            let c = &candidates[index_of(candidates, name)];
            measured.push(MeasuredRun {
                overlay: name.clone(),
                rounds: c.rounds_tried,
                rounds_to_target: c.measured_rounds,
                time_to_target_ms: c.measured_time_ms,
                ms_per_round: None,
            });
            continue;
        }
        let row = runner.train(candidates, name, Phase::Probe)?;
        measured.push(MeasuredRun {
            overlay: name.clone(),
            rounds: Some(row.rounds),
            rounds_to_target: row.rounds_to_target.map(|r| r as f64),
            time_to_target_ms: row.time_to_target_ms,
            ms_per_round: (row.ms_per_round > 0.0).then_some(row.ms_per_round),
        });
        probe_rows.push(row);
    }
    write_summary(&dir.join("probes"), &probe_rows, options.target)?;

    // 2. Calibration on the probes, reached and censored.
    let calibration = calibrate(candidates, predictor, &measured, "verify probes")?;

    // 3. Full runs of the new top not trained yet (a probe that reached
    // the target is its own full run: the same seed trains the same rounds).
    let top = top_names(candidates, options.top, options.window);
    for name in &top {
        let probe_reached = probe_names.contains(name)
            && candidates[index_of(candidates, name)]
                .measured_rounds
                .is_some();
        if !trained_full.contains(name) && !probe_reached {
            full_rows.push(runner.train(candidates, name, Phase::Full)?);
        }
    }
    let Runner { runs, notes, .. } = runner;
    let stopped_behind = runs
        .iter()
        .filter(|r| r.stopped_behind_ms.is_some())
        .map(|r| r.candidate.clone())
        .collect();
    write_summary(&dir.join("verify"), &full_rows, options.target)?;
    let path = dir.join("runs.csv");
    write_atomic(&path, &runs_csv(&runs).map_err(io(&path))?).map_err(io(&path))?;
    // Out of sample: the calibrated predictor against the verified
    // candidates that are not probes and reached the target.
    let out_of_sample: Vec<(f64, f64)> = top
        .iter()
        .filter(|name| !probe_names.contains(name))
        .filter_map(|name| {
            let c = &candidates[index_of(candidates, name)];
            Some((c.predicted_rounds, c.measured_rounds?))
        })
        .collect();
    let out_of_sample = (!out_of_sample.is_empty()).then(|| {
        let e = out_of_sample
            .iter()
            .map(|(p, m)| ((p - m) / m.max(1.0)).powi(2))
            .sum::<f64>()
            / out_of_sample.len() as f64;
        (e.sqrt(), out_of_sample.len())
    });
    Ok(Verification {
        calibration,
        runs,
        verified: top,
        out_of_sample,
        winner: measured_winner(candidates, options.eval_every),
        stopped_behind,
        notes,
    })
}

/// The names of the candidates of the current ranking trained in full:
/// the first `top`, and the next ones predicted within `window` of the
/// first ([`verified_count`]).
fn top_names(candidates: &[Candidate], top: usize, window: f64) -> Vec<String> {
    let predicted: Vec<f64> = candidates.iter().map(|c| c.predicted_time_ms).collect();
    candidates
        .iter()
        .take(verified_count(&predicted, top, window))
        .map(|c| c.name.clone())
        .collect()
}

/// The training runs of one [`verify`]: each timed on the session's
/// network, raced when [`VerifyOptions::race`] is on, its features kept.
struct Runner<'s, 'o, P> {
    session: &'s Session<'s>,
    options: &'o VerifyOptions,
    heterogeneity: f64,
    progress: P,
    runs: Vec<RunFeatures>,
    notes: Vec<String>,
}

impl<P: FnMut(Progress<'_>)> Runner<'_, '_, P> {
    /// Trains candidate `name` for its phase's rounds (probe or full),
    /// raced against the best time measured so far, and records the run.
    fn train(
        &mut self,
        candidates: &mut [Candidate],
        name: &str,
        phase: Phase,
    ) -> Result<SummaryRow, VerifyError> {
        let k = index_of(candidates, name);
        let cap = self.cap(candidates, k);
        let rounds = match phase {
            Phase::Probe => self.options.probe_rounds,
            Phase::Full => self.options.rounds,
        };
        let (row, features) = train_one(
            self.session,
            &mut candidates[k],
            phase,
            rounds,
            self.options,
            self.heterogeneity,
            cap,
            &mut self.progress,
            &mut self.notes,
        )?;
        self.runs.push(features);
        Ok(row)
    }

    /// The wall-clock time (ms) past which candidate `k` can no longer
    /// reach the target before, or tied with, the best time measured so
    /// far: that time plus what an evaluation step can hide,
    /// `(eval_every - 1) x cycle time` ([`measured_winner`]'s ties).
    /// `None` when not racing or nothing is measured yet.
    fn cap(&self, candidates: &[Candidate], k: usize) -> Option<f64> {
        if !self.options.race {
            return None;
        }
        let best = candidates
            .iter()
            .filter_map(|c| c.measured_time_ms)
            .min_by(f64::total_cmp)?;
        Some(best + self.options.eval_every.saturating_sub(1) as f64 * candidates[k].cycle_time_ms)
    }
}

fn index_of(candidates: &[Candidate], name: &str) -> usize {
    candidates
        .iter()
        .position(|c| c.name == name)
        .unwrap_or_default()
}

/// Exports `c` and trains it from its file (a Clique Averaging candidate,
/// which has no file form, by its kind) for at most `rounds` rounds,
/// stopping at the target; records the outcome on `c`.
#[allow(clippy::too_many_arguments)]
fn train_one(
    session: &Session,
    c: &mut Candidate,
    phase: Phase,
    rounds: u64,
    options: &VerifyOptions,
    heterogeneity: f64,
    behind_ms: Option<f64>,
    progress: &mut impl FnMut(Progress<'_>),
    notes: &mut Vec<String>,
) -> Result<(SummaryRow, RunFeatures), VerifyError> {
    let overlays = options.dir.join("overlays");
    let kind = match export_candidate(
        &overlays,
        c,
        session.underlay,
        session.model,
        session.options,
    ) {
        Ok(path) => {
            let text = path.display().to_string();
            c.file = Some(text.clone());
            OverlayKind::File(OverlayPath::new(&text))
        }
        Err(e) if e.no_file_form().is_some() => match &c.overlay {
            CandidateOverlay::Kind(k) => *k,
            CandidateOverlay::Static { .. } => {
                return Err(VerifyError::Options(format!(
                    "{}: no file form and no kind to train",
                    c.name
                )))
            }
        },
        Err(e) => return Err(e.into()),
    };
    let stem = super::calibrate::candidate_stem(&c.name);
    let run_dir = options.dir.join(phase_dir(phase)).join(&stem);
    if run_dir.exists() {
        std::fs::remove_dir_all(&run_dir).map_err(io(&run_dir))?;
    }
    progress(Progress::Start {
        phase,
        candidate: &c.name,
        rounds,
    });
    let opts = RunOptions {
        rounds,
        eval_every: options.eval_every,
        checkpoint_every: 0,
        dir: Some(run_dir),
        stop_after: None,
        stop_at: Some(options.target),
        stop_behind_ms: behind_ms,
    };
    let records = session
        .train(kind, &opts, |r, recs| {
            progress(Progress::Round {
                round: r,
                record: recs.last(),
            })
        })
        .map_err(|source| VerifyError::Train {
            candidate: c.name.clone(),
            source,
        })?;
    progress(Progress::End);
    let row = summarize(&[(c.name.clone(), records)], Some(options.target), None)
        .pop()
        .ok_or_else(|| VerifyError::Options(format!("{}: no round was trained", c.name)))?;
    let predicted = c.predicted_rounds;
    c.measured_rounds = row.rounds_to_target.map(|r| r as f64);
    c.measured_time_ms = row.time_to_target_ms;
    c.rounds_tried = Some(row.rounds);
    // Stopped by the race: short of its rounds without the target.
    let stopped_behind_ms =
        behind_ms.filter(|_| row.rounds_to_target.is_none() && row.rounds < rounds);
    c.stopped_behind_ms = stopped_behind_ms;
    // The run is timed on the designed network: its rounds last the
    // designed cycle time (MATCHA's is an estimate over sampled rounds).
    // Checked on runs long enough for the max-plus transient to fade.
    let rel = (row.ms_per_round - c.cycle_time_ms).abs() / c.cycle_time_ms.max(1e-9);
    if row.rounds >= 100 && rel > 0.05 && !c.weights.starts_with("matcha") {
        notes.push(format!(
            "{}: the {} run's {:.1} ms per round differs from the designed {:.1} ms",
            c.name,
            phase.name(),
            row.ms_per_round,
            c.cycle_time_ms
        ));
    }
    let cfg = session.config;
    let features = RunFeatures {
        underlay: session.underlay.name.clone(),
        silos: session.model.silo_count(),
        phase,
        candidate: c.name.clone(),
        same_as: c.same_as.join("; "),
        weights: c.weights.clone(),
        arcs: c.arcs,
        cycle_time_ms: c.cycle_time_ms,
        spectral_gap: c.spectral_gap,
        spectral_mixing_time: super::search::mixing_time(1.0 - c.spectral_gap),
        exact_rounds: c.exact_rounds,
        mixing_time: c.mixing_time,
        effective_neighbours: c.effective_neighbours,
        time_varying: c.time_varying,
        asymmetric: c.asymmetric,
        dataset: session.data.name.clone(),
        partition: session.partition.to_string(),
        label_heterogeneity: heterogeneity,
        model: cfg.model.name(),
        lr: cfg.lr,
        batch_size: cfg.batch_size,
        local_steps: cfg.local_steps,
        seed: cfg.seed,
        eval_every: options.eval_every,
        target: options.target.label(),
        rounds_budget: rounds,
        rounds_trained: row.rounds,
        reached: row.rounds_to_target.is_some(),
        rounds_to_target: row.rounds_to_target,
        time_to_target_ms: row.time_to_target_ms,
        ms_per_round: row.ms_per_round,
        predicted_rounds: predicted,
        stopped_behind_ms,
    };
    Ok((row, features))
}

/// The rows as CSV (one header, a row per run).
fn runs_csv(runs: &[RunFeatures]) -> std::io::Result<Vec<u8>> {
    crate::csv_file::serde_csv(runs)
        .map(String::into_bytes)
        .map_err(std::io::Error::other)
}

fn phase_dir(phase: Phase) -> &'static str {
    match phase {
        Phase::Probe => "probes",
        Phase::Full => "verify",
    }
}

/// `DIR/summary.csv` of the runs of one phase (the `fedtopo train` format,
/// readable by `design --calibrate`).
/// Speed-ups are against STAR when it ran, else the first run, as `train`'s.
fn write_summary(dir: &Path, rows: &[SummaryRow], target: Target) -> Result<(), VerifyError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let base = rows
        .iter()
        .find(|r| r.overlay == "star")
        .or(rows.first())
        .and_then(|r| r.time_to_target_ms);
    let rows: Vec<SummaryRow> = rows
        .iter()
        .map(|r| SummaryRow {
            speedup: match (base, r.time_to_target_ms) {
                (Some(b), Some(t)) if t > 0.0 => Some(b / t),
                _ => None,
            },
            ..r.clone()
        })
        .collect();
    let rows = rows.as_slice();
    let path = dir.join("summary.csv");
    write_atomic(&path, render_summary_csv(rows, Some(target)).as_bytes()).map_err(io(&path))
}
