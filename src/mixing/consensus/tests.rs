use super::*;
use crate::overlay::{complete, star::star};
use crate::replay::RoundParticipation;

fn two_cliques() -> Overlay {
    // Two 10-cliques joined by the edge 1 -- 11 (D-Cliques notes, sec. 3).
    let mut e = Vec::new();
    for base in [0, 10] {
        for a in 0..10 {
            for b in a + 1..10 {
                e.push((base + a, base + b));
            }
        }
    }
    e.push((1, 11));
    Overlay::from_edges("cliques", 20, &e)
}

#[test]
fn identity_is_recognised_exactly() {
    assert!(ConsensusMatrix::identity(4).is_identity());
    assert!(!ConsensusMatrix::average(4).is_identity());
    assert!(ConsensusMatrix::average(1).is_identity());
    let mut rows = vec![
        vec![1.0, 0.0, 0.0],
        vec![0.0, 1.0, 0.0],
        vec![0.0, 0.0, 1.0],
    ];
    rows[2] = vec![0.0, 1.0, 0.0];
    assert!(!ConsensusMatrix::from_rows(rows).unwrap().is_identity());
}

#[test]
fn local_degree_on_two_cliques_matches_hand_values() {
    let o = two_cliques();
    for a in [local_degree(&o), metropolis_hastings(&o)] {
        // Node 0 (no inter edge, degree 9): self 12/110, to node 1 (degree 10) 10/110, others 11/110.
        assert!((a.get(0, 0) - 12.0 / 110.0).abs() < 1e-12);
        assert!((a.get(0, 1) - 10.0 / 110.0).abs() < 1e-12);
        assert!((a.get(0, 2) - 11.0 / 110.0).abs() < 1e-12);
        // Node 1: every weight, self included, 1/11.
        for j in (0..10).chain([11]) {
            assert!((a.get(1, j) - 1.0 / 11.0).abs() < 1e-12, "{j}");
        }
        assert!(a.is_symmetric(1e-15));
        assert!(a.row_sum_error() < 1e-12 && a.column_sum_error() < 1e-12);
        assert!(a.check_support(&o).is_ok());
    }
}

#[test]
fn undirected_overlays_give_doubly_stochastic_symmetric_matrices() {
    let tree = Overlay::from_edges("t", 6, &[(0, 1), (1, 2), (1, 3), (3, 4), (4, 5)]);
    for o in [tree, complete(7), two_cliques()] {
        for rule in [
            ConsensusRule::Auto,
            ConsensusRule::LocalDegree,
            ConsensusRule::MetropolisHastings,
            ConsensusRule::Matcha { alpha: 0.05 },
        ] {
            let a = rule.matrix(&o).unwrap();
            assert!(a.is_symmetric(1e-14), "{rule:?} {}", o.name);
            assert!(a.row_sum_error() < 1e-12 && a.column_sum_error() < 1e-12);
            assert!(a.as_slice().iter().all(|&x| x >= 0.0));
            a.check_support(&o).unwrap();
        }
    }
}

#[test]
fn complete_overlay_local_degree_is_exact_average() {
    let a = local_degree(&complete(5));
    let avg = ConsensusMatrix::average(5);
    for (x, y) in a.as_slice().iter().zip(avg.as_slice()) {
        assert!((x - y).abs() < 1e-15);
    }
}

#[test]
fn directed_ring_gets_halves_and_star_gets_average() {
    let r = Overlay::directed_ring("ring", 5, &[0, 3, 1, 4, 2]);
    let a = ConsensusRule::Auto.matrix(&r).unwrap();
    assert_eq!(a.get(3, 0), 0.5);
    assert_eq!(a.get(3, 3), 0.5);
    assert_eq!(a.get(0, 3), 0.0);
    assert!(a.row_sum_error() < 1e-15 && a.column_sum_error() < 1e-15);
    assert!(!a.is_symmetric(0.0));
    let s = star(5, 2);
    let a = ConsensusRule::Auto.matrix(&s).unwrap();
    assert!(a.as_slice().iter().all(|&x| (x - 0.2).abs() < 1e-15));
    assert!(matches!(
        ConsensusRule::Half.matrix(&complete(3)),
        Err(ConsensusError::NotARing { .. })
    ));
    // Fastest-mixing weights need an undirected overlay; on the
    // complete graph they are exact averaging.
    assert_eq!(
        ConsensusRule::parse("fastest").ok(),
        Some(ConsensusRule::Fastest)
    );
    let f = ConsensusRule::Fastest
        .matrix(&complete(4))
        .unwrap_or_else(|e| panic!("{e}"));
    for i in 0..4 {
        for j in 0..4 {
            assert!((f.get(i, j) - 0.25).abs() < 1e-9);
        }
    }
    assert!(matches!(
        ConsensusRule::Fastest.matrix(&r),
        Err(ConsensusError::Mixing(_))
    ));
    // On two cliques joined by one edge they mix faster than
    // Metropolis–Hastings, on the same support.
    let o = two_cliques();
    let f = ConsensusRule::Fastest.matrix(&o).unwrap();
    f.check_support(&o).unwrap();
    let mh = metropolis_hastings(&o);
    let gap = |m: &ConsensusMatrix| {
        crate::mixing::spectral_gap(20, m.as_slice()).unwrap_or_else(|e| panic!("{e}"))
    };
    assert!(gap(&f) > gap(&mh) * 1.5, "{} vs {}", gap(&f), gap(&mh));
}

