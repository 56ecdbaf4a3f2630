//! Per-link values from the fitted pairs: what `--links-csv` takes
//! ([`crate::net::links`]).
//!
//! * **Latency.** A route's latency is `per_path_ms + sum of its links'
//!   latencies` (\[Marfoq20\] App. F), so the pairs whose latency the log
//!   identified (messages of several sizes) give one linear equation each
//!   over the links of their route (the underlay's shortest paths). The
//!   least-squares solution closest to the underlay's own latencies (a
//!   ridge of weight [`RIDGE`] towards them keeps links no fitted pair
//!   separates at the underlay's value) is found by conjugate gradients;
//!   negative latencies are clamped to 0 and counted. Only links on a
//!   fitted route are written.
//! * **Capacity.** A pair whose transfers neither access link explains has
//!   its route's core as bottleneck: `A(i,j) = min` of its links'
//!   capacities (bottleneck model) or `min / hops` (the paper's model).
//!   Every other pair's fastest transfer is a lower bound on its `A(i,j)`.
//!   Every link of a core-limited route gets the largest bound any pair
//!   through it gives (times the hops under the paper's model): the
//!   smallest capacity under which every measured pair still reaches the
//!   rate it reached. Links on no core-limited route keep the underlay's
//!   capacity. Core-limited pairs whose route minimum then exceeds their
//!   measured `A` by more than 5% (a link of theirs carries a faster pair)
//!   are counted as unexplained.
//!
//! Routes come from the underlay as loaded; changing links' latencies can
//! change shortest paths, which this fit does not revisit (reported).

use serde::Serialize;

use super::Fit;
use crate::net::connectivity::PathModel;
use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::units::{BitsPerSec, Ms};

/// Ridge weight towards the underlay's latencies, relative to one pair's
/// equation.
pub const RIDGE: f64 = 1e-6;

/// One link's fitted values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FittedLink {
    /// Index into `Underlay::links`.
    pub link: usize,
    /// Fitted one-way latency, ms (None: on no fitted route).
    pub latency_ms: Option<Ms>,
    /// Fitted capacity, bit/s (None: on no core-limited route).
    pub capacity_bps: Option<BitsPerSec>,
}

/// The per-link fit and how well it explains the pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkFit {
    /// Links with a fitted value, by link index.
    pub links: Vec<FittedLink>,
    /// Pairs whose latency entered the fit.
    pub latency_pairs: usize,
    /// Largest |fitted route latency - fitted pair latency|, ms.
    pub latency_max_residual_ms: Ms,
    /// Links whose least-squares latency was negative (clamped to 0).
    pub clamped: usize,
    /// Core-limited pairs.
    pub capacity_pairs: usize,
    /// Of those, pairs the fitted capacities do not explain within 5%.
    pub capacity_unexplained: usize,
}

/// Conjugate gradients on `(M^T M + r I) x = M^T y + r x0`, `M` the 0/1
/// route matrix (`rows[p]`: the links of equation `p`).
fn ridge_solve(rows: &[Vec<usize>], y: &[f64], x0: &[f64], r: f64) -> Vec<f64> {
    let n = x0.len();
    let apply = |x: &[f64]| -> Vec<f64> {
        let mut out: Vec<f64> = x.iter().map(|v| r * v).collect();
        for row in rows {
            let s: f64 = row.iter().map(|&l| x[l]).sum();
            for &l in row {
                out[l] += s;
            }
        }
        out
    };
    let mut b: Vec<f64> = x0.iter().map(|v| r * v).collect();
    for (row, &yp) in rows.iter().zip(y) {
        for &l in row {
            b[l] += yp;
        }
    }
    let mut x = x0.to_vec();
    let ax = apply(&x);
    let mut res: Vec<f64> = b.iter().zip(&ax).map(|(b, a)| b - a).collect();
    let mut p = res.clone();
    let mut rr: f64 = res.iter().map(|v| v * v).sum();
    let scale: f64 = b.iter().map(|v| v * v).sum::<f64>().max(f64::MIN_POSITIVE);
    for _ in 0..(4 * n + 100) {
        if rr <= 1e-26 * scale {
            break;
        }
        let ap = apply(&p);
        let pap: f64 = p.iter().zip(&ap).map(|(a, b)| a * b).sum();
        if pap <= 0.0 {
            break;
        }
        let alpha = rr / pap;
        for k in 0..n {
            x[k] += alpha * p[k];
            res[k] -= alpha * ap[k];
        }
        let next: f64 = res.iter().map(|v| v * v).sum();
        let beta = next / rr;
        rr = next;
        for k in 0..n {
            p[k] = res[k] + beta * p[k];
        }
    }
    x
}

