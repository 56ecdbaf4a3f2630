//! Reproduction of Tables 3, 6 and 7 of Marfoq et al. 2020 (needs ../shared).
//! Deviations are explained in experiments/throughput-tables/README.md.

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
        if r.table == 7 && r.underlay == "geantdistance" && r.overlay == "star" {
            // Published 609.0 is below the s = 5 value (736.0): impossible, as
            // each extra local step adds Tc = 25.4 ms to a STAR round. Check
            // ours is exactly the s = 5 value plus 5 * 25.4 ms instead.
            let s5 = computed[&("geantdistance".to_string(), 5)]["star"];
            assert!((r.ours_ms - (s5 + 5.0 * 25.4)).abs() < 1e-6);
            continue;
        }
        // STAR, MST and delta-MBST are deterministic: rounding only. RING is
        // Christofides, whose Euler tour and shortcutting order are arbitrary.
        let tol = if r.overlay == "ring" { 0.035 } else { 0.005 };
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
