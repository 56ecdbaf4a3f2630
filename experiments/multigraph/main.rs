//! Multigraph (\[Do23\], ICCV 2023) against RING on \[Marfoq20\]'s network:
//! their Table 3 next to fedtopo's timings of the same schedules. Writes
//! `results.csv` to `--out` (default: this directory).
//!
//! ```text
//! FEDTOPO_SHARED=/path/to/shared cargo run --release --example multigraph -- \
//!     [--out DIR] [--replay-rounds 600] [--network flow|maxplus|paper|none]
//! ```
//!
//! For every workload (FEMNIST, iNaturalist, Sentiment140) and network
//! (Gaia, AWS North America, Geant, Exodus, Ebone) and three base rings —
//! `their-ring` (the tour \[Do23\]'s published code builds, from
//! `their-rings.csv`), fedtopo's `ring` (Christofides) and `ring-opt` — the
//! multigraph with `t_max = 5` is timed by their method (the mean over
//! 6400 / 1600 / 20000 rounds of a per-round cycle mean), by the exact
//! max-plus rate of its period with weak edges idle and with background
//! transfers, and by an event replay of `--replay-rounds` rounds on
//! `--network` (mean round time, as `fedtopo simulate` reports it).
//! See README.md here.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::reproduce::multigraph::{
    model, parse_their_rings, published, their_rounds, time_multigraph, MultigraphTiming, NETWORKS,
    WORKLOADS,
};

struct Args {
    out: PathBuf,
    replay_rounds: u64,
    network: Option<NetworkKind>,
}

fn parse_args() -> Result<Args> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("experiments/multigraph");
    let mut a = Args {
        out: here,
        replay_rounds: 600,
        network: Some(NetworkKind::Flow),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--out" => a.out = PathBuf::from(value()?),
            "--replay-rounds" => {
                let v = value()?;
                a.replay_rounds = v.parse().ok().filter(|&r| r >= 1).with_context(|| {
                    format!("--replay-rounds `{v}`: expected a whole number >= 1")
                })?;
            }
            "--network" => {
                a.network = match value()?.as_str() {
                    "none" => None,
                    "flow" => Some(NetworkKind::Flow),
                    "maxplus" => Some(NetworkKind::Maxplus),
                    "paper" => Some(NetworkKind::Paper),
                    other => bail!("--network `{other}`: expected flow, maxplus, paper or none"),
                }
            }
            other => bail!("unknown argument `{other}` (see the doc comment of main.rs)"),
        }
    }
    Ok(a)
}

fn shared() -> PathBuf {
    std::env::var_os("FEDTOPO_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

fn fmt(x: f64) -> String {
    format!("{x:.2}")
}

fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), fmt)
}

