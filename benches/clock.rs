//! Cost of one round of the round clock (issue 28: `Clock.step` < 10 µs
//! at 100 silos): [`EngineClock::round_end_times_into`], what Python's
//! `Clock.step()` calls, on the `maxplus` network. One step times one
//! round: by the recurrence (one addition per arc), and (`_events`) event
//! by event, every event until all silos have started the next round (on
//! a ring, ~2 events per silo: a compute timer and a transfer timer).
//!
//! * `clock_step/aws_100_silos_{ring,mst,star}`: 100 silos spread over
//!   the 22 routers of `aws-north-america` (placement seed 0, default
//!   network: what `python/benches/clock_step.py` times).
//! * `clock_step/rgg_100_routers_{ring,ring-opt}`: one silo on each router
//!   of a seeded 100-router random geometric underlay (2000 km square,
//!   links within 400 km, 1 Gbit/s core and access). Needs no `../shared`.
//!
//! Every iteration times the clock's next round (the clock runs on for
//! the whole measurement, as a training loop's does).
//! Run: `cargo bench --bench clock -- --warm-up-time 1 --measurement-time 5`

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use fedtopo::graph::Overlay;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::placement::SiloPlacement;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::synthetic::random_geometric;
use fedtopo::net::underlay::LoadOptions;
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::replay::clock::{EngineClock, RoundClock};
use fedtopo::replay::Straggler;

/// Times one round per iteration of a clock over `o` on `m`: the clock
/// `EngineClock::new` makes (the `maxplus` recurrence) and, as
/// `{name}_events`, the event engine it stands for.
fn bench_steps(c: &mut Criterion, name: &str, o: &Overlay, m: &DelayModel) {
    let mut g = c.benchmark_group("clock_step");
    for events in [false, true] {
        let mut clock = if events {
            EngineClock::event_driven(o, m, NetworkKind::Maxplus, Straggler::None, 0)
        } else {
            EngineClock::new(o, m, NetworkKind::Maxplus)
        }
        .expect("clock");
        let mut k = 0u64;
        let mut t = Vec::new();
        let id = if events {
            format!("{name}_events")
        } else {
            name.to_string()
        };
        g.bench_function(id, |b| {
            b.iter(|| {
                clock.round_end_times_into(k, o, &mut t).expect("round");
                k += 1;
                black_box(t.len())
            })
        });
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    match load_underlay(Some("aws-north-america"), &LoadOptions::default()) {
        Ok(u) => {
            let p = SiloPlacement::spread(100, u.node_count(), 0).expect("placement");
            let m = NetworkSpec::default().delay_model_placed(&u, p);
            for kind in [OverlayKind::Ring, OverlayKind::Mst, OverlayKind::Star] {
                let o = build_overlay(kind, &u, &m, &BuildOptions::default()).expect("overlay");
                bench_steps(c, &format!("aws_100_silos_{}", kind.name()), &o, &m);
            }
        }
        Err(e) => eprintln!("skipping aws-north-america: {e}"),
    }
    let u = random_geometric(100, 2000.0, 400.0, 1e9, 1).expect("rgg");
    let m = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    }
    .delay_model(&u);
    for kind in [OverlayKind::Ring, OverlayKind::RingOpt] {
        let o = build_overlay(kind, &u, &m, &BuildOptions::default()).expect("overlay");
        bench_steps(c, &format!("rgg_100_routers_{}", kind.name()), &o, &m);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
