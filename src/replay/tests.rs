//! Replay vs the max-plus recurrence, STAR vs its formula, the paper model
//! and the flow model against hand computations.

use super::*;
use crate::graph::{Overlay, Protocol};
use crate::maxplus::{recurrence_slope, Recurrence};
use crate::net::access::AccessLinks;
use crate::net::connectivity::{Connectivity, ConnectivityOptions};
use crate::net::scenario::{load_underlay, NetworkSpec};
use crate::net::underlay::{LoadOptions, Underlay};
use crate::net::workload::Workload;
use crate::network::{FlowNetwork, MaxPlusNetwork, NetworkKind, PaperNetwork};
use crate::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use crate::timing::{cycle_time, maxplus_graph};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn builtin(access_bps: f64) -> (Underlay, DelayModel) {
    let u = load_underlay(None, &LoadOptions::default()).unwrap();
    let spec = NetworkSpec {
        access_bps,
        ..NetworkSpec::default()
    };
    let m = spec.delay_model(&u);
    (u, m)
}

fn opts(rounds: u64) -> ReplayOptions {
    ReplayOptions {
        rounds,
        ..ReplayOptions::default()
    }
}

/// Replay with the maxplus network equals the recurrence, round by round.
fn check_against_recurrence(overlay: &Overlay, model: &DelayModel, rounds: u64) {
    let mut net = MaxPlusNetwork::new(model);
    let r = replay(overlay, model, &mut net, &opts(rounds)).unwrap();
    let g = maxplus_graph(overlay, model).unwrap();
    let mut rec = Recurrence::new(&g, vec![0.0; overlay.silo_count()]).unwrap();
    assert!(r.starts[0].iter().all(|&t| t == 0.0));
    for k in 1..=rounds as usize {
        let want = rec.next();
        for (i, (&got, &w)) in r.starts[k].iter().zip(want).enumerate() {
            assert!(
                (got - w).abs() <= 1e-9 * w.abs().max(1.0),
                "{}: t_{i}({k}) = {got}, recurrence {w}",
                overlay.name
            );
        }
    }
}

#[test]
fn maxplus_replay_equals_recurrence_on_builtin_overlays() {
    for access in [1e10, 1e8] {
        let (u, m) = builtin(access);
        for kind in [
            OverlayKind::Mst,
            OverlayKind::DeltaMbst,
            OverlayKind::Ring,
            OverlayKind::Complete,
        ] {
            let o = build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap();
            check_against_recurrence(&o, &m, 60);
        }
    }
}

