//! The plateau of uncoordinated He initialisation and its removal by the
//! topology-aware gain (Badie-Modiri et al., Fig. 1(a,b), configuration A
//! scaled down to a 2-core machine).
//!
//! Every silo draws its own He-uniform weights times a gain `g` (`none`,
//! `sqrt-n`, `pi` = 1/||pi||), or all silos start from the same weights
//! (`coordinated`, the reference). DecAvg rounds: `b` local SGD steps
//! (momentum, optimiser state re-created every round), then data-size
//! weighted averaging over the (active) neighbours. Data: iid synthetic
//! classification (Li et al. synthetic(0,0) teacher, one pool split iid),
//! `items` examples per silo; model `mlp:512-256-128`. Metric: mean over
//! silos of each silo's test cross-entropy.
//!
//! Run from the repository root (needs libtorch):
//! `FEDTOPO_VENV=/work/venv-torch scripts/libtorch.sh cargo run --release --features train --example init-gain -- [OPTIONS]`
//! Options (all `--key value`): sizes (8,16,32,64), gains
//! (coordinated,none,sqrt-n,pi), seeds (1), rounds (60), eval-every (2),
//! lr (0.01), momentum (0.5), steps (8), batch (16), items (512),
//! model (mlp:512-256-128), topology (complete, or any random spec such as
//! regular:k=4), failures (none | node:P | link:P), thresholds (2.0,1.5),
//! out (experiments/init-gain/train).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use fedtopo::graph::failures::{FailureSpec, Failures};
use fedtopo::graph::{Overlay, OverlaySchedule};
use fedtopo::mixing::consensus::ConsensusRule;
use fedtopo::overlay::complete;
use fedtopo::overlay::random::{random_overlay, RandomSpec};
use fedtopo::report::plot::{line_plot, Axes, Series};
use fedtopo::reproduce::init_gain::slope;
use fedtopo::train::data::partition::Partition;
use fedtopo::train::data::synthetic::{generate, SyntheticSpec};
use fedtopo::train::data::FederatedData;
use fedtopo::train::model::ModelKind;
use fedtopo::train::optim::{LrSchedule, OptimizerKind};
use fedtopo::train::stationary::InitGain;
use fedtopo::train::trainer::{ExecMode, TrainConfig, Trainer};

/// `(round, mean test loss)` points of one run.
type Curve = Vec<(u64, f64)>;

struct Opts {
    sizes: Vec<usize>,
    gains: Vec<String>,
    seeds: u64,
    rounds: u64,
    eval_every: u64,
    lr: f64,
    momentum: f64,
    steps: u32,
    batch: usize,
    items: usize,
    model: String,
    topology: String,
    failures: String,
    thresholds: Vec<f64>,
    out: PathBuf,
}

fn parse_args() -> Result<Opts> {
    let mut o = Opts {
        sizes: vec![8, 16, 32, 64],
        gains: ["coordinated", "none", "sqrt-n", "pi"]
            .map(String::from)
            .to_vec(),
        seeds: 1,
        rounds: 60,
        eval_every: 2,
        lr: 0.01,
        momentum: 0.5,
        steps: 8,
        batch: 16,
        items: 512,
        model: "mlp:512-256-128".into(),
        topology: "complete".into(),
        failures: "none".into(),
        thresholds: vec![2.0, 1.5],
        out: PathBuf::from("experiments/init-gain/train"),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.len().is_multiple_of(2) {
        bail!("options come in pairs --key value");
    }
    for kv in args.chunks(2) {
        let v = kv[1].as_str();
        let list = |v: &str| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .collect::<Vec<_>>()
        };
        let key = kv[0].trim_start_matches("--");
        let ctx = || format!("--{key} {v}");
        match key {
            "sizes" => {
                o.sizes = list(v)
                    .iter()
                    .map(|s| s.parse())
                    .collect::<Result<_, _>>()
                    .with_context(ctx)?
            }
            "gains" => o.gains = list(v),
            "seeds" => o.seeds = v.parse().with_context(ctx)?,
            "rounds" => o.rounds = v.parse().with_context(ctx)?,
            "eval-every" => o.eval_every = v.parse().with_context(ctx)?,
            "lr" => o.lr = v.parse().with_context(ctx)?,
            "momentum" => o.momentum = v.parse().with_context(ctx)?,
            "steps" => o.steps = v.parse().with_context(ctx)?,
            "batch" => o.batch = v.parse().with_context(ctx)?,
            "items" => o.items = v.parse().with_context(ctx)?,
            "model" => o.model = v.into(),
            "topology" => o.topology = v.into(),
            "failures" => o.failures = v.into(),
            "thresholds" => {
                o.thresholds = list(v)
                    .iter()
                    .map(|s| s.parse())
                    .collect::<Result<_, _>>()
                    .with_context(ctx)?
            }
            "out" => o.out = v.into(),
            _ => bail!("unknown option --{key}"),
        }
    }
    for g in &o.gains {
        if g != "coordinated" {
            g.parse::<InitGain>()?;
        }
    }
    Ok(o)
}

