//! Pictures of the network (`fedtopo draw`, the map of `--report`): the
//! underlay's links and routers on longitude/latitude (the equirectangular
//! projection of [`crate::net::underlay::projection`], stated under the
//! picture), the silos as labelled markers, and an overlay's arcs coloured
//! by their \[Marfoq20\] eq. (3) delay (ms, colour bar in the legend), its
//! critical circuit highlighted. A schedule (MATCHA, `exp-1peer`,
//! `base:k=K`, per-round files) is drawn as the union of its rounds, each
//! arc as wide and opaque as the fraction of rounds it is active in.
//!
//! Every silo is one `<circle class="silo" data-silo="LABEL" data-lat
//! data-lon cx cy>`; every arc one `<path class="arc" data-src data-dst
//! data-delay-ms>`; the root `<svg>` carries the projection and the pixel
//! frame (`data-lat0`, `data-lon0`, `data-scale`, `data-x0`, `data-y0`), so
//! that a silo at `(lat, lon)` sits at
//! `cx = x0 + scale * wrap(lon - lon0) * cos(lat0)`, `cy = y0 - scale * lat`
//! (silos sharing a router are set around it on a small circle, said in the
//! notes).

use std::collections::BTreeMap;

use thiserror::Error;

use super::plot::AxisTicks;
use super::svg::{num, sequential_color, SvgDoc};
use crate::evaluate::{EvaluatedOverlay, OverlayTiming};
use crate::graph::{Overlay, Protocol};
use crate::net::delay::DelayModel;
use crate::net::underlay::projection::{Frame, Projection};
use crate::net::underlay::Underlay;
use crate::overlay::export::{silo_positions, unique_labels};
use crate::units::Ms;

/// Most overlay arcs a map draws (a complete overlay on 142 silos); more
/// is refused rather than written as an unreadable, huge file.
pub const MAX_MAP_ARCS: usize = 20_000;

/// Most underlay links a map draws.
pub const MAX_MAP_LINKS: usize = 50_000;

/// Silos labelled by default; above, only the critical circuit's silos
/// are (said in the notes).
pub const LABEL_LIMIT: usize = 80;

/// Why a map could not be drawn.
#[derive(Debug, Error, PartialEq)]
pub enum MapError {
    /// Some silos' routers have no coordinates.
    #[error(
        "cannot draw on a map: {missing} of {silos} silos have no coordinates (e.g. `{example}`): \
         their routers have no Latitude/Longitude in the underlay file and none could be estimated"
    )]
    NoCoordinates {
        /// Silos without a position.
        missing: usize,
        /// All silos.
        silos: usize,
        /// One of them.
        example: String,
    },
    /// Too much to draw.
    #[error("too many {what} to draw: {count} (a map draws at most {limit}); draw fewer silos or a sparser overlay")]
    TooLarge {
        /// What (`overlay arcs`, `underlay links`).
        what: &'static str,
        /// How many there are.
        count: usize,
        /// The bound.
        limit: usize,
    },
}

/// What is drawn over the underlay.
#[derive(Debug, Clone, Copy)]
pub enum MapLayer<'a> {
    /// Nothing: the underlay and its silos only.
    Underlay,
    /// The same overlay every round.
    Overlay {
        /// The overlay.
        overlay: &'a Overlay,
        /// A critical circuit (silo indices, arcs `c[k] -> c[k+1]` and
        /// back to `c[0]`; STAR: centre, leaf); empty for none.
        critical_circuit: &'a [usize],
        /// Its cycle time, ms.
        cycle_time_ms: Option<Ms>,
    },
    /// A schedule: the arcs of every round.
    Schedule {
        /// Its name.
        name: &'a str,
        /// Arcs `(source, target)` of each round.
        rounds: &'a [Vec<(usize, usize)>],
        /// Its cycle time, ms.
        cycle_time_ms: Option<Ms>,
    },
}

