//! Grouping nodes by their label distributions (\[Lee21\] Algorithm 3).
//!
//! * [`emd`]: \[Lee21\] eq. (32), `EMD(D1, D2) = sum_class |P(y|D1) - P(y|D2)|`.
//! * [`cluster`] (CLUSTER): k-medoids. Random medoids; every node joins the
//!   group whose medoid is nearest (EMD); every group's new medoid is the
//!   member nearest to the group's pooled distribution (`COST_U(i,k) =
//!   EMD(D^{k,i}, D^k)`); repeat until the assignment is steady (at most
//!   [`MAX_ITERATIONS`]). Cost: mean over nodes of `EMD(D^{k,i}, D^k)`
//!   (`COST_A`), the quantity of \[Lee21\] Table 3.
//! * [`group_by_iid`] (GROUP_BY_IID): random medoids seed the groups; the
//!   other nodes, in a seeded random order, join the group (below the size
//!   cap `ceil(N/G)` \[derived\]) whose pooled distribution including the node
//!   is nearest the global one (`COST_A(i,k) = EMD(D^k, D)`); the new
//!   medoid of a group is its member nearest the global distribution
//!   (`COST_U`); repeat until steady. Cost: mean over groups of `EMD(D^k, D)`.
//! * [`random_groups`]: a seeded shuffle cut into near-equal groups.
//!
//! Synthetic label-skewed data for the reproduction:
//! [`fedprox_mnist_partition`] (the label counts of FedML's MNIST, which is
//! FedProx's generator: 1000 devices, digits `u mod 10` and `u+1 mod 10`,
//! log-normal shares), [`two_class_partition`] (two random digits per node,
//! near-balanced, power-law sizes) and [`near_iid_partition`]
//! (FedShakespeare-like: every node close to a Zipf global distribution).

use rand::seq::{index::sample, SliceRandom};
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma, LogNormal, Pareto};
use serde::Serialize;
use thiserror::Error;

/// Iteration cap of the k-medoids loops.
pub const MAX_ITERATIONS: usize = 100;

/// Why a grouping could not be computed.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum GroupingError {
    /// More groups than nodes, or none.
    #[error("cannot make {groups} groups of {nodes} nodes (need 1 <= groups <= nodes)")]
    BadGroupCount {
        /// Groups asked for.
        groups: usize,
        /// Nodes.
        nodes: usize,
    },
    /// Ragged or invalid label counts.
    #[error("label counts: {0}")]
    BadCounts(String),
    /// A node has no data.
    #[error("every node needs at least one example")]
    EmptyNode,
}

/// Per-node label counts: `counts[i][c]` examples of class `c` on node `i`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelCounts {
    counts: Vec<Vec<f64>>,
}

impl LabelCounts {
    /// Checks that rows have the same length, entries are finite and `>= 0`
    /// and every node has data.
    pub fn new(counts: Vec<Vec<f64>>) -> Result<LabelCounts, GroupingError> {
        let c = counts.first().map_or(0, Vec::len);
        if counts.is_empty() || c == 0 {
            return Err(GroupingError::BadCounts("no nodes or no classes".into()));
        }
        for (i, row) in counts.iter().enumerate() {
            if row.len() != c {
                return Err(GroupingError::BadCounts(format!(
                    "node {i} has {} classes, node 0 has {c}",
                    row.len()
                )));
            }
            if row.iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
                return Err(GroupingError::BadCounts(format!(
                    "node {i} has a negative or non-finite count"
                )));
            }
            if row.iter().sum::<f64>() <= 0.0 {
                return Err(GroupingError::EmptyNode);
            }
        }
        Ok(LabelCounts { counts })
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// True when there are no nodes (never, after [`LabelCounts::new`]).
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Number of classes.
    pub fn classes(&self) -> usize {
        self.counts[0].len()
    }

    /// Counts of node `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.counts[i]
    }

    /// `|D^i|` of every node.
    pub fn sizes(&self) -> Vec<f64> {
        self.counts.iter().map(|r| r.iter().sum()).collect()
    }

    /// Summed counts of `members`.
    pub fn pooled(&self, members: &[usize]) -> Vec<f64> {
        let mut s = vec![0.0; self.classes()];
        for &i in members {
            for (a, x) in s.iter_mut().zip(&self.counts[i]) {
                *a += x;
            }
        }
        s
    }

    /// Summed counts of all nodes.
    pub fn global(&self) -> Vec<f64> {
        self.pooled(&(0..self.len()).collect::<Vec<_>>())
    }
}

