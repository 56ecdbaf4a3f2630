//! Overlays read from files (`--overlays file:PATH`,
//! [`fedtopo::overlay::file`]): round trips of every export format, files
//! written by networkx (`tests/data/overlays/`, made by
//! `scripts/make-overlay-test-data.py`), name matching, undirected input,
//! consensus weights, per-round schedules and experiment files.

mod common;

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use common::fedtopo;
use fedtopo::evaluate::{EvalError, EvaluatedOverlay};
use fedtopo::graph::{Overlay, OverlaySchedule, PeriodicSchedule};
use fedtopo::mixing::consensus::{ConsensusMatrix, ConsensusRule};
use fedtopo::net::delay::DelayModel;
use fedtopo::net::scenario::load_underlay;
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::overlay::build::{BuildError, BuildOptions, OverlayKind};
use fedtopo::overlay::export::silo_positions;
use fedtopo::overlay::file::FileOverlayError;
use fedtopo::overlay::matcha::MatchaOptions;
use fedtopo::reproduce::paper_model;
use fedtopo::timing::cycle_time;
use fedtopo::timing::schedule::{maxplus_rate, periodic_rate};

fn underlay(name: &str) -> Underlay {
    load_underlay(Some(name), &LoadOptions::default()).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-files-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/overlays")
        .join(name)
}

fn file_kind(path: &Path) -> OverlayKind {
    format!("file:{}", path.display()).parse().unwrap()
}

fn build(
    kind: OverlayKind,
    u: &Underlay,
    model: &DelayModel,
) -> Result<EvaluatedOverlay, EvalError> {
    EvaluatedOverlay::build(kind, u, model, &BuildOptions::default())
}

fn tau(kind: OverlayKind, u: &Underlay, model: &DelayModel) -> f64 {
    build(kind, u, model)
        .and_then(|o| o.cycle_time(model))
        .unwrap_or_else(|e| panic!("{kind}: {e}"))
        .cycle_time_ms
}

