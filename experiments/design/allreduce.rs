//! An estimate, not a candidate (issue 24 item 6): would exact averaging
//! by a **ring all-reduce** beat every overlay of the design experiment?
//!
//! ```text
//! cargo run --release --example design-allreduce -- [--out DIR]
//! ```
//!
//! A ring all-reduce (reduce-scatter, then all-gather, in chunks of `M/n`
//! bit along the ring-opt order) gives every silo the average of all
//! models each round: STAR's consensus, so its rounds to the target are
//! STAR's, measured in `runs.csv`. Its round time comes from \[Marfoq20\]
//! eq. (3) per chunk ([`ring_allreduce_ms`]); the estimated time to the
//! target is STAR's mean measured rounds times that round time, against
//! the best overlay of the list in `results.csv`. Nothing here is trained
//! or built as an overlay: the candidate does not exist yet.
//!
//! Writes `DIR/allreduce.csv` (default: this directory) and prints the
//! cells where the estimate is at least 10 % faster than the best.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use fedtopo::net::delay::DelayModel;
use fedtopo::net::scenario::NetworkSpec;
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::overlay::algo::RingSearch;
use fedtopo::overlay::ring::ring_opt_tour;

/// Time (ms) from the start of a round until the last silo holds the
/// average, for a ring all-reduce along `tour`: every silo first runs its
/// local step; in each of the `2(n - 1)` steps silo `p` sends one chunk of
/// `M/n` bit to the next silo once it has sent its previous chunk and
/// received the previous step's; a chunk takes the link's transfer time
/// (eq. (3) with one sender and one receiver) and arrives after the
/// latency. Rounds do not overlap (each needs every silo's model), so this
/// is the round's duration.
fn ring_allreduce_ms(m: &DelayModel, tour: &[usize]) -> f64 {
    let n = tour.len();
    if n < 2 {
        return (0..n).map(|p| m.compute_round_ms(tour[p])).sum();
    }
    let chunk = m.workload.model_bits / n as f64;
    let next = |p: usize| (p + 1) % n;
    let latency = |p: usize| m.connectivity.latency_ms(tour[p], tour[next(p)]);
    let transfer = |p: usize| m.comm_ms(tour[p], tour[next(p)], 1, 1, chunk) - latency(p);
    let mut sent: Vec<f64> = (0..n).map(|p| m.compute_round_ms(tour[p])).collect();
    let mut received = vec![0.0f64; n];
    for step in 0..2 * (n - 1) {
        let mut now_received = vec![0.0f64; n];
        for p in 0..n {
            let start = if step == 0 {
                sent[p]
            } else {
                (sent[p] + transfer(p)).max(received[p])
            };
            sent[p] = start;
            now_received[next(p)] = start + transfer(p) + latency(p);
        }
        received = now_received;
    }
    received.iter().copied().fold(0.0, f64::max)
}

/// (underlay, access, data).
type Cell = (String, String, String);

fn main() -> Result<()> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = here.join("experiments/design");
    let mut out = dir.clone();
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match (flag.as_str(), it.next()) {
            ("--out", Some(v)) => out = PathBuf::from(v),
            _ => bail!("usage: design-allreduce [--out DIR]"),
        }
    }
    // STAR's rounds per cell and seed (None: not reached).
    let mut star: BTreeMap<Cell, Vec<Option<u64>>> = BTreeMap::new();
    let mut r = csv::Reader::from_path(dir.join("runs.csv")).context("runs.csv")?;
    for rec in r.deserialize::<BTreeMap<String, String>>() {
        let rec = rec?;
        if rec["candidate"] != "star" {
            continue;
        }
        let rounds = match rec["rounds_to_target"].as_str() {
            "" => None,
            x => Some(x.parse().context("rounds_to_target")?),
        };
        star.entry((
            rec["underlay"].clone(),
            rec["access"].clone(),
            rec["data"].clone(),
        ))
        .or_default()
        .push(rounds);
    }
    let mut best: BTreeMap<Cell, (String, f64)> = BTreeMap::new();
    let mut r = csv::Reader::from_path(dir.join("results.csv")).context("results.csv")?;
    for rec in r.deserialize::<BTreeMap<String, String>>() {
        let rec = rec?;
        if let Ok(t) = rec["best_other_time_s"].parse::<f64>() {
            best.insert(
                (
                    rec["underlay"].clone(),
                    rec["access"].clone(),
                    rec["data"].clone(),
                ),
                (rec["best_other"].clone(), t),
            );
        }
    }
    // Round time per (underlay, access).
    let mut round_ms: BTreeMap<(String, String), f64> = BTreeMap::new();
    for (u, a, _) in star.keys() {
        if round_ms.contains_key(&(u.clone(), a.clone())) {
            continue;
        }
        let path = here.join("underlays/paper").join(format!("{u}.gml"));
        let underlay = Underlay::load(&path, &LoadOptions::default())
            .with_context(|| path.display().to_string())?;
        let spec = NetworkSpec::from_knobs(|k| (k == "access").then_some(a.as_str()))?;
        let model = spec.build(&underlay)?;
        let tour = ring_opt_tour(&model, &RingSearch::default());
        round_ms.insert((u.clone(), a.clone()), ring_allreduce_ms(&model, &tour));
    }
    let mut csv_text = String::from(
        "underlay,access,data,seeds,star_rounds_mean,allreduce_round_ms,estimated_time_s,best_other,best_other_time_s,estimate_over_best\n",
    );
    let (mut faster, mut compared) = (0, 0);
    for (cell, rounds) in &star {
        let per_round = round_ms[&(cell.0.clone(), cell.1.clone())];
        let reached: Option<Vec<u64>> = rounds.iter().copied().collect();
        let mean = reached.map(|v| v.iter().sum::<u64>() as f64 / v.len() as f64);
        let estimate = mean.map(|r| r * per_round / 1e3);
        let b = best.get(cell);
        let ratio = estimate.zip(b).map(|(e, b)| e / b.1);
        if b.is_some() {
            compared += 1;
        }
        if ratio.is_some_and(|x| x <= 0.9) {
            faster += 1;
            println!(
                "{} {} {}: {:.2} s estimated against {:.2} s ({}), {:.2}x",
                cell.0,
                cell.1,
                cell.2,
                estimate.unwrap_or(f64::NAN),
                b.map_or(f64::NAN, |b| b.1),
                b.map_or("-", |b| b.0.as_str()),
                ratio.unwrap_or(f64::NAN)
            );
        }
        let f = |x: Option<f64>, p: usize| x.map_or(String::new(), |v| format!("{v:.p$}"));
        writeln!(
            csv_text,
            "{},{},{},{},{},{:.1},{},{},{},{}",
            cell.0,
            cell.1,
            cell.2,
            rounds.len(),
            f(mean, 2),
            per_round,
            f(estimate, 3),
            b.map_or("", |b| b.0.as_str()),
            f(b.map(|b| b.1), 3),
            f(ratio, 3)
        )?;
    }
    println!(
        "ring all-reduce, estimated: >= 10 % faster than the best of the list in {faster} of {compared} cells"
    );
    std::fs::create_dir_all(&out)?;
    let p = out.join("allreduce.csv");
    std::fs::write(&p, csv_text).with_context(|| p.display().to_string())?;
    Ok(())
}
