//! Reproduction of the MATCHA results of Marfoq et al. 2020: the MATCHA and
//! MATCHA+ columns of \[Marfoq20\] Tables 3, 6, 7 (the budget sweep of Table 10 is the
//! experiment file `experiments/table10-matcha-budget/experiment.toml`).
//!
//! `fedtopo reproduce matcha-tables` writes `experiments/matcha/results.*`.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::overlay::matcha::{
    maxplus_growth, round_estimate, MatchaBase, MatchaDesign, MatchaOptions,
};
use crate::reproduce::paper_model;
use crate::underlay::{LoadOptions, Underlay};

/// Published cycle times of \[Marfoq20\] Tables 3, 6, 7 (the MATCHA / MATCHA+ rows are
/// used here).
pub const PUBLISHED_CSV: &str = include_str!("../experiments/throughput-tables/published.csv");

/// Options of the reproduction.
#[derive(Debug, Clone)]
pub struct MatchaReproOptions {
    /// MATCHA options.
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

/// One row of \[Marfoq20\] Tables 3/6/7, ours vs published.
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

/// \[Marfoq20\] Tables 3, 6, 7: MATCHA on Gc and MATCHA+ on Gu, ours vs published.
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

/// Markdown of \[Marfoq20\] Tables 3/6/7.
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