#[test]
fn maxplus_slope_converges_to_cycle_time() {
    let (u, m) = builtin(1e9);
    for kind in [OverlayKind::Mst, OverlayKind::Ring, OverlayKind::Complete] {
        let o = build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap();
        let tau = cycle_time(&o, &m).unwrap().cycle_time_ms;
        let g = maxplus_graph(&o, &m).unwrap();
        let k = 400;
        let r = replay(&o, &m, &mut MaxPlusNetwork::new(&m), &opts(k)).unwrap();
        let slope = r.mean_round_ms();
        let rec = recurrence_slope(&g, &vec![0.0; o.silo_count()], k as usize);
        assert!(
            (slope - rec).abs() <= 1e-9 * rec,
            "{slope} vs recurrence {rec}"
        );
        // Bound of maxplus::recurrence: tau <= slope <= tau + (n-1)(wmax-wmin)/K.
        let w: Vec<f64> = g.arcs().iter().map(|a| a.weight).collect();
        let spread =
            w.iter().cloned().fold(f64::MIN, f64::max) - w.iter().cloned().fold(f64::MAX, f64::min);
        let bound = (o.silo_count() - 1) as f64 * spread / k as f64;
        assert!(
            slope >= tau * (1.0 - 1e-12),
            "{}: {slope} < tau {tau}",
            o.name
        );
        assert!(
            slope <= tau + bound + 1e-9,
            "{}: {slope} > tau {tau} + {bound}",
            o.name
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Random strongly connected overlays (a random ring plus random arcs),
    /// random per-silo compute times: replay == recurrence.
    #[test]
    fn maxplus_replay_equals_recurrence_random(seed in 0u64..1000, extra in 0usize..30, access in prop::sample::select(vec![1e8, 1e9, 1e10])) {
        let (_, mut m) = builtin(access);
        let n = m.silo_count();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        m.compute_ms = Some((0..n).map(|_| rng.gen_range(0.0..200.0)).collect());
        let mut order: Vec<usize> = (0..n).collect();
        use rand::seq::SliceRandom;
        order.shuffle(&mut rng);
        let mut arcs: Vec<(usize, usize)> = (0..n).map(|i| (order[i], order[(i + 1) % n])).collect();
        arcs.extend((0..extra).map(|_| (rng.gen_range(0..n), rng.gen_range(0..n))));
        let o = Overlay::from_arcs("random", n, arcs);
        check_against_recurrence(&o, &m, 30);
    }
}

#[test]
fn star_two_phase_matches_formula() {
    for access in [1e10, 1e9, 1e8] {
        let (u, m) = builtin(access);
        let o = build_overlay(OverlayKind::Star, &u, &m, &BuildOptions::default()).unwrap();
        let tau = cycle_time(&o, &m).unwrap().cycle_time_ms;
        let r = replay(&o, &m, &mut MaxPlusNetwork::new(&m), &opts(20)).unwrap();
        let Protocol::ServerClient { center } = o.protocol else {
            panic!("star is server-client")
        };
        for k in 2..=20 {
            let d = r.starts[k][center] - r.starts[k - 1][center];
            assert!((d - tau).abs() <= 1e-9 * tau, "round {k}: {d} vs {tau}");
        }
        // Round 0 starts with computation instead of a broadcast.
        assert!(r.starts[1][center] < tau);
    }
}

/// A line a - b - c (100 km, 200 km), core 1 Gbit/s, 3 silos.
fn line() -> Underlay {
    let g = "graph [ node [ id 1 label \"a\" ] node [ id 2 label \"b\" ] node [ id 3 label \"c\" ]
        edge [ source 1 target 2 distance 100 capacity 1e9 ]
        edge [ source 2 target 3 distance 200 capacity 1e9 ] ]";
    Underlay::from_gml_str(g, "line.gml", &LoadOptions::default()).unwrap()
}

fn line_model(up: f64, down: f64, bits: f64, compute_ms: f64) -> DelayModel {
    let u = line();
    let conn = Connectivity::new(&u, &ConnectivityOptions::default());
    let mut access = AccessLinks::uniform(3, up);
    for i in 0..3 {
        access.set(i, up, down);
    }
    let w = Workload {
        name: "t".into(),
        model_bits: bits,
        compute_ms,
        local_steps: 1,
    };
    DelayModel::new(conn, access, w)
}

#[test]
fn paper_model_serialises_downloads() {
    // Silos 0 and 2 both send to 1 (and 1 to both): in-degree 2 at silo 1.
    let m = line_model(1e9, 1e8, 1e7, 10.0);
    let o = Overlay::from_edges("v", 3, &[(0, 1), (1, 2)]);
    let mut net = PaperNetwork::new(&m);
    let r = replay(&o, &m, &mut net, &opts(1)).unwrap();
    let l01 = m.connectivity.latency_ms(0, 1); // 4.85 ms
    let l21 = m.connectivity.latency_ms(2, 1); // 5.7 ms
                                               // Line 5: rate min(1e9/1, 1e8/2, 1e9) = 5e7 -> 200 ms.
    let a0 = 10.0 + l01 + 200.0;
    let a2 = 10.0 + l21 + 200.0;
    // Serialised downloads, 1e7/1e8 = 100 ms each, in arrival order.
    let f0 = a0 + 100.0;
    let f2 = f0.max(a2) + 100.0;
    assert!(
        (r.starts[1][1] - f2).abs() < 1e-9,
        "{} vs {f2}",
        r.starts[1][1]
    );
    // Silo 0 receives from 1 only: rate min(1e9/2, 1e8/1, 1e9) = 1e8 -> 100 ms.
    let want0 = 10.0 + l01 + 100.0 + 100.0;
    assert!((r.starts[1][0] - want0).abs() < 1e-9);
}

#[test]
fn progressive_filling_classic_example() {
    // Bertsekas & Gallager: link r0 (cap 1) shared by flows 0,1,2;
    // link r1 (cap 1) shared by flows 2,3; link r2 (cap 2) by flow 3.
    // Max-min: flows 0,1,2 get 1/3, flow 3 gets 2/3.
    let on: Vec<Vec<u32>> = vec![vec![0, 1, 2], vec![2, 3], vec![3]];
    let uses: Vec<Vec<u32>> = vec![vec![0], vec![0], vec![0, 1], vec![1, 2]];
    let cap = [1.0, 1.0, 2.0];
    let rates = crate::network::flow::progressive_filling(
        &[0, 1, 2],
        &[0, 1, 2, 3],
        |r| cap[r as usize],
        |r| &on[r as usize],
        |f| &uses[f as usize],
    );
    let want = [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0];
    for (g, w) in rates.iter().zip(want) {
        assert!((g - w).abs() < 1e-12, "{rates:?}");
    }
    // Three flows on one link of capacity 3, one of them also on a link of 0.5.
    let on: Vec<Vec<u32>> = vec![vec![0, 1, 2], vec![2]];
    let uses: Vec<Vec<u32>> = vec![vec![0], vec![0], vec![0, 1]];
    let cap = [3.0, 0.5];
    let rates = crate::network::flow::progressive_filling(
        &[0, 1],
        &[0, 1, 2],
        |r| cap[r as usize],
        |r| &on[r as usize],
        |f| &uses[f as usize],
    );
    assert_eq!(rates, vec![1.25, 1.25, 0.5]);
}

#[test]
fn flow_model_hand_computed_completion_times() {
    // Silo 0 sends to 1 and 2 (uplink 1e8 shared), 2 sends to 1 (downlink of
    // 1 shared with 0 -> 1). Core 1 Gbit/s never binds. M = 1e7 bit.
    // t=0: flows A = 0->1, B = 0->2, C = 2->1, compute 0 ms.
    // Uplink 0 (1e8): A, B. Downlink 1 (1e8): A, C. Others: 1e9.
    // Max-min: all get 5e7 -> every flow done at 1e7/5e7 = 200 ms.
    let m = line_model(1e8, 1e8, 1e7, 0.0);
    let o = Overlay::from_arcs("t", 3, [(0, 1), (0, 2), (2, 1), (1, 0)]);
    let mut net = FlowNetwork::new(&m);
    let r = replay(&o, &m, &mut net, &opts(1)).unwrap();
    // 1 -> 0 alone on its path: 1e7 / 1e8 = 100 ms.
    let l = |i, j| m.connectivity.latency_ms(i, j);
    assert!(
        (r.starts[1][0] - (100.0 + l(1, 0))).abs() < 1e-9,
        "{:?}",
        r.starts[1]
    );
    let t1 = (200.0 + l(0, 1)).max(200.0 + l(2, 1));
    assert!((r.starts[1][1] - t1).abs() < 1e-9, "{:?}", r.starts[1]);
    assert!((r.starts[1][2] - (200.0 + l(0, 2))).abs() < 1e-9);

    // Unequal sizes through rate changes: uplink 0 shared by A and B, but
    // B's downlink (silo 2) is 2e7: B gets 2e7, A gets 8e7 until... A needs
    // 1e7 bit at 8e7 -> 125 ms; then B alone, still capped at 2e7 -> 500 ms.
    let mut m = line_model(1e8, 1e9, 1e7, 0.0);
    m.access.set(2, 1e8, 2e7);
    let o = Overlay::from_arcs("t", 3, [(0, 1), (0, 2), (1, 0), (2, 0)]);
    let r = replay(&o, &m, &mut FlowNetwork::new(&m), &opts(1)).unwrap();
    assert!(
        (r.starts[1][1] - (125.0 + l(0, 1))).abs() < 1e-9,
        "{:?}",
        r.starts[1]
    );
    assert!(
        (r.starts[1][2] - (500.0 + l(0, 2))).abs() < 1e-9,
        "{:?}",
        r.starts[1]
    );
}

#[test]
fn flow_equals_maxplus_without_contention() {
    // A directed ring on the line with huge access: each flow is alone on
    // its resources... except core links; with capacity/hops = A(i,j) on a
    // ring of 3 the paths overlap, so check a 2-silo exchange instead.
    let m = line_model(1e9, 1e9, 1e7, 5.0);
    let o = Overlay::from_arcs("pair", 3, [(0, 1), (1, 2), (2, 0)]);
    let f = replay(&o, &m, &mut FlowNetwork::new(&m), &opts(5)).unwrap();
    let p = replay(&o, &m, &mut MaxPlusNetwork::new(&m), &opts(5)).unwrap();
    // Flow: 2 -> 0 crosses both core links (2 hops) at full 1e9 (no sharing
    // in that direction), max-plus uses A = 1e9/2: flow is never slower.
    for k in 1..=5 {
        for i in 0..3 {
            assert!(f.starts[k][i] <= p.starts[k][i] + 1e-9);
        }
    }
}

#[test]
fn stragglers_are_seeded() {
    let (u, m) = builtin(1e9);
    let o = build_overlay(OverlayKind::Ring, &u, &m, &BuildOptions::default()).unwrap();
    let opt = |seed| ReplayOptions {
        rounds: 10,
        straggler: Straggler::LogNormal { sigma: 0.5 },
        seed,
        ..ReplayOptions::default()
    };
    let a = replay(&o, &m, &mut MaxPlusNetwork::new(&m), &opt(1)).unwrap();
    let b = replay(&o, &m, &mut MaxPlusNetwork::new(&m), &opt(1)).unwrap();
    let c = replay(&o, &m, &mut MaxPlusNetwork::new(&m), &opt(2)).unwrap();
    assert_eq!(a.starts, b.starts);
    assert_ne!(a.starts, c.starts);
    let bad = ReplayOptions {
        straggler: Straggler::LogNormal { sigma: -1.0 },
        ..opt(1)
    };
    assert_eq!(
        replay(&o, &m, &mut MaxPlusNetwork::new(&m), &bad).unwrap_err(),
        ReplayError::BadSigma(-1.0)
    );
}

#[test]
fn size_mismatch_is_an_error() {
    let m = line_model(1e9, 1e9, 1e7, 5.0);
    let small = Overlay::from_arcs("x", 2, [(0, 1)]);
    assert!(matches!(
        replay(&small, &m, &mut MaxPlusNetwork::new(&m), &opts(3)),
        Err(ReplayError::SizeMismatch { .. })
    ));
}

#[test]
fn all_models_run_every_overlay_kind() {
    let (u, m) = builtin(1e9);
    for kind in OverlayKind::ALL {
        let o = build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap();
        for net in [NetworkKind::Maxplus, NetworkKind::Paper, NetworkKind::Flow] {
            let mut model = net.build(&m);
            let r = replay(&o, &m, model.as_mut(), &opts(5)).unwrap();
            assert!(r.starts.iter().flatten().all(|t| t.is_finite()));
            let d = r.round_durations();
            assert!(d.iter().all(|&x| x > 0.0), "{kind} {net}: {d:?}");
        }
    }
}

#[test]
fn incremental_flow_replay_equals_full_recompute() {
    // Contention everywhere: 3 out-neighbours per silo, 1 Gbit/s access.
    let (_, m) = builtin(1e9);
    let n = m.silo_count();
    let o = Overlay::from_arcs(
        "circulant",
        n,
        (0..n).flat_map(|i| [1, 2, 5].map(|s| (i, (i + s) % n))),
    );
    let inc = replay(&o, &m, &mut FlowNetwork::new(&m), &opts(20)).unwrap();
    let full = replay(
        &o,
        &m,
        &mut FlowNetwork::new(&m).with_full_recompute(),
        &opts(20),
    )
    .unwrap();
    for (a, b) in inc
        .starts
        .iter()
        .flatten()
        .zip(full.starts.iter().flatten())
    {
        assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} vs {b}");
    }
}