/// \[Lee21\] Eq. (32) between two count vectors (each normalised to a distribution):
/// `sum_c |p_c - q_c|`, in `[0, 2]`.
pub fn emd(a: &[f64], b: &[f64]) -> f64 {
    let sa: f64 = a.iter().sum();
    let sb: f64 = b.iter().sum();
    a.iter().zip(b).map(|(x, y)| (x / sa - y / sb).abs()).sum()
}

/// A grouping and its cost before and after the k-medoids iterations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grouping {
    /// The groups (each sorted), all non-empty.
    pub groups: Vec<Vec<usize>>,
    /// Cost after the first assignment (\[Lee21\] Algorithm 3 line 13).
    pub initial_cost: f64,
    /// Cost at the end.
    pub final_cost: f64,
    /// Medoid updates performed.
    pub iterations: usize,
}

impl Grouping {
    /// `1 - final/initial` (0 when the initial cost is 0).
    pub fn reduction(&self) -> f64 {
        if self.initial_cost > 0.0 {
            1.0 - self.final_cost / self.initial_cost
        } else {
            0.0
        }
    }
}

fn check_groups(nodes: usize, groups: usize) -> Result<(), GroupingError> {
    if groups == 0 || groups > nodes {
        return Err(GroupingError::BadGroupCount { groups, nodes });
    }
    Ok(())
}

fn to_groups(z: &[usize], g: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); g];
    for (i, &k) in z.iter().enumerate() {
        out[k].push(i);
    }
    out
}

/// Random near-equal groups (sizes differ by at most one).
pub fn random_groups(
    n: usize,
    g: usize,
    rng: &mut impl Rng,
) -> Result<Vec<Vec<usize>>, GroupingError> {
    check_groups(n, g)?;
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(rng);
    let mut out = vec![Vec::new(); g];
    for (p, i) in perm.into_iter().enumerate() {
        out[p % g].push(i);
    }
    for grp in &mut out {
        grp.sort_unstable();
    }
    Ok(out)
}

/// CLUSTER cost: mean over nodes of `EMD(D^{k,i}, D^k)`.
pub fn cluster_cost(labels: &LabelCounts, groups: &[Vec<usize>]) -> f64 {
    let mut total = 0.0;
    for grp in groups {
        let pooled = labels.pooled(grp);
        total += grp
            .iter()
            .map(|&i| emd(labels.row(i), &pooled))
            .sum::<f64>();
    }
    total / labels.len() as f64
}

/// GROUP_BY_IID cost: mean over groups of `EMD(D^k, D)`.
pub fn iid_cost(labels: &LabelCounts, groups: &[Vec<usize>]) -> f64 {
    let global = labels.global();
    groups
        .iter()
        .map(|g| emd(&labels.pooled(g), &global))
        .sum::<f64>()
        / groups.len() as f64
}

/// How CLUSTER assigns a node to a group (\[Lee21\] Algorithm 3 leaves it open:
/// `COST_A(i,k) = EMD(D^{k,i}, D^k)` names the group's data `D^k`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ClusterAssign {
    /// Nearest medoid (classical k-medoids) \[derived\].
    Medoid,
    /// Nearest pooled group distribution of the previous assignment
    /// (`EMD(D^i, D^k)` literally; the first assignment uses the medoids).
    Pooled,
}

/// CLUSTER of \[Lee21\] Algorithm 3 (k-medoids on label distributions), seeded, with
/// nearest-medoid assignment; see [`cluster_with`].
pub fn cluster(
    labels: &LabelCounts,
    g: usize,
    rng: &mut impl Rng,
) -> Result<Grouping, GroupingError> {
    cluster_with(labels, g, ClusterAssign::Medoid, rng)
}

