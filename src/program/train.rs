//! Round programs on the libtorch batched trainer ([`Trainer`], feature
//! `train`): the nine methods of \[Lee21\] Table 4 train a real model (logistic
//! regression, MLPs, LeNet) on label-skewed silos.
//!
//! Step `t` of a [`Program`] is one trainer round ([`apply_step`]): the
//! step's *active* nodes take one local SGD step (the others keep their
//! parameters and optimiser state, [`Trainer::train_round_masked`]), then
//! every node mixes with the step's row-stochastic matrix
//! ([`Step::mixing_matrix`], equal to the snapshot semantics of
//! [`Step::apply`]). Optimiser state (momentum, Adam moments) stays with the
//! node, it never travels with a model (the trainer's convention); the
//! paper's setting is plain SGD, which has none.
//!
//! Evaluation is the reference learner's ([`super::learn`]): after step `t`
//! the models in play are those of the nodes active in step `t+1`;
//! per-class test accuracy and per-class training loss of each such model
//! ([`Trainer::class_metrics`]) are mixed by [`program_metric`] (consensus
//! programs: global label distribution; pluralistic programs: each group's
//! models on the group's own label distribution, weighted by `|D^k|/|D|`).

use super::grouping::LabelCounts;
use super::learn::program_metric;
use super::outcome::LearnRecord;
use super::sim::StepCosts;
use super::spec::{ProgramSpec, Step};
use crate::mixing::consensus::ConsensusMatrix;
use crate::train::data::FederatedData;
use crate::train::trainer::{EvalSet, TrainConfig, TrainError, Trainer};

#[cfg(doc)]
use super::spec::Program;

/// Options of [`train`].
#[derive(Debug, Clone, PartialEq)]
pub struct TorchOptions {
    /// Trainer configuration (model, optimiser, learning rate, batch size,
    /// evaluation sample sizes, seed). `local_steps` must be 1: one program
    /// step is one local step.
    pub config: TrainConfig,
    /// Steps `T`.
    pub steps: u64,
    /// Evaluate every this many steps.
    pub eval_every: u64,
}

/// Runs program step `step` on `trainer` (see the module docs).
pub fn apply_step(trainer: &mut Trainer, step: &Step) -> Result<(), TrainError> {
    let n = trainer.silo_count();
    let mut active = vec![false; n];
    for &i in &step.active {
        *active.get_mut(i).ok_or_else(|| {
            TrainError::Config(format!(
                "step {}: node {i} out of range ({n} silos)",
                step.t
            ))
        })? = true;
    }
    let a = if step.ops.is_empty() {
        ConsensusMatrix::identity(n)
    } else {
        step.mixing_matrix(n)?
    };
    trainer.train_round_masked(&a, &active)
}

/// Trains `spec`'s program with the libtorch trainer on `data` (silo `i` =
/// node `i`, whose labels are `labels.row(i)`) for `o.steps` steps,
/// evaluating every `o.eval_every` steps; `costs` attaches bits and
/// wall-clock to the evaluations. Seeded by `o.config.seed`.
pub fn train(
    spec: &ProgramSpec,
    labels: &LabelCounts,
    data: &FederatedData,
    o: &TorchOptions,
    costs: &StepCosts,
) -> Result<Vec<LearnRecord>, TrainError> {
    let n = spec.nodes;
    if data.silo_count() != n || labels.len() != n {
        return Err(TrainError::Config(format!(
            "the program has {n} nodes, the data {} silos and the label counts {} nodes",
            data.silo_count(),
            labels.len()
        )));
    }
    if o.config.local_steps != 1 {
        return Err(TrainError::Config(format!(
            "one program step is one local step; local steps must be 1, got {}",
            o.config.local_steps
        )));
    }
    if o.eval_every == 0 {
        return Err(TrainError::Config("evaluate every >= 1 steps".into()));
    }
    if (costs.steps() as u64) < o.steps {
        return Err(TrainError::Config(format!(
            "costs cover {} steps, training runs {}",
            costs.steps(),
            o.steps
        )));
    }
    let mut trainer = Trainer::new(o.config.clone(), data)?;
    let mut out = Vec::new();
    let mut step = spec.step(1);
    for t in 1..=o.steps {
        apply_step(&mut trainer, &step)?;
        let next = spec.step(t + 1);
        if t.is_multiple_of(o.eval_every) {
            let held = &next.active;
            let test = trainer.class_metrics(held, EvalSet::Test)?;
            let train = trainer.class_metrics(held, EvalSet::Train)?;
            let pos = |i: usize| held.binary_search(&i).expect("held node");
            let accuracy =
                program_metric(spec, labels, held, &mut |i| test[pos(i)].accuracy.clone());
            let train_loss =
                program_metric(spec, labels, held, &mut |i| train[pos(i)].loss.clone());
            out.push(LearnRecord {
                step: t,
                wall_clock_ms: costs.ms_at(t),
                bits: costs.bits_at(t),
                accuracy,
                train_loss: Some(train_loss),
            });
        }
        step = next;
    }
    Ok(out)
}
