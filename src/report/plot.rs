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

/// Line colours shared by every fedtopo plot (the matplotlib tab10 colours).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

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

/// Draws `series` as an SVG line plot with markers and a legend.
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
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let xr = range(
            series.iter().flat_map(|s| s.points.iter().map(|p| p.0)),
            log_x,
        );
        let yr = range(
            series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
            log_y,
        );
        let mut builder = ChartBuilder::on(&root);
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
                    let color = PALETTE[i % PALETTE.len()];
                    chart
                        .draw_series(LineSeries::new(
                            s.points.iter().copied(),
                            color.stroke_width(2),
                        ))
                        .map_err(|e| e.to_string())?
                        .label(s.name.clone())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                        });
                    chart
                        .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                        .map_err(|e| e.to_string())?;
                }
                chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.8))
                    .border_style(BLACK)
                    .draw()
                    .map_err(|e| e.to_string())?;
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
