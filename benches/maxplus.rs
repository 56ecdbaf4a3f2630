//! Karp vs Howard on seeded random strongly connected digraphs
//! (a random Hamiltonian cycle plus random arcs, weights uniform in 1..100 ms).
//!
//! Run: `cargo bench --bench maxplus -- --warm-up-time 1 --measurement-time 3`

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use fedtopo::maxplus::{howard, karp, Arc, WeightedDigraph};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random strongly connected digraph with `n` nodes and `m >= n` arcs.
fn random_graph(n: usize, m: usize, seed: u64) -> WeightedDigraph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rng);
    let mut arcs: Vec<Arc> = (0..n)
        .map(|i| Arc {
            from: order[i],
            to: order[(i + 1) % n],
            weight: rng.gen_range(1.0..100.0),
        })
        .collect();
    arcs.extend((n..m).map(|_| Arc {
        from: rng.gen_range(0..n),
        to: rng.gen_range(0..n),
        weight: rng.gen_range(1.0..100.0),
    }));
    WeightedDigraph::new(n, arcs).expect("valid graph")
}

fn karp_vs_howard(c: &mut Criterion) {
    let mut group = c.benchmark_group("max_cycle_mean");
    for (n, m) in [(100, 1_000), (1_000, 10_000)] {
        let g = random_graph(n, m, 2020);
        let label = format!("n{n}_m{m}");
        group.bench_with_input(BenchmarkId::new("karp", &label), &g, |b, g| {
            b.iter(|| karp(black_box(g)).expect("strongly connected"))
        });
        group.bench_with_input(BenchmarkId::new("howard", &label), &g, |b, g| {
            b.iter(|| howard(black_box(g)).expect("strongly connected"))
        });
    }
    let g = random_graph(10_000, 100_000, 2020);
    group.bench_with_input(BenchmarkId::new("howard", "n10000_m100000"), &g, |b, g| {
        b.iter(|| howard(black_box(g)).expect("strongly connected"))
    });
    group.finish();
}

criterion_group!(benches, karp_vs_howard);
criterion_main!(benches);
