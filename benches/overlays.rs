//! Overlay construction and cycle time per paper underlay.
//!
//! Reads ../shared/underlays/paper (or $FEDTOPO_SHARED/underlays/paper); when
//! absent, benchmarks the built-in underlays only.
//!
//! `cargo bench --bench overlays`

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

use fedtopo::maxplus::{howard, karp};
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::reproduce::paper_model;
use fedtopo::scenario::load_underlay;
use fedtopo::timing::{cycle_time, maxplus_graph};
use fedtopo::underlay::{Disconnected, LoadOptions, Underlay};

fn underlays() -> Vec<Underlay> {
    let opts = LoadOptions {
        disconnected: Disconnected::LargestComponent,
        ..LoadOptions::default()
    };
    let shared = std::env::var_os("FEDTOPO_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let dir = shared.join("underlays/paper");
    let mut out = Vec::new();
    let names = [
        "gaia",
        "amazon_us",
        "geantdistance",
        "exodus",
        "ebone",
        "telstra",
        "tiscali",
        "sprint",
    ];
    for name in names {
        let p = dir.join(format!("{name}.gml"));
        if let Ok(u) = Underlay::load(&p, &opts) {
            out.push(u);
        }
    }
    if out.is_empty() {
        eprintln!(
            "{} not found: benchmarking built-in underlays",
            dir.display()
        );
        for name in ["aws-gaia", "aws-north-america"] {
            out.push(load_underlay(Some(name), &opts).expect("built-in loads"));
        }
    }
    out
}

fn bench_overlays(c: &mut Criterion) {
    let underlays = underlays();
    let opts = BuildOptions::default();
    let mut all = c.benchmark_group("all-overlays-all-underlays");
    all.sample_size(10);
    all.bench_function("star+mst+delta-mbst+ring+ring-opt", |b| {
        b.iter(|| {
            let mut total = 0.0;
            for u in &underlays {
                let model = paper_model(u, 1);
                for kind in OverlayKind::ALL
                    .iter()
                    .filter(|k| **k != OverlayKind::Complete)
                {
                    let o = build_overlay(*kind, u, &model, &opts).expect("builds");
                    total += cycle_time(&o, &model).expect("strong").cycle_time_ms;
                }
            }
            total
        })
    });
    all.finish();

    let mut g = c.benchmark_group("overlay");
    g.sample_size(10);
    for u in &underlays {
        let model = paper_model(u, 1);
        for kind in OverlayKind::ALL {
            g.bench_with_input(BenchmarkId::new(kind.name(), &u.name), &model, |b, m| {
                b.iter(|| {
                    let o = build_overlay(kind, u, m, &opts).expect("builds");
                    cycle_time(&o, m).expect("strong").cycle_time_ms
                })
            });
        }
    }
    g.finish();
}

/// Karp vs Howard on the max-plus graphs of paper overlays.
fn bench_cycle_time(c: &mut Criterion) {
    let underlays = underlays();
    let opts = BuildOptions::default();
    let mut g = c.benchmark_group("karp-vs-howard");
    g.sample_size(10);
    for u in &underlays {
        let model = paper_model(u, 1);
        for kind in [
            OverlayKind::Mst,
            OverlayKind::RingOpt,
            OverlayKind::Complete,
        ] {
            let o = build_overlay(kind, u, &model, &opts).expect("builds");
            let graph = maxplus_graph(&o, &model).expect("valid");
            let id = format!("{}/{}", kind.name(), u.name);
            g.bench_with_input(BenchmarkId::new("howard", &id), &graph, |b, gr| {
                b.iter(|| howard(gr).expect("strong").value)
            });
            g.bench_with_input(BenchmarkId::new("karp", &id), &graph, |b, gr| {
                b.iter(|| karp(gr).expect("strong").value)
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_overlays, bench_cycle_time);
criterion_main!(benches);
