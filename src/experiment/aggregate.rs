//! Summaries over one axis (`aggregate = "seed"`): rows that differ only in
//! that axis form a group; every shown column gets its mean, minimum,
//! maximum and the number of rows that have a value (a training run that
//! never reached its target has no time to target). Written as
//! `summary.csv` and a section of `results.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::grid::Job;
use super::row::ResultRow;

/// Mean, minimum, maximum and count of one column over a group.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    /// Mean of the values present.
    pub mean: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Rows with a value.
    pub count: usize,
}

impl Stat {
    fn of(values: &[f64]) -> Option<Stat> {
        if values.is_empty() {
            return None;
        }
        Some(Stat {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            count: values.len(),
        })
    }
}

/// One group: its axis values (all but the aggregated one), its row
/// indices and the statistics of every summarised column.
#[derive(Debug, Clone)]
pub struct Group {
    /// `(axis, value)` without the aggregated axis, in key order, with the
    /// value as the group's first row writes it.
    pub key: Vec<(String, String)>,
    /// Indices into the rows, in grid order.
    pub rows: Vec<usize>,
    /// `columns[i]`'s statistics (`None` when no row has a number).
    pub stats: Vec<Option<Stat>>,
    /// `columns[i]`'s text when it is not numeric and every row of the
    /// group has the same (an architecture, a label).
    pub texts: Vec<Option<String>>,
}

/// Groups `rows` (aligned with `jobs`) by every axis except `over`, in
/// first-seen order, with the statistics of `columns`.
pub fn groups(jobs: &[Job], rows: &[ResultRow], over: &str, columns: &[String]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    let mut index: BTreeMap<Vec<(String, String)>, usize> = BTreeMap::new();
    for (i, job) in jobs.iter().enumerate() {
        let key: Vec<(String, String)> = job
            .params
            .iter()
            .filter(|(a, _)| a != over)
            .cloned()
            .collect();
        match index.get(&key) {
            Some(&g) => out[g].rows.push(i),
            None => {
                index.insert(key.clone(), out.len());
                out.push(Group {
                    key,
                    rows: vec![i],
                    stats: Vec::new(),
                    texts: Vec::new(),
                });
            }
        }
    }
    for g in &mut out {
        // Show the values as the rows write them (`amazon_us`, not the
        // grid's `shared:paper/amazon_us.gml`).
        let first = &rows[g.rows[0]];
        for (axis, value) in &mut g.key {
            if let Some(v) = first.column(axis) {
                *value = v;
            }
        }
        g.stats = columns
            .iter()
            .map(|c| {
                let v: Vec<f64> = g.rows.iter().filter_map(|&r| rows[r].number(c)).collect();
                Stat::of(&v)
            })
            .collect();
        g.texts = columns
            .iter()
            .zip(&g.stats)
            .map(|(c, st)| {
                let first = rows[g.rows[0]].column(c)?;
                let same = g
                    .rows
                    .iter()
                    .all(|&r| rows[r].column(c).as_ref() == Some(&first));
                (st.is_none() && same && !first.is_empty()).then_some(first)
            })
            .collect();
    }
    out
}

/// `summary.csv`: the group's axes, then `COL_mean`, `COL_min`, `COL_max`,
/// `COL_n` for every numeric column (`COL` alone, with the group's common
/// value, for a column that is text in every group), and the group's row
/// count `rows`.
pub fn summary_csv(groups: &[Group], columns: &[String]) -> String {
    let text: Vec<bool> = (0..columns.len())
        .map(|i| {
            groups
                .iter()
                .all(|g| g.stats[i].is_none() && g.texts[i].is_some())
        })
        .collect();
    // Every record has the header's length; writing to memory cannot fail.
    crate::csv_file::csv_text(false, |w| {
        if let Some(g) = groups.first() {
            let mut head: Vec<String> = g.key.iter().map(|(a, _)| a.clone()).collect();
            for (c, &t) in columns.iter().zip(&text) {
                if t {
                    head.push(c.clone());
                    continue;
                }
                for s in ["mean", "min", "max", "n"] {
                    head.push(format!("{c}_{s}"));
                }
            }
            head.push("rows".into());
            w.write_record(&head)?;
        }
        for g in groups {
            let mut rec: Vec<String> = g.key.iter().map(|(_, v)| v.clone()).collect();
            for (i, s) in g.stats.iter().enumerate() {
                if text[i] {
                    rec.push(g.texts[i].clone().unwrap_or_default());
                    continue;
                }
                match s {
                    Some(s) => rec.extend([
                        s.mean.to_string(),
                        s.min.to_string(),
                        s.max.to_string(),
                        s.count.to_string(),
                    ]),
                    None => rec.extend([String::new(), String::new(), String::new(), "0".into()]),
                }
            }
            rec.push(g.rows.len().to_string());
            w.write_record(&rec)?;
        }
        Ok(())
    })
    .expect("in-memory CSV of equal-length records")
}

/// The Markdown section: `shown` axes, then `mean (min..max)` of every
/// column, with `[k/n]` when only `k` of the group's `n` rows have a value.
/// `published[i]` is group `i`'s published value of `metric`, if any.
pub fn summary_markdown(
    groups: &[Group],
    over: &str,
    shown: &[&str],
    columns: &[String],
    published: &[Option<f64>],
    metric: &str,
) -> String {
    let with_pub = published.iter().any(Option::is_some);
    let mut s = format!("\n## Over `{over}`: mean (min..max)\n\n");
    let mut head: Vec<String> = shown.iter().map(|a| a.to_string()).collect();
    head.extend(columns.iter().cloned());
    if with_pub {
        head.push(format!("published {metric}"));
        head.push("rel. error of the mean".into());
    }
    let _ = writeln!(s, "| {} |", head.join(" | "));
    let _ = writeln!(s, "|{}", "---|".repeat(head.len()));
    for (g, p) in groups.iter().zip(published) {
        let mut cells: Vec<String> = shown
            .iter()
            .map(|a| {
                g.key
                    .iter()
                    .find(|(k, _)| k == a)
                    .map_or(String::new(), |(_, v)| v.clone())
            })
            .collect();
        for (st, text) in g.stats.iter().zip(&g.texts) {
            cells.push(match st {
                None => text.clone().unwrap_or_else(|| "-".into()),
                Some(st) => {
                    let mut c = format!("{} ({}..{})", fmt3(st.mean), fmt3(st.min), fmt3(st.max));
                    if st.count < g.rows.len() {
                        let _ = write!(c, " [{}/{}]", st.count, g.rows.len());
                    }
                    c
                }
            });
        }
        if with_pub {
            let mean = columns
                .iter()
                .position(|c| c == metric)
                .and_then(|i| g.stats[i])
                .map(|st| st.mean);
            cells.push(p.map_or("-".into(), |v| format!("{v}")));
            cells.push(match (mean, p) {
                (Some(m), Some(v)) => format!("{:+.2}%", 100.0 * (m - v) / v),
                _ => "-".into(),
            });
        }
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s
}

/// Three significant decimals for small values, one for large ones.
fn fmt3(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}
