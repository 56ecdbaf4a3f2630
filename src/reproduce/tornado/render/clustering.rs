//! Table 3 of \[Lee21\] (clustering-cost reduction of CLUSTER), ours
//! vs published, as a terminal table.

use crate::report::table::Table;
use crate::reproduce::tornado::ClusteringRow;

/// The rows of [`crate::reproduce::tornado::table3`] as a table.
pub fn clustering_table(rows: &[ClusteringRow]) -> Table {
    let mut t = Table::new([
        "dataset (published)",
        "assignment",
        "our partition",
        "initial",
        "final",
        "1 - final/initial",
        "per-seed range",
        "(initial-final)/final",
        "published initial",
        "published final",
        "published reduction",
    ]);
    for r in rows {
        t.row([
            r.dataset.clone(),
            format!("{:?}", r.assign).to_lowercase(),
            r.partition.clone(),
            format!("{:.3}", r.initial),
            format!("{:.3}", r.final_cost),
            format!("{:.1}%", 100.0 * r.reduction),
            format!(
                "{:.1}%..{:.1}%",
                100.0 * r.reduction_range.0,
                100.0 * r.reduction_range.1
            ),
            format!("{:.1}%", 100.0 * r.reduction_paper),
            format!("{:.3}", r.published.0),
            format!("{:.3}", r.published.1),
            format!("{:.1}% (= (i-f)/f)", 100.0 * r.published.2),
        ]);
    }
    t
}
