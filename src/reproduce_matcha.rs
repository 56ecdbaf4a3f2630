//! Reproduction of the MATCHA results of Marfoq et al. 2020: the MATCHA and
//! MATCHA+ columns of Tables 3, 6, 7 and the budget sweep of Table 10.
//!
//! `fedtopo reproduce matcha-tables` writes `experiments/matcha/results.*`.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::access::AccessLinks;
use crate::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use crate::overlay::matcha::{
    maxplus_growth, round_estimate, MatchaBase, MatchaDesign, MatchaOptions, MatchaSchedule,
};
use crate::overlay::Overlay;
use crate::reproduce::paper_model;
use crate::timing::cycle_time;
use crate::underlay::{LoadOptions, Underlay};

/// Published cycle times of Tables 3, 6, 7 (the MATCHA / MATCHA+ rows are
/// used here).
pub const PUBLISHED_CSV: &str = include_str!("../experiments/throughput-tables/published.csv");
/// Published Table 10 speed-ups.
pub const TABLE10_CSV: &str = include_str!("../experiments/matcha/table10_published.csv");

/// Options of the reproduction.
#[derive(Debug, Clone)]
pub struct MatchaReproOptions {
    /// MATCHA options (budget is overridden by Table 10's sweep).
    pub matcha: MatchaOptions,
    /// Seeds for the sampling-noise spread and the max-plus confidence interval.
    pub seeds: Vec<u64>,
}

impl Default for MatchaReproOptions {
    fn default() -> Self {
        MatchaReproOptions {
            matcha: MatchaOptions::default(),
            seeds: (0..10).collect(),
        }
    }
}

/// One row of Tables 3/6/7, ours vs published.
#[derive(Debug, Clone, Serialize)]
pub struct MatchaRow {
    /// Paper table.
    pub table: u32,
    /// Local steps `s`.
    pub local_steps: u32,
    /// Underlay file stem.
    pub underlay: String,
    /// `matcha` (on Gc) or `matcha+` (on Gu).
    pub overlay: String,
    /// Published cycle time, ms.
    pub published_ms: f64,
    /// Ours, published convention (total of R rounds / (R-1)), seed `matcha.seed`, ms.
    pub ours_ms: f64,
    /// (ours - published) / published.
    pub relative_error: f64,
    /// Smallest and largest round estimate over the seeds, ms.
    pub seed_min_ms: f64,
    /// See `seed_min_ms`.
    pub seed_max_ms: f64,
    /// Exact max-plus growth rate, mean over seeds, ms.
    pub maxplus_ms: f64,
    /// Half-width of its 95% CI, ms.
    pub maxplus_ci95_ms: f64,
    /// Number of matchings.
    pub matchings: usize,
    /// Optimal lambda_2 found.
    pub lambda2: f64,
    /// Certified relative optimality gap of lambda_2.
    pub lambda2_rel_gap: f64,
    /// Mixing parameter alpha.
    pub alpha: f64,
    /// rho at alpha.
    pub rho: f64,
    /// Certified gap rho - lower bound.
    pub rho_gap: f64,
    /// Wall-clock seconds for decomposition + both optimisations.
    pub solve_s: f64,
}

/// One cell of Table 10.
#[derive(Debug, Clone, Serialize)]
pub struct Table10Row {
    /// Access capacity label (`10G` / `100M`).
    pub access: String,
    /// Base graph: `underlay`, `delta-mbst` or `ring`.
    pub base: String,
    /// Communication budget Cb.
    pub budget: f64,
    /// Published RING training speed-up vs MATCHA.
    pub published_speedup: f64,
    /// Ours: MATCHA cycle time (round estimate) / RING cycle time.
    pub cycle_time_ratio: f64,
    /// MATCHA round estimate, ms.
    pub matcha_ms: f64,
    /// MATCHA exact max-plus growth, ms.
    pub matcha_maxplus_ms: f64,
    /// RING cycle time (directed, max-plus), ms.
    pub ring_ms: f64,
    /// MATCHA's rho (per-round contraction of E[W^T W]).
    pub rho: f64,
}

