//! Decentralized periodic averaging SGD (DPASGD, \[Marfoq20\] eq. 2) on all silos
//! at once:
//!
//! ```text
//! theta_i(k+1) = sum_j A_ij(k) [ theta_j(k) - lr * sum_{h<s} grad F_j(theta_j(k,h); batch_j(k,h)) ]
//! ```
//!
//! `s` local optimiser steps on every silo, then one averaging with the
//! consensus matrix `A(k)` of round `k`'s overlay. The stacked parameters
//! make the averaging a single matrix product `A [N, P]`. The per-silo loop
//! ([`ExecMode::PerSilo`]) runs the same arithmetic with `N` one-silo
//! models: it is the reference for tests and benches.
//!
//! Determinism: parameters are initialised from the seed in Rust (ChaCha8),
//! batches are drawn from a ChaCha8 stream seeded by `(seed, round, step)`,
//! and intra-op parallelism must be 1 (`tch::set_num_threads(1)`, done by
//! [`Trainer::new`]) so reductions run in a fixed order. Same seed, same bytes.

use rand::seq::index::sample;
use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tch::{Kind, Tensor};
use thiserror::Error;

use super::data::FederatedData;
use super::model::{BatchedModel, InputShape, ModelKind};
use super::optim::{LrSchedule, Optimizer, OptimizerKind};
use super::report::{RoundRecord, Stat};
use crate::mixing::consensus::{ConsensusError, ConsensusMatrix, ConsensusRule};

/// Why training failed.
#[derive(Debug, Error)]
pub enum TrainError {
    /// Bad configuration or data.
    #[error("{0}")]
    Config(String),
    /// Consensus matrix problem.
    #[error(transparent)]
    Consensus(#[from] ConsensusError),
    /// libtorch error.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    /// Clock error.
    #[error(transparent)]
    Clock(#[from] crate::replay::clock::ClockError),
    /// Checkpoint I/O.
    #[error("checkpoint {path}: {message}")]
    Checkpoint {
        /// File.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// Batched tensor program or reference per-silo loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecMode {
    /// All silos in one tensor program.
    Batched,
    /// One model per silo, in a loop (reference).
    PerSilo,
}

/// Training hyper-parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainConfig {
    /// Model family.
    pub model: ModelKind,
    /// Optimiser.
    pub optimizer: OptimizerKind,
    /// Base learning rate.
    pub lr: f64,
    /// Learning-rate schedule over rounds.
    pub lr_schedule: LrSchedule,
    /// Local steps per round `s`.
    pub local_steps: u32,
    /// Mini-batch size per silo and step.
    pub batch_size: usize,
    /// Consensus rule.
    pub consensus: ConsensusRule,
    /// Evaluate on at most this many training examples (seeded sample) and
    /// this many test examples.
    pub eval_samples: usize,
    /// Seed.
    pub seed: u64,
    /// Execution mode.
    pub mode: ExecMode,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            model: ModelKind::LogReg,
            optimizer: OptimizerKind::Sgd { momentum: 0.0 },
            lr: 0.05,
            lr_schedule: LrSchedule::Constant,
            local_steps: 1,
            batch_size: 32,
            consensus: ConsensusRule::Auto,
            eval_samples: 4000,
            seed: 0,
            mode: ExecMode::Batched,
        }
    }
}

impl TrainConfig {
    /// A string identifying every setting that changes the numbers (part of
    /// the resume key: a checkpoint made with other settings is not resumed).
    pub fn fingerprint(&self) -> String {
        format!(
            "{}|{:?}|{}|{:?}|{}|{}|{:?}|{}|{}",
            self.model.name(),
            self.optimizer,
            self.lr,
            self.lr_schedule,
            self.local_steps,
            self.batch_size,
            self.consensus,
            self.eval_samples,
            self.seed
        )
    }
}

struct Silo {
    model: BatchedModel,
    opt: Optimizer,
}

/// Which evaluation sample of a [`Trainer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalSet {
    /// The seeded sample of at most `eval_samples` training examples (all silos' pool).
    Train,
    /// The seeded sample of at most `eval_samples` test examples.
    Test,
}

/// Per-class metrics of one silo's model on an evaluation sample.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassMetrics {
    /// `accuracy[c]`: fraction of the class-`c` examples predicted right
    /// (0 when the sample has none, see `count`).
    pub accuracy: Vec<f64>,
    /// `loss[c]`: mean cross-entropy (nat) on the class-`c` examples.
    pub loss: Vec<f64>,
    /// `count[c]`: class-`c` examples in the sample.
    pub count: Vec<usize>,
}

/// DPASGD on every silo of a [`FederatedData`].
pub struct Trainer {
    cfg: TrainConfig,
    n: usize,
    train_x: Tensor,
    train_y: Tensor,
    silos: Vec<Vec<usize>>,
    eval_train: (Tensor, Tensor),
    eval_test: (Tensor, Tensor),
    /// Batched: one entry with `N` silos; per-silo: `N` entries with one.
    parts: Vec<Silo>,
    /// Batched dense averaging: one `[N, P]` output buffer per parameter
    /// tensor, reused every round (`mm_out`).
    mix: Vec<Tensor>,
    round: u64,
    /// Number of classes.
    classes: usize,
    /// Clique Averaging gradient matrix `G` (`[N, N]`, float), if enabled.
    grad_mix: Option<Tensor>,
}

fn tensors(x: &[f32], y: &[i64], dim: usize) -> (Tensor, Tensor) {
    (
        Tensor::from_slice(x).reshape([y.len() as i64, dim as i64]),
        Tensor::from_slice(y),
    )
}

