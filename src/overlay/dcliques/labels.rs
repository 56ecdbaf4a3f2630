//! Label distributions `p_i(y)` of nodes and the skew of a set of nodes
//! (D-Cliques, \[Bellet21\] eq. 3).

use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::DCliquesError;

/// Label counts of the MNIST training set (labels 0..9, 60,000 examples).
pub const MNIST_TRAIN_COUNTS: [usize; 10] =
    [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949];

/// Per-node label distributions: `p[i][y]` is the share of node `i`'s local
/// examples with label `y` (rows sum to 1).
#[derive(Debug, Clone, PartialEq)]
pub struct LabelDistributions {
    p: Vec<Vec<f64>>,
    global: Vec<f64>,
}

impl LabelDistributions {
    /// From per-node label counts (`counts[i][y]` examples of label `y` on
    /// node `i`). Every node needs at least one example and every row the
    /// same number of labels.
    pub fn from_counts(counts: &[Vec<usize>]) -> Result<Self, DCliquesError> {
        let n = counts.len();
        if n == 0 {
            return Err(DCliquesError::Invalid("no nodes".into()));
        }
        let l = counts[0].len();
        if l == 0 {
            return Err(DCliquesError::Invalid("no labels".into()));
        }
        let mut p = Vec::with_capacity(n);
        for (i, row) in counts.iter().enumerate() {
            if row.len() != l {
                return Err(DCliquesError::Invalid(format!(
                    "node {i} has {} label counts, node 0 has {l}",
                    row.len()
                )));
            }
            let total: usize = row.iter().sum();
            if total == 0 {
                return Err(DCliquesError::Invalid(format!("node {i} has no examples")));
            }
            p.push(row.iter().map(|&c| c as f64 / total as f64).collect());
        }
        Ok(Self::from_rows(p))
    }

    fn from_rows(p: Vec<Vec<f64>>) -> Self {
        let n = p.len();
        let l = p[0].len();
        let mut global = vec![0.0; l];
        for row in &p {
            for (g, v) in global.iter_mut().zip(row) {
                *g += v / n as f64;
            }
        }
        LabelDistributions { p, global }
    }

    /// Extreme skew: node `i` holds only label `i mod classes` (\[Bellet21\] Sec. 4.1,
    /// App. C.1). `n` must be a multiple of `classes` for a balanced
    /// global distribution (not required).
    pub fn one_class_per_node(n: usize, classes: usize) -> Result<Self, DCliquesError> {
        if n == 0 || classes == 0 {
            return Err(DCliquesError::Invalid("need n > 0 and classes > 0".into()));
        }
        let counts: Vec<Vec<usize>> = (0..n)
            .map(|i| {
                (0..classes)
                    .map(|y| usize::from(y == i % classes))
                    .collect()
            })
            .collect();
        Self::from_counts(&counts)
    }

    /// The paper's main partition (\[Bellet21\] Sec. 4.1): `classes * per_class`
    /// examples sorted by label, cut into `shards_per_node * n` equal shards,
    /// `shards_per_node` random shards per node. Seeded by `rng`.
    pub fn shards(
        n: usize,
        classes: usize,
        per_class: usize,
        shards_per_node: usize,
        rng: &mut ChaCha8Rng,
    ) -> Result<Self, DCliquesError> {
        Self::shards_with_counts(n, &vec![per_class; classes], shards_per_node, rng)
    }

    /// As [`Self::shards`] with `class_counts[y]` examples of label `y`
    /// (e.g. [`MNIST_TRAIN_COUNTS`]).
    pub fn shards_with_counts(
        n: usize,
        class_counts: &[usize],
        shards_per_node: usize,
        rng: &mut ChaCha8Rng,
    ) -> Result<Self, DCliquesError> {
        let shards = n * shards_per_node;
        let total: usize = class_counts.iter().sum();
        if n == 0 || class_counts.is_empty() || shards_per_node == 0 || total < shards {
            return Err(DCliquesError::Invalid(format!(
                "shards: need n, classes, shards per node > 0 and at least one example per shard \
                 ({total} examples for {shards} shards)"
            )));
        }
        // Label of the e-th example in label order.
        let mut bounds = Vec::with_capacity(class_counts.len());
        let mut acc = 0;
        for &c in class_counts {
            acc += c;
            bounds.push(acc);
        }
        let label_of = |e: usize| bounds.partition_point(|&b| b <= e);
        let mut order: Vec<usize> = (0..shards).collect();
        order.shuffle(rng);
        let mut counts = vec![vec![0usize; class_counts.len()]; n];
        for (pos, &s) in order.iter().enumerate() {
            let node = pos / shards_per_node;
            // Shard s covers sorted examples [s*total/shards, (s+1)*total/shards).
            let (a, b) = (s * total / shards, (s + 1) * total / shards);
            for e in a..b {
                counts[node][label_of(e)] += 1;
            }
        }
        Self::from_counts(&counts)
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.p.len()
    }