/// Per-link latencies and capacities from `fit` on `model`'s routes
/// (module docs); `None` for a latency-matrix underlay (its pairs are its
/// links: the matrices are the per-link file).
pub fn fit_links(fit: &Fit, model: &DelayModel, underlay: &Underlay) -> Option<LinkFit> {
    let conn = &model.connectivity;
    if conn.is_measured() {
        return None;
    }
    let opts = conn.options();
    let nl = underlay.links.len();
    let prior: Vec<f64> = underlay
        .links
        .iter()
        .map(|l| opts.ms_per_km * l.length_km)
        .collect();
    let mut rows = Vec::new();
    let mut y = Vec::new();
    for p in fit.pairs.iter().filter(|p| p.latency_fitted) {
        let route = conn.route(p.from, p.to);
        if route.is_empty() {
            continue;
        }
        rows.push(route);
        y.push(p.latency_ms - opts.per_path_ms);
    }
    let mut latency: Vec<Option<Ms>> = vec![None; nl];
    let mut clamped = 0;
    let mut residual: Ms = 0.0;
    if !rows.is_empty() {
        let x = ridge_solve(&rows, &y, &prior, RIDGE);
        for row in &rows {
            for &l in row {
                if latency[l].is_none() {
                    if x[l] < 0.0 {
                        clamped += 1;
                    }
                    latency[l] = Some(x[l].max(0.0));
                }
            }
        }
        for (row, yp) in rows.iter().zip(&y) {
            let got: f64 = row.iter().map(|&l| latency[l].unwrap_or(0.0)).sum();
            residual = residual.max((got - yp).abs());
        }
    }
    let per_link = |a: BitsPerSec, hops: usize| match opts.model {
        PathModel::Paper => a * hops as f64,
        PathModel::Bottleneck => a,
    };
    // Every pair's bound on its links, and the core-limited routes.
    let mut bound: Vec<BitsPerSec> = vec![0.0; nl];
    let mut limited: Vec<(Vec<usize>, BitsPerSec)> = Vec::new();
    for p in &fit.pairs {
        let route = conn.route(p.from, p.to);
        if route.is_empty() {
            continue;
        }
        let b = per_link(p.core_bps.unwrap_or(p.max_rate_bps), route.len());
        for &l in &route {
            bound[l] = bound[l].max(b);
        }
        if let Some(a) = p.core_bps {
            let c = per_link(a, route.len());
            limited.push((route, c));
        }
    }
    let mut capacity: Vec<Option<BitsPerSec>> = vec![None; nl];
    for (route, _) in &limited {
        for &l in route {
            capacity[l] = Some(bound[l]);
        }
    }
    let unexplained = limited
        .iter()
        .filter(|(route, c)| {
            let min = route
                .iter()
                .filter_map(|&l| capacity[l])
                .fold(f64::INFINITY, f64::min);
            min > c * 1.05
        })
        .count();
    let links = (0..nl)
        .filter(|&l| latency[l].is_some() || capacity[l].is_some())
        .map(|l| FittedLink {
            link: l,
            latency_ms: latency[l],
            capacity_bps: capacity[l],
        })
        .collect();
    Some(LinkFit {
        links,
        latency_pairs: rows.len(),
        latency_max_residual_ms: residual,
        clamped,
        capacity_pairs: limited.len(),
        capacity_unexplained: unexplained,
    })
}

impl LinkFit {
    /// The fitted links as a `--links-csv` file (`a,b,latency_ms,capacity`,
    /// router labels; empty cells keep the underlay's value).
    pub fn links_csv(&self, underlay: &Underlay) -> String {
        let mut out = String::from("a,b,latency_ms,capacity\n");
        for f in &self.links {
            let Some(l) = underlay.links.get(f.link) else {
                continue;
            };
            let label = |r: usize| {
                underlay
                    .routers
                    .get(r)
                    .map_or_else(|| r.to_string(), |x| x.label.clone())
            };
            out += &format!(
                "{},{},{},{}\n",
                csv_cell(&label(l.a)),
                csv_cell(&label(l.b)),
                f.latency_ms.map_or(String::new(), |v| format!("{v:.6}")),
                f.capacity_bps.map_or(String::new(), |v| format!("{v:.6e}"))
            );
        }
        out
    }
}

/// A CSV cell, quoted when it holds a comma, a quote or a line break.
fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