/// One local step of every silo of a batched `model` on `(x [N, B, d], y
/// [N, B])`: plain SGD on a dense model is fused into the hand-written
/// backward pass; other optimisers on dense models use the hand-written
/// gradients; other models use autograd.
fn batched_step(
    model: &mut BatchedModel,
    opt: &mut Optimizer,
    kind: OptimizerKind,
    x: &Tensor,
    y: &Tensor,
    lr: f64,
) {
    if model.is_dense() && kind == (OptimizerKind::Sgd { momentum: 0.0 }) {
        opt.count_step();
        model.dense_sgd_step(x, y, lr);
    } else if model.is_dense() {
        let grads = model.dense_grads(x, y);
        opt.step_with(&mut model.parameters_mut(), &grads, lr);
    } else {
        let (loss, _) = BatchedModel::loss_and_correct(&model.forward(x), y);
        loss.sum(Kind::Float).backward();
        opt.step(&mut model.parameters_mut(), lr);
    }
}

/// One local step of silo `i`'s own model (per-silo loop, autograd).
fn per_silo_step(p: &mut Silo, x: &Tensor, y: &Tensor, i: usize, lr: f64) {
    let xi = x.narrow(0, i as i64, 1);
    let yi = y.narrow(0, i as i64, 1);
    let (loss, _) = BatchedModel::loss_and_correct(&p.model.forward(&xi), &yi);
    loss.sum(Kind::Float).backward();
    p.opt.step(&mut p.model.parameters_mut(), lr);
}

impl Trainer {
    /// A trainer with fresh models (every silo starts from the same parameters).
    pub fn new(cfg: TrainConfig, data: &FederatedData) -> Result<Self, TrainError> {
        data.validate()
            .map_err(|e| TrainError::Config(e.to_string()))?;
        if cfg.batch_size == 0 || cfg.local_steps == 0 {
            return Err(TrainError::Config(
                "batch size and local steps must be >= 1".into(),
            ));
        }
        if !(cfg.lr.is_finite() && cfg.lr > 0.0) {
            return Err(TrainError::Config(format!(
                "learning rate {} must be > 0",
                cfg.lr
            )));
        }
        tch::set_num_threads(1);
        tch::manual_seed(cfg.seed as i64);
        let n = data.silo_count();
        let d = data.train.dim;
        let input = InputShape {
            dim: d,
            image: data.train.image,
            classes: data.train.classes,
        };
        let full = BatchedModel::new(cfg.model, n, input, cfg.seed).map_err(TrainError::Config)?;
        let parts = match cfg.mode {
            ExecMode::Batched => {
                let opt = Optimizer::new(cfg.optimizer, &full.parameters());
                vec![Silo { model: full, opt }]
            }
            ExecMode::PerSilo => (0..n)
                .map(|i| {
                    let model = full.silo_copy(i);
                    let opt = Optimizer::new(cfg.optimizer, &model.parameters());
                    Silo { model, opt }
                })
                .collect(),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x6576_616c);
        let pick = |len: usize, rng: &mut ChaCha8Rng| -> Vec<usize> {
            if len <= cfg.eval_samples {
                (0..len).collect()
            } else {
                let mut v = sample(rng, len, cfg.eval_samples).into_vec();
                v.sort_unstable();
                v
            }
        };
        let tr = data.train.select(&pick(data.train.len(), &mut rng));
        let te = data.test.select(&pick(data.test.len(), &mut rng));
        let (train_x, train_y) = tensors(&data.train.features, &data.train.labels, d);
        Ok(Trainer {
            eval_train: tensors(&tr.features, &tr.labels, d),
            eval_test: tensors(&te.features, &te.labels, d),
            train_x,
            train_y,
            silos: data.silos.clone(),
            n,
            parts,
            mix: Vec::new(),
            round: 0,
            classes: data.train.classes,
            grad_mix: None,
            cfg,
        })
    }

    /// Replaces every silo's parameters by its own He-uniform draw scaled
    /// by `gain` (uncoordinated initialisation,
    /// \[BadieModiri24\] Algorithm 1; see [`BatchedModel::reinit_he_uniform`]), seeded by the
    /// configuration's seed, and resets the optimiser state. Call before
    /// the first round.
    pub fn reinitialise_uncoordinated(&mut self, gain: f64) -> Result<(), TrainError> {
        if !(gain.is_finite() && gain > 0.0) {
            return Err(TrainError::Config(format!(
                "initialisation gain {gain} must be finite and > 0"
            )));
        }
        let seed = self.cfg.seed;
        let per_part = self.n / self.parts.len();
        for (k, p) in self.parts.iter_mut().enumerate() {
            p.model.reinit_he_uniform(gain, seed, k * per_part);
        }
        self.reset_optimizer();
        Ok(())
    }

    /// Fresh optimiser state (DecAvg re-creates it after every averaging).
    pub fn reset_optimizer(&mut self) {
        for p in &mut self.parts {
            p.opt = Optimizer::new(self.cfg.optimizer, &p.model.parameters());
        }
    }

    /// Rounds completed.
    pub fn round(&self) -> u64 {
        self.round
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.n
    }

    /// Parameters per silo.
    pub fn params_per_silo(&self) -> usize {
        self.parts[0].model.params_per_silo()
    }

    /// The configuration.
    pub fn config(&self) -> &TrainConfig {
        &self.cfg
    }

    /// Global indices of the mini-batches of round `k`, step `h`: `B` per
    /// silo, silo-major (without replacement when the silo has `>= B`).
    pub fn batch_indices(&self, k: u64, h: u32) -> Vec<i64> {
        let seed = self
            .cfg
            .seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(k.wrapping_mul(1_000_003))
            .wrapping_add(h as u64);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let b = self.cfg.batch_size;
        let mut out = Vec::with_capacity(self.n * b);
        for s in &self.silos {
            if s.len() >= b {
                out.extend(
                    sample(&mut rng, s.len(), b)
                        .into_iter()
                        .map(|t| s[t] as i64),
                );
            } else {
                out.extend((0..b).map(|_| s[rng.gen_range(0..s.len())] as i64));
            }
        }
        out
    }

