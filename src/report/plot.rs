//! SVG line plots (plotters' SVG backend): one line per series.

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

fn tick(v: f64) -> String {
    if v.abs() >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
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
    let x_fmt = |v: &f64| {
        if axes.x_bandwidth {
            format_bandwidth(*v)
        } else {
            tick(*v)
        }
    };
    let y_fmt = |v: &f64| tick(*v);
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
            (false, false) => draw!(builder.build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)),
            (true, false) => {
                draw!(builder.build_cartesian_2d((xr.0..xr.1).log_scale(), yr.0..yr.1))
            }
            (false, true) => {
                draw!(builder.build_cartesian_2d(xr.0..xr.1, (yr.0..yr.1).log_scale()))
            }
            (true, true) => {
                draw!(builder.build_cartesian_2d((xr.0..xr.1).log_scale(), (yr.0..yr.1).log_scale()))
            }
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

    #[test]
    fn axis_titles_have_units() {
        assert_eq!(axis_title("cycle_time_ms"), "cycle time (ms)");
        assert_eq!(axis_title("access"), "access capacity per silo (bit/s)");
        assert_eq!(axis_title("queue_wait_ms"), "queue wait (ms)");
        assert_eq!(axis_title("lambda2"), "lambda2");
    }
}
