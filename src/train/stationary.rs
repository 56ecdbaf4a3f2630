//! The stationary distribution `pi` of DecAvg averaging and the
//! topology-aware initialisation gain `g = 1 / ||pi||_2`
//! (\[BadieModiri24\] Sec. 4.1, eq. 3, Algorithm 1).
//!
//! DecAvg (\[BadieModiri24\] eq. 2): silo `i` replaces its model by
//! `sum_{j in N_i u {i}} beta_ij w_j` with `beta_ij = s_j / (s_i + sum_{l in
//! N_i} s_l)`, `s` the data sizes and `N_i` the silos it receives from. The
//! row-stochastic `W = (beta_ij)` is a lazy random walk (the self-looped
//! walk `A' = A + I` normalised); `W^t -> 1 pi^T` with `pi^T W = pi^T`, so
//! every silo ends at `sum_j pi_j w_j(0)` and, for independent initial
//! weights of variance `sigma^2`, at variance `sigma^2 ||pi||^2`.
//!
//! Closed form (undirected, connected): the walk is reversible with
//! `pi_i ∝ s_i (s_i + sum_{l in N_i} s_l)` (detailed balance: `pi_i
//! beta_ij ∝ s_i s_j`); with equal data `pi_i = (k_i + 1) / sum_j (k_j + 1)`.
//! [`power_iteration`] computes `pi` for any strongly connected overlay and
//! cross-checks the closed form in the tests.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use thiserror::Error;

use crate::graph::Overlay;
use crate::mixing::consensus::{decavg_rows, sizes_or_ones, DataSizeError};
use crate::overlay::random::is_connected;

/// Why `pi` (or a gain) could not be computed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StationaryError {
    /// Data sizes that do not fit the silos.
    #[error(transparent)]
    Sizes(#[from] DataSizeError),
    /// The closed form needs an undirected overlay.
    #[error("overlay `{0}` is directed: the closed form needs every arc's reverse (use power iteration)")]
    Directed(String),
    /// `pi` is not unique on a disconnected overlay.
    #[error("overlay `{0}` is not connected: the stationary distribution is not unique")]
    Disconnected(String),
    /// Power iteration did not reach the tolerance.
    #[error("power iteration on `{overlay}` did not converge in {iterations} iterations (L1 change {change:e})")]
    NotConverged {
        /// Overlay.
        overlay: String,
        /// Iterations run.
        iterations: usize,
        /// Last L1 change.
        change: f64,
    },
    /// Unknown gain name.
    #[error("unknown gain `{0}`; expected none, sqrt-n or pi")]
    UnknownGain(String),
}

fn check_connected(overlay: &Overlay) -> Result<(), StationaryError> {
    let n = overlay.silo_count();
    // Weakly connected suffices for undirected overlays.
    if n > 0 && !is_connected(n, &edges_any(overlay)) {
        return Err(StationaryError::Disconnected(overlay.name.clone()));
    }
    Ok(())
}

/// Undirected pairs `(min, max)` of all arcs (either direction), sorted.
fn edges_any(overlay: &Overlay) -> Vec<(usize, usize)> {
    let mut e: Vec<(usize, usize)> = overlay
        .arcs()
        .iter()
        .map(|&(a, b)| (a.min(b), a.max(b)))
        .collect();
    e.dedup();
    e.sort_unstable();
    e.dedup();
    e
}

/// `pi` in closed form for an undirected connected overlay:
/// `pi_i ∝ s_i (s_i + sum_{l in N_i} s_l)`, i.e. `(k_i + 1) / sum (k_j + 1)`
/// with equal data.
pub fn closed_form(overlay: &Overlay, sizes: Option<&[f64]>) -> Result<Vec<f64>, StationaryError> {
    let s = sizes_or_ones(overlay, sizes)?;
    if !overlay.is_undirected() {
        return Err(StationaryError::Directed(overlay.name.clone()));
    }
    check_connected(overlay)?;
    let raw: Vec<f64> = overlay
        .in_neighbours()
        .iter()
        .enumerate()
        .map(|(i, nb)| s[i] * (s[i] + nb.iter().map(|&j| s[j]).sum::<f64>()))
        .collect();
    let total: f64 = raw.iter().sum();
    Ok(raw.into_iter().map(|x| x / total).collect())
}

