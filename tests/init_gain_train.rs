//! Uncoordinated He-uniform initialisation with a gain, and DecAvg, on the
//! real trainer (feature `train`).
#![cfg(feature = "train")]

use fedtopo::mixing::consensus::ConsensusRule;
use fedtopo::overlay::complete;
use fedtopo::train::data::synthetic::{generate, SyntheticSpec};
use fedtopo::train::model::ModelKind;
use fedtopo::train::trainer::{ExecMode, TrainConfig, Trainer};

fn trainer(mode: ExecMode, n: usize) -> Trainer {
    let spec = SyntheticSpec {
        median_per_silo: 40,
        test_per_silo: 10,
        ..SyntheticSpec::default()
    };
    let data = generate(&spec, n, 3).unwrap();
    let cfg = TrainConfig {
        model: ModelKind::parse("mlp:32-16-8").unwrap(),
        consensus: ConsensusRule::DecAvg { sizes: None },
        mode,
        seed: 9,
        ..TrainConfig::default()
    };
    Trainer::new(cfg, &data).unwrap()
}

#[test]
fn uncoordinated_init_is_per_silo_scaled_and_mode_independent() {
    let n = 6;
    let mut b = trainer(ExecMode::Batched, n);
    let mut p = trainer(ExecMode::PerSilo, n);
    b.reinitialise_uncoordinated(2.0).unwrap();
    p.reinitialise_uncoordinated(2.0).unwrap();
    let (pb, pp) = (b.stacked_parameters(), p.stacked_parameters());
    for (x, y) in pb.iter().zip(&pp) {
        assert_eq!(
            Vec::<f32>::try_from(x.flatten(0, -1)).unwrap(),
            Vec::<f32>::try_from(y.flatten(0, -1)).unwrap()
        );
    }
    // First layer w [n, 60, 32]: silos differ; bound 2 sqrt(6/60).
    let w: Vec<f32> = Vec::try_from(pb[0].flatten(0, -1)).unwrap();
    let per = w.len() / n;
    assert_ne!(w[..per], w[per..2 * per]);
    let bound = 2.0 * (6.0f32 / 60.0).sqrt();
    let max = w.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(
        max <= bound && max > 0.9 * bound,
        "max {max}, bound {bound}"
    );
    // Variance of U(-a, a) is a^2/3.
    let var = w.iter().map(|v| v * v).sum::<f32>() / w.len() as f32;
    assert!((var / (bound * bound / 3.0) - 1.0).abs() < 0.05, "{var}");
    assert!(b.reinitialise_uncoordinated(0.0).is_err());
    // DecAvg on the complete graph with equal sizes = exact averaging.
    let a = ConsensusRule::DecAvg { sizes: None }
        .matrix(&complete(n))
        .unwrap();
    b.train_round(&a).unwrap();
    let w: Vec<f32> = Vec::try_from(b.stacked_parameters()[0].flatten(0, -1)).unwrap();
    assert!(w[..per]
        .iter()
        .zip(&w[per..2 * per])
        .all(|(x, y)| (x - y).abs() < 1e-5));
}
