//! Churn in synchronous rounds (`availability = skip | timeout:MS`):
//! hand-computed cases on three silos (a silo down for good under skip and
//! under a time out, a silo rejoining from its neighbours' models, STAR
//! skipping a client), a trace where nobody goes down equals the `wait`
//! replay to 1e-12 on every network model, and random churn never
//! deadlocks, is deterministic and keeps consistent participation records.

mod common;

use common::{tiny_network, with_trace};
use fedtopo::net::dynamics::AvailabilityPolicy;
use fedtopo::overlay::build::build_overlay;
use fedtopo::prelude::*;
use fedtopo::replay::clock::{EngineClock, RoundClock};
use fedtopo::replay::{RoundStepper, Straggler};

/// Three routers `a`, `b`, `c`, pairwise 100 km apart on 1 Gbit/s links,
/// one silo each; 100 Mbit/s access both ways, 1e7-bit models (100 ms per
/// model through an access link), 10 ms of compute per round, the trace
/// rows `trace` and the availability policy `policy`.
fn model(trace: &str, policy: AvailabilityPolicy) -> DelayModel {
    let (u, m) = tiny_network(
        &["a", "b", "c"],
        &[(0, 1, 100.0), (1, 2, 100.0), (0, 2, 100.0)],
        1e8,
    );
    with_trace(m, &u, &format!("time_s,target,value\n{trace}"), policy)
}

fn complete() -> Overlay {
    Overlay::from_edges("complete", 3, &[(0, 1), (0, 2), (1, 2)])
}

