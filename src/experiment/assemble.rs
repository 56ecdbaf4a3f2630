//! Joining stored job results, in grid order, into the experiment's outputs:
//! `results.csv`, `results.md` (with ours vs published when the experiment
//! names a published CSV) and SVG plots. The same stored results always give
//! the same bytes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::report::plot::{line_plot, Axes, Series};
use crate::units::parse_bandwidth;

use super::grid::Job;
use super::spec::{ExperimentSpec, PlotSpec};
use super::{store, ExperimentError};

/// The result of one job (one overlay on one network configuration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// Underlay name.
    pub underlay: String,
    /// Overlay name.
    pub overlay: String,
    /// Access capacity of every silo, as written.
    pub access: String,
    /// Access capacity of the STAR centre's silo, as written.
    pub center_access: String,
    /// Local steps s.
    pub local_steps: u32,
    /// Workload preset.
    pub workload: String,
    /// Core capacity, as written.
    pub core_capacity: String,
    /// Path model.
    pub connectivity: String,
    /// Label of the STAR centre's silo.
    pub center: String,
    /// Number of silos.
    pub silos: usize,
    /// Arcs of the overlay.
    pub arcs: usize,
    /// Largest degree.
    pub max_degree: usize,
    /// Cycle time, ms.
    pub cycle_time_ms: f64,
    /// Rounds per second.
    pub rounds_per_s: f64,
}

const AXES: [&str; 8] = [
    "underlay",
    "overlay",
    "access",
    "center_access",
    "local_steps",
    "workload",
    "core_capacity",
    "connectivity",
];

impl ResultRow {
    /// A column's value as text (`None` for unknown columns).
    pub fn column(&self, name: &str) -> Option<String> {
        Some(match name {
            "underlay" => self.underlay.clone(),
            "overlay" => self.overlay.clone(),
            "access" => self.access.clone(),
            "center_access" => self.center_access.clone(),
            "local_steps" => self.local_steps.to_string(),
            "workload" => self.workload.clone(),
            "core_capacity" => self.core_capacity.clone(),
            "connectivity" => self.connectivity.clone(),
            "center" => self.center.clone(),
            "silos" => self.silos.to_string(),
            "arcs" => self.arcs.to_string(),
            "max_degree" => self.max_degree.to_string(),
            "cycle_time_ms" => self.cycle_time_ms.to_string(),
            "rounds_per_s" => self.rounds_per_s.to_string(),
            _ => return None,
        })
    }
}

/// Published values keyed by the join columns they share with our rows.
struct Published {
    columns: Vec<String>,
    values: BTreeMap<Vec<String>, f64>,
}

fn read_published(path: &Path) -> Result<Published, ExperimentError> {
    let text = std::fs::read_to_string(path).map_err(|source| ExperimentError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let bad =
        |line: u64, m: String| ExperimentError::Invalid(format!("{}:{line}: {m}", path.display()));
    let mut rdr = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let header = rdr.headers().map_err(|e| bad(1, e.to_string()))?.clone();
    let value_col = header
        .iter()
        .position(|h| h == "published_ms")
        .ok_or_else(|| bad(1, "expected a `published_ms` column".into()))?;
    let join: Vec<(usize, String)> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| AXES.contains(h))
        .map(|(i, h)| (i, h.to_string()))
        .collect();
    let mut values = BTreeMap::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| bad(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = rec.position().map_or(0, |p| p.line());
        let key = join.iter().map(|(i, _)| rec[*i].to_string()).collect();
        let v: f64 = rec[value_col]
            .parse()
            .map_err(|_| bad(line, format!("`{}` is not a number", &rec[value_col])))?;
        values.insert(key, v);
    }
    Ok(Published {
        columns: join.into_iter().map(|(_, h)| h).collect(),
        values,
    })
}

impl Published {
    fn lookup(&self, row: &ResultRow) -> Option<f64> {
        let key: Vec<String> = self
            .columns
            .iter()
            .map(|c| row.column(c).unwrap_or_default())
            .collect();
        self.values.get(&key).copied()
    }
}

/// Reads every job's stored result from `out` and writes the outputs there.
/// `spec_dir` resolves the published CSV. Returns the rows in grid order.
pub fn assemble(
    spec: &ExperimentSpec,
    jobs: &[Job],
    out: &Path,
    spec_dir: &Path,
) -> Result<Vec<ResultRow>, ExperimentError> {
    let mut rows = Vec::with_capacity(jobs.len());
    let mut missing = 0;
    for job in jobs {
        match store::load(out, job)? {
            Some(r) => rows.push(r),
            None => missing += 1,
        }
    }
    if missing > 0 {
        return Err(ExperimentError::Missing {
            missing,
            total: jobs.len(),
            dir: out.display().to_string(),
        });
    }
    let published = match &spec.published {
        Some(p) => Some(read_published(&spec_dir.join(p))?),
        None => None,
    };
    let pubs: Vec<Option<f64>> = rows
        .iter()
        .map(|r| published.as_ref().and_then(|p| p.lookup(r)))
        .collect();
    store::write_atomic(
        &out.join("results.csv"),
        csv_text(&rows, &pubs, published.is_some()).as_bytes(),
    )?;
    store::write_atomic(
        &out.join("results.md"),
        markdown(spec, &rows, &pubs).as_bytes(),
    )?;
    for plot in &spec.plots {
        let svg = plot_svg(spec, plot, &rows)?;
        store::write_atomic(&out.join(&plot.file), svg.as_bytes())?;
    }
    Ok(rows)
}

