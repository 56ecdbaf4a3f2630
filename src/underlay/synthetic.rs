//! Seeded synthetic underlays (for benchmarks and tests that must not
//! depend on `../shared`).

use std::fmt::Write;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{LoadOptions, Underlay, UnderlayError};

/// GML text of a random geometric graph: `routers` routers uniform in a
/// `side_km` x `side_km` square (ChaCha8 seeded with `seed`), a core link
/// between every pair closer than `radius_km`, plus a link from every
/// router to its nearest lower-numbered router so that the graph is
/// connected. Links carry `distance` (km, Euclidean) and `capacity`
/// (`capacity_bps`, bit/s).
pub fn random_geometric_gml(
    routers: usize,
    side_km: f64,
    radius_km: f64,
    capacity_bps: f64,
    seed: u64,
) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let pos: Vec<(f64, f64)> = (0..routers)
        .map(|_| (rng.gen::<f64>() * side_km, rng.gen::<f64>() * side_km))
        .collect();
    let d = |a: usize, b: usize| (pos[a].0 - pos[b].0).hypot(pos[a].1 - pos[b].1);
    let mut s = String::from("graph [\n  directed 0\n");
    for i in 0..routers {
        let _ = writeln!(s, "  node [ id {i} label \"r{i}\" ]");
    }
    let edge = |s: &mut String, a: usize, b: usize| {
        let _ = writeln!(
            s,
            "  edge [ source {a} target {b} distance {:.3} capacity {capacity_bps} ]",
            d(a, b)
        );
    };
    for b in 1..routers {
        let nearest = (0..b)
            .min_by(|&x, &y| d(x, b).total_cmp(&d(y, b)))
            .expect("b > 0");
        let mut linked_nearest = false;
        for a in 0..b {
            if d(a, b) < radius_km {
                edge(&mut s, a, b);
                linked_nearest |= a == nearest;
            }
        }
        if !linked_nearest {
            edge(&mut s, nearest, b);
        }
    }
    s.push_str("]\n");
    s
}

/// The link radius (km) at which [`random_geometric_gml`] gives `routers`
/// routers in a `side_km` square an expected average degree of about
/// `degree` (ignoring the border): `side_km * sqrt(degree / (pi * routers))`.
pub fn radius_for_degree(routers: usize, side_km: f64, degree: f64) -> f64 {
    side_km * (degree / (std::f64::consts::PI * routers.max(1) as f64)).sqrt()
}

/// [`random_geometric_gml`] loaded as an [`Underlay`] named `rgg-N-SEED`.
pub fn random_geometric(
    routers: usize,
    side_km: f64,
    radius_km: f64,
    capacity_bps: f64,
    seed: u64,
) -> Result<Underlay, UnderlayError> {
    let name = format!("rgg-{routers}-{seed}");
    let gml = random_geometric_gml(routers, side_km, radius_km, capacity_bps, seed);
    let mut u = Underlay::from_gml_str(&gml, &name, &LoadOptions::default())?;
    u.name = name;
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connected_seeded_and_sparse() {
        let u = random_geometric(300, 4000.0, 400.0, 1e9, 7).unwrap();
        assert_eq!(u.node_count(), 300);
        // Loading refuses disconnected graphs, so it is connected; the
        // average degree stays small.
        let deg = 2.0 * u.links.len() as f64 / 300.0;
        assert!((2.0..20.0).contains(&deg), "average degree {deg}");
        assert_eq!(
            random_geometric_gml(50, 1e3, 100.0, 1e9, 1),
            random_geometric_gml(50, 1e3, 100.0, 1e9, 1)
        );
        assert_ne!(
            random_geometric_gml(50, 1e3, 100.0, 1e9, 1),
            random_geometric_gml(50, 1e3, 100.0, 1e9, 2)
        );
    }
}
