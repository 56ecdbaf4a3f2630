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
//! already there, so an interrupted sweep resumes.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use fedtopo::design::export::export_candidate;
use fedtopo::design::search::{
    design_search, Candidate, CandidateOverlay, DesignOptions, RoundsPredictor,
};
use fedtopo::design::MAX_AUGMENT_SILOS;
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::net::scenario::NetworkSpec;
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{parse_overlay_list, BuildOptions, OverlayKind};
use fedtopo::overlay::file::OverlayPath;
use fedtopo::train::checkpoint::RunOptions;
use fedtopo::train::report::{summarize, Target};
use fedtopo::train::session::{load_dataset, with_data_labels, Session};
use fedtopo::train::trainer::TrainConfig;

/// `fedtopo design`'s default candidate kinds.
pub const KINDS: &str = "star,mst,delta-mbst,ring,ring-opt,matcha,matcha+,regular:k=4,dcliques-ring,exp,exp-1peer,base:k=1,base:k=2,base:k=3,d-equistatic,od-equidyn,multigraph,multigraph:base=ring-opt";

/// A data setting: dataset, partition, target test accuracy.
#[derive(Debug, Clone)]
struct DataSetting {
    /// Short name in the results (`fashion-mnist/iid`).
    name: String,
    dataset: String,
    partition: String,
    target: f64,
}

/// The data settings: Fashion-MNIST iid and 2-shard label skew, and
/// LEAF's Synthetic nearly iid (0, 0) and heterogeneous (1, 1). Targets:
/// what most candidates reach within the budget on Geant (pilot runs,
/// README).
fn data_setting(name: &str) -> Result<DataSetting> {
    let (dataset, partition, target) = match name {
        "fashion-mnist/iid" => ("fashion-mnist", "iid", 0.75),
        "fashion-mnist/shards" => ("fashion-mnist", "shards:2", 0.60),
        "synthetic/iid" => ("synthetic:0,0", "iid", 0.70),
        "synthetic/skew" => ("synthetic:1,1", "iid", 0.55),
        o => bail!(
            "--data `{o}`: expected fashion-mnist/iid, fashion-mnist/shards, synthetic/iid, synthetic/skew"
        ),
    };
    Ok(DataSetting {
        name: name.into(),
        dataset: dataset.into(),
        partition: partition.into(),
        target,
    })
}

struct Args {
    out: PathBuf,
    underlays: Vec<String>,
    seeds: Vec<u64>,
    access: Vec<String>,
    data: Vec<DataSetting>,
    rounds: u64,
    eval_samples: usize,
    /// Only the candidates' figures (no training), to `features.csv`.
    features_only: bool,
}

fn list(v: &str) -> Vec<String> {
    v.split(',').map(|s| s.trim().to_string()).collect()
}

fn parse_args() -> Result<Args> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        out: here.join("experiments/design"),
        underlays: list("gaia,amazon_us,geantdistance,exodus,ebone"),
        seeds: vec![0, 1, 2],
        access: list("10G,100M"),
        data: Vec::new(),
        rounds: 300,
        eval_samples: 500,
        features_only: false,
    };
    let mut data = list("fashion-mnist/iid,fashion-mnist/shards,synthetic/iid,synthetic/skew");
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--features-only" {
            a.features_only = true;
            continue;
        }
        let v = it.next().with_context(|| format!("{flag} needs a value"))?;
        let whole = |v: &str| -> Result<u64> {
            v.parse()
                .with_context(|| format!("{flag} `{v}`: expected a whole number >= 0"))
        };
        match flag.as_str() {
            "--out" => a.out = PathBuf::from(v),
            "--underlays" => a.underlays = list(&v),
            "--seeds" => a.seeds = list(&v).iter().map(|s| whole(s)).collect::<Result<_>>()?,
            "--access" => a.access = list(&v),
            "--data" => data = list(&v),
            "--rounds" => a.rounds = whole(&v)?.clamp(1, 100_000),
            "--eval-samples" => a.eval_samples = whole(&v)?.clamp(10, 1_000_000) as usize,
            other => bail!("unknown argument `{other}` (see the doc comment of train.rs)"),
        }
    }
    a.data = data
        .iter()
        .map(|d| data_setting(d))
        .collect::<Result<_>>()?;
    Ok(a)
}

/// One row of `runs.csv`: a candidate of a cell, its figures and its
/// measured outcome.
#[derive(Debug, Serialize)]
struct Row {
    underlay: String,
    silos: usize,
    access: String,
    data: String,
    dataset: String,
    partition: String,
    seed: u64,
    target: f64,
    candidate: String,
    same_as: String,
    weights: String,
    arcs: usize,
    cycle_time_ms: f64,
    spectral_gap: f64,
    mixing_time: f64,
    exact_rounds: Option<usize>,
    effective_neighbours: f64,
    time_varying: bool,
    label_heterogeneity: f64,
    mixed_heterogeneity: f64,
    stationary_imbalance: f64,
    eval_every: u64,
    rounds_budget: u64,
    reached: bool,
    rounds_to_target: Option<u64>,
    time_to_target_ms: Option<f64>,
    final_test_acc: f64,
    /// The run whose rounds this row reuses (same consensus matrices under
    /// another access capacity), empty when trained here.
    trained_as: String,
}

