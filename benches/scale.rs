//! Large networks (issue 17): loading and summarising a large generated
//! underlay, and building RING where Christofides' matching is approximate.
//!
//! * `underlay_20k/load_and_diameter`: parse and build a 20,000-router
//!   random geometric underlay (GML text generated once) and compute its
//!   `underlay info` diameter (bounded: above the exact limit).
//! * `ring_3000/christofides`: the RING overlay on 3,000 silos (one per
//!   router of a random geometric underlay), above the exact-matching limit.
//!
//! * `issue28/*`: old and new paths of issue 28 side by side (below), and
//!   `issue28/setup_3000` (connectivity and delay model of 3,000 routers,
//!   mean degree 4: one shortest-path tree per router) and
//!   `issue28/compare_3000` (`compare --overlays star,mst,ring,ring-opt`
//!   past the setup, STAR centre `fastest`).
//!
//! `cargo bench --bench scale`

use criterion::{criterion_group, criterion_main, Criterion};

use fedtopo::evaluate::compare::compare_overlays;
use fedtopo::net::scenario::NetworkSpec;
use fedtopo::net::underlay::diameter::diameter;
use fedtopo::net::underlay::synthetic::{
    radius_for_degree, random_geometric, random_geometric_gml,
};
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::overlay::build::{BuildOptions, CenterPolicy, OverlayKind};
use fedtopo::overlay::ring::ring;

fn underlay_load_and_diameter(c: &mut Criterion) {
    let n = 20_000;
    let gml = random_geometric_gml(n, 4000.0, radius_for_degree(n, 4000.0, 5.0), 1e9, 1);
    let mut g = c.benchmark_group("underlay_20k");
    g.sample_size(10);
    g.bench_function("load_and_diameter", |b| {
        b.iter(|| {
            let u = Underlay::from_gml_str(&gml, "rgg.gml", &LoadOptions::default())
                .expect("generated underlay loads");
            diameter(&u)
        })
    });
    g.finish();
}

fn ring_large(c: &mut Criterion) {
    let n = 3_000;
    let u = random_geometric(n, 4000.0, radius_for_degree(n, 4000.0, 5.0), 1e9, 1).expect("rgg");
    let model = NetworkSpec::default().delay_model(&u);
    let mut g = c.benchmark_group("ring_3000");
    g.sample_size(10);
    g.bench_function("christofides", |b| b.iter(|| ring(&model)));
    g.finish();
}

/// Issue 28, old and new paths side by side (the ratio in one run):
/// MATCHA's decomposition of the complete graph (Misra–Gries vs the
/// closed-form round-robin colouring) at 400 silos, and MST on 3,000 silos
/// (Prim on the full weight matrix vs weights read row by row vs the matrix
/// built in tiles).
fn issue28_old_vs_new(c: &mut Criterion) {
    use fedtopo::overlay::matcha::{complete_graph_matchings, misra_gries_decomposition};
    use fedtopo::overlay::mst::{mst, mst_by_rows, mst_from_matrix};
    let mut g = c.benchmark_group("issue28");
    g.sample_size(10);
    let n = 400;
    let complete: Vec<(usize, usize)> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect();
    g.bench_function("kn_400/misra_gries", |b| {
        b.iter(|| misra_gries_decomposition(n, &complete).expect("edges"))
    });
    g.bench_function("kn_400/round_robin", |b| {
        b.iter(|| complete_graph_matchings(n))
    });
    let m = 3_000;
    let u = random_geometric(m, 4000.0, radius_for_degree(m, 4000.0, 4.0), 1e9, 1).expect("rgg");
    let model = NetworkSpec::default().delay_model(&u);
    g.bench_function("mst_3000/matrix", |b| b.iter(|| mst_from_matrix(&model)));
    g.bench_function("mst_3000/rows", |b| b.iter(|| mst_by_rows(&model)));
    g.bench_function("mst_3000/tiled", |b| b.iter(|| mst(&model)));
    g.bench_function("star_centre_3000/one_centre_at_a_time", |b| {
        b.iter(|| {
            use rayon::prelude::*;
            (0..model.silo_count())
                .into_par_iter()
                .map(|c| fedtopo::timing::star_cycle_time_at(&model, c))
                .collect::<Vec<f64>>()
        })
    });
    g.bench_function("star_centre_3000/tiled", |b| {
        b.iter(|| fedtopo::overlay::star::center_fastest(&model))
    });
    g.bench_function("setup_3000", |b| {
        b.iter(|| NetworkSpec::default().delay_model(&u))
    });
    let kinds = [
        OverlayKind::Star,
        OverlayKind::Mst,
        OverlayKind::Ring,
        OverlayKind::RingOpt,
    ];
    let options = BuildOptions {
        center: CenterPolicy::Fastest,
        ..BuildOptions::default()
    };
    g.bench_function("compare_3000", |b| {
        b.iter(|| compare_overlays(&u, &model, &kinds, &options).expect("compare"))
    });
    g.finish();
}

criterion_group!(
    benches,
    underlay_load_and_diameter,
    ring_large,
    issue28_old_vs_new
);
criterion_main!(benches);
