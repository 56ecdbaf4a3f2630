//! Decentralized periodic averaging SGD (DPASGD, paper eq. 2) on all silos
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

use super::consensus::{ConsensusError, ConsensusMatrix, ConsensusRule};
use super::data::FederatedData;
use super::model::{BatchedModel, InputShape, ModelKind};
use super::optim::{LrSchedule, Optimizer, OptimizerKind};
use super::report::{RoundRecord, Stat};

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
    Clock(#[from] super::clock::ClockError),
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
    /// A string identifying every setting that changes the numbers (used to
    /// refuse resuming a checkpoint made with other settings).
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
    /// Clique Averaging gradient matrix `G` (`[N, N]`, float), if enabled.
    grad_mix: Option<Tensor>,
}

fn tensors(x: &[f32], y: &[i64], dim: usize) -> (Tensor, Tensor) {
    (
        Tensor::from_slice(x).reshape([y.len() as i64, dim as i64]),
        Tensor::from_slice(y),
    )
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
            grad_mix: None,
            cfg,
        })
    }

    /// Replaces every silo's parameters by its own He-uniform draw scaled
    /// by `gain` (uncoordinated initialisation, Badie-Modiri et al.
    /// Algorithm 1; see [`BatchedModel::reinit_he_uniform`]), seeded by the
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

    /// Enables Clique Averaging (D-Cliques, notes Sec. 2) with gradient
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
        if a.n() != self.n {
            return Err(TrainError::Config(format!(
                "consensus matrix for {} silos, data has {}",
                a.n(),
                self.n
            )));
        }
        let k = self.round;
        let lr = self.cfg.lr_schedule.at(self.cfg.lr, k);
        let (n, b) = (self.n as i64, self.cfg.batch_size as i64);
        let d = self.train_x.size()[1];
        for h in 0..self.cfg.local_steps {
            let idx = Tensor::from_slice(&self.batch_indices(k, h));
            let x = self.train_x.index_select(0, &idx).reshape([n, b, d]);
            let y = self.train_y.index_select(0, &idx).reshape([n, b]);
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
                } else if p.model.is_dense()
                    && self.cfg.optimizer == (OptimizerKind::Sgd { momentum: 0.0 })
                {
                    p.opt.t += 1;
                    p.model.dense_sgd_step(&x, &y, lr);
                } else if p.model.is_dense() {
                    let grads = p.model.dense_grads(&x, &y);
                    p.opt.step_with(&mut p.model.parameters_mut(), &grads, lr);
                } else {
                    let (loss, _) = BatchedModel::loss_and_correct(&p.model.forward(&x), &y);
                    loss.sum(Kind::Float).backward();
                    p.opt.step(&mut p.model.parameters_mut(), lr);
                }
            } else {
                for (i, p) in self.parts.iter_mut().enumerate() {
                    let xi = x.narrow(0, i as i64, 1);
                    let yi = y.narrow(0, i as i64, 1);
                    let (loss, _) = BatchedModel::loss_and_correct(&p.model.forward(&xi), &yi);
                    loss.sum(Kind::Float).backward();
                    p.opt.step(&mut p.model.parameters_mut(), lr);
                }
            }
        }
        self.average(a);
        self.round += 1;
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
        self.round = round;
        Ok(())
    }
}