fn run(o: &Overlay, m: &DelayModel, kind: NetworkKind, rounds: u64) -> ReplayResult {
    let opts = ReplayOptions {
        rounds,
        ..ReplayOptions::default()
    };
    replay(o, m, kind.build(m).as_mut(), &opts).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Silo `c` goes down at 5 ms, during its first local steps, for good.
/// Under `skip`, `a` and `b` send only to each other (one model each way:
/// 100 ms up, 100 ms down, eq. (3)) and do not wait for `c`: every round
/// lasts `R = 10 + l + 100` ms (`c`, absent, stays at time 0). Under
/// `wait` the replay reports `c`.
#[test]
fn skip_goes_on_without_a_silo_down_for_good() {
    let l = model("", AvailabilityPolicy::Wait)
        .connectivity
        .latency_ms(0, 1);
    let r_ms = 110.0 + l;
    let m = model("0.005,avail:c,down\n", AvailabilityPolicy::Skip);
    for kind in [NetworkKind::Maxplus, NetworkKind::Flow] {
        let r = run(&complete(), &m, kind, 5);
        assert_eq!(r.network, format!("{kind}+traces+skip"));
        for k in 0..=5 {
            for i in 0..3 {
                let want = if i == 2 { 0.0 } else { k as f64 * r_ms };
                assert!(
                    close(r.starts[k][i], want),
                    "{kind}: silo {i} round {k}: {} vs {want}",
                    r.starts[k][i]
                );
            }
        }
        let c = r.churn.as_ref().unwrap();
        assert_eq!(c.stats.absences, 1);
        assert_eq!(c.stats.rejoins, 0);
        // `c` is absent from rounds 0..5.
        assert_eq!(c.silo_rounds_absent, 5);
    }
    let wait = model("0.005,avail:c,down\n", AvailabilityPolicy::Wait);
    let e = replay(
        &complete(),
        &wait,
        NetworkKind::Maxplus.build(&wait).as_mut(),
        &ReplayOptions {
            rounds: 3,
            ..ReplayOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("silo 2 goes down"), "{e}");
}

/// Silo `c` is down from 5 ms to `U = 1.5 R` (during round 1 of `a` and
/// `b`, which skip it as above). Back up, it rejoins: `a` and `b` are in
/// round 1, so `c` starts round 2 from their round-2 models, which they
/// send when they start round 2 at `2R` (one model each, `c`'s downlink
/// shared by two: 200 ms): `c` starts round 2 at `2R + l + 200`. In round
/// 2 everyone sends to both others (200 ms up, 200 ms down): `a` and `b`
/// wait for `c`'s model, sent at `2R + l + 210`, until `2R + 2l + 410`;
/// `c` has theirs (sent at `2R + 10`) when its own steps end, at
/// `2R + l + 210`.
#[test]
fn a_silo_back_up_rejoins_from_its_neighbours_models() {
    let l = model("", AvailabilityPolicy::Wait)
        .connectivity
        .latency_ms(0, 1);
    let r_ms = 110.0 + l;
    let trace = format!("0.005,avail:c,down\n{},avail:c,up\n", 1.5 * r_ms / 1e3);
    let m = model(&trace, AvailabilityPolicy::Skip);
    let o = complete();
    let r = run(&o, &m, NetworkKind::Maxplus, 4);
    let want = [
        [0.0; 3],
        [r_ms, r_ms, 0.0],
        [2.0 * r_ms, 2.0 * r_ms, 2.0 * r_ms + l + 200.0],
        [
            2.0 * r_ms + 2.0 * l + 410.0,
            2.0 * r_ms + 2.0 * l + 410.0,
            2.0 * r_ms + l + 210.0,
        ],
    ];
    for (k, row) in want.iter().enumerate() {
        for (i, &w) in row.iter().enumerate() {
            assert!(
                close(r.starts[k][i], w),
                "silo {i} round {k}: {} vs {w}",
                r.starts[k][i]
            );
        }
    }
    let c = r.churn.as_ref().unwrap();
    assert_eq!((c.stats.absences, c.stats.rejoins), (1, 1));
    // Who took part, round by round (the clock's view).
    let mut st =
        RoundStepper::new(&o, &m, NetworkKind::Maxplus.build(&m), Straggler::None, 0).unwrap();
    st.advance_to(3).unwrap();
    let p0 = st.participation(0).unwrap().clone();
    assert_eq!(p0.computed, vec![true, true, false]);
    assert_eq!(p0.used, vec![Some(vec![1]), Some(vec![0]), None]);
    assert!(p0.absent(2) && !p0.absent(0));
    let p1 = st.participation(1).unwrap().clone();
    assert_eq!(p1.used[2], None);
    assert_eq!(p1.joined[2], Some(vec![0, 1]), "c rejoins from a and b");
    let p2 = st.participation(2).unwrap();
    assert_eq!(p2.computed, vec![true; 3]);
    let mut used: Vec<Vec<usize>> = p2.used.iter().map(|u| u.clone().unwrap()).collect();
    used.iter_mut().for_each(|u| u.sort_unstable());
    assert_eq!(used, vec![vec![1, 2], vec![0, 2], vec![0, 1]]);
    assert!(st.participation(3).is_none(), "round 3 has not ended");
}

/// Under `timeout:500`, nobody knows `c` is down: in round 0 `a` and `b`
/// send to both others (200 ms up) and each gets the other's model at
/// `10 + l + 200` ms, then waits for `c` until its time out, 500 ms after
/// its steps: round 1 starts at 510 ms. `c`, given up on while down, is
/// absent: from round 1 on they send only to each other (`R = 110 + l`).
#[test]
fn a_time_out_gives_up_on_a_silo_that_is_down() {
    let l = model("", AvailabilityPolicy::Wait)
        .connectivity
        .latency_ms(0, 1);
    let m = model("0.005,avail:c,down\n", AvailabilityPolicy::Timeout(500.0));
    for kind in [NetworkKind::Maxplus, NetworkKind::Flow] {
        let r = run(&complete(), &m, kind, 3);
        assert_eq!(r.network, format!("{kind}+traces+timeout:500"));
        for (k, want) in [(1, 510.0), (2, 620.0 + l), (3, 730.0 + 2.0 * l)] {
            // `c`, absent from round 0 on, stays at time 0.
            assert_eq!(r.starts[k][2], 0.0);
            for i in 0..2 {
                assert!(
                    close(r.starts[k][i], want),
                    "{kind}: silo {i} round {k}: {} vs {want}",
                    r.starts[k][i]
                );
            }
        }
        let c = r.churn.as_ref().unwrap();
        assert_eq!(c.stats.absences, 1);
        // The first time out (`a`'s) makes `c` absent: `b`, at the same
        // instant, no longer waits for it.
        assert_eq!(c.stats.models_missed, 1);
    }
}

/// A slow silo is timed out but not dropped: with a 50 ms time out and
/// 210 ms transfers, every silo gives up on every model and goes on alone
/// (rounds of `10 + 50` ms); late models are dropped and nobody is absent.
#[test]
fn a_time_out_shorter_than_a_transfer_drops_late_models() {
    let m = model("", AvailabilityPolicy::Timeout(50.0));
    let r = run(&complete(), &m, NetworkKind::Maxplus, 4);
    for k in 0..=4 {
        for i in 0..3 {
            assert!(close(r.starts[k][i], 60.0 * k as f64), "{:?}", r.starts[k]);
        }
    }
    let c = r.churn.as_ref().unwrap();
    assert_eq!(c.stats.absences, 0);
    assert_eq!(c.stats.models_missed, 4 * 3 * 2);
    assert!(c.stats.models_dropped > 0);
}

/// STAR with centre `a` under `skip`, client `c` down from 5 ms for good:
/// client `b` uploads alone (100 ms up, the centre's downlink not shared),
/// the centre aggregates at `110 + l` and broadcasts to `b` only: `b`
/// starts round 1 at `210 + 2l`; every later round adds `210 + 2l`.
#[test]
fn star_skips_a_client_that_is_down() {
    let m = model("0.005,avail:c,down\n", AvailabilityPolicy::Skip);
    let l = m.connectivity.latency_ms(0, 1);
    let o = fedtopo::overlay::star::star(3, 0);
    let r = run(&o, &m, NetworkKind::Maxplus, 3);
    let step = 210.0 + 2.0 * l;
    for k in 1..=3 {
        let centre = 110.0 + l + (k - 1) as f64 * step;
        assert!(close(r.starts[k][0], centre), "{:?}", r.starts[k]);
        assert!(close(r.starts[k][1], k as f64 * step), "{:?}", r.starts[k]);
    }
    assert_eq!(r.churn.as_ref().unwrap().stats.absences, 1);
}

/// A STAR client back up rejoins at the centre's next broadcast.
#[test]
fn a_star_client_back_up_rejoins_at_the_next_broadcast() {
    let m0 = model("", AvailabilityPolicy::Wait);
    let l = m0.connectivity.latency_ms(0, 1);
    let trace = format!(
        "0.005,avail:c,down\n{},avail:c,up\n",
        (300.0 + 2.0 * l) / 1e3
    );
    let m = model(&trace, AvailabilityPolicy::Skip);
    let o = fedtopo::overlay::star::star(3, 0);
    let r = run(&o, &m, NetworkKind::Maxplus, 6);
    let c = r.churn.as_ref().unwrap();
    assert_eq!((c.stats.absences, c.stats.rejoins), (1, 1));
    // From its rejoin on, `c` starts every round when `b` does.
    let last = r.starts.len() - 1;
    assert!(close(r.starts[last][2], r.starts[last][1]));
}

/// With nobody down (a trace that changes nothing), `skip` and a long
/// time out replay exactly as `wait` (1e-12), on every network model and
/// several overlays of a paper underlay.
#[test]
fn with_nobody_down_every_policy_equals_wait() {
    let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
    let spec = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    };
    let base = spec.build(&u).unwrap();
    let label = &u.routers[0].label;
    let text = format!("time_s,target,value\n0.1,avail:{label},up\n");
    for kind in [OverlayKind::Star, OverlayKind::Mst, OverlayKind::Ring] {
        let o = build_overlay(kind, &u, &base, &BuildOptions::default()).unwrap();
        for net in [NetworkKind::Maxplus, NetworkKind::Paper, NetworkKind::Flow] {
            let mut times = Vec::new();
            for policy in [
                AvailabilityPolicy::Wait,
                AvailabilityPolicy::Skip,
                AvailabilityPolicy::Timeout(1e7),
            ] {
                let m = with_trace(base.clone(), &u, &text, policy);
                times.push(run(&o, &m, net, 30).starts);
            }
            for other in &times[1..] {
                for (a, b) in times[0].iter().flatten().zip(other.iter().flatten()) {
                    assert!(
                        (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                        "{kind} {net}: {a} vs {b}"
                    );
                }
            }
        }
    }
}

/// Seeded churn (exponential up and down times) on a paper underlay: every
/// policy and network model finishes (no deadlock), the same seed gives
/// the same times, and the participation records are consistent: a silo
/// averages only models of its in-neighbours, and every silo of every
/// round averaged, took a model, or was absent.
#[test]
fn random_churn_never_deadlocks_and_records_consistent_rounds() {
    for (underlay, access) in [("aws-gaia", 1e9), ("aws-north-america", 1e8)] {
        random_churn_on(underlay, access);
    }
}

fn random_churn_on(underlay: &str, access_bps: f64) {
    use fedtopo::net::dynamics::generate::{to_csv, Churn};
    let u = load_underlay(Some(underlay), &LoadOptions::default()).unwrap();
    let spec = NetworkSpec {
        access_bps,
        ..NetworkSpec::default()
    };
    let base = spec.build(&u).unwrap();
    let labels: Vec<String> = u.routers.iter().map(|r| r.label.clone()).collect();
    for seed in 0..3u64 {
        let churn = Churn {
            mean_up_s: 2.0,
            mean_down_s: 1.0,
            duration_s: 60.0,
        };
        let text = to_csv(&churn.rows(&labels, seed).unwrap());
        for name in ["star", "mst", "ring", "dcliques", "matcha"] {
            let kind: OverlayKind = name.parse().unwrap();
            let built = EvaluatedOverlay::build(kind, &u, &base, &BuildOptions::default()).unwrap();
            let o = built.schedule();
            // In-neighbours of each silo in round k's overlay.
            let inn = |k: u64| -> Vec<Vec<usize>> {
                let ov = o.round(k);
                (0..ov.silo_count())
                    .map(|j| ov.arcs().iter().filter(|a| a.1 == j).map(|a| a.0).collect())
                    .collect()
            };
            for policy in [
                AvailabilityPolicy::Skip,
                AvailabilityPolicy::Timeout(2000.0),
            ] {
                let m = with_trace(base.clone(), &u, &text, policy);
                for net in [NetworkKind::Maxplus, NetworkKind::Flow] {
                    let opts = ReplayOptions {
                        rounds: 40,
                        ..ReplayOptions::default()
                    };
                    let a = replay(o, &m, net.build(&m).as_mut(), &opts).unwrap();
                    let b = replay(o, &m, net.build(&m).as_mut(), &opts).unwrap();
                    assert_eq!(a.starts, b.starts, "deterministic");
                    // Round by round, as a clock steps (and forgets).
                    let mut clock = EngineClock::new(o, &m, net).unwrap();
                    for k in 0..40 {
                        let t = clock.round_end_times(k, &o.round(k)).unwrap();
                        assert_eq!(t, a.starts[k as usize + 1], "{name}: clock = replay");
                        let p = clock.participation().unwrap();
                        let inn = inn(k);
                        for (i, inn) in inn.iter().enumerate() {
                            if let Some(used) = &p.used[i] {
                                assert!(used.iter().all(|u| inn.contains(u)), "{name}");
                            }
                            if let (Some(from), true) = (&p.joined[i], o.is_static()) {
                                assert!(from.iter().all(|u| inn.contains(u)), "{name}");
                            }
                        }
                        for (i, t) in t.iter().enumerate() {
                            assert!(t.is_finite(), "round {} silo {i}", k + 1);
                        }
                    }
                }
            }
        }
    }
}

/// A silo that joins mid-run (down from time 0, up at `1.5 R`) under
/// `skip` starts, as a silo back up does, from its neighbours' models:
/// round 2 at `2R + l + 200` (as in the rejoin case above, where it left
/// at 5 ms). Under `timeout:500` nobody has given up on it when it comes
/// up (the first time out is at 510 ms): it simply takes part in round 0,
/// late.
#[test]
fn a_silo_joining_mid_run_starts_from_its_neighbours_models() {
    let l = model("", AvailabilityPolicy::Wait)
        .connectivity
        .latency_ms(0, 1);
    let r_ms = 110.0 + l;
    let trace = format!("0,avail:c,down\n{},avail:c,up\n", 1.5 * r_ms / 1e3);
    let o = complete();
    let m = model(&trace, AvailabilityPolicy::Skip);
    let r = run(&o, &m, NetworkKind::Maxplus, 3);
    assert!(
        close(r.starts[2][2], 2.0 * r_ms + l + 200.0),
        "{:?}",
        r.starts[2]
    );
    let mut st =
        RoundStepper::new(&o, &m, NetworkKind::Maxplus.build(&m), Straggler::None, 0).unwrap();
    st.advance_to(3).unwrap();
    assert!(!st.participation(0).unwrap().computed[2]);
    assert_eq!(st.participation(1).unwrap().joined[2], Some(vec![0, 1]));
    let m = model(&trace, AvailabilityPolicy::Timeout(500.0));
    let r = run(&o, &m, NetworkKind::Maxplus, 3);
    assert_eq!(r.churn.as_ref().unwrap().stats.absences, 0);
    let mut st =
        RoundStepper::new(&o, &m, NetworkKind::Maxplus.build(&m), Straggler::None, 0).unwrap();
    st.advance_to(2).unwrap();
    let p0 = st.participation(0).unwrap();
    assert!(p0.computed[2] && p0.used[2].is_some());
}

/// A regression: a silo far behind waited for the model of a round its
/// in-neighbour had been absent from, once a later absence had replaced
/// the earlier one (D-Cliques under `skip`, the churn trace of docs/trace.md, 300
/// rounds deadlocked at round 72). Earlier absences are now kept while a
/// silo is still behind them.
#[test]
fn a_silo_far_behind_does_not_wait_for_a_past_absence() {
    use fedtopo::net::dynamics::generate::{to_csv, Churn};
    let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
    let labels: Vec<String> = u.routers.iter().map(|r| r.label.clone()).collect();
    let churn = Churn {
        mean_up_s: 5.0,
        mean_down_s: 0.5,
        duration_s: 60.0,
    };
    let text = to_csv(&churn.rows(&labels, 1).unwrap());
    let m = with_trace(
        NetworkSpec::default().build(&u).unwrap(),
        &u,
        &text,
        AvailabilityPolicy::Skip,
    );
    let kind: OverlayKind = "dcliques".parse().unwrap();
    let built = EvaluatedOverlay::build(kind, &u, &m, &BuildOptions::default()).unwrap();
    let opts = ReplayOptions {
        rounds: 300,
        ..ReplayOptions::default()
    };
    let r = replay(
        built.schedule(),
        &m,
        NetworkKind::Maxplus.build(&m).as_mut(),
        &opts,
    )
    .unwrap();
    assert!(r.churn.unwrap().stats.rejoins > 0);
}

/// The time breakdown under churn: in the three-silo case of
/// `skip_goes_on_without_a_silo_down_for_good`, `a`'s rounds are 10 ms of
/// compute then `b`'s model in flight, and `c`'s (away for good) are empty;
/// under random churn every silo-round is there, its parts add up to its
/// length, and the critical path ends at the makespan.
#[test]
fn the_time_breakdown_under_churn() {
    let m = model("0.005,avail:c,down\n", AvailabilityPolicy::Skip);
    let l = m.connectivity.latency_ms(0, 1);
    let opts = ReplayOptions {
        rounds: 4,
        breakdown: true,
        ..ReplayOptions::default()
    };
    let r = replay(
        &complete(),
        &m,
        NetworkKind::Maxplus.build(&m).as_mut(),
        &opts,
    )
    .unwrap();
    let b = r.breakdown.as_ref().unwrap();
    assert_eq!(b.rows.len(), 4 * 3);
    for row in &b.rows {
        match row.silo {
            // Away for good: its time stands still at 0.
            2 => assert!(row.end_ms == 0.0 && row.compute_ms == 0.0 && row.via.is_none()),
            i => {
                assert!(close(row.compute_ms, 10.0) && close(row.transfer_ms, 100.0 + l));
                assert_eq!(row.via, Some(1 - i));
            }
        }
    }
    assert!(close(
        b.critical_path().last().unwrap().end_ms,
        r.makespan_ms()
    ));
    use fedtopo::net::dynamics::generate::{to_csv, Churn};
    let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
    let labels: Vec<String> = u.routers.iter().map(|r| r.label.clone()).collect();
    let churn = Churn {
        mean_up_s: 2.0,
        mean_down_s: 1.0,
        duration_s: 60.0,
    };
    let text = to_csv(&churn.rows(&labels, 4).unwrap());
    for policy in [
        AvailabilityPolicy::Skip,
        AvailabilityPolicy::Timeout(1000.0),
    ] {
        let m = with_trace(NetworkSpec::default().build(&u).unwrap(), &u, &text, policy);
        for name in ["star", "ring", "dcliques"] {
            let kind: OverlayKind = name.parse().unwrap();
            let built = EvaluatedOverlay::build(kind, &u, &m, &BuildOptions::default()).unwrap();
            let opts = ReplayOptions {
                rounds: 30,
                breakdown: true,
                ..ReplayOptions::default()
            };
            let r = replay(
                built.schedule(),
                &m,
                NetworkKind::Flow.build(&m).as_mut(),
                &opts,
            )
            .unwrap();
            let b = r.breakdown.as_ref().unwrap();
            assert_eq!(b.rows.len(), 30 * u.node_count(), "{name} {policy:?}");
            for row in &b.rows {
                let parts = row.compute_ms + row.transfer_ms + row.wait_ms;
                assert!(
                    (parts - (row.end_ms - row.start_ms)).abs() <= 1e-6
                        && row.compute_ms >= 0.0
                        && row.transfer_ms >= -1e-9
                        && row.wait_ms >= -1e-9,
                    "{name} {policy:?}: {row:?}"
                );
                let k = row.round as usize;
                assert_eq!(row.end_ms, r.starts[k + 1][row.silo]);
            }
            let path = b.critical_path();
            assert!(
                close(path.last().unwrap().end_ms, r.makespan_ms()),
                "{name} {policy:?}"
            );
        }
    }
}
