//! Event engine throughput.
//!
//! * `maxplus/*`: events per second of the round replay with the eq. (3)
//!   network (a directed ring over all silos, 1000 rounds).
//! * `flow/*`: the max-min fair flow model on sprint (315 routers, one silo
//!   each), 100 rounds, 1 Gbit/s core and 1 Gbit/s access: a ring (315 flows
//!   per round) and a 3-out-neighbour circulant (945 flows per round).
//! * `flow_rgg/*`: the flow model with 1000 silos spread over a seeded
//!   random geometric underlay of 300 routers (4000 km square, links
//!   within 400 km, 1 Gbit/s core and access), 100 rounds, on the RING
//!   (Christofides, built once: ~16 s of setup) and on the MST (sparse,
//!   1998 arcs). Needs no `../shared`.
//! * `flow_rgg/..._plain_ring_...`: the flow model's worst case on the same
//!   scenario: the directed ring in plain silo order (consecutive silos sit
//!   on unrelated routers, so every route is long and shared), 100 rounds.
//! * `flow_rgg/1000_silos_degree_4_plain_ring_100_rounds`: issue 28's
//!   worst case, the `flow-replay` stage of `experiments/scaling` with
//!   `--degree 4` at 1000 silos: 1000 routers (one silo each) in a
//!   `4000 km * sqrt(1000/300)` square, links within the radius giving mean
//!   degree 4 (routes of ~sqrt(N) hops), the plain silo-order ring.
//! * `queue/*`: raw schedule + pop of the event queue.
//! * `async/*`: the asynchronous protocols (`replay::asynchronous`) on
//!   sprint's 315 silos, 100 x N computations, 1 Gbit/s: gossip on the
//!   plain ring and FedBuff (K = 10) at silo 0, max-plus and flow networks.
//!
//! Reads the shipped `underlays/paper/sprint.gml`.
//! Run: `cargo bench --bench engine -- --warm-up-time 1 --measurement-time 5`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use fedtopo::engine::Scheduler;
use fedtopo::graph::Overlay;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::placement::SiloPlacement;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::synthetic::{radius_for_degree, random_geometric};
use fedtopo::net::underlay::LoadOptions;
use fedtopo::network::{FlowNetwork, MaxPlusNetwork};
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::replay::{replay, ReplayOptions};

fn model(spec: &str) -> Option<DelayModel> {
    let u = load_underlay(Some(spec), &LoadOptions::default()).ok()?;
    let net = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    };
    Some(net.delay_model(&u))
}

fn circulant(n: usize, strides: &[usize]) -> Overlay {
    Overlay::from_arcs(
        "circulant",
        n,
        (0..n).flat_map(|i| strides.iter().map(move |s| (i, (i + s) % n))),
    )
}

