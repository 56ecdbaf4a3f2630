//! Clique Averaging in the batched trainer (feature `train`; run with
//! `scripts/libtorch.sh cargo test --features train --test dcliques_train`).
#![cfg(feature = "train")]

use fedtopo::mixing::consensus::{ConsensusMatrix, ConsensusRule};
use fedtopo::overlay::dcliques::{
    build_topology, DCliquesOptions, LabelDistributions, TopologyKind,
};
use fedtopo::train::clique_averaging::{gradient_matrix, model_matrix};
use fedtopo::train::data::synthetic::{generate, SyntheticSpec};
use fedtopo::train::data::FederatedData;
use fedtopo::train::model::ModelKind;
use fedtopo::train::optim::{LrSchedule, OptimizerKind};
use fedtopo::train::trainer::{ExecMode, TrainConfig, Trainer};

fn data(n: usize) -> FederatedData {
    let spec = SyntheticSpec {
        median_per_silo: 40,
        test_per_silo: 10,
        ..SyntheticSpec::default()
    };
    generate(&spec, n, 5).unwrap()
}

fn cfg(momentum: f64, mode: ExecMode) -> TrainConfig {
    TrainConfig {
        model: ModelKind::LogReg,
        optimizer: OptimizerKind::Sgd { momentum },
        lr: 0.1,
        lr_schedule: LrSchedule::Constant,
        local_steps: 1,
        batch_size: 8,
        consensus: ConsensusRule::MetropolisHastings,
        eval_samples: 200,
        seed: 1,
        mode,
    }
}

fn flat(t: &Trainer) -> Vec<Vec<f64>> {
    let n = t.silo_count();
    let mut rows = vec![Vec::new(); n];
    for p in t.stacked_parameters() {
        let p = p.reshape([n as i64, -1]).to_kind(tch::Kind::Double);
        for (i, row) in rows.iter_mut().enumerate() {
            let r: Vec<f64> = Vec::try_from(p.get(i as i64)).unwrap();
            row.extend(r);
        }
    }
    rows
}

fn topology(n: usize) -> fedtopo::overlay::dcliques::CliqueTopology {
    let labels = LabelDistributions::one_class_per_node(n, 4).unwrap();
    let o = DCliquesOptions {
        max_size: 4,
        ..DCliquesOptions::default()
    };
    build_topology(TopologyKind::DEFAULT, &labels, &o).unwrap()
}

/// One round from identical models with W = I: theta_i(CA) = sum_j G_ij theta_j(plain),
/// with and without momentum (v = g after the first step).
#[test]
fn clique_averaging_mixes_gradients() {
    let n = 12;
    let d = data(n);
    let t = topology(n);
    let g = gradient_matrix(&t.averaging_groups()).unwrap();
    let id = ConsensusMatrix::identity(n);
    for momentum in [0.0, 0.9] {
        let mut plain = Trainer::new(cfg(momentum, ExecMode::Batched), &d).unwrap();
        plain.train_round(&id).unwrap();
        let mut ca = Trainer::new(cfg(momentum, ExecMode::Batched), &d).unwrap();
        ca.set_clique_averaging(Some(&g)).unwrap();
        ca.train_round(&id).unwrap();
        let (p, c) = (flat(&plain), flat(&ca));
        let mut moved = 0.0f64;
        for i in 0..n {
            for k in 0..p[i].len() {
                let want: f64 = (0..n).map(|j| g.get(i, j) * p[j][k]).sum();
                assert!((c[i][k] - want).abs() < 1e-5, "silo {i} param {k}");
                moved = moved.max((c[i][k] - p[i][k]).abs());
            }
        }
        assert!(moved > 1e-4, "clique averaging changed nothing");
    }
}

/// G = I is plain D-SGD; with one clique of all nodes and no model
/// averaging (W = I) every silo applies the same averaged gradient, so the
/// models stay identical (they diverge without CA).
#[test]
fn identity_is_plain_and_ca_reduces_scatter() {
    let n = 12;
    let d = data(n);
    let t = topology(n);
    let w = model_matrix(&t).unwrap();
    let mut a = Trainer::new(cfg(0.0, ExecMode::Batched), &d).unwrap();
    let mut b = Trainer::new(cfg(0.0, ExecMode::Batched), &d).unwrap();
    b.set_clique_averaging(Some(&ConsensusMatrix::identity(n)))
        .unwrap();
    let all: Vec<Vec<usize>> = vec![(0..n).collect(); n];
    let mut c = Trainer::new(cfg(0.9, ExecMode::Batched), &d).unwrap();
    c.set_clique_averaging(Some(&gradient_matrix(&all).unwrap()))
        .unwrap();
    let mut e = Trainer::new(cfg(0.9, ExecMode::Batched), &d).unwrap();
    let id = ConsensusMatrix::identity(n);
    for _ in 0..5 {
        a.train_round(&w).unwrap();
        b.train_round(&w).unwrap();
        c.train_round(&id).unwrap();
        e.train_round(&id).unwrap();
    }
    let (fa, fb) = (flat(&a), flat(&b));
    for i in 0..n {
        for k in 0..fa[i].len() {
            assert!((fa[i][k] - fb[i][k]).abs() < 1e-6);
        }
    }
    assert!(c.consensus_distance() < 1e-5, "{}", c.consensus_distance());
    assert!(e.consensus_distance() > 1e-3, "{}", e.consensus_distance());
}

#[test]
fn bad_clique_averaging_setups_are_errors() {
    let d = data(6);
    let mut per = Trainer::new(cfg(0.0, ExecMode::PerSilo), &d).unwrap();
    assert!(per
        .set_clique_averaging(Some(&ConsensusMatrix::identity(6)))
        .is_err());
    let mut t = Trainer::new(cfg(0.0, ExecMode::Batched), &d).unwrap();
    assert!(t
        .set_clique_averaging(Some(&ConsensusMatrix::identity(5)))
        .is_err());
}
