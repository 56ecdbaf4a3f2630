//! The design experiment's analysis (issue 24 items 2 and 6): fits the
//! rounds predictor on the measured runs of `runs.csv` (written by
//! `design-train`, see train.rs), judges it leave-one-underlay-out, makes
//! the design's choice in every cell from predictions only, and compares
//! the chosen overlay's measured time to the target with every other
//! overlay's. Deterministic: regenerates byte-identically from `runs.csv`.
//!
//! ```text
//! cargo run --release --example design -- [--runs FILE] [--features FILE] [--flow FILE] [--out DIR] [--fitted FILE]
//! ```
//!
//! The figures the predictor reads come from `features.csv` (`--features`,
//! `design-features`: regenerated without training), the
//! measurements from `runs.csv`. `flow.csv` (`--flow`, also from
//! `design-features`) holds every candidate's mean round on the flow
//! network, for the section on link sharing ([`flow_section`]).
//!
//! Writes to `--out` (default: this directory) `results.csv` (one row per
//! cell), `predictions.csv` (every candidate of every cell: predicted and
//! measured), `results.md` (the tables of the README), `speedup.svg`, and
//! the shipped predictor (`--fitted`, default `src/design/fitted.rs`).
//!
//! A **cell** is (underlay, access capacity, data setting); its seeds are
//! repetitions. In each cell and seed:
//!
//! * **prediction**: rounds from the `FeatureModel` fitted on the runs of
//!   the *other* underlays (leave-one-underlay-out), with one intercept
//!   per data setting; predicted time = exact cycle time x rounds;
//! * **the design's choice**: the candidate of least predicted time, made
//!   before looking at any measurement of its underlay;
//! * **measured**: the time to the target of every candidate; a run that
//!   missed the target is "not reached" (a lower bound), never a time;
//! * **`design --verify`**, judged on another seed ([`verify_choice`]):
//!   its probes, ranking and full runs replayed from the runs of the
//!   cell's next seed (a different data split, initial model and batches:
//!   the user's verification runs), its measured winner judged on this
//!   seed's runs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use fedtopo::design::calibrate::{
    spread_over_mixing_times, verified_count, VERIFY_PROBES, VERIFY_PROBE_ROUNDS, VERIFY_TOP,
    VERIFY_WINDOW,
};
use fedtopo::design::predictor::{
    feature_names, features, fit_censored, HeterogeneityLevel, Observation, PredictorInputs,
    FEATURE_COUNT,
};
use fedtopo::report::plot::{line_plot, Axes, Series};

/// Ridge on the weights other than the intercepts (ln-rounds units).
const RIDGE: f64 = 1e-3;

/// The overlays the design is compared with (issue 24 item 6), by the
/// candidate names of `fedtopo design`.
const BASELINES: [&str; 16] = [
    "star",
    "mst",
    "delta-mbst",
    "ring",
    "ring-opt",
    "matcha",
    "dcliques-ring",
    "exp",
    "exp-1peer",
    "base:k=1",
    "base:k=2",
    "base:k=3",
    "d-equistatic",
    "od-equidyn",
    "multigraph",
    "multigraph:base=ring-opt",
];

#[derive(Debug, Clone, Deserialize)]
struct Run {
    underlay: String,
    silos: usize,
    access: String,
    data: String,
    seed: u64,
    candidate: String,
    same_as: String,
    cycle_time_ms: f64,
    mixing_time: f64,
    effective_neighbours: f64,
    time_varying: bool,
    label_heterogeneity: f64,
    #[serde(default)]
    mixed_heterogeneity: f64,
    #[serde(default)]
    stationary_imbalance: f64,
    #[serde(default)]
    label_share: f64,
    #[serde(default)]
    asymmetric: bool,
    rounds_budget: u64,
    reached: bool,
    rounds_to_target: Option<u64>,
    time_to_target_ms: Option<f64>,
    trained_as: String,
}

impl Run {
    /// (underlay, access, data, seed, candidate).
    fn key(&self) -> RunKey {
        (
            self.underlay.clone(),
            self.access.clone(),
            self.data.clone(),
            self.seed,
            self.candidate.clone(),
        )
    }

    fn inputs(&self) -> PredictorInputs {
        PredictorInputs {
            mixing_time: self.mixing_time,
            silos: self.silos,
            effective_neighbours: self.effective_neighbours,
            time_varying: self.time_varying,
            label_heterogeneity: self.label_heterogeneity,
            label_share: self.label_share,
            mixed_heterogeneity: self.mixed_heterogeneity,
            stationary_imbalance: self.stationary_imbalance,
            asymmetric: self.asymmetric,
        }
    }

    /// Every name it answers to.
    fn names(&self) -> Vec<&str> {
        std::iter::once(self.candidate.as_str())
            .chain(
                self.same_as
                    .split("; ")
                    .map(str::trim)
                    .filter(|s| !s.is_empty()),
            )
            .collect()
    }
}

/// Feature vector with one intercept per data setting (replacing the
/// model's single intercept).
fn row_features(r: &Run, settings: &[String]) -> Option<Vec<f64>> {
    let f = features(&r.inputs())?;
    let mut x: Vec<f64> = settings
        .iter()
        .map(|s| if *s == r.data { 1.0 } else { 0.0 })
        .collect();
    x.extend_from_slice(&f[1..]);
    Some(x)
}

/// Fits on `runs` (each training run once: rows that reuse another
/// access capacity's run are left out), intercept per data setting.
fn fit(runs: &[&Run], settings: &[String]) -> Result<Vec<f64>> {
    let obs: Vec<Observation> = runs
        .iter()
        .filter(|r| r.trained_as.is_empty())
        .filter_map(|r| {
            let x = row_features(r, settings)?;
            let (y, censored) = match r.rounds_to_target {
                Some(k) => ((k.max(1) as f64).ln(), false),
                None => ((r.rounds_budget.max(1) as f64).ln(), true),
            };
            Some(Observation { x, y, censored })
        })
        .collect();
    fit_censored(&obs, RIDGE).context("the censored fit failed (no reached run, or singular)")
}

fn predict_rounds(w: &[f64], r: &Run, settings: &[String]) -> f64 {
    match row_features(r, settings) {
        None => f64::INFINITY,
        Some(x) => x
            .iter()
            .zip(w)
            .map(|(a, b)| a * b)
            .sum::<f64>()
            .exp()
            .clamp(1.0, 1e6),
    }
}

/// Mean label heterogeneity and label share of each data setting over the
/// training runs of `runs` (the runs [`fit`] reads), in the order of
/// `settings`.
fn setting_heterogeneity(runs: &[&Run], settings: &[String]) -> Vec<(f64, f64)> {
    settings
        .iter()
        .map(|s| {
            let of: Vec<&&Run> = runs
                .iter()
                .filter(|r| r.trained_as.is_empty() && &r.data == s)
                .collect();
            let m = of.len().max(1) as f64;
            (
                of.iter().map(|r| r.label_heterogeneity).sum::<f64>() / m,
                of.iter().map(|r| r.label_share).sum::<f64>() / m,
            )
        })
        .collect()
}

/// The uncalibrated level of weights `w` fitted on `runs` with one
/// intercept per data setting: the plane through the settings' (mean `h`,
/// mean `s`, intercept), what `fedtopo design` uses without calibration.
fn level_plane(w: &[f64], runs: &[&Run], settings: &[String]) -> Result<HeterogeneityLevel> {
    let hs = setting_heterogeneity(runs, settings);
    let points: Vec<(f64, f64, f64)> = hs
        .iter()
        .zip(w.iter())
        .map(|(&(h, s), &y)| (h, s, y))
        .collect();
    HeterogeneityLevel::fit(&points).context("no data setting to fit the level on")
}

/// Predicted rounds of `r` from the slopes of `w` (fitted with intercepts
/// for `settings`) at intercept `level` (`ln` rounds) instead of its
/// setting's.
fn predict_rounds_at(w: &[f64], r: &Run, settings: &[String], level: f64) -> f64 {
    let k = settings.len();
    match features(&r.inputs()) {
        None => f64::INFINITY,
        Some(f) => (level + f[1..].iter().zip(&w[k..]).map(|(a, b)| a * b).sum::<f64>())
            .exp()
            .clamp(1.0, 1e6),
    }
}

/// Leave-one-underlay-out predicted rounds of every run (by run index) at
/// three levels (intercepts): what `fedtopo design` would print without
/// calibration before this change (`mean_level`: the mean of the data
/// settings' intercepts), after it (`plane_level`: their plane in the data's
/// label heterogeneity `h` and `h s`, [`HeterogeneityLevel`]), and the data setting's
/// own intercept (`own_level`: not known to `design` on new data; the
/// level `--calibrate`/`--verify` estimate).
struct Uncalibrated {
    mean_level: Vec<f64>,
    plane_level: Vec<f64>,
    own_level: Vec<f64>,
}

