//! Network dynamics (`--trace`): hand-computed cases (a bandwidth change
//! mid-transfer on every network model, a silo down for exactly one
//! round), a trace that changes nothing equals the static replay to 1e-12
//! on every network model and several overlays, seeded generators are
//! deterministic, and the knob reaches simulate and the clocks.

use std::sync::Arc;

use fedtopo::net::dynamics::generate::{to_csv, Churn, Diurnal};
use fedtopo::net::dynamics::read::parse;
use fedtopo::net::dynamics::AvailabilityPolicy;
use fedtopo::prelude::*;

mod common;

/// Two routers `a`, `b`, 100 km apart, a 1 Gbit/s link; one silo each,
/// 100 Mbit/s access both ways, 1e7-bit models, 10 ms of compute per round,
/// and the trace `trace` (rows after the header).
fn pair_model(trace: &str) -> DelayModel {
    let (u, m) = common::tiny_network(&["a", "b"], &[(0, 1, 100.0)], 1e8);
    if trace.is_empty() {
        return m;
    }
    let text = format!("time_s,target,value\n{trace}");
    common::with_trace(m, &u, &text, AvailabilityPolicy::Wait)
}

fn run(m: &DelayModel, kind: NetworkKind, rounds: u64) -> ReplayResult {
    let o = Overlay::from_edges("pair", 2, &[(0, 1)]);
    let opts = ReplayOptions {
        rounds,
        ..ReplayOptions::default()
    };
    replay(&o, m, kind.build(m).as_mut(), &opts).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Silo `a`'s uplink halves (1e8 -> 5e7 bit/s) at 50 ms, while its first
/// model (sent at 10 ms, after computing) is on the way: 40 ms at 1e8
/// sends 4e6 bit, the 6e6 left take 120 ms at 5e7: fully sent at 170 ms
/// instead of 110 ms. The other direction is untouched (110 ms). Max-plus
/// and flow: arrival + latency `l`. Paper: the path rate `min(Cup, Cdn, A)`
/// is the uplink here too, then the serialised download adds `M/Cdn` =
/// 100 ms at the receiver.
#[test]
fn a_bandwidth_change_mid_transfer_is_exact_on_every_model() {
    let m = pair_model("0.05,up:a,5e7\n");
    let l = m.connectivity.latency_ms(0, 1);
    for (kind, want) in [
        (NetworkKind::Maxplus, [110.0 + l, 170.0 + l]),
        (NetworkKind::Flow, [110.0 + l, 170.0 + l]),
        (NetworkKind::Paper, [210.0 + l, 270.0 + l]),
    ] {
        let r = run(&m, kind, 1);
        assert!(r.network.ends_with("+traces"), "{}", r.network);
        for (i, (&got, &want)) in r.starts[1].iter().zip(&want).enumerate() {
            assert!(
                close(got, want),
                "{kind}: silo {i} starts round 1 at {got} ms, hand-computed {want} ms"
            );
        }
    }
    // The same trace before the transfer starts: the new rate throughout.
    let early = pair_model("0,up:a,5e7\n");
    let r = run(&early, NetworkKind::Maxplus, 1);
    assert!(close(r.starts[1][1], 10.0 + l + 200.0));
}

/// Round length `R = 10 + l + 100` ms. Silo `b` is down over `[R, 2R)`,
/// exactly its round 1: it computes from `2R` (done `2R + 10`), and `a`'s
/// model, sent at `R + 10`, waits at `b`'s downlink until `2R` (then
/// 100 ms): `b` starts round 2 at `2R + 100 + l = 3R - 10`; `b`'s model,
/// sent at `2R + 10`, reaches `a` at `3R`. Round 1 lasted `2R` for `a`:
/// one round lost, and the rounds after it are as long as before.
#[test]
fn a_silo_down_for_exactly_one_round_costs_one_round() {
    let stat = pair_model("");
    let l = stat.connectivity.latency_ms(0, 1);
    let r_ms = 110.0 + l;
    let static_run = run(&stat, NetworkKind::Maxplus, 6);
    assert!(close(static_run.starts[1][0], r_ms));
    let trace = format!(
        "{},avail:b,down\n{},avail:b,up\n",
        r_ms / 1e3,
        2.0 * r_ms / 1e3
    );
    let m = pair_model(&trace);
    for kind in [NetworkKind::Maxplus, NetworkKind::Flow] {
        let r = run(&m, kind, 6);
        assert!(
            close(r.starts[1][0], r_ms) && close(r.starts[1][1], r_ms),
            "{kind}"
        );
        assert!(
            close(r.starts[2][0], 3.0 * r_ms),
            "{kind}: {}",
            r.starts[2][0]
        );
        assert!(
            close(r.starts[2][1], 3.0 * r_ms - 10.0),
            "{kind}: {}",
            r.starts[2][1]
        );
        // After the outage the pair runs at its static pace again, one
        // round later: the makespan grows by about R (the 10 ms offset
        // between the silos closes within a round).
        let delay = r.makespan_ms() - static_run.makespan_ms();
        assert!(
            (delay - r_ms).abs() <= 10.0 + 1e-9,
            "{kind}: {delay} vs {r_ms}"
        );
    }
    // Down for good: the replay reports the stuck silo instead of hanging.
    let gone = pair_model("0.05,avail:b,down\n");
    let o = Overlay::from_edges("pair", 2, &[(0, 1)]);
    let e = replay(
        &o,
        &gone,
        NetworkKind::Maxplus.build(&gone).as_mut(),
        &ReplayOptions {
            rounds: 3,
            ..ReplayOptions::default()
        },
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("silo 1 goes down at 0.05 s and the trace never brings it back up"),
        "{e}"
    );
}

/// Extra access latency (5 ms on `a`) and core-link latency (7 ms on
/// `a|b`) from 0 s add to both directions on every model (paper: after
/// its serialised 100 ms download). A link latency change later than the
/// transfers changes nothing.
#[test]
fn extra_latency_adds_to_both_directions() {
    let m = pair_model("0,latency:a,5\n0,link_latency:a|b,7\n9,link_latency:a|b,70\n");
    let l = m.connectivity.latency_ms(0, 1);
    for (kind, want) in [
        (NetworkKind::Maxplus, 122.0 + l),
        (NetworkKind::Flow, 122.0 + l),
        (NetworkKind::Paper, 222.0 + l),
    ] {
        let r = run(&m, kind, 1);
        assert!(close(r.starts[1][0], want), "{kind}: {:?}", r.starts[1]);
        assert!(close(r.starts[1][1], want), "{kind}: {:?}", r.starts[1]);
    }
}

/// A trace whose every value is the static one (access, core links,
/// availability up, no extra latency), at random times, replays to the
/// static times within 1e-12 (relative) on every network model and several
/// overlays: the event path with traces is today's replay.
#[test]
fn a_trace_that_changes_nothing_equals_the_static_replay() {
    use rand::{Rng, SeedableRng};
    let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
    let spec = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    };
    let m = spec.build(&u).unwrap();
    let labels: Vec<String> = u.routers.iter().map(|r| r.label.clone()).collect();
    for seed in 0..3u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut rows = String::from("time_s,target,value\n");
        for (i, label) in labels.iter().enumerate() {
            let mut t = 0.0;
            for k in 0..4 {
                t += rng.gen::<f64>() * 0.3;
                let (kind, value) = match (i + k) % 4 {
                    0 => ("access", "1e9".to_string()),
                    1 => ("avail", "up".to_string()),
                    2 => ("latency", "0".to_string()),
                    _ => ("up", format!("{}", m.access.up[i])),
                };
                rows += &format!("{t},{kind}:{label},{value}\n");
            }
        }
        for (l, link) in u.links.iter().enumerate().take(6) {
            let cap = m.connectivity.link_capacity_bps(l);
            let t = rng.gen::<f64>();
            let (a, b) = (&u.routers[link.a].label, &u.routers[link.b].label);
            rows += &format!("{t},link:{a}|{b},{cap}\n{t},link_latency:{a}|{b},0\n");
        }
        let d = parse(&rows, "same.csv", &u, m.connectivity.placement()).unwrap();
        let mut traced = m.clone();
        traced.dynamics = Some(Arc::new(d));
        for kind in [
            OverlayKind::Ring,
            OverlayKind::Star,
            OverlayKind::Mst,
            OverlayKind::Complete,
        ] {
            let o = EvaluatedOverlay::build(kind, &u, &m, &BuildOptions::default()).unwrap();
            for net in NetworkKind::ALL {
                let opts = ReplayOptions {
                    rounds: 12,
                    ..ReplayOptions::default()
                };
                let a = replay(o.schedule(), &m, net.build(&m).as_mut(), &opts).unwrap();
                let b = replay(o.schedule(), &traced, net.build(&traced).as_mut(), &opts).unwrap();
                assert_eq!(b.network, format!("{net}+traces"));
                for (x, y) in a.starts.iter().flatten().zip(b.starts.iter().flatten()) {
                    assert!(
                        (x - y).abs() <= 1e-12 * x.abs().max(1.0),
                        "seed {seed}, {kind:?} on {net}: {x} vs {y}"
                    );
                }
            }
        }
    }
}