#[test]
fn custom_matrices_are_checked() {
    let r = Overlay::directed_ring("ring", 3, &[0, 1, 2]);
    assert!(matches!(
        ConsensusMatrix::from_rows(vec![vec![0.5, 0.4, 0.0]; 3]),
        Err(ConsensusError::RowSum { row: 0, .. })
    ));
    assert!(matches!(
        ConsensusMatrix::from_rows(vec![vec![1.0, 0.0]]),
        Err(ConsensusError::Shape { .. })
    ));
    // Row 0 receives only from silo 2 on this ring.
    let bad = ConsensusMatrix::from_rows(vec![
        vec![0.5, 0.5, 0.0],
        vec![0.5, 0.5, 0.0],
        vec![0.0, 0.5, 0.5],
    ])
    .unwrap();
    assert!(matches!(
        ConsensusRule::Custom(bad).matrix(&r),
        Err(ConsensusError::NotAnArc { row: 0, col: 1 })
    ));
    let dir = std::env::temp_dir().join(format!("fedtopo-consensus-{}", std::process::id()));
    std::fs::write(&dir, "# ring\n0.5,0,0.5\n0.5 0.5 0\n0,0.5,0.5\n").unwrap();
    let rule = ConsensusRule::parse(&format!("file:{}", dir.display())).unwrap();
    assert_eq!(rule.matrix(&r).unwrap(), half(&r).unwrap());
    std::fs::remove_file(&dir).ok();
    assert!(ConsensusRule::parse("nope").is_err());
    assert_eq!(
        ConsensusRule::parse("matcha:0.2").unwrap(),
        ConsensusRule::Matcha { alpha: 0.2 }
    );
    for bad in [
        "matcha:nan",
        "matcha:inf",
        "matcha:0",
        "matcha:-0.1",
        "matcha:1.5",
    ] {
        let e = ConsensusRule::parse(bad).unwrap_err().to_string();
        assert!(e.contains("(0, 1]"), "{bad}: {e}");
    }
}

#[test]
fn fedavg_weights_every_row_by_data_size() {
    let s = star(4, 1);
    let rule = ConsensusRule::parse("fedavg").unwrap();
    assert_eq!(rule, ConsensusRule::WeightedAverage { sizes: None });
    // No sizes: the equal average.
    assert_eq!(rule.matrix(&s).unwrap(), ConsensusMatrix::average(4));
    let sized = ConsensusRule::WeightedAverage {
        sizes: Some(vec![1.0, 3.0, 4.0, 8.0]),
    };
    let a = sized.matrix(&s).unwrap();
    for i in 0..4 {
        assert_eq!(
            (a.get(i, 0), a.get(i, 1), a.get(i, 2), a.get(i, 3)),
            (0.0625, 0.1875, 0.25, 0.5)
        );
    }
    let bad = ConsensusRule::WeightedAverage {
        sizes: Some(vec![1.0, 0.0, 1.0, 1.0]),
    };
    assert!(bad.matrix(&s).unwrap_err().to_string().contains("fedavg"));
}

