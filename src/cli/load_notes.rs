//! What loading an underlay changed, as lines for people: printed as notes
//! by every command that loads one (`args`) and listed by `underlay info`.

use fedtopo::underlay::Underlay;

/// Human lines describing what loading dropped, merged or approximated.
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
    if r.capacities_defaulted > 0 {
        lines.push(format!(
            "{} link(s) without `capacity`/`LinkSpeedRaw` got the default capacity",
            r.capacities_defaulted
        ));
    }
    lines.extend(r.notes.iter().cloned());
    lines
}