    /// Enables Clique Averaging (\[Bellet21\] Sec. 3.4, Algorithm 3) with gradient
    /// matrix `g` (e.g. [`crate::train::clique_averaging::gradient_matrix`]):
    /// at every local step each silo's gradient is replaced by
    /// `sum_j G_ij grad_j` before the optimiser step (momentum buffers stay
    /// local). `None` disables it. Needs the batched mode.
    pub fn set_clique_averaging(&mut self, g: Option<&ConsensusMatrix>) -> Result<(), TrainError> {
        let Some(g) = g else {
            self.grad_mix = None;
            return Ok(());
        };
        if g.n() != self.n {
            return Err(TrainError::Config(format!(
                "clique averaging matrix for {} silos, data has {}",
                g.n(),
                self.n
            )));
        }
        if self.parts.len() != 1 {
            return Err(TrainError::Config(
                "clique averaging needs the batched execution mode".into(),
            ));
        }
        let n = self.n as i64;
        self.grad_mix = Some(
            Tensor::from_slice(g.as_slice())
                .reshape([n, n])
                .to_kind(Kind::Float),
        );
        Ok(())
    }

    /// Runs round `k` (the next one) with consensus matrix `a`: local steps then averaging.
    pub fn train_round(&mut self, a: &ConsensusMatrix) -> Result<(), TrainError> {
        self.check_matrix(a)?;
        let k = self.round;
        let lr = self.cfg.lr_schedule.at(self.cfg.lr, k);
        self.local_steps_all(k, lr);
        self.average(a);
        self.round += 1;
        Ok(())
    }

    /// Runs round `k` (the next one) where only the silos with `active[i]`
    /// take their local steps; the others keep their parameters *and*
    /// optimiser state (momentum, Adam moments and step count) bit for bit.
    /// Then every silo mixes with the row-stochastic `a` (skipped when `a`
    /// is the identity). This is one step of a round program
    /// (`program::Step`: active nodes compute, then `Step::mixing_matrix`).
    ///
    /// All silos active: the same arithmetic as [`Self::train_round`].
    /// Otherwise, batched mode: the active silos' parameters and optimiser
    /// state are gathered into a model of those silos only
    /// ([`BatchedModel::subset`]), stepped by the same code path (fused
    /// dense SGD, hand-written dense gradients, or autograd), and scattered
    /// back; they see the same mini-batches as in an all-active round.
    /// Adam then keeps a step count per silo for its bias correction.
    /// Per-silo mode: the loop skips the inactive silos (the reference).
    /// Clique Averaging mixes every silo's gradient, so it refuses masks
    /// with inactive silos.
    pub fn train_round_masked(
        &mut self,
        a: &ConsensusMatrix,
        active: &[bool],
    ) -> Result<(), TrainError> {
        self.check_matrix(a)?;
        if active.len() != self.n {
            return Err(TrainError::Config(format!(
                "active mask for {} silos, data has {}",
                active.len(),
                self.n
            )));
        }
        let k = self.round;
        let lr = self.cfg.lr_schedule.at(self.cfg.lr, k);
        if active.iter().all(|&x| x) {
            self.local_steps_all(k, lr);
        } else {
            let silos: Vec<usize> = (0..self.n).filter(|&i| active[i]).collect();
            self.local_steps_subset(k, lr, &silos)?;
        }
        if !a.is_identity() {
            self.average(a);
        }
        self.round += 1;
        Ok(())
    }

    fn check_matrix(&self, a: &ConsensusMatrix) -> Result<(), TrainError> {
        if a.n() != self.n {
            return Err(TrainError::Config(format!(
                "consensus matrix for {} silos, data has {}",
                a.n(),
                self.n
            )));
        }
        Ok(())
    }

    /// Mini-batch `(x [N, B, d], y [N, B])` of round `k`, step `h`, for every silo.
    fn batch(&self, k: u64, h: u32) -> (Tensor, Tensor) {
        let (n, b) = (self.n as i64, self.cfg.batch_size as i64);
        let d = self.train_x.size()[1];
        let idx = Tensor::from_slice(&self.batch_indices(k, h));
        (
            self.train_x.index_select(0, &idx).reshape([n, b, d]),
            self.train_y.index_select(0, &idx).reshape([n, b]),
        )
    }

    /// The `s` local steps of round `k` on every silo.
    fn local_steps_all(&mut self, k: u64, lr: f64) {
        let n = self.n as i64;
        for h in 0..self.cfg.local_steps {
            let (x, y) = self.batch(k, h);
            if self.parts.len() == 1 {
                let p = &mut self.parts[0];
                if let Some(g) = &self.grad_mix {
                    // Clique Averaging: gradients mixed inside cliques
                    // before the step (autograd path).
                    let (loss, _) = BatchedModel::loss_and_correct(&p.model.forward(&x), &y);
                    loss.sum(Kind::Float).backward();
                    tch::no_grad(|| {
                        for q in p.model.parameters() {
                            let mut grad = q.grad();
                            let mixed = g.mm(&grad.reshape([n, -1])).reshape(grad.size());
                            grad.copy_(&mixed);
                        }
                    });
                    p.opt.step(&mut p.model.parameters_mut(), lr);
                } else {
                    batched_step(&mut p.model, &mut p.opt, self.cfg.optimizer, &x, &y, lr);
                }
            } else {
                for (i, p) in self.parts.iter_mut().enumerate() {
                    per_silo_step(p, &x, &y, i, lr);
                }
            }
        }
    }

