//! Trace generators for common cases, seeded: diurnal bandwidth and
//! exponential on/off churn. They write rows of the trace file format
//! ([`super::read`]), so a generated trace is a file like any other (look
//! at it, edit it, pass it with `--trace`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Most rows a generator writes (the trace reader's bound).
pub const MAX_GENERATED_ROWS: usize = super::MAX_TRACE_ROWS;

/// One trace row: `time_s,target,value`.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRow {
    /// Seconds from the start.
    pub time_s: f64,
    /// `KIND:NAME`.
    pub target: String,
    /// The value as written.
    pub value: String,
}

/// Diurnal bandwidth: every silo's access capacity (both directions)
/// follows `base * (1 - depth * (1 - cos(2 pi (t + phase_i) / period)) / 2)`,
/// between `base` (at the silo's peak) and `base * (1 - depth)`, held
/// constant over steps of `step_s` seconds (the factor at the step's
/// start), from 0 to `duration_s`. Each silo's phase is drawn uniformly in
/// `[0, period)` from `seed` (silos in different time zones).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Diurnal {
    /// Peak capacity, bit/s.
    pub base_bps: f64,
    /// Relative depth of the trough, in `[0, 1)`.
    pub depth: f64,
    /// Period, s.
    pub period_s: f64,
    /// Step of the piecewise-constant series, s.
    pub step_s: f64,
    /// Length of the trace, s.
    pub duration_s: f64,
}

/// Exponential on/off churn: every silo is up at 0, stays up for an
/// exponential time of mean `mean_up_s`, then down for one of mean
/// `mean_down_s`, and so on until `duration_s`, when every silo that is
/// down comes back up (a trace never leaves a silo down for good); draws
/// from `seed`, silo by silo in order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Churn {
    /// Mean up time, s.
    pub mean_up_s: f64,
    /// Mean down time, s.
    pub mean_down_s: f64,
    /// Length of the trace, s.
    pub duration_s: f64,
}

fn positive(name: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v > 0.0 && v <= super::read::MAX_TRACE_TIME_S {
        Ok(())
    } else {
        Err(format!(
            "{name} `{v}`: expected seconds > 0 and <= {}",
            super::read::MAX_TRACE_TIME_S
        ))
    }
}

fn check_rows(rows: f64) -> Result<(), String> {
    if rows > MAX_GENERATED_ROWS as f64 {
        return Err(format!(
            "about {rows:.0} rows is more than the {MAX_GENERATED_ROWS} a trace holds: \
             use a longer step or a shorter duration"
        ));
    }
    Ok(())
}

impl Diurnal {
    /// The rows for silos `labels`.
    ///
    /// # Errors
    /// A parameter out of range, or more rows than a trace holds.
    pub fn rows(&self, labels: &[String], seed: u64) -> Result<Vec<TraceRow>, String> {
        if !(self.base_bps.is_finite() && self.base_bps >= 1.0) {
            return Err(format!(
                "base `{}`: expected a finite bandwidth of at least 1 bit/s",
                self.base_bps
            ));
        }
        if !(0.0..1.0).contains(&self.depth) {
            return Err(format!(
                "depth `{}`: expected a number in [0, 1)",
                self.depth
            ));
        }
        positive("period", self.period_s)?;
        positive("step", self.step_s)?;
        positive("duration", self.duration_s)?;
        let steps = (self.duration_s / self.step_s).ceil();
        check_rows(steps * labels.len() as f64)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut rows = Vec::new();
        for label in labels {
            let phase = rng.gen::<f64>() * self.period_s;
            for k in 0..steps as u64 {
                let t = k as f64 * self.step_s;
                let x = std::f64::consts::TAU * (t + phase) / self.period_s;
                let factor = 1.0 - self.depth * (1.0 - x.cos()) / 2.0;
                rows.push(TraceRow {
                    time_s: t,
                    target: format!("access:{label}"),
                    value: format!("{}", (self.base_bps * factor).max(1.0)),
                });
            }
        }
        Ok(rows)
    }
}

