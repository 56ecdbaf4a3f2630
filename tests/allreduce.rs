//! `ring-allreduce` and `mesh-allreduce` through the public API: every
//! operation of an evaluated overlay either answers consistently with the
//! chunk recurrences (`fedtopo::timing::allreduce`,
//! `fedtopo::timing::mesh_allreduce`) or refuses with a message.

use fedtopo::design::export::{export_candidate, ExportError};
use fedtopo::design::search::{
    design_candidates, DesignOptions, RoundsPredictor, DEFAULT_CANDIDATES, DEFAULT_LABEL_SHARE,
};
use fedtopo::evaluate::EvalError;
use fedtopo::graph::failures::FailureSpec;
use fedtopo::mixing::consensus::ConsensusRule;
use fedtopo::mixing::ConsensusMatrix;
use fedtopo::network::{FlowNetwork, MaxPlusNetwork};
use fedtopo::overlay::build::parse_overlay_list;
use fedtopo::prelude::*;
use fedtopo::replay::Straggler;
use fedtopo::timing::allreduce::{AllReduceRound, AllReduceSchedule};
use fedtopo::timing::mesh_allreduce::MeshAllReduceRound;

/// Both all-reduce kinds.
const KINDS: [OverlayKind; 2] = [OverlayKind::RingAllReduce, OverlayKind::MeshAllReduce];

fn setting(access: &str) -> (Underlay, DelayModel) {
    let u = load_underlay(None, &LoadOptions::default()).unwrap();
    let m = NetworkSpec::from_knobs(|k| (k == "access").then_some(access))
        .unwrap()
        .delay_model(&u);
    (u, m)
}

#[test]
fn it_is_parsed_built_and_timed_by_its_recurrence() {
    for name in ["ring-allreduce", "allreduce", "all-reduce"] {
        assert_eq!(
            name.parse::<OverlayKind>().unwrap(),
            OverlayKind::RingAllReduce
        );
    }
    for name in ["mesh-allreduce", "mesh-all-reduce"] {
        assert_eq!(
            name.parse::<OverlayKind>().unwrap(),
            OverlayKind::MeshAllReduce
        );
    }
    assert!("ring-allreduce:k=2".parse::<OverlayKind>().is_err());
    assert!("mesh-allreduce:k=2".parse::<OverlayKind>().is_err());
    let (u, m) = setting("100M");
    let opts = BuildOptions::default();
    let e = EvaluatedOverlay::build(OverlayKind::RingAllReduce, &u, &m, &opts).unwrap();
    let tour = e.allreduce().unwrap().tour().unwrap().to_vec();
    // Its ring is the ring-opt tour's (any rotation).
    let ring_opt = EvaluatedOverlay::build(OverlayKind::RingOpt, &u, &m, &opts).unwrap();
    assert_eq!(
        e.overlay().unwrap().arcs(),
        ring_opt.overlay().unwrap().arcs()
    );
    let t = e.cycle_time(&m).unwrap().cycle_time_ms;
    let r = AllReduceRound::new(&m, &tour).unwrap();
    assert_eq!(t, r.cycle_time("x").unwrap().cycle_time_ms);
    // At 100 Mbit/s access it is far faster than STAR, whose centre takes
    // every model; gossip on the ring is faster still per round.
    let star = EvaluatedOverlay::build(OverlayKind::Star, &u, &m, &opts).unwrap();
    let s = star.cycle_time(&m).unwrap().cycle_time_ms;
    let ro = ring_opt.cycle_time(&m).unwrap().cycle_time_ms;
    assert!(t < s / 5.0 && t > ro, "{t} {s} {ro}");
    // The mesh: the complete digraph, two chunk steps a round, faster than
    // the ring here (its 2(n-1) steps each pay a latency).
    let mesh = EvaluatedOverlay::build(OverlayKind::MeshAllReduce, &u, &m, &opts).unwrap();
    let n = m.silo_count();
    assert_eq!(mesh.allreduce(), Some(&AllReduceSchedule::Mesh));
    assert_eq!(mesh.overlay().unwrap().arc_count(), n * (n - 1));
    let tm = mesh.cycle_time(&m).unwrap().cycle_time_ms;
    let rm = MeshAllReduceRound::new(&m).cycle_time("x").unwrap();
    assert_eq!(tm, rm.cycle_time_ms);
    assert!(tm < t, "{tm} {t}");
    for e in [e, mesh] {
        clock_and_replays_agree(&e, &m);
    }
}