/// `pi` by power iteration `pi <- pi W` from the uniform vector, until the
/// L1 change is `<= tol` (at most `max_iter` products). Works on any overlay
/// whose DecAvg walk has a unique stationary law (strongly connected); the
/// self-loops make it aperiodic.
pub fn power_iteration(
    overlay: &Overlay,
    sizes: Option<&[f64]>,
    tol: f64,
    max_iter: usize,
) -> Result<Vec<f64>, StationaryError> {
    check_connected(overlay)?;
    let rows = decavg_rows(overlay, sizes)?;
    let n = overlay.silo_count();
    let mut pi = vec![1.0 / n as f64; n];
    let mut change = f64::INFINITY;
    for _ in 0..max_iter {
        let mut next = vec![0.0; n];
        for (i, row) in rows.iter().enumerate() {
            for &(j, w) in row {
                next[j] += pi[i] * w;
            }
        }
        let total: f64 = next.iter().sum();
        next.iter_mut().for_each(|x| *x /= total);
        change = next.iter().zip(&pi).map(|(a, b)| (a - b).abs()).sum();
        pi = next;
        if change <= tol {
            return Ok(pi);
        }
    }
    Err(StationaryError::NotConverged {
        overlay: overlay.name.clone(),
        iterations: max_iter,
        change,
    })
}

/// `pi`: closed form when the overlay is undirected, else power iteration
/// (tolerance `1e-13`, at most `10^6` iterations).
pub fn stationary(overlay: &Overlay, sizes: Option<&[f64]>) -> Result<Vec<f64>, StationaryError> {
    if overlay.is_undirected() {
        closed_form(overlay, sizes)
    } else {
        power_iteration(overlay, sizes, 1e-13, 1_000_000)
    }
}

/// Euclidean norm.
pub fn norm2(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The global gain multiplying every silo's He-uniform initial weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum InitGain {
    /// `g = 1` (plain He initialisation, uncoordinated).
    #[default]
    None,
    /// `g = sqrt(n)` (exact for regular graphs with equal data).
    SqrtN,
    /// `g = 1 / ||pi||_2` of the overlay's DecAvg walk.
    Pi,
}

impl InitGain {
    /// The gain for `overlay` with data sizes `sizes` (`None`: equal).
    pub fn gain(self, overlay: &Overlay, sizes: Option<&[f64]>) -> Result<f64, StationaryError> {
        Ok(match self {
            InitGain::None => 1.0,
            InitGain::SqrtN => (overlay.silo_count() as f64).sqrt(),
            InitGain::Pi => 1.0 / norm2(&stationary(overlay, sizes)?),
        })
    }
}

impl FromStr for InitGain {
    type Err = StationaryError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "none" | "1" => InitGain::None,
            "sqrt" | "sqrt-n" | "sqrtn" => InitGain::SqrtN,
            "pi" | "graph" | "1/pi" => InitGain::Pi,
            _ => return Err(StationaryError::UnknownGain(s.to_string())),
        })
    }
}

