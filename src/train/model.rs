//! Batched models: the parameters of all `N` silos live in one tensor per
//! layer with a leading silo dimension, and one forward/backward pass trains
//! every silo at once (`bmm` for dense layers, grouped convolution with
//! `groups = N` for convolutions, group norm with `2N` groups). A silo's
//! slice of every tensor is exactly the model it would train alone, so a
//! batched model with `N` silos and `N` models with one silo compute the
//! same numbers (tested).
//!
//! Shapes: input `[N, B, dim]`, logits `[N, B, classes]`.

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tch::{Kind, Tensor};

/// The model families.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// Multinomial logistic regression, `dim -> classes`.
    LogReg,
    /// One hidden ReLU layer, `dim -> hidden -> classes`.
    Mlp {
        /// Hidden units.
        hidden: usize,
    },
    /// Three hidden ReLU layers, `dim -> h0 -> h1 -> h2 -> classes` (the
    /// MLP of \[BadieModiri24\] is `mlp:512-256-128` on MNIST).
    DeepMlp {
        /// Hidden units of the three layers.
        hidden: [usize; 3],
    },
    /// LeNet-5 style CNN for images: conv5x5(6, pad 2) relu pool2,
    /// conv5x5(16) relu pool2, fc 120, fc 84, fc classes.
    LeNet,
    /// GN-LeNet (D-Cliques, Hsieh et al. 2020): three conv5x5 pad 2
    /// (32, 32, 64 channels) with GroupNorm(2, C) and max-pool(3, 2), then
    /// one linear layer (85,354 parameters on 32x32x3 images).
    GnLeNet,
}

impl ModelKind {
    /// Parses `logreg`, `mlp[:HIDDEN]`, `mlp:H0-H1-H2`, `lenet`, `gn-lenet`.
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim().to_ascii_lowercase();
        Some(match t.as_str() {
            "logreg" | "logistic" => ModelKind::LogReg,
            "mlp" => ModelKind::Mlp { hidden: 200 },
            "lenet" | "cnn" => ModelKind::LeNet,
            "gn-lenet" | "gnlenet" => ModelKind::GnLeNet,
            s => {
                let h = s.strip_prefix("mlp:")?;
                if h.contains('-') {
                    let v: Vec<usize> = h
                        .split('-')
                        .map(|x| x.trim().parse().ok().filter(|&u: &usize| u > 0))
                        .collect::<Option<_>>()?;
                    ModelKind::DeepMlp {
                        hidden: v.try_into().ok()?,
                    }
                } else {
                    ModelKind::Mlp {
                        hidden: h.parse().ok()?,
                    }
                }
            }
        })
    }

    /// Name for reports.
    pub fn name(&self) -> String {
        match self {
            ModelKind::LogReg => "logreg".into(),
            ModelKind::Mlp { hidden } => format!("mlp:{hidden}"),
            ModelKind::DeepMlp { hidden: [a, b, c] } => format!("mlp:{a}-{b}-{c}"),
            ModelKind::LeNet => "lenet".into(),
            ModelKind::GnLeNet => "gn-lenet".into(),
        }
    }
}

/// Input description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputShape {
    /// Features per example.
    pub dim: usize,
    /// `(channels, height, width)` for images.
    pub image: Option<(usize, usize, usize)>,
    /// Number of classes.
    pub classes: usize,
}

/// One layer's parameters, stacked over silos.
#[derive(Debug)]
enum Layer {
    /// `w [N, in, out]`, `b [N, 1, out]`.
    Dense { w: Tensor, b: Tensor },
    /// `w [N, out, in, k, k]`, `b [N, out]`, padding.
    Conv { w: Tensor, b: Tensor, pad: i64 },
    /// Group norm affine `w, b [N, C]`, 2 groups per silo.
    GroupNorm { w: Tensor, b: Tensor },
}

/// All silos' models of one family, stacked.
#[derive(Debug)]
pub struct BatchedModel {
    kind: ModelKind,
    n: usize,
    input: InputShape,
    layers: Vec<Layer>,
}

