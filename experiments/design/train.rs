//! The design experiment's training runs (issue 24 item 6): every design
//! candidate trained to the target on \[Marfoq20\]'s networks, the runs a
//! rounds predictor is fitted on and the design is judged by.
//!
//! ```text
//! scripts/libtorch.sh cargo run --release --features train --example design-train -- \
//!     [--out DIR] [--underlays gaia,amazon_us,...] [--seeds 0,1,2] [--access 10G,100M] \
//!     [--data fashion-mnist/iid,...] [--rounds 300] [--eval-samples 500]
//! ```
//!
//! A **cell** is (underlay, access capacity, data, partition, seed). In
//! every cell the candidates of `fedtopo design` (its default kinds, the
//! fastest-mixing and arc-augmented variants, D-Cliques built on the
//! data's labels) are each trained with their own consensus weights,
//! evaluated every round, until the target or the round budget: a run that
//! misses it is written as **not reached within R rounds** (a censored
//! observation, a lower bound), never as a time.
//!
//! Training depends on the network only through the consensus matrices:
//! a candidate whose sequence of consensus matrices (hashed over the round
//! budget) equals one already trained in the same (underlay, data,
//! partition, seed) under another access capacity has the same rounds to
//! the target; its time is its own clock replayed for those rounds
//! (`trained_as` names the run). Nothing is peeked at: the design's choice
//! is made by `design-fit` from predictions only.
//!
//! Appends one block of rows per cell to `DIR/runs.csv` and skips cells
//! already there, so an interrupted sweep resumes. The candidates'
//! figures without training (`features.csv`, what the analysis reads) are
//! `design-features`' (features.rs, no libtorch); the setting-up of a cell
//! is shared with it (cells.rs).

#[path = "cells.rs"]
mod cells;

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use fedtopo::design::export::export_candidate;
use fedtopo::design::search::{Candidate, CandidateOverlay};
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::net::underlay::Underlay;
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::OverlayKind;
use fedtopo::overlay::file::OverlayPath;
use fedtopo::train::checkpoint::RunOptions;
use fedtopo::train::report::{summarize, Target};
use fedtopo::train::session::Session;
use fedtopo::train::trainer::TrainConfig;

use cells::{cell_key, load_underlays, parse_args, row, setup_cell, Args, DataSetting, Row};

/// Cells already in `runs.csv`.
fn done_cells(path: &Path) -> Result<BTreeSet<String>> {
    let mut done = BTreeSet::new();
    if !path.exists() {
        return Ok(done);
    }
    let mut r = csv::Reader::from_path(path).with_context(|| format!("{}", path.display()))?;
    let h = r.headers()?.clone();
    let col = |name: &str| h.iter().position(|c| c == name);
    let (Some(u), Some(a), Some(d), Some(s)) =
        (col("underlay"), col("access"), col("data"), col("seed"))
    else {
        bail!("{}: not a design-train runs.csv", path.display());
    };
    for rec in r.records() {
        let rec = rec?;
        let seed: u64 = rec[s].parse().context("seed")?;
        done.insert(cell_key(&rec[u], &rec[a], &rec[d], seed));
    }
    Ok(done)
}

/// Hash of the consensus matrices of `overlay`'s first `rounds` rounds
/// under its own weights (and its gradient groups): equal hashes train
/// the same rounds.
fn consensus_hash(session: &Session, overlay: &EvaluatedOverlay, rounds: u64) -> Result<u64> {
    let rule = session.consensus_rule(overlay)?;
    let mut h = DefaultHasher::new();
    format!("{:?}", overlay.gradient_groups()).hash(&mut h);
    let schedule = overlay.schedule();
    for k in 0..rounds {
        let a = rule.matrix_at(&schedule.round(k), k)?;
        for x in a.as_slice() {
            x.to_bits().hash(&mut h);
        }
    }
    Ok(h.finish())
}

/// Wall-clock time (ms) at the end of round `rounds` of `overlay` on
/// `session`'s network.
fn replay_ms(session: &Session, overlay: &EvaluatedOverlay, rounds: u64) -> Result<f64> {
    let schedule = overlay.schedule();
    let mut clock = overlay.clock(schedule, session.model, session.network)?;
    let mut wall = 0.0f64;
    for k in 0..rounds {
        let t = clock.round_end_times(k, &schedule.round(k))?;
        wall = t.iter().copied().fold(wall, f64::max);
    }
    Ok(wall)
}

/// The kind a candidate trains as: its kind when it is one (the same
/// consensus matrices as its exported file, without writing MATCHA's
/// per-round weights, 183 MB on Exodus), else its exported file (what
/// `design --verify` trains).
fn train_kind(dir: &Path, c: &Candidate, session: &Session) -> Result<OverlayKind> {
    match &c.overlay {
        CandidateOverlay::Kind(k) => Ok(*k),
        CandidateOverlay::Static { .. } => {
            let path = export_candidate(dir, c, session.underlay, session.model, session.options)
                .with_context(|| c.name.clone())?;
            Ok(OverlayKind::File(OverlayPath::new(
                &path.display().to_string(),
            )))
        }
    }
}