fn data(n: usize, items: usize, seed: u64) -> Result<FederatedData> {
    let spec = SyntheticSpec {
        alpha: 0.0,
        beta: 0.0,
        median_per_silo: items * n * 5 / 4,
        test_per_silo: 2000,
        ..SyntheticSpec::default()
    };
    // One generator silo = one teacher: an iid pool, then an iid split.
    let pool = generate(&spec, 1, seed)?;
    let train = pool
        .train
        .select(&(0..(items * n).min(pool.train.len())).collect::<Vec<_>>());
    let silos = Partition::Iid.split(&train, n, None, seed)?;
    Ok(FederatedData {
        name: "synthetic-iid".into(),
        train,
        test: pool.test,
        silos,
    })
}

fn overlay(topology: &str, n: usize, seed: u64) -> Result<Overlay> {
    if topology == "complete" {
        return Ok(complete(n));
    }
    let spec: RandomSpec = topology.parse()?;
    Ok(random_overlay(&spec, n, seed)?)
}

/// First evaluated round whose mean test loss is `<= l` (linear
/// interpolation between evaluations), or `None`.
fn time_to(curve: &[(u64, f64)], l: f64) -> Option<f64> {
    curve.windows(2).find_map(|w| {
        let ((r0, a), (r1, b)) = (w[0], w[1]);
        (b <= l && a > l).then(|| r0 as f64 + (a - l) / (a - b) * (r1 - r0) as f64)
    })
}

