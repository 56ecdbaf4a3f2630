//! The `data` column of `--silos-csv` in training (feature `train`; run
//! with `scripts/libtorch.sh cargo test --features train --test
//! train_data_sizes`): partitions of exactly the file's sizes, DecAvg and
//! FedAvg weights from them, the CLI and experiment reports.
#![cfg(feature = "train")]

mod common;

use std::path::{Path, PathBuf};

use common::fedtopo;
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::mixing::consensus::ConsensusRule;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{parse_overlay_list, BuildOptions};
use fedtopo::train::checkpoint::RunOptions;
use fedtopo::train::data::mnist::encode_idx;
use fedtopo::train::data::FederatedData;
use fedtopo::train::model::ModelKind;
use fedtopo::train::optim::{LrSchedule, OptimizerKind};
use fedtopo::train::session::{load_dataset, Session};
use fedtopo::train::trainer::{ExecMode, TrainConfig};

/// Examples per silo in the silo files below (5 silos).
const SIZES: [usize; 5] = [30, 60, 90, 120, 150];

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-data-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn gaia() -> Underlay {
    load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap()
}

/// The labels of the 5 silos spread over Gaia (placement seed 0).
fn labels(u: &Underlay) -> Vec<String> {
    let spec = NetworkSpec::from_knobs(|k| (k == "silos").then_some("5")).unwrap();
    spec.placement.place(u).unwrap().labels(u)
}

/// A silo file giving silo `i` `sizes[i]` examples (and a compute time).
fn silo_file(dir: &Path, u: &Underlay, sizes: &[usize]) -> PathBuf {
    let mut text = String::from("silo,compute_ms,data\n");
    for (l, s) in labels(u).iter().zip(sizes) {
        text.push_str(&format!("{l},10,{s}\n"));
    }
    let p = dir.join("silos.csv");
    std::fs::write(&p, text).unwrap();
    p
}

fn spec(silos_csv: Option<&Path>) -> NetworkSpec {
    let path = silos_csv.map(|p| p.to_string_lossy().into_owned());
    NetworkSpec::from_knobs(|k| match k {
        "silos" => Some("5"),
        "silos_csv" => path.as_deref(),
        _ => None,
    })
    .unwrap()
}

/// An MNIST-format directory with `n` 4x4 training images (labels `k mod 10`).
fn fake_mnist(dir: &Path, n: usize) -> PathBuf {
    let d = dir.join("mnist");
    std::fs::create_dir_all(&d).unwrap();
    for (pre, count) in [("train", n), ("t10k", 20)] {
        let px: Vec<u8> = (0..count * 16).map(|k| (k * 13 % 256) as u8).collect();
        let lb: Vec<u8> = (0..count).map(|k| (k % 10) as u8).collect();
        std::fs::write(
            d.join(format!("{pre}-images-idx3-ubyte")),
            encode_idx(&[count, 4, 4], &px),
        )
        .unwrap();
        std::fs::write(
            d.join(format!("{pre}-labels-idx1-ubyte")),
            encode_idx(&[count], &lb),
        )
        .unwrap();
    }
    d
}

fn config(consensus: ConsensusRule) -> TrainConfig {
    TrainConfig {
        model: ModelKind::LogReg,
        optimizer: OptimizerKind::Sgd { momentum: 0.0 },
        lr: 0.05,
        lr_schedule: LrSchedule::Constant,
        local_steps: 1,
        batch_size: 8,
        consensus,
        eval_samples: 200,
        seed: 1,
        mode: ExecMode::Batched,
    }
}

fn session<'a>(
    underlay: &'a Underlay,
    model: &'a DelayModel,
    options: &'a BuildOptions,
    config: &'a TrainConfig,
    data: &'a FederatedData,
) -> Session<'a> {
    Session {
        underlay,
        model,
        options,
        config,
        data,
        partition: "iid",
        network: NetworkKind::Maxplus,
        init: None,
        failures: None,
    }
}

fn held(data: &FederatedData) -> Vec<usize> {
    data.silos.iter().map(Vec::len).collect()
}

