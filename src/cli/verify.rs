//! `fedtopo design --verify` (feature `train`): the command-line side of
//! [`fedtopo::design::verify`]: the data and trainer of the training
//! options, on the design's own network, with progress bars.

use anyhow::{bail, Result};

use fedtopo::design::search::{Candidate, RoundsPredictor};
use fedtopo::design::verify::{verify, Progress, Verification, VerifyOptions};
use fedtopo::graph::failures::FailureSpec;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::scenario::NetworkSpec;
use fedtopo::net::underlay::Underlay;
use fedtopo::overlay::build::BuildOptions;
use fedtopo::overlay::export::silo_positions;
use fedtopo::train::data::FederatedData;
use fedtopo::train::report::Target;
use fedtopo::train::session::{with_data_labels, Session};
use fedtopo::train::stationary::InitGain;
use fedtopo::train::trainer::{TrainConfig, Trainer};
use fedtopo::units::format_bandwidth;

use super::training::TrainingArgs;

/// What the training runs need besides the network.
pub struct Prepared {
    /// The data (its labels give the candidates' mixed heterogeneity).
    pub data: FederatedData,
    config: TrainConfig,
    target: Target,
    init: Option<InitGain>,
    failures: Option<FailureSpec>,
}

/// Loads the data of `t` for the silos of `model` and checks the training
/// options, before any candidate is built: D-Cliques are then built on the
/// data's labels (`build`), and `--real-model-size` re-times the network
/// (`model`) with the trained model's size, as `train` does.
pub fn prepare(
    t: &TrainingArgs,
    seed: u64,
    underlay: &Underlay,
    spec: &NetworkSpec,
    model: &mut DelayModel,
    build: &mut BuildOptions,
) -> Result<Prepared> {
    let Some(target) = t.target()? else {
        bail!(
            "--verify: give --target-acc ACC or --target-loss LOSS: the design search ranks \
             overlays by their time to that target"
        );
    };
    let positions: Option<Vec<(f64, f64)>> =
        silo_positions(underlay, model.connectivity.placement())
            .into_iter()
            .collect();
    let data = t.load_data(
        model.silo_count(),
        positions.as_deref(),
        seed,
        model.data_sizes.as_ref(),
    )?;
    let config = t.config(model.workload.local_steps, seed)?;
    if t.real_model_size {
        let trainer = Trainer::new(config.clone(), &data)?;
        *model = spec
            .clone()
            .with_model_bits(32.0 * trainer.params_per_silo() as f64, "trained-model")
            .build(underlay)?;
    }
    build.dcliques = with_data_labels(build.dcliques.clone(), &data);
    Ok(Prepared {
        data,
        config,
        target,
        init: t.init()?,
        failures: t.failures()?,
    })
}

/// One line saying which network the runs are timed on.
pub fn network_line(model: &DelayModel) -> String {
    let range = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        if lo == hi {
            format_bandwidth(lo)
        } else {
            format!("{} to {}", format_bandwidth(lo), format_bandwidth(hi))
        }
    };
    format!(
        "{} silos, access up {} down {}, workload {} (M = {:.0} bit, Tc = {} ms, {} local step(s))",
        model.silo_count(),
        range(&model.access.up),
        range(&model.access.down),
        model.workload.name,
        model.workload.model_bits,
        model.workload.compute_ms,
        model.workload.local_steps
    )
}

/// How many candidates verification trains, and where.
pub struct Plan {
    /// Probe candidates.
    pub probes: usize,
    /// Rounds of a probe run.
    pub probe_rounds: u64,
    /// Candidates trained in full.
    pub top: usize,
    /// Also those predicted within this factor of the best.
    pub window: f64,
    /// Evaluation step, rounds.
    pub eval_every: u64,
    /// Output directory.
    pub dir: std::path::PathBuf,
    /// Race the runs ([`fedtopo::design::verify::VerifyOptions::race`]).
    pub race: bool,
}

/// Runs the verification of `candidates` on the design's network.
#[allow(clippy::too_many_arguments)]
pub fn run(
    p: &Prepared,
    t: &TrainingArgs,
    underlay: &Underlay,
    model: &DelayModel,
    build: &BuildOptions,
    candidates: &mut [Candidate],
    predictor: &mut RoundsPredictor,
    plan: Plan,
) -> Result<Verification> {
    let session = Session {
        underlay,
        model,
        options: build,
        config: &p.config,
        data: &p.data,
        partition: &t.partition,
        network: t.network_model,
        init: p.init,
        failures: p.failures,
    };
    let options = VerifyOptions {
        probes: plan.probes,
        probe_rounds: plan.probe_rounds,
        top: plan.top,
        window: plan.window,
        rounds: t.rounds,
        eval_every: plan.eval_every,
        target: p.target,
        dir: plan.dir,
        race: plan.race,
    };
    eprintln!(
        "verify: {} on {}: {} ({} training examples, label heterogeneity {:.3}), timed by {}",
        options.target.label(),
        underlay.name,
        network_line(model),
        p.data.silos.iter().map(Vec::len).sum::<usize>(),
        p.data.label_heterogeneity(),
        t.network_model.name()
    );
    let mut bar: Option<fedtopo::progress::counted::Progress> = None;
    let verification = verify(
        &session,
        candidates,
        predictor,
        &options,
        |event| match event {
            Progress::Start {
                phase,
                candidate,
                rounds,
            } => {
                bar = Some(fedtopo::progress::counted::Progress::new(
                    &format!("{} {candidate}", phase.name()),
                    "rounds",
                    rounds,
                    !t.quiet,
                    "{prefix:>10} [{bar:30}] {pos}/{len} rounds {msg} ({eta})",
                ));
            }
            Progress::Round { round, record } => {
                if let Some(b) = &bar {
                    b.set_position(round);
                    if let Some(l) = record {
                        b.set_message(&format!(
                            "acc {:.3} loss {:.4} t={:.1}s",
                            l.test_acc.mean,
                            l.train_loss.mean,
                            l.wall_clock_ms / 1e3
                        ));
                    }
                }
            }
            Progress::End => {
                if let Some(b) = bar.take() {
                    b.finish();
                }
            }
        },
    )?;
    Ok(verification)
}
