//! One training run of one overlay on a simulated network: the core shared
//! by `fedtopo train` and experiment files of `kind = "train"`.
//!
//! A [`Session`] holds what every overlay of a comparison shares (underlay,
//! delay model, data, trainer configuration, network model);
//! [`Session::train`] builds the overlay as an [`EvaluatedOverlay`] (a
//! schedule such as MATCHA's brings its consensus `I - alpha L(k)` under the
//! `auto` rule), times every round with the overlay's clock
//! ([`EvaluatedOverlay::clock`]) and trains with checkpoints
//! ([`checkpoint::run`]). Clique averaging (D-Cliques `+ca`) also averages
//! gradients inside the overlay's gradient groups.

use crate::evaluate::{EvalError, EvaluatedOverlay};
use crate::graph::failures::FailureSpec;
use crate::graph::Protocol;
use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::network::NetworkKind;
use crate::overlay::build::{BuildOptions, OverlayKind};
use crate::replay::asynchronous::{AsyncOptions, AsyncProtocol, AsyncRun};
use crate::replay::breakdown::Breakdown;
use crate::replay::clock::RecordingClock;
use crate::train::stationary::InitGain;

use super::asynchronous::{train_async, AsyncTrainOptions};
use super::checkpoint::{self, RunOptions};
use super::clique_averaging::gradient_matrix;
use super::data::FederatedData;
use super::optim::OptimizerKind;
use super::report::{RoundRecord, Target};
use super::trainer::{TrainConfig, TrainError, Trainer};
use crate::mixing::consensus::ConsensusRule;

/// One overlay's training run.
#[derive(Debug, Clone)]
pub struct TrainedRun {
    /// Round records (round 0 = initial models, time 0).
    pub records: Vec<RoundRecord>,
    /// Where every round's time went, when asked for and the clock records
    /// it ([`Session::train_run`]).
    pub breakdown: Option<Breakdown>,
}

/// One overlay's asynchronous training run.
#[derive(Debug, Clone)]
pub struct AsyncTrained {
    /// Records (round = computations / N; time of the operation that
    /// completed them).
    pub records: Vec<RoundRecord>,
    /// The timing run (operations, transfers, unapplied updates).
    pub run: AsyncRun,
}

/// What the overlays of one comparison share.
#[derive(Debug, Clone, Copy)]
pub struct Session<'a> {
    /// The underlay (overlays are built on it).
    pub underlay: &'a Underlay,
    /// Delays of the network (\[Marfoq20\] eq. 3) and what the network models time.
    pub model: &'a DelayModel,
    /// Overlay construction options (centre, seeds, MATCHA budget).
    pub options: &'a BuildOptions,
    /// The trainer's configuration.
    pub config: &'a TrainConfig,
    /// The federated data.
    pub data: &'a FederatedData,
    /// How the data was partitioned (part of the resume fingerprint).
    pub partition: &'a str,
    /// Network model of the event engine clock.
    pub network: NetworkKind,
    /// Uncoordinated initialisation (\[BadieModiri24\]): every silo draws
    /// its own He-uniform weights scaled by this gain rule; `None`: every
    /// silo starts from the same model (coordinated).
    pub init: Option<InitGain>,
    /// Random node or link failures, drawn per round from the config's seed
    /// (the trainer and the clock see the same active overlay).
    pub failures: Option<FailureSpec>,
}

