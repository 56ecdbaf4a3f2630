//! Training reports: the per-round CSV, time-to-target summaries and
//! speed-ups. Pure Rust; the SVG plots are in
//! [`crate::report::train_curves`].

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Mean, min and max of a per-silo quantity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Mean over silos.
    pub mean: f64,
    /// Minimum over silos.
    pub min: f64,
    /// Maximum over silos.
    pub max: f64,
}

impl Stat {
    /// Statistics of `v` (non-empty).
    pub fn of(v: &[f64]) -> Stat {
        Stat {
            mean: v.iter().sum::<f64>() / v.len().max(1) as f64,
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// Metrics after a round (round 0 = the initial models at time 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    /// Rounds completed.
    pub round: u64,
    /// Simulated wall-clock time when every silo has finished it, ms.
    pub wall_clock_ms: f64,
    /// Training loss of each silo's model on the (sampled) training pool.
    pub train_loss: Stat,
    /// Training accuracy, same sample.
    pub train_acc: Stat,
    /// Test loss of each silo's model on the shared test set.
    pub test_loss: Stat,
    /// Test accuracy.
    pub test_acc: Stat,
    /// Mean over silos of the L2 distance of the silo's parameters to the
    /// average parameters.
    pub consensus_distance: f64,
}

/// CSV header of the per-round file.
pub const CSV_HEADER: &str = "round,wall_clock_ms,train_loss_mean,train_loss_min,train_loss_max,\
train_acc_mean,train_acc_min,train_acc_max,test_loss_mean,test_loss_min,test_loss_max,\
test_acc_mean,test_acc_min,test_acc_max,consensus_distance";

/// The per-round CSV text (fixed formatting: same records, same bytes).
pub fn render_csv(records: &[RoundRecord]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in records {
        let st = |x: &Stat| format!("{:.6},{:.6},{:.6}", x.mean, x.min, x.max);
        s.push_str(&format!(
            "{},{:.3},{},{},{},{},{:.6e}\n",
            r.round,
            r.wall_clock_ms,
            st(&r.train_loss),
            st(&r.train_acc),
            st(&r.test_loss),
            st(&r.test_acc),
            r.consensus_distance
        ));
    }
    s
}

/// Writes `text` to `path` atomically (temporary file in the same
/// directory, then rename).
pub fn write_atomic(path: &Path, text: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// What reaching the target means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Target {
    /// Mean test accuracy >= this.
    TestAccuracy(f64),
    /// Mean training loss <= this.
    TrainLoss(f64),
}

impl Target {
    /// True when round record `r` meets the target.
    pub fn reached(&self, r: &RoundRecord) -> bool {
        match *self {
            Target::TestAccuracy(a) => r.test_acc.mean >= a,
            Target::TrainLoss(l) => r.train_loss.mean <= l,
        }
    }

    /// Label for reports.
    pub fn label(&self) -> String {
        match self {
            Target::TestAccuracy(a) => format!("test_acc>={a}"),
            Target::TrainLoss(l) => format!("train_loss<={l}"),
        }
    }
}

/// One overlay's line of the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    /// Overlay name.
    pub overlay: String,
    /// Rounds run.
    pub rounds: u64,
    /// Wall-clock time of the last round, ms.
    pub final_wall_clock_ms: f64,
    /// Mean round duration, ms.
    pub ms_per_round: f64,
    /// First evaluated round meeting the target.
    pub rounds_to_target: Option<u64>,
    /// Its wall-clock time, ms.
    pub time_to_target_ms: Option<f64>,
    /// `time_to_target(baseline) / time_to_target(this)`.
    pub speedup: Option<f64>,
    /// Final mean test accuracy.
    pub final_test_acc: f64,
    /// Final mean training loss.
    pub final_train_loss: f64,
}

/// Summaries of several runs against `target` (none: no round reaches a
/// target, so `rounds_to_target`, `time_to_target_ms` and `speedup` are all
/// `None`), speed-ups relative to `baseline` (an overlay name; default:
/// `star` when present, else the first).
pub fn summarize(
    runs: &[(String, Vec<RoundRecord>)],
    target: Option<Target>,
    baseline: Option<&str>,
) -> Vec<SummaryRow> {
    let mut rows: Vec<SummaryRow> = runs
        .iter()
        .map(|(name, recs)| {
            let last = recs.last();
            let hit = target.and_then(|t| recs.iter().find(|r| t.reached(r)));
            let rounds = last.map_or(0, |r| r.round);
            let wall = last.map_or(0.0, |r| r.wall_clock_ms);
            SummaryRow {
                overlay: name.clone(),
                rounds,
                final_wall_clock_ms: wall,
                ms_per_round: if rounds > 0 {
                    wall / rounds as f64
                } else {
                    0.0
                },
                rounds_to_target: hit.map(|r| r.round),
                time_to_target_ms: hit.map(|r| r.wall_clock_ms),
                speedup: None,
                final_test_acc: last.map_or(f64::NAN, |r| r.test_acc.mean),
                final_train_loss: last.map_or(f64::NAN, |r| r.train_loss.mean),
            }
        })
        .collect();
    let base = baseline
        .map(str::to_string)
        .or_else(|| {
            rows.iter()
                .find(|r| r.overlay == "star")
                .map(|r| r.overlay.clone())
        })
        .or_else(|| rows.first().map(|r| r.overlay.clone()));
    let base_t = base
        .and_then(|b| rows.iter().find(|r| r.overlay == b))
        .and_then(|r| r.time_to_target_ms);
    for r in &mut rows {
        r.speedup = match (base_t, r.time_to_target_ms) {
            (Some(b), Some(t)) if t > 0.0 => Some(b / t),
            _ => None,
        };
    }
    rows
}

/// The summary as CSV (written with the csv crate: overlay names such as
/// `file:a,b.gml` are quoted). Without a target there are no `target`,
/// `rounds_to_target`, `time_to_target_ms` and `speedup` columns: a column
/// that could only be empty, or "reached" for a target that says nothing,
/// is left out.
pub fn render_summary_csv(rows: &[SummaryRow], target: Option<Target>) -> String {
    let opt = |x: Option<f64>, p: usize| x.map_or(String::new(), |v| format!("{v:.p$}"));
    // Writing to memory cannot fail.
    crate::csv_file::csv_text(false, |w| {
        let mut header = vec!["overlay", "rounds", "final_wall_clock_ms", "ms_per_round"];
        if target.is_some() {
            header.extend(["target", "rounds_to_target", "time_to_target_ms", "speedup"]);
        }
        header.extend(["final_test_acc", "final_train_loss"]);
        w.write_record(&header)?;
        for r in rows {
            let mut record = vec![
                r.overlay.clone(),
                r.rounds.to_string(),
                format!("{:.3}", r.final_wall_clock_ms),
                format!("{:.3}", r.ms_per_round),
            ];
            if let Some(t) = target {
                record.extend([
                    t.label(),
                    r.rounds_to_target.map_or(String::new(), |x| x.to_string()),
                    opt(r.time_to_target_ms, 3),
                    opt(r.speedup, 3),
                ]);
            }
            record.extend([
                format!("{:.6}", r.final_test_acc),
                format!("{:.6}", r.final_train_loss),
            ]);
            w.write_record(&record)?;
        }
        Ok(())
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(round: u64, wall: f64, acc: f64, loss: f64) -> RoundRecord {
        let s = |x| Stat {
            mean: x,
            min: x,
            max: x,
        };
        RoundRecord {
            round,
            wall_clock_ms: wall,
            train_loss: s(loss),
            train_acc: s(acc),
            test_loss: s(loss),
            test_acc: s(acc),
            consensus_distance: 0.0,
        }
    }

    #[test]
    fn time_to_target_and_speedup() {
        let runs = vec![
            (
                "star".to_string(),
                vec![
                    rec(0, 0.0, 0.1, 2.0),
                    rec(10, 3000.0, 0.5, 1.0),
                    rec(20, 6000.0, 0.8, 0.5),
                ],
            ),
            (
                "ring".to_string(),
                vec![
                    rec(0, 0.0, 0.1, 2.0),
                    rec(10, 800.0, 0.4, 1.2),
                    rec(20, 1600.0, 0.7, 0.6),
                    rec(30, 2400.0, 0.85, 0.4),
                ],
            ),
            ("mst".to_string(), vec![rec(0, 0.0, 0.1, 2.0)]),
        ];
        let rows = summarize(&runs, Some(Target::TestAccuracy(0.75)), None);
        assert_eq!(rows[0].time_to_target_ms, Some(6000.0));
        assert_eq!(rows[1].rounds_to_target, Some(30));
        assert!((rows[1].speedup.unwrap() - 2.5).abs() < 1e-12);
        assert_eq!(rows[2].speedup, None);
        let rows = summarize(&runs, Some(Target::TrainLoss(1.0)), Some("ring"));
        assert!((rows[0].speedup.unwrap() - 1600.0 / 3000.0).abs() < 1e-12);
        let csv = render_summary_csv(&rows, Some(Target::TrainLoss(1.0)));
        assert!(csv
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("star,20,6000.000,300.000,train_loss<=1,10,3000.000,0.533"));
        // A name with a comma is quoted: every row has the header's fields.
        let mut named = rows.clone();
        named[0].overlay = "file:a,b.gml".into();
        let csv = render_summary_csv(&named, Some(Target::TrainLoss(1.0)));
        assert!(csv.contains("\n\"file:a,b.gml\",20,"), "{csv}");
        let mut r = csv::Reader::from_reader(csv.as_bytes());
        let width = r.headers().map(|h| h.len()).unwrap_or(0);
        assert!(r.records().all(|x| x.map(|x| x.len()).ok() == Some(width)));
        let text = render_csv(&runs[0].1);
        assert_eq!(text.lines().count(), 4);
        assert!(text
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("10,3000.000,1.000000,"));
    }

    #[test]
    fn without_a_target_there_are_no_target_columns() {
        let runs = vec![(
            "ring".to_string(),
            vec![rec(0, 0.0, 0.1, 2.0), rec(10, 800.0, 0.9, 0.1)],
        )];
        let rows = summarize(&runs, None, None);
        assert_eq!(rows[0].rounds_to_target, None);
        assert_eq!(rows[0].speedup, None);
        let csv = render_summary_csv(&rows, None);
        assert_eq!(
            csv.lines().next(),
            Some("overlay,rounds,final_wall_clock_ms,ms_per_round,final_test_acc,final_train_loss")
        );
        assert_eq!(
            csv.lines().nth(1),
            Some("ring,10,800.000,80.000,0.900000,0.100000")
        );
    }
}
