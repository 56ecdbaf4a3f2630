//! DecAvg weights (\[BadieModiri24\] eq. 2) and the data sizes they, and
//! FedAvg's weighted average, read.
//!
//! Silo `i` replaces its model by `sum_{j in N_i u {i}} beta_ij w_j` with
//! `beta_ij = s_j / (s_i + sum_{l in N_i} s_l)`, `s` the data sizes
//! (training examples per silo) and `N_i` the silos it receives from.

use thiserror::Error;

use crate::graph::Overlay;

/// Data sizes that do not fit the silos.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DataSizeError {
    /// Data sizes do not match the silos.
    #[error("{given} data size(s) for {n} silos")]
    SizeCount {
        /// Silos.
        n: usize,
        /// Sizes given.
        given: usize,
    },
    /// A data size is not a positive number.
    #[error("data size of silo {silo} is {value}; sizes must be finite and > 0")]
    BadSize {
        /// Silo.
        silo: usize,
        /// Value.
        value: f64,
    },
}

/// `sizes` checked (one finite size > 0 per silo), or all ones when `None`.
pub fn sizes_or_ones(overlay: &Overlay, sizes: Option<&[f64]>) -> Result<Vec<f64>, DataSizeError> {
    let n = overlay.silo_count();
    match sizes {
        None => Ok(vec![1.0; n]),
        Some(s) if s.len() != n => Err(DataSizeError::SizeCount { n, given: s.len() }),
        Some(s) => {
            if let Some((silo, &value)) = s
                .iter()
                .enumerate()
                .find(|(_, v)| !(v.is_finite() && **v > 0.0))
            {
                return Err(DataSizeError::BadSize { silo, value });
            }
            Ok(s.to_vec())
        }
    }
}

/// DecAvg weights (\[BadieModiri24\] eq. 2), sparse: row `i` lists `(j, beta_ij)` for `j = i`
/// and every in-neighbour `j` (arc `j -> i`); rows sum to 1. `sizes = None`
/// means equal data (`beta_ij = 1 / (indeg(i) + 1)`).
pub fn decavg_rows(
    overlay: &Overlay,
    sizes: Option<&[f64]>,
) -> Result<Vec<Vec<(usize, f64)>>, DataSizeError> {
    let s = sizes_or_ones(overlay, sizes)?;
    Ok(overlay
        .in_neighbours()
        .into_iter()
        .enumerate()
        .map(|(i, nb)| {
            let total: f64 = s[i] + nb.iter().map(|&j| s[j]).sum::<f64>();
            let mut row: Vec<(usize, f64)> = std::iter::once(i)
                .chain(nb)
                .map(|j| (j, s[j] / total))
                .collect();
            row.sort_unstable_by_key(|&(j, _)| j);
            row
        })
        .collect())
}
