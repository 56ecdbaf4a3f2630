//! Writes a seeded random geometric underlay as GML on stdout, for trying
//! fedtopo on large networks (`underlay info`, `compare`).
//!
//! `cargo run --release --example rgg_gml -- ROUTERS [DEGREE] [SEED] > rgg.gml`
//!
//! `ROUTERS` routers uniform in a 4000 km square, a link between every two
//! closer than the radius that gives an expected average degree `DEGREE`
//! (default 5; the radius is `4000 * sqrt(DEGREE / (pi * ROUTERS))` km),
//! plus a link from every router to its nearest lower-numbered one (so the
//! graph is connected); 1 Gbit/s links, seed `SEED` (default 1). See
//! [`fedtopo::net::underlay::synthetic::random_geometric_gml`].

use std::io::Write;

use fedtopo::net::underlay::synthetic::{radius_for_degree, random_geometric_gml};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: rgg_gml ROUTERS [DEGREE] [SEED]";
    let routers: usize = match args.first().and_then(|s| s.parse().ok()) {
        Some(n) if n >= 1 => n,
        _ => {
            eprintln!("{usage}: ROUTERS must be an integer >= 1");
            std::process::exit(2);
        }
    };
    let degree: f64 = match args.get(1).map(|s| s.parse::<f64>()) {
        None => 5.0,
        Some(Ok(d)) if d.is_finite() && d > 0.0 => d,
        Some(_) => {
            eprintln!("{usage}: DEGREE must be a number > 0");
            std::process::exit(2);
        }
    };
    let seed: u64 = match args.get(2).map(|s| s.parse::<u64>()) {
        None => 1,
        Some(Ok(s)) => s,
        Some(Err(_)) => {
            eprintln!("{usage}: SEED must be an integer >= 0");
            std::process::exit(2);
        }
    };
    let side_km = 4000.0;
    let gml = random_geometric_gml(
        routers,
        side_km,
        radius_for_degree(routers, side_km, degree),
        1e9,
        seed,
    );
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(gml.as_bytes()) {
        eprintln!("rgg_gml: writing stdout: {e}");
        std::process::exit(1);
    }
}
