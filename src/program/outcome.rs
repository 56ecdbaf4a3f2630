//! What a learning run under a program produced, in the units a
//! comparison needs: evaluations with the bits sent and the wall-clock
//! attached ([`LearnRecord`]), bits / wall-clock / steps to a target
//! accuracy ([`RunSummary`]), and statistics over seeds ([`SeedStats`]).
//! Shared by the reference learner ([`super::learn`]) and the libtorch one
//! (`program::train`, feature `train`).

use serde::Serialize;

use super::learn::EvalPoint;
use super::sim::StepCosts;
use crate::units::{Bits, Ms};

/// One evaluation after step `step`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LearnRecord {
    /// Steps done.
    pub step: u64,
    /// Wall-clock at the end of the step, ms (`None` when untimed).
    pub wall_clock_ms: Option<Ms>,
    /// Bits sent in steps `1..=step`.
    pub bits: Bits,
    /// Test accuracy in `[0, 1]` (see [`super::learn::program_metric`]).
    pub accuracy: f64,
    /// Training loss (cross-entropy, nat) of the models in play on their
    /// training label distribution (`None`: the learner does not report it).
    pub train_loss: Option<f64>,
}

impl LearnRecord {
    /// Attaches the costs of step `e.t` to a reference-learner evaluation.
    pub fn from_eval(e: &EvalPoint, costs: &StepCosts) -> LearnRecord {
        LearnRecord {
            step: e.t,
            wall_clock_ms: costs.ms_at(e.t),
            bits: costs.bits_at(e.t),
            accuracy: e.accuracy,
            train_loss: None,
        }
    }
}

/// The first evaluation at or above the target.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TargetHit {
    /// Steps.
    pub step: u64,
    /// Bits sent until then.
    pub bits: Bits,
    /// Wall-clock, ms (`None` when untimed).
    pub wall_clock_ms: Option<Ms>,
}

/// Summary of one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunSummary {
    /// Accuracy at the last evaluation (0 without evaluations).
    pub final_accuracy: f64,
    /// Best accuracy over the evaluations.
    pub best_accuracy: f64,
    /// Training loss at the last evaluation.
    pub final_train_loss: Option<f64>,
    /// First evaluation reaching the target accuracy.
    pub hit: Option<TargetHit>,
    /// Bits sent over all steps.
    pub total_bits: Bits,
    /// Wall-clock of all steps, ms.
    pub total_ms: Option<Ms>,
}

impl RunSummary {
    /// Summarises `records` of a run whose steps cost `costs`, with
    /// `target` test accuracy.
    pub fn of(records: &[LearnRecord], costs: &StepCosts, target: f64) -> RunSummary {
        let last = costs.steps() as u64;
        RunSummary {
            final_accuracy: records.last().map_or(0.0, |r| r.accuracy),
            best_accuracy: records.iter().map(|r| r.accuracy).fold(0.0, f64::max),
            final_train_loss: records.last().and_then(|r| r.train_loss),
            hit: records
                .iter()
                .find(|r| r.accuracy >= target)
                .map(|r| TargetHit {
                    step: r.step,
                    bits: r.bits,
                    wall_clock_ms: r.wall_clock_ms,
                }),
            total_bits: costs.bits_at(last),
            total_ms: costs.ms_at(last),
        }
    }
}

