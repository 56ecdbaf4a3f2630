//! Reports of round replays: per-silo start times, per-round durations,
//! link utilisation (CSV) and a round-completion timeline (SVG).

use crate::net::placement::silo_label;
use std::collections::BTreeMap;

use plotters::prelude::*;

use super::plot::{
    legend_width, linear_axis, series_color, split_with_legend, PLOT_HEIGHT, PLOT_WIDTH,
};
use serde::Serialize;

use super::table::Table;
use crate::net::delay::DelayModel;
use crate::replay::ReplayResult;
use crate::units::{BitsPerSec, Ms};

/// `overlay,network,round,silo,start_ms`: every `t_i(k)`.
pub fn starts_csv(results: &[ReplayResult]) -> String {
    let mut s = Table::new(["overlay", "network", "round", "silo", "start_ms"]);
    for r in results {
        for (k, row) in r.starts.iter().enumerate() {
            for (i, t) in row.iter().enumerate() {
                s.row([
                    r.overlay.clone(),
                    r.network.clone(),
                    k.to_string(),
                    i.to_string(),
                    format!("{t:.6}"),
                ]);
            }
        }
    }
    s.to_csv()
}

/// Statistics of the round durations of one replay, ms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundStats {
    /// Overlay name.
    pub overlay: String,
    /// Network model.
    pub network: String,
    /// Rounds replayed.
    pub rounds: usize,
    /// `max_i t_i(K) / K`, ms.
    pub mean_ms: Ms,
    /// Shortest round, ms.
    pub min_ms: Ms,
    /// Median round, ms.
    pub median_ms: Ms,
    /// 95th percentile (nearest rank), ms.
    pub p95_ms: Ms,
    /// Longest round, ms.
    pub max_ms: Ms,
    /// Steady-state slope over the second half, `(end(K) - end(K/2)) / (K - K/2)`, ms.
    pub steady_ms: Ms,
}

/// Duration statistics of `r`'s rounds.
pub fn round_stats(r: &ReplayResult) -> RoundStats {
    let mut d = r.round_durations();
    d.sort_by(f64::total_cmp);
    let k = d.len();
    let pick = |q: f64| {
        if k == 0 {
            0.0
        } else {
            d[((q * k as f64).ceil() as usize).clamp(1, k) - 1]
        }
    };
    let half = k / 2;
    let steady = if k > half {
        (r.round_end(k) - r.round_end(half)) / (k - half) as f64
    } else {
        0.0
    };
    RoundStats {
        overlay: r.overlay.clone(),
        network: r.network.clone(),
        rounds: k,
        mean_ms: r.mean_round_ms(),
        min_ms: d.first().copied().unwrap_or(0.0),
        median_ms: pick(0.5),
        p95_ms: pick(0.95),
        max_ms: d.last().copied().unwrap_or(0.0),
        steady_ms: steady,
    }
}

/// `overlay,network,round,first_start_ms,end_ms,duration_ms`, round
/// `k = 1..=K` ends when its last silo starts it.
pub fn rounds_csv(results: &[ReplayResult]) -> String {
    let mut s = Table::new([
        "overlay",
        "network",
        "round",
        "first_start_ms",
        "end_ms",
        "duration_ms",
    ]);
    for r in results {
        for k in 1..r.starts.len() {
            let first = r.starts[k].iter().copied().fold(f64::INFINITY, f64::min);
            let end = r.round_end(k);
            let dur = end - r.round_end(k - 1);
            s.row([
                r.overlay.clone(),
                r.network.clone(),
                k.to_string(),
                format!("{first:.6}"),
                format!("{end:.6}"),
                format!("{dur:.6}"),
            ]);
        }
    }
    s.to_csv()
}

/// Traffic carried by one link over a replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkUsage {
    /// `up`, `down` (silo access) or `core` (one direction of a core link).
    pub kind: &'static str,
    /// Silo label (access) or `A->B` router labels (core).
    pub name: String,
    /// Bits carried.
    pub bits: f64,
    /// Capacity, bit/s.
    pub capacity_bps: BitsPerSec,
    /// `bits / (capacity * makespan)`: mean utilisation over the run.
    pub utilisation: f64,
}

/// Per-link traffic of `r`: every transfer carries `M` bits over the
/// sender's uplink, each core link of its route (per direction) and the
/// receiver's downlink. Links that carried nothing are left out.
pub fn link_usage(r: &ReplayResult, model: &DelayModel, labels: &[String]) -> Vec<LinkUsage> {
    link_usage_labelled(r, model, labels, labels)
}

