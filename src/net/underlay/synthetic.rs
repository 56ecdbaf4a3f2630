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
    let mut grid = Grid::new(&pos, side_km, radius_km);
    let mut near = Vec::new();
    for b in 0..routers {
        if b > 0 {
            let nearest = grid.nearest(&pos, b);
            grid.within(&pos, b, radius_km, &mut near);
            for &a in &near {
                edge(&mut s, a, b);
            }
            if !near.contains(&nearest) {
                edge(&mut s, nearest, b);
            }
        }
        grid.insert(&pos, b);
    }
    s.push_str("]\n");
    s
}

/// Routers bucketed by square cells of side at least the link radius, so
/// that the links and the nearest lower-numbered router of each are found
/// among nearby cells: O(routers) for a sparse graph instead of O(routers^2).
/// Holds only the routers inserted so far (the lower-numbered ones).
struct Grid {
    cell_km: f64,
    side: usize,
    cells: Vec<Vec<usize>>,
}

impl Grid {
    fn new(pos: &[(f64, f64)], side_km: f64, radius_km: f64) -> Grid {
        let n = pos.len().max(1);
        // About one router per cell, and never smaller than the radius.
        let mut cell_km = (side_km / (n as f64).sqrt()).max(radius_km);
        if !(cell_km.is_finite() && cell_km > 0.0) {
            cell_km = 1.0;
        }
        let side = ((side_km.max(0.0) / cell_km).ceil() as usize).clamp(1, 1 << 12);
        Grid {
            cell_km,
            side,
            cells: vec![Vec::new(); side * side],
        }
    }

    fn cell_of(&self, p: (f64, f64)) -> (usize, usize) {
        let c = |x: f64| ((x / self.cell_km).floor().max(0.0) as usize).min(self.side - 1);
        (c(p.0), c(p.1))
    }

    fn insert(&mut self, pos: &[(f64, f64)], i: usize) {
        let (x, y) = self.cell_of(pos[i]);
        self.cells[y * self.side + x].push(i);
    }

    /// Routers in the cells at Chebyshev distance exactly `k` from `(x, y)`.
    fn ring(&self, (x, y): (usize, usize), k: usize, out: &mut Vec<usize>) {
        let (x, y, k, side) = (x as i64, y as i64, k as i64, self.side as i64);
        for cy in (y - k)..=(y + k) {
            for cx in (x - k)..=(x + k) {
                let on_ring = (cx - x).abs() == k || (cy - y).abs() == k;
                if on_ring && (0..side).contains(&cx) && (0..side).contains(&cy) {
                    out.extend_from_slice(&self.cells[(cy * side + cx) as usize]);
                }
            }
        }
    }

    /// The inserted routers closer to `b` than `radius_km`, increasing.
    fn within(&self, pos: &[(f64, f64)], b: usize, radius_km: f64, out: &mut Vec<usize>) {
        out.clear();
        let c = self.cell_of(pos[b]);
        self.ring(c, 0, out);
        self.ring(c, 1, out);
        let d = |a: usize| (pos[a].0 - pos[b].0).hypot(pos[a].1 - pos[b].1);
        out.retain(|&a| d(a) < radius_km);
        out.sort_unstable();
    }

    /// The inserted router nearest to `b` (lowest index among ties); at
    /// least one router must be inserted.
    fn nearest(&self, pos: &[(f64, f64)], b: usize) -> usize {
        let c = self.cell_of(pos[b]);
        let d = |a: usize| (pos[a].0 - pos[b].0).hypot(pos[a].1 - pos[b].1);
        let mut best: Option<(f64, usize)> = None;
        let mut found = Vec::new();
        for k in 0..=self.side {
            found.clear();
            self.ring(c, k, &mut found);
            for &a in &found {
                let better = match best {
                    None => true,
                    Some((bd, bi)) => d(a).total_cmp(&bd).then(a.cmp(&bi)).is_lt(),
                };
                if better {
                    best = Some((d(a), a));
                }
            }
            // Routers beyond ring k are at least k cells away.
            if let Some((bd, _)) = best {
                if bd < k as f64 * self.cell_km {
                    break;
                }
            }
        }
        best.map_or(0, |(_, a)| a)
    }
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

    /// The straightforward O(n^2) construction the grid replaces.
    fn reference_gml(routers: usize, side_km: f64, radius_km: f64, seed: u64) -> String {
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
                "  edge [ source {a} target {b} distance {:.3} capacity 1000000000 ]",
                d(a, b)
            );
        };
        for b in 1..routers {
            let nearest = (0..b).min_by(|&x, &y| d(x, b).total_cmp(&d(y, b))).unwrap();
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

    #[test]
    fn grid_construction_equals_the_quadratic_one() {
        for (n, side, r, seed) in [
            (1, 10.0, 1.0, 1),
            (2, 10.0, 0.0, 2),
            (300, 4000.0, 400.0, 1),
            (500, 1000.0, 20.0, 5),
            (400, 1000.0, 0.0, 6),
            (200, 100.0, 1e4, 7),
        ] {
            assert_eq!(
                random_geometric_gml(n, side, r, 1e9, seed),
                reference_gml(n, side, r, seed),
                "n={n} side={side} r={r}"
            );
        }
    }

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
