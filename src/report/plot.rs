//! SVG line plots (plotters' SVG backend): one line per series.

use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::units::format_bandwidth;

/// A named line of `(x, y)` points, sorted by x.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
}

/// Line colours shared by every fedtopo plot: 12 distinct colours that
/// colour-blind readers tell apart (Paul Tol's "muted" scheme with blue,
/// orange and grey from his "vibrant" one). Series 13 and on reuse them with
/// another marker ([`Marker`]).
pub const PALETTE: [RGBColor; 12] = [
    RGBColor(0x00, 0x77, 0xBB), // blue
    RGBColor(0xEE, 0x77, 0x33), // orange
    RGBColor(0x11, 0x77, 0x33), // green
    RGBColor(0xCC, 0x66, 0x77), // rose
    RGBColor(0x33, 0x22, 0x88), // indigo
    RGBColor(0xDD, 0xCC, 0x77), // sand
    RGBColor(0x88, 0xCC, 0xEE), // cyan
    RGBColor(0x88, 0x22, 0x55), // wine
    RGBColor(0x44, 0xAA, 0x99), // teal
    RGBColor(0x99, 0x99, 0x33), // olive
    RGBColor(0xAA, 0x44, 0x99), // purple
    RGBColor(0x55, 0x55, 0x55), // dark grey
];

/// The colour of series `i`.
pub fn series_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Point marker of a series: circles for the first 12 series, then
/// triangles, then crosses (so no two of 36 series look alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// Filled circle.
    Circle,
    /// Filled triangle.
    Triangle,
    /// Cross.
    Cross,
}

/// The marker of series `i`.
pub fn series_marker(i: usize) -> Marker {
    match (i / PALETTE.len()) % 3 {
        0 => Marker::Circle,
        1 => Marker::Triangle,
        _ => Marker::Cross,
    }
}

/// Width in pixels of the legend column of `labels` (a line sample, a
/// marker and the label at ~7.5 px per character).
pub fn legend_width(labels: &[String]) -> u32 {
    let chars = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    (LEGEND_TEXT_X as f64 + chars as f64 * 7.5 + 16.0).clamp(100.0, 600.0) as u32
}

/// x of a legend label's left edge, relative to the legend column.
const LEGEND_TEXT_X: i32 = 44;

/// Where the legend rows sit: y of each row's centre in the legend column
/// of a canvas `height` pixels high (from `top`, 20 px apart, closer when
/// they would not fit).
pub fn legend_rows(count: usize, top: i32, height: u32) -> Vec<i32> {
    let room = (height as i32 - top - 10).max(1);
    let step = if count == 0 {
        20
    } else {
        (room / count as i32).clamp(8, 20)
    };
    (0..count as i32)
        .map(|i| top + step / 2 + i * step)
        .collect()
}

