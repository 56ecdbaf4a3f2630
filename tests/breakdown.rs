//! Where each round's time goes (`fedtopo::replay::breakdown`): a
//! hand-computed case, the identities every breakdown obeys on every
//! network model, and the clock's breakdowns (the `maxplus` recurrence and
//! the event engine) against the batch replay's, bit for bit.

use fedtopo::graph::failures::{FailureSpec, Failures};
use fedtopo::graph::{Overlay, OverlaySchedule};
use fedtopo::net::access::AccessLinks;
use fedtopo::net::connectivity::{Connectivity, ConnectivityOptions};
use fedtopo::net::delay::DelayModel;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::{LoadOptions, Underlay};
use fedtopo::net::workload::Workload;
use fedtopo::network::NetworkKind;
use fedtopo::overlay::build::{build_overlay, build_schedule, BuildOptions, OverlayKind};
use fedtopo::replay::breakdown::MAX_BREAKDOWN_ROWS;
use fedtopo::replay::clock::{EngineClock, RoundClock};
use fedtopo::replay::{replay, ReplayError, ReplayOptions, ReplayResult, SiloRound, Straggler};

/// A line a - b - c (100 km, 200 km), core 1 Gbit/s; access up 1 Gbit/s,
/// down 100 Mbit/s; a 10^7-bit model; 10 ms of computation.
fn line_model() -> DelayModel {
    let g = "graph [ node [ id 1 label \"a\" ] node [ id 2 label \"b\" ] node [ id 3 label \"c\" ]
        edge [ source 1 target 2 distance 100 capacity 1e9 ]
        edge [ source 2 target 3 distance 200 capacity 1e9 ] ]";
    let u = Underlay::from_gml_str(g, "line.gml", &LoadOptions::default()).unwrap();
    let conn = Connectivity::new(&u, &ConnectivityOptions::default());
    let mut access = AccessLinks::uniform(3, 1e9);
    for i in 0..3 {
        access.set(i, 1e9, 1e8);
    }
    let w = Workload {
        name: "t".into(),
        model_bits: 1e7,
        compute_ms: 10.0,
        local_steps: 1,
    };
    DelayModel::new(conn, access, w)
}

fn run(s: &dyn OverlaySchedule, m: &DelayModel, net: NetworkKind, rounds: u64) -> ReplayResult {
    run_with(s, m, net, rounds, Straggler::None)
}