    /// Number of labels `L`.
    pub fn label_count(&self) -> usize {
        self.global.len()
    }

    /// `p_i(y)` of node `i`.
    pub fn node(&self, i: usize) -> &[f64] {
        &self.p[i]
    }

    /// The global distribution `p(y) = (1/n) sum_i p_i(y)`.
    pub fn global(&self) -> &[f64] {
        &self.global
    }

    /// `skew(C) = sum_y |p_C(y) - p(y)|` with `p_C` the unweighted mean of
    /// the nodes of `clique` (\[Bellet21\] eq. 3). Empty set: 0.
    pub fn skew(&self, clique: &[usize]) -> f64 {
        if clique.is_empty() {
            return 0.0;
        }
        let mut sum = vec![0.0; self.label_count()];
        for &i in clique {
            for (s, v) in sum.iter_mut().zip(&self.p[i]) {
                *s += v;
            }
        }
        self.skew_of_sum(&sum, clique.len())
    }

    /// Skew from the per-label sum of the members' distributions.
    pub(crate) fn skew_of_sum(&self, sum: &[f64], size: usize) -> f64 {
        sum.iter()
            .zip(&self.global)
            .map(|(s, g)| (s / size as f64 - g).abs())
            .sum()
    }

    /// Labels with positive share on node `i`.
    pub fn support(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.p[i]
            .iter()
            .enumerate()
            .filter(|(_, &v)| v > 0.0)
            .map(|(y, _)| y)
    }

    /// The label with the largest share on node `i` (lowest label on ties).
    pub fn dominant(&self, i: usize) -> usize {
        let mut best = 0;
        for (y, &v) in self.p[i].iter().enumerate() {
            if v > self.p[i][best] {
                best = y;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn one_class_and_skew() {
        let d = LabelDistributions::one_class_per_node(20, 10).unwrap();
        assert_eq!(d.global(), &[0.1; 10]);
        // One node: |1 - 0.1| + 9 * 0.1 = 1.8.
        assert!((d.skew(&[3]) - 1.8).abs() < 1e-12);
        // All ten classes: zero skew.
        assert!(d.skew(&(0..10).collect::<Vec<_>>()).abs() < 1e-12);
        // Two classes: 2 * 0.4 + 8 * 0.1 = 1.6.
        assert!((d.skew(&[0, 1]) - 1.6).abs() < 1e-12);
    }

    #[test]
    fn shards_have_two_shards_worth() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let d = LabelDistributions::shards(100, 10, 6000, 2, &mut rng).unwrap();
        assert_eq!(d.node_count(), 100);
        for i in 0..100 {
            let s: f64 = d.node(i).iter().sum();
            assert!((s - 1.0).abs() < 1e-12);
            // Two shards of 3000 sorted examples touch at most 2 labels.
            assert!(d.support(i).count() <= 2);
        }
        assert!(d.global().iter().all(|&g| (g - 0.1).abs() < 1e-12));
        assert!(LabelDistributions::shards(50, 10, 10, 2, &mut rng).is_ok());
        assert!(LabelDistributions::shards(100, 10, 10, 2, &mut rng).is_err());
        assert!(LabelDistributions::shards(100, 1, 10, 2, &mut rng).is_err());
    }

    #[test]
    fn bad_counts() {
        assert!(LabelDistributions::from_counts(&[]).is_err());
        assert!(LabelDistributions::from_counts(&[vec![0, 0]]).is_err());
        assert!(LabelDistributions::from_counts(&[vec![1, 0], vec![1]]).is_err());
    }
}
