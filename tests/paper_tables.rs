//! Reproduction of Tables 3, 6 and 7 of Marfoq et al. 2020 (needs ../shared).

mod common;

use fedtopo::reproduce::throughput_tables;

#[test]
fn tables_3_6_7_reproduce() {
    let Some(shared) = common::shared_dir("tables_3_6_7_reproduce") else {
        return;
    };
    let (rows, computed) = throughput_tables(&shared.join("underlays/paper")).expect("computes");
    assert_eq!(rows.len(), 60);
    let mut failures = Vec::new();
    for r in &rows {
        // Known, explained deviations (experiments/throughput-tables/README.md):
        // Geant STAR is not reproducible from the published code and data.
        let tol = if r.underlay == "geantdistance" && r.overlay == "star" {
            0.10
        } else {
            0.02
        };
        if r.relative_error.abs() > tol {
            failures.push(format!(
                "table {} s={} {} {}: published {} ours {:.1} ({:+.2}%)",
                r.table,
                r.local_steps,
                r.underlay,
                r.overlay,
                r.published_ms,
                r.ours_ms,
                100.0 * r.relative_error
            ));
        }
    }
    for ((u, s), t) in &computed {
        assert!(
            t["ring-opt"] <= t["ring"] * (1.0 + 1e-12),
            "{u} s={s}: ring-opt worse than ring"
        );
    }
    assert!(
        failures.is_empty(),
        "outside tolerance:\n{}",
        failures.join("\n")
    );
}
