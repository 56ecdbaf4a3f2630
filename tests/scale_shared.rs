//! Issue 28: the work a comparison shares between its overlays (the
//! Christofides tour of RING and ring-opt) gives, bit for bit, what each
//! overlay built on its own gives, on the paper underlays.

use fedtopo::evaluate::compare::compare_overlays;
use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::net::scenario::NetworkSpec;
use fedtopo::net::underlay::{Disconnected, LoadOptions, Underlay};
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind, SharedBuild};

fn paper(name: &str) -> Underlay {
    let opts = LoadOptions {
        disconnected: Disconnected::LargestComponent,
        ..LoadOptions::default()
    };
    let dir = fedtopo::net::builtin::paper_underlays_dir();
    Underlay::load(&dir.join(format!("{name}.gml")), &opts).expect("paper underlay")
}

/// Default build options with a fresh [`SharedBuild`].
fn sharing() -> BuildOptions {
    BuildOptions {
        shared: Some(std::sync::Arc::new(SharedBuild::new())),
        ..BuildOptions::default()
    }
}

const KINDS: [OverlayKind; 4] = [
    OverlayKind::Star,
    OverlayKind::Mst,
    OverlayKind::Ring,
    OverlayKind::RingOpt,
];

#[test]
fn shared_ring_tour_equals_separate_builds() {
    for name in ["gaia", "geantdistance", "ebone", "tiscali"] {
        let u = paper(name);
        let model = NetworkSpec::default().delay_model(&u);
        let alone = BuildOptions::default();
        let shared = sharing();
        for kind in [OverlayKind::Ring, OverlayKind::RingOpt, OverlayKind::Ring] {
            assert_eq!(
                build_overlay(kind, &u, &model, &alone).unwrap(),
                build_overlay(kind, &u, &model, &shared).unwrap(),
                "{name} {kind}"
            );
        }
    }
}

#[test]
fn comparison_equals_overlays_timed_one_by_one() {
    for name in ["gaia", "geantdistance", "ebone"] {
        let u = paper(name);
        let model = NetworkSpec::default().delay_model(&u);
        let options = BuildOptions::default();
        let cmp = compare_overlays(&u, &model, &KINDS, &options).unwrap();
        for (row, &kind) in cmp.rows.iter().zip(&KINDS) {
            let o = EvaluatedOverlay::build(kind, &u, &model, &options).unwrap();
            let t = o.cycle_time(&model).unwrap();
            assert_eq!(
                row.cycle_time_ms.to_bits(),
                t.cycle_time_ms.to_bits(),
                "{name} {kind}"
            );
            assert_eq!(row.arcs, o.degree_stats().arcs, "{name} {kind}");
        }
    }
}

/// MST on the tiled symmetric weights and MST from weights read row by
/// row equal MST on the plain weight matrix; the
/// RING tour from one in-place symmetrised matrix equals the tour of the
/// old path (a symmetrised copy, orientation read off the matrix).
#[test]
fn matrix_free_mst_and_ring_equal_the_matrix_paths() {
    use fedtopo::overlay::algo::{christofides_tour, directed_ring_cost};
    use fedtopo::overlay::{mst, ring};
    for name in ["gaia", "geantdistance", "ebone", "exodus", "tiscali"] {
        let u = paper(name);
        let model = NetworkSpec::default().delay_model(&u);
        let plain = mst::mst_from_matrix(&model);
        assert_eq!(mst::mst(&model), plain, "{name}");
        assert_eq!(mst::mst_by_rows(&model), plain, "{name}");
        let d = ring::ring_delays(&model);
        let mut old = christofides_tour(&d);
        let mut rev = old.clone();
        rev.reverse();
        if directed_ring_cost(&d, &rev) < directed_ring_cost(&d, &old) {
            old = rev;
        }
        assert_eq!(ring::christofides_ring_tour(&model), old, "{name}");
    }
}

/// The families `fedtopo design` places on the ring-opt tour get, from a
/// build that shares the tour, the overlays and schedules they get alone.
#[test]
fn families_on_a_shared_ring_opt_tour_equal_separate_builds() {
    let kinds = [
        "ring-opt",
        "exp",
        "exp-1peer",
        "base:k=2",
        "d-equistatic",
        "od-equidyn",
        "multigraph:base=ring-opt",
        "exp:order=search",
    ];
    for name in ["gaia", "geantdistance"] {
        let u = paper(name);
        let model = NetworkSpec::default().delay_model(&u);
        let alone = BuildOptions::default();
        let shared = sharing();
        for kind in kinds {
            let kind: OverlayKind = kind.parse().unwrap();
            let a = EvaluatedOverlay::build(kind, &u, &model, &alone).unwrap();
            let s = EvaluatedOverlay::build(kind, &u, &model, &shared).unwrap();
            assert_eq!(format!("{a:?}"), format!("{s:?}"), "{name} {kind}");
        }
    }
}
