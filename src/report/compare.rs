//! `fedtopo compare`: build each overlay and compute its cycle time.

use serde::Serialize;

use crate::delay::DelayModel;
use crate::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use crate::overlay::Overlay;
use crate::timing::{cycle_time, TimingError};
use crate::underlay::Underlay;

/// One overlay's line in a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// Overlay name.
    pub overlay: String,
    /// Number of arcs.
    pub arcs: usize,
    /// Largest in- or out-degree.
    pub max_degree: usize,
    /// Cycle time, ms per round.
    pub cycle_time_ms: f64,
    /// Rounds per second (1000 / cycle time).
    pub rounds_per_s: f64,
    /// STAR's cycle time divided by this one's (when STAR is in the comparison).
    pub speedup_vs_star: Option<f64>,
    /// A critical circuit, as silo labels.
    pub critical_circuit: Vec<String>,
}

/// A comparison: the rows plus the overlays themselves (for export).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Underlay name.
    pub underlay: String,
    /// Number of silos.
    pub silos: usize,
    /// One row per overlay, in the order asked.
    pub rows: Vec<CompareRow>,
    /// The overlays built.
    #[serde(skip)]
    pub overlays: Vec<Overlay>,
}

/// Builds every overlay of `kinds` and computes its cycle time.
pub fn compare_overlays(
    underlay: &Underlay,
    model: &DelayModel,
    kinds: &[OverlayKind],
    options: &BuildOptions,
) -> Result<Comparison, TimingError> {
    let labels: Vec<&str> = underlay.routers.iter().map(|r| r.label.as_str()).collect();
    let mut rows = Vec::new();
    let mut overlays = Vec::new();
    for &kind in kinds {
        let overlay = build_overlay(kind, underlay, model, options)?;
        let t = cycle_time(&overlay, model)?;
        rows.push(CompareRow {
            overlay: kind.name().to_string(),
            arcs: overlay.arc_count(),
            max_degree: overlay.max_degree(),
            cycle_time_ms: t.cycle_time_ms,
            rounds_per_s: t.rounds_per_second(),
            speedup_vs_star: None,
            critical_circuit: t
                .critical_circuit
                .iter()
                .map(|&i| labels[i].to_string())
                .collect(),
        });
        overlays.push(overlay);
    }
    if let Some(star) = rows
        .iter()
        .find(|r| r.overlay == "star")
        .map(|r| r.cycle_time_ms)
    {
        for r in &mut rows {
            r.speedup_vs_star = Some(star / r.cycle_time_ms);
        }
    }
    Ok(Comparison {
        underlay: underlay.name.clone(),
        silos: underlay.node_count(),
        rows,
        overlays,
    })
}
