//! Topology Zoo files load by default, honestly (issue 15, item 2): estimated
//! positions reported in `underlay info` and as notes, files without
//! coordinates and `--default-length-km`, the `--missing-coordinates`
//! policies, experiment files' loading keys and `fedtopo run` checking the
//! whole grid first.

mod common;

use common::fedtopo;
use std::path::{Path, PathBuf};
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-zoo-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.to_string_lossy().into_owned()
}

/// A (0, 0), B (0, 90), C (North Pole), and X without coordinates linked to
/// all three (twice to A): X's estimate is the spherical mean of A, B, C.
const ONE_UNLOCATED: &str = r#"graph [
  node [ id 0 label "A" Latitude 0 Longitude 0 ]
  node [ id 1 label "B" Latitude 0 Longitude 90 ]
  node [ id 2 label "C" Latitude 90 Longitude 0 ]
  node [ id 3 label "X" ]
  edge [ source 3 target 0 ]
  edge [ source 1 target 3 ]
  edge [ source 3 target 2 ]
  edge [ source 0 target 3 ]
  edge [ source 0 target 1 ]
]
"#;

const NO_COORDINATES: &str = r#"graph [
  node [ id 0 label "P" ]
  node [ id 1 label "Q" ]
  node [ id 2 label "R" ]
  edge [ source 0 target 1 ]
  edge [ source 1 target 2 ]
  edge [ source 2 target 0 ]
]
"#;