/// Errors of predicted rounds against measured, per candidate-cell.
#[derive(Default)]
struct LevelErrors {
    /// `ln` (mean predicted rounds / mean measured rounds).
    log_ratios: Vec<f64>,
    /// Relative error of the mean predicted rounds.
    rounds: Vec<f64>,
    /// Relative error of the mean predicted time (rounds x cycle time).
    times: Vec<f64>,
    /// Mean measured rounds.
    measured: Vec<f64>,
}

impl LevelErrors {
    /// Per cell of `rows` (indices into `runs`) and candidate name reached
    /// in every seed of its cell: mean predicted rounds (`rounds`, by run
    /// index) and times against the mean measured ones.
    fn of(runs: &[Run], rows: &[usize], rounds: &[f64]) -> LevelErrors {
        let mut out = LevelErrors::default();
        for idx in cells_of(runs, rows).values() {
            let seeds = seed_count(runs, idx);
            // name -> (predicted rounds, measured rounds, predicted ms, measured ms)
            let mut by_name: BTreeMap<&str, Vec<(f64, f64, f64, f64)>> = BTreeMap::new();
            let mut missed: BTreeSet<&str> = BTreeSet::new();
            for &i in idx {
                let r = &runs[i];
                for name in r.names() {
                    match (r.rounds_to_target, r.time_to_target_ms) {
                        (Some(k), Some(t)) if rounds[i].is_finite() => by_name
                            .entry(name)
                            .or_default()
                            .push((rounds[i], k as f64, rounds[i] * r.cycle_time_ms, t)),
                        _ => {
                            missed.insert(name);
                        }
                    }
                }
            }
            for (name, v) in &by_name {
                if missed.contains(name) || v.len() != seeds {
                    continue;
                }
                let n = v.len() as f64;
                let m = |f: fn(&(f64, f64, f64, f64)) -> f64| v.iter().map(f).sum::<f64>() / n;
                let (pr, mr, pt, mt) = (m(|x| x.0), m(|x| x.1), m(|x| x.2), m(|x| x.3));
                out.log_ratios.push((pr / mr).ln());
                out.rounds.push((pr - mr).abs() / mr);
                out.times.push((pt - mt).abs() / mt);
                out.measured.push(mr);
            }
        }
        out
    }
}

/// Mean and median of `v` (NaN when empty).
fn mean_median(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (
        s.iter().sum::<f64>() / s.len() as f64,
        s.get(s.len() / 2).copied().unwrap_or(f64::NAN),
    )
}

impl Uncalibrated {
    /// The table of results.md per data setting and level, and the
    /// summary's line (every setting: before and after).
    fn table(&self, runs: &[Run], settings: &[String]) -> Result<(String, String)> {
        let mut md = String::from(
            "| data | mean h | candidate-cells | measured rounds (median) | level | predicted / measured rounds (geometric mean) | rounds error mean / median | time error mean / median |\n|---|---:|---:|---:|---|---:|---:|---:|\n",
        );
        let levels: [(&str, &[f64]); 3] = [
            ("mean of the settings' (before)", &self.mean_level),
            ("plane in h, h s (after: shipped)", &self.plane_level),
            ("the setting's own (reference)", &self.own_level),
        ];
        let mut groups: Vec<(String, Vec<usize>)> = settings
            .iter()
            .map(|s| {
                let rows = (0..runs.len()).filter(|&i| &runs[i].data == s).collect();
                (s.clone(), rows)
            })
            .collect();
        groups.push(("all".into(), (0..runs.len()).collect()));
        let mut summary = String::new();
        for (name, rows) in &groups {
            let h = rows
                .iter()
                .map(|&i| runs[i].label_heterogeneity)
                .sum::<f64>()
                / rows.len().max(1) as f64;
            for (label, rounds) in levels {
                let e = LevelErrors::of(runs, rows, rounds);
                let geo = (e.log_ratios.iter().sum::<f64>() / e.log_ratios.len() as f64).exp();
                let (rm, rmed) = mean_median(&e.rounds);
                let (tm, tmed) = mean_median(&e.times);
                writeln!(
                    md,
                    "| {name} | {h:.2} | {} | {:.0} | {label} | {geo:.2} | {:.0}% / {:.0}% | {:.0}% / {:.0}% |",
                    e.rounds.len(),
                    mean_median(&e.measured).1,
                    100.0 * rm,
                    100.0 * rmed,
                    100.0 * tm,
                    100.0 * tmed,
                )?;
                if name == "all" && !label.starts_with("the setting") {
                    let _ = write!(
                        summary,
                        "{}{:.0}% / {:.0}% ({})",
                        if summary.is_empty() { "" } else { " -> " },
                        100.0 * rm,
                        100.0 * rmed,
                        label.split(" (").next().unwrap_or(label)
                    );
                }
            }
        }
        Ok((md, summary))
    }
}

/// A candidate's predicted times, measured times (None: not reached) and
/// lower bound (ms) over the seeds of a cell.
type NameRuns = (Vec<f64>, Vec<Option<f64>>, f64);

/// What a held-out check measures: Kendall's tau per cell, the relative
/// errors of the predicted times, and the same after one level per cell.
#[derive(Default)]
struct Ranking {
    taus: Vec<f64>,
    errors: Vec<f64>,
    calibrated: Vec<f64>,
}

/// [`Ranking`] of the runs `rows` (indices into `runs`) with predicted
/// times `predicted` (ms, by run index): per cell, the candidates measured
/// in every seed of `rows`, their mean predicted and measured times, as
/// the cell table computes them.
fn ranking(runs: &[Run], rows: &[usize], predicted: &[f64]) -> Ranking {
    let mut out = Ranking::default();
    for idx in cells_of(runs, rows).values() {
        let seeds = seed_count(runs, idx);
        let mut by_name: BTreeMap<&str, NameRuns> = BTreeMap::new();
        for &i in idx {
            let r = &runs[i];
            for name in r.names() {
                let e = by_name
                    .entry(name)
                    .or_insert((Vec::new(), Vec::new(), f64::INFINITY));
                e.0.push(predicted[i]);
                e.1.push(r.time_to_target_ms);
                if r.time_to_target_ms.is_none() {
                    e.2 = r.rounds_budget as f64 * r.cycle_time_ms;
                }
            }
        }
        let items: Vec<(f64, Option<f64>, f64)> = by_name
            .values()
            .filter(|(p, m, _)| p.len() == seeds && m.len() == seeds)
            .map(|(p, m, b)| {
                let measured: Option<Vec<f64>> = m.iter().copied().collect();
                (mean_se(p).0, measured.map(|x| mean_se(&x).0), *b)
            })
            .filter(|x| x.0.is_finite())
            .collect();
        if let Some(t) = kendall(&items) {
            out.taus.push(t);
        }
        let reached: Vec<(f64, f64)> = items
            .iter()
            .filter_map(|(p, m, _)| Some((*p, (*m)?)))
            .collect();
        out.errors
            .extend(reached.iter().map(|(p, m)| (p - m).abs() / m));
        let mut logs: Vec<f64> = reached.iter().map(|(p, m)| (p / m).ln()).collect();
        logs.sort_by(f64::total_cmp);
        if let Some(&level) = logs.get(logs.len() / 2) {
            out.calibrated
                .extend(reached.iter().map(|(p, m)| (p / level.exp() - m).abs() / m));
        }
    }
    out
}

/// One row of the held-out checks' table.
fn ranking_row(check: &str, r: &Ranking) -> String {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let median = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s.get(s.len() / 2).copied().unwrap_or(f64::NAN)
    };
    format!(
        "| {check} | {:.2} | {:.2} | {} of {} | {:.0}% / {:.0}% | {:.0}% / {:.0}% |\n",
        mean(&r.taus),
        r.taus.iter().copied().fold(f64::INFINITY, f64::min),
        r.taus.iter().filter(|&&t| t >= 0.7).count(),
        r.taus.len(),
        100.0 * mean(&r.errors),
        100.0 * median(&r.errors),
        100.0 * mean(&r.calibrated),
        100.0 * median(&r.calibrated),
    )
}