fn main() -> Result<()> {
    let a = parse_args("train.rs")?;
    std::fs::create_dir_all(&a.out)?;
    let runs_path = a.out.join("runs.csv");
    let done = done_cells(&runs_path)?;
    let scratch = std::env::temp_dir().join(format!("fedtopo-design-train-{}", std::process::id()));
    let underlays = load_underlays(&a.underlays)?;
    let started = Instant::now();
    for &seed in &a.seeds {
        for setting in &a.data {
            for (u, underlay) in &underlays {
                // Trained runs of this (underlay, data, seed) by consensus
                // hash: (name@access, rounds to target, final accuracy).
                let mut trained: BTreeMap<u64, (String, Option<u64>, f64)> = BTreeMap::new();
                for access in &a.access {
                    let key = cell_key(u, access, &setting.name, seed);
                    if done.contains(&key) {
                        eprintln!("{key}: already in runs.csv");
                        continue;
                    }
                    let t0 = Instant::now();
                    let rows = run_cell(
                        underlay,
                        u,
                        access,
                        setting,
                        seed,
                        &a,
                        &scratch,
                        &mut trained,
                    )?;
                    let new_file = !runs_path.exists();
                    let file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&runs_path)?;
                    let mut w = csv::WriterBuilder::new()
                        .has_headers(new_file)
                        .from_writer(file);
                    for r in &rows {
                        w.serialize(r)?;
                    }
                    w.flush()?;
                    let reached = rows.iter().filter(|r| r.reached).count();
                    eprintln!(
                        "{key}: {} candidates, {reached} reached, {:.0} s (total {:.0} s)",
                        rows.len(),
                        t0.elapsed().as_secs_f64(),
                        started.elapsed().as_secs_f64()
                    );
                    std::io::stderr().flush().ok();
                }
            }
        }
    }
    std::fs::remove_dir_all(&scratch).ok();
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run_cell(
    underlay: &Underlay,
    u: &str,
    access: &str,
    setting: &DataSetting,
    seed: u64,
    a: &Args,
    scratch: &Path,
    trained: &mut BTreeMap<u64, (String, Option<u64>, f64)>,
) -> Result<Vec<Row>> {
    let cell = setup_cell(underlay, access, setting, seed)?;
    // `train`'s defaults: logreg, SGD lr 0.05, batch 32, 1 local step, consensus auto.
    let config = TrainConfig {
        eval_samples: a.eval_samples,
        seed,
        ..TrainConfig::default()
    };
    let session = Session {
        underlay,
        model: &cell.model,
        options: &cell.build,
        config: &config,
        data: &cell.data,
        partition: &setting.partition,
        network: NetworkKind::Maxplus,
        init: None,
        failures: None,
    };
    let target = Target::TestAccuracy(setting.target);
    let dir = scratch.join(format!("{u}-{access}-{seed}"));
    let mut rows = Vec::new();
    for c in &cell.search.candidates {
        let kind = train_kind(&dir, c, &session)?;
        let overlay = EvaluatedOverlay::build(kind, underlay, &cell.model, &cell.build)
            .with_context(|| format!("{u} {access}: {}", c.name))?;
        let hash = consensus_hash(&session, &overlay, a.rounds)?;
        let (rounds_to_target, final_acc, trained_as, time) = match trained.get(&hash) {
            Some((name, r, acc)) => {
                let time = match r {
                    Some(r) => Some(replay_ms(&session, &overlay, *r)?),
                    None => None,
                };
                (*r, *acc, name.clone(), time)
            }
            None => {
                let t0 = Instant::now();
                let opts = RunOptions {
                    rounds: a.rounds,
                    eval_every: 1,
                    checkpoint_every: 0,
                    dir: None,
                    stop_after: None,
                    stop_at: Some(target),
                    stop_behind_ms: None,
                };
                let records = session
                    .train(kind, &opts, |_, _| {})
                    .with_context(|| format!("training {} on {u} {access}", c.name))?;
                let row = summarize(&[(c.name.clone(), records)], Some(target), None)
                    .pop()
                    .context("no round trained")?;
                eprintln!(
                    "  {u} {access} {} seed {seed} {}: {} ({:.1} s)",
                    setting.name,
                    c.name,
                    row.rounds_to_target
                        .map_or(format!("not reached in {}", a.rounds), |r| format!(
                            "{r} rounds"
                        )),
                    t0.elapsed().as_secs_f64()
                );
                trained.insert(
                    hash,
                    (
                        format!("{}@{access}", c.name),
                        row.rounds_to_target,
                        row.final_test_acc,
                    ),
                );
                (
                    row.rounds_to_target,
                    row.final_test_acc,
                    String::new(),
                    row.time_to_target_ms,
                )
            }
        };
        rows.push(Row {
            reached: rounds_to_target.is_some(),
            rounds_to_target,
            time_to_target_ms: time,
            final_test_acc: final_acc,
            trained_as,
            ..row(u, access, setting, seed, &cell, c, a.rounds)
        });
    }
    std::fs::remove_dir_all(&dir).ok();
    Ok(rows)
}
