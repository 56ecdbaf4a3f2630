//! Silo placement: which underlay router each silo is attached to.
//!
//! By default every router hosts exactly one silo, silo `i` on router `i`
//! ([`SiloPlacement::one_per_router`]), which is the paper's setting. A
//! placement can also put several silos on one router (and leave routers
//! without silos). Silos on the same router reach each other over their
//! access links only: their route has no core link, zero latency
//! (`l(i,j) = 0` ms, no per-path constant) and unlimited route bandwidth
//! (`A(i,j) = inf`), so \[Marfoq20\] eq. (3) reduces to the access terms
//! `max(outdeg(i) M/Cup(i), indeg(j) M/Cdn(j))`.
//!
//! Silos are numbered so that the silos of one router are consecutive, in
//! router order, for every constructor except [`SiloPlacement::explicit`].

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use thiserror::Error;

use crate::net::underlay::Underlay;

/// Silo -> router assignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiloPlacement {
    /// Router index of every silo.
    router: Vec<usize>,
    /// Number of routers of the underlay.
    routers: usize,
}

/// Most silos a placement may have. The connectivity graph keeps dense
/// router-by-router tables (route length and bandwidth: 16 bytes per pair;
/// routes are per-source trees computed on demand) and the overlay builders
/// dense silo-by-silo delay matrices (8 bytes per pair, at most two at a
/// time): about 3.2 GB at 10,000 silos on as many routers, growing as N²,
/// so larger placements are refused up front instead of aborting on an
/// allocation.
pub const MAX_SILOS: usize = 10_000;

/// A placement that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlacementError {
    /// No silo at all.
    #[error("a placement needs at least one silo")]
    NoSilos,
    /// The underlay has no router.
    #[error("the underlay has no router to place silos on")]
    NoRouters,
    /// More silos than [`MAX_SILOS`].
    #[error("{silos} silos ({how}) are more than the {max} fedtopo models: the network model and the overlay builders keep dense silo x silo matrices, at least 16 bytes x N^2 ({gb:.1} GB here)", max = MAX_SILOS, gb = 16.0 * (*silos as f64).powi(2) / 1e9)]
    TooManySilos {
        /// Silos asked for.
        silos: usize,
        /// How they came about (`1000 silos per router x 120 routers`).
        how: String,
    },
    /// A silo on a router that does not exist.
    #[error("silo {silo} is placed on router {router}, but the underlay has {routers} routers")]
    RouterOutOfRange {
        /// Silo index.
        silo: usize,
        /// Router index asked for.
        router: usize,
        /// Routers in the underlay.
        routers: usize,
    },
}

impl SiloPlacement {
    /// One silo per router, silo `i` on router `i` (the default).
    pub fn one_per_router(routers: usize) -> Self {
        SiloPlacement {
            router: (0..routers).collect(),
            routers,
        }
    }

    /// `k` silos on every router: silos `r*k .. r*k+k-1` on router `r`.
    pub fn per_router(k: usize, routers: usize) -> Result<Self, PlacementError> {
        if routers == 0 {
            return Err(PlacementError::NoRouters);
        }
        if k == 0 {
            return Err(PlacementError::NoSilos);
        }
        let silos = k.saturating_mul(routers);
        if silos > MAX_SILOS {
            return Err(PlacementError::TooManySilos {
                silos,
                how: format!("{k} silos per router x {routers} routers"),
            });
        }
        Ok(SiloPlacement {
            router: (0..routers)
                .flat_map(|r| std::iter::repeat_n(r, k))
                .collect(),
            routers,
        })
    }

    /// An explicit list: silo `i` on router `router[i]`.
    pub fn explicit(router: Vec<usize>, routers: usize) -> Result<Self, PlacementError> {
        if router.is_empty() {
            return Err(PlacementError::NoSilos);
        }
        if let Some((silo, &r)) = router.iter().enumerate().find(|(_, &r)| r >= routers) {
            return Err(PlacementError::RouterOutOfRange {
                silo,
                router: r,
                routers,
            });
        }
        Ok(SiloPlacement { router, routers })
    }

    /// `silos` silos spread as evenly as possible over `routers` routers,
    /// deterministically from `seed`: every router gets
    /// `floor(silos / routers)` silos and `silos mod routers` routers, drawn
    /// uniformly without replacement (ChaCha8 seeded with `seed`), get one
    /// more. With fewer silos than routers, the silos go to distinct random
    /// routers. Silos are numbered by router.
    pub fn spread(silos: usize, routers: usize, seed: u64) -> Result<Self, PlacementError> {
        if routers == 0 {
            return Err(PlacementError::NoRouters);
        }
        if silos == 0 {
            return Err(PlacementError::NoSilos);
        }
        if silos > MAX_SILOS {
            return Err(PlacementError::TooManySilos {
                silos,
                how: "silos".into(),
            });
        }
        let mut count = vec![silos / routers; routers];
        let mut order: Vec<usize> = (0..routers).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        for &r in &order[..silos % routers] {
            count[r] += 1;
        }
        let router = count
            .iter()
            .enumerate()
            .flat_map(|(r, &c)| std::iter::repeat_n(r, c))
            .collect();
        Ok(SiloPlacement { router, routers })
    }

