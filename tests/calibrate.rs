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

/// `calibrate --out` writes the fitted core links (`links.csv`): on a line
/// of four routers whose true link latencies and one slow link differ from
/// the file's, two logs with models of two sizes identify every link's
/// latency (routes of one to three links), the slow link's capacity is
/// found, and the fitted links replay the run to the same times.
#[test]
fn fitted_links_recover_latencies_and_replay_the_run() {
    let d = scratch("links");
    let gml = d.join("line.gml");
    std::fs::write(
        &gml,
        "graph [ node [ id 0 label \"a\" ] node [ id 1 label \"b\" ] node [ id 2 label \"c\" ] \
         node [ id 3 label \"d\" ]
         edge [ source 0 target 1 distance 100 capacity 1e9 ]
         edge [ source 1 target 2 distance 100 capacity 1e9 ]
         edge [ source 2 target 3 distance 100 capacity 1e9 ] ]",
    )
    .unwrap();
    let truth = d.join("truth.csv");
    std::fs::write(
        &truth,
        "a,b,latency_ms,capacity\na,b,3.0,\nb,c,7.5,50M\nc,d,1.25,\n",
    )
    .unwrap();
    let ring = d.join("ring.csv");
    // Every silo sends to every other: a slow transfer that the sender's
    // other transfers and the receiver's other arrivals do not share is
    // the core's.
    let arcs: String = (0..4)
        .flat_map(|i| {
            (0..4)
                .filter(move |&j| j != i)
                .map(move |j| format!("{i},{j}\n"))
        })
        .collect();
    std::fs::write(&ring, format!("src,dst\n{arcs}")).unwrap();
    let overlay = format!("file:{}", ring.display());
    let (gml_s, truth_s) = (gml.to_str().unwrap(), truth.to_str().unwrap());
    let sim = |bits: &str, log: &std::path::Path, links: &str| {
        let mut args = vec![
            "simulate",
            gml_s,
            "--overlays",
            &overlay,
            "--rounds",
            "6",
            "--access",
            "400M",
            "--model-bits",
            bits,
            "--links-csv",
            links,
        ];
        let log_s = log.to_str().unwrap().to_string();
        if !log_s.is_empty() {
            args.extend(["--log", log.to_str().unwrap()]);
        }
        makespan(&args)
    };
    let (small, large) = (d.join("small.csv"), d.join("large.csv"));
    let want = sim("2e6", &small, truth_s);
    sim("2e7", &large, truth_s);
    // One log: the second run's rounds after the first's.
    let mut log = std::fs::read_to_string(&small).unwrap();
    for line in std::fs::read_to_string(&large).unwrap().lines().skip(1) {
        let mut cells: Vec<String> = line.split(',').map(str::to_string).collect();
        cells[1] = (cells[1].parse::<u64>().unwrap() + 100).to_string();
        log += &cells.join(",");
        log.push('\n');
    }
    let both = d.join("both.csv");
    std::fs::write(&both, log).unwrap();
    let fitted = d.join("fitted");
    let out = fedtopo(&[
        "calibrate",
        gml_s,
        "--log",
        both.to_str().unwrap(),
        "--access",
        "400M",
        "--model-bits",
        "2e6",
        "--out",
        fitted.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("links: 3 fitted (12 pairs' latencies"),
        "{err}"
    );
    assert!(err.contains("0 not explained"), "{err}");
    let links = std::fs::read_to_string(fitted.join("links.csv")).unwrap();
    let latency = |a: &str, b: &str| -> f64 {
        let row = links
            .lines()
            .skip(1)
            .find(|l| l.starts_with(&format!("{a},{b},")))
            .unwrap_or_else(|| panic!("no link {a}-{b} in\n{links}"));
        row.split(',').nth(2).unwrap().parse().unwrap()
    };
    for (a, b, ms) in [("a", "b", 3.0), ("b", "c", 7.5), ("c", "d", 1.25)] {
        assert!(
            (latency(a, b) - ms).abs() < 1e-4,
            "{a}-{b}: {}\n{links}",
            latency(a, b)
        );
    }
    let capacity = |a: &str, b: &str| -> String {
        let row = links
            .lines()
            .skip(1)
            .find(|l| l.starts_with(&format!("{a},{b},")))
            .unwrap();
        row.split(',').nth(3).unwrap().to_string()
    };
    assert!(
        (capacity("b", "c").parse::<f64>().unwrap() - 5e7).abs() < 1e3,
        "{links}"
    );
    // The fitted links replay the small run to the same makespan.
    let got = sim(
        "2e6",
        std::path::Path::new(""),
        fitted.join("links.csv").to_str().unwrap(),
    );
    assert!(
        (got - want).abs() <= 1e-6 * want,
        "{got} vs {want}\n{links}"
    );
    std::fs::remove_dir_all(&d).ok();
}
