//! `ring-opt` local search (`improve_directed_ring`, default options) on the
//! eq. (3) ring delays of seeded random geometric underlays with one silo
//! per router (the scaling experiment's instances: side
//! `4000 km * sqrt(N / 300)`, links within 400 km, 1 Gbit/s), from a
//! nearest-neighbour tour. N = 300 uses the full scan (N <= 400), N = 1000
//! and 2000 the candidate lists.
//!
//! Run: `cargo bench --bench ring_opt -- --warm-up-time 1 --measurement-time 5`

use criterion::{criterion_group, criterion_main, Criterion};
use fedtopo::net::placement::SiloPlacement;
use fedtopo::net::scenario::NetworkSpec;
use fedtopo::net::underlay::synthetic::random_geometric;
use fedtopo::overlay::algo::{improve_directed_ring, DenseMatrix, RingSearch};
use fedtopo::overlay::ring::ring_delays;

fn delays(n: usize) -> DenseMatrix {
    let side = 4000.0 * (n as f64 / 300.0).sqrt();
    let u = random_geometric(n, side, 400.0, 1e9, 1).expect("rgg");
    let p = SiloPlacement::spread(n, n, 1).expect("placement");
    let m = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    }
    .delay_model_placed(&u, p);
    ring_delays(&m)
}

fn nearest_neighbour(d: &DenseMatrix) -> Vec<usize> {
    let n = d.n();
    let mut seen = vec![false; n];
    let mut tour = vec![0];
    seen[0] = true;
    while tour.len() < n {
        let row = d.row(tour[tour.len() - 1]);
        let next = (0..n)
            .filter(|&c| !seen[c])
            .min_by(|&x, &y| row[x].total_cmp(&row[y]))
            .expect("a node left");
        seen[next] = true;
        tour.push(next);
    }
    tour
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("ring_opt");
    g.sample_size(10);
    for n in [300, 1000, 2000] {
        let d = delays(n);
        let start = nearest_neighbour(&d);
        g.bench_function(format!("rgg_{n}_silos"), |b| {
            b.iter(|| improve_directed_ring(&d, start.clone(), &RingSearch::default()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
