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

    fn params(&self) -> usize {
        self.classes * (self.dim + 1)
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
    let global = labels.global();
    let gsum: f64 = global.iter().sum();
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
            let mix = |acc: &[f64], dist: &[f64]| -> f64 {
                let s: f64 = dist.iter().sum();
                acc.iter().zip(dist).map(|(a, p)| a * p / s).sum()
            };
            let accuracy = if matches!(spec.inter, Inter::None) {
                let mut total = 0.0;
                for g in &spec.groups {
                    let pooled = labels.pooled(g);
                    let held: Vec<usize> = next
                        .active
                        .iter()
                        .copied()
                        .filter(|i| g.contains(i))
                        .collect();
                    let a: f64 = held.iter().map(|&i| mix(&acc_of(i), &pooled)).sum::<f64>()
                        / held.len().max(1) as f64;
                    total += a * pooled.iter().sum::<f64>() / gsum;
                }
                total
            } else {
                next.active
                    .iter()
                    .map(|&i| mix(&acc_of(i), &global))
                    .sum::<f64>()
                    / next.active.len().max(1) as f64
            };
            out.push(EvalPoint { t, accuracy });
        }
        step = next;
    }
    out
}