fn uniform(rng: &mut ChaCha8Rng, count: usize, bound: f64) -> Vec<f32> {
    (0..count)
        .map(|_| rng.gen_range(-bound..bound) as f32)
        .collect()
}

/// `n` copies of `values` with the per-silo `shape`, as a leaf tensor with gradients.
fn stacked(values: &[f32], n: usize, shape: &[i64]) -> Tensor {
    let one = Tensor::from_slice(values).reshape(shape).unsqueeze(0);
    let mut full = vec![n as i64];
    full.extend_from_slice(shape);
    one.expand(full.as_slice(), true)
        .contiguous()
        .set_requires_grad(true)
}

impl BatchedModel {
    /// A model for `n` silos, every silo starting from the same parameters
    /// drawn from `seed` (PyTorch's default init: uniform in
    /// `+-1/sqrt(fan_in)`; group norm weight 1, bias 0).
    pub fn new(kind: ModelKind, n: usize, input: InputShape, seed: u64) -> Result<Self, String> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6d6f_6465_6c69_6e69);
        let c = input.classes;
        let mut layers = Vec::new();
        let dense = |rng: &mut ChaCha8Rng, i: usize, o: usize| {
            let bound = 1.0 / (i as f64).sqrt();
            Layer::Dense {
                w: stacked(&uniform(rng, i * o, bound), n, &[i as i64, o as i64]),
                b: stacked(&uniform(rng, o, bound), n, &[1, o as i64]),
            }
        };
        let conv = |rng: &mut ChaCha8Rng, i: usize, o: usize, pad: i64| {
            let bound = 1.0 / ((i * 25) as f64).sqrt();
            Layer::Conv {
                w: stacked(
                    &uniform(rng, o * i * 25, bound),
                    n,
                    &[o as i64, i as i64, 5, 5],
                ),
                b: stacked(&uniform(rng, o, bound), n, &[o as i64]),
                pad,
            }
        };
        let gn = |ch: usize| Layer::GroupNorm {
            w: stacked(&vec![1.0; ch], n, &[ch as i64]),
            b: stacked(&vec![0.0; ch], n, &[ch as i64]),
        };
        match kind {
            ModelKind::LogReg => layers.push(dense(&mut rng, input.dim, c)),
            ModelKind::Mlp { hidden } => {
                layers.push(dense(&mut rng, input.dim, hidden));
                layers.push(dense(&mut rng, hidden, c));
            }
            ModelKind::DeepMlp {
                hidden: [h0, h1, h2],
            } => {
                layers.push(dense(&mut rng, input.dim, h0));
                layers.push(dense(&mut rng, h0, h1));
                layers.push(dense(&mut rng, h1, h2));
                layers.push(dense(&mut rng, h2, c));
            }
            ModelKind::LeNet | ModelKind::GnLeNet => {
                let (ch, h, w) = input.image.ok_or_else(|| {
                    format!("{} needs image data (MNIST or CIFAR-10)", kind.name())
                })?;
                if kind == ModelKind::LeNet {
                    // 5x5 pad 2 keeps size, pool halves; 5x5 no pad -4, pool halves.
                    let (h2, w2) = ((h / 2).saturating_sub(4) / 2, (w / 2).saturating_sub(4) / 2);
                    if h2 == 0 || w2 == 0 {
                        return Err(format!("lenet needs images of at least 12x12, got {h}x{w}"));
                    }
                    layers.push(conv(&mut rng, ch, 6, 2));
                    layers.push(conv(&mut rng, 6, 16, 0));
                    layers.push(dense(&mut rng, 16 * h2 * w2, 120));
                    layers.push(dense(&mut rng, 120, 84));
                    layers.push(dense(&mut rng, 84, c));
                } else {
                    let pool = |x: usize| (x.saturating_sub(3)) / 2 + 1;
                    let (h3, w3) = (pool(pool(pool(h))), pool(pool(pool(w))));
                    if h < 15 || w < 15 {
                        return Err(format!(
                            "gn-lenet needs images of at least 15x15, got {h}x{w}"
                        ));
                    }
                    layers.push(conv(&mut rng, ch, 32, 2));
                    layers.push(gn(32));
                    layers.push(conv(&mut rng, 32, 32, 2));
                    layers.push(gn(32));
                    layers.push(conv(&mut rng, 32, 64, 2));
                    layers.push(gn(64));
                    layers.push(dense(&mut rng, 64 * h3 * w3, c));
                }
            }
        }
        Ok(BatchedModel {
            kind,
            n,
            input,
            layers,
        })
    }

    /// Uncoordinated initialisation (\[BadieModiri24\] Algorithm 1):
    /// every silo draws its own weights, He-uniform scaled by `gain`,
    /// `U(-g sqrt(6 / fan_in), +g sqrt(6 / fan_in))`, and biases
    /// `U(-g / sqrt(fan_in), +g / sqrt(fan_in))` (PyTorch's default bias
    /// scaled by the same gain); group-norm affine parameters stay 1 and 0.
    /// Silo `first_silo + s` (`s` the local index) draws from ChaCha8 stream
    /// `first_silo + s` of `seed`, so a batched model and per-silo models get
    /// the same numbers.
    pub fn reinit_he_uniform(&mut self, gain: f64, seed: u64, first_silo: usize) {
        let n = self.n;
        tch::no_grad(|| {
            for s in 0..n {
                let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0068_655f_756e_6966);
                rng.set_stream((first_silo + s) as u64);
                for l in &mut self.layers {
                    let (w, b) = match l {
                        Layer::Dense { w, b } | Layer::Conv { w, b, .. } => (w, b),
                        Layer::GroupNorm { .. } => continue,
                    };
                    let shape = w.size();
                    let fan_in = if shape.len() == 3 {
                        shape[1]
                    } else {
                        shape[2..].iter().product()
                    } as f64;
                    let per: i64 = shape[1..].iter().product();
                    let vals = uniform(&mut rng, per as usize, gain * (6.0 / fan_in).sqrt());
                    w.get(s as i64)
                        .copy_(&Tensor::from_slice(&vals).reshape(&shape[1..]));
                    let bshape = b.size();
                    let bper: i64 = bshape[1..].iter().product();
                    let bvals = uniform(&mut rng, bper as usize, gain / fan_in.sqrt());
                    b.get(s as i64)
                        .copy_(&Tensor::from_slice(&bvals).reshape(&bshape[1..]));
                }
            }
        });
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.n
    }

    /// Model family.
    pub fn kind(&self) -> ModelKind {
        self.kind
    }

    /// Parameters of one silo (the model size `M` is 32 bit times this).
    pub fn params_per_silo(&self) -> usize {
        self.parameters().iter().map(|p| p.numel() / self.n).sum()
    }

    /// Every parameter tensor (leading silo dimension), in a fixed order.
    pub fn parameters(&self) -> Vec<&Tensor> {
        self.layers
            .iter()
            .flat_map(|l| match l {
                Layer::Dense { w, b } | Layer::Conv { w, b, .. } | Layer::GroupNorm { w, b } => {
                    [w, b]
                }
            })
            .collect()
    }

    /// Mutable parameters, same order as [`Self::parameters`].
    pub fn parameters_mut(&mut self) -> Vec<&mut Tensor> {
        self.layers
            .iter_mut()
            .flat_map(|l| match l {
                Layer::Dense { w, b } | Layer::Conv { w, b, .. } | Layer::GroupNorm { w, b } => {
                    [w, b]
                }
            })
            .collect()
    }

    /// Logits `[N, B, classes]` of input `[N, B, dim]`.
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let n = self.n as i64;
        let b = x.size()[1];
        match self.kind {
            ModelKind::LogReg | ModelKind::Mlp { .. } | ModelKind::DeepMlp { .. } => {
                let mut h = x.shallow_clone();
                let last = self.layers.len() - 1;
                for (k, l) in self.layers.iter().enumerate() {
                    if let Layer::Dense { w, b } = l {
                        h = h.bmm(w) + b;
                        if k < last {
                            h = h.relu();
                        }
                    }
                }
                h
            }
            ModelKind::LeNet | ModelKind::GnLeNet => {
                let (ch, hh, ww) = self.input.image.expect("checked in new");
                // [N, B, C*H*W] -> [B, N*C, H, W]: silo-major channel groups.
                let mut h = x
                    .reshape([n, b, ch as i64, hh as i64, ww as i64])
                    .transpose(0, 1)
                    .reshape([b, n * ch as i64, hh as i64, ww as i64]);
                let mut dense_in: Option<Tensor> = None;
                let gn_lenet = self.kind == ModelKind::GnLeNet;
                let last = self.layers.len() - 1;
                for (k, l) in self.layers.iter().enumerate() {
                    match l {
                        Layer::Conv { w, b: bias, pad } => {
                            let s = w.size();
                            let wg = w.reshape([n * s[1], s[2], s[3], s[4]]);
                            h = h.conv2d(
                                &wg,
                                Some(bias.reshape([-1])),
                                [1, 1],
                                [*pad, *pad],
                                [1, 1],
                                n,
                            );
                            if gn_lenet {
                                // GN-LeNet: the first conv pools before its norm.
                                if k == 0 {
                                    h = h.max_pool2d([3, 3], [2, 2], [0, 0], [1, 1], false);
                                }
                            } else {
                                h = h.relu().max_pool2d([2, 2], [2, 2], [0, 0], [1, 1], false);
                            }
                        }
                        Layer::GroupNorm { w, b: bias } => {
                            h = h.group_norm(
                                2 * n,
                                Some(w.reshape([-1])),
                                Some(bias.reshape([-1])),
                                1e-5,
                                false,
                            );
                            if k > 1 {
                                h = h.max_pool2d([3, 3], [2, 2], [0, 0], [1, 1], false);
                            }
                            h = h.relu();
                        }
                        Layer::Dense { w, b: bias } => {
                            let inp = match dense_in.take() {
                                Some(t) => t,
                                // [B, N*C, H, W] -> [N, B, C*H*W]
                                None => h.reshape([b, n, -1]).transpose(0, 1),
                            };
                            let mut o = inp.bmm(w) + bias;
                            if k < last {
                                o = o.relu();
                            }
                            dense_in = Some(o);
                        }
                    }
                }
                dense_in.expect("a final dense layer")
            }
        }
    }

    /// True for the models made of dense layers only (logistic regression,
    /// MLP): these train with the hand-written batched backward pass
    /// [`Self::dense_grads`] / [`Self::dense_sgd_step`] instead of autograd.
    pub fn is_dense(&self) -> bool {
        matches!(self.kind, ModelKind::LogReg | ModelKind::Mlp { .. })
    }

    /// Gradients, in [`Self::parameters`] order, of `sum_i mean_b CE_i` (the
    /// per-silo mean cross-entropy summed over silos, the loss
    /// [`Self::loss_and_correct`] gives autograd) for a dense model, computed
    /// by hand in one batched pass without autograd:
    ///
    /// ```text
    /// forward   z_l = h_{l-1} W_l + b_l   (bmm, in-place bias),  h_l = relu(z_l) (hidden layers)
    /// output    dz_L = (softmax(z_L) - onehot(y)) / B
    /// layer l   dW_l = h_{l-1}^T dz_l (bmm),  db_l = sum_b dz_l,
    ///           dz_{l-1} = (dz_l W_l^T) * [h_{l-1} > 0]
    /// ```
    ///
    /// Equal to the autograd gradients up to float rounding (tested through
    /// the batched-vs-per-silo test, whose per-silo loop uses autograd).
    pub fn dense_grads(&self, x: &Tensor, y: &Tensor) -> Vec<Tensor> {
        let mut grads: Vec<Tensor> = Vec::new();
        self.dense_pass(x, y, 1.0, |k, _, _, input, dz| {
            if grads.is_empty() {
                grads = (0..2 * (k + 1)).map(|_| Tensor::new()).collect();
            }
            grads[2 * k] = input.transpose(1, 2).bmm(dz);
            grads[2 * k + 1] = dz.sum_dim_intlist(1, true, Kind::Float);
        });
        grads
    }

    /// One plain SGD step `theta -= lr * grad` (no momentum) of a dense
    /// model, fused into the backward pass of [`Self::dense_grads`]: the
    /// output error is scaled by `-lr / B` and accumulated straight into the
    /// weights (`W_l += h_{l-1}^T (-lr dz_l)`, one in-place `baddbmm_`), so
    /// no gradient tensor is materialised. Layer `l`'s error is
    /// back-propagated before `W_l` changes.
    pub fn dense_sgd_step(&mut self, x: &Tensor, y: &Tensor, lr: f64) {
        self.dense_pass(x, y, -lr, |_, w, b, input, dz| {
            let _ = w.baddbmm_(&input.transpose(1, 2), dz);
            let _ = b.g_add_(&dz.sum_dim_intlist(1, true, Kind::Float));
        });
    }

    /// Forward pass, then the backward pass from the last layer down,
    /// calling `visit(l, W_l, b_l, h_{l-1}, scale * dz_l)` for every layer
    /// after `dz_{l-1}` has been computed from the unchanged `W_l`. The
    /// tensors handed out share storage with the parameters.
    fn dense_pass(
        &self,
        x: &Tensor,
        y: &Tensor,
        scale: f64,
        mut visit: impl FnMut(usize, &mut Tensor, &mut Tensor, &Tensor, &Tensor),
    ) {
        assert!(
            self.is_dense(),
            "the hand-written backward needs a dense model"
        );
        tch::no_grad(|| {
            let mut dense: Vec<(Tensor, Tensor)> = self
                .layers
                .iter()
                .filter_map(|l| match l {
                    Layer::Dense { w, b } => Some((w.shallow_clone(), b.shallow_clone())),
                    _ => None,
                })
                .collect();
            let last = dense.len() - 1;
            // inputs[l] = h_{l-1}, the input of dense layer l.
            let mut inputs = Vec::with_capacity(dense.len());
            let mut h = x.shallow_clone();
            for (k, (w, b)) in dense.iter().enumerate() {
                // bmm then in-place bias: baddbmm with a broadcast bias is
                // several times slower on CPU.
                let mut z = h.bmm(w);
                let _ = z.g_add_(b);
                if k < last {
                    let _ = z.relu_();
                }
                inputs.push(std::mem::replace(&mut h, z));
            }
            // Softmax spelled out: libtorch's kernel is slow on a last
            // dimension of 10 classes.
            let batch = x.size()[1] as f64;
            let mut dz = (&h - h.amax(-1, true)).exp_();
            let _ = dz.g_div_(&dz.sum_dim_intlist(-1, true, Kind::Float));
            let idx = y.unsqueeze(-1);
            let minus = Tensor::full(idx.size(), -1.0, (Kind::Float, x.device()));
            let _ = dz.scatter_add_(2, &idx, &minus);
            let _ = dz.g_mul_scalar_(scale / batch);
            for k in (0..dense.len()).rev() {
                let input = &inputs[k];
                let next = (k > 0).then(|| {
                    let mut dh = dz.bmm(&dense[k].0.transpose(1, 2));
                    let _ = dh.masked_fill_(&input.le(0.0), 0.0);
                    dh
                });
                let (w, b) = &mut dense[k];
                visit(k, w, b, input, &dz);
                if let Some(d) = next {
                    dz = d;
                }
            }
        })
    }

    /// Per-silo mean cross-entropy `[N]` and per-silo correct count `[N]`
    /// of logits `[N, B, C]` against labels `[N, B]`.
    pub fn loss_and_correct(logits: &Tensor, labels: &Tensor) -> (Tensor, Tensor) {
        let logp = logits.log_softmax(-1, Kind::Float);
        let nll = -logp.gather(2, &labels.unsqueeze(-1), false).squeeze_dim(-1);
        let correct = logits
            .argmax(-1, false)
            .eq_tensor(labels)
            .to_kind(Kind::Float)
            .sum_dim_intlist(-1, false, Kind::Float);
        (nll.mean_dim(-1, false, Kind::Float), correct)
    }

    /// A model for silos `0..n` built from slices `silo` of this one (for
    /// the per-silo reference loop): a one-silo copy of silo `silo`.
    pub fn silo_copy(&self, silo: usize) -> BatchedModel {
        self.map_layers(1, |t: &Tensor| {
            t.narrow(0, silo as i64, 1)
                .detach()
                .copy()
                .set_requires_grad(true)
        })
    }

    /// The silos `idx` (a 1-D int64 tensor of distinct silo indices) as a
    /// model of `idx.len()` silos: copies, leaves with gradients. Train it
    /// and write it back with [`Self::assign_subset`].
    pub fn subset(&self, idx: &Tensor) -> BatchedModel {
        let k = idx.size()[0] as usize;
        self.map_layers(k, |t: &Tensor| {
            t.detach().index_select(0, idx).set_requires_grad(true)
        })
    }

    /// Overwrites silos `idx` with the silos of `sub` (made by
    /// [`Self::subset`] with the same `idx`); the other silos are untouched.
    pub fn assign_subset(&mut self, idx: &Tensor, sub: &BatchedModel) {
        tch::no_grad(|| {
            for (t, s) in self.parameters_mut().into_iter().zip(sub.parameters()) {
                let _ = t.index_copy_(0, idx, s);
            }
        });
    }

    /// A model of `n` silos whose every parameter tensor is `pick(tensor)`.
    fn map_layers(&self, n: usize, pick: impl Fn(&Tensor) -> Tensor) -> BatchedModel {
        let layers = self
            .layers
            .iter()
            .map(|l| match l {
                Layer::Dense { w, b } => Layer::Dense {
                    w: pick(w),
                    b: pick(b),
                },
                Layer::Conv { w, b, pad } => Layer::Conv {
                    w: pick(w),
                    b: pick(b),
                    pad: *pad,
                },
                Layer::GroupNorm { w, b } => Layer::GroupNorm {
                    w: pick(w),
                    b: pick(b),
                },
            })
            .collect();
        BatchedModel {
            kind: self.kind,
            n,
            input: self.input,
            layers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gn_lenet_has_the_published_parameter_count() {
        let input = InputShape {
            dim: 3 * 32 * 32,
            image: Some((3, 32, 32)),
            classes: 10,
        };
        let m = BatchedModel::new(ModelKind::GnLeNet, 2, input, 0).unwrap();
        assert_eq!(m.params_per_silo(), 85_354);
        let x = Tensor::randn([2, 3, 3 * 32 * 32], (Kind::Float, tch::Device::Cpu));
        assert_eq!(m.forward(&x).size(), vec![2, 3, 10]);
        let lr = BatchedModel::new(
            ModelKind::LogReg,
            1,
            InputShape {
                dim: 784,
                image: Some((1, 28, 28)),
                classes: 10,
            },
            0,
        )
        .unwrap();
        assert_eq!(lr.params_per_silo(), 7_850);
        let le = BatchedModel::new(
            ModelKind::LeNet,
            3,
            InputShape {
                dim: 784,
                image: Some((1, 28, 28)),
                classes: 10,
            },
            0,
        )
        .unwrap();
        let x = Tensor::randn([3, 4, 784], (Kind::Float, tch::Device::Cpu));
        assert_eq!(le.forward(&x).size(), vec![3, 4, 10]);
        assert!(BatchedModel::new(
            ModelKind::LeNet,
            1,
            InputShape {
                dim: 60,
                image: None,
                classes: 10
            },
            0
        )
        .is_err());
    }
}
