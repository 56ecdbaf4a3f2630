//! A small pure-Rust reference learner driven by a round program: softmax
//! regression (the paper's "MNIST on logistic regression", on synthetic
//! Gaussian-class features) trained by local SGD on label-skewed nodes,
//! with the program's operations applied by [`super::Step::apply`]
//! (snapshot semantics). It needs no libtorch, so the ordering of the nine
//! methods and the bytes and wall-clock to a target accuracy can be
//! measured on two cores in seconds.
//!
//! Evaluation \[derived\]: after step `t` the models *in play* are those held
//! by the nodes active in step `t+1` (chain holders, members of active
//! groups). Consensus programs (with an inter-group operation) evaluate the
//! mean accuracy of those models on the global test distribution;
//! pluralistic programs (no inter-group operation) evaluate each group's
//! models on the group's own label distribution (the paper measures *stars*
//! and *rings* with each group's model), weighted by `|D^k|/|D|`. Class
//! mixtures are evaluated from per-class accuracies on a balanced test set.

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;

use super::grouping::LabelCounts;
use super::spec::{Inter, ProgramSpec};
use crate::train::data::{DataError, Dataset as TorchDataset, FederatedData};

/// Learner options.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LearnOptions {
    /// Feature dimension.
    pub dim: usize,
    /// Distance scale of the class means (larger: easier).
    pub separation: f64,
    /// SGD learning rate (paper: 0.03).
    pub lr: f64,
    /// Mini-batch size of one local step.
    pub batch: usize,
    /// Steps `T`.
    pub steps: u64,
    /// Evaluate every this many steps.
    pub eval_every: u64,
    /// Test examples per class.
    pub test_per_class: usize,
    /// Seed of data and mini-batches.
    pub seed: u64,
}

impl Default for LearnOptions {
    fn default() -> Self {
        LearnOptions {
            dim: 20,
            separation: 1.0,
            lr: 0.03,
            batch: 10,
            steps: 2000,
            eval_every: 100,
            test_per_class: 200,
            seed: 0,
        }
    }
}

/// Synthetic features for every node's labels plus a balanced test set.
#[derive(Debug, Clone)]
pub struct Dataset {
    classes: usize,
    dim: usize,
    /// Per node: (features, label) examples.
    nodes: Vec<Vec<(Vec<f64>, usize)>>,
    test: Vec<(Vec<f64>, usize)>,
}