#[test]
fn maxplus_replay_of_matcha_schedule_equals_time_varying_recurrence() {
    // t_i(k+1) = max_{j in N_in(k) u {i}} t_j(k) + d_k(j,i), with
    // d_k(i,i) = s*Tc(i) and d_k(j,i) = eq. (3) under round k's degrees.
    use crate::overlay::build::build_schedule;
    use crate::overlay::matcha::MatchaOptions;
    let (u, mut m) = builtin(1e9);
    let n = m.silo_count();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    m.compute_ms = Some((0..n).map(|_| rng.gen_range(0.0..200.0)).collect());
    for kind in [OverlayKind::MATCHA, OverlayKind::MATCHA_PLUS] {
        let options = BuildOptions {
            matcha: MatchaOptions {
                seed: 11,
                ..MatchaOptions::default()
            },
            ..BuildOptions::default()
        };
        let sched = build_schedule(kind, &u, &m, &options).unwrap().unwrap();
        assert!(!sched.is_static());
        let rounds = 80u64;
        let r = replay(&sched, &m, &mut MaxPlusNetwork::new(&m), &opts(rounds)).unwrap();
        let mut t = vec![0.0f64; n];
        let mut varied = false;
        for k in 0..rounds {
            let o = sched.round(k);
            varied |= o.arc_count() != sched.round(0).arc_count();
            let mut next: Vec<f64> = (0..n).map(|i| t[i] + m.compute_round_ms(i)).collect();
            for &(j, i) in o.arcs() {
                let d = m.arc_delay(j, i, o.out_degree(j), o.in_degree(i));
                next[i] = next[i].max(t[j] + d);
            }
            t = next;
            for (i, (&got, &want)) in r.starts[k as usize + 1].iter().zip(&t).enumerate() {
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "{kind}: t_{i}({}) = {got}, recurrence {want}",
                    k + 1
                );
            }
        }
        assert!(varied, "{kind}: the schedule should change between rounds");
    }
}