/// The held-out checks besides leave-one-underlay-out: (1) fitted on the
/// other underlays' runs of the seeds before the held-out underlay's last,
/// judged on that last seed; (2) leave-one-data-setting-out (the
/// held-out data's level is the others' intercepts' plane in the label
/// heterogeneity `h` and `h s`, as shipped, clamped to their range: its out-of-sample
/// error says how far that level is on data not seen, the error after one
/// level per cell and Kendall's tau what the slopes carry to unseen data).
fn other_checks(
    runs: &[Run],
    settings: &[String],
    underlays: &[(String, usize)],
    louo: &[f64],
) -> Result<String> {
    let mut table = String::from(
        "| check | Kendall tau mean | min | cells >= 0.7 | OOS error mean / median | after one level per cell |\n|---|---:|---:|---:|---:|---:|\n",
    );
    let all: Vec<usize> = (0..runs.len()).collect();
    table += &ranking_row(
        "leave-one-underlay-out (every seed; the summary's)",
        &ranking(runs, &all, louo),
    );
    let mut predicted = vec![f64::NAN; runs.len()];
    let mut tested = Vec::new();
    for (u, _) in underlays {
        // The underlay's last seed is judged; the fit sees the other
        // underlays' seeds before it (underlays may have different seeds).
        let Some(last) = runs
            .iter()
            .filter(|r| &r.underlay == u)
            .map(|r| r.seed)
            .max()
        else {
            continue;
        };
        let train: Vec<&Run> = runs
            .iter()
            .filter(|r| &r.underlay != u && r.seed < last)
            .collect();
        let w = fit(&train, settings)?;
        for (i, r) in runs.iter().enumerate() {
            if &r.underlay == u && r.seed == last {
                predicted[i] = predict_rounds(&w, r, settings) * r.cycle_time_ms;
                tested.push(i);
            }
        }
    }
    table += &ranking_row(
        "leave-one-underlay-out, fitted on the other underlays' seeds before the judged one, \
         judged on each underlay's last seed",
        &ranking(runs, &tested, &predicted),
    );
    let mut predicted = vec![f64::NAN; runs.len()];
    for d in settings {
        let others: Vec<String> = settings.iter().filter(|s| *s != d).cloned().collect();
        let train: Vec<&Run> = runs.iter().filter(|r| &r.data != d).collect();
        let w = fit(&train, &others)?;
        let plane = level_plane(&w, &train, &others)?;
        for (i, r) in runs.iter().enumerate() {
            if &r.data == d {
                let level = plane.at(r.label_heterogeneity, r.label_share);
                predicted[i] = predict_rounds_at(&w, r, &others, level) * r.cycle_time_ms;
            }
        }
    }
    table += &ranking_row(
        "leave-one-data-setting-out (every seed)",
        &ranking(runs, &all, &predicted),
    );
    Ok(table)
}

/// Kendall's tau-b between predicted and measured times over the pairs
/// whose measured order is known (a not-reached run is slower than every
/// run that reached the target within its bound; two not-reached runs are
/// not compared).
fn kendall(items: &[(f64, Option<f64>, f64)]) -> Option<f64> {
    // (predicted, measured time or None, lower bound when None)
    let (mut conc, mut disc, mut tp, mut tm) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for i in 0..items.len() {
        for j in i + 1..items.len() {
            let (pi, mi, bi) = items[i];
            let (pj, mj, bj) = items[j];
            let m = match (mi, mj) {
                (Some(a), Some(b)) => a.total_cmp(&b),
                (Some(a), None) if a <= bj => std::cmp::Ordering::Less,
                (None, Some(b)) if b <= bi => std::cmp::Ordering::Greater,
                _ => continue,
            };
            let p = pi.total_cmp(&pj);
            match (p, m) {
                (std::cmp::Ordering::Equal, std::cmp::Ordering::Equal) => {}
                (std::cmp::Ordering::Equal, _) => tp += 1.0,
                (_, std::cmp::Ordering::Equal) => tm += 1.0,
                _ if p == m => conc += 1.0,
                _ => disc += 1.0,
            }
        }
    }
    let n0 = conc + disc;
    let d = ((n0 + tp) * (n0 + tm)).sqrt();
    (d > 0.0).then(|| (conc - disc) / d)
}

/// How well a cell's seeds agree on the measured ranking.
struct Agreement {
    /// Mean over pairs of seeds of Kendall's tau-b between their measured
    /// times (candidates reached in both).
    seed_tau: f64,
    /// The tau a perfect predictor can expect against the mean of the
    /// cell's seeds: Greiner's relation `rho = sin(pi tau / 2)` to a
    /// correlation, Spearman-Brown `k rho / (1 + (k - 1) rho)` for the
    /// mean of `k` seeds, its square root the correlation with the
    /// noise-free ranking, and back (a normal approximation).
    ceiling: f64,
}

/// The seeds' agreement in a cell, `measured` holding each candidate's time
/// per seed (None: not reached); None with fewer than two seeds.
fn seed_agreement(
    measured: &BTreeMap<String, Vec<Option<f64>>>,
    seeds: usize,
) -> Option<Agreement> {
    let mut taus = Vec::new();
    for a in 0..seeds {
        for b in a + 1..seeds {
            let items: Vec<(f64, Option<f64>, f64)> = measured
                .values()
                .filter(|v| v.len() == seeds)
                .filter_map(|v| Some((v[a]?, Some(v[b]?), f64::INFINITY)))
                .collect();
            taus.extend(kendall(&items));
        }
    }
    if taus.is_empty() {
        return None;
    }
    let seed_tau = taus.iter().sum::<f64>() / taus.len() as f64;
    let rho = (std::f64::consts::FRAC_PI_2 * seed_tau).sin().max(0.0);
    let k = seeds as f64;
    let reliability = k * rho / (1.0 + (k - 1.0) * rho);
    let ceiling = reliability.sqrt().asin() / std::f64::consts::FRAC_PI_2;
    Some(Agreement { seed_tau, ceiling })
}

/// results.md's "Seed agreement" section: per cell, the seeds' agreement,
/// the ceiling it puts on Kendall's tau and the predictor's tau.
fn agreement_section(rows: &[(CellKey, Agreement, Option<f64>)]) -> String {
    let mut table = String::from(
        "| underlay | access | data | seed vs seed tau (mean over pairs) | ceiling for the mean of the seeds | predictor tau | predictor / ceiling |\n|---|---|---|---:|---:|---:|---:|\n",
    );
    let mut ratios = Vec::new();
    let (mut low_ceiling, mut far_below) = (0, 0);
    for (cell, a, tau) in rows {
        let Some(t) = tau else { continue };
        ratios.push(t / a.ceiling);
        low_ceiling += usize::from(a.ceiling < 0.7);
        far_below += usize::from(a.ceiling - t >= 0.2);
        table.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
            cell.0,
            cell.1,
            cell.2,
            a.seed_tau,
            a.ceiling,
            t,
            t / a.ceiling
        ));
    }
    let min_ceiling = rows
        .iter()
        .filter(|r| r.2.is_some())
        .map(|r| r.1.ceiling)
        .fold(f64::INFINITY, f64::min);
    format!(
        "## Seed agreement\n\n\
         How far can any predictor rank a cell's candidates right, when the measured ranking \
         it is judged against is itself noisy? Two seeds of one cell agree on the candidates' \
         order (Kendall's tau between their measured times, candidates reached in both) only \
         so far; the ceiling is what a perfect predictor can expect against the mean of the \
         cell's seeds (Greiner's relation to a correlation, Spearman-Brown for the mean of the \
         seeds, a normal approximation). Over {} cells with a predictor tau: ceiling min {:.2}, \
         {} cells below 0.7; the predictor reaches {:.2} of its cell's ceiling on average; \
         {} cells fall 0.2 or more below their ceiling (there the \
         predictor, not the measurement, loses the ranking).\n\n{}",
        ratios.len(),
        min_ceiling,
        low_ceiling,
        ratios.iter().sum::<f64>() / ratios.len().max(1) as f64,
        far_below,
        table
    )
}

struct Args {
    runs: PathBuf,
    features: PathBuf,
    flow: PathBuf,
    out: PathBuf,
    fitted: PathBuf,
}

fn parse_args() -> Result<Args> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        runs: here.join("experiments/design/runs.csv"),
        features: here.join("experiments/design/features.csv"),
        flow: here.join("experiments/design/flow.csv"),
        out: here.join("experiments/design"),
        fitted: here.join("src/design/fitted.rs"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--runs" => a.runs = PathBuf::from(v),
            "--features" => a.features = PathBuf::from(v),
            "--flow" => a.flow = PathBuf::from(v),
            "--out" => a.out = PathBuf::from(v),
            "--fitted" => a.fitted = PathBuf::from(v),
            other => bail!("unknown argument `{other}` (see the doc comment of main.rs)"),
        }
    }
    Ok(a)
}

fn read_runs(path: &Path) -> Result<Vec<Run>> {
    let runs = read_runs_unchecked(path)?;
    for (i, run) in runs.iter().enumerate() {
        if !(run.cycle_time_ms.is_finite() && run.cycle_time_ms > 0.0) {
            bail!(
                "{}: row {}: cycle time {}",
                path.display(),
                i + 2,
                run.cycle_time_ms
            );
        }
    }
    if runs.is_empty() {
        bail!("{}: no run", path.display());
    }
    Ok(runs)
}

type CellKey = (String, String, String);

/// The runs `rows` (indices into `runs`) grouped by cell (underlay,
/// access, data), in cell order.
fn cells_of(runs: &[Run], rows: &[usize]) -> BTreeMap<CellKey, Vec<usize>> {
    let mut cells: BTreeMap<CellKey, Vec<usize>> = BTreeMap::new();
    for &i in rows {
        let r = &runs[i];
        cells
            .entry((r.underlay.clone(), r.access.clone(), r.data.clone()))
            .or_default()
            .push(i);
    }
    cells
}