    /// The `s` local steps of round `k` on `silos` only (sorted, distinct,
    /// not all): see [`Self::train_round_masked`].
    fn local_steps_subset(&mut self, k: u64, lr: f64, silos: &[usize]) -> Result<(), TrainError> {
        if silos.is_empty() {
            return Ok(());
        }
        if self.grad_mix.is_some() {
            return Err(TrainError::Config(
                "clique averaging mixes every silo's gradient; it needs every silo active".into(),
            ));
        }
        if self.parts.len() != 1 {
            for h in 0..self.cfg.local_steps {
                let (x, y) = self.batch(k, h);
                for &i in silos {
                    per_silo_step(&mut self.parts[i], &x, &y, i, lr);
                }
            }
            return Ok(());
        }
        let sel = Tensor::from_slice(&silos.iter().map(|&i| i as i64).collect::<Vec<_>>());
        let mut model = self.parts[0].model.subset(&sel);
        let mut opt = self.parts[0].opt.subset(&sel, silos);
        for h in 0..self.cfg.local_steps {
            let (x, y) = self.batch(k, h);
            let (x, y) = (x.index_select(0, &sel), y.index_select(0, &sel));
            batched_step(&mut model, &mut opt, self.cfg.optimizer, &x, &y, lr);
        }
        let p = &mut self.parts[0];
        p.model.assign_subset(&sel, &model);
        p.opt.assign_subset(&sel, silos, &opt);
        Ok(())
    }

    /// Averaging step `theta_i <- sum_j A_ij theta_j`.
    ///
    /// Batched: one product per stacked parameter tensor `[N, P]`. Dense
    /// `A` (some row with more than `N / 4` non-zeros): `A [N, P]` as one
    /// matrix product. Sparse `A` (ring, MATCHA matchings, identity): the
    /// `K` largest-row neighbourhoods are gathered with one `index_select`
    /// into `[N, K, P]` and weighted with one `bmm` by `[N, 1, K]`
    /// (zero-padded), `O(N K P)` instead of `O(N^2 P)`.
    ///
    /// Per-silo loop: what `N` separate models do. Every silo first sends a
    /// copy of its parameters; then every silo `i` rebuilds each parameter
    /// tensor as `sum_j A_ij theta_j`, adding its received neighbours one by
    /// one (`addcmul_`, skipping zero weights).
    fn average(&mut self, a: &ConsensusMatrix) {
        let n = self.n;
        let w = a.as_slice();
        tch::no_grad(|| {
            if self.parts.len() == 1 {
                let rows: Vec<Vec<(usize, f64)>> = (0..n)
                    .map(|i| {
                        (0..n)
                            .filter(|&j| w[i * n + j] != 0.0)
                            .map(|j| (j, w[i * n + j]))
                            .collect()
                    })
                    .collect();
                let k = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
                let params = self.parts[0].model.parameters_mut();
                if 4 * k <= n {
                    let mut idx = Vec::with_capacity(n * k);
                    let mut wt = Vec::with_capacity(n * k);
                    for (i, r) in rows.iter().enumerate() {
                        for c in 0..k {
                            let (j, v) = r.get(c).copied().unwrap_or((i, 0.0));
                            idx.push(j as i64);
                            wt.push(v as f32);
                        }
                    }
                    let idx = Tensor::from_slice(&idx);
                    let wt = Tensor::from_slice(&wt).reshape([n as i64, 1, k as i64]);
                    for p in params {
                        let g = p
                            .reshape([n as i64, -1])
                            .index_select(0, &idx)
                            .reshape([n as i64, k as i64, -1]);
                        let mixed = wt.bmm(&g).reshape(p.size());
                        p.copy_(&mixed);
                    }
                } else {
                    let at = Tensor::from_slice(w)
                        .reshape([n as i64, n as i64])
                        .to_kind(Kind::Float);
                    if self.mix.len() != params.len() {
                        self.mix = params
                            .iter()
                            .map(|p| p.reshape([n as i64, -1]).detach().empty_like())
                            .collect();
                    }
                    for (p, buf) in params.into_iter().zip(&self.mix) {
                        let _ = at.mm_out(buf, &p.reshape([n as i64, -1]));
                        p.copy_(&buf.reshape(p.size()));
                    }
                }
            } else {
                let sent: Vec<Vec<Tensor>> = self
                    .parts
                    .iter()
                    .map(|s| {
                        s.model
                            .parameters()
                            .iter()
                            .map(|p| p.detach().copy())
                            .collect()
                    })
                    .collect();
                for (i, s) in self.parts.iter_mut().enumerate() {
                    for (t, p) in s.model.parameters_mut().into_iter().enumerate() {
                        let _ = p.zero_();
                        for (j, msg) in sent.iter().enumerate() {
                            let v = w[i * n + j];
                            if v != 0.0 {
                                let _ = p.addcmul_(&msg[t], &Tensor::from(v as f32));
                            }
                        }
                    }
                }
            }
        });
    }

    /// Stacked parameters `[N, ...]` (copies), in model order.
    pub fn stacked_parameters(&self) -> Vec<Tensor> {
        if self.parts.len() == 1 {
            self.parts[0]
                .model
                .parameters()
                .iter()
                .map(|p| p.detach().copy())
                .collect()
        } else {
            let count = self.parts[0].model.parameters().len();
            (0..count)
                .map(|t| {
                    Tensor::cat(
                        &self
                            .parts
                            .iter()
                            .map(|s| s.model.parameters()[t].detach())
                            .collect::<Vec<_>>(),
                        0,
                    )
                })
                .collect()
        }
    }