/// `e`'s clock and its event replay agree on the maxplus network and, round
/// by round, on the flow network.
fn clock_and_replays_agree(e: &EvaluatedOverlay, m: &DelayModel) {
    let rounds = 4;
    let mut clock = e.clock(e.schedule(), m, NetworkKind::Maxplus).unwrap();
    let replayed = e
        .replay(
            m,
            &mut MaxPlusNetwork::new(m),
            &ReplayOptions {
                rounds,
                ..ReplayOptions::default()
            },
            None,
            &mut |_| {},
        )
        .unwrap();
    for k in 0..rounds {
        let end = clock.round_end_times(k, &e.schedule().round(k)).unwrap();
        for (a, b) in end.iter().zip(&replayed.starts[k as usize + 1]) {
            assert!((a - b).abs() <= 1e-9 * a.max(1.0), "{k}: {a} {b}");
        }
    }
    // The flow network replays it too, and clocks it round by round.
    let mut flow_clock = e.clock(e.schedule(), m, NetworkKind::Flow).unwrap();
    let flow = e
        .replay(
            m,
            &mut FlowNetwork::new(m),
            &ReplayOptions {
                rounds,
                ..ReplayOptions::default()
            },
            None,
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(flow.network, "flow");
    for k in 0..rounds {
        let end = flow_clock
            .round_end_times(k, &e.schedule().round(k))
            .unwrap();
        assert_eq!(end, flow.starts[k as usize + 1]);
    }
}

#[test]
fn its_consensus_is_the_exact_average_and_other_rules_are_refused() {
    let (u, m) = setting("10G");
    for kind in KINDS {
        consensus_is_the_exact_average(
            &EvaluatedOverlay::build(kind, &u, &m, &BuildOptions::default()).unwrap(),
            &m,
        );
    }
}

fn consensus_is_the_exact_average(e: &EvaluatedOverlay, m: &DelayModel) {
    let n = m.silo_count();
    let rule = ConsensusRule::Auto.for_overlay(e).unwrap();
    assert_eq!(rule, ConsensusRule::Average);
    let w = rule.matrix(&e.schedule().round(0)).unwrap();
    assert_eq!(w.as_slice(), ConsensusMatrix::average(n).as_slice());
    for bad in ["half", "local-degree", "mh"] {
        let err = ConsensusRule::parse(bad)
            .unwrap()
            .for_overlay(e)
            .unwrap_err()
            .to_string();
        assert!(err.contains("an all-reduce"), "{bad}: {err}");
    }
    assert!(ConsensusRule::parse("fedavg")
        .unwrap()
        .for_overlay(e)
        .is_ok());
}

#[test]
fn what_it_does_not_do_is_refused_with_a_message() {
    let (u, m) = setting("10G");
    for kind in KINDS {
        refuses_with_a_message(
            &EvaluatedOverlay::build(kind, &u, &m, &BuildOptions::default()).unwrap(),
            &m,
        );
    }
}

fn refuses_with_a_message(e: &EvaluatedOverlay, m: &DelayModel) {
    let says = |r: Result<(), EvalError>, what: &str| {
        let msg = r.unwrap_err().to_string();
        assert!(msg.contains("an all-reduce") && msg.contains(what), "{msg}");
    };
    says(
        e.with_failures(Some("node:0.9".parse::<FailureSpec>().unwrap()), 1)
            .map(|_| ()),
        "failures",
    );
    says(e.export(&[], None, None).map(|_| ()), "train it by name");
    let straggling = ReplayOptions {
        rounds: 2,
        straggler: Straggler::LogNormal { sigma: 0.5 },
        ..ReplayOptions::default()
    };
    says(
        e.replay(
            m,
            &mut MaxPlusNetwork::new(m),
            &straggling,
            None,
            &mut |_| {},
        )
        .map(|_| ()),
        "stragglers",
    );
}

#[test]
fn design_ranks_it_with_stars_rounds_and_does_not_export_it() {
    let (u, m) = setting("100M");
    let build = BuildOptions::default();
    let options = DesignOptions {
        kinds: parse_overlay_list(DEFAULT_CANDIDATES).unwrap(),
        ..DesignOptions::default()
    };
    let c = design_candidates(
        &u,
        &m,
        &build,
        &options,
        &RoundsPredictor::fitted(0.8, DEFAULT_LABEL_SHARE),
    )
    .unwrap();
    let find = |name: &str| c.iter().find(|c| c.name == name).unwrap();
    let s = find("star");
    let dir = std::env::temp_dir().join(format!("fedtopo-allreduce-{}", std::process::id()));
    for name in ["ring-allreduce", "mesh-allreduce"] {
        let a = find(name);
        assert_eq!(a.mixing_time, 1.0);
        assert_eq!(a.predicted_rounds, s.predicted_rounds);
        assert!(a.predicted_time_ms < s.predicted_time_ms);
        let err = export_candidate(&dir, a, &u, &m, &build).unwrap_err();
        assert!(matches!(err, ExportError::AllReduce { .. }), "{err}");
        assert_eq!(err.no_file_form(), Some(name));
    }
    std::fs::remove_dir_all(&dir).ok();
}
