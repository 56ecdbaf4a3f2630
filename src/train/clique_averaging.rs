//! D-Cliques training support (\[Bellet21\] Sec. 2 and 3.4): the Clique
//! Averaging gradient matrix (\[Bellet21\] Algorithm 3), Metropolis-Hastings
//! model weights and a label-skew test bed (class-conditional Gaussians).
//! The wall-clock of two-phase Clique Averaging rounds is
//! [`crate::replay::clock::CliqueAveragingClock`].
//!
//! Clique Averaging at node `i`, round `k`:
//! `g_i = (1/|C(i)|) sum_{j in C(i)} grad F(theta_j; S_j)` over its clique
//! group `C(i)` (itself and its clique neighbours), then
//! `theta_i <- theta_i - lr g_i` (or with momentum `v_i = mu v_i + g_i`,
//! buffer local) and model averaging over all neighbours with `W`.
//! In the batched trainer the gradient mixing is one `G x grad` product per
//! parameter (`crate::train::trainer::Trainer::set_clique_averaging`, feature `train`).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use super::data::{DataError, Dataset};
use crate::mixing::consensus::{ConsensusError, ConsensusMatrix};
use crate::overlay::dcliques::weights::metropolis_hastings_dense;
use crate::overlay::dcliques::{CliqueTopology, DCliquesError};

/// The Clique Averaging matrix `G`: `G_ij = 1/|C(i)|` for `j` in node
/// `i`'s group `C(i)` (which must contain `i`), 0 elsewhere. Row-stochastic.
pub fn gradient_matrix(groups: &[Vec<usize>]) -> Result<ConsensusMatrix, DCliquesError> {
    let n = groups.len();
    let mut rows = vec![vec![0.0; n]; n];
    for (i, g) in groups.iter().enumerate() {
        if !g.contains(&i) || g.iter().any(|&j| j >= n) {
            return Err(DCliquesError::Invalid(format!(
                "clique averaging group of node {i} must contain it and only nodes < {n}"
            )));
        }
        for &j in g {
            rows[i][j] = 1.0 / g.len() as f64;
        }
    }
    ConsensusMatrix::from_rows(rows).map_err(|e| DCliquesError::Invalid(e.to_string()))
}

/// Metropolis-Hastings model weights of `t` (\[Bellet21\] Sec. 2).
pub fn model_matrix(t: &CliqueTopology) -> Result<ConsensusMatrix, ConsensusError> {
    let n = t.node_count();
    let w = metropolis_hastings_dense(n, t.edges());
    ConsensusMatrix::from_rows(w.chunks(n.max(1)).map(<[f64]>::to_vec).collect())
}

/// Class-conditional Gaussians: class means `mu_y ~ N(0, spread^2 I)` in
/// `dim` dimensions, examples `x ~ N(mu_y, I)`; `per_class` training and
/// `test_per_class` test examples per class, seeded. Heterogeneity then
/// comes only from how labels are split (e.g. the shards partition).
pub fn gaussian_mixture(
    classes: usize,
    dim: usize,
    per_class: usize,
    test_per_class: usize,
    spread: f64,
    seed: u64,
) -> Result<(Dataset, Dataset), DataError> {
    if classes < 2 || dim == 0 || per_class == 0 || test_per_class == 0 {
        return Err(DataError::Invalid(
            "gaussian mixture needs >= 2 classes, dim >= 1 and examples per class >= 1".into(),
        ));
    }
    if !(spread.is_finite() && spread > 0.0) {
        return Err(DataError::Invalid(format!("spread {spread} must be > 0")));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let std = Normal::new(0.0, 1.0).expect("valid");
    let means: Vec<Vec<f64>> = (0..classes)
        .map(|_| (0..dim).map(|_| spread * std.sample(&mut rng)).collect())
        .collect();
    let mut make = |count: usize| {
        let mut ds = Dataset {
            features: Vec::with_capacity(classes * count * dim),
            labels: Vec::with_capacity(classes * count),
            dim,
            classes,
            image: None,
        };
        for (y, mu) in means.iter().enumerate() {
            for _ in 0..count {
                ds.features
                    .extend(mu.iter().map(|&m| (m + std.sample(&mut rng)) as f32));
                ds.labels.push(y as i64);
            }
        }
        ds
    };
    let train = make(per_class);
    let test = make(test_per_class);
    Ok((train, test))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixing::consensus::metropolis_hastings;
    use crate::overlay::dcliques::test_topology as topo;

    #[test]
    fn mh_agrees_with_consensus_rule() {
        let t = topo(20);
        let a = model_matrix(&t).unwrap();
        let b = metropolis_hastings(&t.overlay());
        for i in 0..20 {
            for j in 0..20 {
                assert!((a.get(i, j) - b.get(i, j)).abs() < 1e-15);
            }
        }
    }

    #[test]
    fn gradient_matrix_averages_groups() {
        let t = topo(20);
        let g = gradient_matrix(&t.averaging_groups()).unwrap();
        assert!(g.row_sum_error() < 1e-12);
        // Cliques are fully connected: G is symmetric, doubly stochastic.
        assert!(g.is_symmetric(1e-15));
        assert!((g.get(0, 0) - 0.2).abs() < 1e-15);
        assert!(gradient_matrix(&[vec![1], vec![1]]).is_err());
    }

    #[test]
    fn mixture_shapes() {
        let (tr, te) = gaussian_mixture(10, 8, 30, 5, 1.0, 1).unwrap();
        assert_eq!(tr.len(), 300);
        assert_eq!(te.len(), 50);
        assert_eq!(tr.features.len(), 300 * 8);
        assert!(gaussian_mixture(1, 8, 30, 5, 1.0, 1).is_err());
        assert_eq!(gaussian_mixture(10, 8, 30, 5, 1.0, 1).unwrap().0, tr);
    }
}
