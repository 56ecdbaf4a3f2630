//! Where each round's time goes ([`crate::replay::breakdown`]), as people
//! read it: a summary row per replay (terminal table), every silo-round
//! as CSV, and the per-round means and the critical path as JSON.

use crate::net::placement::silo_label;
use serde::Serialize;

use super::table::Table;
use crate::replay::breakdown::{Breakdown, CriticalStep};
use crate::replay::ReplayResult;
use crate::units::Ms;

/// One replay's breakdown in a line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakdownSummary {
    /// Overlay name.
    pub overlay: String,
    /// Network model.
    pub network: String,
    /// Rounds recorded.
    pub rounds: u64,
    /// Mean computing time per silo and round, ms.
    pub compute_ms: Ms,
    /// Mean transfer time per silo and round, ms.
    pub transfer_ms: Ms,
    /// Mean waiting time per silo and round, ms.
    pub wait_ms: Ms,
    /// Makespan, ms (the critical path's length).
    pub makespan_ms: Ms,
    /// Share of the critical path spent computing, in [0, 1].
    pub critical_compute_share: f64,
    /// Share of the critical path spent in transfers, in [0, 1].
    pub critical_transfer_share: f64,
    /// Steps of the critical path.
    pub critical_steps: usize,
    /// The arc (`from->to`, silo labels) whose transfers take the most of
    /// the critical path, with its share in [0, 1].
    pub top_arc: String,
    /// That arc's share of the critical path, in [0, 1].
    pub top_arc_share: f64,
}

/// One run's recorded breakdown, with the overlay and network it ran on:
/// what the renderers below read, from a replay ([`Self::of_replays`]) or
/// a training run.
#[derive(Debug, Clone, Copy)]
pub struct BreakdownRun<'a> {
    /// Overlay name.
    pub overlay: &'a str,
    /// Network model.
    pub network: &'a str,
    /// The breakdown.
    pub breakdown: &'a Breakdown,
}

impl<'a> BreakdownRun<'a> {
    /// The replays that recorded a breakdown.
    pub fn of_replays(results: &'a [ReplayResult]) -> Vec<Self> {
        results
            .iter()
            .filter_map(|r| {
                Some(BreakdownRun {
                    overlay: &r.overlay,
                    network: &r.network,
                    breakdown: r.breakdown.as_ref()?,
                })
            })
            .collect()
    }
}

/// The summary of every run (`labels`: silo labels, by silo index).
pub fn breakdown_summaries(runs: &[BreakdownRun], labels: &[String]) -> Vec<BreakdownSummary> {
    let label = |i: usize| silo_label(labels, i);
    runs.iter()
        .map(|r| {
            let b = r.breakdown;
            let n = b.rows.len().max(1) as f64;
            let mean =
                |f: fn(&crate::replay::SiloRound) -> Ms| b.rows.iter().map(f).sum::<Ms>() / n;
            let path = b.critical_path();
            let span = |p: &CriticalStep| p.end_ms - p.start_ms;
            let total: Ms = path.iter().map(span).sum::<Ms>().max(f64::MIN_POSITIVE);
            let share =
                |kind: &str| path.iter().filter(|p| p.kind == kind).map(span).sum::<Ms>() / total;
            let mut arcs: std::collections::BTreeMap<(usize, usize), Ms> = Default::default();
            for p in path.iter().filter(|p| p.kind == "transfer") {
                *arcs.entry((p.from, p.to)).or_default() += span(p);
            }
            let top = arcs
                .iter()
                .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(&(f, t), &ms)| (format!("{}->{}", label(f), label(t)), ms / total));
            BreakdownSummary {
                overlay: r.overlay.to_string(),
                network: r.network.to_string(),
                rounds: b.rounds(),
                compute_ms: mean(|s| s.compute_ms),
                transfer_ms: mean(|s| s.transfer_ms),
                wait_ms: mean(|s| s.wait_ms),
                makespan_ms: b.makespan_ms(),
                critical_compute_share: share("compute"),
                critical_transfer_share: share("transfer"),
                critical_steps: path.len(),
                top_arc: top.as_ref().map_or_else(|| "-".into(), |t| t.0.clone()),
                top_arc_share: top.map_or(0.0, |t| t.1),
            }
        })
        .collect()
}