/// CLUSTER of \[Lee21\] Algorithm 3 with the given assignment rule: random medoids,
/// assignment, then repeat {medoid of k <- member nearest the pooled
/// distribution of k; reassign} until the assignment repeats or the cost
/// stops decreasing (the best assignment seen is returned), at most
/// [`MAX_ITERATIONS`] times.
pub fn cluster_with(
    labels: &LabelCounts,
    g: usize,
    rule: ClusterAssign,
    rng: &mut impl Rng,
) -> Result<Grouping, GroupingError> {
    let n = labels.len();
    check_groups(n, g)?;
    let mut medoids: Vec<usize> = sample(rng, n, g).into_vec();
    let nearest = |centres: &[Vec<f64>], medoids: &[usize]| -> Vec<usize> {
        let mut z: Vec<usize> = (0..n)
            .map(|i| {
                (0..g)
                    .min_by(|&a, &b| {
                        emd(labels.row(i), &centres[a]).total_cmp(&emd(labels.row(i), &centres[b]))
                    })
                    .expect("g >= 1")
            })
            .collect();
        for (k, &m) in medoids.iter().enumerate() {
            z[m] = k;
        }
        z
    };
    let medoid_rows =
        |m: &[usize]| -> Vec<Vec<f64>> { m.iter().map(|&i| labels.row(i).to_vec()).collect() };
    let mut z = nearest(&medoid_rows(&medoids), &medoids);
    let initial_cost = cluster_cost(labels, &to_groups(&z, g));
    let mut best = (initial_cost, z.clone());
    let mut iterations = 0;
    while iterations < MAX_ITERATIONS {
        iterations += 1;
        let groups = to_groups(&z, g);
        let pooled: Vec<Vec<f64>> = groups.iter().map(|grp| labels.pooled(grp)).collect();
        medoids = groups
            .iter()
            .zip(&pooled)
            .map(|(grp, p)| {
                *grp.iter()
                    .min_by(|&&a, &&b| emd(labels.row(a), p).total_cmp(&emd(labels.row(b), p)))
                    .expect("groups are non-empty")
            })
            .collect();
        let next = match rule {
            ClusterAssign::Medoid => nearest(&medoid_rows(&medoids), &medoids),
            ClusterAssign::Pooled => nearest(&pooled, &medoids),
        };
        if next == z {
            break;
        }
        z = next;
        let c = cluster_cost(labels, &to_groups(&z, g));
        if c < best.0 {
            best = (c, z.clone());
        } else {
            break;
        }
    }
    let groups = to_groups(&best.1, g);
    Ok(Grouping {
        final_cost: best.0,
        groups,
        initial_cost,
        iterations,
    })
}

/// GROUP_BY_IID of \[Lee21\] Algorithm 3, seeded (see the module docs).
pub fn group_by_iid(
    labels: &LabelCounts,
    g: usize,
    rng: &mut impl Rng,
) -> Result<Grouping, GroupingError> {
    let n = labels.len();
    check_groups(n, g)?;
    let global = labels.global();
    let cap = n.div_ceil(g);
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    let mut medoids: Vec<usize> = sample(rng, n, g).into_vec();
    let assign = |medoids: &[usize]| -> Vec<usize> {
        let mut z = vec![usize::MAX; n];
        let mut sums: Vec<Vec<f64>> = medoids.iter().map(|&m| labels.row(m).to_vec()).collect();
        let mut size = vec![1usize; g];
        for (k, &m) in medoids.iter().enumerate() {
            z[m] = k;
        }
        for &i in &order {
            if z[i] != usize::MAX {
                continue;
            }
            let mut best = (f64::INFINITY, 0);
            for k in 0..g {
                if size[k] >= cap {
                    continue;
                }
                let with: Vec<f64> = sums[k]
                    .iter()
                    .zip(labels.row(i))
                    .map(|(a, b)| a + b)
                    .collect();
                let c = emd(&with, &global);
                if c < best.0 {
                    best = (c, k);
                }
            }
            let k = best.1;
            z[i] = k;
            size[k] += 1;
            for (a, b) in sums[k].iter_mut().zip(labels.row(i)) {
                *a += b;
            }
        }
        z
    };
    let mut z = assign(&medoids);
    let initial_cost = iid_cost(labels, &to_groups(&z, g));
    let mut iterations = 0;
    while iterations < MAX_ITERATIONS {
        iterations += 1;
        medoids = to_groups(&z, g)
            .iter()
            .map(|grp| {
                *grp.iter()
                    .min_by(|&&a, &&b| {
                        emd(labels.row(a), &global).total_cmp(&emd(labels.row(b), &global))
                    })
                    .expect("groups are non-empty")
            })
            .collect();
        let next = assign(&medoids);
        if next == z {
            break;
        }
        z = next;
    }
    let groups = to_groups(&z, g);
    Ok(Grouping {
        final_cost: iid_cost(labels, &groups),
        groups,
        initial_cost,
        iterations,
    })
}

/// Power-law example counts: Pareto(scale 20, shape 1.5), capped at 2000.
fn power_law_size(rng: &mut impl Rng) -> f64 {
    let p: Pareto<f64> = Pareto::new(20.0, 1.5).expect("valid Pareto");
    p.sample(rng).min(2000.0).floor()
}

