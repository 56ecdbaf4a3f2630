//! Placement search (issue 24 item 5): the modern families placed on the
//! `ring-opt` tour (their default order) and on the order
//! [`fedtopo::overlay::families::placement::search_order`] finds for their
//! exact cycle time, on \[Marfoq20\]'s network (iNaturalist, 1 Gbit/s core,
//! 10 Gbit/s access, s = 1). Writes `results.csv` and `results.md` to
//! `--out` (default: this directory).
//!
//! ```text
//! cargo run --release --example placement -- [--out DIR] [--seed 0]
//! ```
//!
//! Every cycle time is exact: max-plus (\[Marfoq20\] eq. 3) for the static
//! families, the exact max-plus rate of the period for the schedules (what
//! `fedtopo compare` prints for them). See README.md here.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::overlay::algo::RingSearch;
use fedtopo::overlay::families::placement::{exact_cycle_ms, search_order, PlacementOptions};
use fedtopo::overlay::families::FamilySpec;
use fedtopo::overlay::ring::ring_opt_tour;
use fedtopo::reproduce::multigraph::model;

/// The networks: \[Marfoq20\]'s, shipped in `underlays/paper/`.
const NETWORKS: [(&str, &str); 5] = [
    ("gaia", "gaia.gml"),
    ("amazon_us", "amazon_us.gml"),
    ("geantdistance", "geantdistance.gml"),
    ("exodus", "exodus.gml"),
    ("ebone", "ebone.gml"),
];

/// The families placed (every one that has a node order).
const FAMILIES: [&str; 6] = [
    "exp",
    "exp-1peer",
    "base:k=1",
    "base:k=2",
    "d-equistatic",
    "od-equidyn",
];

fn main() -> Result<()> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = here.join("experiments/placement");
    let mut seed = 0u64;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--out" => out = PathBuf::from(value()?),
            "--seed" => {
                let v = value()?;
                seed = v
                    .parse()
                    .with_context(|| format!("--seed `{v}`: expected a whole number >= 0"))?;
            }
            other => bail!("unknown argument `{other}` (see the doc comment of main.rs)"),
        }
    }
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let mut csv = String::from(
        "underlay,silos,overlay,ring_opt_ms,ring_opt_order_ms,searched_ms,gain,evaluations,improvements\n",
    );
    let mut md = String::from(
        "| underlay | silos | overlay | ring-opt (ms) | on ring-opt order (ms) | searched order (ms) | gain |\n\
         |---|---:|---|---:|---:|---:|---:|\n",
    );
    let options = PlacementOptions::default();
    for (name, file) in NETWORKS {
        let path = here.join("underlays/paper").join(file);
        let underlay = Underlay::load(&path, &LoadOptions::default())
            .with_context(|| format!("loading {}", path.display()))?;
        let m = model(&underlay, "inaturalist").context("the iNaturalist workload")?;
        let n = m.silo_count();
        let tour = ring_opt_tour(&m, &RingSearch::default());
        let ring_opt = fedtopo::timing::cycle_time(
            &fedtopo::graph::Overlay::directed_ring("ring-opt", n, &tour),
            &m,
        )?
        .cycle_time_ms;
        for family in FAMILIES {
            let spec: FamilySpec = family
                .parse()
                .map_err(|e| anyhow::anyhow!("{family}: {e}"))?;
            let start = Instant::now();
            let p = search_order(spec, &m, tour.clone(), seed, &options)?;
            // The search's figures are the exact ones: recomputed here as a
            // check that the kept order is what it says.
            let again = exact_cycle_ms(spec, &p.order, seed, &m)?;
            if (again - p.cycle_time_ms).abs() > 1e-9 * again.max(1.0) {
                bail!(
                    "{name} {family}: searched order times {again} ms, the search said {}",
                    p.cycle_time_ms
                );
            }
            let gain = p.start_cycle_time_ms / p.cycle_time_ms;
            eprintln!(
                "{name} {family}: {:.2} -> {:.2} ms ({:.3}x) in {} evaluations, {:.1} s",
                p.start_cycle_time_ms,
                p.cycle_time_ms,
                gain,
                p.evaluations,
                start.elapsed().as_secs_f64()
            );
            writeln!(
                csv,
                "{name},{n},{family},{ring_opt:.4},{:.4},{:.4},{gain:.4},{},{}",
                p.start_cycle_time_ms, p.cycle_time_ms, p.evaluations, p.improvements
            )?;
            writeln!(
                md,
                "| {name} | {n} | {family} | {ring_opt:.1} | {:.1} | {:.1} | {gain:.3}x |",
                p.start_cycle_time_ms, p.cycle_time_ms
            )?;
        }
    }
    for (file, text) in [("results.csv", csv), ("results.md", md)] {
        let p = out.join(file);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