/// The clocks: with a trace the maxplus clock runs events (no recurrence)
/// and follows the trace; without one it is the recurrence.
#[test]
fn clocks_run_events_with_a_trace() {
    let m = pair_model("0.05,up:a,5e7\n");
    let o = Overlay::from_edges("pair", 2, &[(0, 1)]);
    let mut c = EngineClock::new(&o, &m, NetworkKind::Maxplus).unwrap();
    assert!(c.is_event_driven());
    let t = c.round_end_times(0, &o).unwrap();
    let l = m.connectivity.latency_ms(0, 1);
    assert!(close(t[1], 170.0 + l), "{t:?}");
    let stat = pair_model("");
    assert!(!EngineClock::new(&o, &stat, NetworkKind::Maxplus)
        .unwrap()
        .is_event_driven());
}

#[test]
fn generators_and_replays_are_deterministic_under_a_seed() {
    let labels = vec!["a".to_string(), "b".to_string()];
    let churn = Churn {
        mean_up_s: 0.5,
        mean_down_s: 0.1,
        duration_s: 20.0,
    };
    let diurnal = Diurnal {
        base_bps: 1e8,
        depth: 0.7,
        period_s: 2.0,
        step_s: 0.1,
        duration_s: 20.0,
    };
    let mut outs = Vec::new();
    for _ in 0..2 {
        let mut rows = churn.rows(&labels, 9).unwrap();
        rows.extend(diurnal.rows(&labels, 9).unwrap());
        let text = to_csv(&rows);
        let body = text.split_once('\n').unwrap().1.to_string();
        let m = pair_model(&body);
        let r = run(&m, NetworkKind::Flow, 40);
        outs.push((text, r.starts));
    }
    assert_eq!(outs[0], outs[1]);
    let other = to_csv(&churn.rows(&labels, 10).unwrap());
    assert_ne!(outs[0].0, other);
    // The churn slowed the run down against the static pair.
    let stat = run(&pair_model(""), NetworkKind::Flow, 40);
    let traced_end = outs[0]
        .1
        .last()
        .unwrap()
        .iter()
        .copied()
        .fold(0.0, f64::max);
    assert!(traced_end > stat.makespan_ms());
}

