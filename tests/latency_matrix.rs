//! Latency matrices as the network (`fedtopo compare MATRIX.csv`): an
//! independent cross-check against the routed underlay they were written
//! from, and real measurements with gaps (Azure inter-region round-trip
//! times, `tests/data/azure/`).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::fedtopo;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::LoadOptions;

const AZURE: &str = "tests/data/azure/inter-region-rtt.csv";

fn azure() -> String {
    format!("{}/{AZURE}", env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-matrix-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `overlay -> cycle_time_ms` of a `compare --format csv` run.
fn cycle_times(args: &[&str]) -> BTreeMap<String, f64> {
    let mut all = vec!["compare", "--format", "csv"];
    all.extend_from_slice(args);
    let o = fedtopo(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut rdr = csv::Reader::from_reader(o.stdout.as_slice());
    let h = rdr.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|x| x == n).unwrap();
    let (ov, ct) = (col("overlay"), col("cycle_time_ms"));
    rdr.records()
        .map(|r| {
            let r = r.unwrap();
            (r[ov].to_string(), r[ct].parse().unwrap())
        })
        .collect()
}

/// The one-way latencies and available bandwidths of the routed built-in
/// underlay, written as matrices and read back with `--matrix-values
/// one-way --bandwidth-matrix`, time every overlay exactly as the underlay
/// does (the matrices carry eq. (3)'s `l(i,j)` and `A(i,j)`, 4 ms per path
/// included), and as round-trip times halved.
#[test]
fn matrices_written_from_an_underlay_time_it_identically() {
    let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
    let model = NetworkSpec::default().build(&u).unwrap();
    let c = &model.connectivity;
    let n = model.silo_count();
    let labels: Vec<&str> = u.routers.iter().map(|r| r.label.as_str()).collect();
    let (mut lat, mut rtt, mut bw) = (String::new(), String::new(), String::new());
    for text in [&mut lat, &mut rtt, &mut bw] {
        text.push_str(&format!("from,{}\n", labels.join(",")));
    }
    for (i, label) in labels.iter().enumerate() {
        let cells = |f: &dyn Fn(usize) -> String| {
            (0..n)
                .map(|j| if i == j { String::new() } else { f(j) })
                .collect::<Vec<_>>()
                .join(",")
        };
        // `{:?}` prints the shortest text that reads back to the same f64.
        lat.push_str(&format!(
            "{},{}\n",
            label,
            cells(&|j| format!("{:?}", c.latency_ms(i, j)))
        ));
        rtt.push_str(&format!(
            "{},{}\n",
            label,
            cells(&|j| format!("{:?}", 2.0 * c.latency_ms(i, j)))
        ));
        bw.push_str(&format!(
            "{},{}\n",
            label,
            cells(&|j| format!("{:?}", c.bandwidth_bps(i, j)))
        ));
    }
    let dir = scratch("crosscheck");
    let (lat_p, rtt_p, bw_p) = (
        dir.join("gaia.csv"),
        dir.join("gaia-rtt.csv"),
        dir.join("bw.csv"),
    );
    std::fs::write(&lat_p, lat).unwrap();
    std::fs::write(&rtt_p, rtt).unwrap();
    std::fs::write(&bw_p, bw).unwrap();
    let overlays = ["--overlays", "star,mst,delta-mbst,ring,ring-opt,complete"];
    let mut routed = vec!["aws-gaia"];
    routed.extend(overlays);
    let want = cycle_times(&routed);
    let bw_s = bw_p.to_str().unwrap();
    for (file, values) in [(&lat_p, "one-way"), (&rtt_p, "rtt")] {
        let mut args = vec![
            file.to_str().unwrap(),
            "--matrix-values",
            values,
            "--bandwidth-matrix",
            bw_s,
            "--matrix-gaps",
            "refuse",
        ];
        args.extend(overlays);
        let got = cycle_times(&args);
        assert_eq!(got.len(), want.len());
        for (ov, w) in &want {
            let g = got[ov];
            assert!(
                (g - w).abs() <= 1e-9 * w,
                "{values} {ov}: matrix {g} vs underlay {w}"
            );
        }
    }
    // Without the bandwidth matrix every pair gets the default 1 Gbit/s, not
    // the paper's capacity / hops: slower or equal, never faster.
    let mut args = vec![lat_p.to_str().unwrap(), "--matrix-values", "one-way"];
    args.extend(overlays);
    for (ov, g) in cycle_times(&args) {
        assert!(g >= want[&ov] - 1e-9, "{ov}: {g} < {}", want[&ov]);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The Azure matrix (50 sources x 50 destinations, 51 regions: West India
/// only as a column, Indonesia Central only as a row; Jio India West
/// measured to few regions) is refused by default, naming the gaps and the
/// policies; `path` and `drop` time it and report every fill and drop.
#[test]
fn azure_rtt_matrix_with_gaps() {
    let o = fedtopo(&["compare", &azure()]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("98 gap(s) in the latency matrix with no measurement in either direction"),
        "{e}"
    );
    assert!(
        e.contains("--matrix-gaps reverse") && e.contains("path") && e.contains("drop"),
        "{e}"
    );

    let o = fedtopo(&[
        "compare",
        &azure(),
        "--matrix-gaps",
        "path",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let notes = String::from_utf8_lossy(&o.stderr);
    assert!(
        notes.contains("102 gap(s) filled from the reverse direction"),
        "{notes}"
    );
    assert!(
        notes.contains("98 gap(s) filled with the shortest path"),
        "{notes}"
    );
    assert!(notes.contains("Jio India West (86)"), "{notes}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["silos"], 51, "{v}");
    assert_eq!(v["rows"].as_array().map(Vec::len), Some(5), "{v}");

    let o = fedtopo(&["underlay", "info", &azure(), "--matrix-gaps", "drop"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("routers       48"), "{out}");
    assert!(
        out.contains("dropped 3 site(s) with unmeasured pairs (--matrix-gaps drop), most gaps first: Jio India West, Indonesia Central, West India"),
        "{out}"
    );
}

/// An Azure RTT, halved, is the one-way latency of an arc: with a tiny
/// model and instant compute, a two-region ring's cycle time is the mean of
/// the two one-way latencies of its circuit, here the round trip / 2.
#[test]
fn azure_rtt_is_halved() {
    let dir = scratch("two");
    let file = dir.join("two.csv");
    // Australia Central <-> Australia Central 2 in the Azure file: 3 and 4 ms.
    std::fs::write(&file, "Source,Australia Central,Australia Central 2\nAustralia Central,,3\nAustralia Central 2,4,\n").unwrap();
    let ct = cycle_times(&[
        file.to_str().unwrap(),
        "--overlays",
        "ring",
        "--model-bits",
        "1",
        "--compute-ms",
        "0",
        "--access",
        "inf",
    ]);
    // Circuit A -> B -> A: (1.5 + 2) ms over 2 arcs, plus 1 bit at 1 Gbit/s per arc.
    let want = (1.5 + 2.0 + 2.0 * 1e-6) / 2.0;
    assert!((ct["ring"] - want).abs() < 1e-9, "{} vs {want}", ct["ring"]);
    std::fs::remove_dir_all(&dir).ok();
}