/// Number of distinct seeds among the runs `idx`.
fn seed_count(runs: &[Run], idx: &[usize]) -> usize {
    idx.iter()
        .map(|&i| runs[i].seed)
        .collect::<BTreeSet<_>>()
        .len()
}

/// (underlay, access, data, seed, candidate).
type RunKey = (String, String, String, u64, String);

/// A candidate's figures as `design-features` computes them
/// with the current code (no training): everything the predictor reads.
#[derive(Debug, Clone, Copy)]
struct Figures {
    silos: usize,
    cycle_time_ms: f64,
    mixing_time: f64,
    effective_neighbours: f64,
    time_varying: bool,
    label_heterogeneity: f64,
    mixed_heterogeneity: f64,
    stationary_imbalance: f64,
    label_share: f64,
    asymmetric: bool,
}

/// Every figure the predictor reads comes from `features.csv`
/// (`design-features`, minutes, no training), by (underlay,
/// access, data, seed, candidate); `runs.csv` contributes only what was
/// measured (reached, rounds, time). So a change of the figures' code is
/// taken up by regenerating `features.csv`, not by retraining (the
/// figure columns of `runs.csv` are as of its training runs). Every run
/// must have its row.
fn join_features(runs: &mut [Run], path: &Path) -> Result<()> {
    let mut by_key: BTreeMap<RunKey, Figures> = BTreeMap::new();
    for f in read_runs_unchecked(path)? {
        let figures = Figures {
            silos: f.silos,
            cycle_time_ms: f.cycle_time_ms,
            mixing_time: f.mixing_time,
            effective_neighbours: f.effective_neighbours,
            time_varying: f.time_varying,
            label_heterogeneity: f.label_heterogeneity,
            mixed_heterogeneity: f.mixed_heterogeneity,
            stationary_imbalance: f.stationary_imbalance,
            label_share: f.label_share,
            asymmetric: f.asymmetric,
        };
        by_key.insert((f.underlay, f.access, f.data, f.seed, f.candidate), figures);
    }
    for r in runs.iter_mut() {
        let key = r.key();
        let Some(f) = by_key.get(&key) else {
            bail!(
                "{}: no figures for {} {} {} seed {} {} (run design-features)",
                path.display(),
                key.0,
                key.1,
                key.2,
                key.3,
                key.4
            );
        };
        r.silos = f.silos;
        r.cycle_time_ms = f.cycle_time_ms;
        r.mixing_time = f.mixing_time;
        r.effective_neighbours = f.effective_neighbours;
        r.time_varying = f.time_varying;
        r.label_heterogeneity = f.label_heterogeneity;
        r.mixed_heterogeneity = f.mixed_heterogeneity;
        r.stationary_imbalance = f.stationary_imbalance;
        r.label_share = f.label_share;
        r.asymmetric = f.asymmetric;
    }
    Ok(())
}

fn read_runs_unchecked(path: &Path) -> Result<Vec<Run>> {
    let mut r = csv::Reader::from_path(path).with_context(|| format!("{}", path.display()))?;
    r.deserialize()
        .enumerate()
        .map(|(i, rec)| rec.with_context(|| format!("{}: row {}", path.display(), i + 2)))
        .collect()
}

/// Mean and standard error of `xs`.
fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (m, 0.0);
    }
    let v = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, (v / n).sqrt())
}

/// A chosen overlay judged against the best of the list in one cell.
struct Judged {
    /// Mean time of the chosen over the best's (None: one not reached).
    ratio: Option<f64>,
    /// Standard error of the per-seed ratios.
    se: Option<f64>,
    verdict: &'static str,
}

/// Counts of verdicts over the cells.
#[derive(Default)]
struct Tally {
    counted: usize,
    losses: usize,
    wins10: usize,
}

impl Tally {
    fn add(&mut self, j: &Judged) {
        match j.verdict {
            "no baseline reached" => return,
            "slower" | "designed not reached" => self.losses += 1,
            "wins by >= 10%" => self.wins10 += 1,
            _ => {}
        }
        self.counted += 1;
    }
}

/// Judges the chosen overlay's times per seed (`times`, None: not
/// reached) against the best of the list (`best`: name, mean time;
/// `best_times`: its times per seed): slower when the mean ratio exceeds
/// 1 by more than twice the standard error of the per-seed ratios, a win
/// when it is <= 0.9.
fn judge(
    times: &[Option<f64>],
    best: Option<(&str, f64)>,
    best_times: Option<&[Option<f64>]>,
) -> Judged {
    let mean: Option<f64> = times
        .iter()
        .copied()
        .collect::<Option<Vec<f64>>>()
        .map(|x| mean_se(&x).0);
    match (mean, best, best_times) {
        (Some(d), Some((_, bt)), Some(per)) => {
            let per_seed: Vec<f64> = times
                .iter()
                .zip(per)
                .filter_map(|(x, y)| Some(x.as_ref()? / y.as_ref()?))
                .collect();
            let (_, se) = mean_se(&per_seed);
            let ratio = d / bt;
            let verdict = if ratio > 1.0 + 2.0 * se.max(0.0) {
                "slower"
            } else if ratio <= 0.9 {
                "wins by >= 10%"
            } else {
                "ties or wins"
            };
            Judged {
                ratio: Some(ratio),
                se: Some(se),
                verdict,
            }
        }
        (None, Some(_), _) => Judged {
            ratio: None,
            se: None,
            verdict: "designed not reached",
        },
        _ => Judged {
            ratio: None,
            se: None,
            verdict: "no baseline reached",
        },
    }
}

/// What `fedtopo design --verify` (its defaults: [`VERIFY_PROBES`] probes
/// of [`VERIFY_PROBE_ROUNDS`] rounds spread over the mixing times, the
/// [`VERIFY_TOP`] best predicted and those within [`VERIFY_WINDOW`] of the
/// best trained to the target, runs raced) would
/// choose from the runs `idx` of one cell and seed, whose measurements
/// stand for its training runs: training is deterministic given the seed,
/// so a probe reaches the target iff the full run did within the probe's
/// rounds, at the same round. Returns the measured winner (least time to
/// the target among the top runs and the probes that reached it; ties by
/// name; the predicted best when none reached it) and the wall-clock time
/// (ms) of the verification's runs, raced (as `design --verify`: with the
/// fitted predictor the top runs first, every run stopped once it passes
/// the best time measured before it, costing at most that time) and not
/// (`--no-race`: probes first, every run to the target or its round limit,
/// whose rounds cost their cycle time each).
fn verify_choice(runs: &[Run], idx: &[usize], predicted: &[f64]) -> Option<(String, f64, f64)> {
    let taus: Vec<f64> = idx.iter().map(|&i| runs[i].mixing_time).collect();
    let probes: Vec<usize> = spread_over_mixing_times(&taus, VERIFY_PROBES)
        .into_iter()
        .map(|k| idx[k])
        .collect();
    let mut ranked: Vec<usize> = idx.to_vec();
    ranked.sort_by(|&i, &j| {
        predicted[i]
            .total_cmp(&predicted[j])
            .then(runs[i].candidate.cmp(&runs[j].candidate))
    });
    let ranked_ms: Vec<f64> = ranked.iter().map(|&i| predicted[i]).collect();
    let top: Vec<usize> = ranked
        .iter()
        .copied()
        .take(verified_count(&ranked_ms, VERIFY_TOP, VERIFY_WINDOW))
        .collect();
    // A run: (its time when it reaches the target within `limit` rounds,
    // else the time of `limit` rounds).
    let outcome = |i: usize, limit: u64| -> (Option<f64>, f64) {
        let r = &runs[i];
        match (r.rounds_to_target, r.time_to_target_ms) {
            (Some(k), Some(t)) if k <= limit => (Some(t), t),
            _ => (None, limit as f64 * r.cycle_time_ms),
        }
    };
    let mut measured: Vec<(f64, &str)> = Vec::new();
    // Raced: the top first, then the probes not among them.
    let (mut raced, mut best) = (0.0, f64::INFINITY);
    let order = top.iter().map(|&i| (i, runs[i].rounds_budget)).chain(
        probes
            .iter()
            .filter(|i| !top.contains(i))
            .map(|&i| (i, VERIFY_PROBE_ROUNDS)),
    );
    for (i, limit) in order {
        let (reached, cost) = outcome(i, limit);
        raced += cost.min(best);
        if let Some(t) = reached {
            measured.push((t, &runs[i].candidate));
            best = best.min(t);
        }
    }
    // Not raced: the probes, then the top runs not measured by a probe.
    let mut plain = 0.0;
    let mut probe_reached = BTreeSet::new();
    for &i in &probes {
        let (reached, cost) = outcome(i, VERIFY_PROBE_ROUNDS);
        plain += cost;
        if reached.is_some() {
            probe_reached.insert(i);
        }
    }
    for &i in &top {
        if !probe_reached.contains(&i) {
            plain += outcome(i, runs[i].rounds_budget).1;
        }
    }
    let chosen = measured
        .iter()
        .min_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(y.1)))
        .map(|m| m.1)
        .or_else(|| ranked.first().map(|&i| runs[i].candidate.as_str()))?;
    Some((chosen.to_string(), raced, plain))
}