impl Session<'_> {
    /// Trains overlay `kind` for `opts.rounds` rounds, resuming from
    /// `opts.dir` when it holds a run with the same settings. `progress` is
    /// called after every round with the records so far.
    pub fn train(
        &self,
        kind: OverlayKind,
        opts: &RunOptions,
        progress: impl FnMut(u64, &[RoundRecord]),
    ) -> Result<Vec<RoundRecord>, TrainError> {
        Ok(self.train_run(kind, opts, false, progress)?.records)
    }

    /// [`Self::train`], also recording where every round's time went when
    /// `breakdown` is set ([`crate::replay::breakdown`]; a resumed run
    /// records the rounds it replays to rebuild its clock, so the breakdown
    /// always starts at round 0). A clock that records none (two-phase
    /// Clique Averaging) gives `breakdown: None`.
    ///
    /// # Errors
    /// As [`Self::train`]; also a breakdown of more than
    /// [`crate::replay::breakdown::MAX_BREAKDOWN_ROWS`] silo-rounds,
    /// refused before the first round.
    pub fn train_run(
        &self,
        kind: OverlayKind,
        opts: &RunOptions,
        breakdown: bool,
        progress: impl FnMut(u64, &[RoundRecord]),
    ) -> Result<TrainedRun, TrainError> {
        let mut cfg = self.config.clone();
        let build = |e: &dyn std::fmt::Display| TrainError::Config(format!("overlay {kind}: {e}"));
        let overlay = EvaluatedOverlay::build(kind, self.underlay, self.model, self.options)
            .map_err(|e| build(&e))?;
        cfg.consensus = self.consensus_rule(&overlay)?;
        // DecAvg's data sizes also weight the 1/||pi|| gain.
        let sizes: Vec<f64> = self.data.silos.iter().map(|s| s.len() as f64).collect();
        // The gain of uncoordinated initialisation is computed on the
        // failure-free overlay of round 0.
        let gain = match self.init {
            Some(rule) => Some(
                rule.gain(&overlay.schedule().round(0), Some(&sizes))
                    .map_err(|e| build(&e))?,
            ),
            None => None,
        };
        let schedule = overlay
            .with_failures(self.failures, cfg.seed)
            .map_err(|e| build(&e))?;
        let fingerprint = format!(
            "{}|{}|{}|{}|{}|{}|{:?}|{:?}",
            cfg.fingerprint(),
            self.data.name,
            self.partition,
            overlay.fingerprint(),
            self.model.workload.model_bits,
            self.network,
            gain,
            self.failures
        );
        // Every delay of the network (access and core capacities, latency,
        // compute): a run resumed under other network options would keep
        // the first run's wall-clock times.
        let fingerprint = format!("{fingerprint}|net{:016x}", self.model.fingerprint());
        // Data sizes from a silo file change the split: part of the
        // fingerprint only then (runs without one resume as before).
        let fingerprint = match &self.model.data_sizes {
            Some(d) => format!("{fingerprint}|data{:?}", d.samples),
            None => fingerprint,
        };
        let mut trainer = Trainer::new(cfg, self.data)?;
        if let Some(g) = gain {
            trainer.reinitialise_uncoordinated(g)?;
        }
        // D-Cliques `+ca`: gradients averaged in cliques at every step.
        if let Some(groups) = overlay.gradient_groups() {
            let bad = |m: String| TrainError::Config(format!("{kind}: {m}"));
            if trainer.config().local_steps != 1 {
                return Err(bad(
                    "Clique Averaging exchanges gradients every step; use 1 local step".into(),
                ));
            }
            let g = gradient_matrix(&groups).map_err(|e| bad(e.to_string()))?;
            trainer.set_clique_averaging(Some(&g))?;
        }
        let mut clock = overlay
            .clock(schedule.as_ref(), self.model, self.network)
            .map_err(|e| match e {
                EvalError::Clock(c) => TrainError::Clock(c),
                other => TrainError::Config(other.to_string()),
            })?;
        let silos = schedule.silo_count();
        let recording = if breakdown {
            RecordingClock::new(clock.as_mut(), silos, opts.rounds)?
        } else {
            None
        };
        Ok(match recording {
            Some(mut rec) => {
                let records = checkpoint::run(
                    &mut trainer,
                    schedule.as_ref(),
                    &mut rec,
                    opts,
                    &fingerprint,
                    progress,
                )?;
                TrainedRun {
                    records,
                    breakdown: Some(rec.into_breakdown()),
                }
            }
            None => TrainedRun {
                records: checkpoint::run(
                    &mut trainer,
                    schedule.as_ref(),
                    clock.as_mut(),
                    opts,
                    &fingerprint,
                    progress,
                )?,
                breakdown: None,
            },
        })
    }

    /// Trains with asynchronous protocol `protocol` on overlay `kind` for
    /// the computations of `rounds` synchronous rounds (`rounds x N`):
    /// the event engine runs the protocol over the session's network
    /// ([`crate::replay::asynchronous`]), then the trainer applies its log
    /// of model operations in order ([`super::asynchronous`]). Gossip runs
    /// on the overlay's neighbours (a static overlay); buffered aggregation
    /// on `star`, its centre the server. Not checkpointed (a killed run
    /// starts over).
    ///
    /// # Errors
    /// A schedule (MATCHA) for gossip, another overlay than `star` for
    /// buffered aggregation, options the asynchronous runs do not support
    /// (uncoordinated initialisation, failures, Clique Averaging), or a
    /// timing or trainer error.
    pub fn train_async(
        &self,
        kind: OverlayKind,
        protocol: AsyncProtocol,
        rounds: u64,
        opts: &AsyncTrainOptions,
    ) -> Result<AsyncTrained, TrainError> {
        let bad = |m: String| TrainError::Config(format!("{protocol} on {kind}: {m}"));
        if self.init.is_some() || self.failures.is_some() {
            return Err(bad(
                "uncoordinated initialisation and failures are for synchronous runs".into(),
            ));
        }
        let overlay = EvaluatedOverlay::build(kind, self.underlay, self.model, self.options)
            .map_err(|e| bad(e.to_string()))?;
        let n = self.model.silo_count();
        let options = AsyncOptions {
            computations: rounds.saturating_mul(n as u64),
            seed: self.config.seed,
        };
        let mut net = self.network.build(self.model);
        let run = overlay
            .run_async(protocol, self.model, net.as_mut(), &options)
            .map_err(|e| TrainError::Config(e.to_string()))?;
        let mut trainer = Trainer::new(self.config.clone(), self.data)?;
        let records = train_async(&mut trainer, &run, opts)?;
        Ok(AsyncTrained { records, run })
    }

    /// The consensus rule a run of `overlay` uses: the configured rule,
    /// the overlay's own under `auto` ([`ConsensusRule::for_overlay`]),
    /// with the data sizes filled in where the rule uses them: `decavg` and
    /// `fedavg` take the partition's sizes, and `auto` on STAR becomes
    /// FedAvg's weighted average when the silo file gives data sizes
    /// (\[Marfoq20\] eq. 1 with `p_i = |D_i|`, App. H.5; without them the
    /// paper's `p_i = 1`, the equal average).
    ///
    /// # Errors
    /// The overlay's own weights are invalid, or the data was not split by
    /// the silo file's `data` column ([`crate::net::delay::DelayModel::data_sizes`]).
    pub fn consensus_rule(&self, overlay: &EvaluatedOverlay) -> Result<ConsensusRule, TrainError> {
        let kind = overlay.kind();
        let rule = self
            .config
            .consensus
            .for_overlay(overlay)
            .map_err(|e| TrainError::Config(format!("overlay {kind}: {e}")))?;
        let sizes: Vec<f64> = self.data.silos.iter().map(|s| s.len() as f64).collect();
        if let Some(d) = &self.model.data_sizes {
            let held: Vec<usize> = self.data.silos.iter().map(Vec::len).collect();
            if held != d.samples {
                return Err(TrainError::Config(format!(
                    "{}: the data was not split by the data column (silos hold {held:?} examples, \
                     the file gives {:?})",
                    d.source, d.samples
                )));
            }
        }
        Ok(match rule {
            ConsensusRule::DecAvg { sizes: None } => ConsensusRule::DecAvg { sizes: Some(sizes) },
            ConsensusRule::WeightedAverage { sizes: None } => {
                ConsensusRule::WeightedAverage { sizes: Some(sizes) }
            }
            ConsensusRule::Auto
                if self.model.data_sizes.is_some()
                    && matches!(
                        overlay.schedule().round(0).protocol,
                        Protocol::ServerClient { .. }
                    ) =>
            {
                ConsensusRule::WeightedAverage { sizes: Some(sizes) }
            }
            other => other,
        })
    }
}

