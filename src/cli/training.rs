//! Training options shared by `fedtopo train` and `fedtopo design --verify`
//! (data, model, optimiser, rounds, evaluation, target): one definition, so
//! a design is verified with exactly the options `train` takes, on the
//! network options given once on the command line.

use clap::Args;

use fedtopo::network::NetworkKind;

use super::choice::choice;

/// How models are trained (not where: the network options are the
/// command's own).
#[derive(Debug, Clone, Args)]
#[cfg_attr(not(feature = "train"), allow(dead_code))]
pub struct TrainingArgs {
    /// Network model timing the rounds in the event engine: maxplus ([Marfoq20] eq. 3),
    /// paper ([Marfoq20] App. F), flow (max-min fair sharing).
    #[arg(long = "network", value_parser = choice(NetworkKind::ALL, NetworkKind::name), default_value_t = NetworkKind::Maxplus)]
    pub network_model: NetworkKind,
    /// `synthetic`, `synthetic:ALPHA,BETA`, `mnist:DIR`, `fashion-mnist[:DIR]`
    /// (default DIR: where Debian's dataset-fashion-mnist installs it,
    /// scripts/fashion-mnist.sh) or `cifar10:DIR`.
    #[arg(long, default_value = "synthetic")]
    pub dataset: String,
    /// Partition of MNIST/CIFAR among silos: iid, shards[:K], one-class,
    /// dirichlet:ALPHA, lognormal[:SIGMA], geo (synthetic data is split by its generator).
    #[arg(long, default_value = "shards:2")]
    pub partition: String,
    /// Model: logreg, mlp[:HIDDEN], lenet, gn-lenet.
    #[arg(long, default_value = "logreg")]
    pub model: String,
    /// Optimiser: sgd or adam.
    #[arg(long, default_value = "sgd")]
    pub optimizer: String,
    /// SGD momentum.
    #[arg(long, default_value_t = 0.0, value_parser = super::args::real(0.0, true, 1.0, false))]
    pub momentum: f64,
    /// Learning rate.
    #[arg(long, default_value_t = 0.05, value_parser = super::args::real(0.0, false, f64::INFINITY, false))]
    pub lr: f64,
    /// Learning-rate schedule: constant or inv-sqrt (lr / sqrt(round + 1)).
    #[arg(long, default_value = "constant")]
    pub lr_schedule: String,
    /// Mini-batch size per silo and local step.
    #[arg(long, default_value_t = 32, value_parser = super::args::whole::<usize>(1, 1 << 20))]
    pub batch_size: usize,
    /// Consensus rule: auto, local-degree, mh, half, average, fedavg, decavg,
    /// matcha:ALPHA, fastest, file:PATH. Data sizes weight `decavg` and
    /// `fedavg` (A_ij = s_j / sum s), and `auto` on STAR when --silos-csv has
    /// a `data` column (FedAvg); the other rules ignore them. `fastest`:
    /// fastest-mixing symmetric weights of an undirected overlay ([Boyd04];
    /// `fedtopo mixing` shows the gain).
    #[arg(long, default_value = "auto")]
    pub consensus: String,
    /// Communication rounds.
    #[arg(long, default_value_t = 200, value_parser = super::args::round_count())]
    pub rounds: u64,
    /// Evaluate every this many rounds (default: 5 for `train`, 1 for
    /// `design --verify`, whose ranking must not hide a lead inside an
    /// evaluation step; `design --calibrate`: the step of the summary's
    /// runs, default 5, for reporting ties).
    #[arg(long, value_parser = super::args::whole::<u64>(1, u64::MAX))]
    pub eval_every: Option<u64>,
    /// Evaluate on at most this many training and test examples.
    #[arg(long, default_value_t = 4000, value_parser = super::args::whole::<usize>(1, usize::MAX as u64))]
    pub eval_samples: usize,
    /// Target mean test accuracy for the time-to-target summary (without
    /// --target-acc or --target-loss the summary has no target columns).
    #[arg(long, value_parser = super::args::real(0.0, true, 1.0, true))]
    pub target_acc: Option<f64>,
    /// Target mean training loss (instead of accuracy).
    #[arg(long, value_parser = super::args::real(0.0, true, f64::INFINITY, false))]
    pub target_loss: Option<f64>,
    /// Use the trained model's real size (32 bit per parameter) as M for timing.
    #[arg(long)]
    pub real_model_size: bool,
    /// Initialisation: `coordinated` (every silo starts from the same model)
    /// or uncoordinated He-uniform per silo scaled by a gain: `none` (g = 1),
    /// `sqrt-n`, `pi` (g = 1/||pi|| of the DecAvg walk; Badie-Modiri et al.).
    #[arg(long, default_value = "coordinated")]
    pub init_gain: String,
    /// Random failures: `none`, `node:P` or `link:P` (each node / directed
    /// link active in a round with probability P, seeded by --seed).
    #[arg(long, default_value = "none")]
    pub failures: String,
    /// No progress bars.
    #[arg(long)]
    pub quiet: bool,
}