/// Splits `root` into the plotting area (the left `plot_width` pixels) and
/// the legend column to its right, and draws the legend of `labels`
/// (series `i` in [`series_color`] `i` with [`series_marker`] `i`) there:
/// the legend never covers data.
pub fn split_with_legend<'a>(
    root: &DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    plot_width: u32,
    top: i32,
    labels: &[String],
) -> Result<DrawingArea<SVGBackend<'a>, plotters::coord::Shift>, String> {
    let (plot, legend) = root.split_horizontally(plot_width);
    let (_, height) = legend.dim_in_pixel();
    let rows = legend_rows(labels.len(), top, height);
    let font = ("sans-serif", 14).into_font();
    for (i, (label, &y)) in labels.iter().zip(&rows).enumerate() {
        let color = series_color(i);
        legend
            .draw(&PathElement::new(
                vec![(8, y), (36, y)],
                color.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
        draw_marker(&legend, series_marker(i), (22, y), color)?;
        legend
            .draw(&Text::new(
                label.clone(),
                (LEGEND_TEXT_X, y - 7),
                font.clone(),
            ))
            .map_err(|e| e.to_string())?;
    }
    Ok(plot)
}

/// Draws one marker in pixel coordinates of `area`.
fn draw_marker(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    marker: Marker,
    p: (i32, i32),
    color: RGBColor,
) -> Result<(), String> {
    let r = match marker {
        Marker::Circle => area.draw(&Circle::new(p, 3, color.filled())),
        Marker::Triangle => area.draw(&TriangleMarker::new(p, 4, color.filled())),
        Marker::Cross => area.draw(&Cross::new(p, 4, color.stroke_width(2))),
    };
    r.map_err(|e| e.to_string())
}

/// Axis title of a result column: its quantity and unit (`cycle_time_ms`
/// -> `cycle time (ms)`); other `*_ms` columns get ` (ms)`, anything else
/// keeps its name.
pub fn axis_title(column: &str) -> String {
    let known = match column {
        "access" => "access capacity per silo (bit/s)",
        "center_access" => "access capacity of the STAR centre (bit/s)",
        "core_capacity" => "core link capacity (bit/s)",
        "local_steps" => "local steps per round",
        "matcha_budget" => "MATCHA communication budget",
        "silos" => "silos",
        "round" => "round",
        "rounds" => "rounds",
        "total_gb" => "data sent (GB)",
        "gb_to_target" => "data sent to the target (GB)",
        "wall_clock_ms" => "wall-clock time (ms)",
        "cycle_time_ms" => "cycle time (ms)",
        "rounds_per_s" => "rounds per second (1/s)",
        "steady_round_ms" => "steady-state round time (ms)",
        "mean_round_ms" => "mean round time (ms)",
        "median_round_ms" => "median round time (ms)",
        "p95_round_ms" => "95th percentile round time (ms)",
        "max_round_ms" => "longest round (ms)",
        "makespan_ms" => "makespan (ms)",
        "maxplus_ms" => "max-plus cycle time (ms)",
        "time_to_target_ms" => "time to the target (ms)",
        "final_accuracy" | "final_test_acc" => "final test accuracy",
        "best_accuracy" => "best test accuracy",
        "final_train_loss" => "final training loss",
        "train_loss_mean" => "training loss (mean over silos)",
        "test_acc_mean" => "test accuracy (mean over silos)",
        "matcha_over_ring" => "MATCHA cycle time / RING cycle time",
        "over_ring" => "ratio to RING",
        "lr" => "learning rate",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    match column.strip_suffix("_ms") {
        Some(q) if !q.is_empty() => format!("{} (ms)", q.replace('_', " ")),
        _ => column.to_string(),
    }
}

fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if log {
        (lo * 0.8, hi * 1.25)
    } else {
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 1e-3).max(1e-9);
        (lo - pad, hi + pad)
    }
}

/// Axes of a [`line_plot`].
#[derive(Debug, Clone, Default)]
pub struct Axes {
    /// x axis label.
    pub x_label: String,
    /// y axis label.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// x values are bandwidths in bit/s (ticks as `100 Mbit/s`).
    pub x_bandwidth: bool,
}

/// At most this many labelled ticks per axis.
pub const MAX_TICKS: usize = 10;

/// The labelled ticks of one axis: where they sit and what they say.
///
/// Positions are "nice" numbers (multiples of 1, 2 or 5 times a power of
/// ten; on a logarithmic axis 1, 2, 5 or 1 times each decade, falling back
/// to linear steps when the range spans less than a decade), no two equal;
/// labels are printed with just enough decimals that no two read the same
/// (issue 26: plotters' own ticks repeated labels, e.g. `1000, 1000` on a
/// log axis whose decade boundary it generated twice, or `0.05, 0.05`).
#[derive(Debug, Clone, PartialEq)]
pub struct AxisTicks {
    /// Tick positions, increasing, distinct.
    pub values: Vec<f64>,
    /// One label per position, all distinct.
    pub labels: Vec<String>,
}

impl AxisTicks {
    /// Ticks of the range `lo..hi` (`log`: a logarithmic axis, `lo > 0`);
    /// `bandwidth`: labels as bandwidths (`100 Mbit/s`) when those are
    /// distinct.
    pub fn new(lo: f64, hi: f64, log: bool, bandwidth: bool) -> AxisTicks {
        let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        let values = if log && lo > 0.0 && hi / lo >= 10.0 {
            log_ticks(lo, hi)
        } else {
            linear_ticks(lo, hi)
        };
        let numbers = || {
            if log {
                values.iter().map(|&v| shortest_label(v)).collect()
            } else {
                number_labels(&values)
            }
        };
        let labels = if bandwidth {
            let b: Vec<String> = values.iter().map(|&v| format_bandwidth(v)).collect();
            if all_distinct(&b) {
                b
            } else {
                numbers()
            }
        } else {
            numbers()
        };
        AxisTicks { values, labels }
    }