fn cell_key(u: &str, access: &str, data: &str, seed: u64) -> String {
    format!("{u}|{access}|{data}|{seed}")
}

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
    let a = parse_args()?;
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(&a.out)?;
    let runs_path = a.out.join(if a.features_only {
        "features.csv"
    } else {
        "runs.csv"
    });
    let done = done_cells(&runs_path)?;
    let scratch = std::env::temp_dir().join(format!("fedtopo-design-train-{}", std::process::id()));
    let kinds = parse_overlay_list(KINDS)?;
    let mut underlays = BTreeMap::new();
    for u in &a.underlays {
        let path = here.join("underlays/paper").join(format!("{u}.gml"));
        let underlay = Underlay::load(&path, &LoadOptions::default())
            .with_context(|| format!("loading {}", path.display()))?;
        underlays.insert(u.clone(), underlay);
    }
    let started = Instant::now();
    for &seed in &a.seeds {
        for setting in &a.data {
            for u in &a.underlays {
                let underlay = &underlays[u];
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
                        &kinds,
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
    kinds: &[OverlayKind],
    scratch: &Path,
    trained: &mut BTreeMap<u64, (String, Option<u64>, f64)>,
) -> Result<Vec<Row>> {
    let spec = NetworkSpec::from_knobs(|k| (k == "access").then_some(access))?;
    let model = spec.build(underlay)?;
    let n = model.silo_count();
    let data = load_dataset(&setting.dataset, &setting.partition, n, None, seed, None)?;
    // The CLI's build options (centre `fastest`) with this seed, D-Cliques
    // on the data's labels.
    let seed_text = seed.to_string();
    let mut build = BuildOptions::from_knobs(
        |k| (k == "seed").then_some(seed_text.as_str()),
        underlay,
        model.connectivity.placement(),
    )?;
    build.dcliques = with_data_labels(build.dcliques, &data);
    let options = DesignOptions {
        kinds: kinds.to_vec(),
        augmented: n <= MAX_AUGMENT_SILOS,
        skip_unbuildable: true,
        ..DesignOptions::default()
    };
    // The candidates' figures on this data's labels (mixed heterogeneity).
    let search = design_search(
        underlay,
        &model,
        &build,
        &options,
        &RoundsPredictor::fitted_for(&data),
    )?;
    // `train`'s defaults: logreg, SGD lr 0.05, batch 32, 1 local step, consensus auto.
    let config = TrainConfig {
        eval_samples: a.eval_samples,
        seed,
        ..TrainConfig::default()
    };
    let session = Session {
        underlay,
        model: &model,
        options: &build,
        config: &config,
        data: &data,
        partition: &setting.partition,
        network: NetworkKind::Maxplus,
        init: None,
        failures: None,
    };
    let target = Target::TestAccuracy(setting.target);
    let heterogeneity = data.label_heterogeneity();
    let dir = scratch.join(format!("{u}-{access}-{seed}"));
    let mut rows = Vec::new();
    for c in &search.candidates {
        if a.features_only {
            rows.push(row(u, n, access, setting, seed, c, heterogeneity, a.rounds));
            continue;
        }
        let kind = train_kind(&dir, c, &session)?;
        let overlay = EvaluatedOverlay::build(kind, underlay, &model, &build)
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
            ..row(u, n, access, setting, seed, c, heterogeneity, a.rounds)
        });
    }
    std::fs::remove_dir_all(&dir).ok();
    Ok(rows)
}

/// The row of candidate `c` before any measurement.
#[allow(clippy::too_many_arguments)]
fn row(
    u: &str,
    n: usize,
    access: &str,
    setting: &DataSetting,
    seed: u64,
    c: &Candidate,
    heterogeneity: f64,
    rounds: u64,
) -> Row {
    {
        Row {
            underlay: u.to_string(),
            silos: n,
            access: access.to_string(),
            data: setting.name.clone(),
            dataset: setting.dataset.clone(),
            partition: setting.partition.clone(),
            seed,
            target: setting.target,
            candidate: c.name.clone(),
            same_as: c.same_as.join("; "),
            weights: c.weights.clone(),
            arcs: c.arcs,
            cycle_time_ms: c.cycle_time_ms,
            spectral_gap: c.spectral_gap,
            mixing_time: c.mixing_time,
            exact_rounds: c.exact_rounds,
            effective_neighbours: c.effective_neighbours,
            time_varying: c.time_varying,
            label_heterogeneity: heterogeneity,
            mixed_heterogeneity: c.mixed_heterogeneity,
            stationary_imbalance: c.stationary_imbalance,
            eval_every: 1,
            rounds_budget: rounds,
            reached: false,
            rounds_to_target: None,
            time_to_target_ms: None,
            final_test_acc: f64::NAN,
            trained_as: String::new(),
        }
    }
}