/// As [`link_usage`], with separate silo labels (access links) and router
/// labels (core links), for silo placements other than one per router.
pub fn link_usage_labelled(
    r: &ReplayResult,
    model: &DelayModel,
    labels: &[String],
    router_labels: &[String],
) -> Vec<LinkUsage> {
    let m = model.workload.model_bits;
    let conn = &model.connectivity;
    let mut up = BTreeMap::new();
    let mut down = BTreeMap::new();
    let mut core: BTreeMap<(usize, usize, usize), f64> = BTreeMap::new();
    for &((i, j), count) in &r.arc_transfers {
        let bits = m * count as f64;
        *up.entry(i).or_insert(0.0) += bits;
        *down.entry(j).or_insert(0.0) += bits;
        let routers = conn.route_routers(i, j);
        for (h, l) in conn.route(i, j).into_iter().enumerate() {
            *core.entry((l, routers[h], routers[h + 1])).or_insert(0.0) += bits;
        }
    }
    let secs = r.makespan_ms() / 1e3;
    let util = |bits: f64, cap: f64| {
        if secs > 0.0 && cap.is_finite() {
            bits / (cap * secs)
        } else {
            0.0
        }
    };
    let label = |i: usize| silo_label(labels, i);
    let router_label = |i: usize| silo_label(router_labels, i);
    let mut out = Vec::new();
    for (i, bits) in up {
        let cap = model.access.up[i];
        out.push(LinkUsage {
            kind: "up",
            name: label(i),
            bits,
            capacity_bps: cap,
            utilisation: util(bits, cap),
        });
    }
    for (i, bits) in down {
        let cap = model.access.down[i];
        out.push(LinkUsage {
            kind: "down",
            name: label(i),
            bits,
            capacity_bps: cap,
            utilisation: util(bits, cap),
        });
    }
    for ((l, a, b), bits) in core {
        let cap = conn.link_capacity_towards(l, a, b);
        out.push(LinkUsage {
            kind: "core",
            name: format!("{}->{}", router_label(a), router_label(b)),
            bits,
            capacity_bps: cap,
            utilisation: util(bits, cap),
        });
    }
    out
}

/// `overlay,network,kind,link,bits,capacity_bps,utilisation` for every
/// replay (fields quoted where they need it, e.g. labels with commas).
pub fn links_csv(rows: &[(&ReplayResult, Vec<LinkUsage>)]) -> String {
    let mut s = Table::new([
        "overlay",
        "network",
        "kind",
        "link",
        "bits",
        "capacity_bps",
        "utilisation",
    ]);
    for (r, usage) in rows {
        for u in usage {
            s.row([
                r.overlay.clone(),
                r.network.clone(),
                u.kind.to_string(),
                u.name.replace('"', "'"),
                u.bits.to_string(),
                u.capacity_bps.to_string(),
                format!("{:.6}", u.utilisation),
            ]);
        }
    }
    s.to_csv()
}

