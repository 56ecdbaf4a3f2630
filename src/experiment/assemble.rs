//! Joining stored job results, in grid order, into the experiment's outputs:
//! `results.csv`, `results.md` (with ours vs published when the experiment
//! names a published CSV) and SVG plots. The same stored results always give
//! the same bytes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::csv_file::Columns;
use crate::report::plot::{axis_title, line_plot, Axes, Series};

use super::aggregate;
use super::grid::Job;
use super::row::{numeric, Cell, ResultRow};
use super::spec::{output_path_parts, ExperimentSpec, PlotSpec, RatioSpec};
use super::{store, ExperimentError};

/// Published values keyed by the join columns they share with our rows.
struct Published {
    /// The value column's name: `published_ms`, or `published` for a
    /// metric in other units (a ratio, an accuracy).
    value_column: String,
    columns: Vec<String>,
    values: BTreeMap<Vec<String>, f64>,
}

/// Reads the published CSV at `path`: a value column (`published_ms` or
/// `published`) and join columns, each a grid axis of `axes` (at least
/// one). An unknown or misspelled column, a column named twice, both value
/// columns, or two rows with the same join values are errors (never one
/// value joined to every row, never "the last row wins").
fn read_published(path: &Path, axes: &[&str]) -> Result<Published, ExperimentError> {
    let text = crate::input_file::read_text(path, crate::input_file::MAX_INPUT_BYTES).map_err(
        |source| ExperimentError::Io {
            path: path.display().to_string(),
            source,
        },
    )?;
    let bad =
        |line: u64, m: String| ExperimentError::Invalid(format!("{}:{line}: {m}", path.display()));
    let mut rdr = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = rdr.headers().map_err(|e| bad(1, e.to_string()))?.clone();
    let header_line = header.position().map_or(1, |p| p.line());
    const VALUES: [&str; 2] = ["published_ms", "published"];
    let mut accepted: Vec<&str> = VALUES.to_vec();
    accepted.extend(axes.iter().copied());
    Columns::accepted(&header, &accepted).map_err(|m| {
        bad(
            header_line,
            format!("{m} (a value column and the grid axes to join on)"),
        )
    })?;
    let values_at: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| VALUES.iter().any(|v| h.eq_ignore_ascii_case(v)))
        .map(|(i, _)| i)
        .collect();
    let value_col =
        match values_at[..] {
            [one] => one,
            [] => {
                return Err(bad(
                    header_line,
                    "expected a `published_ms` or `published` column".into(),
                ))
            }
            _ => return Err(bad(
                header_line,
                "both `published_ms` and `published`: which is the value is ambiguous; give one"
                    .into(),
            )),
        };
    // Join columns by the axis names as the grid spells them.
    let join: Vec<(usize, String)> = header
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != value_col)
        .filter_map(|(i, h)| {
            axes.iter()
                .find(|a| a.eq_ignore_ascii_case(h))
                .map(|a| (i, a.to_string()))
        })
        .collect();
    if join.is_empty() {
        return Err(bad(
            header_line,
            format!(
                "no column to join on: name one or more grid axes ({}) beside the value",
                axes.join(", ")
            ),
        ));
    }
    let mut values = BTreeMap::new();
    let mut first_line: BTreeMap<Vec<String>, u64> = BTreeMap::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| bad(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = rec.position().map_or(0, |p| p.line());
        let cell = |i: usize| rec.get(i).unwrap_or("");
        let key: Vec<String> = join.iter().map(|(i, _)| cell(*i).to_string()).collect();
        let v: f64 = cell(value_col)
            .parse()
            .map_err(|_| bad(line, format!("`{}` is not a number", cell(value_col))))?;
        if let Some(first) = first_line.get(&key) {
            return Err(bad(
                line,
                format!(
                    "the same {} as line {first}: give every published value one row",
                    join.iter()
                        .zip(&key)
                        .map(|((_, a), v)| format!("{a} = `{v}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        first_line.insert(key.clone(), line);
        values.insert(key, v);
    }
    Ok(Published {
        value_column: header[value_col].to_string(),
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
    add_ratios(&spec.ratios, jobs, &mut rows)?;
    let metric = spec.metric();
    let columns = header(&rows);
    if !rows.is_empty() && !columns.contains(&metric) {
        return Err(ExperimentError::Invalid(format!(
            "metric `{metric}` is not a result column; expected one of {}",
            columns.join(", ")
        )));
    }
    let axes: Vec<&str> = spec.grid.axes().iter().map(|(a, _)| *a).collect();
    let published = match &spec.published {
        Some(p) => Some(read_published(&spec_dir.join(p), &axes)?),
        None => None,
    };
    let pubs: Vec<Option<f64>> = rows
        .iter()
        .map(|r| published.as_ref().and_then(|p| p.lookup(r)))
        .collect();
    store::write_atomic(
        &out.join("results.csv"),
        csv_text(
            &columns,
            &rows,
            &pubs,
            published.as_ref().map(|p| p.value_column.as_str()),
            &metric,
        )
        .as_bytes(),
    )?;
    let mut md = markdown(spec, &rows, &pubs, &metric)?;
    if let Some(over) = &spec.aggregate {
        let mut columns = spec.table_columns();
        if !columns.contains(&metric) {
            columns.push(metric.clone());
        }
        let groups = aggregate::groups(jobs, &rows, over, &columns);
        let group_pubs: Vec<Option<f64>> = groups.iter().map(|g| pubs[g.rows[0]]).collect();
        let shown: Vec<&str> = varying_axes(spec)
            .into_iter()
            .filter(|a| a != over)
            .collect();
        md += &aggregate::summary_markdown(&groups, over, &shown, &columns, &group_pubs, &metric);
        store::write_atomic(
            &out.join("summary.csv"),
            aggregate::summary_csv(&groups, &columns).as_bytes(),
        )?;
    }
    store::write_atomic(&out.join("results.md"), md.as_bytes())?;
    for plot in &spec.plots {
        check_plot_columns(plot, &rows)?;
        let svg = if plot.per_round {
            let dirs: Vec<_> = jobs.iter().map(|j| store::run_dir(out, j)).collect();
            per_round_svg(spec, plot, &rows, &dirs)?
        } else {
            plot_svg(spec, plot, &rows)?
        };
        store::write_atomic(&inside(out, &plot.file)?, svg.as_bytes())?;
    }
    Ok(rows)
}

/// The path of output `file` under `out`, refused unless it stays there:
/// `file` is relative without `..` ([`output_path_parts`], checked when
/// the experiment is read), and its folder, once created, is inside `out`
/// also after symbolic links are followed.
fn inside(out: &Path, file: &str) -> Result<std::path::PathBuf, ExperimentError> {
    let bad = |why: String| ExperimentError::Invalid(format!("output file `{file}` {why}"));
    let parts = output_path_parts(file).map_err(bad)?;
    let path = parts.iter().fold(out.to_path_buf(), |p, c| p.join(c));
    let dir = path.parent().unwrap_or(out);
    std::fs::create_dir_all(dir).map_err(|source| ExperimentError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let canonical = |p: &Path| {
        std::fs::canonicalize(p).map_err(|source| ExperimentError::Io {
            path: p.display().to_string(),
            source,
        })
    };
    let (root, folder) = (canonical(out)?, canonical(dir)?);
    if !folder.starts_with(&root) {
        return Err(bad(format!(
            "resolves to {}, outside the output directory {} (a symbolic link)",
            folder.display(),
            root.display()
        )));
    }
    Ok(path)
}

/// The union of the rows' columns, in first-seen order.
fn header(rows: &[ResultRow]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for r in rows {
        for c in r.names() {
            if !cols.iter().any(|x| x == c) {
                cols.push(c.to_string());
            }
        }
    }
    cols
}

fn relative(ours: Option<f64>, published: f64) -> Option<f64> {
    ours.map(|v| (v - published) / published)
}

/// Appends every ratio column to every row (rows and jobs in grid order).
fn add_ratios(
    ratios: &[RatioSpec],
    jobs: &[Job],
    rows: &mut [ResultRow],
) -> Result<(), ExperimentError> {
    if ratios.is_empty() {
        return Ok(());
    }
    let index: BTreeMap<&[(String, String)], usize> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.params.as_slice(), i))
        .collect();
    for r in ratios {
        if let Some(row) = rows.first() {
            if row.cell(&r.column).is_some() {
                return Err(ExperimentError::Invalid(format!(
                    "ratio column `{}` is already a result column; give it another name",
                    r.column
                )));
            }
            if row.cell(&r.of).is_none() {
                return Err(ExperimentError::Invalid(format!(
                    "ratio `{}`: `{}` is not a result column; expected one of {}",
                    r.column,
                    r.of,
                    row.names().collect::<Vec<_>>().join(", ")
                )));
            }
        }
        let values: Vec<Option<f64>> = jobs
            .iter()
            .zip(rows.iter())
            .map(|(job, row)| {
                let key: Vec<(String, String)> = job
                    .params
                    .iter()
                    .map(|(a, v)| (a.clone(), r.baseline.get(a).unwrap_or(v).clone()))
                    .collect();
                let base = index
                    .get(key.as_slice())
                    .and_then(|&b| rows[b].number(&r.of));
                match (row.number(&r.of), base) {
                    (Some(v), Some(b)) if b != 0.0 => Some(v / b),
                    _ => None,
                }
            })
            .collect();
        for (row, v) in rows.iter_mut().zip(values) {
            match v {
                Some(v) => row.push(&r.column, v),
                None => row.push(&r.column, ""),
            };
        }
    }
    Ok(())
}

fn csv_text(
    columns: &[String],
    rows: &[ResultRow],
    pubs: &[Option<f64>],
    published_column: Option<&str>,
    metric: &str,
) -> String {
    let with_published = published_column.is_some();
    // Every record has the header's length; writing to memory cannot fail.
    crate::csv_file::csv_text(false, |w| {
        let mut head: Vec<&str> = columns.iter().map(String::as_str).collect();
        if let Some(p) = published_column {
            head.extend([p, "relative_error"]);
        }
        w.write_record(&head)?;
        for (r, p) in rows.iter().zip(pubs) {
            let mut rec: Vec<String> = columns
                .iter()
                .map(|c| r.column(c).unwrap_or_default())
                .collect();
            if with_published {
                rec.push(p.map_or(String::new(), |v| v.to_string()));
                rec.push(
                    p.and_then(|v| relative(r.number(metric), v))
                        .map_or(String::new(), |e| e.to_string()),
                );
            }
            w.write_record(&rec)?;
        }
        Ok(())
    })
    .expect("in-memory CSV of equal-length records")
}

/// A cell for a Markdown table: measurements with one decimal, ratios
/// (columns containing `over`), losses and accuracies with three.
fn md_cell(column: &str, cell: Option<&Cell>) -> String {
    match cell {
        Some(Cell::Float(v)) if ["over", "loss", "acc"].iter().any(|k| column.contains(k)) => {
            format!("{v:.3}")
        }
        Some(Cell::Float(v)) => format!("{v:.1}"),
        Some(c) => c.to_string(),
        None => "-".into(),
    }
}

/// The axes shown in tables: those with several values in the grid, plus
/// underlay and overlay.
fn varying_axes(spec: &ExperimentSpec) -> Vec<&'static str> {
    spec.grid
        .axes()
        .into_iter()
        .filter(|(a, values)| *a == "underlay" || *a == "overlay" || values.len() > 1)
        .map(|(a, _)| a)
        .collect()
}

fn markdown(
    spec: &ExperimentSpec,
    rows: &[ResultRow],
    pubs: &[Option<f64>],
    metric: &str,
) -> Result<String, ExperimentError> {
    let varying = varying_axes(spec);
    let table = spec.table_columns();
    if let Some(r) = rows.first() {
        if let Some(bad) = table.iter().find(|c| r.cell(c).is_none()) {
            return Err(ExperimentError::Invalid(format!(
                "table column `{bad}` is not a result column; expected one of {}",
                r.names().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let with_pub = pubs.iter().any(Option::is_some);
    let mut s = format!("# {}\n\n", spec.name);
    if !spec.description.is_empty() {
        let _ = writeln!(s, "{}\n", spec.description.trim());
    }
    let mut head: Vec<String> = varying.iter().map(|a| a.to_string()).collect();
    head.extend(table.iter().cloned());
    if with_pub {
        head.push(format!("published {metric}"));
        head.push("rel. error".into());
    }
    let _ = writeln!(s, "| {} |", head.join(" | "));
    let _ = writeln!(s, "|{}", "---|".repeat(head.len()));
    for (r, p) in rows.iter().zip(pubs) {
        let mut cells: Vec<String> = varying
            .iter()
            .map(|a| r.column(a).unwrap_or_default())
            .collect();
        cells.extend(table.iter().map(|c| md_cell(c, r.cell(c))));
        if with_pub {
            cells.push(p.map_or("-".into(), |v| format!("{v}")));
            cells.push(
                p.and_then(|v| relative(r.number(metric), v))
                    .map_or("-".into(), |e| format!("{:+.2}%", 100.0 * e)),
            );
        }
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    Ok(s)
}

/// The line name of `row` in `plot`: its `series` columns joined by ` / `.
fn series_name(plot: &PlotSpec, row: &ResultRow) -> Result<String, ExperimentError> {
    plot.series
        .split(',')
        .map(|c| {
            row.column(c.trim()).ok_or_else(|| {
                ExperimentError::Invalid(format!(
                    "plot `{}`: unknown column `{}`",
                    plot.file,
                    c.trim()
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|v| v.join(" / "))
}

fn keeps(plot: &PlotSpec, row: &ResultRow) -> bool {
    plot.filter
        .iter()
        .all(|(k, v)| row.column(k).as_deref() == Some(v.as_str()))
}

/// Every column a plot names in `series` and `filter` (and `x`, `y` when
/// it plots result rows) is a result column: a misspelled one is an error
/// naming it and the columns, not a plot with no matching row.
fn check_plot_columns(plot: &PlotSpec, rows: &[ResultRow]) -> Result<(), ExperimentError> {
    let Some(row) = rows.first() else {
        return Ok(());
    };
    let mut named: Vec<(&str, &str)> = plot
        .series
        .split(',')
        .map(|c| ("series", c.trim()))
        .collect();
    named.extend(plot.filter.keys().map(|k| ("filter", k.as_str())));
    if !plot.per_round {
        named.extend([("x", plot.x.as_str()), ("y", plot.y.as_str())]);
    }
    match named.iter().find(|(_, c)| row.cell(c).is_none()) {
        Some((what, c)) => Err(ExperimentError::Invalid(format!(
            "plot `{}`: {what} column `{c}` is not a result column; expected one of {}",
            plot.file,
            row.names().collect::<Vec<_>>().join(", ")
        ))),
        None => Ok(()),
    }
}

/// One line per job from its `metrics.csv` (`dirs[i]` is row `i`'s run
/// directory).
fn per_round_svg(
    spec: &ExperimentSpec,
    plot: &PlotSpec,
    rows: &[ResultRow],
    dirs: &[std::path::PathBuf],
) -> Result<String, ExperimentError> {
    let bad = |m: String| ExperimentError::Invalid(format!("plot `{}`: {m}", plot.file));
    let mut series = Vec::new();
    for (r, dir) in rows.iter().zip(dirs) {
        if !keeps(plot, r) {
            continue;
        }
        let path = dir.join("metrics.csv");
        let text = crate::input_file::read_text(&path, crate::input_file::MAX_INPUT_BYTES)
            .map_err(|e| {
                bad(format!(
                    "{}: {e} (per_round plots need kind = \"train\")",
                    path.display()
                ))
            })?;
        let mut rdr = csv::Reader::from_reader(text.as_bytes());
        let header = rdr.headers().map_err(|e| bad(e.to_string()))?.clone();
        let col = |c: &str| {
            header
                .iter()
                .position(|h| h == c)
                .ok_or_else(|| bad(format!("`{c}` is not a column of {}", path.display())))
        };
        let (xi, yi) = (col(&plot.x)?, col(&plot.y)?);
        let mut points = Vec::new();
        for rec in rdr.records() {
            let rec = rec.map_err(|e| bad(format!("{}: {e}", path.display())))?;
            let num = |i: usize| {
                rec[i]
                    .parse::<f64>()
                    .map_err(|_| bad(format!("{}: `{}` is not a number", path.display(), &rec[i])))
            };
            points.push((num(xi)?, num(yi)?));
        }
        series.push(Series {
            name: series_name(plot, r)?,
            points,
        });
    }
    draw(spec, plot, &series)
}

fn plot_svg(
    spec: &ExperimentSpec,
    plot: &PlotSpec,
    rows: &[ResultRow],
) -> Result<String, ExperimentError> {
    let bad = |m: String| ExperimentError::Invalid(format!("plot `{}`: {m}", plot.file));
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        if !keeps(plot, r) {
            continue;
        }
        let xs = r
            .column(&plot.x)
            .ok_or_else(|| bad(format!("unknown column `{}`", plot.x)))?;
        let ys = r
            .column(&plot.y)
            .ok_or_else(|| bad(format!("unknown column `{}`", plot.y)))?;
        if xs.is_empty() || ys.is_empty() {
            // A value this row does not have (a static overlay's MATCHA
            // budget, a target not reached): no point.
            continue;
        }
        let name = series_name(plot, r)?;
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
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    draw(spec, plot, &series)
}

/// Draws `series` with the plot's title and axes (bandwidth ticks when x is
/// a capacity column).
fn draw(
    spec: &ExperimentSpec,
    plot: &PlotSpec,
    series: &[Series],
) -> Result<String, ExperimentError> {
    let bad = |m: String| ExperimentError::Invalid(format!("plot `{}`: {m}", plot.file));
    if series.is_empty() {
        return Err(bad("no rows match its filter".into()));
    }
    let title = plot.title.clone().unwrap_or_else(|| spec.name.clone());
    let axes = Axes {
        x_label: axis_title(&plot.x),
        y_label: axis_title(&plot.y),
        log_x: plot.log_x,
        log_y: plot.log_y,
        x_bandwidth: ["access", "center_access", "core_capacity"].contains(&plot.x.as_str()),
    };
    line_plot(&title, &axes, series).map_err(bad)
}
