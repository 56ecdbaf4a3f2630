//! Batched tensor program vs the per-silo loop: one DPASGD round (1 local
//! step, batch 32, complete-graph averaging) at N = 100 silos, logistic
//! regression and MLP, on CPU with one intra-op thread.
//!
//! `scripts/libtorch.sh cargo bench --features train --bench train`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use fedtopo::overlay::complete;
use fedtopo::train::consensus::ConsensusRule;
use fedtopo::train::data::synthetic::{generate, SyntheticSpec};
use fedtopo::train::model::ModelKind;
use fedtopo::train::trainer::{ExecMode, TrainConfig, Trainer};

fn bench(c: &mut Criterion) {
    let n = 100;
    let data = generate(&SyntheticSpec::default(), n, 0).expect("data");
    let a = ConsensusRule::LocalDegree
        .matrix(&complete(n))
        .expect("matrix");
    let mut g = c.benchmark_group("dpasgd_round_n100");
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
                b.iter(|| t.train_round(black_box(&a)).expect("round"))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