fn parse(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn load(dir: &Path, name: &str) -> Result<Underlay, Box<dyn std::error::Error>> {
    Ok(Underlay::load(
        &dir.join(format!("{name}.gml")),
        &LoadOptions::default(),
    )?)
}

/// Tables 3, 6, 7: MATCHA on Gc and MATCHA+ on Gu, ours vs published.
pub fn matcha_tables(
    dir: &Path,
    opts: &MatchaReproOptions,
) -> Result<Vec<MatchaRow>, Box<dyn std::error::Error>> {
    let mut rows = Vec::new();
    let mut designs: Vec<(String, String, MatchaDesign, f64)> = Vec::new();
    for f in parse(PUBLISHED_CSV)
        .into_iter()
        .filter(|f| f[3].starts_with("matcha"))
    {
        let (table, steps, name, kind, published): (u32, u32, &str, &str, f64) =
            (f[0].parse()?, f[1].parse()?, &f[2], &f[3], f[4].parse()?);
        let u = load(dir, name)?;
        let model = paper_model(&u, steps);
        if !designs.iter().any(|(n, k, _, _)| n == name && k == kind) {
            let base = if kind == "matcha" {
                MatchaBase::Connectivity
            } else {
                MatchaBase::Underlay
            };
            let t0 = Instant::now();
            let d = MatchaDesign::on(kind, &base, &u, &opts.matcha)?;
            designs.push((name.into(), kind.into(), d, t0.elapsed().as_secs_f64()));
        }
        let (_, _, d, solve_s) = designs
            .iter()
            .find(|(n, k, _, _)| n == name && k == kind)
            .expect("inserted above");
        let sched = d.clone().schedule(opts.matcha.seed);
        let ours = round_estimate(&sched, &model, opts.matcha.rounds)?.published_ms;
        let mut spread = (f64::INFINITY, f64::NEG_INFINITY);
        for &s in &opts.seeds {
            let v = round_estimate(&sched.with_seed(s), &model, opts.matcha.rounds)?.published_ms;
            spread = (spread.0.min(v), spread.1.max(v));
        }
        let mp = maxplus_growth(
            |s| sched.with_seed(s),
            &model,
            opts.matcha.rounds,
            &opts.seeds,
        )?;
        rows.push(MatchaRow {
            table,
            local_steps: steps,
            underlay: name.into(),
            overlay: kind.into(),
            published_ms: published,
            ours_ms: ours,
            relative_error: (ours - published) / published,
            seed_min_ms: spread.0,
            seed_max_ms: spread.1,
            maxplus_ms: mp.mean_ms,
            maxplus_ci95_ms: mp.ci95_ms,
            matchings: d.matchings.len(),
            lambda2: d.activation.lambda2,
            lambda2_rel_gap: d.activation.relative_gap(),
            alpha: d.mixing.alpha,
            rho: d.mixing.rho,
            rho_gap: d.mixing.rho - d.mixing.rho_lower_bound,
            solve_s: *solve_s,
        });
    }
    Ok(rows)
}

/// Table 10: MATCHA over the underlay, delta-MBST and (undirected) RING on
/// AWS North America for the budget sweep; ours is the cycle-time ratio.
pub fn table10(
    dir: &Path,
    opts: &MatchaReproOptions,
) -> Result<Vec<Table10Row>, Box<dyn std::error::Error>> {
    let u = load(dir, "amazon_us")?;
    let mut rows = Vec::new();
    for f in parse(TABLE10_CSV) {
        let (access, base_name, budget, published): (&str, &str, f64, f64) =
            (&f[0], &f[1], f[2].parse()?, f[3].parse()?);
        let mut model = paper_model(&u, 1);
        let bps = crate::units::parse_bandwidth(access)?;
        model.access = AccessLinks::uniform(u.node_count(), bps);
        let build = |k| build_overlay(k, &u, &model, &BuildOptions::default());
        let ring = build(OverlayKind::Ring)?;
        let ring_ms = cycle_time(&ring, &model)?.cycle_time_ms;
        let base = match base_name {
            "underlay" => MatchaBase::Underlay,
            "delta-mbst" => MatchaBase::Overlay(build(OverlayKind::DeltaMbst)?),
            _ => MatchaBase::Overlay(Overlay::from_arcs(
                "ring",
                ring.silo_count(),
                ring.arcs().iter().flat_map(|&(a, b)| [(a, b), (b, a)]),
            )),
        };
        let mo = MatchaOptions {
            budget,
            ..opts.matcha
        };
        let d = MatchaDesign::on(&format!("matcha({base_name})"), &base, &u, &mo)?;
        let sched: MatchaSchedule = d.schedule(mo.seed);
        let est = round_estimate(&sched, &model, mo.rounds)?.published_ms;
        let mp = maxplus_growth(|s| sched.with_seed(s), &model, mo.rounds, &opts.seeds)?;
        rows.push(Table10Row {
            access: access.into(),
            base: base_name.into(),
            budget,
            published_speedup: published,
            cycle_time_ratio: est / ring_ms,
            matcha_ms: est,
            matcha_maxplus_ms: mp.mean_ms,
            ring_ms,
            rho: sched.design().mixing.rho,
        });
    }
    Ok(rows)
}

/// Markdown of Tables 3/6/7.
pub fn tables_markdown(rows: &[MatchaRow]) -> String {
    let mut s = String::from(
        "| table | s | underlay | overlay | published ms | ours ms | error | seeds min..max ms | max-plus ms (95% CI) | matchings | lambda2 (rel. gap) | alpha | rho (gap) | solve s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s += &format!(
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:+.1}% | {:.1}..{:.1} | {:.1} ± {:.1} | {} | {:.4} ({:.1e}) | {:.4} | {:.4} ({:.1e}) | {:.2} |\n",
            r.table, r.local_steps, r.underlay, r.overlay, r.published_ms, r.ours_ms,
            100.0 * r.relative_error, r.seed_min_ms, r.seed_max_ms, r.maxplus_ms,
            r.maxplus_ci95_ms, r.matchings, r.lambda2, r.lambda2_rel_gap, r.alpha, r.rho,
            r.rho_gap, r.solve_s
        );
    }
    s
}

/// Markdown of Table 10.
pub fn table10_markdown(rows: &[Table10Row]) -> String {
    let mut s = String::from(
        "| access | MATCHA over | Cb | published training speed-up | ours: cycle-time ratio | MATCHA ms | MATCHA max-plus ms | RING ms | rho |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s += &format!(
            "| {} | {} | {} | {:.2} | {:.2} | {:.1} | {:.1} | {:.1} | {:.4} |\n",
            r.access,
            r.base,
            r.budget,
            r.published_speedup,
            r.cycle_time_ratio,
            r.matcha_ms,
            r.matcha_maxplus_ms,
            r.ring_ms,
            r.rho
        );
    }
    s
}
