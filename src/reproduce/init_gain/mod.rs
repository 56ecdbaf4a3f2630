//! `fedtopo reproduce init-gain-exponents`: the scaling `||pi|| ~ n^-alpha`
//! of the DecAvg stationary distribution on random graphs (\[BadieModiri24\]
//! Fig. 5(a,b)), fitted over sizes and seeds, ours vs the published
//! exponents.
//!
//! Every family is drawn with the same expected mean degree (BA: `m = k/2`),
//! as in the paper ("same size and, on expectation, the same number of
//! links"). `pi` is computed on the largest connected component (sparse
//! Chung-Lu graphs with small `gamma` are never connected at large `n`; for
//! ER, regular and BA graphs it is almost always the whole graph), and the
//! fit uses that component's size. `alpha` is minus the least-squares slope
//! of `ln ||pi||` on `ln n` over all draws, with a 95 % normal interval from
//! the slope's standard error. Rendered by [`crate::reproduce::init_gain::render`].

pub mod render;
use serde::Serialize;

use crate::graph::Overlay;
use crate::overlay::random::{draw_edges, largest_component, Param, RandomGraph, RandomGraphError};
use crate::train::stationary::{closed_form, norm2, StationaryError};

/// Options of the exponent fit.
#[derive(Debug, Clone)]
pub struct ExponentOptions {
    /// Graph sizes `n`.
    pub sizes: Vec<usize>,
    /// Seeds `0..seeds` per size.
    pub seeds: u64,
    /// Expected mean degree of every family.
    pub mean_degree: usize,
}

impl Default for ExponentOptions {
    fn default() -> Self {
        ExponentOptions {
            sizes: vec![128, 256, 512, 1024, 2048, 4096, 8192],
            seeds: 10,
            mean_degree: 8,
        }
    }
}

/// One family's fitted exponent.
#[derive(Debug, Clone, Serialize)]
pub struct ExponentRow {
    /// Family as a spec (`er:k=8`, ...).
    pub family: String,
    /// Published exponent (\[BadieModiri24\] Fig. 5), if any.
    pub paper_alpha: Option<f64>,
    /// Fitted exponent.
    pub alpha: f64,
    /// Half-width of its 95 % interval.
    pub alpha_ci95: f64,
    /// Draws used.
    pub draws: usize,
    /// Mean `||pi||` at each size, `(n, mean ||pi||, mean component size)`.
    #[serde(skip)]
    pub points: Vec<(usize, f64, f64)>,
}

/// Why the fit failed.
#[derive(Debug, thiserror::Error)]
pub enum ExponentError {
    /// Graph generation.
    #[error(transparent)]
    Graph(#[from] RandomGraphError),
    /// Stationary distribution.
    #[error(transparent)]
    Stationary(#[from] StationaryError),
    /// Not enough sizes to fit a slope.
    #[error("need at least two distinct sizes >= 16 to fit an exponent")]
    TooFewSizes,
}

/// The families of \[BadieModiri24\] Fig. 5 with their published exponents.
pub fn families(mean_degree: usize) -> Vec<(RandomGraph, Option<f64>)> {
    let k = Param(mean_degree as f64);
    let mut v = vec![
        (
            RandomGraph::ErdosRenyi {
                p: None,
                mean_degree: Some(k),
            },
            Some(0.492),
        ),
        (RandomGraph::Regular { k: mean_degree }, Some(0.493)),
        (
            RandomGraph::BarabasiAlbert {
                m: (mean_degree / 2).max(1),
            },
            Some(0.434),
        ),
    ];
    for (gamma, a) in [
        (2.5, 0.303),
        (3.0, 0.403),
        (3.5, 0.454),
        (4.0, 0.476),
        (5.0, 0.489),
    ] {
        v.push((
            RandomGraph::ChungLu {
                gamma: Param(gamma),
                mean_degree: k,
            },
            Some(a),
        ));
    }
    v
}

/// `||pi||` and the component size of one draw.
pub fn pi_norm_of_draw(
    g: &RandomGraph,
    n: usize,
    seed: u64,
) -> Result<(f64, usize), ExponentError> {
    let e = draw_edges(g, n, seed)?;
    let (m, e) = largest_component(n, &e);
    let o = Overlay::from_edges("draw", m, &e);
    Ok((norm2(&closed_form(&o, None)?), m))
}

/// Least-squares slope of `y` on `x` and its standard error.
pub fn slope(x: &[f64], y: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let b = sxy / sxx;
    let a = my - b * mx;
    let sse: f64 = x.iter().zip(y).map(|(u, v)| (v - a - b * u).powi(2)).sum();
    let se = if n > 2.0 {
        (sse / (n - 2.0) / sxx).sqrt()
    } else {
        f64::NAN
    };
    (b, se)
}

/// Fits `alpha` for every family of [`families`].
pub fn exponents(opts: &ExponentOptions) -> Result<Vec<ExponentRow>, ExponentError> {
    let mut sizes: Vec<usize> = opts.sizes.iter().copied().filter(|&n| n >= 16).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() < 2 {
        return Err(ExponentError::TooFewSizes);
    }
    let mut rows = Vec::new();
    for (g, paper) in families(opts.mean_degree) {
        let (mut xs, mut ys, mut points) = (Vec::new(), Vec::new(), Vec::new());
        for &n in &sizes {
            let (mut sum, mut msum) = (0.0, 0.0);
            for seed in 0..opts.seeds.max(1) {
                let (norm, m) = pi_norm_of_draw(&g, n, seed)?;
                xs.push((m as f64).ln());
                ys.push(norm.ln());
                sum += norm;
                msum += m as f64;
            }
            let d = opts.seeds.max(1) as f64;
            points.push((n, sum / d, msum / d));
        }
        let (b, se) = slope(&xs, &ys);
        rows.push(ExponentRow {
            family: g.to_string(),
            paper_alpha: paper,
            alpha: -b,
            alpha_ci95: 1.96 * se,
            draws: xs.len(),
            points,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_recovers_a_line() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let y: Vec<f64> = x.iter().map(|v| 2.0 - 0.5 * v).collect();
        let (b, se) = slope(&x, &y);
        assert!((b + 0.5).abs() < 1e-12 && se < 1e-12);
    }

    #[test]
    fn regular_graphs_give_exactly_one_half() {
        let rows = exponents(&ExponentOptions {
            sizes: vec![64, 128, 256],
            seeds: 2,
            mean_degree: 4,
        })
        .unwrap();
        let reg = rows.iter().find(|r| r.family == "regular:k=4").unwrap();
        assert!((reg.alpha - 0.5).abs() < 1e-9, "{}", reg.alpha);
        assert_eq!(reg.draws, 6);
        // Heavier tails, smaller exponents.
        let cl = |g: &str| rows.iter().find(|r| r.family.contains(g)).unwrap().alpha;
        assert!(cl("gamma=2.5") < cl("gamma=5"));
        assert!(exponents(&ExponentOptions {
            sizes: vec![64],
            ..ExponentOptions::default()
        })
        .is_err());
    }
}
