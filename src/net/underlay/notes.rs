//! What loading an underlay changed, as lines for people: the CLI prints
//! them as notes whenever it loads an underlay, `underlay info` lists them
//! ([`crate::report::underlay_info`]), and the Python bindings return them.

use super::{LengthSource, Underlay};

/// Human lines describing what loading dropped, merged or approximated
/// (the underlay's [`super::LoadReport`]), one per change.
pub fn report_lines(u: &Underlay) -> Vec<String> {
    let r = &u.report;
    let mut lines = Vec::new();
    if !r.dropped_nodes.is_empty() {
        lines.push(format!(
            "dropped {} node(s): {}",
            r.dropped_nodes.len(),
            r.dropped_nodes.join("; ")
        ));
    }
    if !r.dropped_components.is_empty() {
        lines.push(format!(
            "kept the largest component; dropped components of sizes {:?}",
            r.dropped_components
        ));
    }
    if r.self_loops_removed > 0 {
        lines.push(format!("removed {} self-loop(s)", r.self_loops_removed));
    }
    if r.parallel_edges_merged > 0 {
        lines.push(format!(
            "merged {} parallel edge(s) (shortest length, largest capacity kept)",
            r.parallel_edges_merged
        ));
    }
    if r.lengths_from_geodesic > 0 {
        lines.push(format!(
            "{} link length(s) computed as WGS-84 geodesics (no `distance` attribute)",
            r.lengths_from_geodesic
        ));
    }
    for e in &r.estimated_positions {
        let used: Vec<String> = e.neighbours.iter().map(ToString::to_string).collect();
        lines.push(format!(
            "estimated the position of {} (no Latitude/Longitude) as ({:.4}, {:.4}), the mean of {} neighbour(s) (round {}): {}",
            e.node,
            e.lat_lon.0,
            e.lat_lon.1,
            used.len(),
            e.round,
            used.join(", ")
        ));
    }
    if r.lengths_from_estimates > 0 {
        lines.push(format!(
            "{} link length(s) are geodesics to estimated positions (approximations)",
            r.lengths_from_estimates
        ));
    }
    if r.lengths_defaulted > 0 {
        let km = u
            .links
            .iter()
            .find(|l| l.length_source == LengthSource::DefaultLength)
            .map_or(0.0, |l| l.length_km);
        lines.push(format!(
            "{} link length(s) set to the default {km} km (no `distance`, no position; approximations)",
            r.lengths_defaulted
        ));
    }
    if r.capacities_defaulted > 0 {
        lines.push(format!(
            "{} link(s) without `capacity`/`LinkSpeedRaw` got the default capacity",
            r.capacities_defaulted
        ));
    }
    lines.extend(r.notes.iter().cloned());
    lines
}
