//! Placement search (`order=search`): which silo hosts which abstract node
//! of a family.
//!
//! The families are defined on abstract nodes `0..n` (node `p` talks to
//! `p + 1`, `p + 2`, `p + 4`, ...); on a real network the relabelling
//! decides which silo pairs exchange models, hence the cycle time.
//! [`FamilyOrder::RingOpt`](super::FamilyOrder::RingOpt) uses the `ring-opt`
//! tour, which makes the `p -> p + 1` hops good but ignores the longer
//! ones. [`search_order`] starts from that tour and keeps a relabelling
//! only when it lowers the family's *exact* cycle time on the network: the
//! max-plus cycle time (\[Marfoq20\] eq. 3) of a static family, the exact
//! period rate of a schedule ([`crate::timing::schedule::periodic_rate`]).
//! It is a first-improvement local search over two moves (swap the silos
//! of two nodes; reverse the nodes of a segment), drawn from a seeded
//! generator, with a bounded number of evaluations: deterministic for a
//! seed, never worse than its start, not a proof of optimality.

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{abstract_matrices, placed_shape, FamilySpec, Shape};
use crate::net::delay::DelayModel;
use crate::timing::{cycle_time, schedule::periodic_rate, TimingError};

/// Budget of the placement search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacementOptions {
    /// Exact cycle-time evaluations per silo (the budget is this x silos,
    /// at most [`PlacementOptions::max_evaluations`]).
    pub evaluations_per_silo: usize,
    /// Largest number of evaluations, whatever the number of silos.
    pub max_evaluations: usize,
}

impl Default for PlacementOptions {
    fn default() -> Self {
        PlacementOptions {
            evaluations_per_silo: 20,
            max_evaluations: 2000,
        }
    }
}

/// The outcome of [`search_order`].
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// `order[p]`: the silo of abstract node `p`.
    pub order: Vec<usize>,
    /// Exact cycle time of the family on `order`, ms per round.
    pub cycle_time_ms: f64,
    /// Exact cycle time on the start order (the `ring-opt` tour), ms.
    pub start_cycle_time_ms: f64,
    /// Cycle times evaluated.
    pub evaluations: usize,
    /// Moves kept.
    pub improvements: usize,
}

/// The exact cycle time (ms per round) of `spec` with node `p` on silo
/// `order[p]`: [`cycle_time`] of a static family, the exact period rate
/// of a schedule.
///
/// # Errors
/// The timing fails (a size mismatch; a cycle-time computation error).
pub fn exact_cycle_ms(
    spec: FamilySpec,
    order: &[usize],
    seed: u64,
    model: &DelayModel,
) -> Result<f64, TimingError> {
    let matrices = abstract_matrices(spec.family, order.len(), seed);
    shape_cycle_ms(placed_shape(spec, &matrices, order), model)
}

/// The exact cycle time of a placed family, ms per round.
fn shape_cycle_ms(shape: Shape, model: &DelayModel) -> Result<f64, TimingError> {
    match shape {
        Shape::Static(overlay) => Ok(cycle_time(&overlay, model)?.cycle_time_ms),
        Shape::Periodic(schedule) => periodic_rate(&schedule, model, schedule.period() as u64),
    }
}