/// Size and text of a map.
#[derive(Debug, Clone)]
pub struct MapOptions {
    /// Width of the picture, px (the height follows the map's aspect).
    pub width: f64,
    /// Label every silo up to this many silos.
    pub label_limit: usize,
    /// Title (default: underlay and overlay names).
    pub title: Option<String>,
}

impl Default for MapOptions {
    fn default() -> Self {
        MapOptions {
            width: 1000.0,
            label_limit: LABEL_LIMIT,
            title: None,
        }
    }
}

/// One arc as drawn.
#[derive(Debug, Clone)]
struct DrawnArc {
    src: usize,
    dst: usize,
    /// Eq. (3) delay, ms (schedules: mean over the rounds it is active in).
    delay_ms: Ms,
    /// Fraction of rounds it is active in (1 for a static overlay).
    share: f64,
    critical: bool,
}

/// The arcs of the critical circuit `c` (`c[k] -> c[k+1]`, closing back
/// to `c[0]`; a single silo has none).
pub fn circuit_arcs(c: &[usize]) -> Vec<(usize, usize)> {
    if c.len() < 2 {
        return Vec::new();
    }
    (0..c.len()).map(|k| (c[k], c[(k + 1) % c.len()])).collect()
}

/// The map of `overlay` (built on `model`) with its `timing` (critical
/// circuit, cycle time) when given; schedules as the union of their rounds
/// (a periodic schedule's period, MATCHA's sampled rounds).
pub fn overlay_map(
    underlay: &Underlay,
    model: &DelayModel,
    overlay: &EvaluatedOverlay,
    timing: Option<&OverlayTiming>,
    opts: &MapOptions,
) -> Result<String, MapError> {
    let cycle_time_ms = timing.map(|t| t.cycle_time_ms);
    if overlay.is_schedule() {
        let labels = model.connectivity.placement().labels(underlay);
        // Not a schedule is impossible here (checked above).
        let rounds = overlay
            .export_schedule(&labels)
            .map(|e| e.rounds)
            .unwrap_or_default();
        let name = overlay.name();
        draw_map(
            underlay,
            model,
            MapLayer::Schedule {
                name: &name,
                rounds: &rounds,
                cycle_time_ms,
            },
            opts,
        )
    } else {
        let o = match overlay.overlay() {
            Some(o) => std::borrow::Cow::Borrowed(o),
            None => overlay.schedule().round(0),
        };
        let circuit: &[usize] = timing.map_or(&[], |t| t.critical_circuit.as_slice());
        draw_map(
            underlay,
            model,
            MapLayer::Overlay {
                overlay: &o,
                critical_circuit: circuit,
                cycle_time_ms,
            },
            opts,
        )
    }
}

/// The arcs of `layer` with their delays on `model`.
fn drawn_arcs(model: &DelayModel, layer: &MapLayer<'_>) -> Vec<DrawnArc> {
    match *layer {
        MapLayer::Underlay => Vec::new(),
        MapLayer::Overlay {
            overlay,
            critical_circuit,
            ..
        } => {
            let critical = circuit_arcs(critical_circuit);
            overlay
                .arcs()
                .iter()
                .filter(|(i, j)| i != j)
                .map(|&(i, j)| DrawnArc {
                    src: i,
                    dst: j,
                    delay_ms: model.arc_delay(i, j, overlay.out_degree(i), overlay.in_degree(j)),
                    share: 1.0,
                    critical: critical.contains(&(i, j)),
                })
                .collect()
        }
        MapLayer::Schedule { rounds, .. } => {
            let n = model.silo_count();
            // (count, delay sum) per arc, in a fixed order.
            let mut acc: BTreeMap<(usize, usize), (usize, f64)> = BTreeMap::new();
            for arcs in rounds {
                let (mut out, mut inn) = (vec![0usize; n], vec![0usize; n]);
                for &(i, j) in arcs {
                    if i != j && i < n && j < n {
                        out[i] += 1;
                        inn[j] += 1;
                    }
                }
                for &(i, j) in arcs {
                    if i != j && i < n && j < n {
                        let e = acc.entry((i, j)).or_insert((0, 0.0));
                        e.0 += 1;
                        e.1 += model.arc_delay(i, j, out[i], inn[j]);
                    }
                }
            }
            let r = rounds.len().max(1) as f64;
            acc.into_iter()
                .map(|((i, j), (count, sum))| DrawnArc {
                    src: i,
                    dst: j,
                    delay_ms: sum / count as f64,
                    share: count as f64 / r,
                    critical: false,
                })
                .collect()
        }
    }
}

