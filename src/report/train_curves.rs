//! SVG plots of training curves, overlays side by side: loss and accuracy
//! versus rounds and versus wall-clock time (2 x 2 panels).

use std::path::Path;

use plotters::prelude::*;

use super::plot::{legend_width, linear_axis, series_color, split_with_legend};
use crate::train::report::RoundRecord;

/// Writes `path` (SVG) with the curves of every run.
pub fn plot_runs(path: &Path, runs: &[(String, Vec<RoundRecord>)]) -> Result<(), String> {
    let labels: Vec<String> = runs.iter().map(|(name, _)| name.clone()).collect();
    let root = SVGBackend::new(path, (1200 + legend_width(&labels), 800)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    // One legend for the four panels, right of them.
    let panels = split_with_legend(&root, 1200, 40, &labels)?.split_evenly((2, 2));
    type Get = fn(&RoundRecord) -> f64;
    const LOSS: &str = "training loss (mean over silos)";
    const ACC: &str = "test accuracy (mean over silos)";
    let specs: [(&str, &str, &str, bool, Get); 4] = [
        ("training loss vs rounds", "round", LOSS, false, |r| {
            r.train_loss.mean
        }),
        (
            "training loss vs wall-clock",
            "wall-clock time (s)",
            LOSS,
            true,
            |r| r.train_loss.mean,
        ),
        ("test accuracy vs rounds", "round", ACC, false, |r| {
            r.test_acc.mean
        }),
        (
            "test accuracy vs wall-clock",
            "wall-clock time (s)",
            ACC,
            true,
            |r| r.test_acc.mean,
        ),
    ];
    for (area, (title, xlabel, ylabel, wall, get)) in panels.iter().zip(specs) {
        let pts: Vec<Vec<(f64, f64)>> = runs
            .iter()
            .map(|(_, recs)| {
                recs.iter()
                    .map(|r| {
                        let x = if wall {
                            r.wall_clock_ms / 1e3
                        } else {
                            r.round as f64
                        };
                        (x, get(r))
                    })
                    .filter(|p| p.1.is_finite())
                    .collect()
            })
            .collect();
        let all = pts.iter().flatten();
        let xmax = all.clone().map(|p| p.0).fold(1e-9, f64::max);
        let ymin = all.clone().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let ymax = all.map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let (ymin, ymax) = if ymin.is_finite() && ymax > ymin {
            (ymin, ymax)
        } else {
            (0.0, 1.0)
        };
        let pad = (ymax - ymin) * 0.05;
        let (x_axis, xt) = linear_axis(0.0, xmax);
        let (y_axis, yt) = linear_axis(ymin - pad, ymax + pad);
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(50)
            .build_cartesian_2d(x_axis, y_axis)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(xlabel)
            .y_desc(ylabel)
            .x_label_formatter(&|v| xt.label(*v))
            .y_label_formatter(&|v| yt.label(*v))
            .draw()
            .map_err(|e| e.to_string())?;
        for (k, p) in pts.into_iter().enumerate() {
            chart
                .draw_series(LineSeries::new(p, series_color(k).stroke_width(2)))
                .map_err(|e| e.to_string())?;
        }
    }
    root.present().map_err(|e| e.to_string())
}
