//! `fedtopo calibrate`: a simulated run's log fitted back (compute times
//! recovered, every span explained), the fitted silos replayed to the same
//! times, contention reported as error, and bad logs refused with the line.

mod common;

use common::fedtopo;

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-calibrate-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ok(args: &[&str]) -> String {
    let out = fedtopo(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn makespan(args: &[&str]) -> f64 {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&ok(&all)).unwrap();
    doc["rows"][0]["makespan_ms"].as_f64().unwrap()
}

#[test]
fn a_simulated_run_is_fitted_back() {
    let d = scratch("roundtrip");
    let silos = d.join("silos.csv");
    std::fs::write(
        &silos,
        "silo,compute_ms,up,down\nSeattle,40,1G,200M\nMiami,5,50M,1G\nDenver,,2G,80M\n",
    )
    .unwrap();
    // A ring over the routers' ids: the same overlay whatever the silos'
    // capacities (RING and ring-opt are built from the delays).
    let ring = d.join("ring.csv");
    let arcs: String = (0..22).map(|i| format!("{i},{}\n", (i + 1) % 22)).collect();
    std::fs::write(&ring, format!("src,dst\n{arcs}")).unwrap();
    let overlay = format!("file:{}", ring.display());
    let log = d.join("run.csv");
    let (silos_s, log_s) = (silos.to_str().unwrap(), log.to_str().unwrap());
    let base = [
        "simulate",
        "--overlays",
        &overlay,
        "--rounds",
        "30",
        "--access",
        "100M",
    ];
    let mut sim = base.to_vec();
    sim.extend(["--silos-csv", silos_s, "--log", log_s]);
    let want = makespan(&sim);
    let fitted = d.join("fitted");
    let doc: serde_json::Value = serde_json::from_str(&ok(&[
        "calibrate",
        "--log",
        log_s,
        "--access",
        "100M",
        "--format",
        "json",
        "--out",
        fitted.to_str().unwrap(),
    ]))
    .unwrap();
    let labels: Vec<&str> = doc["labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let fit = &doc["fit"];
    let compute = |label: &str| {
        let i = labels.iter().position(|l| *l == label).unwrap();
        fit["silos"][i]["compute_ms"].as_f64().unwrap()
    };
    assert!((compute("Seattle") - 40.0).abs() < 1e-9);
    assert!((compute("Miami") - 5.0).abs() < 1e-9);
    assert!((compute("Denver") - 25.4).abs() < 1e-9);
    for e in ["compute_error", "transfer_error", "round_error"] {
        // The log has times to the microsecond.
        assert!(fit[e]["max"].as_f64().unwrap() < 1e-6, "{e}: {}", fit[e]);
        assert!(fit[e]["count"].as_u64().unwrap() > 600, "{e}");
    }
    // The fitted silos replay the same overlay to the same times.
    let fitted_silos = fitted.join("silos.csv");
    let mut again = base.to_vec();
    again.extend(["--silos-csv", fitted_silos.to_str().unwrap()]);
    let got = makespan(&again);
    assert!((got - want).abs() <= 1e-6 * want, "{got} vs {want}");
    assert!(fitted.join("latency.csv").exists() && fitted.join("bandwidth.csv").exists());
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn contention_shows_as_fit_error() {
    // The flow model shares links: eq. (3) does not explain every transfer.
    let d = scratch("flow");
    let log = d.join("run.csv");
    ok(&[
        "simulate",
        "--overlays",
        "mst",
        "--rounds",
        "20",
        "--access",
        "100M",
        "--network",
        "flow",
        "--log",
        log.to_str().unwrap(),
    ]);
    let doc: serde_json::Value = serde_json::from_str(&ok(&[
        "calibrate",
        "--log",
        log.to_str().unwrap(),
        "--access",
        "100M",
        "--format",
        "json",
    ]))
    .unwrap();
    let e = doc["fit"]["transfer_error"]["mean"].as_f64().unwrap();
    assert!(e > 1e-3 && e < 0.2, "{e}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn bad_logs_name_the_line() {
    let d = scratch("bad");
    for (text, want) in [
        (
            "kind,round,from,to,start_ms,end_ms\ncompute,0,Nowhere,,0,1\n",
            ":2: from `Nowhere` is not a silo",
        ),
        (
            "kind,round,from,to,start_ms,end_ms\nsleep,0,Seattle,,0,1\n",
            ":2: kind `sleep`",
        ),
        (
            "kind,round,from,to,start_ms,end_ms\ntransfer,0,Seattle,Miami,5,1\n",
            ":2: end_ms 1 is before start_ms 5",
        ),
        ("kind,round,from,start_ms,end_ms,colour\n", ":1:"),
        ("kind,round,from,to,start_ms,end_ms\n", "no span"),
    ] {
        let log = d.join("log.csv");
        std::fs::write(&log, text).unwrap();
        let out = fedtopo(&["calibrate", "--log", log.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{text}: {err}");
    }
    std::fs::remove_dir_all(&d).ok();
}