impl Dataset {
    /// Class `c` has mean `separation * m_c`, `m_c ~ N(0, I)`; an example is
    /// its class mean plus `N(0, I)` noise; node `i` gets `labels[i][c]`
    /// examples of class `c`. Seeded.
    pub fn synthetic(labels: &LabelCounts, o: &LearnOptions) -> Dataset {
        let mut rng = ChaCha8Rng::seed_from_u64(o.seed ^ 0x5eed);
        let k = labels.classes();
        let means: Vec<Vec<f64>> = (0..k)
            .map(|_| (0..o.dim).map(|_| o.separation * gauss(&mut rng)).collect())
            .collect();
        let draw = |c: usize, rng: &mut ChaCha8Rng| -> (Vec<f64>, usize) {
            (means[c].iter().map(|m| m + gauss(rng)).collect(), c)
        };
        let nodes = (0..labels.len())
            .map(|i| {
                let mut ex = Vec::new();
                for (c, &cnt) in labels.row(i).iter().enumerate() {
                    for _ in 0..cnt as usize {
                        ex.push(draw(c, &mut rng));
                    }
                }
                ex
            })
            .collect();
        let test = (0..k)
            .flat_map(|c| (0..o.test_per_class).map(move |_| c))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|c| draw(c, &mut rng))
            .collect();
        Dataset {
            classes: k,
            dim: o.dim,
            nodes,
            test,
        }
    }

    /// Parameters of the softmax model, `classes * (dim + 1)`.
    pub fn params(&self) -> usize {
        self.classes * (self.dim + 1)
    }

    /// Number of classes.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// The same examples as a [`FederatedData`] for the libtorch trainer:
    /// the training pool is the nodes' examples node after node (silo `i`
    /// holds node `i`'s examples, in order), the test set is the balanced
    /// test set; features become `f32`.
    pub fn to_federated(&self) -> FederatedData {
        let mut train = TorchDataset {
            features: Vec::new(),
            labels: Vec::new(),
            dim: self.dim,
            classes: self.classes,
            image: None,
        };
        let mut silos = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let start = train.labels.len();
            for (x, y) in node {
                train.features.extend(x.iter().map(|&v| v as f32));
                train.labels.push(*y as i64);
            }
            silos.push((start..train.labels.len()).collect());
        }
        let mut test = TorchDataset {
            features: Vec::with_capacity(self.test.len() * self.dim),
            labels: Vec::with_capacity(self.test.len()),
            dim: self.dim,
            classes: self.classes,
            image: None,
        };
        for (x, y) in &self.test {
            test.features.extend(x.iter().map(|&v| v as f32));
            test.labels.push(*y as i64);
        }
        FederatedData {
            name: "label-skewed gaussian".into(),
            train,
            test,
            silos,
        }
    }

    fn logits(&self, w: &[f64], x: &[f64]) -> Vec<f64> {
        let d = self.dim + 1;
        (0..self.classes)
            .map(|c| {
                let row = &w[c * d..(c + 1) * d];
                row[self.dim]
                    + row[..self.dim]
                        .iter()
                        .zip(x)
                        .map(|(a, b)| a * b)
                        .sum::<f64>()
            })
            .collect()
    }

    /// One SGD step of softmax cross-entropy on a random mini-batch of node `i`.
    fn sgd_step(&self, w: &mut [f64], i: usize, o: &LearnOptions, rng: &mut ChaCha8Rng) {
        let data = &self.nodes[i];
        if data.is_empty() {
            return;
        }
        let d = self.dim + 1;
        let mut g = vec![0.0; w.len()];
        for _ in 0..o.batch {
            let (x, y) = &data[rng.gen_range(0..data.len())];
            let z = self.logits(w, x);
            let mx = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = z.iter().map(|v| (v - mx).exp()).collect();
            let s: f64 = e.iter().sum();
            for c in 0..self.classes {
                let coef = e[c] / s - f64::from(u8::from(c == *y));
                let row = &mut g[c * d..(c + 1) * d];
                for (gj, xj) in row[..self.dim].iter_mut().zip(x) {
                    *gj += coef * xj;
                }
                row[self.dim] += coef;
            }
        }
        let scale = o.lr / o.batch as f64;
        for (wj, gj) in w.iter_mut().zip(&g) {
            *wj -= scale * gj;
        }
    }

    /// Accuracy of `w` on each class of the balanced test set.
    fn per_class_accuracy(&self, w: &[f64]) -> Vec<f64> {
        let mut hit = vec![0.0; self.classes];
        let mut cnt = vec![0.0; self.classes];
        for (x, y) in &self.test {
            let z = self.logits(w, x);
            let pred = (0..self.classes)
                .max_by(|&a, &b| z[a].total_cmp(&z[b]))
                .expect("classes >= 1");
            cnt[*y] += 1.0;
            if pred == *y {
                hit[*y] += 1.0;
            }
        }
        hit.iter()
            .zip(&cnt)
            .map(|(h, c): (&f64, &f64)| h / c.max(1.0))
            .collect()
    }
}

fn gauss(rng: &mut ChaCha8Rng) -> f64 {
    StandardNormal.sample(rng)
}

/// Accuracy after step `t`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EvalPoint {
    /// Step.
    pub t: u64,
    /// Test accuracy in [0, 1].
    pub accuracy: f64,
}

/// Trains `spec`'s program on `data` for `o.steps` steps, evaluating every
/// `o.eval_every` steps (see the module docs). Seeded.
pub fn train(
    spec: &ProgramSpec,
    labels: &LabelCounts,
    data: &Dataset,
    o: &LearnOptions,
) -> Vec<EvalPoint> {
    let n = spec.nodes;
    let mut models = vec![vec![0.0; data.params()]; n];
    let mut rng = ChaCha8Rng::seed_from_u64(o.seed);
    let mut out = Vec::new();
    let mut step = spec.step(1);
    for t in 1..=o.steps {
        for &i in &step.active {
            data.sgd_step(&mut models[i], i, o, &mut rng);
        }
        step.apply(&mut models);
        let next = spec.step(t + 1);
        if o.eval_every > 0 && t.is_multiple_of(o.eval_every) {
            let mut cache: Vec<(usize, Vec<f64>)> = Vec::new();
            let mut acc_of = |i: usize| -> Vec<f64> {
                if let Some((_, a)) = cache.iter().find(|(j, _)| models[*j] == models[i]) {
                    return a.clone();
                }
                let a = data.per_class_accuracy(&models[i]);
                cache.push((i, a.clone()));
                a
            };
            let accuracy = program_metric(spec, labels, &next.active, &mut acc_of);
            out.push(EvalPoint { t, accuracy });
        }
        step = next;
    }
    out
}