#[test]
fn paper_model_hand_computed_queue_and_idle_downlink() {
    // Receiver r (silo 0) and senders a, b, c (silos 1..3) on direct core
    // links of 100, 1000 and 2000 km (10 Gbit/s): l = 0.0085 d + 4 =
    // 4.85, 12.5, 21 ms. M = 1e7 bit, Cup = 1e9, Cdn(r) = 3e8 bit/s.
    let g = "graph [ node [ id 1 label \"r\" ] node [ id 2 label \"a\" ]
        node [ id 3 label \"b\" ] node [ id 4 label \"c\" ]
        edge [ source 1 target 2 distance 100 capacity 1e10 ]
        edge [ source 1 target 3 distance 1000 capacity 1e10 ]
        edge [ source 1 target 4 distance 2000 capacity 1e10 ] ]";
    let u = Underlay::from_gml_str(g, "star.gml", &LoadOptions::default()).unwrap();
    let conn = Connectivity::new(&u, &ConnectivityOptions::default());
    let mut access = AccessLinks::uniform(4, 1e9);
    access.set(0, 1e9, 3e8);
    let w = Workload {
        name: "t".into(),
        model_bits: 1e7,
        compute_ms: 0.0,
        local_steps: 1,
    };
    let mut m = DelayModel::new(conn, access, w);
    // s*Tc: r 0, a 130, b 10, c 100 ms (a sends last but is closest).
    m.compute_ms = Some(vec![0.0, 130.0, 10.0, 100.0]);
    let o = Overlay::from_arcs("in-star", 4, [(1, 0), (2, 0), (3, 0), (0, 1)]);
    let r = replay(&o, &m, &mut PaperNetwork::new(&m), &opts(1)).unwrap();
    // Line 5 at r: rate min(1e9/1, 3e8/3, 1e10/1) = 1e8 -> 100 ms, so the
    // arrivals are b 10+12.5+100 = 122.5, c 100+21+100 = 221,
    // a 130+4.85+100 = 234.85. Each download then holds r's downlink for
    // M/Cdn = 1e7/3e8 s = 33.333.. ms, in arrival order:
    //   b: 122.5 + 33.333 = 155.8333 (downlink idle before),
    //   c: max(155.8333, 221) + 33.333 = 254.3333 (idle gap),
    //   a: max(254.3333, 234.85) + 33.333 = 287.6667 (queued behind c).
    let want: f64 = 221.0 + 2.0 * 1e7 / 3e8 * 1e3;
    assert!((want - 287.666_666_666_666_7).abs() < 1e-9);
    assert!(
        (r.starts[1][0] - want).abs() < 1e-9,
        "t_r(1) = {} vs {want}",
        r.starts[1][0]
    );
    // Without the serialised downloads (Algorithm 3's text) r would start
    // at max(arrivals) = 234.85; the max-plus eq. (3) also gives 234.85.
    let mp = replay(&o, &m, &mut MaxPlusNetwork::new(&m), &opts(1)).unwrap();
    assert!(
        (mp.starts[1][0] - 234.85).abs() < 1e-9,
        "{}",
        mp.starts[1][0]
    );
    // a receives r's model: 0 + 4.85 + 1e7/1e9 s = 14.85 ms, download
    // 10 ms -> 24.85, before a's own computation ends (130 ms).
    assert!((r.starts[1][1] - 130.0).abs() < 1e-9);
    assert_eq!((r.starts[1][2], r.starts[1][3]), (10.0, 100.0));
}