/// Mean, sample standard deviation, minimum and maximum of some values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Number of values.
    pub count: usize,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (`n - 1` in the denominator; 0 for one value).
    pub std: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Spread {
    /// `None` for no values.
    pub fn of(xs: &[f64]) -> Option<Spread> {
        if xs.is_empty() {
            return None;
        }
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let var = if xs.len() > 1 {
            xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Some(Spread {
            count: xs.len(),
            mean,
            std: var.sqrt(),
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    /// `mean ± std` with `digits` decimals, after dividing by `scale`.
    pub fn mean_std(&self, digits: usize, scale: f64) -> String {
        format!(
            "{:.d$} ± {:.d$}",
            self.mean / scale,
            self.std / scale,
            d = digits
        )
    }

    /// `min..max` with `digits` decimals, after dividing by `scale`.
    pub fn range(&self, digits: usize, scale: f64) -> String {
        format!(
            "{:.d$}..{:.d$}",
            self.min / scale,
            self.max / scale,
            d = digits
        )
    }
}

/// One method's results over several seeds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeedStats {
    /// Runs (seeds).
    pub runs: usize,
    /// Final accuracy over all runs.
    pub final_accuracy: Spread,
    /// Runs that reached the target.
    pub reached: usize,
    /// Steps to the target, over the runs that reached it.
    pub steps: Option<Spread>,
    /// Bits to the target, over the runs that reached it.
    pub bits: Option<Spread>,
    /// Wall-clock to the target, ms, over the runs that reached it (timed runs).
    pub ms: Option<Spread>,
}

impl SeedStats {
    /// Statistics of `runs` (`None` for no runs).
    pub fn of(runs: &[RunSummary]) -> Option<SeedStats> {
        let acc: Vec<f64> = runs.iter().map(|r| r.final_accuracy).collect();
        let hits: Vec<TargetHit> = runs.iter().filter_map(|r| r.hit).collect();
        let steps: Vec<f64> = hits.iter().map(|h| h.step as f64).collect();
        let bits: Vec<f64> = hits.iter().map(|h| h.bits).collect();
        let ms: Vec<f64> = hits.iter().filter_map(|h| h.wall_clock_ms).collect();
        Some(SeedStats {
            runs: runs.len(),
            final_accuracy: Spread::of(&acc)?,
            reached: hits.len(),
            steps: Spread::of(&steps),
            bits: Spread::of(&bits),
            ms: Spread::of(&ms),
        })
    }
}

/// `name > name > ...` by decreasing `value` (ties keep the given order).
pub fn ordering(items: &[(String, f64)]) -> String {
    let mut v: Vec<&(String, f64)> = items.iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.iter()
        .map(|(n, x)| format!("{n} {x:.3}"))
        .collect::<Vec<_>>()
        .join(" > ")
}

/// Trains `spec` with the reference learner ([`super::learn::train`]) and
/// returns one record per evaluation, with the bits and wall-clock of
/// `costs` (the path shared by `fedtopo tornado learn` and experiment files
/// of kind `program`).
pub fn reference_records(
    spec: &super::ProgramSpec,
    labels: &super::grouping::LabelCounts,
    data: &super::learn::Dataset,
    options: &super::learn::LearnOptions,
    costs: &StepCosts,
) -> Vec<LearnRecord> {
    super::learn::train(spec, labels, data, options)
        .iter()
        .map(|e| LearnRecord::from_eval(e, costs))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_and_stats_by_hand() {
        let s = Spread::of(&[1.0, 2.0, 3.0, 6.0]).unwrap();
        assert_eq!((s.count, s.mean, s.min, s.max), (4, 3.0, 1.0, 6.0));
        // Sample variance: (4 + 1 + 0 + 9) / 3.
        assert!((s.std - (14.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(s.mean_std(1, 1.0), "3.0 ± 2.2");
        assert_eq!(s.range(0, 0.5), "2..12");
        assert_eq!(Spread::of(&[2.5]).unwrap().std, 0.0);
        assert!(Spread::of(&[]).is_none());

        let costs = StepCosts {
            model_bits: 10.0,
            bits: vec![0.0, 10.0, 10.0, 40.0],
            ends_ms: Some(vec![1.0, 2.0, 3.0, 4.0]),
        };
        let rec = |step, accuracy| LearnRecord {
            step,
            wall_clock_ms: costs.ms_at(step),
            bits: costs.bits_at(step),
            accuracy,
            train_loss: Some(1.0 / step as f64),
        };
        let a = RunSummary::of(&[rec(2, 0.4), rec(4, 0.3)], &costs, 0.35);
        assert_eq!(a.hit.unwrap().step, 2);
        assert_eq!(a.hit.unwrap().bits, 10.0);
        assert_eq!(a.hit.unwrap().wall_clock_ms, Some(2.0));
        assert_eq!((a.final_accuracy, a.best_accuracy), (0.3, 0.4));
        assert_eq!(a.final_train_loss, Some(0.25));
        assert_eq!((a.total_bits, a.total_ms), (40.0, Some(4.0)));
        let b = RunSummary::of(&[rec(2, 0.1), rec(4, 0.5)], &costs, 0.35);
        let c = RunSummary::of(&[rec(2, 0.1), rec(4, 0.2)], &costs, 0.35);
        assert!(c.hit.is_none());
        let st = SeedStats::of(&[a, b, c]).unwrap();
        assert_eq!((st.runs, st.reached), (3, 2));
        assert_eq!(st.steps.unwrap().mean, 3.0);
        assert_eq!(st.bits.unwrap().max, 40.0);
        assert!((st.final_accuracy.mean - (0.3 + 0.5 + 0.2) / 3.0).abs() < 1e-12);
        assert!(SeedStats::of(&[]).is_none());
        assert_eq!(
            ordering(&[("a".into(), 0.5), ("b".into(), 0.7), ("c".into(), 0.5)]),
            "b 0.700 > a 0.500 > c 0.500"
        );
    }
}