/// Searches node orders of `spec` from `start` (a permutation of the
/// silos) for a lower exact cycle time ([`exact_cycle_ms`]); `seed` draws
/// the moves (and EquiTopo's shifts, as [`super::place`]). Keeps a move only when
/// it lowers the cycle time by more than `1e-9` relative, so the result is
/// never worse than `start`.
///
/// # Errors
/// As [`exact_cycle_ms`].
pub fn search_order(
    spec: FamilySpec,
    model: &DelayModel,
    start: Vec<usize>,
    seed: u64,
    options: &PlacementOptions,
) -> Result<Placement, TimingError> {
    let n = start.len();
    let mut order = start;
    // The abstract matrices do not depend on the order: drawn once.
    let matrices = abstract_matrices(spec.family, n, seed);
    let time = |order: &[usize]| shape_cycle_ms(placed_shape(spec, &matrices, order), model);
    let start_ms = time(&order)?;
    let mut best = start_ms;
    let budget = (options.evaluations_per_silo.saturating_mul(n)).min(options.max_evaluations);
    let mut evaluations = 1;
    let mut improvements = 0;
    if n >= 3 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x706c_6163_656d_656e);
        let task = crate::progress::Task::start("placement search", "evaluations", budget as u64);
        while evaluations < budget {
            let a = rng.gen_range(0..n);
            let mut b = rng.gen_range(0..n - 1);
            if b >= a {
                b += 1;
            }
            let reverse = rng.gen_bool(0.5);
            let (lo, hi) = (a.min(b), a.max(b));
            if reverse {
                order[lo..=hi].reverse();
            } else {
                order.swap(a, b);
            }
            let t = time(&order)?;
            evaluations += 1;
            task.inc(1);
            if t < best * (1.0 - 1e-9) {
                best = t;
                improvements += 1;
            } else if reverse {
                order[lo..=hi].reverse();
            } else {
                order.swap(a, b);
            }
        }
    }
    Ok(Placement {
        order,
        cycle_time_ms: best,
        start_cycle_time_ms: start_ms,
        evaluations,
        improvements,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::EvaluatedOverlay;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::{LoadOptions, Underlay};
    use crate::overlay::algo::RingSearch;
    use crate::overlay::build::{BuildOptions, OverlayKind};
    use crate::overlay::ring::ring_opt_tour;

    fn network(name: &str) -> (Underlay, DelayModel) {
        let u =
            load_underlay(Some(name), &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let m = NetworkSpec::default()
            .build(&u)
            .unwrap_or_else(|e| panic!("{e}"));
        (u, m)
    }

    fn spec(s: &str) -> FamilySpec {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e:?}"))
    }

    /// Never slower than its start, deterministic for a seed, and a
    /// permutation of the silos.
    #[test]
    fn search_is_never_worse_and_deterministic() {
        let (_, m) = network("aws-north-america");
        let tour = ring_opt_tour(&m, &RingSearch::default());
        for s in [
            "exp",
            "exp-1peer",
            "base:k=1",
            "base:k=2,order=search",
            "d-equistatic",
            "od-equidyn",
        ] {
            let f = spec(s);
            let a = search_order(f, &m, tour.clone(), 3, &PlacementOptions::default())
                .unwrap_or_else(|e| panic!("{s}: {e}"));
            let b = search_order(f, &m, tour.clone(), 3, &PlacementOptions::default())
                .unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(a, b, "{s}: not deterministic");
            assert!(a.cycle_time_ms <= a.start_cycle_time_ms, "{s}: {a:?}");
            let start = exact_cycle_ms(f, &tour, 3, &m).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(a.start_cycle_time_ms, start, "{s}");
            let mut sorted = a.order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..m.silo_count()).collect::<Vec<_>>(), "{s}");
            assert!(a.evaluations <= PlacementOptions::default().max_evaluations);
        }
    }

    /// `order=search` through the overlay builder times (as `compare`
    /// prints it) what the search found, and the default order times what
    /// the search started from: the exact figures are the pipeline's.
    #[test]
    fn searched_order_is_what_the_pipeline_times() {
        let (u, m) = network("aws-gaia");
        let options = BuildOptions::default();
        for s in ["exp", "exp-1peer", "base:k=1"] {
            let timed = |name: &str| {
                let kind: OverlayKind = name.parse().unwrap_or_else(|e| panic!("{name}: {e:?}"));
                let e = EvaluatedOverlay::build(kind, &u, &m, &options)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                e.cycle_time(&m)
                    .unwrap_or_else(|e| panic!("{e}"))
                    .cycle_time_ms
            };
            let default = timed(s);
            let searched = timed(&format!(
                "{s}{}order=search",
                if s.contains(':') { "," } else { ":" }
            ));
            let tour = ring_opt_tour(&m, &options.ring_search);
            let p = search_order(
                spec(s),
                &m,
                tour,
                options.seed,
                &PlacementOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{e}"));
            assert!(
                (default - p.start_cycle_time_ms).abs() <= 1e-9 * default,
                "{s}"
            );
            assert!((searched - p.cycle_time_ms).abs() <= 1e-9 * searched, "{s}");
            assert!(searched <= default, "{s}: {searched} > {default}");
        }
    }

    /// A zero budget evaluates the start only and keeps it.
    #[test]
    fn a_zero_budget_keeps_the_start() {
        let (_, m) = network("aws-gaia");
        let order: Vec<usize> = (0..m.silo_count()).collect();
        let none = PlacementOptions {
            evaluations_per_silo: 0,
            max_evaluations: 0,
        };
        let p = search_order(spec("exp"), &m, order.clone(), 0, &none)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((p.evaluations, p.improvements), (1, 0));
        assert_eq!(p.order, order);
        assert_eq!(p.cycle_time_ms, p.start_cycle_time_ms);
    }
}