/// Mean over seeds; not reached in any seed: not reached.
fn mean_of(v: &[Option<f64>]) -> Option<f64> {
    let xs: Option<Vec<f64>> = v.iter().copied().collect();
    xs.map(|x| mean_se(&x).0)
}

/// The best overlay of the list in a cell: least mean time over the
/// `seeds` seeds among those measured in every seed and reached in all
/// (`measured`: times per seed by candidate name); ties by name.
fn best_of_list(
    measured: &BTreeMap<String, Vec<Option<f64>>>,
    seeds: usize,
) -> Option<(&'static str, f64)> {
    BASELINES
        .iter()
        .filter_map(|b| {
            let v = measured.get(*b)?;
            (v.len() == seeds).then(|| (*b, mean_of(v)))
        })
        .filter_map(|(b, t)| t.map(|t| (b, t)))
        .min_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(y.0)))
}

/// `flow.csv` (`design-features`): every candidate's mean round on the
/// flow network, ms, by run key.
fn read_flow(path: &Path) -> Result<BTreeMap<RunKey, f64>> {
    #[derive(Deserialize)]
    struct FlowRow {
        underlay: String,
        access: String,
        data: String,
        seed: u64,
        candidate: String,
        flow_round_ms: f64,
    }
    let mut r = csv::Reader::from_path(path).with_context(|| format!("{}", path.display()))?;
    let mut out = BTreeMap::new();
    for (i, rec) in r.deserialize::<FlowRow>().enumerate() {
        let f = rec.with_context(|| format!("{}: row {}", path.display(), i + 2))?;
        if !(f.flow_round_ms.is_finite() && f.flow_round_ms > 0.0) {
            bail!(
                "{}: row {}: flow round {}",
                path.display(),
                i + 2,
                f.flow_round_ms
            );
        }
        out.insert(
            (f.underlay, f.access, f.data, f.seed, f.candidate),
            f.flow_round_ms,
        );
    }
    Ok(out)
}

/// results.md's section on link sharing. Every time elsewhere is eq. (3)'s
/// (max-plus cycle time x measured rounds), in which the transfers of a
/// round never share a core link. Here a candidate's time to the target is
/// its measured rounds x its mean round on the flow network (`flow`:
/// links shared max-min fairly; a mean round of a replay, not its clock
/// over exactly those rounds). The design ranks by predicted rounds x
/// flow round (what `fedtopo design --network flow` does; the predicted
/// rounds are the leave-one-underlay-out ones above) and is judged against
/// the best of the list on the flow network, as above; so is eq. (3)'s
/// choice, to show what ignoring link sharing costs.
fn flow_section(
    runs: &[Run],
    cells: &BTreeMap<CellKey, Vec<u64>>,
    by_cell_seed: &BTreeMap<(CellKey, u64), Vec<usize>>,
    predicted: &[f64],
    flow: &BTreeMap<RunKey, f64>,
) -> Result<String> {
    let flow_of = |r: &Run| -> Result<f64> {
        let key = r.key();
        flow.get(&key).copied().with_context(|| {
            format!(
                "flow.csv: no flow round for {} {} {} seed {} {} (run design-features)",
                key.0, key.1, key.2, key.3, key.4
            )
        })
    };
    let mut table = String::from(
        "| underlay | access | data | designed for flow (chosen before training) | its time (s) | best other on flow (s) | designed / best | verdict | eq. (3)'s choice | its time on flow (s) | / best | verdict |\n|---|---|---|---|---:|---:|---:|---|---|---:|---:|---|\n",
    );
    let (mut tally, mut eq3_tally) = (Tally::default(), Tally::default());
    let mut ratios = Vec::new();
    for (cell, seeds) in cells {
        let mut measured: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
        let (mut chosen_times, mut eq3_times) = (Vec::new(), Vec::new());
        let (mut chosen_names, mut eq3_names) = (BTreeSet::new(), BTreeSet::new());
        for seed in seeds {
            let idx = &by_cell_seed[&(cell.clone(), *seed)];
            let mut round = Vec::with_capacity(idx.len());
            for &i in idx {
                round.push(flow_of(&runs[i])?);
            }
            let time = |k: usize| {
                let r = &runs[idx[k]];
                r.rounds_to_target.map(|n| n as f64 * round[k])
            };
            let pick = |score: &dyn Fn(usize) -> f64| {
                (0..idx.len()).min_by(|&x, &y| {
                    score(x)
                        .total_cmp(&score(y))
                        .then(runs[idx[x]].candidate.cmp(&runs[idx[y]].candidate))
                })
            };
            let by_flow = pick(&|k| predicted[idx[k]] / runs[idx[k]].cycle_time_ms * round[k])
                .context("empty cell")?;
            let by_eq3 = pick(&|k| predicted[idx[k]]).context("empty cell")?;
            chosen_names.insert(runs[idx[by_flow]].candidate.clone());
            eq3_names.insert(runs[idx[by_eq3]].candidate.clone());
            chosen_times.push(time(by_flow));
            eq3_times.push(time(by_eq3));
            for k in 0..idx.len() {
                for name in runs[idx[k]].names() {
                    measured.entry(name.to_string()).or_default().push(time(k));
                }
            }
        }
        let best = best_of_list(&measured, seeds.len());
        let best_times = best.map(|(b, _)| measured[b].as_slice());
        let judged = judge(&chosen_times, best, best_times);
        let eq3 = judge(&eq3_times, best, best_times);
        tally.add(&judged);
        eq3_tally.add(&eq3);
        if let Some(r) = judged.ratio {
            ratios.push(r);
        }
        let s = |t: Option<f64>| t.map_or(String::new(), |t| format!("{:.3}", t / 1e3));
        let r = |j: &Judged| j.ratio.map_or(String::new(), |r| format!("{r:.2}"));
        let names = |n: &BTreeSet<String>| n.iter().cloned().collect::<Vec<_>>().join(" / ");
        writeln!(
            table,
            "| {} | {} | {} | {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} |",
            cell.0,
            cell.1,
            cell.2,
            names(&chosen_names),
            s(mean_of(&chosen_times)),
            s(best.map(|b| b.1)),
            best.map_or("-", |b| b.0),
            r(&judged),
            judged.verdict,
            names(&eq3_names),
            s(mean_of(&eq3_times)),
            r(&eq3),
            eq3.verdict
        )?;
    }
    Ok(format!(
        "## On the flow network (links shared)\n\n\
         Every time above is eq. (3)'s: a round lasts the max-plus cycle time, in which the \
         transfers of a round never share a core link. Here a candidate's time to the target \
         is its measured rounds x its mean round on the flow network (`design-features`: a \
         {FLOW_ROUNDS}-round replay, links shared max-min fairly; `flow.csv`). The design ranks \
         by predicted rounds x flow round (`fedtopo design --network flow`) and is judged \
         against the best of the list on the flow network, as above; eq. (3)'s choice (the \
         cells table's) is judged the same way. Over {} cells with a comparison: ranked for \
         flow, slower than the best of the list beyond seed noise in {}, >= 10% faster in {} \
         (designed / best, geometric mean {:.2}); eq. (3)'s choice on the flow network: slower \
         in {}, >= 10% faster in {}.\n\n{table}",
        tally.counted,
        tally.losses,
        tally.wins10,
        geomean(&ratios),
        eq3_tally.losses,
        eq3_tally.wins10
    ))
}

/// Rounds of the flow replay behind `flow.csv` (`design-features`).
const FLOW_ROUNDS: u64 = fedtopo::design::search::DEFAULT_REPLAY_ROUNDS;