fn main() -> Result<()> {
    let o = parse_args()?;
    let model = ModelKind::parse(&o.model).context("--model")?;
    let failures = FailureSpec::parse_optional(&o.failures)?;
    std::fs::create_dir_all(&o.out)?;
    let mut curves_csv =
        String::from("n,gain,g,seed,round,test_loss_mean,train_loss_mean,test_acc_mean\n");
    // (n, gain) -> per-seed curves
    let mut curves: BTreeMap<(usize, String), Vec<Curve>> = BTreeMap::new();
    for &n in &o.sizes {
        for seed in 0..o.seeds {
            let fd = data(n, o.items, seed)?;
            let sizes: Vec<f64> = fd.silos.iter().map(|s| s.len() as f64).collect();
            let base = overlay(&o.topology, n, seed)?;
            for gname in &o.gains {
                let cfg = TrainConfig {
                    model,
                    optimizer: OptimizerKind::Sgd {
                        momentum: o.momentum,
                    },
                    lr: o.lr,
                    lr_schedule: LrSchedule::Constant,
                    local_steps: o.steps,
                    batch_size: o.batch,
                    consensus: ConsensusRule::DecAvg {
                        sizes: Some(sizes.clone()),
                    },
                    eval_samples: 2000,
                    seed,
                    mode: ExecMode::Batched,
                };
                let mut t = Trainer::new(cfg.clone(), &fd)?;
                let g = if gname == "coordinated" {
                    f64::NAN
                } else {
                    let g = gname.parse::<InitGain>()?.gain(&base, Some(&sizes))?;
                    t.reinitialise_uncoordinated(g)?;
                    g
                };
                let sched: Box<dyn OverlaySchedule> = match failures {
                    None => Box::new(base.clone()),
                    Some(f) => Box::new(Failures::new(base.clone(), f, seed)?),
                };
                let start = std::time::Instant::now();
                let mut curve = Vec::new();
                for k in 0..=o.rounds {
                    if k % o.eval_every.max(1) == 0 || k == o.rounds {
                        let r = t.evaluate(0.0);
                        curve.push((k, r.test_loss.mean));
                        writeln!(
                            curves_csv,
                            "{n},{gname},{g:.4},{seed},{k},{:.6},{:.6},{:.4}",
                            r.test_loss.mean, r.train_loss.mean, r.test_acc.mean
                        )?;
                    }
                    if k == o.rounds {
                        break;
                    }
                    let a = cfg.consensus.matrix(&sched.round(k))?;
                    t.train_round(&a)?;
                    t.reset_optimizer();
                }
                eprintln!(
                    "n={n:3} gain={gname:12} g={g:7.3} seed={seed}: loss {:.3} -> {:.3} ({:.1} s)",
                    curve[0].1,
                    curve.last().unwrap().1,
                    start.elapsed().as_secs_f64()
                );
                curves.entry((n, gname.clone())).or_default().push(curve);
            }
        }
    }
    std::fs::write(o.out.join("curves.csv"), &curves_csv)?;

    // Rounds to reach each loss threshold (mean over seeds), and the
    // exponent mu of tau ~ n^mu per gain.
    let mut md = format!(
        "Topology {}, failures {}, model {}, {} items/silo, SGD lr {} momentum {}, {} steps of {} per round, {} seed(s), {} rounds.\n\n",
        o.topology, o.failures, o.model, o.items, o.lr, o.momentum, o.steps, o.batch, o.seeds, o.rounds
    );
    md += "Rounds until the mean test loss first reaches the threshold (mean over seeds; `-` = not within the run).\n\n| gain | n | g | loss at round 0 | ";
    for l in &o.thresholds {
        write!(md, "rounds to {l} | ")?;
    }
    md += "final loss |\n|---|---|---|---|";
    md += &"---|".repeat(o.thresholds.len() + 1);
    md += "\n";
    let mut fits = String::new();
    for gname in &o.gains {
        let mut pts: Vec<Vec<(f64, f64)>> = vec![Vec::new(); o.thresholds.len()];
        for &n in &o.sizes {
            let cs = &curves[&(n, gname.clone())];
            let mean_at = |i: usize| cs.iter().map(|c| c[i].1).sum::<f64>() / cs.len() as f64;
            let g = if gname == "coordinated" {
                "-".to_string()
            } else {
                let fd_sizes = vec![o.items as f64; n];
                let b = overlay(&o.topology, n, 0)?;
                format!(
                    "{:.2}",
                    gname.parse::<InitGain>()?.gain(&b, Some(&fd_sizes))?
                )
            };
            write!(md, "| {gname} | {n} | {g} | {:.3} | ", mean_at(0))?;
            for (ti, &l) in o.thresholds.iter().enumerate() {
                let ts: Vec<f64> = cs.iter().filter_map(|c| time_to(c, l)).collect();
                if ts.len() == cs.len() {
                    let m = ts.iter().sum::<f64>() / ts.len() as f64;
                    pts[ti].push(((n as f64).ln(), m.max(1e-9).ln()));
                    write!(md, "{m:.1} | ")?;
                } else {
                    md += "- | ";
                }
            }
            writeln!(md, "{:.3} |", mean_at(cs[0].len() - 1))?;
        }
        for (ti, &l) in o.thresholds.iter().enumerate() {
            if pts[ti].len() >= 2 {
                let (x, y): (Vec<f64>, Vec<f64>) = pts[ti].iter().copied().unzip();
                let (b, _) = slope(&x, &y);
                writeln!(
                    fits,
                    "- {gname}: rounds to loss {l} ~ n^{b:.2} (sizes reaching it: {})",
                    pts[ti].len()
                )?;
            }
        }
    }
    md += "\nFitted growth of the time to threshold with n:\n\n";
    md += &fits;
    std::fs::write(o.out.join("results.md"), &md)?;
    print!("{md}");

    // One plot: mean test loss vs round, one line per (gain, n).
    let series: Vec<Series> = curves
        .iter()
        .map(|((n, g), cs)| {
            let len = cs[0].len();
            let pts = (0..len)
                .map(|j| {
                    (
                        cs[0][j].0 as f64,
                        cs.iter().map(|c| c[j].1).sum::<f64>() / cs.len() as f64,
                    )
                })
                .collect();
            Series {
                name: format!("{g} n={n}"),
                points: pts,
            }
        })
        .collect();
    let svg = line_plot(
        "mean test cross-entropy",
        &Axes {
            x_label: "round".into(),
            y_label: "mean test loss".into(),
            ..Axes::default()
        },
        &series,
    )
    .map_err(anyhow::Error::msg)?;
    std::fs::write(o.out.join("curves.svg"), svg)?;
    eprintln!(
        "wrote {}/{{curves.csv,results.md,curves.svg}}",
        o.out.display()
    );
    Ok(())
}