// Reading data needs no libtorch: it lives in `train::data::load`.
pub use super::data::load::{load_dataset, with_data_labels};

/// Parses an optimiser: `sgd`, `sgd:MOMENTUM` or `adam` (beta1 0.9,
/// beta2 0.999, eps 1e-8).
pub fn parse_optimizer(text: &str) -> Result<OptimizerKind, TrainError> {
    let lower = text.to_ascii_lowercase();
    let (name, arg) = lower.split_once(':').unwrap_or((lower.as_str(), ""));
    match (name, arg) {
        ("sgd", "") => Ok(OptimizerKind::Sgd { momentum: 0.0 }),
        ("sgd", m) => match m.parse::<f64>() {
            Ok(momentum) if (0.0..1.0).contains(&momentum) => Ok(OptimizerKind::Sgd { momentum }),
            _ => Err(TrainError::Config(format!(
                "optimizer `{text}`: momentum must be a number in [0, 1)"
            ))),
        },
        ("adam", "") => Ok(OptimizerKind::Adam {
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
        }),
        _ => Err(TrainError::Config(format!(
            "unknown optimizer `{text}`; expected sgd, sgd:MOMENTUM or adam"
        ))),
    }
}

/// Parses an experiment's `target` cell: `none` (no time-to-target
/// columns) or a target of [`parse_target`].
pub fn parse_optional_target(text: &str) -> Result<Option<Target>, TrainError> {
    match text {
        "none" => Ok(None),
        t => parse_target(t).map(Some),
    }
}