#[test]
fn decavg_weights_data_sizes_over_active_neighbours() {
    use crate::graph::failures::{FailureSpec, Failures};
    use crate::graph::OverlaySchedule;
    let o = Overlay::from_edges("p", 3, &[(0, 1), (1, 2)]);
    let rule = ConsensusRule::parse("decavg").unwrap();
    let a = rule.matrix(&o).unwrap();
    assert!((a.get(1, 0) - 1.0 / 3.0).abs() < 1e-15 && a.get(0, 2) == 0.0);
    assert!((a.get(0, 0) - 0.5).abs() < 1e-15);
    let sized = ConsensusRule::DecAvg {
        sizes: Some(vec![1.0, 2.0, 5.0]),
    };
    let a = sized.matrix(&o).unwrap();
    // Row 1: (s0, s1, s2) / 8.
    assert_eq!(
        (a.get(1, 0), a.get(1, 1), a.get(1, 2)),
        (0.125, 0.25, 0.625)
    );
    assert!(a.row_sum_error() < 1e-15);
    a.check_support(&o).unwrap();
    // Failures: isolated silos keep their own model.
    let f = Failures::new(
        crate::overlay::complete(6),
        FailureSpec::parse_optional("node:0.5").unwrap().unwrap(),
        2,
    )
    .unwrap();
    for k in 0..20 {
        let r = f.round(k);
        let a = rule.matrix(&r).unwrap();
        a.check_support(&r).unwrap();
        for i in 0..6 {
            if r.in_degree(i) == 0 {
                assert_eq!(a.get(i, i), 1.0);
            }
        }
    }
    let bad = ConsensusRule::DecAvg {
        sizes: Some(vec![1.0]),
    };
    assert!(bad
        .matrix(&o)
        .unwrap_err()
        .to_string()
        .contains("1 data size(s) for 3 silos"));
}

fn participation(n: usize) -> RoundParticipation {
    RoundParticipation {
        computed: vec![true; n],
        used: vec![None; n],
        joined: vec![None; n],
    }
}

/// Every silo taking part as the overlay says leaves the matrix as it
/// is (gossip: each silo averages all its in-neighbours; STAR: the
/// centre averages every client, clients take the centre's model).
#[test]
fn full_participation_leaves_the_matrix_unchanged() {
    let ring = Overlay::from_edges("ring", 5, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]);
    let a = local_degree(&ring);
    let mut p = participation(5);
    for i in 0..5 {
        p.used[i] = Some(
            ring.arcs()
                .iter()
                .filter(|x| x.1 == i)
                .map(|x| x.0)
                .collect(),
        );
    }
    let b = a.with_participation(&p.used, &p.joined);
    for (x, y) in a.as_slice().iter().zip(b.as_slice()) {
        assert!((x - y).abs() < 1e-15);
    }
    let star = ConsensusMatrix::average(4);
    let mut p = participation(4);
    p.used[0] = Some(vec![1, 2, 3]);
    for j in 1..4 {
        p.joined[j] = Some(vec![0]);
    }
    let b = star.with_participation(&p.used, &p.joined);
    for (x, y) in star.as_slice().iter().zip(b.as_slice()) {
        assert!((x - y).abs() < 1e-15);
    }
}

/// A silo missing a model re-normalises over the ones it has, an absent
/// silo keeps its own, a rejoining silo takes the mean of its senders'
/// new rows; every row stays stochastic.
#[test]
fn missing_models_re_normalise_and_rejoins_take_the_senders_rows() {
    let ring = Overlay::from_edges("ring", 4, &[(0, 1), (1, 2), (2, 3), (3, 0)]);
    let a = local_degree(&ring);
    let mut p = participation(4);
    // Silo 3 absent; 0 misses 3's model; 1 and 2 average as usual; 3
    // rejoins from 0 and 2.
    p.used[0] = Some(vec![1]);
    p.used[1] = Some(vec![0, 2]);
    p.used[2] = Some(vec![1]);
    p.joined[3] = Some(vec![0, 2]);
    let b = a.with_participation(&p.used, &p.joined);
    let w01 = a.get(0, 1) / (a.get(0, 0) + a.get(0, 1));
    assert!((b.get(0, 1) - w01).abs() < 1e-15 && b.get(0, 3) == 0.0);
    for j in 0..4 {
        let want = (b.get(0, j) + b.get(2, j)) / 2.0;
        assert!((b.get(3, j) - want).abs() < 1e-15);
    }
    assert!(b.row_sum_error() < 1e-12);
    p.joined[3] = None;
    let c = a.with_participation(&p.used, &p.joined);
    assert_eq!(
        (0..4).map(|j| c.get(3, j)).collect::<Vec<_>>(),
        vec![0.0, 0.0, 0.0, 1.0]
    );
}