    fn eval_set(&self, set: &(Tensor, Tensor)) -> (Vec<f64>, Vec<f64>) {
        let (x, y) = set;
        let e = y.size()[0];
        let n = self.n as i64;
        let mut loss = vec![0.0; self.n];
        let mut correct = vec![0.0; self.n];
        let chunk = 1000;
        tch::no_grad(|| {
            let mut start = 0;
            while start < e {
                let len = chunk.min(e - start);
                let xc = x.narrow(0, start, len);
                let yc = y.narrow(0, start, len);
                let (l, c) = if self.parts.len() == 1 {
                    let xs = xc.unsqueeze(0).expand([n, len, -1], false);
                    let ys = yc.unsqueeze(0).expand([n, len], false);
                    BatchedModel::loss_and_correct(&self.parts[0].model.forward(&xs), &ys)
                } else {
                    let (mut ls, mut cs) = (Vec::new(), Vec::new());
                    for p in &self.parts {
                        let (l, c) = BatchedModel::loss_and_correct(
                            &p.model.forward(&xc.unsqueeze(0)),
                            &yc.unsqueeze(0),
                        );
                        ls.push(l);
                        cs.push(c);
                    }
                    (Tensor::cat(&ls, 0), Tensor::cat(&cs, 0))
                };
                let l: Vec<f64> = Vec::<f64>::try_from(l.to_kind(Kind::Double)).unwrap_or_default();
                let c: Vec<f64> = Vec::<f64>::try_from(c.to_kind(Kind::Double)).unwrap_or_default();
                for i in 0..self.n {
                    loss[i] += l[i] * len as f64;
                    correct[i] += c[i];
                }
                start += len;
            }
        });
        let e = e.max(1) as f64;
        (
            loss.iter().map(|l| l / e).collect(),
            correct.iter().map(|c| c / e).collect(),
        )
    }

    /// Mean over silos of `||theta_i - mean_j theta_j||_2`.
    pub fn consensus_distance(&self) -> f64 {
        let n = self.n as i64;
        let mut sq = Tensor::zeros([n], (Kind::Double, tch::Device::Cpu));
        for p in self.stacked_parameters() {
            let flat = p.reshape([n, -1]).to_kind(Kind::Double);
            let dev = &flat - flat.mean_dim(0, true, Kind::Double);
            sq += dev.square().sum_dim_intlist(1, false, Kind::Double);
        }
        sq.sqrt().mean(Kind::Double).double_value(&[])
    }

    /// Metrics of the current models at wall-clock `wall_clock_ms`.
    pub fn evaluate(&self, wall_clock_ms: f64) -> RoundRecord {
        let (trl, tra) = self.eval_set(&self.eval_train);
        let (tel, tea) = self.eval_set(&self.eval_test);
        RoundRecord {
            round: self.round,
            wall_clock_ms,
            train_loss: Stat::of(&trl),
            train_acc: Stat::of(&tra),
            test_loss: Stat::of(&tel),
            test_acc: Stat::of(&tea),
            consensus_distance: self.consensus_distance(),
        }
    }

    /// Per-class accuracy and mean loss of the models of `silos` on the
    /// evaluation sample `set` (the same samples [`Self::evaluate`] uses),
    /// one entry per silo of `silos`, in that order.
    pub fn class_metrics(
        &self,
        silos: &[usize],
        set: EvalSet,
    ) -> Result<Vec<ClassMetrics>, TrainError> {
        if let Some(&bad) = silos.iter().find(|&&i| i >= self.n) {
            return Err(TrainError::Config(format!(
                "silo {bad} out of range ({} silos)",
                self.n
            )));
        }
        let (x, y) = match set {
            EvalSet::Train => &self.eval_train,
            EvalSet::Test => &self.eval_test,
        };
        let k = silos.len();
        let classes = self.classes;
        let mut out: Vec<ClassMetrics> = (0..k)
            .map(|_| ClassMetrics {
                accuracy: vec![0.0; classes],
                loss: vec![0.0; classes],
                count: vec![0; classes],
            })
            .collect();
        if k == 0 {
            return Ok(out);
        }
        let labels: Vec<i64> = Vec::<i64>::try_from(y)?;
        let e = labels.len() as i64;
        let sel = Tensor::from_slice(&silos.iter().map(|&i| i as i64).collect::<Vec<_>>());
        let sub = (self.parts.len() == 1).then(|| self.parts[0].model.subset(&sel));
        let chunk = 1000;
        tch::no_grad(|| -> Result<(), TrainError> {
            let mut start = 0;
            while start < e {
                let len = chunk.min(e - start);
                let xc = x.narrow(0, start, len);
                let logits = match &sub {
                    Some(m) => m.forward(&xc.unsqueeze(0).expand([k as i64, len, -1], false)),
                    None => Tensor::cat(
                        &silos
                            .iter()
                            .map(|&i| self.parts[i].model.forward(&xc.unsqueeze(0)))
                            .collect::<Vec<_>>(),
                        0,
                    ),
                };
                let yc = y
                    .narrow(0, start, len)
                    .unsqueeze(0)
                    .expand([k as i64, len], false);
                let nll = -logits
                    .log_softmax(-1, Kind::Float)
                    .gather(2, &yc.unsqueeze(-1), false)
                    .squeeze_dim(-1);
                let nll: Vec<f64> = Vec::<f64>::try_from(nll.to_kind(Kind::Double).reshape([-1]))?;
                let hit: Vec<i64> = Vec::<i64>::try_from(
                    logits
                        .argmax(-1, false)
                        .eq_tensor(&yc)
                        .to_kind(Kind::Int64)
                        .reshape([-1]),
                )?;
                let l = len as usize;
                for (j, m) in out.iter_mut().enumerate() {
                    for (q, &c) in labels[start as usize..start as usize + l]
                        .iter()
                        .enumerate()
                    {
                        let c = c as usize;
                        m.count[c] += 1;
                        m.loss[c] += nll[j * l + q];
                        m.accuracy[c] += hit[j * l + q] as f64;
                    }
                }
                start += len;
            }
            Ok(())
        })?;
        for m in &mut out {
            for c in 0..classes {
                let cnt = m.count[c].max(1) as f64;
                m.accuracy[c] /= cnt;
                m.loss[c] /= cnt;
            }
        }
        Ok(out)
    }