/// `--trace` through the CLI: simulate names the model and the trace,
/// the same seed writes the same trace and the same output, and a bad
/// row is an error naming the file, line and column.
#[test]
fn simulate_takes_a_trace_and_reports_bad_rows() {
    let dir = std::env::temp_dir().join(format!("fedtopo-dynamics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("churn.csv");
    let t = trace.to_str().unwrap();
    let gen = [
        "trace",
        "churn",
        "aws-gaia",
        "--mean-up-s",
        "0.4",
        "--mean-down-s",
        "0.2",
        "--duration-s",
        "10",
        "--seed",
        "3",
    ];
    let a = common::fedtopo(&gen);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(a.stdout, common::fedtopo(&gen).stdout);
    std::fs::write(&trace, &a.stdout).unwrap();
    let sim = [
        "simulate",
        "aws-gaia",
        "--overlays",
        "ring,star",
        "--rounds",
        "10",
        "--network",
        "flow",
        "--trace",
        t,
        "--format",
        "json",
    ];
    let s = common::fedtopo(&sim);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let text = String::from_utf8_lossy(&s.stdout);
    assert!(text.contains("\"flow+traces\""), "{text}");
    assert!(text.contains("event replay with traces"), "{text}");
    assert_eq!(
        s.stdout,
        common::fedtopo(&sim).stdout,
        "same seed, same bytes"
    );
    std::fs::write(&trace, "time_s,target,value\n1,up:Atlantis,1G\n").unwrap();
    let bad = common::fedtopo(&sim);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains(&format!("{t}:2: column 2 (target): no silo or router")),
        "{err}"
    );
    // An unlimited access capacity cannot follow a trace.
    std::fs::write(&trace, "time_s,target,value\n1,avail:Tokyo,down\n").unwrap();
    let mut inf = sim.to_vec();
    inf.extend(["--access", "inf"]);
    let e = common::fedtopo(&inf);
    assert!(!e.status.success());
    assert!(String::from_utf8_lossy(&e.stderr).contains("unlimited"));
    std::fs::remove_dir_all(&dir).ok();
}

/// The core link `a|b` drops to 5e7 bit/s at 50 ms. Flow: both flows
/// (one per direction) cross it, their rate falls from 1e8 (the access
/// links) to 5e7 at 50 ms: 170 ms + `l` as above. Max-plus: eq. (3)'s
/// `M/A` term had finished (1e7 bit at 1e9 bit/s: 10 ms), so nothing
/// changes there: 110 ms + `l`.
#[test]
fn a_core_link_change_reshares_flows() {
    let m = pair_model("0.05,link:a|b,5e7\n");
    let l = m.connectivity.latency_ms(0, 1);
    let flow = run(&m, NetworkKind::Flow, 1);
    assert!(close(flow.starts[1][0], 170.0 + l), "{:?}", flow.starts[1]);
    assert!(close(flow.starts[1][1], 170.0 + l), "{:?}", flow.starts[1]);
    let mp = run(&m, NetworkKind::Maxplus, 1);
    assert!(close(mp.starts[1][1], 110.0 + l), "{:?}", mp.starts[1]);
}

/// The flow model re-fills every flow at a capacity change and
/// incrementally otherwise; the reference re-fills every flow at every
/// change. With diurnal access, churn and core-link traces on aws-gaia,
/// both give the same times.
#[test]
fn flow_with_traces_equals_the_full_recompute_reference() {
    use fedtopo::network::FlowNetwork;
    let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
    let m0 = NetworkSpec {
        access_bps: 1e9,
        ..NetworkSpec::default()
    }
    .build(&u)
    .unwrap();
    let labels: Vec<String> = u.routers.iter().map(|r| r.label.clone()).collect();
    for seed in 0..4u64 {
        let mut rows = Diurnal {
            base_bps: 1e9,
            depth: 0.8,
            period_s: 1.0,
            step_s: 0.05,
            duration_s: 5.0,
        }
        .rows(&labels, seed)
        .unwrap();
        rows.extend(
            Churn {
                mean_up_s: 0.6,
                mean_down_s: 0.05,
                duration_s: 5.0,
            }
            .rows(&labels, seed)
            .unwrap(),
        );
        let mut text = to_csv(&rows);
        for (k, link) in u.links.iter().enumerate().take(8) {
            text += &format!(
                "{},link:{}|{},{}\n",
                0.1 * (k + 1) as f64,
                u.routers[link.a].label,
                u.routers[link.b].label,
                2e8 + 1e8 * k as f64
            );
        }
        let d = parse(&text, "g.csv", &u, m0.connectivity.placement()).unwrap();
        let mut m = m0.clone();
        m.dynamics = Some(Arc::new(d));
        for kind in [OverlayKind::Ring, OverlayKind::Complete, OverlayKind::Star] {
            let o = EvaluatedOverlay::build(kind, &u, &m0, &BuildOptions::default()).unwrap();
            let opts = ReplayOptions {
                rounds: 15,
                ..ReplayOptions::default()
            };
            let inc = replay(o.schedule(), &m, &mut FlowNetwork::new(&m), &opts).unwrap();
            let full = replay(
                o.schedule(),
                &m,
                &mut FlowNetwork::new(&m).with_full_recompute(),
                &opts,
            )
            .unwrap();
            for (a, b) in inc
                .starts
                .iter()
                .flatten()
                .zip(full.starts.iter().flatten())
            {
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                    "seed {seed}, {kind:?}: {a} vs {b}"
                );
            }
            // The trace matters: slower than the static network.
            let stat = replay(o.schedule(), &m0, &mut FlowNetwork::new(&m0), &opts).unwrap();
            assert!(
                inc.makespan_ms() > stat.makespan_ms() * 1.05,
                "{kind:?}: {} vs {}",
                inc.makespan_ms(),
                stat.makespan_ms()
            );
        }
    }
}