#[test]
fn partitions_hold_exactly_the_files_sizes() {
    let u = gaia();
    let dir = tmp("partition");
    let file = silo_file(&dir, &u, &SIZES);
    let sizes = spec(Some(&file)).data_sizes(&u).unwrap().unwrap();
    assert_eq!(sizes.samples, SIZES);
    // The built network carries them too, and timing still sees Tc = 10 ms.
    let model = spec(Some(&file)).build(&u).unwrap();
    assert_eq!(model.data_sizes.as_ref(), Some(&sizes));
    assert_eq!(model.compute_round_ms(0), 10.0);
    // Synthetic data generates exactly that many per silo.
    let syn = load_dataset("synthetic", "shards:2", 5, None, 3, Some(&sizes)).unwrap();
    assert_eq!(held(&syn), SIZES);
    // MNIST (450 of 500 images used), by every size-aware scheme.
    let mnist = format!("mnist:{}", fake_mnist(&dir, 500).display());
    let pos: Vec<(f64, f64)> = (0..5).map(|i| (40.0 + i as f64, 10.0 * i as f64)).collect();
    for part in ["iid", "shards:2", "dirichlet:0.5", "geo"] {
        let d = load_dataset(&mnist, part, 5, Some(&pos), 3, Some(&sizes)).unwrap();
        assert_eq!(held(&d), SIZES, "{part}");
    }
    // Without the column: the scheme's own (equal) sizes, as before.
    let d = load_dataset(&mnist, "iid", 5, None, 3, None).unwrap();
    assert_eq!(held(&d), [100; 5]);
    // More than the training set: refused, naming the file.
    let small = format!("mnist:{}", fake_mnist(&tmp("small"), 449).display());
    let e = load_dataset(&small, "iid", 5, None, 3, Some(&sizes))
        .unwrap_err()
        .to_string();
    assert!(e.contains(&file.display().to_string()), "{e}");
    assert!(e.contains("add up to 450") && e.contains("449"), "{e}");
    // The lognormal scheme draws sizes itself: refused with sizes.
    let e = load_dataset(&mnist, "lognormal", 5, None, 3, Some(&sizes))
        .unwrap_err()
        .to_string();
    assert!(e.contains("lognormal") && e.contains("silos.csv"), "{e}");
}

#[test]
fn decavg_and_star_weights_follow_the_files_sizes() {
    let u = gaia();
    let dir = tmp("weights");
    let file = silo_file(&dir, &u, &SIZES);
    let model = spec(Some(&file)).build(&u).unwrap();
    let data = load_dataset("synthetic", "iid", 5, None, 1, model.data_sizes.as_ref()).unwrap();
    // An undirected path over the silos in order: 0 - 1 - 2 - 3 - 4.
    let l = labels(&u);
    let path = dir.join("path.csv");
    let edges: Vec<String> = (0..4).map(|i| format!("{},{}", l[i], l[i + 1])).collect();
    std::fs::write(&path, format!("# undirected\n{}\n", edges.join("\n"))).unwrap();
    let kinds = parse_overlay_list(&format!("file:{},star", path.display())).unwrap();
    let options = BuildOptions::default();
    let decavg = config(ConsensusRule::parse("decavg").unwrap());
    let auto = config(ConsensusRule::Auto);
    let run = |cfg, model, data| session(&u, model, &options, cfg, data);
    let path_overlay = EvaluatedOverlay::build(kinds[0], &u, &model, &options).unwrap();
    let rule = run(&decavg, &model, &data)
        .consensus_rule(&path_overlay)
        .unwrap();
    let a = rule.matrix(&path_overlay.schedule().round(0)).unwrap();
    // [BadieModiri24] eq. 2 by hand, A_ij = s_j / (s_i + sum of the
    // neighbours' s), sizes 30, 60, 90, 120, 150 on the path.
    let want: [[f64; 5]; 5] = [
        [30.0 / 90.0, 60.0 / 90.0, 0.0, 0.0, 0.0],
        [30.0 / 180.0, 60.0 / 180.0, 90.0 / 180.0, 0.0, 0.0],
        [0.0, 60.0 / 270.0, 90.0 / 270.0, 120.0 / 270.0, 0.0],
        [0.0, 0.0, 90.0 / 360.0, 120.0 / 360.0, 150.0 / 360.0],
        [0.0, 0.0, 0.0, 120.0 / 270.0, 150.0 / 270.0],
    ];
    for (i, row) in want.iter().enumerate() {
        for (j, w) in row.iter().enumerate() {
            assert!((a.get(i, j) - w).abs() < 1e-15, "A[{i}][{j}]");
        }
    }
    // STAR under `auto` with data sizes: FedAvg, every row s / sum(s).
    let star = EvaluatedOverlay::build(kinds[1], &u, &model, &options).unwrap();
    let rule = run(&auto, &model, &data).consensus_rule(&star).unwrap();
    let a = rule.matrix(&star.schedule().round(0)).unwrap();
    for i in 0..5 {
        for (j, s) in SIZES.iter().enumerate() {
            assert!((a.get(i, j) - *s as f64 / 450.0).abs() < 1e-15);
        }
    }
    // Without the column, STAR keeps the paper's equal average (p_i = 1).
    let plain = spec(None).build(&u).unwrap();
    let plain_data = load_dataset("synthetic", "iid", 5, None, 1, None).unwrap();
    let star_plain = EvaluatedOverlay::build(kinds[1], &u, &plain, &options).unwrap();
    let rule = run(&auto, &plain, &plain_data)
        .consensus_rule(&star_plain)
        .unwrap();
    assert_eq!(rule, ConsensusRule::Auto);
    // A split that does not follow the file is refused, naming it.
    let e = run(&decavg, &model, &plain_data)
        .consensus_rule(&path_overlay)
        .unwrap_err()
        .to_string();
    assert!(e.contains("silos.csv") && e.contains("not split"), "{e}");
    // And a short run trains with these weights.
    let opts = RunOptions {
        rounds: 3,
        eval_every: 1,
        checkpoint_every: 100,
        dir: None,
        stop_after: None,
        stop_at: None,
        stop_behind_ms: None,
    };
    for (cfg, kind) in [(&decavg, kinds[0]), (&auto, kinds[1])] {
        let recs = run(cfg, &model, &data)
            .train(kind, &opts, |_, _| {})
            .unwrap();
        assert_eq!(recs.len(), 4);
        assert!(recs.iter().all(|r| r.train_loss.mean.is_finite()));
    }
}

