//! Running one overlay to the end with checkpoints: kill the process,
//! restart it, lose no round, get the same CSV.
//!
//! Files in the run directory: `metrics.csv` (per-round records, rewritten
//! atomically at each checkpoint), `state.json` (round, optimiser steps,
//! records, configuration fingerprint, name of the tensor file) and
//! `ckpt-ROUND.pt` (stacked parameters and optimiser state). The JSON is
//! renamed into place after its tensor file is complete, so a crash at any
//! moment leaves a consistent pair. On resume the clock is rebuilt by
//! replaying the rounds already done (clocks are deterministic).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::report::{render_csv, write_atomic, RoundRecord, Target};
use super::trainer::{TrainError, Trainer};
use crate::graph::OverlaySchedule;
use crate::replay::clock::RoundClock;

/// Saved progress of one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunState {
    /// Fingerprint of the configuration and overlay.
    pub fingerprint: String,
    /// Rounds completed.
    pub round: u64,
    /// Optimiser steps taken.
    pub optimizer_steps: u64,
    /// Tensor file (relative to the run directory).
    pub tensors: String,
    /// True when the run reached its last round.
    pub done: bool,
    /// Records so far.
    pub records: Vec<RoundRecord>,
}

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Total rounds.
    pub rounds: u64,
    /// Evaluate every this many rounds (and after the last).
    pub eval_every: u64,
    /// Checkpoint every this many rounds (0: only at the end); needs `dir`.
    pub checkpoint_every: u64,
    /// Run directory (metrics.csv, state.json, checkpoints). `None`: in memory only.
    pub dir: Option<PathBuf>,
    /// Stop after this many rounds of this invocation (tests of resuming).
    pub stop_after: Option<u64>,
    /// Stop at the first evaluation that meets this target (`design
    /// --verify`: the rounds after it would not change the time to it).
    pub stop_at: Option<Target>,
    /// Stop before a round that would end later than this wall-clock time
    /// (ms): the run can no longer reach the target by then (`design
    /// --verify` racing a candidate against the best time measured so far).
    /// The last round trained is evaluated when it was not, so the run
    /// ends on a record (a lower bound on its rounds to the target, or the
    /// target met at that evaluation).
    pub stop_behind_ms: Option<f64>,
}

