//! Report of the initialisation-gain exponents
//! ([`crate::reproduce::init_gain`]): `experiments/init-gain/{exponents.md,
//! exponents.csv, points.csv}`.

use crate::csv_file::serde_csv;
use crate::report::table::Table;
use crate::reproduce::init_gain::{ExponentOptions, ExponentRow};

/// Markdown table: family, ours (95 % CI), published, difference.
pub fn exponents_markdown(rows: &[ExponentRow]) -> String {
    let mut t = Table::new([
        "family",
        "alpha (ours)",
        "95 % CI",
        "alpha (paper)",
        "ours - paper",
    ]);
    for r in rows {
        let (p, d) = match r.paper_alpha {
            Some(p) => (format!("{p:.3}"), format!("{:+.3}", r.alpha - p)),
            None => ("-".into(), "-".into()),
        };
        t.row([
            r.family.clone(),
            format!("{:.3}", r.alpha),
            format!("±{:.3}", r.alpha_ci95),
            p,
            d,
        ]);
    }
    t.to_markdown()
}

/// `exponents.md`: a heading naming the options, then [`exponents_markdown`].
pub fn exponents_page(rows: &[ExponentRow], opts: &ExponentOptions) -> String {
    format!(
        "## ||pi|| ~ n^-alpha (sizes {:?}, {} seeds, mean degree {})\n\n{}",
        opts.sizes,
        opts.seeds,
        opts.mean_degree,
        exponents_markdown(rows)
    )
}

/// `exponents.csv`: one row per family.
pub fn exponents_csv(rows: &[ExponentRow]) -> Result<String, csv::Error> {
    serde_csv(rows)
}

/// `points.csv`: `family,n,mean_pi_norm,mean_component_size`, one row per
/// family and size.
pub fn points_csv(rows: &[ExponentRow]) -> String {
    let mut t = Table::new(["family", "n", "mean_pi_norm", "mean_component_size"]);
    for r in rows {
        for (n, norm, m) in &r.points {
            t.row([
                r.family.clone(),
                n.to_string(),
                format!("{norm:.6e}"),
                format!("{m:.1}"),
            ]);
        }
    }
    t.to_csv()
}
