//! End-to-end runs of the D-Cliques commands.

mod common;

use common::fedtopo;

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8")
}

#[test]
fn abstract_dcliques_overlay_counts() {
    let o = fedtopo(&["overlay", "dcliques", "--nodes", "100", "--format", "json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("495 edges (450 intra)"), "{err}");
    assert!(err.contains("9.90 edges/node"), "{err}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(json.is_object());
    // Deterministic.
    let again = fedtopo(&["overlay", "dcliques", "--nodes", "100", "--format", "json"]);
    assert_eq!(o.stdout, again.stdout);
    // Another seed, another topology.
    let other = fedtopo(&[
        "overlay",
        "dcliques",
        "--nodes",
        "100",
        "--format",
        "json",
        "--dc-seed",
        "1",
    ]);
    assert_ne!(o.stdout, other.stdout);
}

#[test]
fn bad_dcliques_input_is_a_clear_error() {
    let o = fedtopo(&["overlay", "dcliques-foo", "--nodes", "10"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("unknown overlay"));
    let o = fedtopo(&["overlay", "ring", "--nodes", "10"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("only for D-Cliques"));
    let o = fedtopo(&[
        "overlay",
        "dcliques",
        "--nodes",
        "20",
        "--dc-remove-intra",
        "50",
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("cannot remove"),
        "{}",
        text(&o.stderr)
    );
    assert!(!text(&o.stderr).contains("panicked"));
}

#[test]
fn compare_and_simulate_with_clique_averaging() {
    let o = fedtopo(&[
        "compare",
        "aws-gaia",
        "--overlays",
        "ring,dcliques-full,dcliques-full+ca",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let tau = |name: &str| -> f64 {
        let header: Vec<&str> = out.lines().next().unwrap().split(',').collect();
        let name_col = header.iter().position(|h| *h == "overlay").unwrap();
        let line = out
            .lines()
            .find(|l| l.split(',').nth(name_col) == Some(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{out}"));
        let col = header.iter().position(|h| *h == "cycle_time_ms").unwrap();
        line.split(',').nth(col).unwrap().parse().unwrap()
    };
    // The gradient phase makes Clique Averaging rounds longer.
    assert!(tau("dcliques-full+ca") > tau("dcliques-full"));
    let o = fedtopo(&[
        "simulate",
        "aws-gaia",
        "--overlays",
        "dcliques-full+ca",
        "--rounds",
        "20",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("dcliques-full+ca"));
}