/// The summaries as a terminal table.
pub fn breakdown_table(rows: &[BreakdownSummary]) -> Table {
    let mut t = Table::new([
        "overlay",
        "network",
        "compute (ms)",
        "transfer (ms)",
        "wait (ms)",
        "critical path: compute",
        "transfer",
        "busiest arc on it",
    ]);
    for r in rows {
        let busy = r.compute_ms + r.transfer_ms + r.wait_ms;
        let pct = |x: Ms| {
            if busy > 0.0 {
                format!("{x:.1} ({:.0}%)", 100.0 * x / busy)
            } else {
                format!("{x:.1}")
            }
        };
        t.row([
            r.overlay.clone(),
            r.network.clone(),
            pct(r.compute_ms),
            pct(r.transfer_ms),
            pct(r.wait_ms),
            format!("{:.0}%", 100.0 * r.critical_compute_share),
            format!("{:.0}%", 100.0 * r.critical_transfer_share),
            format!("{} ({:.0}%)", r.top_arc, 100.0 * r.top_arc_share),
        ]);
    }
    t
}

/// Every silo-round of every replay with a breakdown:
/// `overlay,network,round,silo,label,start_ms,ready_ms,compute_ms,transfer_ms,wait_ms,end_ms,via,via_label,via_sent_ms`
/// (`via` empty when the round ended with the silo's own computation).
pub fn breakdown_csv(runs: &[BreakdownRun], labels: &[String]) -> String {
    let label = |i: usize| silo_label(labels, i);
    let mut t = Table::new([
        "overlay",
        "network",
        "round",
        "silo",
        "label",
        "start_ms",
        "ready_ms",
        "compute_ms",
        "transfer_ms",
        "wait_ms",
        "end_ms",
        "via",
        "via_label",
        "via_sent_ms",
    ]);
    for r in runs {
        for s in &r.breakdown.rows {
            let ms = |x: Ms| format!("{x:.6}");
            t.row([
                r.overlay.to_string(),
                r.network.to_string(),
                s.round.to_string(),
                s.silo.to_string(),
                label(s.silo),
                ms(s.start_ms),
                ms(s.ready_ms),
                ms(s.compute_ms),
                ms(s.transfer_ms),
                ms(s.wait_ms),
                ms(s.end_ms),
                s.via.map_or_else(String::new, |v| v.to_string()),
                s.via.map_or_else(String::new, label),
                s.via.map_or_else(String::new, |_| ms(s.via_sent_ms)),
            ]);
        }
    }
    t.to_csv()
}

/// Per replay: the per-round means, the critical path and every
/// silo-round, as JSON.
pub fn breakdown_json(runs: &[BreakdownRun], labels: &[String]) -> serde_json::Value {
    let overlays: Vec<_> = runs
        .iter()
        .map(|r| {
            let b = r.breakdown;
            serde_json::json!({
                "overlay": r.overlay,
                "network": r.network,
                "rounds": b.per_round(),
                "critical_path": b.critical_path(),
                "silo_rounds": b.rows,
            })
        })
        .collect();
    serde_json::json!({ "labels": labels, "overlays": overlays })
}

/// The text of a breakdown file: JSON ([`breakdown_json`]) when `path`
/// ends in `.json`, CSV ([`breakdown_csv`]) otherwise.
pub fn breakdown_file_text(
    path: &std::path::Path,
    runs: &[BreakdownRun],
    labels: &[String],
) -> String {
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if json {
        super::render_json(&breakdown_json(runs, labels))
    } else {
        breakdown_csv(runs, labels)
    }
}
