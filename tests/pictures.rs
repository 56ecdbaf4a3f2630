//! Pictures (issue 26): `fedtopo draw` maps parse as XML and put every
//! silo marker at the projected coordinates of its router; `simulate --out`
//! timelines; `--report` pages.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::fedtopo;
use fedtopo::net::scenario::load_underlay;
use fedtopo::net::underlay::LoadOptions;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fedtopo-pictures-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run_ok(args: &[&str]) -> String {
    let o = fedtopo(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn attr(n: &roxmltree::Node, name: &str) -> f64 {
    n.attribute(name)
        .unwrap_or_else(|| panic!("no {name} on {n:?}"))
        .parse()
        .unwrap_or_else(|_| panic!("{name} of {n:?} is not a number"))
}

fn class_is(n: &roxmltree::Node, class: &str) -> bool {
    n.attribute("class")
        .is_some_and(|c| c.split_whitespace().any(|w| w == class))
}

/// `(label -> (cx, cy, lat, lon))` of every silo marker.
fn silo_markers(doc: &roxmltree::Document) -> BTreeMap<String, (f64, f64, f64, f64)> {
    let mut out = BTreeMap::new();
    for n in doc
        .descendants()
        .filter(|n| n.has_tag_name("circle") && class_is(n, "silo"))
    {
        let label = n.attribute("data-silo").expect("data-silo").to_string();
        let prev = out.insert(
            label.clone(),
            (
                attr(&n, "cx"),
                attr(&n, "cy"),
                attr(&n, "data-lat"),
                attr(&n, "data-lon"),
            ),
        );
        assert!(prev.is_none(), "silo `{label}` drawn twice");
    }
    out
}

/// The router coordinates of a built-in underlay, by label.
fn coordinates(name: &str) -> BTreeMap<String, (f64, f64)> {
    let u = load_underlay(Some(name), &LoadOptions::default()).unwrap();
    u.routers
        .iter()
        .map(|r| {
            (
                r.label.clone(),
                r.lat_lon.expect("built-ins have coordinates"),
            )
        })
        .collect()
}

/// Checks the map `svg` of `underlay` (one silo per router): every router
/// has one marker, at its coordinates as the file says, and the markers
/// sit where an equirectangular projection puts them, checked two ways:
/// with the frame the root states, and independently as a least-squares
/// fit `cx = a + s * lon * cos(lat0)`, `cy = b - s * lat` (one scale, no
/// rotation) with residuals under 0.01 px.
fn check_map(svg: &str, underlay: &str, width: f64) {
    let doc = roxmltree::Document::parse(svg).expect("the map is well-formed XML");
    let root = doc.root_element();
    assert!(root.has_tag_name("svg"));
    assert_eq!(root.attribute("data-projection"), Some("equirectangular"));
    let (lat0, lon0) = (attr(&root, "data-lat0"), attr(&root, "data-lon0"));
    let (scale, x0, y0) = (
        attr(&root, "data-scale"),
        attr(&root, "data-x0"),
        attr(&root, "data-y0"),
    );
    let height = attr(&root, "height");
    assert_eq!(attr(&root, "width"), width);
    let coords = coordinates(underlay);
    let markers = silo_markers(&doc);
    assert_eq!(
        markers.keys().collect::<Vec<_>>(),
        coords.keys().collect::<Vec<_>>(),
        "one marker per silo"
    );
    // The standard parallel is the middle of the latitude range.
    let (lo, hi) = coords
        .values()
        .fold((90.0f64, -90.0f64), |a, p| (a.0.min(p.0), a.1.max(p.0)));
    assert!((lat0 - (lo + hi) / 2.0).abs() < 1e-9, "lat0 {lat0}");
    let cos0 = lat0.to_radians().cos();
    let wrap = |d: f64| (d + 180.0).rem_euclid(360.0) - 180.0;
    let mut fit = Vec::new();
    for (label, &(cx, cy, lat, lon)) in &markers {
        let (rlat, rlon) = coords[label];
        assert!(
            (lat - rlat).abs() < 1e-9 && (lon - rlon).abs() < 1e-9,
            "{label}"
        );
        // The stated frame (cx, cy are written with two decimals).
        let ex = x0 + scale * wrap(lon - lon0) * cos0;
        let ey = y0 - scale * lat;
        assert!(
            (cx - ex).abs() <= 0.006 && (cy - ey).abs() <= 0.006,
            "{label}: ({cx}, {cy}) vs ({ex}, {ey})"
        );
        assert!(
            cx > 0.0 && cx < width && cy > 0.0 && cy < height,
            "{label} off the canvas"
        );
        fit.push((wrap(lon - lon0) * cos0, lat, cx, cy));
    }
    // Independent: least squares over all markers.
    let k = fit.len() as f64;
    type Point = (f64, f64, f64, f64);
    let mean = |f: &dyn Fn(&Point) -> f64| fit.iter().map(f).sum::<f64>() / k;
    let (mx, my, mcx, mcy) = (
        mean(&|p| p.0),
        mean(&|p| p.1),
        mean(&|p| p.2),
        mean(&|p| p.3),
    );
    let sxx: f64 = fit.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sx_cx: f64 = fit.iter().map(|p| (p.0 - mx) * (p.2 - mcx)).sum();
    let syy: f64 = fit.iter().map(|p| (p.1 - my).powi(2)).sum();
    let sy_cy: f64 = fit.iter().map(|p| (p.1 - my) * (p.3 - mcy)).sum();
    let (sx, sy) = (sx_cx / sxx, -sy_cy / syy);
    assert!(sx > 0.0, "east is right");
    assert!(
        (sx - sy).abs() < 1e-3 * sx,
        "one scale for both axes: {sx} vs {sy}"
    );
    for p in &fit {
        let rx = p.2 - (mcx + sx * (p.0 - mx));
        let ry = p.3 - (mcy - sy * (p.1 - my));
        assert!(rx.abs() < 0.01 && ry.abs() < 0.01, "residual ({rx}, {ry})");
    }
}

#[test]
fn draw_puts_silos_at_their_projected_coordinates() {
    let dir = scratch("draw");
    for (underlay, overlay) in [
        ("aws-north-america", None),
        ("aws-north-america", Some("ring-opt")),
        // AWS's regions around the world: Sydney, Tokyo, Sao Paulo, ...
        ("aws-gaia", Some("delta-mbst")),
    ] {
        let out = dir.join(format!("{underlay}-{}.svg", overlay.unwrap_or("none")));
        let mut args = vec!["draw", underlay, "-o", out.to_str().unwrap()];
        if let Some(o) = overlay {
            args.extend(["--overlay", o]);
        }
        run_ok(&args);
        let svg = std::fs::read_to_string(&out).unwrap();
        check_map(&svg, underlay, 1000.0);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let arcs: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("path") && class_is(n, "arc"))
            .collect();
        let critical = doc
            .descendants()
            .filter(|n| n.has_tag_name("path") && class_is(n, "critical"))
            .count();
        let text: String = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(text.contains("equirectangular projection"), "{text}");
        match overlay {
            None => assert!(arcs.is_empty() && critical == 0),
            Some(_) => {
                assert!(text.contains("arc delay (ms)"), "{text}");
                assert!(critical >= 2, "the critical circuit is highlighted");
                for a in &arcs {
                    assert!(attr(a, "data-delay-ms") > 0.0);
                }
            }
        }
        if overlay == Some("ring-opt") {
            // A directed ring: one arc per silo.
            assert_eq!(arcs.len(), 22);
            // Every silo is labelled (22 <= 80).
            let labels = doc
                .descendants()
                .filter(|n| n.has_tag_name("text") && class_is(n, "silo-label"))
                .count();
            assert_eq!(labels, 22);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn schedules_are_drawn_as_the_union_with_activation_shares() {
    let dir = scratch("schedule");
    let out = dir.join("exp-1peer.svg");
    run_ok(&[
        "draw",
        "--overlay",
        "exp-1peer",
        "-o",
        out.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(&out).unwrap();
    check_map(&svg, "aws-north-america", 1000.0);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let shares: Vec<f64> = doc
        .descendants()
        .filter(|n| n.has_tag_name("path") && class_is(n, "arc"))
        .map(|n| attr(&n, "data-share"))
        .collect();
    // One-peer exponential graph on 22 silos: a period of ceil(log2 22) = 5
    // rounds, silo i sends to i + 2^t in round t: 5 x 22 distinct arcs,
    // each active in one round out of five.
    assert_eq!(shares.len(), 5 * 22);
    assert!(shares.iter().all(|s| (s - 0.2).abs() < 1e-9), "{shares:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn silos_sharing_a_router_sit_around_it() {
    let dir = scratch("shared-router");
    let out = dir.join("two.svg");
    run_ok(&[
        "draw",
        "--silos-per-router",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(&out).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let root = doc.root_element();
    let (lat0, lon0, scale, x0, y0) = (
        attr(&root, "data-lat0"),
        attr(&root, "data-lon0"),
        attr(&root, "data-scale"),
        attr(&root, "data-x0"),
        attr(&root, "data-y0"),
    );
    let markers = silo_markers(&doc);
    assert_eq!(markers.len(), 44);
    for (label, &(cx, cy, lat, lon)) in &markers {
        let ex = x0 + scale * (lon - lon0) * lat0.to_radians().cos();
        let ey = y0 - scale * lat;
        let d = ((cx - ex).powi(2) + (cy - ey).powi(2)).sqrt();
        assert!((d - 9.0).abs() < 0.02, "{label}: {d} px from its router");
    }
    assert!(svg.contains("44 silos share a router"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn draw_refuses_what_it_cannot_draw() {
    let dir = scratch("refuse");
    // No coordinates at all: links get a default length, the map has no
    // positions to draw.
    let gml = dir.join("plain.gml");
    std::fs::write(
        &gml,
        "graph [ node [ id 0 label \"a\" ] node [ id 1 label \"b\" ] edge [ source 0 target 1 ] ]",
    )
    .unwrap();
    let out = dir.join("x.svg");
    let o = fedtopo(&[
        "draw",
        gml.to_str().unwrap(),
        "--default-length-km",
        "100",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("2 of 2 silos have no coordinates"), "{err}");
    assert!(!out.exists());
    let o = fedtopo(&["draw", "--width", "5", "-o", out.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("--width <WIDTH>': expected a number in [500, 20000]"));
    std::fs::remove_dir_all(&dir).ok();
}

/// `simulate --out` writes a round timeline per overlay: its compute bars
/// start at the replay's `t_i(k)` (starts.csv) and last `s*Tc`, every
/// silo has one per shown round, and the critical path is drawn.
#[test]
fn simulate_writes_round_timelines() {
    let dir = scratch("gantt");
    let out = dir.join("sim");
    run_ok(&[
        "simulate",
        "--overlays",
        "star,ring-opt,matcha",
        "--rounds",
        "10",
        "--network",
        "flow",
        "--access",
        "1G",
        "--timeline-from",
        "2",
        "--timeline-rounds",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    let silos: Vec<String> = read(&out.join("silos.csv"))
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    assert_eq!(silos.len(), 22);
    let mut starts: BTreeMap<(String, usize, usize), f64> = BTreeMap::new();
    for l in read(&out.join("starts.csv")).lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        starts.insert(
            (
                f[0].to_string(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            ),
            f[4].parse().unwrap(),
        );
    }
    for overlay in ["star", "ring-opt", "matcha"] {
        let svg = read(&out.join(format!("gantt-{overlay}.svg")));
        let doc = roxmltree::Document::parse(&svg).expect("the timeline is well-formed XML");
        let compute: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && class_is(n, "compute"))
            .collect();
        // 22 silos x rounds 2, 3, 4.
        assert_eq!(compute.len(), 22 * 3, "{overlay}");
        for bar in &compute {
            let silo = bar.attribute("data-silo").unwrap();
            let i = silos.iter().position(|s| s == silo).unwrap();
            let k: usize = bar.attribute("data-round").unwrap().parse().unwrap();
            assert!((2..5).contains(&k));
            let from = attr(bar, "data-from-ms");
            let want = starts[&(overlay.to_string(), k, i)];
            assert!(
                (from - want).abs() < 1e-5,
                "{overlay} {silo} round {k}: {from} vs {want}"
            );
            // inaturalist: 25.4 ms per local step, one step.
            assert!((attr(bar, "data-to-ms") - from - 25.4).abs() < 1e-5);
        }
        let waits = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && class_is(n, "wait"))
            .count();
        assert!(waits > 0, "{overlay}");
        let path: Vec<_> = doc
            .descendants()
            .filter(|n| class_is(n, "critical-path"))
            .collect();
        assert_eq!(path.len(), 1, "{overlay}");
        assert!(attr(&path[0], "data-steps") >= 3.0);
        let text: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
        assert!(
            text.contains(&"wall-clock time (ms)"),
            "{overlay}: axis title with unit"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Every inline `<svg ...>...</svg>` of an HTML page, parsed as XML.
fn inline_svgs(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find("<svg") {
        let end = rest[i..].find("</svg>").expect("every <svg> is closed") + i + 6;
        let svg = &rest[i..end];
        roxmltree::Document::parse(svg).expect("an inline SVG is well-formed XML");
        out.push(svg.to_string());
        rest = &rest[end..];
    }
    out
}

/// A page that needs nothing from outside: no script, no external
/// resource, no URL but the SVG namespace.
fn assert_self_contained(page: &str) {
    assert!(page.starts_with("<!DOCTYPE html>"));
    let stripped = page.replace("http://www.w3.org/2000/svg", "");
    for bad in [
        "<script",
        " src=",
        "http://",
        "https://",
        "url(",
        "@import",
        "<link rel=\"stylesheet",
    ] {
        assert!(!stripped.contains(bad), "the page contains `{bad}`");
    }
}

fn class_count(svgs: &[String], class: &str) -> usize {
    svgs.iter()
        .filter(|s| s[..s.find('>').unwrap()].contains(&format!("class=\"{class}\"")))
        .count()
}

/// `--report DIR` writes one self-contained report.html per command, with
/// what the command has: tables, maps (one per overlay), round timelines,
/// curves.
#[test]
fn reports_are_self_contained_pages() {
    let dir = scratch("reports");
    let d = |n: &str| dir.join(n).to_str().unwrap().to_string();
    run_ok(&[
        "compare",
        "--overlays",
        "star,ring-opt,matcha",
        "--report",
        &d("compare"),
    ]);
    let page = read(&dir.join("compare/report.html"));
    assert_self_contained(&page);
    let svgs = inline_svgs(&page);
    assert_eq!(class_count(&svgs, "fedtopo-map"), 3, "a map per overlay");
    // The first map is the STAR one: its markers at the projection.
    check_map(&svgs[0], "aws-north-america", 1000.0);
    for o in [
        "star",
        "ring-opt",
        "matcha",
        "cycle time (ms)",
        "critical circuit",
    ] {
        assert!(page.contains(&format!(">{o}<")), "{o}");
    }

    run_ok(&[
        "simulate",
        "--overlays",
        "star,ring",
        "--rounds",
        "8",
        "--report",
        &d("simulate"),
    ]);
    let page = read(&dir.join("simulate/report.html"));
    assert_self_contained(&page);
    let svgs = inline_svgs(&page);
    assert_eq!(
        class_count(&svgs, "fedtopo-gantt"),
        2,
        "a timeline per overlay"
    );
    assert_eq!(class_count(&svgs, "fedtopo-map"), 2, "a map per overlay");
    assert!(page.contains("rounds completed"), "the curves");

    run_ok(&[
        "design",
        "--overlays",
        "mst,ring-opt,exp-1peer",
        "--report",
        &d("design"),
    ]);
    let page = read(&dir.join("design/report.html"));
    assert_self_contained(&page);
    let svgs = inline_svgs(&page);
    assert_eq!(class_count(&svgs, "fedtopo-map"), 1, "the winner's map");
    assert!(page.contains("mixing time (rounds)"), "the trade-off plot");

    // An experiment on a built-in underlay: its table and its plot.
    let exp = dir.join("exp");
    std::fs::create_dir_all(&exp).unwrap();
    std::fs::write(
        exp.join("experiment.toml"),
        "name = \"tiny\"\ndescription = \"two overlays, two access capacities\"\nkind = \"compare\"\n\
         [grid]\nunderlay = [\"aws-north-america\"]\noverlay = [\"ring\", \"mst\"]\naccess = [\"1G\", \"10G\"]\n\
         [[plot]]\nfile = \"tiny.svg\"\nx = \"access\"\ny = \"cycle_time_ms\"\nseries = \"overlay\"\nlog_x = true\n",
    )
    .unwrap();
    run_ok(&[
        "run",
        exp.join("experiment.toml").to_str().unwrap(),
        "--out",
        &d("exp-out"),
        "--report",
        &d("run"),
    ]);
    let page = read(&dir.join("run/report.html"));
    assert_self_contained(&page);
    let svgs = inline_svgs(&page);
    assert_eq!(svgs.len(), 1, "the experiment's plot");
    assert!(page.contains("<p>two overlays, two access capacities</p>"));
    assert!(page.contains("<th>cycle_time_ms</th>"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Reads a file the test made.
fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}
