//! Batched tensor program vs the naive per-silo loop: one DPASGD round
//! (paper eq. 2; 1 local SGD step, batch 32 per silo, then one averaging) at
//! N = 100 silos on the default synthetic data (60 features, 10 classes),
//! logistic regression (610 parameters per silo) and MLP with 200 hidden
//! units (14,210 parameters per silo), on CPU with one intra-op thread.
//!
//! * `Batched` ([`ExecMode::Batched`]): one model whose parameters are
//!   stacked `[N, ...]`; one `index_select` gathers all mini-batches; a
//!   hand-written batched forward/backward (`baddbmm`/`bmm`, no autograd)
//!   gives all gradients; one optimiser update per stacked tensor; the
//!   averaging is one matrix product `A [N, P]` per stacked tensor (dense
//!   `A`) or one `index_select` + `bmm` over the `K` non-zeros per row
//!   (sparse `A`: ring, identity).
//! * `PerSilo` ([`ExecMode::PerSilo`]): `N` separate one-silo models, each
//!   with its own autograd forward/backward and optimiser step (its batch is
//!   a slice of the same gathered batch); for the averaging every silo
//!   sends a copy of its parameters and every silo then adds its received
//!   neighbours one by one (`theta_i = sum_j A_ij theta_j`, one `addcmul_`
//!   per non-zero `A_ij` and parameter tensor), as a per-silo
//!   implementation does.
//!
//! Groups: `dpasgd_round_n100` (complete graph, local-degree weights = exact
//! averaging, dense `A`), `dpasgd_round_n100_ring` (undirected ring, 3
//! non-zeros per row, sparse path), `dpasgd_parts_n100` (pieces of a
//! batched round timed alone).
//!
//! `FEDTOPO_VENV=/work/venv-torch scripts/libtorch.sh cargo bench --features train --bench train -- --warm-up-time 1 --measurement-time 4`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use fedtopo::graph::Overlay;
use fedtopo::mixing::consensus::{ConsensusMatrix, ConsensusRule};
use fedtopo::overlay::complete;
use fedtopo::train::data::synthetic::{generate, SyntheticSpec};
use fedtopo::train::model::ModelKind;
use fedtopo::train::trainer::{ExecMode, TrainConfig, Trainer};

fn rounds(c: &mut Criterion, group: &str, a: &ConsensusMatrix) {
    let n = a.n();
    let data = generate(&SyntheticSpec::default(), n, 0).expect("data");
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    for model in [ModelKind::LogReg, ModelKind::Mlp { hidden: 200 }] {
        for mode in [ExecMode::Batched, ExecMode::PerSilo] {
            let cfg = TrainConfig {
                model,
                mode,
                batch_size: 32,
                ..TrainConfig::default()
            };
            let mut t = Trainer::new(cfg, &data).expect("trainer");
            g.bench_function(format!("{}/{:?}", model.name(), mode), |b| {
                b.iter(|| t.train_round(black_box(a)).expect("round"))
            });
        }
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    let n = 100;
    let complete_a = ConsensusRule::LocalDegree
        .matrix(&complete(n))
        .expect("matrix");
    rounds(c, "dpasgd_round_n100", &complete_a);
    let ring: Vec<(usize, usize)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
    let ring_a = ConsensusRule::LocalDegree
        .matrix(&Overlay::from_edges("ring", n, &ring))
        .expect("matrix");
    rounds(c, "dpasgd_round_n100_ring", &ring_a);
}

/// Where a batched round spends its time: mini-batch gathering, forward +
/// backward (autograd, as before, and the hand-written `dense_grads` used
/// now), optimiser step, and the dense consensus product, each timed alone
/// on the same shapes as `dpasgd_round_n100`.
fn parts(c: &mut Criterion) {
    use fedtopo::train::model::{BatchedModel, InputShape};
    use fedtopo::train::optim::{Optimizer, OptimizerKind};
    use tch::{Kind, Tensor};
    let n = 100;
    let data = generate(&SyntheticSpec::default(), n, 0).expect("data");
    let a = ConsensusRule::LocalDegree
        .matrix(&complete(n))
        .expect("matrix");
    let d = data.train.dim as i64;
    let mut g = c.benchmark_group("dpasgd_parts_n100");
    g.sample_size(10);
    for model in [ModelKind::LogReg, ModelKind::Mlp { hidden: 200 }] {
        let cfg = TrainConfig {
            model,
            batch_size: 32,
            ..TrainConfig::default()
        };
        let t = Trainer::new(cfg, &data).expect("trainer");
        let train_x = Tensor::from_slice(&data.train.features).reshape([-1, d]);
        let train_y = Tensor::from_slice(&data.train.labels);
        let idx = Tensor::from_slice(&t.batch_indices(0, 0));
        let x = train_x.index_select(0, &idx).reshape([n as i64, 32, d]);
        let y = train_y.index_select(0, &idx).reshape([n as i64, 32]);
        let input = InputShape {
            dim: data.train.dim,
            image: None,
            classes: data.train.classes,
        };
        let mut m = BatchedModel::new(model, n, input, 0).expect("model");
        let mut opt = Optimizer::new(OptimizerKind::Sgd { momentum: 0.0 }, &m.parameters());
        let name = model.name();
        g.bench_function(format!("{name}/gather"), |b| {
            b.iter(|| {
                let idx = Tensor::from_slice(&t.batch_indices(0, 0));
                let x = train_x.index_select(0, &idx).reshape([n as i64, 32, d]);
                let y = train_y.index_select(0, &idx).reshape([n as i64, 32]);
                black_box((x, y))
            })
        });
        g.bench_function(format!("{name}/autograd_fwd_bwd"), |b| {
            b.iter(|| {
                let (loss, _) = BatchedModel::loss_and_correct(&m.forward(&x), &y);
                loss.sum(Kind::Float).backward();
                for p in m.parameters_mut() {
                    p.zero_grad();
                }
            })
        });
        g.bench_function(format!("{name}/dense_grads"), |b| {
            b.iter(|| black_box(m.dense_grads(&x, &y)))
        });
        let g0 = m.dense_grads(&x, &y);
        g.bench_function(format!("{name}/opt_step"), |b| {
            b.iter_batched(
                || g0.iter().map(|g| g.copy()).collect::<Vec<_>>(),
                |grads| opt.step_with(&mut m.parameters_mut(), &grads, 0.01),
                criterion::BatchSize::LargeInput,
            )
        });
        let at = Tensor::from_slice(a.as_slice())
            .reshape([n as i64, n as i64])
            .to_kind(Kind::Float);
        g.bench_function(format!("{name}/consensus_mm"), |b| {
            b.iter(|| {
                tch::no_grad(|| {
                    for p in m.parameters_mut() {
                        let mixed = at.mm(&p.reshape([n as i64, -1])).reshape(p.size());
                        p.copy_(&mixed);
                    }
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench, parts);
criterion_main!(benches);