    /// The label of tick `v` (one of [`Self::values`]); other values get a
    /// plain number.
    pub fn label(&self, v: f64) -> String {
        match self.values.iter().position(|&t| t == v) {
            Some(i) => self.labels[i].clone(),
            None => number_labels(&[v]).pop().unwrap_or_default(),
        }
    }
}

/// A plotters axis whose labelled ticks are an [`AxisTicks`]' positions
/// (and no light grid lines), mapping values as `inner` does.
pub struct Ticked<R> {
    inner: R,
    ticks: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Ticked<R> {
    /// `inner` with tick positions `ticks`.
    pub fn new(inner: impl Into<R>, ticks: &AxisTicks) -> Self {
        Ticked {
            inner: inner.into(),
            ticks: ticks.values.clone(),
        }
    }
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }

    fn axis_pixel_range(&self, limit: (i32, i32)) -> std::ops::Range<i32> {
        self.inner.axis_pixel_range(limit)
    }
}

/// A linear axis over `lo..hi` with the ticks of [`AxisTicks::new`].
pub fn linear_axis(lo: f64, hi: f64) -> (Ticked<RangedCoordf64>, AxisTicks) {
    let t = AxisTicks::new(lo, hi, false, false);
    (Ticked::new(lo..hi, &t), t)
}

fn all_distinct(labels: &[String]) -> bool {
    let set: std::collections::HashSet<&String> = labels.iter().collect();
    set.len() == labels.len()
}

/// The "nice" step (1, 2 or 5 times a power of ten) that puts at most
/// [`MAX_TICKS`] ticks on a span.
fn nice_step(span: f64) -> f64 {
    let raw = span / (MAX_TICKS - 1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&s| s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// Multiples of a nice step inside `lo..=hi` (at least the two ends when
/// the range is a point or not finite).
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi - lo <= hi.abs().max(lo.abs()) * 1e-12 {
        return if lo.is_finite() { vec![lo] } else { Vec::new() };
    }
    let step = nice_step(hi - lo);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last)
        .map(|k| {
            // k * step, rounded through its decimal text so that 0.1 * 3 is
            // 0.3 (the label's value) and not 0.30000000000000004.
            let v = k as f64 * step;
            let digits = (-step.log10().floor()).max(0.0) as usize;
            format!("{v:.digits$}").parse::<f64>().unwrap_or(v)
        })
        .map(|v| if v == 0.0 { 0.0 } else { v })
        .collect()
}

/// Ticks of a logarithmic axis spanning at least a decade: 1, 2 and 5 per
/// decade up to 3 decades, each decade up to 9, then every k-th decade.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = (hi / lo).log10();
    let (mults, every): (&[u32], i32) = if decades <= 3.0 {
        (&[1, 2, 5], 1)
    } else if decades <= 9.0 {
        (&[1], 1)
    } else {
        (&[1], (decades / 9.0).ceil() as i32)
    };
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    let mut out = Vec::new();
    for d in first..=last {
        if (d - first) % every != 0 {
            continue;
        }
        for &m in mults {
            let v: f64 = format!("{m}e{d}").parse().unwrap_or(f64::NAN);
            if v >= lo * (1.0 - 1e-12) && v <= hi * (1.0 + 1e-12) {
                out.push(v);
            }
        }
    }
    out.sort_by(f64::total_cmp);
    out.dedup();
    out
}

