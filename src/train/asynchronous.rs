//! Real model updates for the asynchronous protocols: the log of model
//! operations an asynchronous run produced
//! ([`crate::replay::asynchronous`]), applied to the trainer's models in
//! execution order, so each update has exactly the staleness the network
//! gave it.
//!
//! * `Compute` — the silo's local steps, as its `count`-th computation
//!   ([`Trainer::local_steps_of`]: the mini-batches and learning rate of
//!   round `count`).
//! * `Average` (gossip) — both silos take the average of their models.
//! * `Download` (buffered) — the client's model becomes the server's.
//! * `Upload` (buffered) — the client's update `Delta_i = x_i - x_base`
//!   (its model after its computation minus the model it downloaded)
//!   joins the server's buffer.
//! * `Aggregate` (buffered, FedBuff \[Nguyen22\] Alg. 1) — the server adds
//!   `eta_g / K * sum_k s(tau_k) Delta_k`, with the staleness weight
//!   `s(tau) = 1 / sqrt(1 + tau)`.
//!
//! Records are taken every `eval_every * N` computations (an "equivalent
//! round" spends `N` computations, as a synchronous round does) and after
//! the last operation, at the simulated time of the operation that
//! completed them. Gossip evaluates every silo's model; buffered
//! aggregation evaluates the server's model.

use tch::Tensor;

use super::report::{RoundRecord, Target};
use super::trainer::{TrainError, Trainer};
use crate::replay::asynchronous::{AsyncOp, AsyncRun};

/// How to apply an asynchronous run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AsyncTrainOptions {
    /// Evaluate every this many equivalent rounds (`N` computations), >= 1.
    pub eval_every: u64,
    /// Server learning rate `eta_g` of buffered aggregation (1: the mean
    /// staleness-weighted update).
    pub server_lr: f64,
    /// Stop at the first evaluation that meets this target.
    pub stop_at: Option<Target>,
}

impl Default for AsyncTrainOptions {
    fn default() -> Self {
        AsyncTrainOptions {
            eval_every: 1,
            server_lr: 1.0,
            stop_at: None,
        }
    }
}

/// FedBuff's staleness weight `s(tau) = 1 / sqrt(1 + tau)`.
pub fn staleness_weight(tau: u64) -> f64 {
    1.0 / (1.0 + tau as f64).sqrt()
}

/// Applies `run` to `trainer`'s models (module docs). Returns the records
/// (the first: the initial models at time 0).
///
/// # Errors
/// The run and the trainer disagree (silo counts, an update aggregated
/// that never arrived), or a trainer error.
pub fn train_async(
    trainer: &mut Trainer,
    run: &AsyncRun,
    opts: &AsyncTrainOptions,
) -> Result<Vec<RoundRecord>, TrainError> {
    let n = trainer.silo_count();
    if run.computations.len() != n {
        return Err(TrainError::Config(format!(
            "the asynchronous run has {} silos, the data {n}",
            run.computations.len()
        )));
    }
    let buffered = run
        .ops
        .iter()
        .any(|o| matches!(o, AsyncOp::Download { .. }));
    let per_eval = opts.eval_every.max(1) * n as u64;
    // Buffered aggregation: the server's model, each client's finished
    // update (its model after computing minus the one it downloaded, which
    // nothing changes in between), and the server's buffer.
    let mut server: Option<Vec<Tensor>> = if buffered {
        Some(trainer.silo_parameters(0)?)
    } else {
        None
    };
    let mut update: Vec<Option<Vec<Tensor>>> = (0..n).map(|_| None).collect();
    let mut buffer: Vec<(usize, Vec<Tensor>)> = Vec::new();
    let evaluate = |t: &mut Trainer, server: &Option<Vec<Tensor>>, at: f64| match server {
        Some(p) => t.evaluate_model(p, at),
        None => Ok(t.evaluate(at)),
    };
    trainer.set_round(0);
    let mut records = vec![evaluate(trainer, &server, 0.0)?];
    let met = |r: &[RoundRecord]| {
        opts.stop_at
            .is_some_and(|t| r.last().is_some_and(|x| t.reached(x)))
    };
    if met(&records) {
        return Ok(records);
    }
    let mut done = 0u64;
    let mut last_at = 0.0;
    let missing = |what: String| TrainError::Config(format!("asynchronous run: {what}"));
    for op in &run.ops {
        last_at = op.at_ms();
        match op {
            AsyncOp::Compute { silo, count, .. } => {
                if buffered {
                    let before = trainer.silo_parameters(*silo)?;
                    trainer.local_steps_of(*silo, *count)?;
                    let after = trainer.silo_parameters(*silo)?;
                    let delta = after.iter().zip(&before).map(|(a, b)| a - b).collect();
                    update[*silo] = Some(delta);
                } else {
                    trainer.local_steps_of(*silo, *count)?;
                }
                done += 1;
                if done.is_multiple_of(per_eval) {
                    trainer.set_round(done / n as u64);
                    records.push(evaluate(trainer, &server, op.at_ms())?);
                    if met(&records) {
                        return Ok(records);
                    }
                }
            }
            AsyncOp::Average { a, b, .. } => trainer.average_pair(*a, *b)?,
            AsyncOp::Download { silo, .. } => {
                let s = server.as_ref().ok_or_else(|| missing("no server".into()))?;
                trainer.set_silo_parameters(*silo, s)?;
            }
            AsyncOp::Upload { silo, .. } => {
                let u = update[*silo]
                    .take()
                    .ok_or_else(|| missing(format!("silo {silo} uploaded before computing")))?;
                buffer.push((*silo, u));
            }
            AsyncOp::Aggregate { updates, .. } => {
                let s = server.as_mut().ok_or_else(|| missing("no server".into()))?;
                if updates.len() != buffer.len() {
                    return Err(missing(format!(
                        "{} updates aggregated, {} buffered",
                        updates.len(),
                        buffer.len()
                    )));
                }
                let k = updates.len() as f64;
                for ((silo, tau), (held, delta)) in updates.iter().zip(buffer.drain(..)) {
                    if *silo != held {
                        return Err(missing(format!(
                            "silo {silo}'s update aggregated, silo {held}'s buffered"
                        )));
                    }
                    let w = opts.server_lr * staleness_weight(*tau) / k;
                    for (p, d) in s.iter_mut().zip(&delta) {
                        *p = &*p + d * w;
                    }
                }
            }
        }
    }
    trainer.set_round(done / n as u64);
    if !done.is_multiple_of(per_eval) || records.len() == 1 {
        records.push(evaluate(trainer, &server, last_at)?);
    }
    Ok(records)
}