    /// Number of silos.
    pub fn silo_count(&self) -> usize {
        self.router.len()
    }

    /// Number of routers of the underlay.
    pub fn router_count(&self) -> usize {
        self.routers
    }

    /// Router of silo `i`.
    #[inline]
    pub fn router(&self, i: usize) -> usize {
        self.router[i]
    }

    /// Router of every silo.
    pub fn routers(&self) -> &[usize] {
        &self.router
    }

    /// True for the default placement (silo `i` on router `i`, all routers used).
    pub fn is_one_per_router(&self) -> bool {
        self.router.len() == self.routers && self.router.iter().enumerate().all(|(i, &r)| i == r)
    }

    /// Silos placed on router `r`, in silo order.
    pub fn silos_at(&self, r: usize) -> impl Iterator<Item = usize> + '_ {
        self.router
            .iter()
            .enumerate()
            .filter(move |(_, &x)| x == r)
            .map(|(i, _)| i)
    }

    /// Silo labels: the router's label when it hosts one silo, otherwise
    /// `LABEL#k` for the `k`-th silo (from 0) of the router.
    pub fn labels(&self, underlay: &Underlay) -> Vec<String> {
        let mut per_router = vec![0usize; self.routers];
        for &r in &self.router {
            per_router[r] += 1;
        }
        let mut seen = vec![0usize; self.routers];
        self.router
            .iter()
            .map(|&r| {
                let label = underlay
                    .routers
                    .get(r)
                    .map_or_else(|| r.to_string(), |x| x.label.clone());
                let k = seen[r];
                seen[r] += 1;
                if per_router[r] == 1 {
                    label
                } else {
                    format!("{label}#{k}")
                }
            })
            .collect()
    }
}

/// The label of silo (or router) `i` in `labels`, or its index when the
/// list has none for it (what every report writes).
pub fn silo_label(labels: &[String], i: usize) -> String {
    labels.get(i).cloned().unwrap_or_else(|| i.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_beyond_max_silos_are_refused_before_allocating() {
        assert!(SiloPlacement::per_router(100, 100).is_ok());
        let e = SiloPlacement::per_router(usize::MAX, 3).unwrap_err();
        assert!(matches!(e, PlacementError::TooManySilos { .. }), "{e}");
        let e = SiloPlacement::spread(MAX_SILOS + 1, 5, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("10001 silos (silos)") && e.contains("GB"), "{e}");
    }

    #[test]
    fn constructors() {
        let p = SiloPlacement::one_per_router(3);
        assert!(p.is_one_per_router());
        assert_eq!(p.routers(), &[0, 1, 2]);
        let p = SiloPlacement::per_router(2, 3).unwrap();
        assert_eq!(p.routers(), &[0, 0, 1, 1, 2, 2]);
        assert!(!p.is_one_per_router());
        assert_eq!(p.silos_at(1).collect::<Vec<_>>(), vec![2, 3]);
        assert_eq!(
            SiloPlacement::per_router(0, 3),
            Err(PlacementError::NoSilos)
        );
        assert_eq!(
            SiloPlacement::explicit(vec![0, 5], 3),
            Err(PlacementError::RouterOutOfRange {
                silo: 1,
                router: 5,
                routers: 3
            })
        );
        assert!(SiloPlacement::explicit(vec![2, 2, 0], 3).is_ok());
        assert_eq!(
            SiloPlacement::spread(4, 0, 1),
            Err(PlacementError::NoRouters)
        );
    }

    #[test]
    fn spread_is_balanced_and_seeded() {
        for (silos, routers) in [(10, 3), (3, 10), (1000, 300), (7, 7)] {
            let p = SiloPlacement::spread(silos, routers, 42).unwrap();
            assert_eq!(p.silo_count(), silos);
            let mut count = vec![0usize; routers];
            for &r in p.routers() {
                count[r] += 1;
            }
            let (lo, hi) = (silos / routers, silos.div_ceil(routers));
            assert!(count.iter().all(|&c| c == lo || c == hi), "{count:?}");
            // Silos are numbered by router.
            assert!(p.routers().windows(2).all(|w| w[0] <= w[1]));
            assert_eq!(p, SiloPlacement::spread(silos, routers, 42).unwrap());
        }
        assert_ne!(
            SiloPlacement::spread(10, 30, 1).unwrap(),
            SiloPlacement::spread(10, 30, 2).unwrap()
        );
        // Exactly one per router: the default placement, whatever the seed.
        assert!(SiloPlacement::spread(7, 7, 9).unwrap().is_one_per_router());
    }
}