/// Draws `layer` over `underlay` (module docs).
///
/// # Errors
/// [`MapError::NoCoordinates`] when a silo has no position,
/// [`MapError::TooLarge`] beyond [`MAX_MAP_ARCS`] or [`MAX_MAP_LINKS`].
pub fn draw_map(
    underlay: &Underlay,
    model: &DelayModel,
    layer: MapLayer<'_>,
    opts: &MapOptions,
) -> Result<String, MapError> {
    let placement = model.connectivity.placement();
    let labels = unique_labels(&placement.labels(underlay));
    let positions = silo_positions(underlay, placement);
    let n = positions.len();
    if let Some(i) = positions.iter().position(Option::is_none) {
        return Err(MapError::NoCoordinates {
            missing: positions.iter().filter(|p| p.is_none()).count(),
            silos: n,
            example: labels.get(i).cloned().unwrap_or_default(),
        });
    }
    if underlay.links.len() > MAX_MAP_LINKS {
        return Err(MapError::TooLarge {
            what: "underlay links",
            count: underlay.links.len(),
            limit: MAX_MAP_LINKS,
        });
    }
    let mut arcs = drawn_arcs(model, &layer);
    if arcs.len() > MAX_MAP_ARCS {
        return Err(MapError::TooLarge {
            what: "overlay arcs",
            count: arcs.len(),
            limit: MAX_MAP_ARCS,
        });
    }
    let silo_pos: Vec<(f64, f64)> = positions.iter().map(|p| p.unwrap_or_default()).collect();
    let router_pos: Vec<Option<(f64, f64)>> = underlay.routers.iter().map(|r| r.lat_lon).collect();
    let proj = Projection::fit(router_pos.iter().flatten().copied().chain(silo_pos.clone()))
        .unwrap_or(Projection {
            lon0: 0.0,
            lat0: 0.0,
        });
    let projected: Vec<(f64, f64)> = router_pos
        .iter()
        .flatten()
        .chain(&silo_pos)
        .map(|&(a, b)| proj.project(a, b))
        .collect();

    // Layout: title and caption, the map, the legend column at the right,
    // notes below.
    const LEGEND_W: f64 = 220.0;
    const TOP: f64 = 64.0;
    let width = opts.width.max(500.0);
    let map_w = width - LEGEND_W - 30.0;
    let (x_lo, x_hi, y_lo, y_hi) = projected.iter().fold(
        (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ),
        |a, p| (a.0.min(p.0), a.1.max(p.0), a.2.min(p.1), a.3.max(p.1)),
    );
    let map_h = if x_hi - x_lo > 1e-9 {
        (map_w * (y_hi - y_lo) / (x_hi - x_lo)).clamp(260.0, 680.0)
    } else {
        400.0
    };
    // 24 px inside the map box on every side: room for markers and labels.
    let frame = Frame::fit(
        &projected,
        24.0 + 10.0,
        TOP + 24.0,
        map_w - 48.0,
        map_h - 48.0,
    );
    let px = |p: (f64, f64)| frame.pixel(proj.project(p.0, p.1));

    // Silos sharing a router: set around it on a circle of 9 px.
    let mut at_router: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        at_router.entry(placement.router(i)).or_default().push(i);
    }
    let mut silo_px: Vec<(f64, f64)> = silo_pos.iter().map(|&p| px(p)).collect();
    let mut shared = 0usize;
    for silos in at_router.values().filter(|s| s.len() > 1) {
        shared += silos.len();
        for (k, &i) in silos.iter().enumerate() {
            let a = std::f64::consts::TAU * k as f64 / silos.len() as f64;
            silo_px[i].0 += 9.0 * a.cos();
            silo_px[i].1 += 9.0 * a.sin();
        }
    }

    let mut doc = SvgDoc::new();
    doc.empty(
        "rect",
        &[
            ("x", "0".into()),
            ("y", "0".into()),
            ("width", num(width)),
            ("height", "100%".into()),
            ("fill", "white".into()),
        ],
    );
    let (layer_name, cycle) = match layer {
        MapLayer::Underlay => (None, None),
        MapLayer::Overlay {
            overlay,
            cycle_time_ms,
            ..
        } => (Some(overlay.name.clone()), cycle_time_ms),
        MapLayer::Schedule {
            name,
            cycle_time_ms,
            ..
        } => (Some(name.to_string()), cycle_time_ms),
    };
    let title = opts.title.clone().unwrap_or_else(|| match &layer_name {
        Some(o) => format!("{}: {o} on {n} silos", underlay.name),
        None => format!(
            "{}: {} routers, {} links, {n} silos",
            underlay.name,
            underlay.routers.len(),
            underlay.links.len()
        ),
    });
    doc.text(
        "text",
        &[
            ("class", "title".into()),
            ("x", "16".into()),
            ("y", "28".into()),
            ("font-family", "sans-serif".into()),
            ("font-size", "20".into()),
        ],
        &title,
    );
    let caption = match (&layer, cycle) {
        (MapLayer::Underlay, _) => "grey: underlay links and routers; dots: silos".to_string(),
        (MapLayer::Schedule { rounds, .. }, c) => format!(
            "union of {} rounds{}; arc colour: mean eq. (3) delay when active",
            rounds.len(),
            c.map_or(String::new(), |c| format!(", cycle time {c:.1} ms"))
        ),
        (_, Some(c)) => format!(
            "{} arcs coloured by eq. (3) delay; cycle time {c:.1} ms",
            arcs.len()
        ),
        (_, None) => format!("{} arcs coloured by eq. (3) delay", arcs.len()),
    };
    doc.text(
        "text",
        &[
            ("class", "caption".into()),
            ("x", "16".into()),
            ("y", "50".into()),
            ("font-family", "sans-serif".into()),
            ("font-size", "13".into()),
            ("fill", "#333".into()),
        ],
        &caption,
    );

    // Underlay links and routers, in grey.
    doc.open(
        "g",
        &[
            ("class", "underlay".into()),
            ("stroke", "#d4d4d4".into()),
            ("stroke-width", "0.8".into()),
        ],
    );
    for l in &underlay.links {
        if let (Some(a), Some(b)) = (router_pos[l.a], router_pos[l.b]) {
            let (pa, pb) = (px(a), px(b));
            doc.empty(
                "line",
                &[
                    ("class", "link".into()),
                    ("x1", num(pa.0)),
                    ("y1", num(pa.1)),
                    ("x2", num(pb.0)),
                    ("y2", num(pb.1)),
                ],
            );
        }
    }
    for (r, p) in router_pos.iter().enumerate() {
        if let Some(p) = p {
            if !at_router.contains_key(&r) {
                let q = px(*p);
                doc.empty(
                    "circle",
                    &[
                        ("class", "router".into()),
                        ("cx", num(q.0)),
                        ("cy", num(q.1)),
                        ("r", "2".into()),
                        ("fill", "#b0b0b0".into()),
                    ],
                );
            }
        }
    }
    doc.close("g");

    // Arcs: the slowest on top; the critical circuit under a halo.
    arcs.sort_by(|a, b| a.delay_ms.total_cmp(&b.delay_ms));
    let (d_lo, d_hi) = arcs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |a, x| {
            (a.0.min(x.delay_ms), a.1.max(x.delay_ms))
        });
    let shade = |d: f64| {
        if d_hi - d_lo > 1e-12 {
            sequential_color((d - d_lo) / (d_hi - d_lo))
        } else {
            sequential_color(0.5)
        }
    };
    let schedule = matches!(layer, MapLayer::Schedule { .. });
    let geometry: Vec<ArcGeometry> = arcs
        .iter()
        .map(|a| arc_geometry(silo_px[a.src], silo_px[a.dst]))
        .collect();
    doc.open("g", &[("class", "critical-halo".into())]);
    for (a, g) in arcs.iter().zip(&geometry) {
        if a.critical {
            doc.empty(
                "path",
                &[
                    ("class", "critical".into()),
                    ("data-src", labels[a.src].clone()),
                    ("data-dst", labels[a.dst].clone()),
                    ("d", g.path.clone()),
                    ("fill", "none".into()),
                    ("stroke", "#00c8e0".into()),
                    ("stroke-opacity", "0.55".into()),
                    ("stroke-width", "9".into()),
                    ("stroke-linecap", "round".into()),
                ],
            );
        }
    }
    doc.close("g");
    doc.open("g", &[("class", "arcs".into()), ("fill", "none".into())]);
    for (a, g) in arcs.iter().zip(&geometry) {
        let color = shade(a.delay_ms);
        let (w, opacity) = if schedule {
            (1.0 + 4.0 * a.share, 0.3 + 0.7 * a.share)
        } else {
            (2.0, 0.9)
        };
        let mut attrs = vec![
            ("class", "arc".to_string()),
            ("data-src", labels[a.src].clone()),
            ("data-dst", labels[a.dst].clone()),
            ("data-delay-ms", format!("{:.3}", a.delay_ms)),
        ];
        if schedule {
            attrs.push(("data-share", format!("{:.4}", a.share)));
        }
        attrs.extend([
            ("d", g.path.clone()),
            ("stroke", color.clone()),
            ("stroke-width", num(w)),
            ("stroke-opacity", num(opacity)),
        ]);
        doc.empty("path", &attrs);
        doc.empty(
            "polygon",
            &[
                ("class", "arrow".into()),
                ("points", g.head.clone()),
                ("fill", color),
                ("fill-opacity", num(opacity)),
            ],
        );
    }
    doc.close("g");

    // Silos (the STAR centre larger) and their labels.
    let center = match layer {
        MapLayer::Overlay { overlay, .. } => match overlay.protocol {
            Protocol::ServerClient { center } => Some(center),
            Protocol::Gossip => None,
        },
        _ => None,
    };
    let on_circuit: Vec<usize> = match layer {
        MapLayer::Overlay {
            critical_circuit, ..
        } => critical_circuit.to_vec(),
        _ => Vec::new(),
    };
    doc.open("g", &[("class", "silos".into())]);
    for i in 0..n {
        let (x, y) = silo_px[i];
        let (lat, lon) = silo_pos[i];
        let is_center = center == Some(i);
        doc.empty(
            "circle",
            &[
                (
                    "class",
                    if is_center { "silo center" } else { "silo" }.into(),
                ),
                ("data-silo", labels[i].clone()),
                ("data-lat", format!("{lat}")),
                ("data-lon", format!("{lon}")),
                ("cx", num(x)),
                ("cy", num(y)),
                ("r", if is_center { "7" } else { "5" }.into()),
                ("fill", "#1f3b73".into()),
                ("stroke", "white".into()),
                ("stroke-width", "1.5".into()),
            ],
        );
    }
    let label_all = n <= opts.label_limit;
    let labelled: Vec<usize> = (0..n)
        .filter(|i| label_all || on_circuit.contains(i))
        .collect();
    for (i, x, y, anchor) in place_labels(&silo_px, &labelled, &labels) {
        doc.text(
            "text",
            &[
                ("class", "silo-label".into()),
                ("x", num(x)),
                ("y", num(y)),
                ("text-anchor", anchor.into()),
                ("font-family", "sans-serif".into()),
                ("font-size", "11".into()),
                ("fill", "#111".into()),
                ("stroke", "white".into()),
                ("stroke-width", "3".into()),
                ("paint-order", "stroke".into()),
            ],
            &labels[i],
        );
    }
    doc.close("g");

    // Legend: the delay colour bar (ms), the critical circuit, the widths
    // of a schedule.
    let lx = width - LEGEND_W + 10.0;
    let mut ly = TOP + 10.0;
    doc.open("g", &[("class", "legend".into())]);
    let legend_text = |doc: &mut SvgDoc, x: f64, y: f64, size: &str, t: &str| {
        doc.text(
            "text",
            &[
                ("x", num(x)),
                ("y", num(y)),
                ("font-family", "sans-serif".into()),
                ("font-size", size.into()),
            ],
            t,
        );
    };
    if !arcs.is_empty() {
        legend_text(&mut doc, lx, ly, "13", "arc delay (ms), eq. (3)");
        ly += 10.0;
        let bar_h = 180.0;
        let steps = 24;
        for s in 0..steps {
            // Top = slowest.
            let t = 1.0 - (s as f64 + 0.5) / steps as f64;
            doc.empty(
                "rect",
                &[
                    ("x", num(lx)),
                    ("y", num(ly + bar_h * s as f64 / steps as f64)),
                    ("width", "16".into()),
                    ("height", num(bar_h / steps as f64 + 0.5)),
                    ("fill", sequential_color(t)),
                ],
            );
        }
        let ticks = if d_hi - d_lo > 1e-9 {
            AxisTicks::new(d_lo, d_hi, false, false)
        } else {
            AxisTicks::new(d_lo, d_lo, false, false)
        };
        for (v, label) in ticks.values.iter().zip(&ticks.labels) {
            let t = if d_hi - d_lo > 1e-9 {
                (v - d_lo) / (d_hi - d_lo)
            } else {
                0.5
            };
            let y = ly + bar_h * (1.0 - t);
            doc.empty(
                "line",
                &[
                    ("x1", num(lx + 16.0)),
                    ("y1", num(y)),
                    ("x2", num(lx + 21.0)),
                    ("y2", num(y)),
                    ("stroke", "#333".into()),
                ],
            );
            legend_text(&mut doc, lx + 24.0, y + 4.0, "11", label);
        }
        ly += bar_h + 28.0;
    }
    if arcs.iter().any(|a| a.critical) {
        doc.empty(
            "line",
            &[
                ("x1", num(lx)),
                ("y1", num(ly - 4.0)),
                ("x2", num(lx + 28.0)),
                ("y2", num(ly - 4.0)),
                ("stroke", "#00c8e0".into()),
                ("stroke-opacity", "0.55".into()),
                ("stroke-width", "9".into()),
            ],
        );
        legend_text(&mut doc, lx + 36.0, ly, "12", "critical circuit");
        ly += 26.0;
    }
    if schedule && !arcs.is_empty() {
        legend_text(&mut doc, lx, ly, "12", "width: share of rounds active");
        ly += 16.0;
        for share in [0.1, 0.5, 1.0] {
            doc.empty(
                "line",
                &[
                    ("x1", num(lx)),
                    ("y1", num(ly)),
                    ("x2", num(lx + 28.0)),
                    ("y2", num(ly)),
                    ("stroke", "#555".into()),
                    ("stroke-width", num(1.0 + 4.0 * share)),
                    ("stroke-opacity", num(0.3 + 0.7 * share)),
                ],
            );
            legend_text(
                &mut doc,
                lx + 36.0,
                ly + 4.0,
                "11",
                &format!("{:.0} %", share * 100.0),
            );
            ly += 18.0;
        }
        ly += 8.0;
    }
    if center.is_some() {
        doc.empty(
            "circle",
            &[
                ("cx", num(lx + 8.0)),
                ("cy", num(ly - 4.0)),
                ("r", "7".into()),
                ("fill", "#1f3b73".into()),
            ],
        );
        legend_text(&mut doc, lx + 36.0, ly, "12", "STAR centre");
    }
    doc.close("g");

    // Notes under the map: the projection, what was left out or moved.
    let mut notes = vec![format!("Map: {}.", proj.describe())];
    if !arcs.is_empty() {
        notes.push(
            "Each arc bends to its right (so i -> j and j -> i are apart); the arrowhead is at the receiver."
                .into(),
        );
    }
    if shared > 0 {
        notes.push(format!(
            "{shared} silos share a router with another silo: they are drawn on a 9 px circle around it."
        ));
    }
    if !label_all {
        notes.push(format!(
            "Labels: {n} silos are more than {}; only the critical circuit's silos are labelled.",
            opts.label_limit
        ));
    }
    if let MapLayer::Overlay {
        critical_circuit, ..
    } = layer
    {
        if critical_circuit.is_empty() && !arcs.is_empty() {
            notes.push("No critical circuit is known for this overlay.".into());
        }
    }
    let mut ny = TOP + map_h + 18.0;
    for note in &notes {
        doc.text(
            "text",
            &[
                ("class", "note".into()),
                ("x", "16".into()),
                ("y", num(ny)),
                ("font-family", "sans-serif".into()),
                ("font-size", "12".into()),
                ("fill", "#444".into()),
            ],
            note,
        );
        ny += 17.0;
    }
    let height = (ny + 6.0).max(ly + 20.0);
    Ok(doc.finish(
        width,
        height,
        &[
            ("class", "fedtopo-map".into()),
            ("data-projection", "equirectangular".into()),
            ("data-lat0", format!("{}", proj.lat0)),
            ("data-lon0", format!("{}", proj.lon0)),
            ("data-scale", format!("{}", frame.scale)),
            ("data-x0", format!("{}", frame.x0)),
            ("data-y0", format!("{}", frame.y0)),
            ("font-family", "sans-serif".into()),
        ],
    ))
}