#[test]
fn silos_on_one_router_use_access_links_only() {
    // Two silos on router a of the line, one on c. Silos 0 and 1 exchange
    // models over their access links only: l = 0, A = inf.
    use crate::net::placement::SiloPlacement;
    let p = SiloPlacement::explicit(vec![0, 0, 2], 3).unwrap();
    let conn = Connectivity::with_placement(&line(), &ConnectivityOptions::default(), p);
    let access = AccessLinks::uniform(3, 1e8);
    let w = Workload {
        name: "t".into(),
        model_bits: 1e7,
        compute_ms: 10.0,
        local_steps: 1,
    };
    let m = DelayModel::new(conn, access, w);
    assert_eq!(m.connectivity.latency_ms(0, 1), 0.0);
    let o = Overlay::from_arcs("pair", 3, [(0, 1), (1, 0)]);
    // 1e7 bit at 1e8 bit/s = 100 ms after 10 ms of computation.
    for (net, want) in [
        (NetworkKind::Maxplus, 110.0),
        (NetworkKind::Flow, 110.0),
        // Line 5 (100 ms) plus the serialised download (100 ms).
        (NetworkKind::Paper, 210.0),
    ] {
        let mut model = net.build(&m);
        let r = replay(&o, &m, model.as_mut(), &opts(3)).unwrap();
        for k in 1..=3 {
            let got = r.starts[k][0] - r.starts[k - 1][0];
            assert!((got - want).abs() < 1e-9, "{net} round {k}: {got}");
        }
    }
    // A cross-router silo pays the route: 2 -> 0 crosses both core links.
    let o = Overlay::from_arcs("x", 3, [(2, 0), (0, 2)]);
    let r = replay(&o, &m, &mut MaxPlusNetwork::new(&m), &opts(1)).unwrap();
    let want = 10.0 + m.connectivity.latency_ms(2, 0) + 100.0;
    assert!(m.connectivity.latency_ms(2, 0) > 4.0);
    assert!((r.starts[1][0] - want).abs() < 1e-9);
}

