//! `--report DIR` (compare, simulate, design, run): the parts of a
//! self-contained `report.html` ([`fedtopo::report::html`]) several
//! commands share.

use std::path::Path;

use anyhow::{Context, Result};

use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::description::NetworkDescription;
use fedtopo::net::underlay::Underlay;
use fedtopo::report::html::{HtmlReport, Section};
use fedtopo::report::map::{overlay_map, MapOptions};
use fedtopo::report::table::Table;

/// The command line as typed (arguments with spaces quoted), for the page.
pub fn command_line() -> String {
    let args: Vec<String> = std::env::args()
        .enumerate()
        .map(|(i, a)| {
            let a = if i == 0 { "fedtopo".to_string() } else { a };
            if a.contains([' ', '"', '\'']) || a.is_empty() {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                a
            }
        })
        .collect();
    args.join(" ")
}

/// A page titled `title`, with the command line and fedtopo's version.
pub fn page(title: &str) -> HtmlReport {
    let mut r = HtmlReport::new(title);
    r.meta(&format!(
        "{} (fedtopo {})",
        command_line(),
        env!("CARGO_PKG_VERSION")
    ));
    r
}

/// A section describing the network: the underlay and the knobs.
pub fn network_section(
    report: &mut HtmlReport,
    underlay: &Underlay,
    model: &DelayModel,
    network: &NetworkDescription,
) {
    let mut t = Table::new(["quantity", "value"]);
    t.row(["underlay", underlay.name.as_str()]);
    t.row(["routers", &underlay.routers.len().to_string()]);
    t.row(["links", &underlay.links.len().to_string()]);
    t.row(["silos", &model.silo_count().to_string()]);
    for (k, v) in network.csv_columns() {
        if !v.is_empty() {
            t.row([k.to_string(), v]);
        }
    }
    report
        .section("Network")
        .table(&t)
        .note("compute_ms: ms per local step; up/down: silo access capacities, bit/s; model_bits: model size M, bit.");
}

/// One map per overlay (its critical circuit highlighted), or the reason
/// a map cannot be drawn.
pub fn maps(
    section: &mut Section,
    underlay: &Underlay,
    model: &DelayModel,
    overlays: &[&EvaluatedOverlay],
) {
    for o in overlays {
        section.subheading(&o.name());
        let timing = o.cycle_time(model);
        match timing {
            Ok(t) => match overlay_map(underlay, model, o, Some(&t), &MapOptions::default()) {
                Ok(svg) => {
                    let what = if o.is_schedule() {
                        "the union of its rounds, each arc as wide as the share of rounds it is active in"
                    } else {
                        "the critical circuit highlighted"
                    };
                    section.figure(
                        &svg,
                        &format!(
                            "{} on {}: arcs coloured by eq. (3) delay (ms); {what}.",
                            o.name(),
                            underlay.name
                        ),
                    );
                }
                Err(e) => {
                    section.error(&format!("no map: {e}"));
                }
            },
            Err(e) => {
                section.error(&format!("no map: {e}"));
            }
        }
    }
}

/// Writes `report` to `dir/report.html` and says so on stderr.
pub fn write(report: &HtmlReport, dir: &Path) -> Result<()> {
    let path = report
        .write(dir)
        .with_context(|| format!("--report: writing {}/report.html", dir.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
