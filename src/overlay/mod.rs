//! Overlay builders: one file per family, each turning the network into an
//! [`Overlay`] (or, for MATCHA, a per-round schedule). The graph types live
//! one floor below, in [`crate::graph`] (re-exported here).
//!
//! Builders, one file per family:
//! [`star`] (server-client), [`mst`] (\[Marfoq20\] Prop. 3.1), [`mbst`]
//! (\[Marfoq20\] Algorithm 1), [`ring`] (Christofides, \[Marfoq20\] Prop. 3.3,
//! and `ring-opt`), [`complete`], [`random`], [`dcliques`] (\[Bellet21\]),
//! [`matcha`] (\[Wang19\]), [`families`] (exponential graphs \[Ying21\],
//! Base-(k+1) \[Takezawa23\]). [`build`] builds any of them by name;
//! [`export`] writes GML, DOT and JSON.

pub mod algo;
pub mod build;
pub mod dcliques;
pub mod export;
pub mod families;
pub mod file;
pub mod knobs;
pub mod matcha;
pub mod mbst;
pub mod mst;
pub mod random;
pub mod ring;
pub mod spec;
pub mod star;

use crate::graph::Overlay;
use crate::net::delay::DelayModel;

/// A silo-by-silo matrix of `f(i, j)` (ms) with a zero diagonal, for the
/// matrix algorithms of [`algo`].
///
/// Delays of a [`DelayModel`] are finite when its inputs passed the checks
/// where they entered (capacities at least 1 bit/s, bounded sizes, compute
/// times and route lengths); [`build::build_overlay`] also refuses a model
/// that fails [`DelayModel::check_finite`] before calling the builders. A
/// non-finite value that still gets here is stored as `f64::MAX` (never a
/// panic).
///
/// Rows are computed in parallel.
pub fn silo_matrix(
    model: &DelayModel,
    f: impl Fn(usize, usize) -> f64 + Sync,
) -> algo::DenseMatrix {
    algo::DenseMatrix::from_fn_saturating_par(model.silo_count(), |i, j| {
        if i == j {
            0.0
        } else {
            f(i, j)
        }
    })
}

/// The complete overlay: every silo sends to every other.
pub fn complete(n: usize) -> Overlay {
    Overlay::from_arcs(
        "complete",
        n,
        (0..n).flat_map(|a| (0..n).map(move |b| (a, b))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_delays_are_an_error_not_a_panic() {
        use crate::net::scenario::{load_underlay, NetworkSpec};
        use crate::overlay::build::{build_overlay, BuildError, BuildOptions, OverlayKind};
        let u = load_underlay(Some("aws-gaia"), &Default::default()).unwrap();
        let mut model = NetworkSpec::default().delay_model(&u);
        assert!(model.check_finite().is_ok());
        model.workload.compute_ms = f64::INFINITY;
        let e = model.check_finite().unwrap_err();
        assert_eq!((e.i, e.j), (0, 1));
        for kind in [
            OverlayKind::Mst,
            OverlayKind::DeltaMbst,
            OverlayKind::Ring,
            OverlayKind::RingOpt,
        ] {
            let r = build_overlay(kind, &u, &model, &BuildOptions::default());
            assert!(
                matches!(r, Err(BuildError::NonFiniteDelay { .. })),
                "{kind}"
            );
        }
        // The matrix itself saturates instead of panicking.
        let m = silo_matrix(&model, |i, j| model.arc_delay(i, j, 1, 1));
        assert_eq!(m.get(0, 1), f64::MAX);
    }

    #[test]
    fn complete_has_every_arc() {
        let c = complete(5);
        assert_eq!(c.arc_count(), 20);
        assert_eq!(c.max_degree(), 4);
    }
}
