//! Round timelines (`simulate --out DIR`: `gantt-OVERLAY.svg`): a Gantt
//! chart of a window of rounds of a replay, one row per silo, time (ms)
//! across: when each silo computes, when its models are on their way
//! (sending: from its first send to the last delivery), when it waits for
//! its in-neighbours' models, and the critical path
//! ([`crate::replay::RoundTrace::critical_path`]) drawn over them in red.
//!
//! Elements tests can find: `<rect class="compute|send|wait"
//! data-silo data-round>` bars, `<g class="row" data-silo>` rows, one
//! `<polyline class="critical-path">`.

use crate::net::placement::silo_label;
use std::collections::BTreeMap;

use thiserror::Error;

use super::plot::AxisTicks;
use super::svg::{num, SvgDoc};
use crate::replay::trace::{PathStep, RoundTrace};
use crate::replay::ReplayResult;
use crate::units::Ms;

/// Most silo rows a timeline shows (the silos on the critical path are
/// always among them; the notes say how many were left out).
pub const MAX_GANTT_ROWS: usize = 60;

/// Why a timeline could not be drawn.
#[derive(Debug, Error, PartialEq)]
pub enum GanttError {
    /// The replay has no trace.
    #[error(
        "{overlay}: no round trace was recorded (Clique Averaging's two-phase replay has none)"
    )]
    NoTrace {
        /// Overlay name.
        overlay: String,
    },
    /// The trace stopped recording.
    #[error("{overlay}: the traced rounds hold more than {limit} transfers; trace fewer rounds")]
    Truncated {
        /// Overlay name.
        overlay: String,
        /// [`crate::replay::trace::MAX_TRACED_TRANSFERS`].
        limit: usize,
    },
}

const COMPUTE: &str = "#4477aa";
const SEND: &str = "#ee7733";
const WAIT: &str = "#d9d9d9";
const CRITICAL: &str = "#cc1133";