/// `trace` is an axis of experiment files (the same knob): a `simulate`
/// grid over no trace and a trace file reports which model ran and no
/// max-plus cycle time for the traced rows; `compare` refuses a trace.
#[test]
fn experiment_files_take_a_trace_axis() {
    let dir = std::env::temp_dir().join(format!("fedtopo-dyn-exp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("slow.csv"),
        "time_s,target,value\n0.2,access:Tokyo,100M\n0.5,avail:Seoul,down\n0.9,avail:Seoul,up\n",
    )
    .unwrap();
    let file = dir.join("e.toml");
    std::fs::write(
        &file,
        "name = \"dyn\"\ndescription = \"t\"\nkind = \"simulate\"\n\
         [grid]\nunderlay = [\"aws-gaia\"]\noverlay = [\"ring\"]\nnetwork = [\"maxplus\", \"flow\"]\n\
         rounds = [20]\ntrace = [\"\", \"slow.csv\"]\n",
    )
    .unwrap();
    let out = dir.join("out");
    let o = common::fedtopo(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (model, tau, trace) = (col("network_model"), col("cycle_time_ms"), col("trace"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4, "{csv}");
    for r in &rows {
        let traced = !r[trace].is_empty();
        assert_eq!(r[model].ends_with("+traces"), traced, "{csv}");
        assert_eq!(r[tau].is_empty(), traced, "{csv}");
    }
    std::fs::write(
        &file,
        "name = \"dyn\"\ndescription = \"t\"\nkind = \"compare\"\n\
         [grid]\nunderlay = [\"aws-gaia\"]\noverlay = [\"ring\"]\ntrace = [\"slow.csv\"]\n",
    )
    .unwrap();
    let out2 = dir.join("out2");
    let o = common::fedtopo(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out2.to_str().unwrap(),
    ]);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(all.contains("cannot follow a trace"), "{all}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Closed forms refuse a network with dynamics rather than ignore it: the
/// cycle time in the library, and the commands that time the static
/// network (compare, design, ...) on the command line.
#[test]
fn closed_forms_refuse_a_trace() {
    let u = load_underlay(Some("aws-gaia"), &LoadOptions::default()).unwrap();
    let mut m = NetworkSpec::default().build(&u).unwrap();
    let o = EvaluatedOverlay::build(OverlayKind::Ring, &u, &m, &BuildOptions::default()).unwrap();
    assert!(o.cycle_time(&m).is_ok());
    m.dynamics = Some(Arc::new(fedtopo::net::dynamics::Dynamics::new(
        m.silo_count(),
        "t.csv",
    )));
    let e = o.cycle_time(&m).unwrap_err().to_string();
    assert!(e.contains("cannot follow a trace"), "{e}");
    let dir = std::env::temp_dir().join(format!("fedtopo-dyn-cf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = dir.join("t.csv");
    std::fs::write(
        &t,
        "time_s,target,value\n1,avail:Tokyo,down\n2,avail:Tokyo,up\n",
    )
    .unwrap();
    for cmd in [
        &["compare", "aws-gaia"][..],
        &["design", "aws-gaia"],
        &["augment", "aws-gaia"],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--trace", t.to_str().unwrap()]);
        let o = common::fedtopo(&args);
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("cannot follow a trace"), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