#[test]
fn train_and_experiments_report_the_partition() {
    // `fedtopo train` places one silo per router: the 11 of Gaia.
    let u = gaia();
    let dir = tmp("cli");
    let sizes: Vec<usize> = (1..=u.node_count()).map(|i| 10 * i).collect();
    let mut text = String::from("silo,data\n");
    for (r, s) in u.routers.iter().zip(&sizes) {
        text.push_str(&format!("{},{s}\n", r.label));
    }
    let file = dir.join("silos.csv");
    std::fs::write(&file, text).unwrap();
    let list: Vec<String> = sizes.iter().map(usize::to_string).collect();
    let list = list.join(" ");
    let out = dir.join("out");
    let o = fedtopo(&[
        "train",
        "aws-gaia",
        "--silos-csv",
        file.to_str().unwrap(),
        "--overlays",
        "star,ring",
        "--consensus",
        "decavg",
        "--rounds",
        "2",
        "--eval-every",
        "1",
        "--eval-samples",
        "100",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("660 training examples (the data column of")
            && stderr.contains(&format!("per silo: {list}")),
        "{stderr}"
    );
    let mut want = String::from("silo,examples\n");
    for (r, s) in u.routers.iter().zip(&sizes) {
        want.push_str(&format!("{},{s}\n", r.label));
    }
    assert_eq!(
        std::fs::read_to_string(out.join("partition.csv")).unwrap(),
        want
    );
    // An experiment of kind train with the file as an axis.
    let spec = dir.join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"data-sizes\"\nkind = \"train\"\n[grid]\nunderlay = [\"aws-gaia\"]\n\
         overlay = [\"star\"]\nsilos_csv = [\"silos.csv\"]\nrounds = [2]\n\
         eval_every = [1]\ntarget = [\"loss:5\"]\n",
    )
    .unwrap();
    let exp_out = dir.join("exp-out");
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        exp_out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut rdr = csv::Reader::from_path(exp_out.join("results.csv")).unwrap();
    let header = rdr.headers().unwrap().clone();
    let col = header.iter().position(|h| h == "data_samples").unwrap();
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][col], list);
}