/// The Gantt chart of `r`'s trace with silo `labels` (module docs).
///
/// # Errors
/// [`GanttError`] when `r` has no complete trace.
pub fn gantt_svg(r: &ReplayResult, labels: &[String], title: &str) -> Result<String, GanttError> {
    let trace: &RoundTrace = match &r.trace {
        Some(t) if t.truncated => {
            return Err(GanttError::Truncated {
                overlay: r.overlay.clone(),
                limit: crate::replay::trace::MAX_TRACED_TRANSFERS,
            })
        }
        Some(t) => t,
        None => {
            return Err(GanttError::NoTrace {
                overlay: r.overlay.clone(),
            })
        }
    };
    let n = r.starts.first().map_or(0, Vec::len);
    let (first, last) = (
        trace.first as usize,
        ((trace.first + trace.count) as usize).min(r.starts.len().saturating_sub(1)),
    );
    let path = trace.critical_path(&r.starts);
    let label = |i: usize| silo_label(labels, i);

    // Rows: the silos on the critical path, then the others in index order,
    // up to MAX_GANTT_ROWS, shown in index order.
    let mut on_path: Vec<usize> = path
        .iter()
        .flat_map(|s| match *s {
            PathStep::Compute { silo, .. } => vec![silo],
            PathStep::Transfer { from, to, .. } => vec![from, to],
        })
        .collect();
    on_path.sort_unstable();
    on_path.dedup();
    let mut shown: Vec<usize> = on_path.clone();
    for i in 0..n {
        if shown.len() >= MAX_GANTT_ROWS.max(on_path.len()) {
            break;
        }
        if !on_path.contains(&i) {
            shown.push(i);
        }
    }
    shown.sort_unstable();
    let row_of: BTreeMap<usize, usize> = shown.iter().enumerate().map(|(r, &i)| (i, r)).collect();

    // Time axis: from the window's first start to its last.
    let t0 = r.starts[first]
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let t1 = r.starts[last]
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let (t0, t1) = if t1 > t0 { (t0, t1) } else { (t0, t0 + 1.0) };

    const LEFT: f64 = 150.0;
    const TOP: f64 = 70.0;
    const PLOT_W: f64 = 820.0;
    let row_h = if shown.len() > 30 { 14.0 } else { 22.0 };
    let plot_h = row_h * shown.len() as f64;
    let width = LEFT + PLOT_W + 40.0;
    let x = |t: Ms| LEFT + (t - t0) / (t1 - t0) * PLOT_W;
    let y = |row: usize| TOP + row as f64 * row_h;

    let mut doc = SvgDoc::new();
    doc.empty(
        "rect",
        &[
            ("x", "0".into()),
            ("y", "0".into()),
            ("width", "100%".into()),
            ("height", "100%".into()),
            ("fill", "white".into()),
        ],
    );
    let text = |doc: &mut SvgDoc, attrs: &[(&str, String)], t: &str| {
        let mut a = vec![("font-family", "sans-serif".to_string())];
        a.extend(attrs.iter().cloned());
        doc.text("text", &a, t);
    };
    text(
        &mut doc,
        &[
            ("class", "title".into()),
            ("x", "16".into()),
            ("y", "26".into()),
            ("font-size", "18".into()),
        ],
        title,
    );
    text(
        &mut doc,
        &[
            ("class", "caption".into()),
            ("x", "16".into()),
            ("y", "46".into()),
            ("font-size", "12".into()),
            ("fill", "#333".into()),
        ],
        &format!(
            "{} on the {} network: rounds {first} to {} of {}, one row per silo",
            r.overlay,
            r.network,
            last.saturating_sub(1),
            r.starts.len() - 1
        ),
    );

    // Round ends: when the last silo started each round.
    for k in first..=last {
        let end = r.round_end(k);
        doc.empty(
            "line",
            &[
                ("class", "round-end".into()),
                ("x1", num(x(end))),
                ("y1", num(TOP - 6.0)),
                ("x2", num(x(end))),
                ("y2", num(TOP + plot_h)),
                ("stroke", "#999".into()),
                ("stroke-dasharray", "3 3".into()),
            ],
        );
        if k > first {
            text(
                &mut doc,
                &[
                    ("x", num(x(end))),
                    ("y", num(TOP - 9.0)),
                    ("font-size", "10".into()),
                    ("text-anchor", "middle".into()),
                    ("fill", "#555".into()),
                ],
                &format!("end of round {}", k - 1),
            );
        }
    }

    // Outgoing transfers per (silo, round): first send, last delivery.
    let mut sending: BTreeMap<(usize, u64), (Ms, Ms)> = BTreeMap::new();
    for t in &trace.transfers {
        if !t.delivered_ms.is_finite() {
            continue;
        }
        let e = sending
            .entry((t.from, t.round))
            .or_insert((t.sent_ms, t.delivered_ms));
        e.0 = e.0.min(t.sent_ms);
        e.1 = e.1.max(t.delivered_ms);
    }
    for (&i, &row) in &row_of {
        let top = y(row);
        doc.open("g", &[("class", "row".into()), ("data-silo", label(i))]);
        if row % 2 == 1 {
            doc.empty(
                "rect",
                &[
                    ("x", num(LEFT)),
                    ("y", num(top)),
                    ("width", num(PLOT_W)),
                    ("height", num(row_h)),
                    ("fill", "#f6f6f6".into()),
                ],
            );
        }
        text(
            &mut doc,
            &[
                ("class", "silo-label".into()),
                ("x", num(LEFT - 8.0)),
                ("y", num(top + row_h * 0.7)),
                ("font-size", if row_h < 20.0 { "10" } else { "12" }.into()),
                ("text-anchor", "end".into()),
            ],
            &label(i),
        );
        for k in first..last {
            let start = r.starts[k][i];
            let Some(done) = trace.compute_end(k as u64, i) else {
                continue;
            };
            let next = r.starts[k + 1][i];
            let bar = |doc: &mut SvgDoc, class: &str, a: Ms, b: Ms, y0: f64, h: f64, fill: &str| {
                if b > a {
                    doc.empty(
                        "rect",
                        &[
                            ("class", class.into()),
                            ("data-silo", label(i)),
                            ("data-round", k.to_string()),
                            ("data-from-ms", format!("{a:.6}")),
                            ("data-to-ms", format!("{b:.6}")),
                            ("x", num(x(a))),
                            ("y", num(y0)),
                            ("width", num((x(b) - x(a)).max(0.5))),
                            ("height", num(h)),
                            ("fill", fill.into()),
                        ],
                    );
                }
            };
            bar(
                &mut doc,
                "wait",
                done,
                next,
                top + row_h * 0.55,
                row_h * 0.3,
                WAIT,
            );
            bar(
                &mut doc,
                "compute",
                start,
                done,
                top + row_h * 0.15,
                row_h * 0.7,
                COMPUTE,
            );
            if let Some(&(a, b)) = sending.get(&(i, k as u64)) {
                bar(&mut doc, "send", a, b, top + row_h * 0.2, row_h * 0.3, SEND);
            }
        }
        doc.close("g");
    }

    // The critical path: along a row while computing, across rows while a
    // model travels.
    let mid = |i: usize| row_of.get(&i).map(|&r| y(r) + row_h / 2.0);
    let mut points: Vec<(f64, f64)> = Vec::new();
    for s in &path {
        match *s {
            PathStep::Compute {
                silo,
                from_ms,
                to_ms,
                ..
            } => {
                if let Some(yy) = mid(silo) {
                    points.push((x(from_ms), yy));
                    points.push((x(to_ms), yy));
                }
            }
            PathStep::Transfer {
                from,
                to,
                sent_ms,
                delivered_ms,
                ..
            } => {
                if let (Some(a), Some(b)) = (mid(from), mid(to)) {
                    points.push((x(sent_ms), a));
                    points.push((x(delivered_ms), b));
                }
            }
        }
    }
    points.dedup();
    if !points.is_empty() {
        let pts: Vec<String> = points
            .iter()
            .map(|p| format!("{},{}", num(p.0), num(p.1)))
            .collect();
        doc.empty(
            "polyline",
            &[
                ("class", "critical-path".into()),
                ("data-steps", path.len().to_string()),
                ("points", pts.join(" ")),
                ("fill", "none".into()),
                ("stroke", CRITICAL.into()),
                ("stroke-width", "2.5".into()),
                ("stroke-linejoin", "round".into()),
            ],
        );
    }

    // Time axis.
    let axis_y = TOP + plot_h + 4.0;
    doc.empty(
        "line",
        &[
            ("x1", num(LEFT)),
            ("y1", num(axis_y)),
            ("x2", num(LEFT + PLOT_W)),
            ("y2", num(axis_y)),
            ("stroke", "#333".into()),
        ],
    );
    let ticks = AxisTicks::new(t0, t1, false, false);
    for (v, l) in ticks.values.iter().zip(&ticks.labels) {
        doc.empty(
            "line",
            &[
                ("x1", num(x(*v))),
                ("y1", num(axis_y)),
                ("x2", num(x(*v))),
                ("y2", num(axis_y + 5.0)),
                ("stroke", "#333".into()),
            ],
        );
        text(
            &mut doc,
            &[
                ("class", "tick".into()),
                ("x", num(x(*v))),
                ("y", num(axis_y + 18.0)),
                ("font-size", "11".into()),
                ("text-anchor", "middle".into()),
            ],
            l,
        );
    }
    text(
        &mut doc,
        &[
            ("class", "axis-title".into()),
            ("x", num(LEFT + PLOT_W / 2.0)),
            ("y", num(axis_y + 38.0)),
            ("font-size", "13".into()),
            ("text-anchor", "middle".into()),
        ],
        "wall-clock time (ms)",
    );

    // Legend and notes.
    let mut ly = axis_y + 62.0;
    let mut lx = LEFT;
    for (name, fill, h) in [
        ("computing (s local steps)", COMPUTE, 12.0),
        ("sending (first send to last delivery)", SEND, 6.0),
        ("waiting for in-neighbours' models", WAIT, 6.0),
    ] {
        doc.empty(
            "rect",
            &[
                ("x", num(lx)),
                ("y", num(ly - 6.0 - h / 2.0)),
                ("width", "22".into()),
                ("height", num(h)),
                ("fill", fill.into()),
            ],
        );
        text(
            &mut doc,
            &[
                ("x", num(lx + 28.0)),
                ("y", num(ly)),
                ("font-size", "12".into()),
            ],
            name,
        );
        lx += 40.0 + 6.5 * name.len() as f64;
    }
    ly += 20.0;
    doc.empty(
        "line",
        &[
            ("x1", num(LEFT)),
            ("y1", num(ly - 4.0)),
            ("x2", num(LEFT + 22.0)),
            ("y2", num(ly - 4.0)),
            ("stroke", CRITICAL.into()),
            ("stroke-width", "2.5".into()),
        ],
    );
    let crit_len: Ms = path.iter().map(|s| s.span().1 - s.span().0).sum();
    text(
        &mut doc,
        &[("x", num(LEFT + 28.0)), ("y", num(ly)), ("font-size", "12".into())],
        &format!(
            "critical path: {} steps, {:.1} ms of computing and transfers in a row, decide when round {} ends",
            path.len(),
            crit_len,
            last.saturating_sub(1)
        ),
    );
    let mut notes = Vec::new();
    if shown.len() < n {
        notes.push(format!(
            "{} of {n} silos shown (every silo on the critical path, then the first by index).",
            shown.len()
        ));
    }
    if trace.star_center.is_some() {
        notes.push("Server-client rounds: clients upload, the centre aggregates and broadcasts; a client waits for the broadcast.".into());
    }
    for note in &notes {
        ly += 18.0;
        text(
            &mut doc,
            &[
                ("class", "note".into()),
                ("x", num(LEFT)),
                ("y", num(ly)),
                ("font-size", "12".into()),
                ("fill", "#444".into()),
            ],
            note,
        );
    }
    Ok(doc.finish(
        width,
        ly + 16.0,
        &[
            ("class", "fedtopo-gantt".into()),
            ("data-t0-ms", format!("{t0}")),
            ("data-t1-ms", format!("{t1}")),
        ],
    ))
}