fn run_with(
    s: &dyn OverlaySchedule,
    m: &DelayModel,
    net: NetworkKind,
    rounds: u64,
    straggler: Straggler,
) -> ReplayResult {
    let opts = ReplayOptions {
        rounds,
        straggler,
        seed: 5,
        breakdown: true,
        ..ReplayOptions::default()
    };
    replay(s, m, net.build(m).as_mut(), &opts).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Silo 1 of the line hears from 0 and 2; its downlink (100 Mbit/s, two
/// models) is eq. (3)'s bottleneck: 200 ms a model. Silos 0 and 2 hear
/// from 1 only: 100 ms. Round 1 of silo 0 waits for silo 1 to finish its
/// slower round 0 before its model even leaves.
#[test]
fn hand_computed_line() {
    let m = line_model();
    let l = |i, j| m.connectivity.latency_ms(i, j);
    let o = Overlay::from_edges("line", 3, &[(0, 1), (1, 2)]);
    let r = run(&o, &m, NetworkKind::Maxplus, 2);
    let b = r.breakdown.as_ref().unwrap();
    assert_eq!((b.silos, b.rounds()), (3, 2));
    let row = |k, i| *b.get(k, i).unwrap();

    // Silo 1, round 0: computes 10 ms; 2's model (longer route) binds.
    let s = row(0, 1);
    assert_eq!(s.via, Some(2));
    assert!(close(s.compute_ms, 10.0) && close(s.wait_ms, 0.0));
    assert!(close(s.transfer_ms, 200.0 + l(2, 1)), "{s:?}");
    assert!(close(s.end_ms, 210.0 + l(2, 1)));
    // Silo 0, round 0: 1's model, 100 ms on 0's downlink.
    let s0 = row(0, 0);
    assert_eq!(s0.via, Some(1));
    assert!(close(s0.transfer_ms, 100.0 + l(1, 0)) && close(s0.wait_ms, 0.0));
    // Silo 0, round 1: ready at 120 + l10, but 1 sends only at 220 + l21.
    let s1 = row(1, 0);
    assert_eq!(s1.via, Some(1));
    assert!(close(s1.start_ms, 110.0 + l(1, 0)));
    assert!(close(s1.wait_ms, 100.0 + l(2, 1) - l(1, 0)), "{s1:?}");
    assert!(close(s1.transfer_ms, 100.0 + l(1, 0)));
    assert!(close(s1.via_sent_ms, 220.0 + l(2, 1)));

    // Silos 1 and 2 both end round 1 at 320 + 2 l21 (10 ms of computing
    // and the two transfers between them, in either order): the critical
    // path is one of the two chains.
    assert!(close(row(1, 1).end_ms, 320.0 + 2.0 * l(2, 1)));
    assert!(close(row(1, 2).end_ms, 320.0 + 2.0 * l(2, 1)));
    assert!(close(row(1, 0).end_ms, 320.0 + l(2, 1) + l(1, 0)));
    let path = b.critical_path();
    let steps: Vec<_> = path
        .iter()
        .map(|p| (p.kind, p.from, p.to, p.round))
        .collect();
    let chain = |a, b| {
        vec![
            ("compute", a, a, 0),
            ("transfer", a, b, 0),
            ("compute", b, b, 1),
            ("transfer", b, a, 1),
        ]
    };
    assert!(steps == chain(1, 2) || steps == chain(2, 1), "{steps:?}");
    assert!(
        close(path[1].end_ms - path[1].start_ms, 100.0 + l(1, 2))
            || close(path[1].end_ms - path[1].start_ms, 200.0 + l(1, 2))
    );
    assert!(close(path[3].end_ms, 320.0 + 2.0 * l(2, 1)));
    assert_eq!(path[3].end_ms, r.makespan_ms());
}

/// Every breakdown: rows follow the replay's start times, add up to the
/// round, and the critical path runs without a gap from 0 to the makespan.
fn check_identities(r: &ReplayResult, what: &str) {
    let b = r.breakdown.as_ref().unwrap();
    let rounds = r.starts.len() as u64 - 1;
    assert_eq!(b.rounds(), rounds, "{what}");
    for k in 0..rounds {
        for i in 0..b.silos {
            let s = b.get(k, i).unwrap();
            assert_eq!((s.round, s.silo), (k, i));
            assert_eq!(s.start_ms, r.starts[k as usize][i], "{what} {k} {i}");
            assert_eq!(s.end_ms, r.starts[k as usize + 1][i], "{what} {k} {i}");
            let sum = s.compute_ms + s.transfer_ms + s.wait_ms;
            assert!(close(sum, s.end_ms - s.start_ms), "{what}: {s:?}");
            assert!(s.compute_ms >= 0.0 && s.transfer_ms >= 0.0 && s.wait_ms >= 0.0);
            if s.via.is_none() {
                assert_eq!(s.transfer_ms, 0.0);
            }
        }
    }
    let path = b.critical_path();
    assert!(!path.is_empty(), "{what}");
    assert_eq!(path[0].start_ms, 0.0, "{what}");
    for w in path.windows(2) {
        assert_eq!(w[0].end_ms, w[1].start_ms, "{what}: {w:?}");
    }
    assert_eq!(path.last().unwrap().end_ms, r.makespan_ms(), "{what}");
    let total: f64 = path.iter().map(|p| p.end_ms - p.start_ms).sum();
    assert!(close(total, r.makespan_ms()), "{what}");
    let shares = b.per_round();
    assert_eq!(shares.len() as u64, rounds);
    assert_eq!(shares.last().unwrap().end_ms, r.makespan_ms());
}

fn aws_schedules() -> (DelayModel, Vec<Box<dyn OverlaySchedule>>) {
    let u = load_underlay(Some("aws-north-america"), &LoadOptions::default()).unwrap();
    let m = NetworkSpec {
        access_bps: 1e8,
        ..NetworkSpec::default()
    }
    .delay_model(&u);
    let mut v: Vec<Box<dyn OverlaySchedule>> = Vec::new();
    for kind in [OverlayKind::Star, OverlayKind::Mst, OverlayKind::Ring] {
        let o = build_overlay(kind, &u, &m, &BuildOptions::default()).unwrap();
        if kind == OverlayKind::Mst {
            let f = FailureSpec::parse_optional("link-down:0.2")
                .unwrap()
                .unwrap();
            v.push(Box::new(Failures::new(o.clone(), f, 3).unwrap()));
        }
        v.push(Box::new(o));
    }
    let mut opts = BuildOptions::default();
    opts.matcha.rounds = 30;
    v.push(Box::new(
        build_schedule(OverlayKind::MATCHA, &u, &m, &opts)
            .unwrap()
            .unwrap(),
    ));
    (m, v)
}

#[test]
fn breakdowns_add_up_on_every_network_model() {
    let (m, scheds) = aws_schedules();
    for s in &scheds {
        for net in [NetworkKind::Maxplus, NetworkKind::Paper, NetworkKind::Flow] {
            let r = run(s.as_ref(), &m, net, 12);
            check_identities(&r, &format!("{} {net}", s.round(0).name));
        }
    }
}

fn bits(rows: &[SiloRound]) -> Vec<[u64; 8]> {
    rows.iter()
        .map(|s| {
            [
                s.round,
                s.silo as u64,
                s.start_ms.to_bits(),
                s.compute_ms.to_bits(),
                s.transfer_ms.to_bits(),
                s.wait_ms.to_bits(),
                s.end_ms.to_bits(),
                s.via.map_or(u64::MAX, |v| v as u64) ^ s.via_sent_ms.to_bits(),
            ]
        })
        .collect()
}

/// A clock's breakdown, round after round, is the batch replay's: the
/// `maxplus` recurrence and the event engine alike, stragglers included.
#[test]
fn clock_breakdowns_equal_the_replay() {
    let (m, scheds) = aws_schedules();
    let rounds = 15;
    for s in &scheds {
        for (net, straggler) in [
            (NetworkKind::Maxplus, Straggler::None),
            (NetworkKind::Maxplus, Straggler::LogNormal { sigma: 0.5 }),
            (NetworkKind::Flow, Straggler::None),
        ] {
            let r = run_with(s.as_ref(), &m, net, rounds + 5, straggler);
            let b = r.breakdown.unwrap();
            for events in [false, true] {
                let mut clock = if events {
                    EngineClock::event_driven(s.as_ref(), &m, net, straggler, 5)
                } else {
                    EngineClock::with_stragglers(s.as_ref(), &m, net, straggler, 5)
                }
                .unwrap();
                assert!(clock.breakdown().is_none());
                clock.record_breakdown().unwrap();
                for k in 0..rounds {
                    clock.round_end_times(k, &s.round(k)).unwrap();
                    let got = clock.breakdown().unwrap();
                    let want = &b.rows[(k as usize) * b.silos..(k as usize + 1) * b.silos];
                    assert_eq!(
                        bits(got),
                        bits(want),
                        "{} {net} {straggler:?} events {events} round {k}",
                        s.round(0).name
                    );
                }
                assert!(clock.record_breakdown().is_err());
            }
        }
    }
}

#[test]
fn a_breakdown_too_large_is_refused() {
    let m = line_model();
    let o = Overlay::from_edges("line", 3, &[(0, 1), (1, 2)]);
    let opts = ReplayOptions {
        rounds: MAX_BREAKDOWN_ROWS,
        breakdown: true,
        ..ReplayOptions::default()
    };
    let e = replay(&o, &m, NetworkKind::Maxplus.build(&m).as_mut(), &opts).unwrap_err();
    assert!(matches!(e, ReplayError::BreakdownTooLarge { silos: 3, .. }));
    assert!(e.to_string().contains("fewer rounds"), "{e}");
}

/// `fedtopo simulate --breakdown FILE`: every silo-round as CSV, or the
/// per-round means, critical path and silo-rounds as JSON; a summary
/// table on the terminal; a clear error for a path it cannot write.
#[test]
fn simulate_writes_breakdowns() {
    let dir = std::env::temp_dir().join(format!("fedtopo-breakdown-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_fedtopo");
    let run = |file: &std::path::Path| {
        std::process::Command::new(bin)
            .args([
                "simulate",
                "--overlays",
                "star,ring",
                "--rounds",
                "6",
                "--breakdown",
            ])
            .arg(file)
            .output()
            .unwrap()
    };
    let csv = dir.join("b.csv");
    let out = run(&csv);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("where the time goes"), "{stdout}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("overlay,network,round,silo,label,start_ms"));
    // 2 overlays x 6 rounds x 22 silos.
    assert_eq!(lines.count(), 2 * 6 * 22);

    let json = dir.join("b.json");
    assert!(run(&json).status.success());
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let overlays = doc["overlays"].as_array().unwrap();
    assert_eq!(overlays.len(), 2);
    for o in overlays {
        let path = o["critical_path"].as_array().unwrap();
        let rounds = o["rounds"].as_array().unwrap();
        assert_eq!(rounds.len(), 6);
        assert_eq!(path[0]["start_ms"].as_f64(), Some(0.0));
        assert_eq!(path.last().unwrap()["end_ms"], rounds[5]["end_ms"]);
        assert_eq!(o["silo_rounds"].as_array().unwrap().len(), 6 * 22);
    }

    let bad = run(&dir.join("missing").join("b.csv"));
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("writing") && err.contains("b.csv"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
