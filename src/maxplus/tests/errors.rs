//! Invalid inputs give errors, never panics.

use super::support::graph;
use crate::maxplus::{howard, karp, max_cycle_mean, Arc, MaxPlusError, Recurrence};
use crate::maxplus::{CycleTime, WeightedDigraph};

type Solver = fn(&WeightedDigraph) -> Result<CycleTime, MaxPlusError>;
const SOLVERS: [Solver; 3] = [karp, howard, max_cycle_mean];

fn all_fail_with(g: &WeightedDigraph, expected: &MaxPlusError) {
    for solve in SOLVERS {
        assert_eq!(solve(g).as_ref(), Err(expected));
    }
}

/// True if there is a path a -> b (for checking the reported pair).
fn has_path(g: &WeightedDigraph, a: usize, b: usize) -> bool {
    let mut seen = vec![false; g.node_count()];
    let mut stack = vec![a];
    seen[a] = true;
    while let Some(u) = stack.pop() {
        for arc in g.arcs().iter().filter(|arc| arc.from == u) {
            if !seen[arc.to] {
                seen[arc.to] = true;
                stack.push(arc.to);
            }
        }
    }
    seen[b]
}

fn assert_not_sc(g: &WeightedDigraph, components: usize) {
    for solve in SOLVERS {
        match solve(g) {
            Err(MaxPlusError::NotStronglyConnected {
                components: c,
                unreachable: (a, b),
            }) => {
                assert_eq!(c, components);
                assert!(!has_path(g, a, b), "reported pair {a} -> {b} is connected");
                let msg = solve(g).unwrap_err().to_string();
                assert!(msg.contains("not strongly connected"), "{msg}");
                assert!(
                    msg.contains(&format!("no path from silo {a} to silo {b}")),
                    "{msg}"
                );
            }
            other => panic!("expected NotStronglyConnected, got {other:?}"),
        }
    }
}

#[test]
fn two_components_one_way() {
    // {0,1} -> {2,3}: no way back.
    let g = graph(
        4,
        &[
            (0, 1, 1.0),
            (1, 0, 1.0),
            (2, 3, 1.0),
            (3, 2, 1.0),
            (1, 2, 1.0),
        ],
    );
    assert_not_sc(&g, 2);
}

#[test]
fn two_components_other_way() {
    // {2,3} -> {0,1}: node 0 reaches nothing outside, the backward search fails.
    let g = graph(
        4,
        &[
            (0, 1, 1.0),
            (1, 0, 1.0),
            (2, 3, 1.0),
            (3, 2, 1.0),
            (3, 0, 1.0),
        ],
    );
    assert_not_sc(&g, 2);
}

#[test]
fn isolated_node() {
    let g = graph(3, &[(0, 1, 1.0), (1, 0, 1.0)]);
    assert_not_sc(&g, 2);
    let g = graph(3, &[(0, 1, 1.0), (1, 0, 1.0), (2, 2, 5.0)]);
    assert_not_sc(&g, 2);
}

#[test]
fn no_arcs_at_all() {
    assert_not_sc(&graph(4, &[]), 4);
}

#[test]
fn empty_graph() {
    all_fail_with(&graph(0, &[]), &MaxPlusError::Empty);
    assert!(MaxPlusError::Empty
        .to_string()
        .contains("at least one node"));
}

#[test]
fn single_node_without_self_loop() {
    all_fail_with(&graph(1, &[]), &MaxPlusError::NoCircuit);
}

#[test]
fn nan_and_infinite_weights_are_rejected() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let arcs = vec![
            Arc {
                from: 0,
                to: 1,
                weight: 1.0,
            },
            Arc {
                from: 1,
                to: 0,
                weight: bad,
            },
        ];
        match WeightedDigraph::new(2, arcs) {
            Err(
                e @ MaxPlusError::NonFiniteWeight {
                    index: 1,
                    from: 1,
                    to: 0,
                    ..
                },
            ) => {
                assert!(e.to_string().contains("arc #1 (1 -> 0)"), "{e}");
            }
            other => panic!("expected NonFiniteWeight, got {other:?}"),
        }
    }
}

#[test]
fn endpoint_out_of_range() {
    let arcs = vec![
        Arc {
            from: 0,
            to: 1,
            weight: 1.0,
        },
        Arc {
            from: 1,
            to: 2,
            weight: 1.0,
        },
    ];
    let err = WeightedDigraph::new(2, arcs).unwrap_err();
    assert_eq!(
        err,
        MaxPlusError::ArcOutOfRange {
            index: 1,
            from: 1,
            to: 2,
            n: 2
        }
    );
    assert!(err.to_string().contains("arc #1 (1 -> 2)"));
    let err = WeightedDigraph::new(
        0,
        vec![Arc {
            from: 0,
            to: 0,
            weight: 1.0,
        }],
    )
    .unwrap_err();
    assert!(matches!(
        err,
        MaxPlusError::ArcOutOfRange { index: 0, n: 0, .. }
    ));
}

#[test]
fn recurrence_rejects_bad_initial_state() {
    let g = graph(2, &[(0, 1, 1.0), (1, 0, 1.0)]);
    assert_eq!(
        Recurrence::new(&g, vec![0.0]).unwrap_err(),
        MaxPlusError::StateLength {
            expected: 2,
            got: 1
        }
    );
    assert!(matches!(
        Recurrence::new(&g, vec![0.0, f64::NAN]).unwrap_err(),
        MaxPlusError::InvalidState { node: 1, .. }
    ));
    assert!(Recurrence::new(&g, vec![f64::NEG_INFINITY, 0.0]).is_ok());
}