/// The synthetic label partitions by name, as `fedtopo tornado --partition`
/// and experiment files give them: `mnist` ([`two_class_partition`], 10
/// classes, 2 per node), `fedprox-mnist` ([`fedprox_mnist_partition`]) and
/// `shakespeare` ([`near_iid_partition`], 80 classes, concentration 200).
pub fn named_partition(name: &str, n: usize, seed: u64) -> Result<LabelCounts, GroupingError> {
    match name {
        "mnist" => two_class_partition(n, 10, 2, seed),
        "fedprox-mnist" => fedprox_mnist_partition(n, seed),
        "shakespeare" => near_iid_partition(n, 80, 200.0, seed),
        other => Err(GroupingError::BadCounts(format!(
            "unknown partition `{other}`; expected mnist, fedprox-mnist or shakespeare"
        ))),
    }
}

/// Examples per digit in MNIST (train + test, 70,000 in all).
pub const MNIST_CLASS_SIZES: [u32; 10] =
    [6903, 7877, 6990, 7141, 6824, 6313, 6876, 7293, 6825, 6958];

/// Devices of FedProx's (and so FedML's) federated MNIST.
pub const FEDPROX_MNIST_DEVICES: usize = 1000;

/// Label counts of FedML's MNIST (\[Lee21\] App. E: "1000 nodes",
/// 61,664 train + 7,371 test examples = all 69,035 of FedProx's split),
/// which is FedProx's generator (Li et al. 2020, `data/mnist/generate_niid.py`,
/// re-implemented here on label counts only): device `u` of 1000 holds
/// digits `u mod 10` and `(u+1) mod 10`, 5 examples of each, plus a share of
/// the digit's remaining examples drawn log-normal(0, 2) over the digit's 200
/// (block `u/10`, position) slots, truncated to a whole number and skipped
/// when the digit would run out, as there. With sigma = 2 the sizes are
/// heavy-tailed: most devices hold a handful of examples of each of their
/// two digits, a few hold thousands. So there are only 10 distinct label
/// pairs, and many nodes share one with similar shares, which is what lets
/// CLUSTER reduce the cost. `n` of the 1000 devices are then
/// sampled without replacement (the paper samples 100), all seeded.
///
/// Counts are of the whole device (FedProx then splits each device 90/10
/// into train/test at random, which leaves the label shares unchanged up to
/// rounding).
pub fn fedprox_mnist_partition(n: usize, seed: u64) -> Result<LabelCounts, GroupingError> {
    let devices = FEDPROX_MNIST_DEVICES;
    if n == 0 || n > devices {
        return Err(GroupingError::BadCounts(format!(
            "FedProx MNIST has {devices} devices; asked for {n}"
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let digits = |u: usize| [u % 10, (u + 1) % 10];
    let mut counts = vec![vec![0.0; 10]; devices];
    let mut used = [0.0f64; 10];
    for (u, row) in counts.iter_mut().enumerate() {
        for l in digits(u) {
            row[l] += 5.0;
            used[l] += 5.0;
        }
    }
    // props[l][block][j] ~ LogNormal(0, 2), scaled so that every digit's
    // slots sum to its examples left after the first 5 + 5 per device.
    let ln = LogNormal::new(0.0, 2.0).expect("valid log-normal");
    let blocks = devices / 10;
    let mut props = vec![vec![[0.0f64; 2]; blocks]; 10];
    for digit in props.iter_mut() {
        for slot in digit.iter_mut() {
            *slot = [ln.sample(&mut rng), ln.sample(&mut rng)];
        }
    }
    for (l, digit) in props.iter_mut().enumerate() {
        let total: f64 = digit.iter().map(|s| s[0] + s[1]).sum();
        let left = f64::from(MNIST_CLASS_SIZES[l]) - devices as f64;
        for slot in digit.iter_mut() {
            slot[0] *= left / total;
            slot[1] *= left / total;
        }
    }
    for (u, row) in counts.iter_mut().enumerate() {
        for (j, l) in digits(u).into_iter().enumerate() {
            let k = props[l][u / 10][j].floor();
            if used[l] + k < f64::from(MNIST_CLASS_SIZES[l]) {
                row[l] += k;
                used[l] += k;
            }
        }
    }
    let chosen = sample(&mut rng, devices, n).into_vec();
    LabelCounts::new(chosen.into_iter().map(|u| counts[u].clone()).collect())
}

/// MNIST as in FedML \[derived\]: `n` nodes, `classes` classes, each node holds
/// `per_node` distinct random classes with power-law size, split between
/// them by uniform random fractions (normalised), seeded.
pub fn two_class_partition(
    n: usize,
    classes: usize,
    per_node: usize,
    seed: u64,
) -> Result<LabelCounts, GroupingError> {
    if per_node == 0 || per_node > classes {
        return Err(GroupingError::BadCounts(format!(
            "need 1 <= classes per node ({per_node}) <= classes ({classes})"
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut counts = Vec::with_capacity(n);
    for _ in 0..n {
        let size = power_law_size(&mut rng);
        let cls = sample(&mut rng, classes, per_node).into_vec();
        let fr: Vec<f64> = (0..per_node).map(|_| rng.gen_range(0.25..0.75)).collect();
        let tot: f64 = fr.iter().sum();
        let mut row = vec![0.0; classes];
        for (c, f) in cls.iter().zip(&fr) {
            row[*c] = (size * f / tot).round().max(1.0);
        }
        counts.push(row);
    }
    LabelCounts::new(counts)
}

/// FedShakespeare-like data \[derived\]: a Zipf(1) global distribution over
/// `classes` classes; node `i` draws `p_i ~ Dirichlet(concentration * global)`
/// and power-law many examples, counts `round(size * p_i)` (at least one
/// example in total), seeded.
pub fn near_iid_partition(
    n: usize,
    classes: usize,
    concentration: f64,
    seed: u64,
) -> Result<LabelCounts, GroupingError> {
    if classes == 0 || !(concentration.is_finite() && concentration > 0.0) {
        return Err(GroupingError::BadCounts(format!(
            "need classes >= 1 and a finite concentration > 0, got {classes}, {concentration}"
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let zipf: Vec<f64> = (1..=classes).map(|r| 1.0 / r as f64).collect();
    let z: f64 = zipf.iter().sum();
    let mut counts = Vec::with_capacity(n);
    for _ in 0..n {
        let size = power_law_size(&mut rng);
        let draws: Vec<f64> = zipf
            .iter()
            .map(|p| {
                Gamma::new(concentration * p / z, 1.0)
                    .expect("valid Gamma")
                    .sample(&mut rng)
            })
            .collect();
        let s: f64 = draws.iter().sum();
        let mut row: Vec<f64> = draws.iter().map(|d| (size * d / s).round()).collect();
        if row.iter().sum::<f64>() <= 0.0 {
            row[0] = 1.0;
        }
        counts.push(row);
    }
    LabelCounts::new(counts)
}

#[cfg(test)]
mod fedprox_tests {
    use super::*;

    #[test]
    fn fedprox_mnist_devices_hold_two_consecutive_digits() {
        let all = fedprox_mnist_partition(FEDPROX_MNIST_DEVICES, 7).unwrap();
        let per_digit: Vec<f64> = all.global();
        for (l, &c) in per_digit.iter().enumerate() {
            // Every digit hands out at most its examples, and nearly all
            // (truncation loses < 1 example per slot, skipped slots more).
            assert!(c <= f64::from(MNIST_CLASS_SIZES[l]), "digit {l}: {c}");
            assert!(c >= 1000.0, "digit {l}: {c}");
        }
        for i in 0..all.len() {
            let row = all.row(i);
            let held: Vec<usize> = (0..10).filter(|&c| row[c] > 0.0).collect();
            assert_eq!(held.len(), 2, "{row:?}");
            assert_eq!((held[0] + 1) % 10 == held[1], held != [0, 9]);
            assert!(held.iter().all(|&c| row[c] >= 5.0));
        }
        // log-normal(0, 2) shares: heavy-tailed device sizes.
        let mut sizes = all.sizes();
        sizes.sort_by(f64::total_cmp);
        let median = sizes[sizes.len() / 2];
        assert!(sizes[sizes.len() - 1] > 20.0 * median, "{median} {sizes:?}");
        let a = fedprox_mnist_partition(100, 3).unwrap();
        let b = fedprox_mnist_partition(100, 3).unwrap();
        assert_eq!(a.len(), 100);
        assert_eq!(
            (0..100).map(|i| a.row(i).to_vec()).collect::<Vec<_>>(),
            (0..100).map(|i| b.row(i).to_vec()).collect::<Vec<_>>()
        );
        assert!(fedprox_mnist_partition(1001, 0).is_err());
        assert!(fedprox_mnist_partition(0, 0).is_err());
    }

    /// On FedML's MNIST labels CLUSTER ends near the published final cost
    /// (0.474, \[Lee21\] Table 3): mean over 10 seeds within 0.05.
    #[test]
    fn cluster_final_cost_on_fedprox_mnist_is_near_published() {
        let mut fin = 0.0;
        for s in 0..10 {
            let labels = fedprox_mnist_partition(100, s).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(s + 1_000);
            fin += cluster(&labels, 10, &mut rng).unwrap().final_cost / 10.0;
        }
        assert!((fin - 0.474).abs() < 0.05, "{fin}");
    }
}