/// SVG plot: rounds completed (y) against wall-clock time in s (x), one
/// line per replay.
pub fn timeline_svg(results: &[ReplayResult], title: &str) -> Result<String, String> {
    let mut svg = String::new();
    {
        let labels: Vec<String> = results
            .iter()
            .map(|r| format!("{} ({})", r.overlay, r.network))
            .collect();
        let width = PLOT_WIDTH + legend_width(&labels);
        let root = SVGBackend::with_string(&mut svg, (width, PLOT_HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let area = split_with_legend(&root, PLOT_WIDTH, 45, &labels)?;
        let x_max = results
            .iter()
            .map(|r| r.makespan_ms() / 1e3)
            .fold(0.0, f64::max)
            .max(1e-6);
        let y_max = results
            .iter()
            .map(|r| r.starts.len() - 1)
            .max()
            .unwrap_or(1)
            .max(1) as f64;
        let (x_axis, xt) = linear_axis(0.0, x_max * 1.02);
        let (y_axis, yt) = linear_axis(0.0, y_max * 1.02);
        let mut chart = ChartBuilder::on(&area)
            .caption(title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(x_axis, y_axis)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("wall-clock time (s)")
            .y_desc("rounds completed")
            .x_label_formatter(&|v| xt.label(*v))
            .y_label_formatter(&|v| yt.label(*v))
            .draw()
            .map_err(|e| e.to_string())?;
        for (idx, r) in results.iter().enumerate() {
            let pts: Vec<(f64, f64)> = (0..r.starts.len())
                .map(|k| (if k == 0 { 0.0 } else { r.round_end(k) / 1e3 }, k as f64))
                .collect();
            chart
                .draw_series(LineSeries::new(pts, series_color(idx).stroke_width(2)))
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// One overlay's replay next to its max-plus cycle time: a line of
/// `fedtopo simulate`'s output (terminal, CSV, JSON).
#[derive(Debug, Clone, Serialize)]
pub struct ReplaySummaryRow {
    /// Overlay name.
    pub overlay: String,
    /// Network model.
    pub network: String,
    /// Rounds replayed.
    pub rounds: usize,
    /// `max_i t_i(K) / K`, ms.
    pub mean_round_ms: Ms,
    /// Mean round over the second half of the replay, ms.
    pub steady_round_ms: Ms,
    /// Median round, ms.
    pub median_round_ms: Ms,
    /// 95th percentile round (nearest rank), ms.
    pub p95_round_ms: Ms,
    /// Longest round, ms.
    pub max_round_ms: Ms,
    /// Time at which the last silo ends the last round, ms.
    pub makespan_ms: Ms,
    /// The max-plus cycle time, ms (none for schedules, whose overlay
    /// changes every round).
    pub cycle_time_ms: Option<Ms>,
    /// `steady_round_ms / cycle_time_ms`.
    pub steady_over_cycle_time: Option<f64>,
    /// Events the engine handled.
    pub events: u64,
    /// Model transfers.
    pub transfers: u64,
    /// Under an availability policy other than `wait`: silo-rounds absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub silo_rounds_absent: Option<u64>,
    /// Under churn: times a silo became absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub absences: Option<u64>,
    /// Under churn: times a silo rejoined from its neighbours' model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejoins: Option<u64>,
    /// Under churn: averages made without one of the in-neighbours' models
    /// (skipped or timed out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models_missed: Option<u64>,
    /// Under churn: models that arrived too late and were dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub models_dropped: Option<u64>,
}

/// The summary rows of replays `results`, with each one's max-plus cycle
/// time (`None` for schedules).
pub fn replay_summary(
    results: &[ReplayResult],
    cycle_times: &[Option<Ms>],
) -> Vec<ReplaySummaryRow> {
    results
        .iter()
        .zip(cycle_times)
        .map(|(r, &tau)| {
            let s = round_stats(r);
            ReplaySummaryRow {
                overlay: s.overlay,
                network: s.network,
                rounds: s.rounds,
                mean_round_ms: s.mean_ms,
                steady_round_ms: s.steady_ms,
                median_round_ms: s.median_ms,
                p95_round_ms: s.p95_ms,
                max_round_ms: s.max_ms,
                makespan_ms: r.makespan_ms(),
                cycle_time_ms: tau,
                steady_over_cycle_time: tau.map(|t| s.steady_ms / t),
                events: r.events,
                transfers: r.transfers,
                silo_rounds_absent: r.churn.as_ref().map(|c| c.silo_rounds_absent),
                absences: r.churn.as_ref().map(|c| c.stats.absences),
                rejoins: r.churn.as_ref().map(|c| c.stats.rejoins),
                models_missed: r.churn.as_ref().map(|c| c.stats.models_missed),
                models_dropped: r.churn.as_ref().map(|c| c.stats.models_dropped),
            }
        })
        .collect()
}

/// The terminal table of replay summary rows.
pub fn replay_summary_table(rows: &[ReplaySummaryRow]) -> String {
    let mut t = Table::new([
        "overlay",
        "network",
        "rounds",
        "mean round (ms)",
        "steady (ms)",
        "p95 (ms)",
        "max-plus cycle time (ms)",
        "ratio",
    ]);
    for r in rows {
        t.row([
            r.overlay.clone(),
            r.network.clone(),
            r.rounds.to_string(),
            format!("{:.1}", r.mean_round_ms),
            format!("{:.1}", r.steady_round_ms),
            format!("{:.1}", r.p95_round_ms),
            r.cycle_time_ms.map_or("-".into(), |t| format!("{t:.1}")),
            r.steady_over_cycle_time
                .map_or("-".into(), |x| format!("{x:.3}")),
        ]);
    }
    t.to_terminal()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Overlay;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;
    use crate::network::MaxPlusNetwork;
    use crate::replay::{replay, ReplayOptions};

    #[test]
    fn csvs_stats_and_svg() {
        let u = load_underlay(None, &LoadOptions::default()).unwrap();
        let m = NetworkSpec::default().delay_model(&u);
        let n = m.silo_count();
        let tour: Vec<usize> = (0..n).collect();
        let o = Overlay::directed_ring("r", n, &tour);
        let opts = ReplayOptions {
            rounds: 8,
            ..ReplayOptions::default()
        };
        let r = replay(&o, &m, &mut MaxPlusNetwork::new(&m), &opts).unwrap();
        let starts = starts_csv(std::slice::from_ref(&r));
        assert_eq!(starts.lines().count(), 1 + 9 * n);
        let rounds = rounds_csv(std::slice::from_ref(&r));
        assert_eq!(rounds.lines().count(), 1 + 8);
        let st = round_stats(&r);
        assert!(st.min_ms <= st.median_ms && st.median_ms <= st.p95_ms && st.p95_ms <= st.max_ms);
        assert!((st.mean_ms * 8.0 - r.makespan_ms()).abs() < 1e-9);
        let usage = link_usage(&r, &m, &[]);
        // Every silo sends 8 models and receives 8.
        let ups: Vec<_> = usage.iter().filter(|u| u.kind == "up").collect();
        assert_eq!(ups.len(), n);
        assert!(ups.iter().all(|u| u.bits == 8.0 * m.workload.model_bits));
        assert!(usage.iter().all(|u| (0.0..=1.0).contains(&u.utilisation)));
        let svg = timeline_svg(std::slice::from_ref(&r), "t").unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("polyline"));
    }
}
