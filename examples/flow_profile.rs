//! Times one flow-model replay and prints the model's counters; for
//! profiling (`perf record`, `valgrind --tool=callgrind`).
//!
//! `cargo run --release --example flow_profile -- [UNDERLAY] [OVERLAY] [ROUNDS]`
//!
//! * `UNDERLAY`: a GML path (one silo per router, default
//!   `underlays/paper/sprint.gml`, shipped) or `rgg:ROUTERS:SILOS` (the
//!   seeded random geometric underlay of the `flow` bench, silos spread by
//!   [`fedtopo::net::placement::SiloPlacement::spread`]), or `scale:N[:DEGREE]`
//!   (the underlay of `experiments/scaling` at N silos: N routers, one silo
//!   per router, side `4000 km * sqrt(N / 300)`, links within 400 km or,
//!   with `DEGREE`, within the radius giving that mean degree).
//! * `OVERLAY`: comma-separated circulant strides (`1` = directed ring over
//!   the silo order, `1,2,5` = 3 out-neighbours), or an overlay name
//!   (`ring`, `mst`, ...). Default `1`.
//!
//! Access and core links 1 Gbit/s. Set `FULL=1` for the from-scratch
//! reference allocation, `DUMP=PATH` to write every `t_i(k)` (ms) to PATH.

use std::time::Instant;

use fedtopo::graph::Overlay;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::placement::SiloPlacement;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::synthetic::{radius_for_degree, random_geometric};
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::network::{FlowNetwork, NetworkModel};
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::replay::{replay, ReplayOptions};

/// The `flow` bench's synthetic scenario: `routers` routers in a 4000 km
/// square (links within 400 km, 1 Gbit/s), `silos` silos spread over them.
pub fn rgg_model(routers: usize, silos: usize) -> (Underlay, DelayModel) {
    let u = random_geometric(routers, 4000.0, 400.0, 1e9, 1).expect("rgg");
    let p = SiloPlacement::spread(silos, routers, 1).expect("placement");
    let m = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    }
    .delay_model_placed(&u, p);
    (u, m)
}

/// The underlay of `experiments/scaling` at `n` silos (one per router):
/// side `4000 km * sqrt(n / 300)`, links within 400 km or within the radius
/// giving mean degree `degree`.
pub fn scaling_model(n: usize, degree: Option<f64>) -> (Underlay, DelayModel) {
    let side = 4000.0 * (n as f64 / 300.0).sqrt();
    let radius = degree.map_or(400.0, |d| radius_for_degree(n, side, d));
    let u = random_geometric(n, side, radius, 1e9, 1).expect("rgg");
    let p = SiloPlacement::spread(n, n, 1).expect("placement");
    let m = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    }
    .delay_model_placed(&u, p);
    (u, m)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sprint = fedtopo::net::builtin::paper_underlays_dir().join("sprint.gml");
    let spec = args
        .get(1)
        .map_or(sprint.to_str().unwrap_or("sprint.gml"), String::as_str);
    let overlay = args.get(2).map_or("1", String::as_str);
    let rounds: u64 = args.get(3).map_or(100, |s| s.parse().expect("rounds"));
    let (u, m) = if let Some(rest) = spec.strip_prefix("rgg:") {
        let (r, s) = rest.split_once(':').expect("rgg:ROUTERS:SILOS");
        rgg_model(r.parse().expect("routers"), s.parse().expect("silos"))
    } else if let Some(rest) = spec.strip_prefix("scale:") {
        let (n, d) = match rest.split_once(':') {
            Some((n, d)) => (n, Some(d.parse().expect("scale:N:DEGREE"))),
            None => (rest, None),
        };
        scaling_model(n.parse().expect("scale:N"), d)
    } else {
        let u = load_underlay(Some(spec), &LoadOptions::default()).expect("underlay");
        let m = NetworkSpec {
            access_bps: 1e9,
            ..NetworkSpec::default()
        }
        .delay_model(&u);
        (u, m)
    };
    let n = m.silo_count();
    let t = Instant::now();
    let o = if overlay.starts_with(|c: char| c.is_ascii_digit()) {
        let strides: Vec<usize> = overlay
            .split(',')
            .map(|s| s.parse().expect("stride"))
            .collect();
        Overlay::from_arcs(
            "circulant",
            n,
            (0..n).flat_map(|i| strides.iter().map(move |s| (i, (i + s) % n))),
        )
    } else {
        let kind: OverlayKind = overlay.parse().expect("overlay");
        build_overlay(kind, &u, &m, &BuildOptions::default()).expect("overlay")
    };
    let build = t.elapsed().as_secs_f64();
    let opts = ReplayOptions {
        rounds,
        ..ReplayOptions::default()
    };
    let full = std::env::var_os("FULL").is_some();
    let t = Instant::now();
    let cpu0 = user_cpu_s();
    let mut net = FlowNetwork::new(&m);
    if full {
        net = net.with_full_recompute();
    }
    let r = replay(&o, &m, &mut net, &opts).expect("replay");
    let secs = t.elapsed().as_secs_f64();
    let cpu = user_cpu_s().zip(cpu0).map(|(b, a)| b - a);
    println!(
        "{spec} ({n} silos) {overlay} ({} arcs, built in {build:.2} s) rounds {rounds}{}: {secs:.3} s, {} events, makespan {:.3} ms, {:?}",
        o.arc_count(),
        if full { " (full recompute)" } else { "" },
        r.events,
        r.makespan_ms(),
        net.stats()
    );
    println!("allocator: {:?}", net.allocator_stats());
    // Wall-clock time is inflated on a shared machine; user CPU time of the
    // replay alone (10 ms ticks) is not.
    if let Some(cpu) = cpu {
        println!(
            "replay user CPU {cpu:.2} s: {:.3} M events/s",
            r.events as f64 / cpu / 1e6
        );
    }
    // FNV-1a over the bits of every t_i(k): equal digests = bit-identical runs.
    let digest = r
        .starts
        .iter()
        .flatten()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, t| {
            (h ^ t.to_bits()).wrapping_mul(0x0000_0100_0000_01b3)
        });
    println!("digest of every t_i(k): {digest:016x}");
    // DUMP=PATH: every t_i(k), one per line (silo-major), for comparing runs.
    if let Some(path) = std::env::var_os("DUMP") {
        let text: String = r
            .starts
            .iter()
            .flatten()
            .map(|t| format!("{t:e}\n"))
            .collect();
        std::fs::write(path, text).expect("DUMP: write");
    }
}

/// User CPU time of this process so far, s (Linux `/proc/self/stat`, field
/// 14, in clock ticks of 10 ms); `None` elsewhere.
fn user_cpu_s() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) in parens.
    let rest = &stat[stat.rfind(')')? + 2..];
    let utime: f64 = rest.split_whitespace().nth(11)?.parse().ok()?;
    Some(utime / 100.0)
}