impl Churn {
    /// The rows for silos `labels`.
    ///
    /// # Errors
    /// A parameter out of range, or more rows than a trace holds.
    pub fn rows(&self, labels: &[String], seed: u64) -> Result<Vec<TraceRow>, String> {
        positive("mean-up", self.mean_up_s)?;
        positive("mean-down", self.mean_down_s)?;
        positive("duration", self.duration_s)?;
        let expected = 2.0 * self.duration_s / (self.mean_up_s + self.mean_down_s);
        check_rows(expected * labels.len() as f64)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut exp = |mean: f64| -mean * (1.0 - rng.gen::<f64>()).ln();
        let mut rows = Vec::new();
        for label in labels {
            let mut t = 0.0;
            let mut up = true;
            loop {
                t += exp(if up { self.mean_up_s } else { self.mean_down_s });
                if t >= self.duration_s {
                    if !up {
                        rows.push(TraceRow {
                            time_s: self.duration_s,
                            target: format!("avail:{label}"),
                            value: "up".into(),
                        });
                    }
                    break;
                }
                up = !up;
                rows.push(TraceRow {
                    time_s: t,
                    target: format!("avail:{label}"),
                    value: if up { "up" } else { "down" }.into(),
                });
                if rows.len() > MAX_GENERATED_ROWS {
                    check_rows(rows.len() as f64)?;
                }
            }
        }
        Ok(rows)
    }
}

/// `rows` as a trace file (header `time_s,target,value`; labels quoted
/// when needed).
pub fn to_csv(rows: &[TraceRow]) -> String {
    // Writing to memory cannot fail.
    crate::csv_file::csv_text(false, |w| {
        w.write_record(["time_s", "target", "value"])?;
        for r in rows {
            w.write_record([format!("{}", r.time_s), r.target.clone(), r.value.clone()])?;
        }
        Ok(())
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Vec<String> {
        ["a", "b", "c"].map(String::from).to_vec()
    }

    #[test]
    fn same_seed_same_trace_other_seed_other_trace() {
        let d = Diurnal {
            base_bps: 1e9,
            depth: 0.5,
            period_s: 86400.0,
            step_s: 3600.0,
            duration_s: 86400.0,
        };
        let (a, b, c) = (
            d.rows(&labels(), 3).unwrap(),
            d.rows(&labels(), 3).unwrap(),
            d.rows(&labels(), 4).unwrap(),
        );
        assert_eq!(to_csv(&a), to_csv(&b));
        assert_ne!(to_csv(&a), to_csv(&c));
        assert_eq!(a.len(), 3 * 24);
        for r in &a {
            let v: f64 = r.value.parse().unwrap();
            assert!((0.5e9 - 1e-3..=1e9 + 1e-3).contains(&v), "{v}");
        }
        let ch = Churn {
            mean_up_s: 100.0,
            mean_down_s: 10.0,
            duration_s: 10_000.0,
        };
        let (a, b, c) = (
            ch.rows(&labels(), 1).unwrap(),
            ch.rows(&labels(), 1).unwrap(),
            ch.rows(&labels(), 2).unwrap(),
        );
        assert_eq!(to_csv(&a), to_csv(&b));
        assert_ne!(to_csv(&a), to_csv(&c));
        // Alternating down/up per silo, times increasing.
        for l in labels() {
            let mine: Vec<_> = a
                .iter()
                .filter(|r| r.target == format!("avail:{l}"))
                .collect();
            assert!(mine.windows(2).all(|w| w[0].time_s < w[1].time_s));
            assert!(mine
                .iter()
                .enumerate()
                .all(|(k, r)| r.value == if k % 2 == 0 { "down" } else { "up" }));
        }
        // About 2 * 10000 / 110 changes per silo.
        assert!((100..300).contains(&(a.len() / 3)), "{}", a.len());
    }

    #[test]
    fn bad_parameters_are_refused() {
        let d = Diurnal {
            base_bps: 1e9,
            depth: 1.0,
            period_s: 10.0,
            step_s: 1.0,
            duration_s: 10.0,
        };
        assert!(d.rows(&labels(), 0).unwrap_err().contains("depth"));
        let tiny = Diurnal {
            depth: 0.5,
            step_s: 1e-6,
            duration_s: 1e6,
            ..d
        };
        assert!(tiny.rows(&labels(), 0).unwrap_err().contains("rows"));
        let c = Churn {
            mean_up_s: 0.0,
            mean_down_s: 1.0,
            duration_s: 1.0,
        };
        assert!(c.rows(&labels(), 0).unwrap_err().contains("mean-up"));
    }
}