/// The error of building `kind`, as a file error.
fn file_error(kind: OverlayKind, u: &Underlay, model: &DelayModel) -> FileOverlayError {
    match build(kind, u, model) {
        Err(EvalError::Build(BuildError::File(e))) => e,
        Err(e) => panic!("{kind}: not a file error: {e}"),
        Ok(_) => panic!("{kind}: built"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(1.0)
}

#[test]
fn export_then_import_gives_the_same_cycle_time() {
    let dir = tmp("roundtrip");
    for name in ["aws-north-america", "aws-gaia"] {
        let u = underlay(name);
        for steps in [1, 5] {
            let model = paper_model(&u, steps);
            let labels = model.connectivity.placement().labels(&u);
            let positions = silo_positions(&u, model.connectivity.placement());
            for kind in [
                "star",
                "mst",
                "delta-mbst",
                "ring",
                "ring-opt",
                "complete",
                "er:p=0.3",
                "dcliques",
            ] {
                let kind: OverlayKind = kind.parse().unwrap();
                let o = build(kind, &u, &model).unwrap();
                let t = o.cycle_time(&model).unwrap().cycle_time_ms;
                let e = o
                    .export(&labels, Some(&model), Some(t))
                    .unwrap()
                    .with_positions(positions.clone());
                for (ext, text) in [("gml", e.to_gml()), ("json", e.to_json())] {
                    let path = dir.join(format!("{name}-{steps}-{}.{ext}", kind.name()));
                    std::fs::write(&path, text).unwrap();
                    let back = tau(file_kind(&path), &u, &model);
                    assert!(close(back, t), "{name} {kind} {ext}: {back} vs {t}");
                    let b = build(file_kind(&path), &u, &model).unwrap();
                    assert_eq!(b.overlay().unwrap().arcs(), o.overlay().unwrap().arcs());
                }
            }
        }
    }
}

#[test]
fn gml_export_keeps_coordinates_and_json_is_node_link() {
    let u = underlay("aws-gaia");
    let model = paper_model(&u, 1);
    let o = build(OverlayKind::Ring, &u, &model).unwrap();
    let labels = model.connectivity.placement().labels(&u);
    let e = o
        .export(&labels, None, None)
        .unwrap()
        .with_positions(silo_positions(&u, model.connectivity.placement()));
    let gml = e.to_gml();
    let (lat, lon) = u.routers[0].lat_lon.unwrap();
    assert!(gml.contains(&format!("Latitude {lat}")), "{gml}");
    assert!(gml.contains(&format!("Longitude {lon}")), "{gml}");
    let j: serde_json::Value = serde_json::from_str(&e.to_json()).unwrap();
    assert_eq!(j["directed"], true);
    assert_eq!(j["multigraph"], false);
    assert_eq!(j["nodes"][0]["id"], "Virginia");
    assert_eq!(j["nodes"][0]["latitude"], lat);
    assert_eq!(j["links"].as_array().unwrap().len(), 11);
}

#[test]
fn networkx_files_match_the_same_ring_built_here() {
    // The undirected ring over the routers in alphabetical order.
    let u = underlay("aws-north-america");
    let model = paper_model(&u, 1);
    let mut order: Vec<(String, usize)> = u
        .routers
        .iter()
        .enumerate()
        .map(|(i, r)| (r.label.clone(), i))
        .collect();
    order.sort();
    let n = order.len();
    let edges: Vec<(usize, usize)> = (0..n).map(|k| (order[k].1, order[(k + 1) % n].1)).collect();
    let ring = Overlay::from_edges("ring", n, &edges);
    let want = cycle_time(&ring, &model).unwrap().cycle_time_ms;
    for f in [
        "nx-ring-aws-north-america.gml",
        "nx-ring-aws-north-america.json",
    ] {
        let o = build(file_kind(&data(f)), &u, &model).unwrap();
        assert_eq!(o.overlay().unwrap().arcs(), ring.arcs(), "{f}");
        let t = o.cycle_time(&model).unwrap().cycle_time_ms;
        assert!(close(t, want), "{f}: {t} vs {want}");
    }
    // Integer nodes (labels "0".."10") are matched to the GML ids.
    let g = underlay("aws-gaia");
    let gm = paper_model(&g, 1);
    let o = build(file_kind(&data("nx-int-ring-aws-gaia.gml")), &g, &gm).unwrap();
    let ids: Vec<usize> = (0..11).collect();
    let by_id: Vec<usize> = ids
        .iter()
        .map(|&i| g.find_router(&i.to_string()).unwrap())
        .collect();
    let edges: Vec<(usize, usize)> = (0..11).map(|k| (by_id[k], by_id[(k + 1) % 11])).collect();
    assert_eq!(
        o.overlay().unwrap().arcs(),
        Overlay::from_edges("r", 11, &edges).arcs()
    );
}

#[test]
fn unmatched_names_are_listed() {
    let u = underlay("aws-gaia");
    let model = paper_model(&u, 1);
    let dir = tmp("unmatched");
    let p = dir.join("bad.csv");
    std::fs::write(&p, "src,dst\nVirginia,Atlantis\nAtlantis,Mu\nMu,Virginia\n").unwrap();
    let e = file_error(file_kind(&p), &u, &model);
    let msg = e.to_string();
    match &e {
        FileOverlayError::Unmatched { names, .. } => {
            assert_eq!(names, &["Atlantis".to_string(), "Mu".to_string()])
        }
        other => panic!("{other}"),
    }
    assert!(msg.contains("bad.csv"), "{msg}");
    assert!(msg.contains("Virginia, California"), "{msg}");
    assert!(msg.contains("more"), "{msg}");
    // Every silo must be named.
    std::fs::write(&p, "Virginia,California\nCalifornia,Virginia\n").unwrap();
    let e = file_error(file_kind(&p), &u, &model);
    assert!(
        matches!(&e, FileOverlayError::Missing { missing, .. } if missing.len() == 9),
        "{e}"
    );
}

#[test]
fn undirected_input_means_both_directions() {
    let u = underlay("aws-gaia");
    let model = paper_model(&u, 1);
    let labels: Vec<String> = u.routers.iter().map(|r| r.label.clone()).collect();
    let dir = tmp("undirected");
    let ring: Vec<(usize, usize)> = (0..11).map(|i| (i, (i + 1) % 11)).collect();
    let mut edges = String::from("# undirected\n");
    let mut arcs = String::new();
    for &(a, b) in &ring {
        edges.push_str(&format!("{},{}\n", labels[a], labels[b]));
        arcs.push_str(&format!("{},{}\n", labels[a], labels[b]));
    }
    let (pe, pa) = (dir.join("edges.csv"), dir.join("arcs.csv"));
    std::fs::write(&pe, edges).unwrap();
    std::fs::write(&pa, arcs).unwrap();
    let e = build(file_kind(&pe), &u, &model).unwrap();
    let a = build(file_kind(&pa), &u, &model).unwrap();
    assert_eq!(
        e.overlay().unwrap().arcs(),
        Overlay::from_edges("r", 11, &ring).arcs()
    );
    assert_eq!(
        a.overlay().unwrap().arcs(),
        Overlay::directed_ring("r", 11, &(0..11).collect::<Vec<_>>()).arcs()
    );
    // GML: `directed 0` (and networkx's default, no `directed`) vs `directed 1`.
    for (directed, count) in [("", 22), ("directed 0", 22), ("directed 1", 11)] {
        let mut g = format!("graph [\n {directed}\n");
        for (i, l) in labels.iter().enumerate() {
            g.push_str(&format!(" node [ id {i} label \"{l}\" ]\n"));
        }
        for &(a, b) in &ring {
            g.push_str(&format!(" edge [ source {a} target {b} ]\n"));
        }
        g.push_str("]\n");
        let p = dir.join("g.gml");
        std::fs::write(&p, g).unwrap();
        let o = build(file_kind(&p), &u, &model).unwrap();
        assert_eq!(o.overlay().unwrap().arc_count(), count, "{directed}");
    }
}

#[test]
#[allow(clippy::needless_range_loop)] // silo indices on both sides
fn file_weights_become_the_default_consensus() {
    let u = underlay("aws-gaia");
    let model = paper_model(&u, 1);
    let o = build(file_kind(&data("nx-weighted-aws-gaia.json")), &u, &model).unwrap();
    let w = o.consensus_weights().expect("weights");
    let rule = ConsensusRule::Auto.for_overlay(&o).unwrap();
    let ConsensusRule::Custom(m) = &rule else {
        panic!("{rule:?}")
    };
    let ov = o.overlay().unwrap();
    assert_eq!(rule.matrix(ov).unwrap(), *m);
    // Arc i -> i+1 of weight 0.25: row i+1 gives 0.25 to silo i; 0.75 to itself.
    for i in 0..11 {
        let next = (i + 1) % 11;
        assert!((m.get(next, i) - 0.25).abs() < 1e-15);
        assert!((m.get(i, i) - 0.75).abs() < 1e-15);
        assert!((w.row(i).iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
    // An explicit rule wins over the file's weights.
    assert_eq!(
        ConsensusRule::LocalDegree.for_overlay(&o).unwrap(),
        ConsensusRule::LocalDegree
    );
    // Rows that sum to more than 1 are normalised; no weights, no matrix.
    let dir = tmp("weights");
    let labels: Vec<String> = u.routers.iter().map(|r| r.label.clone()).collect();
    let mut csv = String::from("# undirected\nsrc,dst,weight\n");
    for i in 0..11 {
        csv.push_str(&format!("{},{},1\n", labels[i], labels[(i + 1) % 11]));
    }
    let p = dir.join("w.csv");
    std::fs::write(&p, csv).unwrap();
    let o = build(file_kind(&p), &u, &model).unwrap();
    let m = ConsensusMatrix::from_rows(o.consensus_weights().unwrap().to_rows()).unwrap();
    assert!((m.get(0, 1) - 0.5).abs() < 1e-15 && m.get(0, 0) == 0.0);
    assert!(m.is_symmetric(1e-15));
    let plain = build(OverlayKind::Ring, &u, &model).unwrap();
    assert!(plain.consensus_weights().is_none());
    assert_eq!(
        ConsensusRule::Auto.for_overlay(&plain).unwrap(),
        ConsensusRule::Auto
    );
    // Weights on some arcs only, or negative: errors with the line.
    let mut csv = String::from("src,dst,weight\n");
    for i in 0..11 {
        let w = if i == 1 { "" } else { ",0.5" };
        csv.push_str(&format!("{},{}{w}\n", labels[i], labels[(i + 1) % 11]));
    }
    std::fs::write(&p, &csv).unwrap();
    let e = file_error(file_kind(&p), &u, &model).to_string();
    assert!(e.contains("w.csv:3") && e.contains("weight"), "{e}");
    // A third column is weights only under a header naming it `weight`:
    // without a header, or under another name (`latency`), it is an error.
    std::fs::write(&p, csv.replacen("src,dst,weight\n", "", 1)).unwrap();
    let e = file_error(file_kind(&p), &u, &model).to_string();
    assert!(
        e.contains("w.csv:1") && e.contains("only under a header naming it"),
        "{e}"
    );
    std::fs::write(&p, csv.replacen("weight", "latency", 1)).unwrap();
    let e = file_error(file_kind(&p), &u, &model).to_string();
    assert!(
        e.contains("w.csv:1") && e.contains("unknown column `latency` (column 3)"),
        "{e}"
    );
}

#[test]
fn per_round_schedules_round_trip_with_their_periodic_rate() {
    let dir = tmp("periodic");
    for name in ["aws-gaia", "aws-north-america"] {
        let u = underlay(name);
        let model = paper_model(&u, 1);
        let rounds = 20;
        let options = BuildOptions {
            matcha: MatchaOptions {
                rounds,
                seed: 3,
                ..MatchaOptions::default()
            },
            ..BuildOptions::default()
        };
        let m = EvaluatedOverlay::build(OverlayKind::MATCHA, &u, &model, &options).unwrap();
        // The original's exact max-plus rate over the same rounds, repeated.
        let original = PeriodicSchedule::new(
            "m",
            m.silo_count(),
            (0..rounds)
                .map(|k| m.schedule().round(k).into_owned())
                .collect(),
        )
        .unwrap();
        let want = periodic_rate(&original, &model, rounds).unwrap();
        // Sanity: the finite-horizon rate of many periods tends to it.
        let long = maxplus_rate(&original, &model, rounds * 200).unwrap();
        assert!((long - want).abs() <= 0.01 * want, "{long} vs {want}");
        let labels = model.connectivity.placement().labels(&u);
        // MATCHA's export is marked as a sample; without the mark the file
        // is timed as a periodic schedule, at the exact periodic rate.
        let sampled = m.export_schedule(&labels).unwrap();
        assert!(sampled.sampled);
        let e = sampled.with_sampled(false);
        assert_eq!(e.rounds.len(), rounds as usize);
        for (ext, text) in [("json", e.to_json()), ("csv", e.to_csv())] {
            let p = dir.join(format!("{name}.rounds.{ext}"));
            std::fs::write(&p, text).unwrap();
            let back = build(file_kind(&p), &u, &model).unwrap();
            assert!(back.is_schedule() && back.overlay().is_none());
            let t = back.cycle_time(&model).unwrap();
            assert!(
                close(t.cycle_time_ms, want),
                "{ext}: {} vs {want}",
                t.cycle_time_ms
            );
            let s = t.schedule.unwrap();
            assert!(s.maxplus_ms <= s.estimate.mean_ms + 1e-9);
            for k in 0..2 * rounds {
                assert_eq!(back.schedule().round(k).arcs(), original.round(k).arcs());
            }
            // ... and it exports again, identically.
            let again = back.export_schedule(&labels).unwrap();
            assert_eq!(again.rounds, e.rounds);
        }
    }
}

#[test]
fn bad_files_are_clear_errors() {
    let u = underlay("aws-gaia");
    let model = paper_model(&u, 1);
    let dir = tmp("bad");
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "a.gml",
            "graph [\n  node [ id 0 label \"x\" \n",
            &["a.gml:", "expected"],
        ),
        (
            "b.gml",
            "graph [ edge [ source 0 ] ]",
            &["b.gml:1", "target"],
        ),
        ("c.json", "{\"nodes\": [}", &["c.json:1:", "invalid JSON"]),
        ("d.json", "{\"nodes\": []}", &["d.json", "links"]),
        ("e.csv", "Virginia\n", &["e.csv:1", "src,dst"]),
        (
            "f.csv",
            "round,src,dst\nx,Virginia,Tokyo\n",
            &["f.csv:2", "round"],
        ),
        (
            "g.json",
            "{\"rounds\": [], \"periodic\": true}",
            &["g.json", "empty"],
        ),
        (
            "h.json",
            "{\"rounds\": [[]], \"periodic\": false}",
            &["periodic"],
        ),
        (
            "i.gml",
            "graph [ node [ id 0 label \"Virginia\" ] edge [ source 0 target 7 ] ]",
            &["i.gml:1", "not a declared node"],
        ),
    ];
    for (file, text, wants) in cases {
        let p = dir.join(file);
        std::fs::write(&p, text).unwrap();
        let e = file_error(file_kind(&p), &u, &model).to_string();
        for w in *wants {
            assert!(e.contains(w), "{file}: `{e}` lacks `{w}`");
        }
    }
    let e = file_error(file_kind(&dir.join("none.gml")), &u, &model).to_string();
    assert!(e.contains("none.gml") && e.contains("cannot read"), "{e}");
    // Garbage never panics.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for k in 0..200 {
        let bytes: Vec<u8> = (0..(k % 60))
            .map(|_| {
                let alphabet = b"graph[]{}\"nodeidlabsrcdt,01 \n:#";
                alphabet[rng.gen_range(0..alphabet.len())]
            })
            .collect();
        for ext in ["gml", "json", "csv", "x"] {
            let p = dir.join(format!("g.{ext}"));
            std::fs::write(&p, &bytes).unwrap();
            let _ = build(file_kind(&p), &u, &model);
        }
    }
    assert!("file:".parse::<OverlayKind>().is_err());
}

#[test]
fn cli_and_experiment_files_take_file_overlays() {
    let dir = tmp("cli");
    let ring = dir.join("ring.gml");
    let o = fedtopo(&["overlay", "ring", "aws-gaia", "-o", ring.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let list = format!("ring,file:{}", ring.display());
    let o = fedtopo(&[
        "compare",
        "aws-gaia",
        "--overlays",
        &list,
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let mut rows = csv::Reader::from_reader(out.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = header.iter().position(|h| h == "cycle_time_ms").unwrap();
    let taus: Vec<f64> = rows
        .records()
        .map(|r| r.unwrap()[col].parse().unwrap())
        .collect();
    assert_eq!(taus.len(), 2);
    assert!(close(taus[0], taus[1]), "{taus:?}");
    // compare --export-dir writes schedules per round.
    let ex = dir.join("export");
    let o = fedtopo(&[
        "compare",
        "aws-gaia",
        "--overlays",
        "ring,matcha",
        "--matcha-rounds",
        "10",
        "--export-dir",
        ex.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(ex.join("ring.gml").is_file());
    let rounds = ex.join("matcha.rounds.json");
    let o = fedtopo(&[
        "compare",
        "aws-gaia",
        "--overlays",
        &format!("file:{}", rounds.display()),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // An experiment file names the overlay file relative to itself.
    let spec = dir.join("exp.toml");
    std::fs::write(
        &spec,
        "name = \"files\"\nkind = \"compare\"\n[grid]\nunderlay = [\"aws-gaia\"]\noverlay = [\"ring\", \"file:ring.gml\"]\n",
    )
    .unwrap();
    let out = dir.join("exp-out");
    let o = fedtopo(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let mut rdr = csv::Reader::from_path(out.join("results.csv")).unwrap();
    let header = rdr.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let recs: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(recs.len(), 2);
    assert_eq!(&recs[1][col("overlay")], "file:ring.gml");
    let t: Vec<f64> = recs
        .iter()
        .map(|r| r[col("cycle_time_ms")].parse().unwrap())
        .collect();
    assert!(close(t[0], t[1]), "{t:?}");
}

#[test]
fn check_input_validates_files_without_a_network() {
    let dir = tmp("check");
    let good = dir.join("r.csv");
    std::fs::write(&good, "a,b\nb,a\n").unwrap();
    assert!(file_kind(&good).check_input().is_ok());
    assert!(OverlayKind::Ring.check_input().is_ok());
    let e = file_kind(&dir.join("missing.gml"))
        .check_input()
        .unwrap_err();
    assert!(e.to_string().contains("missing.gml"), "{e}");
    // Relative paths resolve against the experiment file's directory.
    let rel: OverlayKind = "file:r.csv".parse().unwrap();
    assert!(rel.relative_to(&dir).check_input().is_ok());
    assert_eq!(rel.to_string(), "file:r.csv");
}

#[test]
fn overlay_names_with_multibyte_characters_do_not_panic() {
    for s in ["ééé", "δ-mbst", "fïle:x", "FILE:r.gml", "file:  "] {
        let _ = s.parse::<OverlayKind>();
    }
    assert_eq!(
        "FILE:r.gml".parse::<OverlayKind>().unwrap().to_string(),
        "file:r.gml"
    );
}

#[test]
fn files_over_the_size_limit_are_refused_before_reading() {
    let u = underlay("aws-gaia");
    let model = paper_model(&u, 1);
    let p = tmp("large").join("big.gml");
    // A sparse file: its size is past the limit, its blocks are not written.
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(fedtopo::overlay::file::MAX_FILE_BYTES + 1)
        .unwrap();
    let e = file_error(file_kind(&p), &u, &model);
    assert!(matches!(e, FileOverlayError::TooLarge { .. }), "{e}");
    assert!(e.to_string().contains("larger than the limit"), "{e}");
    let _ = std::fs::remove_file(&p);
}