#[cfg(feature = "train")]
mod build {
    use anyhow::{bail, Context, Result};

    use fedtopo::graph::failures::FailureSpec;
    use fedtopo::mixing::consensus::ConsensusRule;
    use fedtopo::net::silos::DataSizes;
    use fedtopo::train::data::FederatedData;
    use fedtopo::train::model::ModelKind;
    use fedtopo::train::optim::{LrSchedule, OptimizerKind};
    use fedtopo::train::report::Target;
    use fedtopo::train::session::load_dataset;
    use fedtopo::train::stationary::InitGain;
    use fedtopo::train::trainer::{ExecMode, TrainConfig};

    use super::TrainingArgs;

    impl TrainingArgs {
        /// The trainer's configuration with `local_steps` per round and
        /// `seed`. Errors name the option.
        pub fn config(&self, local_steps: u32, seed: u64) -> Result<TrainConfig> {
            let model = ModelKind::parse(&self.model).with_context(|| {
                format!(
                    "unknown model `{}`; expected logreg, mlp[:H], lenet, gn-lenet",
                    self.model
                )
            })?;
            let optimizer = match self.optimizer.to_ascii_lowercase().as_str() {
                "sgd" => OptimizerKind::Sgd {
                    momentum: self.momentum,
                },
                "adam" => OptimizerKind::Adam {
                    beta1: 0.9,
                    beta2: 0.999,
                    eps: 1e-8,
                },
                o => bail!("unknown optimizer `{o}`; expected sgd or adam"),
            };
            let lr_schedule = match self.lr_schedule.as_str() {
                "constant" => LrSchedule::Constant,
                "inv-sqrt" | "1/sqrt" => LrSchedule::InvSqrt,
                o => bail!("unknown --lr-schedule `{o}`; expected constant or inv-sqrt"),
            };
            Ok(TrainConfig {
                model,
                optimizer,
                lr: self.lr,
                lr_schedule,
                local_steps,
                batch_size: self.batch_size,
                consensus: ConsensusRule::parse(&self.consensus)?,
                eval_samples: self.eval_samples,
                seed,
                mode: ExecMode::Batched,
            })
        }

        /// The target of --target-acc / --target-loss (`None`: neither).
        pub fn target(&self) -> Result<Option<Target>> {
            Ok(match (self.target_acc, self.target_loss) {
                (Some(x), None) if !(0.0..=1.0).contains(&x) => {
                    bail!("--target-acc {x}: expected an accuracy between 0 and 1")
                }
                (None, Some(l)) if !(l.is_finite() && l > 0.0) => {
                    bail!("--target-loss {l}: expected a finite loss > 0")
                }
                (Some(x), None) => Some(Target::TestAccuracy(x)),
                (None, Some(l)) => Some(Target::TrainLoss(l)),
                (None, None) => None,
                _ => bail!("give --target-acc or --target-loss, not both"),
            })
        }

        /// The uncoordinated initialisation of --init-gain (`None`:
        /// coordinated).
        pub fn init(&self) -> Result<Option<InitGain>> {
            match self.init_gain.as_str() {
                "coordinated" => Ok(None),
                g => Ok(Some(g.parse().with_context(|| {
                    format!("--init-gain `{g}`: expected coordinated, none, sqrt-n or pi")
                })?)),
            }
        }

        /// The failures of --failures.
        pub fn failures(&self) -> Result<Option<FailureSpec>> {
            Ok(FailureSpec::parse_optional(&self.failures)?)
        }

        /// The federated data for `n` silos (positions: the silos' (lat,
        /// lon) for the geographic partition; sizes: the silo file's
        /// `data` column).
        pub fn load_data(
            &self,
            n: usize,
            positions: Option<&[(f64, f64)]>,
            seed: u64,
            sizes: Option<&DataSizes>,
        ) -> Result<FederatedData> {
            Ok(load_dataset(
                &self.dataset,
                &self.partition,
                n,
                positions,
                seed,
                sizes,
            )?)
        }
    }
}