/// Labels of `values`: fixed decimals (the fewest that keep every label
/// distinct and every value exact to its last digit), or `2e6`-style
/// mantissa and exponent when the values reach a million or fall below
/// 0.001 without being zero.
fn number_labels(values: &[f64]) -> Vec<String> {
    let big = values.iter().any(|v| v.abs() >= 1e6);
    let tiny = values.iter().all(|v| *v == 0.0 || v.abs() < 1e-3);
    if big || (tiny && values.iter().any(|v| *v != 0.0)) {
        for digits in 0..=12 {
            let l: Vec<String> = values.iter().map(|v| sci_label(*v, digits)).collect();
            if all_distinct(&l) {
                return l;
            }
        }
    }
    let mut fallback = Vec::new();
    for digits in 0..=12usize {
        let l: Vec<String> = values
            .iter()
            .map(|v| {
                let s = format!("{v:.digits$}");
                // No "-0" or "-0.00".
                if s.trim_start_matches('-')
                    .chars()
                    .all(|c| c == '0' || c == '.')
                {
                    s.trim_start_matches('-').to_string()
                } else {
                    s
                }
            })
            .collect();
        let exact = values.iter().zip(&l).all(|(v, s)| {
            s.parse::<f64>()
                .is_ok_and(|p| (p - v).abs() <= v.abs() * 1e-9)
        });
        if all_distinct(&l) && exact {
            return l;
        }
        if fallback.is_empty() && all_distinct(&l) {
            fallback = l;
        }
    }
    if fallback.is_empty() {
        values.iter().map(|v| format!("{v}")).collect()
    } else {
        fallback
    }
}

/// The shortest text that reads back as `v` (`0.0002`, `5000`; `2e6`
/// from a million on): distinct values get distinct labels.
fn shortest_label(v: f64) -> String {
    if v.abs() >= 1e6 {
        (0..=16)
            .map(|d| sci_label(v, d))
            .find(|s| s.parse::<f64>().ok() == Some(v))
            .unwrap_or_else(|| format!("{v:e}"))
    } else {
        format!("{v}")
    }
}

/// `v` as `m e k` with `digits` decimals in the mantissa (`2e6`, `1.5e-4`).
fn sci_label(v: f64, digits: usize) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let s = format!("{v:.digits$e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let m = if m.contains('.') {
                m.trim_end_matches('0').trim_end_matches('.')
            } else {
                m
            };
            format!("{m}e{e}")
        }
        None => s,
    }
}

/// Width of the plotting part of a [`line_plot`] canvas, px (the legend
/// column is added to its right).
pub const PLOT_WIDTH: u32 = 800;

/// Height of a [`line_plot`] canvas, px.
pub const PLOT_HEIGHT: u32 = 500;