/// Parses a target: `acc:X` (mean test accuracy >= X, X in [0, 1]) or
/// `loss:X` (mean training loss <= X, finite X > 0).
pub fn parse_target(text: &str) -> Result<Target, TrainError> {
    let bad = || {
        TrainError::Config(format!(
            "target `{text}`: expected acc:X (X in [0, 1]) or loss:X (X > 0)"
        ))
    };
    let (kind, v) = text.split_once(':').ok_or_else(bad)?;
    let x: f64 = v.trim().parse().map_err(|_| bad())?;
    match kind {
        "acc" if (0.0..=1.0).contains(&x) => Ok(Target::TestAccuracy(x)),
        "loss" if x.is_finite() && x > 0.0 => Ok(Target::TrainLoss(x)),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers_accept_documented_forms_and_reject_others() {
        assert_eq!(
            parse_optimizer("sgd:0.9").unwrap(),
            OptimizerKind::Sgd { momentum: 0.9 }
        );
        assert!(matches!(
            parse_optimizer("adam"),
            Ok(OptimizerKind::Adam { .. })
        ));
        assert!(parse_optimizer("sgd:1.5").is_err());
        assert!(parse_optimizer("rmsprop").is_err());
        assert_eq!(parse_target("acc:0.8").unwrap(), Target::TestAccuracy(0.8));
        assert_eq!(parse_target("loss:1.2").unwrap(), Target::TrainLoss(1.2));
        assert_eq!(parse_optional_target("none").unwrap(), None);
        assert_eq!(
            parse_optional_target("acc:0.5").unwrap(),
            Some(Target::TestAccuracy(0.5))
        );
        assert!(parse_optional_target("").is_err());
        for bad in ["acc:1.5", "loss:-1", "0.8", "acc:x", "f1:0.5"] {
            assert!(parse_target(bad).is_err(), "{bad}");
        }
        assert!(load_dataset("imagenet", "iid", 4, None, 0, None).is_err());
        assert!(load_dataset("mnist", "iid", 4, None, 0, None).is_err());
        assert!(load_dataset("synthetic:1", "iid", 4, None, 0, None).is_err());
        assert_eq!(
            load_dataset("synthetic", "iid", 4, None, 0, None)
                .unwrap()
                .silos
                .len(),
            4
        );
    }
}