impl fmt::Display for InitGain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InitGain::None => "none",
            InitGain::SqrtN => "sqrt-n",
            InitGain::Pi => "pi",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Overlay;
    use crate::overlay::complete;
    use crate::overlay::random::{random_overlay, RandomSpec};
    use proptest::prelude::*;

    fn l1(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Closed form = power iteration, with equal and random data sizes,
        /// on connected random graphs of every family.
        #[test]
        fn closed_form_matches_power_iteration(
            fam in 0usize..4, n in 6usize..40, seed in 0u64..1000,
            sizes in proptest::collection::vec(1.0f64..100.0, 40),
        ) {
            let spec = ["er:k=3", "ba:m=2", "regular:k=4", "chung-lu:gamma=2.5,k=4"][fam];
            let o = random_overlay(&spec.parse::<RandomSpec>().unwrap(), n, seed).unwrap();
            for s in [None, Some(&sizes[..n])] {
                let a = closed_form(&o, s).unwrap();
                let b = power_iteration(&o, s, 1e-14, 1_000_000).unwrap();
                prop_assert!(l1(&a, &b) < 1e-9, "{spec} n={n}: {}", l1(&a, &b));
                prop_assert!((a.iter().sum::<f64>() - 1.0).abs() < 1e-12);
                // Cauchy-Schwarz: ||pi|| >= 1/sqrt(n).
                prop_assert!(norm2(&a) >= 1.0 / (n as f64).sqrt() - 1e-12);
            }
        }
    }

    #[test]
    fn stationary_is_a_fixed_point_of_decavg() {
        let o = random_overlay(&"ba:m=2".parse().unwrap(), 30, 4).unwrap();
        let sizes: Vec<f64> = (0..30).map(|i| 1.0 + (i % 7) as f64).collect();
        let pi = closed_form(&o, Some(&sizes)).unwrap();
        let rows = decavg_rows(&o, Some(&sizes)).unwrap();
        let mut next = [0.0; 30];
        for (i, row) in rows.iter().enumerate() {
            assert!((row.iter().map(|x| x.1).sum::<f64>() - 1.0).abs() < 1e-12);
            for &(j, w) in row {
                next[j] += pi[i] * w;
            }
        }
        assert!(l1(&pi, &next) < 1e-12);
    }

    #[test]
    fn regular_graphs_and_gains() {
        let c = complete(16);
        assert!((InitGain::Pi.gain(&c, None).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(InitGain::SqrtN.gain(&c, None).unwrap(), 4.0);
        assert_eq!(InitGain::None.gain(&c, None).unwrap(), 1.0);
        let t = random_overlay(&"torus".parse().unwrap(), 36, 0).unwrap();
        assert!((InitGain::Pi.gain(&t, None).unwrap() - 6.0).abs() < 1e-12);
        // A star: pi_centre = n / (n + 2(n-1)), leaves 2 / (...).
        let s = Overlay::from_edges("s", 5, &[(0, 1), (0, 2), (0, 3), (0, 4)]);
        let pi = closed_form(&s, None).unwrap();
        assert!((pi[0] - 5.0 / 13.0).abs() < 1e-15 && (pi[3] - 2.0 / 13.0).abs() < 1e-15);
        assert_eq!("sqrt-n".parse::<InitGain>().unwrap(), InitGain::SqrtN);
        assert!("huge"
            .parse::<InitGain>()
            .unwrap_err()
            .to_string()
            .contains("expected none"));
    }

    #[test]
    fn erdos_renyi_gain_matches_the_poisson_estimate() {
        // E g ~ sqrt(n) (k+1) / sqrt((k+1)^2 + k) for Poisson degrees (the
        // notes quote 43.09 for one draw at n = 2048, k = 8).
        let (n, k) = (2048usize, 8.0f64);
        let g: f64 = (0..5)
            .map(|s| {
                let o = random_overlay(&"er:k=8".parse().unwrap(), n, s).unwrap();
                InitGain::Pi.gain(&o, None).unwrap()
            })
            .sum::<f64>()
            / 5.0;
        let want = (n as f64).sqrt() * (k + 1.0) / ((k + 1.0).powi(2) + k).sqrt();
        assert!((g - want).abs() < 0.2, "g = {g}, Poisson estimate {want}");
    }

    #[test]
    fn directed_and_bad_input() {
        let r = Overlay::directed_ring("r", 5, &[0, 1, 2, 3, 4]);
        assert!(matches!(
            closed_form(&r, None),
            Err(StationaryError::Directed(_))
        ));
        // Directed ring with self-loops: uniform.
        let pi = stationary(&r, None).unwrap();
        assert!(pi.iter().all(|p| (p - 0.2).abs() < 1e-12));
        let d = Overlay::from_edges("d", 4, &[(0, 1), (2, 3)]);
        assert!(matches!(
            closed_form(&d, None),
            Err(StationaryError::Disconnected(_))
        ));
        let c = complete(3);
        assert!(closed_form(&c, Some(&[1.0, 2.0])).is_err());
        let e = closed_form(&c, Some(&[1.0, 0.0, 2.0])).unwrap_err();
        assert!(e.to_string().contains("silo 1"), "{e}");
    }
}
