//! Times the flow network on sprint (the `flow/*` bench workload) once and
//! prints the model's counters; for profiling (`valgrind --tool=callgrind`).
//!
//! `cargo run --release --example flow_profile -- [UNDERLAY] [STRIDES] [ROUNDS]`
//! (default: ../shared/underlays/paper/sprint.gml, `1`, 100); set `FULL=1` for
//! the from-scratch reference allocation.

use std::time::Instant;

use fedtopo::network::{FlowNetwork, NetworkModel};
use fedtopo::overlay::Overlay;
use fedtopo::replay::{replay, ReplayOptions};
use fedtopo::scenario::{load_underlay, NetworkSpec};
use fedtopo::underlay::LoadOptions;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spec = args
        .get(1)
        .map_or("../shared/underlays/paper/sprint.gml", String::as_str);
    let strides: Vec<usize> = args
        .get(2)
        .map_or("1", String::as_str)
        .split(',')
        .map(|s| s.parse().expect("stride"))
        .collect();
    let rounds: u64 = args.get(3).map_or(100, |s| s.parse().expect("rounds"));
    let u = load_underlay(Some(spec), &LoadOptions::default()).expect("underlay");
    let m = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    }
    .delay_model(&u);
    let n = m.silo_count();
    let o = Overlay::from_arcs(
        "circulant",
        n,
        (0..n).flat_map(|i| strides.iter().map(move |s| (i, (i + s) % n))),
    );
    let opts = ReplayOptions {
        rounds,
        ..ReplayOptions::default()
    };
    let full = std::env::var_os("FULL").is_some();
    let t = Instant::now();
    let mut net = FlowNetwork::new(&m);
    if full {
        net = net.with_full_recompute();
    }
    let r = replay(&o, &m, &mut net, &opts).expect("replay");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{spec} strides {strides:?} rounds {rounds}{}: {secs:.3} s, {} events, makespan {:.3} ms, {:?}",
        if full { " (full recompute)" } else { "" },
        r.events,
        r.makespan_ms(),
        net.stats()
    );
    println!("allocator: {:?}", net.allocator_stats());
}
