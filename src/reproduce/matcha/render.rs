//! Report of the MATCHA reproduction ([`crate::reproduce::matcha`]):
//! `experiments/matcha/results.{md,csv}`.

use crate::csv_file::serde_csv;
use crate::report::table::Table;
use crate::reproduce::matcha::MatchaRow;

/// Markdown of Tables 3/6/7, ours vs published.
pub fn tables_markdown(rows: &[MatchaRow]) -> String {
    let mut t = Table::new([
        "table",
        "s",
        "underlay",
        "overlay",
        "published ms",
        "ours ms",
        "error",
        "seeds min..max ms",
        "max-plus ms (95% CI)",
        "matchings",
        "lambda2 (rel. gap)",
        "alpha",
        "rho (gap)",
        "solve s",
    ]);
    for r in rows {
        t.row([
            r.table.to_string(),
            r.local_steps.to_string(),
            r.underlay.clone(),
            r.overlay.clone(),
            format!("{:.1}", r.published_ms),
            format!("{:.1}", r.ours_ms),
            format!("{:+.1}%", 100.0 * r.relative_error),
            format!("{:.1}..{:.1}", r.seed_min_ms, r.seed_max_ms),
            format!("{:.1} ± {:.1}", r.maxplus_ms, r.maxplus_ci95_ms),
            r.matchings.to_string(),
            format!("{:.4} ({:.1e})", r.lambda2, r.lambda2_rel_gap),
            format!("{:.4}", r.alpha),
            format!("{:.4} ({:.1e})", r.rho, r.rho_gap),
            format!("{:.2}", r.solve_s),
        ]);
    }
    t.to_markdown()
}

/// `results.md`: a heading and [`tables_markdown`].
pub fn results_markdown(rows: &[MatchaRow]) -> String {
    format!(
        "## Tables 3, 6, 7: MATCHA (Gc) and MATCHA+ (Gu), ours vs published\n\n{}",
        tables_markdown(rows)
    )
}

/// `results.csv`: every field of every row.
pub fn results_csv(rows: &[MatchaRow]) -> Result<String, csv::Error> {
    serde_csv(rows)
}