fn main() -> Result<()> {
    let a = parse_args()?;
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("experiments/multigraph");
    let rings_path = here.join("their-rings.csv");
    let rings = parse_their_rings(
        &std::fs::read_to_string(&rings_path)
            .with_context(|| format!("reading {}", rings_path.display()))?,
    )?;
    let network_name = a.network.map_or("none", |k| k.name());
    let mut csv = String::from(
        "workload,network,silos,base,base_ms,period,slow_arcs,isolated_share,their_rounds,\
         their_method_ms,exact_idle_ms,exact_background_ms,replay_network,replay_rounds,\
         replay_base_ms,replay_idle_ms,replay_background_ms,published_ring_ms,\
         published_multigraph_ms\n",
    );
    let mut gains = Vec::new();
    for workload in WORKLOADS {
        for network in NETWORKS {
            let path = shared().join(format!("underlays/paper/{network}.gml"));
            let u = Underlay::load(&path, &LoadOptions::default())
                .with_context(|| format!("loading {} (set FEDTOPO_SHARED)", path.display()))?;
            let m = model(&u, workload).with_context(|| format!("workload {workload}"))?;
            let n = m.silo_count();
            let theirs = rings
                .iter()
                .find(|r| r.workload == workload && r.network == network)
                .with_context(|| {
                    format!("{workload} on {network}: not in {}", rings_path.display())
                })?;
            let opts = BuildOptions::default();
            let bases = [
                ("their-ring", theirs.overlay(n)),
                ("ring", build_overlay(OverlayKind::Ring, &u, &m, &opts)?),
                (
                    "ring-opt",
                    build_overlay(OverlayKind::RingOpt, &u, &m, &opts)?,
                ),
            ];
            let (pub_ring, pub_mg) = published(workload, network).unwrap_or((f64::NAN, f64::NAN));
            for (name, base) in bases {
                let replay_with = a.network.map(|k| (k, a.replay_rounds));
                let t = time_multigraph(&base, &m, their_rounds(workload), replay_with)
                    .with_context(|| format!("{workload} on {network}, {name}"))?;
                eprintln!(
                    "{workload:<12} {network:<14} {name:<10} base {:7.2}  theirs {:7.2}  idle {:7.2}  background {:7.2}  replay {} / {} / {}",
                    t.base_ms,
                    t.their_method_ms,
                    t.exact_idle_ms,
                    t.exact_background_ms,
                    opt(t.replay_base_ms),
                    opt(t.replay_idle_ms),
                    opt(t.replay_background_ms)
                );
                gains.push((workload, name, t.clone(), pub_ring / pub_mg));
                writeln!(
                    csv,
                    "{workload},{network},{},{name},{},{},{},{:.4},{},{},{},{},{},{},{},{},{},{},{}",
                    t.silos,
                    fmt(t.base_ms),
                    t.period,
                    t.slow_arcs,
                    t.isolated_share,
                    t.their_rounds,
                    fmt(t.their_method_ms),
                    fmt(t.exact_idle_ms),
                    fmt(t.exact_background_ms),
                    network_name,
                    if a.network.is_some() { a.replay_rounds } else { 0 },
                    opt(t.replay_base_ms),
                    opt(t.replay_idle_ms),
                    opt(t.replay_background_ms),
                    pub_ring,
                    pub_mg
                )?;
            }
        }
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let out = a.out.join("results.csv");
    std::fs::write(&out, csv).with_context(|| format!("writing {}", out.display()))?;
    eprintln!("wrote {}", out.display());
    // Speed-up over the base ring, averaged over the five networks (their
    // "x times shorter than RING"): published, their method, exact, replay.
    let mut summary = String::from(
        "workload,base,networks,published,their_method,exact_idle,exact_background,\
         replay_idle,replay_background\n",
    );
    for workload in WORKLOADS {
        for base in ["their-ring", "ring", "ring-opt"] {
            let rows: Vec<_> = gains
                .iter()
                .filter(|g| g.0 == workload && g.1 == base)
                .collect();
            let mean = |f: &dyn Fn(&MultigraphTiming, f64) -> Option<f64>| -> String {
                let v: Vec<f64> = rows.iter().filter_map(|g| f(&g.2, g.3)).collect();
                if v.len() == rows.len() && !v.is_empty() {
                    format!("{:.3}", v.iter().sum::<f64>() / v.len() as f64)
                } else {
                    String::new()
                }
            };
            writeln!(
                summary,
                "{workload},{base},{},{},{},{},{},{},{}",
                rows.len(),
                mean(&|_, p| Some(p)),
                mean(&|t, _| Some(t.base_ms / t.their_method_ms)),
                mean(&|t, _| Some(t.base_ms / t.exact_idle_ms)),
                mean(&|t, _| Some(t.base_ms / t.exact_background_ms)),
                mean(&|t, _| Some(t.replay_base_ms? / t.replay_idle_ms?)),
                mean(&|t, _| Some(t.replay_base_ms? / t.replay_background_ms?)),
            )?;
        }
    }
    let out = a.out.join("summary.csv");
    std::fs::write(&out, summary).with_context(|| format!("writing {}", out.display()))?;
    eprintln!("wrote {}", out.display());
    Ok(())
}