/// 1000 silos over a 300-router random geometric underlay, 1 Gbit/s.
fn flow_rgg(c: &mut Criterion) {
    let u = random_geometric(300, 4000.0, 400.0, 1e9, 1).expect("rgg");
    let p = SiloPlacement::spread(1000, 300, 1).expect("placement");
    let m = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    }
    .delay_model_placed(&u, p);
    let opts = ReplayOptions {
        rounds: 100,
        ..ReplayOptions::default()
    };
    let mut g = c.benchmark_group("flow_rgg");
    g.sample_size(10);
    for kind in [OverlayKind::Ring, OverlayKind::Mst] {
        let o = build_overlay(kind, &u, &m, &BuildOptions::default()).expect("overlay");
        let events = replay(&o, &m, &mut FlowNetwork::new(&m), &opts)
            .unwrap()
            .events;
        g.throughput(Throughput::Elements(events));
        g.bench_function(
            format!("1000_silos_300_routers_{}_100_rounds", kind.name()),
            |b| b.iter(|| replay(&o, &m, &mut FlowNetwork::new(&m), &opts).unwrap()),
        );
    }
    let plain = circulant(1000, &[1]);
    let events = replay(&plain, &m, &mut FlowNetwork::new(&m), &opts)
        .unwrap()
        .events;
    g.throughput(Throughput::Elements(events));
    g.bench_function("1000_silos_300_routers_plain_ring_100_rounds", |b| {
        b.iter(|| replay(&plain, &m, &mut FlowNetwork::new(&m), &opts).unwrap())
    });
    // experiments/scaling's flow-replay stage, --degree 4, N = 1000.
    let n = 1000;
    let side = 4000.0 * (n as f64 / 300.0).sqrt();
    let u = random_geometric(n, side, radius_for_degree(n, side, 4.0), 1e9, 1).expect("rgg");
    let p = SiloPlacement::spread(n, n, 1).expect("placement");
    let m = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    }
    .delay_model_placed(&u, p);
    let events = replay(&plain, &m, &mut FlowNetwork::new(&m), &opts)
        .unwrap()
        .events;
    g.throughput(Throughput::Elements(events));
    g.bench_function("1000_silos_degree_4_plain_ring_100_rounds", |b| {
        b.iter(|| replay(&plain, &m, &mut FlowNetwork::new(&m), &opts).unwrap())
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("queue");
    g.throughput(Throughput::Elements(1_000_000));
    g.bench_function("schedule_pop_1M", |b| {
        b.iter(|| {
            let mut q = Scheduler::new();
            let mut x = 1u64;
            for i in 0..1_000_000u64 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                q.schedule_at((x >> 40) as f64, i);
            }
            while let Some(e) = q.pop() {
                black_box(e);
            }
        })
    });
    g.finish();

    let sprint_path = fedtopo::net::builtin::paper_underlays_dir().join("sprint.gml");
    let sprint = sprint_path.to_str().unwrap_or("sprint.gml");
    for (name, m) in [
        ("aws-north-america", model("aws-north-america")),
        ("sprint", model(sprint)),
    ] {
        let Some(m) = m else {
            eprintln!("skipping {name}: underlay not found");
            continue;
        };
        let n = m.silo_count();
        let ring = circulant(n, &[1]);
        let opts = ReplayOptions {
            rounds: 1000,
            ..ReplayOptions::default()
        };
        let events = replay(&ring, &m, &mut MaxPlusNetwork::new(&m), &opts)
            .unwrap()
            .events;
        let mut g = c.benchmark_group("maxplus");
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("{name}_ring_1000_rounds"), |b| {
            b.iter(|| replay(&ring, &m, &mut MaxPlusNetwork::new(&m), &opts).unwrap())
        });
        g.finish();
        if name == "sprint" {
            let opts = ReplayOptions {
                rounds: 100,
                ..ReplayOptions::default()
            };
            let mut g = c.benchmark_group("flow");
            g.sample_size(10);
            for (label, o) in [
                ("ring", ring.clone()),
                ("circulant3", circulant(n, &[1, 2, 5])),
            ] {
                let events = replay(&o, &m, &mut FlowNetwork::new(&m), &opts)
                    .unwrap()
                    .events;
                g.throughput(Throughput::Elements(events));
                g.bench_function(format!("sprint_{label}_100_rounds"), |b| {
                    b.iter(|| replay(&o, &m, &mut FlowNetwork::new(&m), &opts).unwrap())
                });
            }
            g.finish();
        }
    }
}

/// Asynchronous gossip and FedBuff on sprint (315 silos).
fn asynchronous(c: &mut Criterion) {
    use fedtopo::network::NetworkKind;
    use fedtopo::replay::asynchronous::buffered::buffered_async;
    use fedtopo::replay::asynchronous::gossip::async_gossip;
    use fedtopo::replay::asynchronous::AsyncOptions;
    let Some(m) = model("underlays/paper/sprint.gml") else {
        return;
    };
    let n = m.silo_count();
    let ring = circulant(n, &[1]);
    let opts = AsyncOptions {
        computations: 100 * n as u64,
        seed: 1,
    };
    let mut g = c.benchmark_group("async");
    g.sample_size(10);
    for net in [NetworkKind::Maxplus, NetworkKind::Flow] {
        let events = async_gossip(&ring, &m, net.build(&m).as_mut(), &opts)
            .unwrap()
            .events;
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("sprint_gossip_ring_{net}"), |b| {
            b.iter(|| async_gossip(&ring, &m, net.build(&m).as_mut(), &opts).unwrap())
        });
        let events = buffered_async(&m, 0, 10, net.build(&m).as_mut(), &opts)
            .unwrap()
            .events;
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("sprint_fedbuff10_{net}"), |b| {
            b.iter(|| buffered_async(&m, 0, 10, net.build(&m).as_mut(), &opts).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench, flow_rgg, asynchronous);
criterion_main!(benches);
