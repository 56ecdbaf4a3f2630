//! Asynchronous protocols in the event engine (`fedtopo::replay::asynchronous`):
//! hand-computed timelines of two silos with known speeds, the flow model
//! against the max-plus arcs where nothing is shared, the budget and the
//! protocol invariants on real underlays, determinism under seeds.

mod common;

use fedtopo::graph::Overlay;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{build_overlay, BuildOptions, OverlayKind};
use fedtopo::replay::asynchronous::buffered::buffered_async;
use fedtopo::replay::asynchronous::gossip::async_gossip;
use fedtopo::replay::asynchronous::{AsyncOp, AsyncOptions, AsyncRun};

/// Two silos 300 km apart, 1 Gbit/s everywhere, a 10^7-bit model;
/// computations of 10 ms (silo 0) and 30 ms (silo 1).
fn pair() -> DelayModel {
    let (_, mut m) = common::tiny_network(&["a", "b"], &[(0, 1, 300.0)], 1e9);
    m.compute_ms = Some(vec![10.0, 30.0]);
    m
}

fn opts(computations: u64) -> AsyncOptions {
    AsyncOptions {
        computations,
        seed: 1,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// The times of the operations of one kind.
fn times(run: &AsyncRun, kind: &str) -> Vec<f64> {
    run.ops
        .iter()
        .filter(|o| match o {
            AsyncOp::Compute { .. } => kind == "compute",
            AsyncOp::Average { .. } => kind == "average",
            AsyncOp::Download { .. } => kind == "download",
            AsyncOp::Upload { .. } => kind == "upload",
            AsyncOp::Aggregate { .. } => kind == "aggregate",
        })
        .map(AsyncOp::at_ms)
        .collect()
}

#[test]
fn gossip_of_two_silos_with_known_speeds() {
    let m = pair();
    let d = m.comm_ms(0, 1, 1, 1, 1e7);
    assert!(d > 10.0, "{d}");
    let line = Overlay::from_edges("line", 2, &[(0, 1)]);
    for net in [NetworkKind::Maxplus, NetworkKind::Flow] {
        let run = async_gossip(&line, &m, net.build(&m).as_mut(), &opts(6)).unwrap();
        // Silo 0 waits for silo 1 (busy until 30 ms); they exchange; both
        // compute again from the average.
        let want = [
            10.0,
            30.0,
            40.0 + d,
            60.0 + d,
            70.0 + 2.0 * d,
            90.0 + 2.0 * d,
        ];
        let got = times(&run, "compute");
        assert_eq!(got.len(), want.len(), "{net}");
        for (g, w) in got.iter().zip(want) {
            assert!(close(*g, w), "{net}: computation ends at {g}, expected {w}");
        }
        let want_avg = [30.0 + d, 60.0 + 2.0 * d, 90.0 + 3.0 * d];
        let got = times(&run, "average");
        assert_eq!(got.len(), 3, "{net}");
        for (g, w) in got.iter().zip(want_avg) {
            assert!(close(*g, w), "{net}: average at {g}, expected {w}");
        }
        assert_eq!(run.computations, vec![3, 3]);
        assert_eq!(run.transfers, 6);
        assert!(close(run.makespan_ms, 90.0 + 3.0 * d));
    }
}

/// A line a - b - c (150 km each), 1 Gbit/s; computations of 10 ms (a)
/// and 30 ms (c); b is the server.
fn line3() -> DelayModel {
    let (_, mut m) = common::tiny_network(&["a", "b", "c"], &[(0, 1, 150.0), (1, 2, 150.0)], 1e9);
    m.compute_ms = Some(vec![10.0, 0.0, 30.0]);
    m
}

#[test]
fn buffered_with_known_speeds() {
    // Two silos: the server (0) only aggregates; the client's cycle is
    // download d, 30 ms of computing, upload u (nothing shared: flow and
    // max-plus agree).
    let m = pair();
    let d = m.comm_ms(0, 1, 1, 1, 1e7);
    let u = m.comm_ms(1, 0, 1, 1, 1e7);
    let period = d + 30.0 + u;
    for net in [NetworkKind::Maxplus, NetworkKind::Flow] {
        let run = buffered_async(&m, 0, 1, net.build(&m).as_mut(), &opts(4)).unwrap();
        let agg = times(&run, "aggregate");
        assert_eq!(agg.len(), 4, "{net}");
        for (k, t) in agg.iter().enumerate() {
            assert!(close(*t, (k + 1) as f64 * period), "{net}: {t}");
        }
        assert_eq!(run.computations, vec![0, 4]);
        assert_eq!(run.transfers, 8);
    }
    // Three silos, server b in the middle, max-plus arcs (eq. 3: the
    // server's access link split 2 ways). Client a cycles every Pa, client
    // c every Pc; c's k-th update is as stale as the versions a made
    // while it was away: a's arrivals m Pa in ((k-1) Pc, k Pc).
    let m = line3();
    let pa = m.comm_ms(1, 0, 2, 1, 1e7) + 10.0 + m.comm_ms(0, 1, 1, 2, 1e7);
    let pc = m.comm_ms(1, 2, 2, 1, 1e7) + 30.0 + m.comm_ms(2, 1, 1, 2, 1e7);
    let run = buffered_async(&m, 1, 1, NetworkKind::Maxplus.build(&m).as_mut(), &opts(40)).unwrap();
    let mut k = 0;
    for op in &run.ops {
        if let AsyncOp::Aggregate { at_ms, updates, .. } = op {
            let (silo, staleness) = updates[0];
            if silo == 2 {
                k += 1;
                assert!(close(*at_ms, k as f64 * pc), "{at_ms} vs {}", k as f64 * pc);
                let (lo, hi) = ((k - 1) as f64 * pc, k as f64 * pc);
                let made = (1..1000)
                    .filter(|&j| lo < j as f64 * pa && j as f64 * pa < hi)
                    .count();
                assert_eq!(staleness, made as u64, "c's update {k}");
            } else {
                assert_eq!(silo, 0);
            }
        }
    }
    assert!(k >= 3, "{k}");
    assert!(run.computations[0] > run.computations[2]);
    assert_eq!(run.computations[1], 0, "the server computed");
}

/// On real underlays: the budget is spent exactly, every operation is in
/// time order, a computing silo's model is never touched (gossip), every
/// update is aggregated once with its right staleness (buffered), and the
/// same seed gives the same run.
#[test]
fn protocol_invariants_on_real_underlays() {
    for name in ["aws-north-america", "aws-gaia"] {
        let u = load_underlay(Some(name), &LoadOptions::default()).unwrap();
        let m = NetworkSpec {
            access_bps: 1e8,
            ..NetworkSpec::default()
        }
        .build(&u)
        .unwrap();
        let n = m.silo_count();
        for kind in [OverlayKind::Ring, OverlayKind::Mst] {
            let o = build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap();
            for net in [NetworkKind::Maxplus, NetworkKind::Flow] {
                let budget = 7 * n as u64 + 3;
                let run = async_gossip(&o, &m, net.build(&m).as_mut(), &opts(budget)).unwrap();
                assert_eq!(run.computations.iter().sum::<u64>(), budget);
                assert!(run.ops.windows(2).all(|w| w[0].at_ms() <= w[1].at_ms()));
                // No average touches a silo while it computes.
                for op in &run.ops {
                    if let AsyncOp::Average {
                        a,
                        b,
                        start_ms,
                        at_ms,
                    } = op
                    {
                        for x in [a, b] {
                            let overlap = run.ops.iter().any(|c| {
                                matches!(c, AsyncOp::Compute { silo, start_ms: s, at_ms: e, .. }
                                    if silo == x && *s < *at_ms && *e > *start_ms)
                            });
                            assert!(
                                !overlap,
                                "{name} {kind} {net}: silo {x} averaged while computing"
                            );
                        }
                        assert!(o.arcs().contains(&(*a, *b)) || o.arcs().contains(&(*b, *a)));
                    }
                }
                let again = async_gossip(&o, &m, net.build(&m).as_mut(), &opts(budget)).unwrap();
                assert_eq!(run, again, "{name} {kind} {net}: not deterministic");
                let other = async_gossip(
                    &o,
                    &m,
                    net.build(&m).as_mut(),
                    &AsyncOptions {
                        computations: budget,
                        seed: 2,
                    },
                )
                .unwrap();
                assert_ne!(
                    run.ops, other.ops,
                    "{name} {kind} {net}: the seed changes nothing"
                );
            }
        }
        for k in [1, 3, n - 1] {
            let budget = 5 * n as u64;
            let run = buffered_async(
                &m,
                0,
                k,
                NetworkKind::Flow.build(&m).as_mut(),
                &opts(budget),
            )
            .unwrap();
            assert_eq!(run.computations.iter().sum::<u64>(), budget);
            let uploads = times(&run, "upload").len();
            let aggregated: usize = run
                .ops
                .iter()
                .map(|o| match o {
                    AsyncOp::Aggregate { updates, .. } => {
                        assert_eq!(updates.len(), k);
                        k
                    }
                    _ => 0,
                })
                .sum();
            assert_eq!(uploads, budget as usize);
            assert_eq!(aggregated + run.unapplied_updates, uploads);
            // Staleness: the versions made between an update's base and its
            // aggregation.
            let mut version = 0;
            let mut base = vec![0u64; n];
            let mut pending = Vec::new();
            for op in &run.ops {
                match op {
                    AsyncOp::Download {
                        silo, version: v, ..
                    } => {
                        assert_eq!(*v, version);
                        base[*silo] = *v;
                    }
                    AsyncOp::Upload { silo, base: b, .. } => {
                        assert_eq!(*b, base[*silo]);
                        pending.push((*silo, *b));
                    }
                    AsyncOp::Aggregate {
                        version: v,
                        updates,
                        ..
                    } => {
                        assert_eq!(updates.len(), pending.len());
                        for (&(s, st), (ps, pb)) in updates.iter().zip(pending.drain(..)) {
                            assert_eq!(s, ps);
                            assert_eq!(st, version - pb);
                        }
                        version += 1;
                        assert_eq!(*v, version);
                    }
                    _ => {}
                }
            }
        }
    }
}

#[test]
fn bad_options_are_clear_errors() {
    let m = pair();
    let line = Overlay::from_edges("line", 2, &[(0, 1)]);
    let net = || NetworkKind::Maxplus.build(&m);
    let e = async_gossip(&line, &m, net().as_mut(), &opts(0)).unwrap_err();
    assert!(e.to_string().contains("computations 0"), "{e}");
    let lonely = Overlay::from_edges("lonely", 2, &[]);
    let e = async_gossip(&lonely, &m, net().as_mut(), &opts(4)).unwrap_err();
    assert!(e.to_string().contains("silo 0 has no neighbour"), "{e}");
    let e = buffered_async(&m, 5, 1, net().as_mut(), &opts(4)).unwrap_err();
    assert!(e.to_string().contains("server silo 5"), "{e}");
    let e = buffered_async(&m, 0, 2, net().as_mut(), &opts(4)).unwrap_err();
    assert!(e.to_string().contains("buffer size 2"), "{e}");
}

/// Under a trace an asynchronous run follows the network: silo 1 of the
/// pair is down from 5 to 105 ms, so its first computation (30 ms from 0)
/// pauses for those 100 ms and ends at 130 ms; the static run's at 30 ms.
#[test]
fn asynchronous_runs_follow_a_trace() {
    use fedtopo::net::dynamics::read::parse;
    use fedtopo::net::placement::SiloPlacement;
    let m = pair();
    let g = "graph [ node [ id 1 label \"a\" ] node [ id 2 label \"b\" ]
        edge [ source 1 target 2 distance 300 capacity 1e9 ] ]";
    let u = Underlay::from_gml_str(g, "pair.gml", &LoadOptions::default()).unwrap();
    let text = "time_s,target,value\n0.005,avail:b,down\n0.105,avail:b,up\n";
    let d = parse(text, "t.csv", &u, &SiloPlacement::one_per_router(2)).unwrap();
    let mut traced = m.clone();
    traced.dynamics = Some(std::sync::Arc::new(d));
    let line = Overlay::from_edges("line", 2, &[(0, 1)]);
    for net in [NetworkKind::Maxplus, NetworkKind::Flow] {
        let end_of_first = |model: &DelayModel| -> f64 {
            let run = async_gossip(&line, model, net.build(model).as_mut(), &opts(4)).unwrap();
            run.ops
                .iter()
                .find_map(|o| match o {
                    AsyncOp::Compute { silo: 1, at_ms, .. } => Some(*at_ms),
                    _ => None,
                })
                .unwrap()
        };
        assert!(close(end_of_first(&m), 30.0), "{net}");
        assert!(
            close(end_of_first(&traced), 130.0),
            "{net}: {}",
            end_of_first(&traced)
        );
    }
}

/// `fedtopo simulate --protocol`: the library's runs, one row per overlay
/// (JSON), and clear errors for the synchronous-only options.
#[test]
fn simulate_times_asynchronous_protocols() {
    let bin = env!("CARGO_BIN_EXE_fedtopo");
    let run = |args: &[&str]| std::process::Command::new(bin).args(args).output().unwrap();
    let o = run(&[
        "simulate",
        "aws-gaia",
        "--overlays",
        "ring,star",
        "--protocol",
        "async-gossip",
        "--network",
        "flow",
        "--rounds",
        "5",
        "--seed",
        "3",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
    let m = NetworkSpec::default().build(&u).unwrap();
    let n = m.silo_count();
    let ring = build_overlay(
        OverlayKind::Ring,
        &u,
        &m,
        &BuildOptions {
            seed: 3,
            ..BuildOptions::default()
        },
    )
    .unwrap();
    let want = async_gossip(
        &ring,
        &m,
        NetworkKind::Flow.build(&m).as_mut(),
        &AsyncOptions {
            computations: 5 * n as u64,
            seed: 3,
        },
    )
    .unwrap();
    let row = &doc["rows"][0];
    assert_eq!(row["overlay"], "ring");
    assert_eq!(row["makespan_ms"].as_f64().unwrap(), want.makespan_ms);
    assert_eq!(row["transfers"].as_u64().unwrap(), want.transfers);
    assert_eq!(doc["rows"][1]["overlay"], "star");
    for (extra, what) in [
        (&["--breakdown", "/tmp/x.csv"][..], "--breakdown"),
        (&["--straggler", "lognormal:0.5"][..], "--straggler"),
    ] {
        let mut args = vec![
            "simulate",
            "aws-gaia",
            "--protocol",
            "fedbuff",
            "--overlays",
            "star",
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("{what} is for synchronous rounds")),
            "{err}"
        );
    }
}
