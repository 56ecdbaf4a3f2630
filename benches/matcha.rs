//! MATCHA: matching decomposition, activation probabilities (lambda_2) and
//! mixing parameter (alpha) on Ebone (87 silos) and sprint (315 silos), on the
//! connectivity graph (MATCHA) and on the underlay (MATCHA+).
//!
//! Reads the paper underlays shipped in underlays/paper.
//!
//! `cargo bench --bench matcha`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

use fedtopo::net::underlay::{Disconnected, LoadOptions, Underlay};
use fedtopo::overlay::matcha::{
    activation_probabilities, matching_decomposition, mixing_parameter, MatchaBase, SolverOptions,
};

fn load(name: &str) -> Option<Underlay> {
    let opts = LoadOptions {
        disconnected: Disconnected::LargestComponent,
        ..LoadOptions::default()
    };
    let dir = fedtopo::net::builtin::paper_underlays_dir();
    Underlay::load(&dir.join(format!("{name}.gml")), &opts).ok()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("matcha");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for name in ["ebone", "sprint"] {
        let Some(u) = load(name) else {
            eprintln!("{name}: not found, skipped");
            continue;
        };
        for (label, base) in [
            ("gc", MatchaBase::Connectivity),
            ("gu", MatchaBase::Underlay),
        ] {
            let (n, edges) = base.edges(&u);
            let id = format!("{name}-{label}-{n}");
            let m = matching_decomposition(n, &edges).expect("edges");
            let sol =
                activation_probabilities(n, &m, 0.5, &SolverOptions::default()).expect("connected");
            eprintln!(
                "{id}: {} edges, {} matchings, lambda_2 {:.5}, relative gap {:.2e}, {} eigen-decompositions",
                edges.len(),
                m.len(),
                sol.lambda2,
                sol.relative_gap(),
                sol.evals
            );
            g.bench_function(BenchmarkId::new("decomposition", &id), |b| {
                b.iter(|| matching_decomposition(n, &edges).unwrap())
            });
            g.bench_function(BenchmarkId::new("probabilities", &id), |b| {
                b.iter(|| activation_probabilities(n, &m, 0.5, &SolverOptions::default()).unwrap())
            });
            g.bench_function(BenchmarkId::new("alpha", &id), |b| {
                b.iter(|| mixing_parameter(n, &m, &sol.probabilities))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