    /// Named tensors of the state (parameters and optimiser state), batched mode.
    pub fn state_tensors(&self) -> Vec<(String, Tensor)> {
        let mut v = Vec::new();
        for (k, p) in self.stacked_parameters().into_iter().enumerate() {
            v.push((format!("p{k}"), p));
        }
        if self.parts.len() == 1 {
            let o = &self.parts[0].opt;
            for (k, t) in o.m.iter().enumerate() {
                v.push((format!("m{k}"), t.copy()));
            }
            for (k, t) in o.v.iter().enumerate() {
                v.push((format!("v{k}"), t.copy()));
            }
        }
        v
    }

    /// Optimiser step count.
    pub fn optimizer_steps(&self) -> u64 {
        self.parts[0].opt.t
    }

    /// Restores a state saved by [`Self::state_tensors`] after `round` rounds.
    pub fn restore(
        &mut self,
        named: &[(String, Tensor)],
        round: u64,
        steps: u64,
    ) -> Result<(), TrainError> {
        if self.parts.len() != 1 {
            return Err(TrainError::Config(
                "checkpoints need the batched mode".into(),
            ));
        }
        let get = |name: String| -> Result<&Tensor, TrainError> {
            named
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, t)| t)
                .ok_or_else(|| TrainError::Checkpoint {
                    path: name.clone(),
                    message: "tensor missing".into(),
                })
        };
        let p = &mut self.parts[0];
        tch::no_grad(|| -> Result<(), TrainError> {
            for (k, t) in p.model.parameters_mut().into_iter().enumerate() {
                let src = get(format!("p{k}"))?;
                if src.size() != t.size() {
                    return Err(TrainError::Checkpoint {
                        path: format!("p{k}"),
                        message: "shape mismatch".into(),
                    });
                }
                t.copy_(src);
            }
            for (k, t) in p.opt.m.iter_mut().enumerate() {
                t.copy_(get(format!("m{k}"))?);
            }
            for (k, t) in p.opt.v.iter_mut().enumerate() {
                t.copy_(get(format!("v{k}"))?);
            }
            Ok(())
        })?;
        p.opt.t = steps;
        // Per-silo counts (masked rounds) are not part of a checkpoint.
        p.opt.silo_t = None;
        self.round = round;
        Ok(())
    }

    fn check_silo(&self, i: usize) -> Result<(), TrainError> {
        if i >= self.n {
            return Err(TrainError::Config(format!(
                "silo {i} out of range (0..{})",
                self.n
            )));
        }
        Ok(())
    }

    /// Silo `i`'s parameters (copies, each with a leading dimension of 1),
    /// in model order.
    ///
    /// # Errors
    /// `i` out of range.
    pub fn silo_parameters(&self, i: usize) -> Result<Vec<Tensor>, TrainError> {
        self.check_silo(i)?;
        Ok(if self.parts.len() == 1 {
            self.parts[0]
                .model
                .parameters()
                .iter()
                .map(|p| p.detach().narrow(0, i as i64, 1).copy())
                .collect()
        } else {
            self.parts[i]
                .model
                .parameters()
                .iter()
                .map(|p| p.detach().copy())
                .collect()
        })
    }

    /// Replaces silo `i`'s parameters by `params` (as
    /// [`Self::silo_parameters`] gives them); its optimiser state stays.
    ///
    /// # Errors
    /// `i` out of range, or `params` of other shapes.
    pub fn set_silo_parameters(&mut self, i: usize, params: &[Tensor]) -> Result<(), TrainError> {
        self.check_silo(i)?;
        let batched = self.parts.len() == 1;
        let part = if batched { 0 } else { i };
        let mut targets = self.parts[part].model.parameters_mut();
        if targets.len() != params.len() {
            return Err(TrainError::Config(format!(
                "{} parameter tensors for a model of {}",
                params.len(),
                targets.len()
            )));
        }
        tch::no_grad(|| {
            for (t, src) in targets.iter_mut().zip(params) {
                let mut row = if batched {
                    t.narrow(0, i as i64, 1)
                } else {
                    t.shallow_clone()
                };
                if row.size() != src.size() {
                    return Err(TrainError::Config(format!(
                        "parameter of shape {:?} for a slot of {:?}",
                        src.size(),
                        row.size()
                    )));
                }
                row.copy_(src);
            }
            Ok(())
        })
    }

    /// Silo `i`'s local steps as its `count`-th computation (from 0): the
    /// mini-batches and learning rate of round `count` for silo `i`, every
    /// other silo untouched (models and optimiser state), as in
    /// [`Self::train_round_masked`]. The asynchronous protocols' update
    /// (`super::asynchronous`); the round counter does not move.
    ///
    /// # Errors
    /// `i` out of range, or Clique Averaging enabled.
    pub fn local_steps_of(&mut self, i: usize, count: u64) -> Result<(), TrainError> {
        self.check_silo(i)?;
        let lr = self.cfg.lr_schedule.at(self.cfg.lr, count);
        self.local_steps_subset(count, lr, &[i])
    }

    /// Silos `a` and `b` both take the average of their two models
    /// (asynchronous gossip's exchange); the others are untouched.
    ///
    /// # Errors
    /// `a` or `b` out of range, or equal.
    pub fn average_pair(&mut self, a: usize, b: usize) -> Result<(), TrainError> {
        self.check_silo(a)?;
        self.check_silo(b)?;
        if a == b {
            return Err(TrainError::Config(format!("silo {a} averaged with itself")));
        }
        let pa = self.silo_parameters(a)?;
        let pb = self.silo_parameters(b)?;
        let mean: Vec<Tensor> = pa.iter().zip(&pb).map(|(x, y)| (x + y) * 0.5).collect();
        self.set_silo_parameters(a, &mean)?;
        self.set_silo_parameters(b, &mean)
    }

    /// Metrics of one model `params` (as [`Self::silo_parameters`] gives
    /// them) at wall-clock `wall_clock_ms`: every silo's model is set to it
    /// for the evaluation and put back afterwards (a server's model).
    ///
    /// # Errors
    /// `params` of other shapes.
    pub fn evaluate_model(
        &mut self,
        params: &[Tensor],
        wall_clock_ms: f64,
    ) -> Result<RoundRecord, TrainError> {
        let saved: Vec<Vec<Tensor>> = (0..self.n)
            .map(|i| self.silo_parameters(i))
            .collect::<Result<_, _>>()?;
        for i in 0..self.n {
            self.set_silo_parameters(i, params)?;
        }
        let record = self.evaluate(wall_clock_ms);
        for (i, p) in saved.iter().enumerate() {
            self.set_silo_parameters(i, p)?;
        }
        Ok(record)
    }

    /// Sets the round counter (the rounds an asynchronous run's records
    /// report: its computations over `N`).
    pub fn set_round(&mut self, round: u64) {
        self.round = round;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::data::synthetic::{generate, SyntheticSpec};

    fn data(n: usize) -> FederatedData {
        let spec = SyntheticSpec {
            dim: 12,
            median_per_silo: 40,
            test_per_silo: 10,
            ..SyntheticSpec::default()
        };
        generate(&spec, n, 5).unwrap()
    }

    fn config(model: ModelKind, optimizer: OptimizerKind, mode: ExecMode) -> TrainConfig {
        TrainConfig {
            model,
            optimizer,
            lr: 0.1,
            local_steps: 2,
            batch_size: 6,
            eval_samples: 200,
            seed: 9,
            mode,
            ..TrainConfig::default()
        }
    }

    /// Model x optimiser pairs covering the three batched code paths:
    /// fused dense SGD, hand-written dense gradients + optimiser, autograd.
    fn cases() -> Vec<(ModelKind, OptimizerKind)> {
        let adam = OptimizerKind::Adam {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        };
        vec![
            (ModelKind::LogReg, OptimizerKind::Sgd { momentum: 0.0 }),
            (
                ModelKind::Mlp { hidden: 8 },
                OptimizerKind::Sgd { momentum: 0.9 },
            ),
            (ModelKind::Mlp { hidden: 8 }, adam),
            (ModelKind::DeepMlp { hidden: [8, 6, 5] }, adam),
            (
                ModelKind::DeepMlp { hidden: [8, 6, 5] },
                OptimizerKind::Sgd { momentum: 0.5 },
            ),
        ]
    }

    /// Every parameter and optimiser tensor of silo `i`, flattened.
    fn silo_state(t: &Trainer, i: usize) -> Vec<f32> {
        let mut v = Vec::new();
        for (_, x) in t.state_tensors() {
            let row = x.get(i as i64).reshape([-1]);
            v.extend(Vec::<f32>::try_from(&row).unwrap());
        }
        v
    }

    fn flat(t: &Trainer) -> Vec<Vec<f64>> {
        let n = t.silo_count();
        let mut out = vec![Vec::new(); n];
        for p in t.stacked_parameters() {
            let p = p.reshape([n as i64, -1]).to_kind(Kind::Double);
            for (i, row) in out.iter_mut().enumerate() {
                row.extend(Vec::<f64>::try_from(p.get(i as i64)).unwrap());
            }
        }
        out
    }

    fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x - y).abs() <= tol * (1.0 + x.abs()))
    }

    fn close32(a: &[f32], b: &[f32], tol: f32) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, y)| (x - y).abs() <= tol * (1.0 + x.abs()))
    }

    /// Inactive silos keep parameters and optimiser state bit for bit;
    /// active silos get what an all-active round gives them.
    #[test]
    fn masked_round_leaves_inactive_silos_untouched() {
        let d = data(6);
        let id = ConsensusMatrix::identity(6);
        let mask = [true, false, true, false, false, true];
        for (model, opt) in cases() {
            let mut a = Trainer::new(config(model, opt, ExecMode::Batched), &d).unwrap();
            let mut b = Trainer::new(config(model, opt, ExecMode::Batched), &d).unwrap();
            // A warm-up round so that momentum / Adam state is non-zero.
            a.train_round(&id).unwrap();
            b.train_round(&id).unwrap();
            let before: Vec<Vec<f32>> = (0..6).map(|i| silo_state(&a, i)).collect();
            a.train_round_masked(&id, &mask).unwrap();
            b.train_round(&id).unwrap();
            for (i, &on) in mask.iter().enumerate() {
                let now = silo_state(&a, i);
                if on {
                    assert_ne!(
                        now, before[i],
                        "{model:?} {opt:?}: active silo {i} did not move"
                    );
                    assert!(
                        close32(&now, &silo_state(&b, i), 1e-5),
                        "{model:?} {opt:?}: active silo {i} differs from the all-active round"
                    );
                } else {
                    assert_eq!(
                        now, before[i],
                        "{model:?} {opt:?}: inactive silo {i} changed"
                    );
                }
            }
            assert_eq!(a.round(), 2);
        }
    }

    /// Several masked rounds with mixing: the batched trainer equals the
    /// per-silo reference loop (which simply skips inactive silos; its
    /// optimisers count their own steps, so Adam's per-silo bias correction
    /// is checked too).
    #[test]
    fn masked_rounds_batched_equal_per_silo_reference() {
        let d = data(5);
        let masks = [
            [true, false, false, true, false],
            [false, true, true, true, false],
            [true, true, true, true, true],
            [false, false, false, false, true],
            [false, false, false, false, false],
        ];
        let ring =
            ConsensusMatrix::from_fn(5, |i, j| if i == j || j == (i + 1) % 5 { 0.5 } else { 0.0 });
        for (model, opt) in cases() {
            let mut a = Trainer::new(config(model, opt, ExecMode::Batched), &d).unwrap();
            let mut b = Trainer::new(config(model, opt, ExecMode::PerSilo), &d).unwrap();
            for (r, m) in masks.iter().enumerate() {
                let mix = if r % 2 == 0 {
                    ConsensusMatrix::identity(5)
                } else {
                    ring.clone()
                };
                a.train_round_masked(&mix, m).unwrap();
                b.train_round_masked(&mix, m).unwrap();
            }
            let (fa, fb) = (flat(&a), flat(&b));
            for i in 0..5 {
                assert!(close(&fa[i], &fb[i], 1e-5), "{model:?} {opt:?}: silo {i}");
            }
        }
    }

    #[test]
    fn masked_round_rejects_bad_input() {
        let d = data(3);
        let mut t = Trainer::new(
            config(
                ModelKind::LogReg,
                OptimizerKind::Sgd { momentum: 0.0 },
                ExecMode::Batched,
            ),
            &d,
        )
        .unwrap();
        let id = ConsensusMatrix::identity(3);
        assert!(t.train_round_masked(&id, &[true, false]).is_err());
        assert!(t
            .train_round_masked(&ConsensusMatrix::identity(4), &[true; 4])
            .is_err());
        t.set_clique_averaging(Some(&ConsensusMatrix::average(3)))
            .unwrap();
        assert!(t.train_round_masked(&id, &[true, false, true]).is_err());
        assert!(t.train_round_masked(&id, &[true; 3]).is_ok());
        assert!(t.class_metrics(&[3], EvalSet::Test).is_err());
    }

    /// Every step of every \[Lee21\] Table 4 method through the trainer equals the
    /// local steps followed by `Step::apply` on the flattened parameters.
    #[test]
    fn program_step_equals_step_apply() {
        use crate::program::grouping::two_class_partition;
        use crate::program::train::apply_step;
        use crate::program::Method;
        let n = 12;
        let d = data(n);
        let labels = two_class_partition(n, 10, 2, 3).unwrap();
        for m in Method::ALL {
            let mut p = m.defaults();
            p.groups = p.groups.min(4);
            p.chains = p.chains.min(2);
            p.tau1 = p.tau1.min(2);
            p.tau2 = p.tau2.min(2);
            let spec = p.build(&labels, 0, 1).unwrap();
            let mut c = config(
                ModelKind::Mlp { hidden: 4 },
                OptimizerKind::Sgd { momentum: 0.9 },
                ExecMode::Batched,
            );
            c.local_steps = 1;
            let mut t = Trainer::new(c.clone(), &d).unwrap();
            let mut local = Trainer::new(c, &d).unwrap();
            let mut mixed_steps = 0;
            for step in spec.program(9).steps {
                // `local`: the same state, local steps only.
                local
                    .restore(&t.state_tensors(), t.round(), t.optimizer_steps())
                    .unwrap();
                let mask: Vec<bool> = (0..n).map(|i| step.active.contains(&i)).collect();
                local
                    .train_round_masked(&ConsensusMatrix::identity(n), &mask)
                    .unwrap();
                let mut want = flat(&local);
                step.apply(&mut want);
                apply_step(&mut t, &step).unwrap();
                let got = flat(&t);
                for i in 0..n {
                    assert!(
                        close(&got[i], &want[i], 1e-5),
                        "{m} step {} silo {i}",
                        step.t
                    );
                }
                mixed_steps += usize::from(!step.ops.is_empty());
            }
            assert!(mixed_steps > 0, "{m}: no step communicated");
        }
    }

    /// Per-class metrics agree with the trainer's own evaluation.
    #[test]
    fn class_metrics_match_evaluate() {
        let d = data(4);
        let mut t = Trainer::new(
            config(
                ModelKind::LogReg,
                OptimizerKind::Sgd { momentum: 0.0 },
                ExecMode::Batched,
            ),
            &d,
        )
        .unwrap();
        t.train_round_masked(&ConsensusMatrix::identity(4), &[true, false, true, true])
            .unwrap();
        let r = t.evaluate(0.0);
        let m = t.class_metrics(&[0, 1, 2, 3], EvalSet::Test).unwrap();
        let acc: Vec<f64> = m
            .iter()
            .map(|x| {
                let total: usize = x.count.iter().sum();
                x.accuracy
                    .iter()
                    .zip(&x.count)
                    .map(|(a, &c)| a * c as f64)
                    .sum::<f64>()
                    / total as f64
            })
            .collect();
        let loss: Vec<f64> = m
            .iter()
            .map(|x| {
                let total: usize = x.count.iter().sum();
                x.loss
                    .iter()
                    .zip(&x.count)
                    .map(|(a, &c)| a * c as f64)
                    .sum::<f64>()
                    / total as f64
            })
            .collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!((mean(&acc) - r.test_acc.mean).abs() < 1e-9);
        assert!((mean(&loss) - r.test_loss.mean).abs() < 1e-5);
        // A subset in another order.
        let s = t.class_metrics(&[3, 1], EvalSet::Test).unwrap();
        assert_eq!(s[0].accuracy, m[3].accuracy);
        assert_eq!(s[1].count, m[1].count);
    }
}