/// A per-class metric (accuracy, loss) of the models in play, mixed as the
/// module docs describe: `held` are the nodes whose models are in play
/// (the nodes active in the next step) and `per_class(i)` is node `i`'s
/// metric on each class. Consensus programs: mean over `held` of the metric
/// on the global label distribution of `labels`; pluralistic programs (no
/// inter-group operation): for every group the mean over its held models
/// of the metric on the group's pooled label distribution, weighted by
/// `|D^k|/|D|`. Used by both learners, so their numbers mean the same.
pub fn program_metric(
    spec: &ProgramSpec,
    labels: &LabelCounts,
    held: &[usize],
    per_class: &mut dyn FnMut(usize) -> Vec<f64>,
) -> f64 {
    let mix = |acc: &[f64], dist: &[f64]| -> f64 {
        let s: f64 = dist.iter().sum();
        acc.iter().zip(dist).map(|(a, p)| a * p / s).sum()
    };
    if matches!(spec.inter, Inter::None) {
        let gsum: f64 = labels.global().iter().sum();
        let mut total = 0.0;
        for g in &spec.groups {
            let pooled = labels.pooled(g);
            let in_group: Vec<usize> = held.iter().copied().filter(|i| g.contains(i)).collect();
            let a: f64 = in_group
                .iter()
                .map(|&i| mix(&per_class(i), &pooled))
                .sum::<f64>()
                / in_group.len().max(1) as f64;
            total += a * pooled.iter().sum::<f64>() / gsum;
        }
        total
    } else {
        let global = labels.global();
        held.iter()
            .map(|&i| mix(&per_class(i), &global))
            .sum::<f64>()
            / held.len().max(1) as f64
    }
}

/// Realises label counts on a real labelled pool (e.g. MNIST): node `i`
/// gets `labels.row(i)[c]` examples of class `c` (counts rounded), taken
/// from a seeded shuffle of the pool's class-`c` examples, node after node.
/// When the nodes ask for more examples of a class than the pool holds the
/// shuffle is reused from its start \[derived\], so the label skew is exact
/// and every node's data is distinct from the next ones' as long as the
/// pool suffices.
pub fn split_by_counts(
    pool: &TorchDataset,
    labels: &LabelCounts,
    seed: u64,
) -> Result<Vec<Vec<usize>>, DataError> {
    use rand::seq::SliceRandom;
    if labels.classes() != pool.classes {
        return Err(DataError::Invalid(format!(
            "the label partition has {} classes, the dataset {}",
            labels.classes(),
            pool.classes
        )));
    }
    let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); pool.classes];
    for (k, &y) in pool.labels.iter().enumerate() {
        if let Some(v) = usize::try_from(y).ok().and_then(|c| by_class.get_mut(c)) {
            v.push(k);
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0073_706c_6974);
    for v in &mut by_class {
        v.shuffle(&mut rng);
    }
    let mut cursor = vec![0usize; pool.classes];
    let mut out = Vec::with_capacity(labels.len());
    for i in 0..labels.len() {
        let mut mine = Vec::new();
        for (c, &cnt) in labels.row(i).iter().enumerate() {
            let want = cnt.round() as usize;
            if want == 0 {
                continue;
            }
            let src = &by_class[c];
            if src.is_empty() {
                return Err(DataError::Invalid(format!(
                    "node {i} needs class {c}, which the dataset does not contain"
                )));
            }
            for _ in 0..want {
                mine.push(src[cursor[c] % src.len()]);
                cursor[c] += 1;
            }
        }
        if mine.is_empty() {
            return Err(DataError::Invalid(format!("node {i} gets no example")));
        }
        out.push(mine);
    }
    Ok(out)
}