#[test]
fn rounds_and_straggler_sigma_are_bounded() {
    assert!(check_rounds(100, 10_000).is_ok());
    assert!(check_rounds(0, 1).unwrap_err().contains("at least 1"));
    assert!(check_rounds(MAX_ROUNDS + 1, 1)
        .unwrap_err()
        .contains("1000000"));
    let e = check_rounds(10_000, 10_000).unwrap_err();
    assert!(e.contains("use at most 5000 rounds"), "{e}");
    assert!("lognormal:10".parse::<Straggler>().is_ok());
    for bad in [
        "lognormal:10.5",
        "lognormal:700",
        "lognormal:0",
        "lognormal:inf",
    ] {
        assert!(bad.parse::<Straggler>().is_err(), "{bad}");
    }
}

/// The critical path of a traced window is contiguous (each step starts
/// when the one before ends), starts at the window's start and ends when
/// the last silo starts the round after the window, on every network
/// model, with stragglers, for gossip, STAR and a time-varying schedule.
#[test]
fn critical_paths_are_contiguous_and_span_the_window() {
    let (u, m) = builtin(1e8);
    let mut scheds: Vec<Box<dyn OverlaySchedule>> = Vec::new();
    for kind in [
        OverlayKind::Star,
        OverlayKind::RingOpt,
        OverlayKind::DeltaMbst,
    ] {
        scheds.push(Box::new(
            build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap(),
        ));
    }
    let mut bo = BuildOptions::default();
    bo.matcha.rounds = 30;
    scheds.push(Box::new(
        crate::overlay::build::build_schedule(OverlayKind::MATCHA, &u, &m, &bo)
            .unwrap()
            .unwrap(),
    ));
    for s in &scheds {
        for net in [NetworkKind::Maxplus, NetworkKind::Paper, NetworkKind::Flow] {
            for (straggler, first) in [
                (Straggler::None, 0),
                (Straggler::LogNormal { sigma: 0.4 }, 5),
            ] {
                let o = ReplayOptions {
                    rounds: 12,
                    straggler,
                    seed: 3,
                    trace: TraceWindow { first, count: 4 },
                    breakdown: true,
                };
                let r = replay(s.as_ref(), &m, net.build(&m).as_mut(), &o).unwrap();
                let trace = r.trace.as_ref().expect("a trace");
                assert!(!trace.truncated);
                let path = trace.critical_path(&r.starts);
                let what = format!("{} {net} {straggler:?}", s.round(0).name);
                if first == 0 {
                    // Independent walks: the trace's events and the
                    // breakdown's binding models give the same path.
                    let b = r.breakdown.as_ref().unwrap().critical_path_until(4);
                    let steps: Vec<_> = b
                        .iter()
                        .map(|c| match c.kind {
                            "compute" => trace::PathStep::Compute {
                                silo: c.from,
                                round: c.round,
                                from_ms: c.start_ms,
                                to_ms: c.end_ms,
                            },
                            _ => trace::PathStep::Transfer {
                                from: c.from,
                                to: c.to,
                                round: c.round,
                                sent_ms: c.start_ms,
                                delivered_ms: c.end_ms,
                            },
                        })
                        .collect();
                    assert_eq!(steps, path, "{what}");
                }
                assert!(path.len() >= 4, "{what}: {path:?}");
                for w in path.windows(2) {
                    let (a, b) = (w[0].span(), w[1].span());
                    assert!((a.1 - b.0).abs() < 1e-9, "{what}: gap {a:?} -> {b:?}");
                }
                for s in &path {
                    let (a, b) = s.span();
                    assert!(b >= a - 1e-12, "{what}: {s:?}");
                }
                let start = path[0].span().0;
                let end = path.last().unwrap().span().1;
                let first_starts = &r.starts[first as usize];
                assert!(
                    first_starts.iter().any(|&t| (t - start).abs() < 1e-9),
                    "{what}: the path starts at {start}, no silo started round {first} then"
                );
                assert!(
                    (end - r.round_end(first as usize + 4)).abs() < 1e-9,
                    "{what}: ends at {end}, round end {}",
                    r.round_end(first as usize + 4)
                );
                // Every transfer on the path is one the overlay of its round has.
                for st in &path {
                    if let trace::PathStep::Transfer {
                        from, to, round, ..
                    } = *st
                    {
                        assert!(
                            s.round(round).arcs().contains(&(from, to)),
                            "{what}: {from} -> {to} in round {round}"
                        );
                    }
                }
            }
        }
    }
}