/// Where each label of `which` goes: `(silo, x, y, text-anchor)`, placed
/// greedily (in silo order) at the first of six spots around its marker
/// that overlaps no marker and no label placed before, else at the spot
/// overlapping least. Label boxes are estimated at 6.2 px per character,
/// 12 px high (11 px sans-serif).
fn place_labels(
    at: &[(f64, f64)],
    which: &[usize],
    labels: &[String],
) -> Vec<(usize, f64, f64, &'static str)> {
    type Rect = (f64, f64, f64, f64);
    let overlap = |a: &Rect, b: &Rect| {
        let w = (a.2.min(b.2) - a.0.max(b.0)).max(0.0);
        let h = (a.3.min(b.3) - a.1.max(b.1)).max(0.0);
        w * h
    };
    let mut taken: Vec<Rect> = at
        .iter()
        .map(|&(x, y)| (x - 5.0, y - 5.0, x + 5.0, y + 5.0))
        .collect();
    let mut out = Vec::new();
    for &i in which {
        let (x, y) = at[i];
        let w = 6.2 * labels[i].chars().count() as f64;
        // (text x, baseline y, anchor, box) of each spot.
        let spots: [(f64, f64, &'static str); 6] = [
            (x + 7.0, y - 6.0, "start"),
            (x + 7.0, y + 14.0, "start"),
            (x - 7.0, y - 6.0, "end"),
            (x - 7.0, y + 14.0, "end"),
            (x, y - 9.0, "middle"),
            (x, y + 19.0, "middle"),
        ];
        let rect = |&(tx, ty, anchor): &(f64, f64, &str)| -> Rect {
            let left = match anchor {
                "start" => tx,
                "end" => tx - w,
                _ => tx - w / 2.0,
            };
            (left, ty - 10.0, left + w, ty + 2.0)
        };
        let cost = |s: &(f64, f64, &'static str)| {
            let r = rect(s);
            taken.iter().map(|t| overlap(&r, t)).sum::<f64>()
        };
        let best = spots
            .iter()
            .find(|s| cost(s) == 0.0)
            .or_else(|| spots.iter().min_by(|a, b| cost(a).total_cmp(&cost(b))))
            .copied()
            .unwrap_or(spots[0]);
        taken.push(rect(&best));
        out.push((i, best.0, best.1, best.2));
    }
    out
}

/// The path of an arc and its arrowhead, pixels.
struct ArcGeometry {
    /// SVG path data (`M .. Q ..`).
    path: String,
    /// The arrowhead's polygon points.
    head: String,
}

/// A quadratic curve from silo marker `a` to `b` bending to its right
/// (screen coordinates, y down), shortened so that it starts and ends at
/// the markers' rims. Markers close together (neighbouring cities) get a
/// curve bulging at least 16 px out, so that no arc hides under them.
fn arc_geometry(a: (f64, f64), b: (f64, f64)) -> ArcGeometry {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt();
    let (ux, uy) = if len > 1e-9 {
        (dx / len, dy / len)
    } else {
        (1.0, 0.0)
    };
    // Right of the direction of travel on screen: (-uy, ux).
    let bend = (0.12 * len).clamp(16.0, 40.0);
    let c = ((a.0 + b.0) / 2.0 - uy * bend, (a.1 + b.1) / 2.0 + ux * bend);
    let toward = |from: (f64, f64), to: (f64, f64), by: f64| {
        let (vx, vy) = (to.0 - from.0, to.1 - from.1);
        let l = (vx * vx + vy * vy).sqrt().max(1e-9);
        (from.0 + vx / l * by, from.1 + vy / l * by)
    };
    let start = toward(a, c, 6.0);
    let end = toward(b, c, 7.0);
    let path = format!(
        "M{} {} Q{} {} {} {}",
        num(start.0),
        num(start.1),
        num(c.0),
        num(c.1),
        num(end.0),
        num(end.1)
    );
    // Arrowhead: 9 px long, 7 px wide, along the curve's end tangent.
    let (tx, ty) = (end.0 - c.0, end.1 - c.1);
    let tl = (tx * tx + ty * ty).sqrt().max(1e-9);
    let (tx, ty) = (tx / tl, ty / tl);
    let back = (end.0 - tx * 9.0, end.1 - ty * 9.0);
    let head = format!(
        "{},{} {},{} {},{}",
        num(end.0),
        num(end.1),
        num(back.0 - ty * 3.5),
        num(back.1 + tx * 3.5),
        num(back.0 + ty * 3.5),
        num(back.1 - tx * 3.5)
    );
    ArcGeometry { path, head }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn circuits_close() {
        assert_eq!(circuit_arcs(&[3, 1]), vec![(3, 1), (1, 3)]);
        assert_eq!(circuit_arcs(&[0, 1, 2]), vec![(0, 1), (1, 2), (2, 0)]);
        assert!(circuit_arcs(&[4]).is_empty());
    }

    #[test]
    fn arcs_bend_right_even_between_neighbours() {
        // East-bound: its right is south, i.e. larger y on screen.
        let control_y = |g: ArcGeometry| -> f64 {
            let q = g.path.split('Q').nth(1).unwrap().to_string();
            q.split_whitespace().nth(1).unwrap().parse().unwrap()
        };
        assert!(control_y(arc_geometry((0.0, 0.0), (100.0, 0.0))) > 0.0);
        // Neighbouring markers: the curve still bulges 16 px out.
        assert!(control_y(arc_geometry((0.0, 0.0), (6.0, 0.0))) >= 16.0);
        assert!(control_y(arc_geometry((6.0, 0.0), (0.0, 0.0))) <= -16.0);
    }
}
