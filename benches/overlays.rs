//! Overlay construction and cycle time per paper underlay.
//!
//! Reads the paper underlays shipped in underlays/paper; when
//! absent, benchmarks the built-in underlays only.
//!
//! `delta-mbst-rgg/N`: delta-MBST alone with N = 1000 and 2000 silos spread
//! over a seeded random geometric underlay of 300 routers (4000 km square,
//! links within 400 km, 1 Gbit/s core and access; many co-located silos,
//! so many equal delays). Needs no `../shared`.
//!
//! `delta-mbst-zoo/NAME`: delta-MBST alone on the Topology Zoo files whose
//! many equal delays made it slow (Pern, Ulaknet, Telcove; issue 24, item
//! 8), loaded with the default options, default network (one silo per
//! router). Needs `../shared` (or `FEDTOPO_SHARED`); skipped without it.
//!
//! `cargo bench --bench overlays` (`-- delta-mbst-rgg` or `-- delta-mbst-zoo`
//! for one group)

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

use fedtopo::maxplus::{howard, karp};
use fedtopo::net::placement::SiloPlacement;
use fedtopo::net::scenario::load_underlay;
use fedtopo::net::scenario::NetworkSpec;
use fedtopo::net::underlay::synthetic::random_geometric;
use fedtopo::net::underlay::{Disconnected, LoadOptions, Underlay};
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::overlay::mbst::delta_mbst;
use fedtopo::reproduce::paper_model;
use fedtopo::timing::{cycle_time, maxplus_graph};

fn underlays() -> Vec<Underlay> {
    let opts = LoadOptions {
        disconnected: Disconnected::LargestComponent,
        ..LoadOptions::default()
    };
    let dir = fedtopo::net::builtin::paper_underlays_dir();
    let mut out = Vec::new();
    for name in fedtopo::reproduce::PAPER_UNDERLAYS {
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

/// delta-MBST on 1000 and 2000 silos over a 300-router random geometric
/// underlay, 1 Gbit/s.
fn bench_delta_mbst_rgg(c: &mut Criterion) {
    let u = random_geometric(300, 4000.0, 400.0, 1e9, 1).expect("rgg");
    let mut g = c.benchmark_group("delta-mbst-rgg");
    g.sample_size(10);
    for n in [1000, 2000] {
        let p = SiloPlacement::spread(n, 300, 1).expect("placement");
        let m = NetworkSpec {
            access_bps: 1e9,
            ..NetworkSpec::default()
        }
        .delay_model_placed(&u, p);
        g.bench_with_input(BenchmarkId::from_parameter(n), &m, |b, m| {
            b.iter(|| delta_mbst(m).arc_count())
        });
    }
    g.finish();
}

/// delta-MBST on tie-heavy Topology Zoo files (default loading and
/// network).
fn bench_delta_mbst_zoo(c: &mut Criterion) {
    let Some(shared) =
        fedtopo::net::builtin::shared_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
    else {
        eprintln!("delta-mbst-zoo: no shared/ folder (set FEDTOPO_SHARED): skipped");
        return;
    };
    let mut g = c.benchmark_group("delta-mbst-zoo");
    g.sample_size(10);
    for name in ["Pern", "Ulaknet", "Telcove"] {
        let path = shared.join(format!("underlays/topology-zoo/{name}.gml"));
        let u = match Underlay::load(&path, &LoadOptions::default()) {
            Ok(u) => u,
            Err(e) => {
                eprintln!("delta-mbst-zoo: {}: {e}: skipped", path.display());
                continue;
            }
        };
        let m = NetworkSpec::default().delay_model(&u);
        g.bench_with_input(BenchmarkId::from_parameter(name), &m, |b, m| {
            b.iter(|| delta_mbst(m).arc_count())
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_overlays,
    bench_cycle_time,
    bench_delta_mbst_rgg,
    bench_delta_mbst_zoo
);
criterion_main!(benches);
