//! Optimisers on stacked parameters: SGD with momentum and Adam, applied
//! element-wise, so one update of the stacked tensors equals independent
//! updates of every silo. Optimiser state stays local (never averaged).

use tch::Tensor;

/// Optimiser choice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptimizerKind {
    /// `v = mu v + g; theta -= lr v` (no dampening, no Nesterov; mu = 0 is plain SGD).
    Sgd {
        /// Momentum `mu`.
        momentum: f64,
    },
    /// Adam (Kingma & Ba 2015) with bias correction.
    Adam {
        /// `beta1`.
        beta1: f64,
        /// `beta2`.
        beta2: f64,
        /// `epsilon`.
        eps: f64,
    },
}

/// Learning-rate schedule over rounds `k = 0, 1, ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LrSchedule {
    /// `lr`.
    Constant,
    /// `lr / sqrt(k + 1)`.
    InvSqrt,
}

impl LrSchedule {
    /// Learning rate of round `k`.
    pub fn at(self, lr: f64, k: u64) -> f64 {
        match self {
            LrSchedule::Constant => lr,
            LrSchedule::InvSqrt => lr / ((k + 1) as f64).sqrt(),
        }
    }
}

/// Optimiser state for a list of stacked parameters.
#[derive(Debug)]
pub struct Optimizer {
    kind: OptimizerKind,
    /// Momentum buffers (SGD) or first moments (Adam).
    pub m: Vec<Tensor>,
    /// Second moments (Adam).
    pub v: Vec<Tensor>,
    /// Steps taken (by any silo).
    pub t: u64,
    /// Per-silo step counts once some steps ran on a subset of the silos
    /// ([`Self::subset`] / [`Self::assign_subset`]); Adam's bias correction
    /// then uses each silo's own count. `None`: every silo took `t` steps.
    pub silo_t: Option<Vec<u64>>,
}

impl Optimizer {
    /// Zero state for `params`.
    pub fn new(kind: OptimizerKind, params: &[&Tensor]) -> Self {
        let z = |p: &&Tensor| p.zeros_like();
        Optimizer {
            kind,
            m: params.iter().map(z).collect(),
            v: match kind {
                OptimizerKind::Adam { .. } => params.iter().map(z).collect(),
                OptimizerKind::Sgd { .. } => Vec::new(),
            },
            t: 0,
            silo_t: None,
        }
    }

    /// Counts one step of every silo (also for updates done outside
    /// [`Self::step_with`], such as the fused dense SGD step).
    pub fn count_step(&mut self) {
        self.t += 1;
        if let Some(ts) = &mut self.silo_t {
            for t in ts {
                *t += 1;
            }
        }
    }

    /// Steps taken by silo `s`.
    pub fn silo_steps(&self, s: usize) -> u64 {
        self.silo_t.as_ref().map_or(self.t, |ts| ts[s])
    }

    /// The state of silos `silos` (`idx`: the same indices as an int64
    /// tensor) as an optimiser of a model of those silos only (copies, with
    /// the silos' own step counts). Write it back with [`Self::assign_subset`].
    pub fn subset(&self, idx: &Tensor, silos: &[usize]) -> Optimizer {
        let pick = |ts: &[Tensor]| ts.iter().map(|t| t.index_select(0, idx)).collect();
        Optimizer {
            kind: self.kind,
            m: pick(&self.m),
            v: pick(&self.v),
            t: self.t,
            silo_t: Some(silos.iter().map(|&s| self.silo_steps(s)).collect()),
        }
    }

    /// Writes the state of `sub` (made by [`Self::subset`] with the same
    /// `idx` and `silos`, then stepped) back; other silos are untouched.
    /// `t` becomes `sub.t` (steps taken by any silo).
    pub fn assign_subset(&mut self, idx: &Tensor, silos: &[usize], sub: &Optimizer) {
        tch::no_grad(|| {
            for (t, s) in self.m.iter_mut().zip(&sub.m) {
                let _ = t.index_copy_(0, idx, s);
            }
            for (t, s) in self.v.iter_mut().zip(&sub.v) {
                let _ = t.index_copy_(0, idx, s);
            }
        });
        let n = self.m.first().map_or(0, |t| t.size()[0] as usize);
        let t0 = self.t;
        let ts = self.silo_t.get_or_insert_with(|| vec![t0; n]);
        for (j, &s) in silos.iter().enumerate() {
            ts[s] = sub.silo_steps(j);
        }
        self.t = sub.t;
    }

    /// One step with learning rate `lr` on the autograd gradients
    /// (`p.grad()`), then zeroes them.
    pub fn step(&mut self, params: &mut [&mut Tensor], lr: f64) {
        let grads: Vec<Tensor> = params.iter().map(|p| p.grad()).collect();
        self.step_with(params, &grads, lr);
        tch::no_grad(|| {
            for p in params.iter_mut() {
                p.zero_grad();
            }
        });
    }

    /// One step with learning rate `lr` on the given gradients (one per
    /// parameter, same shapes). Plain SGD scales `grads` in place (they are
    /// consumed) so the update allocates nothing.
    pub fn step_with(&mut self, params: &mut [&mut Tensor], grads: &[Tensor], lr: f64) {
        self.count_step();
        let t = self.t as i32;
        // Per-silo bias corrections `[N, 1, ...]` when the silos' counts differ.
        let corrections = |beta: f64, dims: usize| -> Option<Tensor> {
            self.silo_t.as_ref().map(|ts| {
                let c: Vec<f32> = ts
                    .iter()
                    .map(|&t| (1.0 - beta.powi(t as i32)) as f32)
                    .collect();
                let mut shape = vec![ts.len() as i64];
                shape.resize(dims, 1);
                Tensor::from_slice(&c).reshape(shape.as_slice())
            })
        };
        tch::no_grad(|| {
            for (k, (p, g)) in params.iter_mut().zip(grads).enumerate() {
                match self.kind {
                    OptimizerKind::Sgd { momentum } => {
                        if momentum > 0.0 {
                            let _ = self.m[k].g_mul_scalar_(momentum).g_add_(g);
                            let _ = p.g_sub_(&(&self.m[k] * lr));
                        } else {
                            let mut g = g.shallow_clone();
                            let _ = p.g_sub_(&g.g_mul_scalar_(lr));
                        }
                    }
                    OptimizerKind::Adam { beta1, beta2, eps } => {
                        let _ = self.m[k].g_mul_scalar_(beta1).g_add_(&(g * (1.0 - beta1)));
                        let _ = self.v[k]
                            .g_mul_scalar_(beta2)
                            .g_add_(&(g.square() * (1.0 - beta2)));
                        let (mhat, vhat) =
                            match (corrections(beta1, p.dim()), corrections(beta2, p.dim())) {
                                (Some(c1), Some(c2)) => (&self.m[k] / c1, &self.v[k] / c2),
                                _ => (
                                    &self.m[k] / (1.0 - beta1.powi(t)),
                                    &self.v[k] / (1.0 - beta2.powi(t)),
                                ),
                            };
                        let _ = p.g_sub_(&(mhat / (vhat.sqrt() + eps) * lr));
                    }
                }
            }
        });
    }
}
