//! Reproduction of Tables 3, 6, 7 and 10 of Marfoq et al. 2020 (needs
//! ../shared): runs `experiments/throughput-tables/experiment.toml` and
//! `experiments/table10-matcha-budget/experiment.toml` through the library
//! (the same code as `fedtopo run`) and checks ours vs published.
//! Deviations are explained in those directories' README.md.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fedtopo::experiment::{assemble, expand, run_jobs, ExperimentSpec, RunOptions};

/// Runs `experiments/NAME/experiment.toml` into a fresh temporary directory,
/// which it returns.
fn run_experiment(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("experiments")
        .join(name);
    let spec = ExperimentSpec::load(&dir.join("experiment.toml")).expect("valid file");
    let jobs = expand(&spec.grid);
    let out = std::env::temp_dir().join(format!("fedtopo-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let opts = RunOptions {
        out: out.clone(),
        base_dir: dir.clone(),
        threads: None,
        shard: None,
        force: true,
        progress: false,
    };
    run_jobs(&spec, &jobs, &opts).expect("runs");
    assemble(&spec, &jobs, &out, &dir).expect("assembles");
    out
}

#[test]
fn tables_3_6_7_reproduce() {
    let out = run_experiment("throughput-tables");
    let mut rdr = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let header = rdr.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    // (underlay, s) -> overlay -> cycle time.
    let mut computed: BTreeMap<(String, u32), BTreeMap<String, f64>> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut compared = 0;
    for rec in rdr.records() {
        let rec = rec.unwrap();
        let r: Vec<&str> = rec.iter().collect();
        let (underlay, overlay) = (r[col("underlay")], r[col("overlay")]);
        let s: u32 = r[col("local_steps")].parse().unwrap();
        let ours: f64 = r[col("cycle_time_ms")].parse().unwrap();
        computed
            .entry((underlay.to_string(), s))
            .or_default()
            .insert(overlay.to_string(), ours);
        if r[col("published_ms")].is_empty() {
            continue;
        }
        compared += 1;
        let published: f64 = r[col("published_ms")].parse().unwrap();
        let err: f64 = r[col("relative_error")].parse().unwrap();
        assert!((err - (ours - published) / published).abs() < 1e-12);
        if s == 10 && underlay == "geantdistance" && overlay == "star" {
            // Published 609.0 is below the s = 5 value (736.0): impossible, as
            // each extra local step adds Tc = 25.4 ms to a STAR round. Checked
            // below: ours is exactly the s = 5 value plus 5 * 25.4 ms.
            continue;
        }
        // STAR, MST and delta-MBST are deterministic: rounding only. RING is
        // Christofides, whose Euler tour and shortcutting order are arbitrary;
        // MATCHA's matchings depend on the edge colouring (README).
        let tol = match overlay {
            "ring" => 0.035,
            "matcha" | "matcha+" => 0.03,
            _ => 0.005,
        };
        if err.abs() > tol {
            failures.push(format!(
                "s={s} {underlay} {overlay}: published {published} ours {ours:.1} ({:+.2}%)",
                100.0 * err
            ));
        }
    }
    // 5 underlays x 3 tables x (STAR, MST, delta-MBST, RING, MATCHA, MATCHA+).
    assert_eq!(compared, 90);
    let geant = |s: u32| computed[&("geantdistance".to_string(), s)]["star"];
    assert!((geant(10) - (geant(5) + 5.0 * 25.4)).abs() < 1e-6);
    for ((u, s), t) in &computed {
        assert!(
            t["ring-opt"] <= t["ring"] * (1.0 + 1e-12),
            "{u} s={s}: ring-opt worse than ring"
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    assert!(
        failures.is_empty(),
        "outside tolerance:\n{}",
        failures.join("\n")
    );
}

/// Table 10 (AWS North America, MATCHA budget sweep over the underlay,
/// delta-MBST and RING). The published values are training-time speed-ups;
/// ours is the cycle-time ratio MATCHA / RING. Where the paper's speed-up is
/// throughput alone (MATCHA over the complete underlay, 5 of 7 budgets per
/// access capacity) they agree within 5%; the README explains the others.
#[test]
fn table10_cycle_time_ratios() {
    let out = run_experiment("table10-matcha-budget");
    let mut rdr = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let header = rdr.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let mut compared = 0;
    // (access, base) -> [(budget, ratio)]
    let mut sweep: BTreeMap<(String, String), Vec<(f64, f64)>> = BTreeMap::new();
    for rec in rdr.records() {
        let rec = rec.unwrap();
        let r: Vec<&str> = rec.iter().collect();
        let ratio: f64 = r[col("matcha_over_ring")].parse().unwrap();
        if r[col("overlay")] == "ring" {
            assert_eq!(ratio, 1.0);
            continue;
        }
        let budget: f64 = r[col("matcha_budget")].parse().unwrap();
        let maxplus: f64 = r[col("matcha_maxplus_ms")].parse().unwrap();
        let estimate: f64 = r[col("cycle_time_ms")].parse().unwrap();
        assert!(maxplus <= estimate * (1.0 + 1e-12), "{}", r[col("overlay")]);
        sweep
            .entry((r[col("access")].into(), r[col("matcha_base")].into()))
            .or_default()
            .push((budget, ratio));
        compared += 1;
        let published: f64 = r[col("published")].parse().unwrap();
        if r[col("matcha_base")] == "underlay" && ![0.8, 0.2].contains(&budget) {
            let err = (ratio - published) / published;
            assert!(
                err.abs() < 0.05,
                "{}: {ratio} vs {published}",
                r[col("overlay")]
            );
        }
    }
    assert_eq!(compared, 42);
    // A smaller budget activates fewer links per round: shorter rounds.
    for (key, mut points) in sweep {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in points.windows(2) {
            assert!(w[0].1 <= w[1].1 + 1e-9, "{key:?}: {points:?}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}
