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
//! already there, so an interrupted sweep resumes. A cell that is there
//! but lacks candidates (a candidate added to the design later, such as
//! `ring-allreduce`) gets rows for the missing ones only, written after
//! the cell's rows in the columns `runs.csv` already has; the cell's
//! existing runs join the consensus-hash reuse above (so a candidate with
//! STAR's matrices takes STAR's measured rounds), the others are trained. The candidates'
//! figures without training (`features.csv`, what the analysis reads) are
//! `design-features`' (features.rs, no libtorch); the setting-up of a cell
//! is shared with it (cells.rs).

#[path = "cells.rs"]
mod cells;

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
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

/// What a cell of `runs.csv` already has: candidate -> (rounds to the
/// target, final test accuracy).
type Measured = BTreeMap<String, (Option<u64>, f64)>;

/// The rows of `runs.csv` as they are: its header, and its records by
/// cell in file order.
struct Existing {
    header: csv::StringRecord,
    cells: Vec<(String, Vec<csv::StringRecord>)>,
    measured: BTreeMap<String, Measured>,
}

/// Reads `runs.csv` (empty when missing).
fn existing_runs(path: &Path) -> Result<Existing> {
    let mut e = Existing {
        header: csv::StringRecord::new(),
        cells: Vec::new(),
        measured: BTreeMap::new(),
    };
    if !path.exists() {
        return Ok(e);
    }
    let mut r = csv::Reader::from_path(path).with_context(|| format!("{}", path.display()))?;
    e.header = r.headers()?.clone();
    let col = |name: &str| e.header.iter().position(|c| c == name);
    let (Some(u), Some(a), Some(d), Some(s), Some(c), Some(rt), Some(acc)) = (
        col("underlay"),
        col("access"),
        col("data"),
        col("seed"),
        col("candidate"),
        col("rounds_to_target"),
        col("final_test_acc"),
    ) else {
        bail!("{}: not a design-train runs.csv", path.display());
    };
    for (i, rec) in r.records().enumerate() {
        let rec = rec?;
        let at = || format!("{}: row {}", path.display(), i + 2);
        let seed: u64 = rec[s].parse().with_context(at)?;
        let key = cell_key(&rec[u], &rec[a], &rec[d], seed);
        let rounds = match &rec[rt] {
            "" => None,
            x => Some(x.parse().with_context(at)?),
        };
        let final_acc: f64 = rec[acc].parse().with_context(at)?;
        e.measured
            .entry(key.clone())
            .or_default()
            .insert(rec[c].to_string(), (rounds, final_acc));
        match e.cells.last_mut() {
            Some((k, rows)) if *k == key => rows.push(rec),
            _ => e.cells.push((key, vec![rec])),
        }
    }
    Ok(e)
}

/// `row` in the columns of `header` (a column `Row` lacks is left empty;
/// a `Row` field the header lacks is not written).
fn in_columns(header: &csv::StringRecord, row: &Row) -> Result<csv::StringRecord> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(row)?;
    let text = String::from_utf8(w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?;
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let names = r.headers()?.clone();
    let values = r.records().next().context("a serialized row")??;
    let by_name: BTreeMap<&str, &str> = names.iter().zip(values.iter()).collect();
    Ok(header
        .iter()
        .map(|c| by_name.get(c).copied().unwrap_or(""))
        .collect())
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
    let existing = existing_runs(&runs_path)?;
    // New rows of cells already in runs.csv, written after their rows.
    let mut filled: BTreeMap<String, Vec<csv::StringRecord>> = BTreeMap::new();
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
                    let t0 = Instant::now();
                    let measured = existing.measured.get(&key);
                    let rows = run_cell(
                        underlay,
                        u,
                        access,
                        setting,
                        seed,
                        &a,
                        &scratch,
                        &mut trained,
                        measured,
                    )?;
                    if measured.is_some() {
                        eprintln!(
                            "{key}: already in runs.csv, {} missing candidate(s) added",
                            rows.len()
                        );
                        let rows: Vec<csv::StringRecord> = rows
                            .iter()
                            .map(|r| in_columns(&existing.header, r))
                            .collect::<Result<_>>()?;
                        if !rows.is_empty() {
                            filled.insert(key, rows);
                        }
                        continue;
                    }
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
    if !filled.is_empty() {
        // Rewrite runs.csv with the new rows after their cells' rows.
        let mut w = csv::Writer::from_path(&runs_path)?;
        w.write_record(&existing.header)?;
        for (key, rows) in &existing.cells {
            for r in rows.iter().chain(filled.get(key).into_iter().flatten()) {
                w.write_record(r)?;
            }
        }
        w.flush()?;
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
    measured: Option<&Measured>,
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
    if let Some(measured) = measured {
        if cell
            .search
            .candidates
            .iter()
            .all(|c| measured.contains_key(&c.name))
        {
            return Ok(rows);
        }
        // The cell's measured runs join the reuse by consensus hash.
        for c in &cell.search.candidates {
            let Some(&(r, acc)) = measured.get(&c.name) else {
                continue;
            };
            let kind = train_kind(&dir, c, &session)?;
            let overlay = EvaluatedOverlay::build(kind, underlay, &cell.model, &cell.build)
                .with_context(|| format!("{u} {access}: {}", c.name))?;
            let hash = consensus_hash(&session, &overlay, a.rounds)?;
            trained
                .entry(hash)
                .or_insert((format!("{}@{access}", c.name), r, acc));
        }
    }
    for c in &cell.search.candidates {
        if measured.is_some_and(|m| m.contains_key(&c.name)) {
            continue;
        }
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
