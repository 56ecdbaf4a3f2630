//! Output formats shared by the CLI's commands.

use serde::Serialize;

use super::table::Table;
use crate::evaluate::compare::{CompareRow, Comparison, ScheduleStats};

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// Aligned table for people.
    #[default]
    Table,
    /// Comma-separated values, one header line.
    Csv,
    /// Pretty JSON.
    Json,
}

fn shorten(circuit: &[String]) -> String {
    const MAX: usize = 6;
    if circuit.len() <= MAX {
        format!(
            "{} -> {}",
            circuit.join(" -> "),
            circuit.first().map_or("", |s| s)
        )
    } else {
        format!(
            "{} -> ... ({} silos) -> {}",
            circuit[..3].join(" -> "),
            circuit.len(),
            circuit[circuit.len() - 1]
        )
    }
}

/// The cycle-time table of a comparison, one row per overlay, its last
/// column (`critical circuit`) written by `circuit` (the terminal shortens
/// it, the HTML report shows it whole).
pub fn comparison_table(c: &Comparison, circuit: impl Fn(&CompareRow) -> String) -> Table {
    let mut t = Table::new([
        "overlay",
        "arcs",
        "max deg",
        "cycle time (ms)",
        "rounds/s",
        "speed-up vs STAR",
        "critical circuit",
    ]);
    for r in &c.rows {
        t.row([
            r.overlay.clone(),
            r.arcs.to_string(),
            r.max_degree.to_string(),
            format!("{:.1}", r.cycle_time_ms),
            format!("{:.3}", r.rounds_per_s),
            r.speedup_vs_star.map_or("-".into(), |s| format!("{s:.2}x")),
            circuit(r),
        ]);
    }
    t
}

/// A terminal table of a comparison.
pub fn render_table(c: &Comparison) -> String {
    let mut t = comparison_table(c, |r| match &r.schedule {
        Some(ScheduleStats {
            mixing: Some(m),
            maxplus_ms,
            ..
        }) => format!(
            "random ({} matchings, Cb {}); max-plus {:.1} ms",
            m.matchings, m.budget, maxplus_ms
        ),
        Some(st) if st.sampled => format!(
            "sampled ({} rounds, timed as MATCHA): round estimate; max-plus {:.1} ms",
            st.rounds, st.maxplus_ms
        ),
        Some(st) => format!(
            "periodic ({} rounds): max-plus rate; round estimate {:.1} ms",
            st.rounds, st.mean_round_ms
        ),
        None => shorten(&r.critical_circuit),
    });
    t.align_right(1..6).shrink([6]);
    let baseline = match (&c.star_center, c.star_center_policy.as_deref()) {
        (Some(centre), Some(policy)) => format!(
            "speed-up vs STAR centred at {centre} ({})\n",
            match policy {
                "fastest" => "--center fastest: the centre with the least STAR cycle time",
                "load" => "--center load: highest load centrality, the paper's choice",
                "first" => "--center first: the first silo",
                _ => "--center: the silo asked for",
            }
        ),
        _ => String::new(),
    };
    let notes: String = c
        .rows
        .iter()
        .filter_map(|r| {
            Some(format!(
                "note: {}: {}\n",
                r.overlay,
                r.approximation.as_ref()?
            ))
        })
        .collect();
    format!("{} ({} silos)\n{t}\n{baseline}{notes}", c.underlay, c.silos)
}

#[derive(Serialize)]
struct CsvRow<'a> {
    underlay: &'a str,
    silos: usize,
    overlay: &'a str,
    arcs: usize,
    max_degree: usize,
    cycle_time_ms: f64,
    rounds_per_s: f64,
    speedup_vs_star: Option<f64>,
    critical_circuit: String,
    /// What `arcs` and `max_degree` are: `overlay` (the one overlay of every
    /// round) or `sampled_rounds:R` for schedules (arcs: the mean over the R
    /// sampled rounds; max_degree: the largest of any round).
    degree_basis: String,
    /// Schedules: the exact max-plus growth rate of the sampled rounds, ms.
    maxplus_ms: Option<f64>,
    /// Schedules: communication budget `Cb`.
    budget: Option<f64>,
    /// Schedules: number of matchings.
    matchings: Option<usize>,
    /// Schedules: algebraic connectivity of the expected topology.
    lambda2: Option<f64>,
    /// Schedules: spectral norm of `E[W^T W] - J/n`.
    rho: Option<f64>,
    /// What was approximated in building the overlay (empty: nothing).
    approximation: Option<&'a str>,
}

/// CSV of a comparison (one row per overlay; the circuit joined by `;`;
/// for schedules (MATCHA) the sampling basis of `arcs` / `max_degree` and
/// the schedule's max-plus rate and mixing figures, empty for static
/// overlays; what was approximated, empty when nothing was).
pub fn render_csv(c: &Comparison) -> String {
    let rows: Vec<CsvRow> = c
        .rows
        .iter()
        .map(|r| {
            let mixing = r.schedule.as_ref().and_then(|st| st.mixing.as_ref());
            CsvRow {
                underlay: &c.underlay,
                silos: c.silos,
                overlay: &r.overlay,
                arcs: r.arcs,
                max_degree: r.max_degree,
                cycle_time_ms: r.cycle_time_ms,
                rounds_per_s: r.rounds_per_s,
                speedup_vs_star: r.speedup_vs_star,
                critical_circuit: r.critical_circuit.join(";"),
                degree_basis: r.schedule.as_ref().map_or("overlay".to_string(), |st| {
                    format!("sampled_rounds:{}", st.rounds)
                }),
                maxplus_ms: r.schedule.as_ref().map(|st| st.maxplus_ms),
                budget: mixing.map(|m| m.budget),
                matchings: mixing.map(|m| m.matchings),
                lambda2: mixing.map(|m| m.lambda2),
                rho: mixing.map(|m| m.rho),
                approximation: r.approximation.as_deref(),
            }
        })
        .collect();
    let text = crate::csv_file::serde_csv(&rows).expect("in-memory CSV of plain rows");
    match &c.network {
        Some(n) => crate::csv_file::append_columns(&text, &n.csv_columns())
            .expect("in-memory CSV written above"),
        None => text,
    }
}

/// Pretty JSON of any serialisable report.
pub fn render_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("plain data serialises") + "\n"
}