fn main() -> Result<()> {
    let a = parse_args()?;
    let mut runs = read_runs(&a.runs)?;
    join_features(&mut runs, &a.features)?;
    let settings: Vec<String> = runs
        .iter()
        .map(|r| r.data.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let underlays: Vec<(String, usize)> = runs
        .iter()
        .map(|r| (r.silos, r.underlay.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|(n, u)| (u, n))
        .collect();
    let seeds: BTreeSet<u64> = runs.iter().map(|r| r.seed).collect();

    // Leave-one-underlay-out predictions.
    // Besides, the rounds of the uncalibrated levels (`fedtopo design`
    // without --calibrate/--verify): the mean of the settings' intercepts
    // (before) and their plane in `h` and `h s` (after), fitted without the underlay.
    let mut predicted: Vec<f64> = vec![f64::NAN; runs.len()];
    let mut uncalibrated = Uncalibrated {
        mean_level: vec![f64::NAN; runs.len()],
        plane_level: vec![f64::NAN; runs.len()],
        own_level: vec![f64::NAN; runs.len()],
    };
    let mut fits = String::new();
    for (u, _) in &underlays {
        let train: Vec<&Run> = runs.iter().filter(|r| &r.underlay != u).collect();
        if train.is_empty() {
            bail!("leave-one-underlay-out needs runs on at least two underlays");
        }
        let w = fit(&train, &settings)?;
        let k = settings.len();
        let mean_level = w[..k].iter().sum::<f64>() / k as f64;
        let plane = level_plane(&w, &train, &settings)?;
        writeln!(
            fits,
            "| {u} | {} | {:+.3} {:+.3} x h {:+.3} x h s |",
            fmt_weights(&w),
            plane.at_zero,
            plane.slope,
            plane.share_slope
        )?;
        for (i, r) in runs.iter().enumerate() {
            if &r.underlay == u {
                let rounds = predict_rounds(&w, r, &settings);
                predicted[i] = rounds * r.cycle_time_ms;
                uncalibrated.own_level[i] = rounds;
                uncalibrated.mean_level[i] = predict_rounds_at(&w, r, &settings, mean_level);
                uncalibrated.plane_level[i] = predict_rounds_at(
                    &w,
                    r,
                    &settings,
                    plane.at(r.label_heterogeneity, r.label_share),
                );
            }
        }
    }
    let level_table = uncalibrated.table(&runs, &settings)?;

    // Per cell and seed: the design's choice, the measured times.
    let mut by_cell_seed: BTreeMap<(CellKey, u64), Vec<usize>> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        let key = (r.underlay.clone(), r.access.clone(), r.data.clone());
        by_cell_seed.entry((key, r.seed)).or_default().push(i);
    }
    let mut cells: BTreeMap<CellKey, Vec<u64>> = BTreeMap::new();
    for (k, _) in by_cell_seed.keys() {
        cells.entry(k.clone()).or_default();
    }
    for ((k, s), _) in by_cell_seed.iter() {
        if let Some(v) = cells.get_mut(k) {
            v.push(*s);
        }
    }

    let mut pred_csv = String::from(
        "underlay,access,data,seed,candidate,same_as,cycle_time_ms,predicted_rounds,predicted_time_ms,reached,rounds_to_target,time_to_target_ms,rounds_budget,designed\n",
    );
    let mut results_csv = String::from(
        "underlay,silos,access,data,seeds,designed,designed_time_s,best_other,best_other_time_s,designed_over_best,seed_se,verdict,ring_time_s,speedup_over_ring,ring_opt_time_s,kendall_tau,oos_error,oos_runs,proxy_choice,proxy_time_s,proxy_over_best,verify_top3_over_best,verify_choice,verify_time_s,verify_over_best,verify_seed_se,verify_verdict,verify_speedup_over_ring,verify_cost_over_time,verify_no_race_cost_over_time\n",
    );
    let mut md = String::new();
    writeln!(
        md,
        "| underlay | access | data | designed (chosen before training) | designed (s) | best other (s) | designed / best | verdict | vs RING | Kendall tau | OOS error |\n|---|---|---|---|---:|---:|---:|---|---:|---:|---:|"
    )?;
    let mut all_oos: Vec<f64> = Vec::new();
    let mut all_cal: Vec<f64> = Vec::new();
    let mut proxy_ratios: Vec<f64> = Vec::new();
    let mut design_ratios: Vec<f64> = Vec::new();
    let mut top3_ratios: Vec<f64> = Vec::new();
    let mut taus: Vec<f64> = Vec::new();
    let mut agreement: Vec<(CellKey, Agreement, Option<f64>)> = Vec::new();
    let mut speedups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut tally = Tally::default();
    let mut verify_tally = Tally::default();
    let mut verify_speedups: Vec<f64> = Vec::new();
    let mut verify_ratios: Vec<f64> = Vec::new();
    let mut verify_costs: Vec<f64> = Vec::new();
    let mut verify_plain_costs: Vec<f64> = Vec::new();
    let mut verify_md = String::from(
        "| underlay | access | data | `design --verify` winner (its runs on another seed) | its time (s) | best other (s) | winner / best | verdict | vs RING | training / winner's time: raced | --no-race |\n|---|---|---|---|---:|---:|---:|---|---:|---:|---:|\n",
    );
    for (cell, cell_seeds) in &cells {
        // Per candidate name: measured time per seed (None: not reached).
        let mut measured: BTreeMap<String, Vec<Option<f64>>> = BTreeMap::new();
        let mut designed_times: Vec<Option<f64>> = Vec::new();
        let mut designed_names: BTreeSet<String> = BTreeSet::new();
        let mut proxy_times: Vec<Option<f64>> = Vec::new();
        let mut top3_times: Vec<Option<f64>> = Vec::new();
        let mut proxy_names: BTreeSet<String> = BTreeSet::new();
        let mut pred_mean: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let mut bound: BTreeMap<String, f64> = BTreeMap::new();
        for seed in cell_seeds {
            let idx = &by_cell_seed[&(cell.clone(), *seed)];
            let chosen = idx
                .iter()
                .copied()
                .min_by(|&i, &j| {
                    predicted[i]
                        .total_cmp(&predicted[j])
                        .then(runs[i].candidate.cmp(&runs[j].candidate))
                })
                .context("empty cell")?;
            designed_names.insert(runs[chosen].candidate.clone());
            designed_times.push(runs[chosen].time_to_target_ms);
            // `design --verify --top 3`: the best measured of the 3 best predicted.
            let mut ranked: Vec<usize> = idx.clone();
            ranked.sort_by(|&i, &j| {
                predicted[i]
                    .total_cmp(&predicted[j])
                    .then(runs[i].candidate.cmp(&runs[j].candidate))
            });
            let top3 = ranked
                .iter()
                .take(3)
                .filter_map(|&i| runs[i].time_to_target_ms)
                .min_by(f64::total_cmp);
            top3_times.push(top3);
            // The earlier proxy's choice (15 + mixing time rounds), for comparison.
            let proxy = |i: usize| runs[i].cycle_time_ms * (15.0 + runs[i].mixing_time);
            let by_proxy = idx
                .iter()
                .copied()
                .min_by(|&i, &j| {
                    proxy(i)
                        .total_cmp(&proxy(j))
                        .then(runs[i].candidate.cmp(&runs[j].candidate))
                })
                .context("empty cell")?;
            proxy_names.insert(runs[by_proxy].candidate.clone());
            proxy_times.push(runs[by_proxy].time_to_target_ms);
            for &i in idx {
                let r = &runs[i];
                for name in r.names() {
                    measured
                        .entry(name.to_string())
                        .or_default()
                        .push(r.time_to_target_ms);
                    pred_mean
                        .entry(name.to_string())
                        .or_default()
                        .push(predicted[i]);
                    if r.time_to_target_ms.is_none() {
                        // Lower bound: the budget's rounds at the cycle time.
                        bound.insert(name.to_string(), r.rounds_budget as f64 * r.cycle_time_ms);
                    }
                }
                writeln!(
                    pred_csv,
                    "{},{},{},{},{},{},{:.3},{:.2},{:.1},{},{},{},{},{}",
                    cell.0,
                    cell.1,
                    cell.2,
                    seed,
                    r.candidate,
                    r.same_as,
                    r.cycle_time_ms,
                    predicted[i] / r.cycle_time_ms,
                    predicted[i],
                    r.reached,
                    r.rounds_to_target.map_or(String::new(), |x| x.to_string()),
                    r.time_to_target_ms
                        .map_or(String::new(), |x| format!("{x:.1}")),
                    r.rounds_budget,
                    i == chosen
                )?;
            }
        }
        let designed = mean_of(&designed_times);
        let best_other = best_of_list(&measured, cell_seeds.len());
        let ring = measured.get("ring").and_then(|v| mean_of(v));
        let ring_opt = measured.get("ring-opt").and_then(|v| mean_of(v));
        // Seed noise of designed / best: per-seed ratios.
        let best_times = best_other.map(|(b, _)| measured[b].as_slice());
        let judged = judge(&designed_times, best_other, best_times);
        tally.add(&judged);
        let (ratio, se, verdict) = (judged.ratio, judged.se, judged.verdict.to_string());
        // `design --verify` on another seed: the next seed of the cell
        // (cyclically) trains its probes and top candidates.
        let mut verify_times: Vec<Option<f64>> = Vec::new();
        let mut verify_names: BTreeSet<String> = BTreeSet::new();
        let mut verify_cost: Vec<f64> = Vec::new();
        let mut verify_plain_cost: Vec<f64> = Vec::new();
        let mut verify_complete = cell_seeds.len() > 1;
        for (p, seed) in cell_seeds.iter().enumerate() {
            let probe_seed = cell_seeds[(p + 1) % cell_seeds.len()];
            let probe_idx = &by_cell_seed[&(cell.clone(), probe_seed)];
            let Some((chosen, cost, plain_cost)) = verify_choice(&runs, probe_idx, &predicted)
            else {
                verify_complete = false;
                continue;
            };
            let idx = &by_cell_seed[&(cell.clone(), *seed)];
            match idx
                .iter()
                .find(|&&i| runs[i].names().contains(&chosen.as_str()))
            {
                Some(&i) => {
                    verify_times.push(runs[i].time_to_target_ms);
                    if let Some(t) = runs[i].time_to_target_ms {
                        verify_cost.push(cost / t);
                        verify_plain_cost.push(plain_cost / t);
                    }
                }
                None => verify_complete = false,
            }
            verify_names.insert(chosen);
        }
        let verify = verify_complete.then(|| {
            let j = judge(&verify_times, best_other, best_times);
            verify_tally.add(&j);
            if let Some(r) = j.ratio {
                verify_ratios.push(r);
            }
            j
        });
        let verify_time = verify.as_ref().and_then(|_| mean_of(&verify_times));
        if let (Some(v), Some(r)) = (verify_time, ring) {
            verify_speedups.push(r / v);
        }
        verify_costs.extend(&verify_cost);
        verify_plain_costs.extend(&verify_plain_cost);
        if let (Some(d), Some(r)) = (designed, ring) {
            speedups.entry(cell.0.clone()).or_default().push(r / d);
        }
        // Kendall tau over candidates (mean predicted, mean measured).
        let items: Vec<(f64, Option<f64>, f64)> = measured
            .iter()
            .filter(|(name, v)| v.len() == cell_seeds.len() && pred_mean.contains_key(*name))
            .map(|(name, v)| {
                let p = mean_se(&pred_mean[name]).0;
                (
                    p,
                    mean_of(v),
                    bound.get(name).copied().unwrap_or(f64::INFINITY),
                )
            })
            .filter(|x| x.0.is_finite())
            .collect();
        let tau = kendall(&items);
        if let Some(t) = tau {
            taus.push(t);
        }
        if let Some(a) = seed_agreement(&measured, cell_seeds.len()) {
            agreement.push((cell.clone(), a, tau));
        }
        // Out-of-sample error of predicted time, candidates reached in every seed.
        let errs: Vec<f64> = items
            .iter()
            .filter_map(|(p, m, _)| m.map(|m| (p - m).abs() / m))
            .collect();
        all_oos.extend(&errs);
        // The same after one level per cell (what --calibrate / --verify fit):
        // predictions divided by their median ratio to the measurements.
        let mut logs: Vec<f64> = items
            .iter()
            .filter_map(|(p, m, _)| m.map(|m| (p / m).ln()))
            .collect();
        logs.sort_by(f64::total_cmp);
        if let Some(&level) = logs.get(logs.len() / 2) {
            all_cal.extend(
                items
                    .iter()
                    .filter_map(|(p, m, _)| m.map(|m| (p / level.exp() - m).abs() / m)),
            );
        }
        let oos = (!errs.is_empty()).then(|| errs.iter().sum::<f64>() / errs.len() as f64);
        let silos = underlays
            .iter()
            .find(|(u, _)| *u == cell.0)
            .map_or(0, |x| x.1);
        let s = |x: Option<f64>| x.map_or(String::new(), |v| format!("{:.3}", v / 1000.0));
        let f = |x: Option<f64>, p: usize| x.map_or(String::new(), |v| format!("{v:.p$}"));
        let designed_label = designed_names.into_iter().collect::<Vec<_>>().join(" / ");
        let verify_label = verify_names.into_iter().collect::<Vec<_>>().join(" / ");
        let verify_cost_ratio = (!verify_cost.is_empty()).then(|| mean_se(&verify_cost).0);
        let verify_plain_cost_ratio =
            (!verify_plain_cost.is_empty()).then(|| mean_se(&verify_plain_cost).0);
        let proxy_label = proxy_names.into_iter().collect::<Vec<_>>().join(" / ");
        let proxy_time = mean_of(&proxy_times);
        let proxy_ratio = proxy_time.zip(best_other).map(|(p, b)| p / b.1);
        if let Some(r) = proxy_ratio {
            proxy_ratios.push(r);
        }
        if let Some(r) = ratio {
            design_ratios.push(r);
        }
        let top3_ratio = mean_of(&top3_times).zip(best_other).map(|(p, b)| p / b.1);
        if let Some(r) = top3_ratio {
            top3_ratios.push(r);
        }
        writeln!(
            results_csv,
            "{},{},{},{},{},\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},\"{}\",{},{},{},\"{}\",{},{},{},{},{},{},{}",
            cell.0,
            silos,
            cell.1,
            cell.2,
            cell_seeds.len(),
            designed_label,
            s(designed),
            best_other.map_or("", |b| b.0),
            s(best_other.map(|b| b.1)),
            f(ratio, 3),
            f(se, 3),
            verdict,
            s(ring),
            f(designed.zip(ring).map(|(d, r)| r / d), 3),
            s(ring_opt),
            f(tau, 3),
            f(oos, 3),
            errs.len(),
            proxy_label,
            s(proxy_time),
            f(proxy_ratio, 3),
            f(top3_ratio, 3),
            verify_label,
            s(verify_time),
            f(verify.as_ref().and_then(|j| j.ratio), 3),
            f(verify.as_ref().and_then(|j| j.se), 3),
            verify.as_ref().map_or("incomplete", |j| j.verdict),
            f(verify_time.zip(ring).map(|(v, r)| r / v), 3),
            f(verify_cost_ratio, 2),
            f(verify_plain_cost_ratio, 2)
        )?;
        writeln!(
            verify_md,
            "| {} | {} | {} | {} | {} | {} ({}) | {} | {} | {} | {} | {} |",
            cell.0,
            cell.1,
            cell.2,
            verify_label,
            s(verify_time).trim(),
            s(best_other.map(|b| b.1)),
            best_other.map_or("-", |b| b.0),
            f(verify.as_ref().and_then(|j| j.ratio), 2),
            verify.as_ref().map_or("incomplete", |j| j.verdict),
            f(verify_time.zip(ring).map(|(v, r)| r / v), 2),
            f(verify_cost_ratio, 1),
            f(verify_plain_cost_ratio, 1),
        )?;
        writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} ({}) | {} | {} | {} | {} | {} |",
            cell.0,
            cell.1,
            cell.2,
            designed_label,
            s(designed).trim(),
            s(best_other.map(|b| b.1)),
            best_other.map_or("-", |b| b.0),
            f(ratio, 2),
            verdict,
            f(designed.zip(ring).map(|(d, r)| r / d), 2),
            f(tau, 2),
            oos.map_or(String::new(), |e| format!("{:.0}%", 100.0 * e)),
        )?;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let mut sorted = all_oos.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN);
    let all_speedups: Vec<f64> = speedups.values().flatten().copied().collect();
    let geo =
        (all_speedups.iter().map(|x| x.ln()).sum::<f64>() / all_speedups.len().max(1) as f64).exp();
    let min_tau = taus.iter().copied().fold(f64::INFINITY, f64::min);
    let summary = format!(
        "{} runs, {} cells ({} underlays x access x data), seeds {:?}.\n\n\
         - design never slower beyond seed noise: {} of {} cells slower; >= 10% faster than every other overlay: {} of {} cells;\n\
         - designed vs RING, time to target: geometric mean speed-up {:.2}x over {} cells;\n\
         - Kendall tau (predicted vs measured ranking, leave-one-underlay-out): mean {:.2}, min {:.2}, {} of {} cells >= 0.7;\n\
         - out-of-sample error of the predicted time: mean {:.0}%, median {:.0}% over {} candidate-cells; \
         after one level per cell (what `--calibrate`/`--verify` fit): mean {:.0}%, median {:.0}%;\n\
         - time to target of the chosen overlay over the best of the list: geometric mean {:.2} (fitted predictor) against {:.2} (the earlier proxy, 15 + mixing time rounds); \
         the best measured of the fitted predictor's top 3 (what `design --verify --top 3` trains): {:.2};\n\
         - uncalibrated rounds (what `fedtopo design` prints without `--calibrate`/`--verify`), leave-one-underlay-out, \
         error mean / median over the candidate-cells: {};\n\
         - `design --verify` (its top {} and those predicted within {}x of the best, at most twice as many, trained to the target, and {} probes of {} rounds spread over the mixing times, raced), its runs on another seed of the cell, \
         its measured winner judged on this seed: slower than the best of the list beyond seed noise in {} of {} cells, \
         >= 10% faster in {}; winner over best {:.2} (geometric mean); speed-up over RING {:.2}x over {} cells; \
         its training runs take {:.1}x (median; mean {:.1}x) the winner's time to the target, raced as `design --verify` runs them \
         ({:.1}x, mean {:.1}x, with --no-race).\n",
        runs.len(),
        cells.len(),
        underlays.len(),
        seeds,
        tally.losses,
        tally.counted,
        tally.wins10,
        tally.counted,
        geo,
        all_speedups.len(),
        mean(&taus),
        min_tau,
        taus.iter().filter(|&&t| t >= 0.7).count(),
        taus.len(),
        100.0 * mean(&all_oos),
        100.0 * median,
        all_oos.len(),
        100.0 * mean(&all_cal),
        100.0 * {
            let mut c = all_cal.clone();
            c.sort_by(f64::total_cmp);
            c.get(c.len() / 2).copied().unwrap_or(f64::NAN)
        },
        geomean(&design_ratios),
        geomean(&proxy_ratios),
        geomean(&top3_ratios),
        level_table.1,
        VERIFY_TOP,
        VERIFY_WINDOW,
        VERIFY_PROBES,
        VERIFY_PROBE_ROUNDS,
        verify_tally.losses,
        verify_tally.counted,
        verify_tally.wins10,
        geomean(&verify_ratios),
        geomean(&verify_speedups),
        verify_speedups.len(),
        mean_median(&verify_costs).1,
        mean(&verify_costs),
        mean_median(&verify_plain_costs).1,
        mean(&verify_plain_costs),
    );

    // The shipped fit: every run; its level the settings' intercepts'
    // plane in the label heterogeneity `h` and `h s`.
    let all: Vec<&Run> = runs.iter().collect();
    let w = fit(&all, &settings)?;
    let k = settings.len();
    let plane = level_plane(&w, &all, &settings)?;
    let setting_h = setting_heterogeneity(&all, &settings);
    let mut slopes = [0.0; FEATURE_COUNT - 1];
    slopes.copy_from_slice(&w[k..]);
    let trained = runs.iter().filter(|r| r.trained_as.is_empty()).count();
    let provenance = format!(
        "censored least squares (ridge {RIDGE}) over {trained} training runs of experiments/design \
         (underlays {}; data {}; seeds {:?}; logreg, lr 0.05, batch 32, 1 local step, evaluated \
         every round); intercept ({:+.3} {:+.3} x h {:+.3} x h s, h in [{:.3}, {:.3}]): least-squares \
         plane through the data settings' intercepts at their mean label heterogeneity h and label \
         share s ({})",
        underlays
            .iter()
            .map(|u| u.0.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        settings.join(", "),
        seeds,
        plane.at_zero,
        plane.slope,
        plane.share_slope,
        plane.range[0],
        plane.range[1],
        settings
            .iter()
            .zip(&setting_h)
            .zip(&w[..k])
            .map(|((s, (h, share)), x)| format!("{s} h {h:.3} s {share:.3}: {x:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut fitted = String::from(
        "//! Generated by `cargo run --example design` (experiments/design/main.rs)\n\
         //! from experiments/design/runs.csv: do not edit by hand.\n\n",
    );
    writeln!(
        fitted,
        "/// Weights of the predictor's features after the intercept, in the order of\n/// its `feature_names()[1..]` (their count is checked where `predictor::shipped`\n/// reads them).\npub const SLOPES: [f64; {}] = [\n{}];\n",
        FEATURE_COUNT - 1,
        slopes
            .iter()
            .map(|x| format!("    {x:?},\n"))
            .collect::<String>()
    )?;
    writeln!(
        fitted,
        "/// The intercept (`ln` rounds) without calibration: `LEVEL_AT_ZERO +\n/// LEVEL_SLOPE x h + LEVEL_SHARE_SLOPE x h x s` for label heterogeneity h\n/// clamped to `LEVEL_RANGE` (the data settings' least and greatest mean h)\n/// and label share s in [0, 1].\npub const LEVEL_AT_ZERO: f64 = {:?};\n\n/// See `LEVEL_AT_ZERO`.\npub const LEVEL_SLOPE: f64 = {:?};\n\n/// See `LEVEL_AT_ZERO`.\npub const LEVEL_SHARE_SLOPE: f64 = {:?};\n\n/// See `LEVEL_AT_ZERO`.\npub const LEVEL_RANGE: [f64; 2] = [{:?}, {:?}];\n",
        plane.at_zero, plane.slope, plane.share_slope, plane.range[0], plane.range[1]
    )?;
    writeln!(
        fitted,
        "/// The data settings the level is fitted on: name, mean label heterogeneity,\n/// mean label share, own intercept (`ln` rounds).\n#[rustfmt::skip]\npub const SETTINGS: [(&str, f64, f64, f64); {k}] = [\n{}];\n",
        settings
            .iter()
            .zip(&setting_h)
            .zip(&w[..k])
            .map(|((s, (h, share)), x)| format!("    ({s:?}, {h:?}, {share:?}, {x:?}),\n"))
            .collect::<String>()
    )?;
    writeln!(
        fitted,
        "/// Where the weights come from.\npub const PROVENANCE: &str = {provenance:?};"
    )?;

    let mut full = String::new();
    writeln!(full, "## Summary\n\n{summary}")?;
    writeln!(full, "## Cells\n\n{md}")?;
    writeln!(
        full,
        "## `design --verify`, its training runs on another seed\n\n\
         What the whole design pipeline chooses, with the training it asks of the user: \
         {VERIFY_PROBES} probes of {VERIFY_PROBE_ROUNDS} rounds spread over the mixing times, \
         the level calibrated on them, the top {VERIFY_TOP} of the ranking and the candidates \
         predicted within {VERIFY_WINDOW}x of the best (at most {VERIFY_TOP} more) trained to the \
         target (the fitted predictor's calibration keeps the ranking, so racing trains them \
         first), the measured winner kept. Its runs are the cell's next seed's (cyclically: \
         seed 1's choose for seed 0, ...; a different data split, initial model and batches), \
         and the winner is judged on the seed it did not train on, against the mean of the \
         list's best as above. Last columns: the wall-clock time of those training runs \
         over the winner's time to the target, mean over the seeds: raced, as `design --verify` \
         runs them (the top ones first, then the probes; every run stopped once it passes \
         the best time measured before it, counted as that time), and with `--no-race` (probes \
         first; a run that reached the target stops there, one stopped by its round limit costs \
         those rounds at its cycle time); mean over the seeds.\n\n{verify_md}"
    )?;
    writeln!(
        full,
        "{}",
        flow_section(
            &runs,
            &cells,
            &by_cell_seed,
            &predicted,
            &read_flow(&a.flow)?
        )?
    )?;
    writeln!(
        full,
        "## Fits (leave-one-underlay-out: the fit used for each underlay, without its runs)\n\n| left out | {} | uncalibrated level: the intercepts' plane in h and h s |\n|---|---|---|\n{fits}",
        "weights: one intercept per data setting, then ".to_string() + &feature_names()[1..].join(", ")
    )?;
    writeln!(
        full,
        "## Uncalibrated level\n\n\
         What `fedtopo design` prints without `--calibrate`/`--verify`: rounds at the level it knows \
         from the data's label heterogeneity h, judged leave-one-underlay-out (the fit without the \
         underlay's runs). Before: the mean of the data settings' intercepts; after: their \
         least-squares plane in h and h x the label share s; reference: the setting's own intercept (what the cells' \
         predictions above use; not known to `design` on new data). Candidates reached in every \
         seed of their cell; errors of the mean over the seeds.\n\n{}",
        level_table.0
    )?;
    writeln!(full, "{}", agreement_section(&agreement))?;
    writeln!(
        full,
        "## Other held-out checks\n\n{}",
        other_checks(&runs, &settings, &underlays, &predicted)?
    )?;
    writeln!(
        full,
        "## Shipped predictor\n\nsrc/design/fitted.rs: `ln rounds = ({:+.3} {:+.3} x h {:+.3} x h s) {}`\n\n{}\n",
        plane.at_zero,
        plane.slope,
        plane.share_slope,
        feature_names()[1..]
            .iter()
            .zip(&slopes)
            .map(|(n, w)| format!("{w:+.3} x [{n}]"))
            .collect::<Vec<_>>()
            .join(" "),
        provenance
    )?;

    // Picture: designed and RING speed-ups per underlay.
    let mut points: Vec<(f64, f64)> = underlays
        .iter()
        .filter_map(|(u, n)| {
            let v = speedups.get(u)?;
            Some((
                *n as f64,
                (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp(),
            ))
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let series = vec![
        Series {
            name: "designed / RING (geometric mean over cells)".into(),
            points: points.clone(),
        },
        Series {
            name: "RING".into(),
            points: points.iter().map(|p| (p.0, 1.0)).collect(),
        },
    ];
    let axes = Axes {
        x_label: "silos (underlay)".into(),
        y_label: "speed-up over RING in time to target".into(),
        ..Axes::default()
    };
    let svg = line_plot(
        "time to target: the designed overlay against RING",
        &axes,
        &series,
    )
    .map_err(|e| anyhow::anyhow!("plot: {e}"))?;

    std::fs::create_dir_all(&a.out)?;
    for (name, text) in [
        ("results.csv", results_csv),
        ("predictions.csv", pred_csv),
        ("results.md", full),
        ("speedup.svg", svg),
    ] {
        let p = a.out.join(name);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    std::fs::write(&a.fitted, fitted).with_context(|| format!("writing {}", a.fitted.display()))?;
    print!("{summary}");
    Ok(())
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp()
}

fn fmt_weights(w: &[f64]) -> String {
    w.iter()
        .map(|x| format!("{x:+.3}"))
        .collect::<Vec<_>>()
        .join(" ")
}
