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
    /// Steps taken.
    pub t: u64,
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
        }
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
        self.t += 1;
        let t = self.t as i32;
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
                        let mhat = &self.m[k] / (1.0 - beta1.powi(t));
                        let vhat = &self.v[k] / (1.0 - beta2.powi(t));
                        let _ = p.g_sub_(&(mhat / (vhat.sqrt() + eps) * lr));
                    }
                }
            }
        });
    }
}
