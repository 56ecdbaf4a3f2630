//! Large networks (issue 17): loading and summarising a large generated
//! underlay, and building RING where Christofides' matching is approximate.
//!
//! * `underlay_20k/load_and_diameter`: parse and build a 20,000-router
//!   random geometric underlay (GML text generated once) and compute its
//!   `underlay info` diameter (bounded: above the exact limit).
//! * `ring_3000/christofides`: the RING overlay on 3,000 silos (one per
//!   router of a random geometric underlay), above the exact-matching limit.
//!
//! `cargo bench --bench scale`

use criterion::{criterion_group, criterion_main, Criterion};

use fedtopo::overlay::ring::ring;
use fedtopo::scenario::NetworkSpec;
use fedtopo::underlay::diameter::diameter;
use fedtopo::underlay::synthetic::{radius_for_degree, random_geometric, random_geometric_gml};
use fedtopo::underlay::{LoadOptions, Underlay};

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

criterion_group!(benches, underlay_load_and_diameter, ring_large);
criterion_main!(benches);
