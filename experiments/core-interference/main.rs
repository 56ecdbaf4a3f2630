//! Does the paper's "messages do not interfere in the core" assumption matter?
//!
//! Replays STAR, MST, delta-MBST and RING on the paper underlays with the
//! `maxplus` network (eq. 3: each transfer gets A(i,j) = C/hops and access
//! shares, independently of other transfers) and the `flow` network
//! (max-min fair sharing of access and core links), 1 Gbit/s core links,
//! 10G / 1G / 100M access, iNaturalist workload, s = 1, 100 rounds.
//!
//! Run from the repository root:
//! `cargo run --release --example core-interference > experiments/core-interference/results.md`
//! (also writes experiments/core-interference/results.csv).

use std::fmt::Write as _;

use fedtopo::connectivity::ConnectivityOptions;
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{build_overlay, BuildOptions, CenterPolicy, OverlayKind};
use fedtopo::replay::{replay, ReplayOptions};
use fedtopo::report::replay::round_stats;
use fedtopo::scenario::{load_underlay, NetworkSpec};
use fedtopo::timing::cycle_time;
use fedtopo::underlay::LoadOptions;

const UNDERLAYS: [&str; 5] = ["gaia", "amazon_us", "geantdistance", "exodus", "ebone"];

fn main() -> anyhow::Result<()> {
    let dir = std::path::Path::new("../shared/underlays/paper");
    let mut csv = String::from(
        "underlay,access,overlay,cycle_time_ms,maxplus_ms,flow_ms,flow_over_maxplus,max_core_flows\n",
    );
    let mut md = String::from(
        "| underlay | access | overlay | max-plus cycle time (ms) | replay maxplus (ms) | replay flow (ms) | flow / maxplus |\n|---|---|---|---:|---:|---:|---:|\n",
    );
    let kinds = [
        OverlayKind::Star,
        OverlayKind::Mst,
        OverlayKind::DeltaMbst,
        OverlayKind::Ring,
    ];
    for name in UNDERLAYS {
        let path = dir.join(format!("{name}.gml"));
        let u = load_underlay(Some(path.to_str().unwrap()), &LoadOptions::default())?;
        for (label, access) in [("10G", 1e10), ("1G", 1e9), ("100M", 1e8)] {
            let spec = NetworkSpec {
                connectivity: ConnectivityOptions {
                    core_capacity_bps: Some(1e9),
                    ..ConnectivityOptions::default()
                },
                access_bps: access,
                ..NetworkSpec::default()
            };
            let m = spec.delay_model(&u);
            // The published STAR centre: the first node of the file.
            let opts = BuildOptions {
                center: CenterPolicy::First,
                ..BuildOptions::default()
            };
            for kind in kinds {
                let o = build_overlay(kind, &u, &m, &opts)?;
                let tau = cycle_time(&o, &m)?.cycle_time_ms;
                let ro = ReplayOptions {
                    rounds: 100,
                    ..ReplayOptions::default()
                };
                let mp = replay(&o, &m, NetworkKind::Maxplus.build(&m).as_mut(), &ro)?;
                let fl = replay(&o, &m, NetworkKind::Flow.build(&m).as_mut(), &ro)?;
                let (a, b) = (round_stats(&mp).steady_ms, round_stats(&fl).steady_ms);
                writeln!(
                    csv,
                    "{name},{label},{},{tau:.3},{a:.3},{b:.3},{:.4},{}",
                    kind.name(),
                    b / a,
                    fl.network_stats.max_active_flows
                )?;
                writeln!(
                    md,
                    "| {name} | {label} | {} | {tau:.1} | {a:.1} | {b:.1} | {:.3} |",
                    kind.name(),
                    b / a
                )?;
            }
        }
    }
    std::fs::write("experiments/core-interference/results.csv", csv)?;
    print!("{md}");
    Ok(())
}