#[test]
fn estimated_position_is_reported_in_info_and_as_a_note() {
    let dir = tmp("one");
    let file = write(&dir, "one.gml", ONE_UNLOCATED);
    let o = fedtopo(&["underlay", "info", &file, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["routers"], 4);
    let est = &v["estimated_positions"][0];
    assert_eq!(est["node"]["label"], "X");
    assert_eq!(est["node"]["gml_id"], 3);
    assert_eq!(est["round"], 1);
    // By hand: the mean of the unit vectors (1,0,0), (0,1,0), (0,0,1) is at
    // latitude atan(1/sqrt 2) = 35.26438968 degrees, longitude 45.
    let lat = est["lat_lon"][0].as_f64().unwrap_or(f64::NAN);
    let lon = est["lat_lon"][1].as_f64().unwrap_or(f64::NAN);
    assert!((lat - 35.264_389_682_754_654).abs() < 1e-9, "{lat}");
    assert!((lon - 45.0).abs() < 1e-9, "{lon}");
    let used: Vec<&str> = est["neighbours"]
        .as_array()
        .map(|a| a.iter().filter_map(|n| n["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(used, ["A", "B", "C"]);

    let o = fedtopo(&["underlay", "info", &file]);
    let table = stdout(&o);
    assert!(table.contains("1 position(s) estimated"), "{table}");
    assert!(
        table.contains("estimated the position of X (id 3) (no Latitude/Longitude) as (35.2644, 45.0000), the mean of 3 neighbour(s) (round 1): A (id 0), B (id 1), C (id 2)"),
        "{table}"
    );

    let o = fedtopo(&["compare", &file, "--overlays", "ring"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("one (4 silos)"), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("note: one: estimated the position of X (id 3)"),
        "{err}"
    );
    assert!(
        err.contains("note: one: 3 link length(s) are geodesics to estimated positions"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_coordinates_policies_parse_and_apply() {
    let dir = tmp("policies");
    let file = write(&dir, "one.gml", ONE_UNLOCATED);
    let o = fedtopo(&["compare", &file, "--missing-coordinates", "refuse"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("X (id 3): no Latitude/Longitude"), "{err}");
    assert!(err.contains("--missing-coordinates estimate"), "{err}");
    let o = fedtopo(&[
        "compare",
        &file,
        "--missing-coordinates",
        "drop",
        "--largest-component",
        "--overlays",
        "ring",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Dropping X isolates C, left out by --largest-component: both reported.
    let err = stderr(&o);
    assert!(
        err.contains("dropped 2 node(s): X (id 3): no Latitude/Longitude"),
        "{err}"
    );
    assert!(
        err.contains("C (id 2): not in the largest connected component"),
        "{err}"
    );
    let o = fedtopo(&["compare", &file, "--missing-coordinates", "estimate"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fedtopo(&["compare", &file, "--missing-coordinates", "guess"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("refuse") && err.contains("estimate") && err.contains("drop"),
        "{err}"
    );
    let o = fedtopo(&["compare", "--help"]);
    assert!(stdout(&o).contains("[default: estimate]"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_coordinates_is_a_clear_message_and_loads_with_a_default_length() {
    let dir = tmp("nocoords");
    let file = write(&dir, "bare.gml", NO_COORDINATES);
    let o = fedtopo(&["compare", &file]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("none of the 3 router(s) kept has Latitude/Longitude"),
        "{err}"
    );
    assert!(
        err.contains("--default-length-km KM") && err.contains("`distance`"),
        "{err}"
    );
    let o = fedtopo(&["compare", &file, "--default-length-km", "50"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("3 link length(s) set to the default 50 km"),
        "{}",
        stderr(&o)
    );
    let o = fedtopo(&["underlay", "info", &file, "--default-length-km", "50"]);
    assert!(
        stdout(&o).contains("total length  150 km"),
        "{}",
        stdout(&o)
    );
    let o = fedtopo(&["compare", &file, "--default-length-km=-3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("expected a finite length >= 0"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_reports_every_grid_problem_before_running_any_job() {
    let dir = tmp("grid");
    write(&dir, "bare.gml", NO_COORDINATES);
    write(&dir, "one.gml", ONE_UNLOCATED);
    let spec = write(
        &dir,
        "bad.toml",
        r#"
name = "bad-grid"
kind = "compare"
[grid]
underlay = ["aws-gaia", "one.gml", "bare.gml", "missing.gml"]
overlay = ["ring", "no-such-overlay"]
access = ["10G", "fast"]
core_capacity = ["file", "huge"]
"#,
    );
    let out = dir.join("out");
    let o = fedtopo(&["run", &spec, "--out", out.to_str().unwrap_or("")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("bad-grid: 5 problem(s) in the grid, no job was run"),
        "{err}"
    );
    for needle in [
        "underlay `bare.gml`: ",
        "--default-length-km",
        "underlay `missing.gml`: ",
        "overlay `no-such-overlay`: ",
        "access `fast`: expected",
        "core_capacity `huge`: expected",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    assert!(!err.contains("underlay `one.gml`"), "{err}");
    assert!(!out.join("jobs").exists(), "a job ran");

    // The loading keys: a default length for the file without coordinates.
    let spec = write(
        &dir,
        "good.toml",
        r#"
name = "good-grid"
kind = "compare"
default_length_km = 100
missing_coordinates = "estimate"
[grid]
underlay = ["one.gml", "bare.gml"]
overlay = ["ring"]
"#,
    );
    let o = fedtopo(&["run", &spec, "--out", out.to_str().unwrap_or("")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("note: one: estimated the position of X (id 3)"),
        "{err}"
    );
    assert!(
        err.contains("note: bare: 3 link length(s) set to default_length_km"),
        "{err}"
    );

    let spec = write(
        &dir,
        "policy.toml",
        "name = \"p\"\nkind = \"compare\"\nmissing_coordinates = \"guess\"\n[grid]\nunderlay = [\"one.gml\"]\n",
    );
    let o = fedtopo(&["run", &spec]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("policy.toml:3:"), "{err}");
    assert!(err.contains("`refuse`, `estimate`"), "{err}");
    let spec = write(
        &dir,
        "refuse.toml",
        "name = \"r\"\nkind = \"compare\"\nmissing_coordinates = \"refuse\"\n[grid]\nunderlay = [\"one.gml\"]\n",
    );
    let o = fedtopo(&["run", &spec, "--out", out.to_str().unwrap_or("")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("X (id 3): no Latitude/Longitude"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Topology Zoo through the binary: Garr201201's 13 routers without
/// coordinates are all timed, each estimate noted.
#[test]
fn zoo_file_with_unlocated_routers_compares_by_default() {
    let Some(shared) = common::shared_dir("zoo_file_with_unlocated_routers_compares_by_default")
    else {
        return;
    };
    let file = shared.join("underlays/topology-zoo/Garr201201.gml");
    let o = fedtopo(&["compare", file.to_str().unwrap_or(""), "--overlays", "ring"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Garr201201 (61 silos)"),
        "{}",
        stdout(&o)
    );
    let notes = stderr(&o)
        .lines()
        .filter(|l| l.starts_with("note: Garr201201: estimated the position of"))
        .count();
    assert_eq!(notes, 13, "{}", stderr(&o));
    // Bandcon's router 20 has no link: left out by default and named;
    // kept, it makes the underlay disconnected.
    let bandcon = shared.join("underlays/topology-zoo/Bandcon.gml");
    let bandcon = bandcon.to_str().unwrap_or("");
    let o = fedtopo(&["compare", bandcon, "--overlays", "ring"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Bandcon (21 silos)"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("no link in the file (isolated router"),
        "{}",
        stderr(&o)
    );
    let o = fedtopo(&["compare", bandcon, "--isolated-routers", "keep"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--largest-component"), "{}", stderr(&o));
    // DeutscheTelekom's linked routers form two components: still refused.
    let dt = shared.join("underlays/topology-zoo/DeutscheTelekom.gml");
    let o = fedtopo(&["compare", dt.to_str().unwrap_or("")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--largest-component"), "{}", stderr(&o));
}