fn csv_text(rows: &[ResultRow], pubs: &[Option<f64>], with_published: bool) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = AXES.to_vec();
    header.extend([
        "center",
        "silos",
        "arcs",
        "max_degree",
        "cycle_time_ms",
        "rounds_per_s",
    ]);
    if with_published {
        header.extend(["published_ms", "relative_error"]);
    }
    w.write_record(&header).expect("in-memory CSV");
    for (r, p) in rows.iter().zip(pubs) {
        let mut rec: Vec<String> = header
            .iter()
            .take(14)
            .map(|c| r.column(c).unwrap_or_default())
            .collect();
        if with_published {
            rec.push(p.map_or(String::new(), |v| v.to_string()));
            rec.push(p.map_or(String::new(), |v| ((r.cycle_time_ms - v) / v).to_string()));
        }
        w.write_record(&rec).expect("in-memory CSV");
    }
    String::from_utf8(w.into_inner().expect("in-memory CSV")).expect("UTF-8")
}

fn markdown(spec: &ExperimentSpec, rows: &[ResultRow], pubs: &[Option<f64>]) -> String {
    // Show the axes that vary, plus underlay and overlay.
    let varying: Vec<&str> = AXES
        .iter()
        .copied()
        .filter(|a| {
            *a == "underlay"
                || *a == "overlay"
                || rows
                    .iter()
                    .map(|r| r.column(a))
                    .collect::<std::collections::BTreeSet<_>>()
                    .len()
                    > 1
        })
        .collect();
    let with_pub = pubs.iter().any(Option::is_some);
    let mut s = format!("# {}\n\n", spec.name);
    if !spec.description.is_empty() {
        let _ = writeln!(s, "{}\n", spec.description.trim());
    }
    let mut header: Vec<&str> = varying.clone();
    header.extend(["silos", "cycle time (ms)"]);
    if with_pub {
        header.extend(["published (ms)", "rel. error"]);
    }
    let _ = writeln!(s, "| {} |", header.join(" | "));
    let _ = writeln!(s, "|{}", "---|".repeat(header.len()));
    for (r, p) in rows.iter().zip(pubs) {
        let mut cells: Vec<String> = varying
            .iter()
            .map(|a| r.column(a).unwrap_or_default())
            .collect();
        cells.push(r.silos.to_string());
        cells.push(format!("{:.1}", r.cycle_time_ms));
        if with_pub {
            cells.push(p.map_or("-".into(), |v| format!("{v}")));
            cells.push(p.map_or("-".into(), |v| {
                format!("{:+.2}%", 100.0 * (r.cycle_time_ms - v) / v)
            }));
        }
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s
}

/// A numeric value of a column: a number, or a bandwidth such as `10G`.
fn numeric(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .or_else(|| parse_bandwidth(text).ok())
}

fn plot_svg(
    spec: &ExperimentSpec,
    plot: &PlotSpec,
    rows: &[ResultRow],
) -> Result<String, ExperimentError> {
    let bad = |m: String| ExperimentError::Invalid(format!("plot `{}`: {m}", plot.file));
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        let keep = plot
            .filter
            .iter()
            .all(|(k, v)| r.column(k).as_deref() == Some(v.as_str()));
        if !keep {
            continue;
        }
        let xs = r
            .column(&plot.x)
            .ok_or_else(|| bad(format!("unknown column `{}`", plot.x)))?;
        let ys = r
            .column(&plot.y)
            .ok_or_else(|| bad(format!("unknown column `{}`", plot.y)))?;
        let name = r
            .column(&plot.series)
            .ok_or_else(|| bad(format!("unknown column `{}`", plot.series)))?;
        let x =
            numeric(&xs).ok_or_else(|| bad(format!("`{xs}` in `{}` is not numeric", plot.x)))?;
        let y =
            numeric(&ys).ok_or_else(|| bad(format!("`{ys}` in `{}` is not numeric", plot.y)))?;
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((x, y)),
            None => series.push(Series {
                name,
                points: vec![(x, y)],
            }),
        }
    }
    if series.is_empty() {
        return Err(bad("no rows match its filter".into()));
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let title = plot.title.clone().unwrap_or_else(|| spec.name.clone());
    let axes = Axes {
        x_label: plot.x.clone(),
        y_label: plot.y.clone(),
        log_x: plot.log_x,
        log_y: plot.log_y,
        x_bandwidth: ["access", "center_access", "core_capacity"].contains(&plot.x.as_str()),
    };
    line_plot(&title, &axes, &series).map_err(bad)
}