fn ck_err(path: &Path, e: impl std::fmt::Display) -> TrainError {
    TrainError::Checkpoint {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn load_state(dir: &Path) -> Result<Option<RunState>, TrainError> {
    let p = dir.join("state.json");
    if !p.exists() {
        return Ok(None);
    }
    let text = crate::input_file::read_text(&p, crate::input_file::MAX_INPUT_BYTES)
        .map_err(|e| ck_err(&p, e))?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| ck_err(&p, e))
}

fn save(dir: &Path, trainer: &Trainer, state: &RunState) -> Result<(), TrainError> {
    let tpath = dir.join(&state.tensors);
    let tmp = dir.join(format!("{}.tmp", state.tensors));
    tch::Tensor::save_multi(&trainer.state_tensors(), &tmp)?;
    std::fs::rename(&tmp, &tpath).map_err(|e| ck_err(&tpath, e))?;
    write_atomic(
        &dir.join("metrics.csv"),
        render_csv(&state.records).as_bytes(),
    )
    .map_err(|e| ck_err(dir, e))?;
    let json = serde_json::to_string(state).map_err(|e| ck_err(dir, e))?;
    write_atomic(&dir.join("state.json"), json.as_bytes()).map_err(|e| ck_err(dir, e))?;
    // Remove older tensor files.
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with("ckpt-") && name != state.tensors {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(())
}

/// Trains `trainer` on `schedule` for `opts.rounds` rounds, timing each round
/// with `clock`, resuming from `opts.dir` when it holds a checkpoint of the
/// same configuration (`fingerprint`). `progress(round)` is called after
/// every round. Returns the records (round 0 = initial models, time 0).
pub fn run(
    trainer: &mut Trainer,
    schedule: &dyn OverlaySchedule,
    clock: &mut dyn RoundClock,
    opts: &RunOptions,
    fingerprint: &str,
    mut progress: impl FnMut(u64, &[RoundRecord]),
) -> Result<Vec<RoundRecord>, TrainError> {
    if schedule.silo_count() != trainer.silo_count() {
        return Err(TrainError::Config(format!(
            "the overlay has {} silos but the data is split among {}",
            schedule.silo_count(),
            trainer.silo_count()
        )));
    }
    let eval_every = opts.eval_every.max(1);
    let mut records = Vec::new();
    let mut wall = 0.0;
    if let Some(dir) = &opts.dir {
        std::fs::create_dir_all(dir).map_err(|e| ck_err(dir, e))?;
        // A stored run with other settings (configuration, data, overlay,
        // network) is not resumed: the run starts afresh, with a note.
        let stored = match load_state(dir)? {
            Some(st) if st.fingerprint != fingerprint => {
                eprintln!(
                    "note: {}: holds a run with other settings (configuration, data, overlay or \
                     network); starting afresh",
                    dir.display()
                );
                None
            }
            other => other,
        };
        if let Some(st) = stored {
            let tpath = dir.join(&st.tensors);
            let named = tch::Tensor::load_multi(&tpath).map_err(|e| ck_err(&tpath, e))?;
            trainer.restore(&named, st.round, st.optimizer_steps)?;
            for k in 0..st.round {
                let t = clock.round_end_times(k, &schedule.round(k))?;
                wall = t.iter().copied().fold(0.0, f64::max);
            }
            records = st.records;
        }
    }
    if records.is_empty() {
        records.push(trainer.evaluate(0.0));
    }
    // The initial models may meet the target already (0 rounds to it).
    let met_before = opts
        .stop_at
        .is_some_and(|t| records.last().is_some_and(|r| t.reached(r)));
    let start_round = trainer.round();
    let mut done_here = 0;
    let mut behind = false;
    // Consensus matrices depend on the round's overlay only (unless the
    // overlay brings one per round): a static overlay's (or a repeated
    // round's) is computed once.
    let per_round = trainer.config().consensus.depends_on_round();
    let mut last: Option<(
        crate::graph::Overlay,
        crate::mixing::consensus::ConsensusMatrix,
    )> = None;
    while trainer.round() < opts.rounds && !met_before {
        if opts.stop_after.is_some_and(|s| done_here >= s) {
            break;
        }
        let k = trainer.round();
        let overlay = schedule.round(k);
        let a = match last.take() {
            Some((o, a)) if !per_round && o == *overlay => (o, a),
            _ => {
                let a = trainer.config().consensus.matrix_at(&overlay, k)?;
                (overlay.into_owned(), a)
            }
        };
        // The clock first: under churn it says who took part in the round
        // (the models each silo averaged), and the averaging weights are
        // re-normalised by it ([`ConsensusMatrix::with_participation`]).
        let t = clock.round_end_times(k, &a.0)?;
        let end = t.iter().copied().fold(wall, f64::max);
        if opts.stop_behind_ms.is_some_and(|cap| end > cap) {
            behind = true;
            break;
        }
        wall = end;
        match clock.participation() {
            Some(p) => {
                let churned = a.1.with_participation(&p.used, &p.joined);
                trainer.train_round_masked(&churned, &p.computed)?;
            }
            None => trainer.train_round(&a.1)?,
        }
        last = Some(a);
        let r = trainer.round();
        let mut met = false;
        if r.is_multiple_of(eval_every) || r == opts.rounds {
            let record = trainer.evaluate(wall);
            met = opts.stop_at.is_some_and(|t| t.reached(&record));
            records.push(record);
        }
        done_here += 1;
        progress(r, &records);
        if let Some(dir) = &opts.dir {
            let every = opts.checkpoint_every;
            if r == opts.rounds || (every > 0 && r.is_multiple_of(every)) {
                save(dir, trainer, &state(trainer, fingerprint, &records, opts))?;
            }
        }
        if met {
            break;
        }
    }
    if behind && records.last().is_some_and(|r| r.round != trainer.round()) {
        records.push(trainer.evaluate(wall));
    }
    if let Some(dir) = &opts.dir {
        if trainer.round() != start_round || load_state(dir)?.is_none() {
            save(dir, trainer, &state(trainer, fingerprint, &records, opts))?;
        }
    }
    Ok(records)
}

fn state(
    trainer: &Trainer,
    fingerprint: &str,
    records: &[RoundRecord],
    opts: &RunOptions,
) -> RunState {
    RunState {
        fingerprint: fingerprint.to_string(),
        round: trainer.round(),
        optimizer_steps: trainer.optimizer_steps(),
        tensors: format!("ckpt-{}.pt", trainer.round()),
        done: trainer.round() >= opts.rounds,
        records: records.to_vec(),
    }
}