/// In the periodic regime of a static overlay on the max-plus network the
/// critical path runs around the critical circuit: its transfers are the
/// circuit's arcs and it advances one cycle time per round.
#[test]
fn late_critical_paths_follow_the_critical_circuit() {
    let (u, m) = builtin(1e10);
    for kind in [OverlayKind::DeltaMbst, OverlayKind::Star] {
        let o = build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap();
        let t = cycle_time(&o, &m).unwrap();
        let c = &t.critical_circuit;
        let circuit: Vec<(usize, usize)> =
            (0..c.len()).map(|k| (c[k], c[(k + 1) % c.len()])).collect();
        let opts = ReplayOptions {
            rounds: 100,
            trace: TraceWindow {
                first: 80,
                count: 10,
            },
            ..ReplayOptions::default()
        };
        let r = replay(&o, &m, &mut MaxPlusNetwork::new(&m), &opts).unwrap();
        let path = r.trace.as_ref().unwrap().critical_path(&r.starts);
        let mut transfers = 0;
        for st in &path {
            if let trace::PathStep::Transfer { from, to, .. } = *st {
                transfers += 1;
                assert!(
                    circuit.contains(&(from, to)),
                    "{kind}: {from} -> {to} not in {c:?}"
                );
            }
        }
        assert!(transfers >= 10, "{kind}: {path:?}");
        let span = path.last().unwrap().span().1 - path[0].span().0;
        assert!(
            (span - 10.0 * t.cycle_time_ms).abs() < 1e-6 * span,
            "{kind}: {span} over 10 rounds, cycle time {}",
            t.cycle_time_ms
        );
    }
}