/// Draws `series` as an SVG line plot with markers; the legend sits in a
/// column right of the plot ([`split_with_legend`]).
pub fn line_plot(title: &str, axes: &Axes, series: &[Series]) -> Result<String, String> {
    let (log_x, log_y) = (axes.log_x, axes.log_y);
    let labels: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    let width = PLOT_WIDTH + legend_width(&labels);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, PLOT_HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let area = split_with_legend(&root, PLOT_WIDTH, 50, &labels)?;
        let xr = range(
            series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
            log_x,
        );
        let yr = range(
            series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
            log_y,
        );
        let xt = AxisTicks::new(xr.0, xr.1, log_x, axes.x_bandwidth);
        let yt = AxisTicks::new(yr.0, yr.1, log_y, false);
        let x_fmt = |v: &f64| xt.label(*v);
        let y_fmt = |v: &f64| yt.label(*v);
        let mut builder = ChartBuilder::on(&area);
        builder
            .caption(title, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70);
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart.map_err(|e| e.to_string())?;
                chart
                    .configure_mesh()
                    .x_desc(axes.x_label.as_str())
                    .y_desc(axes.y_label.as_str())
                    .x_label_formatter(&x_fmt)
                    .y_label_formatter(&y_fmt)
                    .draw()
                    .map_err(|e| e.to_string())?;
                for (i, s) in series.iter().enumerate() {
                    let color = series_color(i);
                    let points = s.points.iter().copied();
                    chart
                        .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                        .map_err(|e| e.to_string())?;
                    match series_marker(i) {
                        Marker::Circle => chart
                            .draw_series(points.map(|p| Circle::new(p, 3, color.filled())))
                            .map(|_| ()),
                        Marker::Triangle => chart
                            .draw_series(points.map(|p| TriangleMarker::new(p, 4, color.filled())))
                            .map(|_| ()),
                        Marker::Cross => chart
                            .draw_series(points.map(|p| Cross::new(p, 4, color.stroke_width(2))))
                            .map(|_| ()),
                    }
                    .map_err(|e| e.to_string())?;
                }
            }};
        }
        match (log_x, log_y) {
            (false, false) => draw!(builder.build_cartesian_2d(
                Ticked::<RangedCoordf64>::new(xr.0..xr.1, &xt),
                Ticked::<RangedCoordf64>::new(yr.0..yr.1, &yt)
            )),
            (true, false) => draw!(builder.build_cartesian_2d(
                Ticked::<LogCoord<f64>>::new((xr.0..xr.1).log_scale(), &xt),
                Ticked::<RangedCoordf64>::new(yr.0..yr.1, &yt)
            )),
            (false, true) => draw!(builder.build_cartesian_2d(
                Ticked::<RangedCoordf64>::new(xr.0..xr.1, &xt),
                Ticked::<LogCoord<f64>>::new((yr.0..yr.1).log_scale(), &yt)
            )),
            (true, true) => draw!(builder.build_cartesian_2d(
                Ticked::<LogCoord<f64>>::new((xr.0..xr.1).log_scale(), &xt),
                Ticked::<LogCoord<f64>>::new((yr.0..yr.1).log_scale(), &yt)
            )),
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(stroke colour, x of every point)` of each `<polyline>` of `svg`.
    fn polylines(svg: &str) -> Vec<(String, Vec<f64>)> {
        svg.split("<polyline")
            .skip(1)
            .map(|el| {
                let attr = |name: &str| {
                    let start = el.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                    el[start..start + el[start..].find('"').unwrap()].to_string()
                };
                let xs = attr("points")
                    .split_whitespace()
                    .map(|p| p.split(',').next().unwrap().parse().unwrap())
                    .collect();
                (attr("stroke"), xs)
            })
            .collect()
    }

    /// x of the `<text>` element showing `label`.
    fn text_x(svg: &str, label: &str) -> f64 {
        let el = svg
            .split("<text")
            .find(|el| el.contains(&format!(">\n{label}\n</text>")))
            .unwrap_or_else(|| panic!("no text `{label}`"));
        let start = el.find("x=\"").unwrap() + 3;
        el[start..start + el[start..].find('"').unwrap()]
            .parse()
            .unwrap()
    }

    fn twelve() -> Vec<Series> {
        (0..12)
            .map(|i| Series {
                name: format!("series number {i}"),
                points: (0..5).map(|k| (k as f64, (k * (i + 1)) as f64)).collect(),
            })
            .collect()
    }

    #[test]
    fn twelve_series_get_twelve_colours() {
        let colours: std::collections::BTreeSet<_> = (0..12)
            .map(series_color)
            .collect::<Vec<_>>()
            .into_iter()
            .map(|c| (c.0, c.1, c.2))
            .collect();
        assert_eq!(colours.len(), 12);
        let svg = line_plot("t", &Axes::default(), &twelve()).unwrap();
        let data: std::collections::BTreeSet<String> = polylines(&svg)
            .into_iter()
            .filter(|(_, xs)| xs.len() == 5)
            .map(|(stroke, _)| stroke)
            .collect();
        assert_eq!(data.len(), 12, "{data:?}");
        // Series 13 reuses a colour with another marker.
        assert_eq!(series_color(12), series_color(0));
        assert_ne!(series_marker(12), series_marker(0));
    }

    #[test]
    fn the_legend_is_right_of_the_data() {
        let series = twelve();
        let svg = line_plot("t", &Axes::default(), &series).unwrap();
        // Every data line lies in the plotting part, every label beyond it.
        for (_, xs) in polylines(&svg).iter().filter(|(_, xs)| xs.len() == 5) {
            assert!(xs.iter().all(|&x| x < f64::from(PLOT_WIDTH)), "{xs:?}");
        }
        for s in &series {
            assert!(text_x(&svg, &s.name) >= f64::from(PLOT_WIDTH));
        }
        let width =
            PLOT_WIDTH + legend_width(&series.iter().map(|s| s.name.clone()).collect::<Vec<_>>());
        assert!(
            svg.starts_with(&format!("<svg width=\"{width}\"")),
            "{}",
            &svg[..80]
        );
        // The rows fit the canvas, apart and in order.
        let rows = legend_rows(40, 50, PLOT_HEIGHT);
        assert!(rows.windows(2).all(|w| w[1] > w[0]));
        assert!(*rows.last().unwrap() < PLOT_HEIGHT as i32);
    }

    /// Every tick label on a plot's axis, from the SVG (plotters writes
    /// each as a `<text>` whose anchor is `end` on the y axis and `middle`
    /// on the x axis; titles and legend labels are not numbers).
    #[test]
    fn tick_labels_never_repeat() {
        let mut ranges = vec![
            (83.7, 84.5),
            (0.045, 0.056),
            (0.04999, 0.05001),
            (-1.0, 1.0),
            (0.0, 1e-7),
            (1e6, 1.0001e6),
            (12.0, 12.0),
        ];
        // A sweep over magnitudes and widths.
        for e in -8..=9 {
            for w in [1e-4, 0.003, 0.07, 0.5, 1.0, 3.3, 9.9, 47.0, 1e3] {
                let lo = 1.37 * 10f64.powi(e);
                ranges.push((lo, lo * (1.0 + w)));
                ranges.push((-lo, lo * w));
            }
        }
        for &(lo, hi) in &ranges {
            for log in [false, true] {
                if log && lo <= 0.0 {
                    continue;
                }
                for bw in [false, true] {
                    let t = AxisTicks::new(lo, hi, log, bw);
                    assert!(!t.values.is_empty(), "{lo}..{hi} log {log}: no tick");
                    assert!(
                        all_distinct(&t.labels),
                        "{lo}..{hi} log {log}: {:?}",
                        t.labels
                    );
                    assert!(t.values.windows(2).all(|w| w[0] < w[1]), "{:?}", t.values);
                    let slack = (hi - lo).abs() * 1e-9 + hi.abs() * 1e-12;
                    assert!(
                        t.values.iter().all(|&v| v >= lo - slack && v <= hi + slack),
                        "{lo}..{hi}: {:?}",
                        t.values
                    );
                    if !log && hi - lo > hi.abs() * 1e-9 {
                        assert!(
                            (2..=MAX_TICKS).contains(&t.values.len()),
                            "{lo}..{hi}: {:?}",
                            t.values
                        );
                    }
                }
            }
        }
        // The committed plots that showed it: a log axis from 100 to 5000
        // (plotters wrote `1000` twice), seconds from 1e-4 to 200 on a log
        // axis (`0.00` three times).
        let t = AxisTicks::new(80.0, 5300.0, true, false);
        assert_eq!(
            t.labels.iter().filter(|l| *l == "1000").count(),
            1,
            "{:?}",
            t.labels
        );
        let t = AxisTicks::new(8e-5, 250.0, true, false);
        assert!(t.labels.contains(&"0.0001".to_string()), "{:?}", t.labels);
        let t = AxisTicks::new(83.7, 84.5, false, false);
        assert_eq!(
            t.labels,
            ["83.7", "83.8", "83.9", "84.0", "84.1", "84.2", "84.3", "84.4", "84.5"]
        );
    }

    /// A drawn plot's y-axis tick labels (text anchored at its end, left of
    /// the plotting area) are distinct, on the ranges that repeated before.
    #[test]
    fn drawn_ticks_are_distinct() {
        for (ys, log_y) in [
            (vec![83.7, 83.9, 84.2], false),
            (vec![0.0499, 0.0501], false),
            (vec![120.0, 4900.0], true),
        ] {
            let series = [Series {
                name: "s".into(),
                points: ys.iter().enumerate().map(|(i, &y)| (i as f64, y)).collect(),
            }];
            let axes = Axes {
                log_y,
                ..Axes::default()
            };
            let svg = line_plot("t", &axes, &series).unwrap();
            let labels: Vec<String> = svg
                .split("<text")
                .skip(1)
                .filter(|el| el.contains("text-anchor=\"end\""))
                .map(|el| {
                    let body = &el[el.find('>').unwrap() + 1..];
                    body[..body.find("</text>").unwrap()].trim().to_string()
                })
                .collect();
            assert!(labels.len() >= 2, "{labels:?}");
            assert!(all_distinct(&labels), "{labels:?}");
        }
    }

    #[test]
    fn axis_titles_have_units() {
        assert_eq!(axis_title("cycle_time_ms"), "cycle time (ms)");
        assert_eq!(axis_title("access"), "access capacity per silo (bit/s)");
        assert_eq!(axis_title("queue_wait_ms"), "queue wait (ms)");
        assert_eq!(axis_title("lambda2"), "lambda2");
    }
}
