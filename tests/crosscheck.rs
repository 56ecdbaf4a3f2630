//! Independent methods checked against each other on random networks:
//! Karp vs Howard on every overlay, closed forms for rings, trees and the
//! STAR, and the slope of the max-plus recurrence.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fedtopo::graph::{Overlay, Protocol};
use fedtopo::maxplus::recurrence_slope;
use fedtopo::net::access::AccessLinks;
use fedtopo::net::connectivity::{Connectivity, ConnectivityOptions, PathModel};
use fedtopo::net::delay::DelayModel;
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::net::workload::Workload;
use fedtopo::overlay::build::{build_overlay, BuildOptions, CenterPolicy, OverlayKind};
use fedtopo::timing::{cycle_time, cycle_time_karp, maxplus_graph};

/// A random connected underlay as GML: `n` routers with coordinates, a
/// random spanning tree plus `extra` edges, some with a `distance`.
fn random_underlay(seed: u64, n: usize, extra: usize) -> Underlay {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g = String::from("graph [\n");
    for i in 0..n {
        let lat: f64 = rng.gen_range(-60.0..60.0);
        let lon: f64 = rng.gen_range(-170.0..170.0);
        g += &format!(
            "node [ id {} label \"r{i}\" Latitude {lat} Longitude {lon} ]\n",
            i * 7
        );
    }
    let edge = |a: usize, b: usize, rng: &mut ChaCha8Rng| {
        let cap = [1e9, 2.5e9, 10e9][rng.gen_range(0..3)];
        let dist = if rng.gen_bool(0.3) {
            format!("distance {}", rng.gen_range(10.0..5000.0))
        } else {
            String::new()
        };
        format!(
            "edge [ source {} target {} capacity {cap} {dist} ]\n",
            a * 7,
            b * 7
        )
    };
    for i in 1..n {
        let p = rng.gen_range(0..i);
        g += &edge(p, i, &mut rng);
    }
    for _ in 0..extra {
        let (a, b) = (rng.gen_range(0..n), rng.gen_range(0..n));
        if a != b {
            g += &edge(a, b, &mut rng);
        }
    }
    g += "]\n";
    Underlay::from_gml_str(&g, "random", &LoadOptions::default()).expect("valid random underlay")
}

fn random_model(u: &Underlay, seed: u64) -> DelayModel {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let n = u.node_count();
    let model = if rng.gen_bool(0.5) {
        PathModel::Paper
    } else {
        PathModel::Bottleneck
    };
    let conn = Connectivity::new(
        u,
        &ConnectivityOptions {
            model,
            ..Default::default()
        },
    );
    let mut access = AccessLinks::uniform(n, 10e9);
    for i in 0..n {
        let up = [1e8, 1e9, 10e9, f64::INFINITY][rng.gen_range(0..4)];
        let down = [1e8, 1e9, 10e9][rng.gen_range(0..3)];
        access.set(i, up, down);
    }
    let workload = Workload {
        name: "random".into(),
        model_bits: rng.gen_range(1e5..1e8),
        compute_ms: rng.gen_range(0.0..100.0),
        local_steps: rng.gen_range(1..6),
    };
    let mut m = DelayModel::new(conn, access, workload);
    if rng.gen_bool(0.5) {
        m.compute_ms = Some((0..n).map(|_| rng.gen_range(0.0..200.0)).collect());
    }
    m
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Cycle time of an undirected tree: max over edges of (d(i,j) + d(j,i)) / 2,
/// and at least the largest s*Tc (notes, "Cycle time").
fn tree_formula(o: &Overlay, m: &DelayModel) -> f64 {
    let d = |i, j| m.arc_delay(i, j, o.out_degree(i), o.in_degree(j));
    let edges = o
        .edges()
        .iter()
        .map(|&(i, j)| (d(i, j) + d(j, i)) / 2.0)
        .fold(f64::MIN, f64::max);
    (0..o.silo_count())
        .map(|i| m.compute_round_ms(i))
        .fold(edges, f64::max)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn overlays_agree_across_methods(seed in any::<u64>(), n in 2usize..24, extra in 0usize..30) {
        let u = random_underlay(seed, n, extra);
        let m = random_model(&u, seed);
        let opts = BuildOptions { center: CenterPolicy::Silo((seed % n as u64) as usize), ..Default::default() };
        let mut times = std::collections::HashMap::new();
        for kind in OverlayKind::ALL {
            let o = build_overlay(kind, &u, &m, &opts).unwrap();
            let t = cycle_time(&o, &m).unwrap().cycle_time_ms;
            times.insert(kind, t);
            if o.protocol == Protocol::Gossip {
                let k = cycle_time_karp(&o, &m).unwrap().cycle_time_ms;
                prop_assert!(close(t, k), "{kind}: howard {t} karp {k}");
                let g = maxplus_graph(&o, &m).unwrap();
                let slope = recurrence_slope(&g, &vec![0.0; n], 4000);
                let bound = g.arcs().iter().map(|a| a.weight.abs()).fold(0.0, f64::max) * n as f64 / 4000.0;
                prop_assert!((slope - t).abs() <= bound + 1e-9 * t, "{kind}: slope {slope} tau {t}");
            }
            match kind {
                OverlayKind::Ring | OverlayKind::RingOpt if n > 1 => {
                    let sum: f64 = o.arcs().iter().map(|&(i, j)| m.arc_delay(i, j, 1, 1)).sum();
                    let comp = (0..n).map(|i| m.compute_round_ms(i)).fold(0.0, f64::max);
                    prop_assert!(close(t, (sum / n as f64).max(comp)), "{kind}: {t} vs {}", sum / n as f64);
                }
                OverlayKind::Mst | OverlayKind::DeltaMbst if n > 1 => {
                    prop_assert_eq!(o.edges().len(), n - 1);
                    prop_assert!(close(t, tree_formula(&o, &m)));
                }
                OverlayKind::Star if n > 1 => {
                    let Protocol::ServerClient { center } = o.protocol else { unreachable!() };
                    // The paper's 2 * (tau_tree - s*Tc) + s*Tc with uniform s*Tc.
                    if m.compute_ms.is_none() {
                        let mut tree = o.clone();
                        tree.protocol = Protocol::Gossip;
                        let tau_tree = cycle_time(&tree, &m).unwrap().cycle_time_ms;
                        let stc = m.compute_round_ms(center);
                        prop_assert!(close(t, 2.0 * (tau_tree - stc) + stc), "star {t} tree {tau_tree}");
                    }
                }
                _ => {}
            }
        }
        prop_assert!(times[&OverlayKind::RingOpt] <= times[&OverlayKind::Ring] * (1.0 + 1e-12));
    }
}
