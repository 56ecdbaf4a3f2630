//! Issue 28: the work a comparison shares between its overlays (the
//! Christofides tour of RING and ring-opt) gives, bit for bit, what each
//! overlay built on its own gives, on the paper underlays.

use fedtopo::evaluate::EvaluatedOverlay;
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind, SharedBuild};
use fedtopo::report::compare_overlays;
use fedtopo::scenario::NetworkSpec;
use fedtopo::underlay::{Disconnected, LoadOptions, Underlay};

fn paper(name: &str) -> Underlay {
    let opts = LoadOptions {
        disconnected: Disconnected::LargestComponent,
        ..LoadOptions::default()
    };
    let dir = fedtopo::builtin::paper_underlays_dir();
    Underlay::load(&dir.join(format!("{name}.gml")), &opts).expect("paper underlay")
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
        let shared = BuildOptions {
            shared: Some(std::sync::Arc::new(SharedBuild::new())),
            ..BuildOptions::default()
        };
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
