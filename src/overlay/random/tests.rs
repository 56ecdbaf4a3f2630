use super::*;

fn spec(s: &str) -> RandomSpec {
    s.parse().unwrap()
}

fn degrees(n: usize, e: &[(usize, usize)]) -> Vec<usize> {
    let mut d = vec![0; n];
    for &(a, b) in e {
        d[a] += 1;
        d[b] += 1;
    }
    d
}

#[test]
fn parse_and_display_round_trip() {
    for s in [
        "er:p=0.1",
        "er:k=8",
        "ba:m=2",
        "regular:k=4",
        "chung-lu:gamma=2.5,k=8",
        "torus",
        "torus:rows=4",
        "ba:m=3,seed=7",
        "torus:seed=2",
    ] {
        assert_eq!(spec(s).to_string(), s, "{s}");
        assert_eq!(spec(&spec(s).to_string()), spec(s));
    }
    assert_eq!(spec("Erdos-Renyi: mean-degree = 4").to_string(), "er:k=4");
    assert!(RandomSpec::is_random_name("ba:m=2"));
    assert!(!RandomSpec::is_random_name("ring"));
}

#[test]
fn parse_errors_are_clear() {
    let cases = [
        ("er", "needs p or k"),
        ("er:p=0.1,k=3", "not both"),
        ("er:p=1.5", "(0, 1]"),
        ("er:p=x", "not a finite number"),
        ("ba:m=0", "m must be >= 1"),
        ("ba:k=2", "unknown parameter `k`"),
        ("regular", "needs k="),
        ("chung-lu:gamma=2,k=8", "must be > 2"),
        ("torus:rows=2", ">= 3"),
        ("ba:m=2,seed=-1", "seed"),
        ("ba:m", "KEY=VALUE"),
        ("ws:k=2", "unknown family"),
    ];
    for (s, want) in cases {
        let e = s.parse::<RandomSpec>().unwrap_err().to_string();
        assert!(e.contains(want), "{s}: {e}");
    }
}

#[test]
fn parameters_checked_against_n() {
    let e = random_overlay(&spec("regular:k=3"), 5, 0).unwrap_err();
    assert!(e.to_string().contains("must be even"), "{e}");
    let e = random_overlay(&spec("ba:m=6"), 6, 0).unwrap_err();
    assert!(e.to_string().contains("1..6"), "{e}");
    let e = random_overlay(&spec("torus"), 7, 0).unwrap_err();
    assert!(e.to_string().contains("both sides >= 3"), "{e}");
    let e = random_overlay(&spec("torus:rows=5"), 12, 0).unwrap_err();
    assert!(e.to_string().contains("does not divide"), "{e}");
}

#[test]
fn same_seed_same_graph_other_seed_other_graph() {
    for s in ["er:k=4", "ba:m=2", "regular:k=4", "chung-lu:gamma=3,k=6"] {
        let g = spec(s).graph;
        let a = draw_edges(&g, 60, 11).unwrap();
        assert_eq!(a, draw_edges(&g, 60, 11).unwrap(), "{s}");
        assert_ne!(a, draw_edges(&g, 60, 12).unwrap(), "{s}");
        let o1 = random_overlay(&spec(s), 60, 5).unwrap();
        let o2 = random_overlay(&spec(s), 60, 5).unwrap();
        assert_eq!(o1, o2);
        // A seed in the spec overrides the default seed.
        let with = spec(&format!("{s},seed=5"));
        assert_eq!(random_overlay(&with, 60, 99).unwrap().arcs(), o1.arcs());
    }
}

#[test]
fn families_have_their_structure() {
    let n = 400;
    // Random regular: every degree k.
    let e = draw_edges(&spec("regular:k=6").graph, n, 1).unwrap();
    assert!(degrees(n, &e).iter().all(|&d| d == 6));
    // Barabasi-Albert from a star of m + 1 nodes: m + (n - m - 1) m edges.
    for m in [1, 3] {
        let e = draw_edges(&spec(&format!("ba:m={m}")).graph, n, 1).unwrap();
        assert_eq!(e.len(), m + (n - m - 1) * m);
        assert!(is_connected(n, &e));
    }
    // Torus: 4-regular, 2n edges, connected.
    let e = draw_edges(&spec("torus").graph, 48, 0).unwrap();
    assert_eq!(e.len(), 96);
    assert!(degrees(48, &e).iter().all(|&d| d == 4));
    assert!(is_connected(48, &e));
    // Mean degrees over seeds: ER and Chung-Lu hit k within 5 %.
    for s in ["er:k=8", "er:p=0.02", "chung-lu:gamma=3.5,k=8"] {
        let g = spec(s).graph;
        let mean: f64 = (0..20)
            .map(|seed| 2.0 * draw_edges(&g, n, seed).unwrap().len() as f64 / n as f64)
            .sum::<f64>()
            / 20.0;
        let want = if s == "er:p=0.02" {
            0.02 * (n - 1) as f64
        } else {
            8.0
        };
        assert!((mean - want).abs() < 0.05 * want, "{s}: mean degree {mean}");
    }
}

#[test]
fn connected_draws_and_clear_failure() {
    for s in [
        "er:k=3",
        "ba:m=1",
        "regular:k=3",
        "chung-lu:gamma=4,k=6",
        "torus",
    ] {
        let o = random_overlay(&spec(s), 36, 3).unwrap();
        assert!(o.is_undirected());
        assert!(is_connected(36, &o.edges()), "{s}");
        assert_eq!(o.name, s);
    }
    // A perfect matching on 10 nodes is never connected.
    let e = random_overlay(&spec("regular:k=1"), 10, 0).unwrap_err();
    assert!(
        matches!(
            e,
            RandomGraphError::NotConnected {
                attempts: MAX_ATTEMPTS,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("no connected graph"));
}

#[test]
fn components_agree_with_petgraph() {
    use rustworkx_core::petgraph::algo::connected_components;
    for seed in 0..20 {
        let n = 50;
        let e = draw_edges(&spec("er:k=1.2").graph, n, seed).unwrap();
        let g = UnGraph::<(), ()>::from_edges(e.iter().map(|&(a, b)| (a as u32, b as u32)));
        let mut g = g;
        while g.node_count() < n {
            g.add_node(());
        }
        let (count, label) = components(n, &e);
        assert_eq!(count, connected_components(&g));
        let (m, le) = largest_component(n, &e);
        let mut size = vec![0; count];
        for l in label {
            size[l] += 1;
        }
        assert_eq!(m, *size.iter().max().unwrap());
        assert!(m == 1 || is_connected(m, &le));
        assert!(le.iter().all(|&(a, b)| a < m && b < m));
    }
}

#[test]
fn overlay_kind_lists_hold_random_specs() {
    use crate::overlay::build::{parse_overlay_list, OverlayKind};
    let kinds = parse_overlay_list("ring, chung-lu:gamma=3,k=8,seed=2 ,er:p=0.5,complete").unwrap();
    let names: Vec<String> = kinds.iter().map(|k| k.to_string()).collect();
    assert_eq!(
        names,
        [
            "ring",
            "chung-lu:gamma=3,k=8,seed=2",
            "er:p=0.5",
            "complete"
        ]
    );
    assert!(matches!(kinds[1], OverlayKind::Random(_)));
    let e = parse_overlay_list("ring,ba:m=x").unwrap_err().to_string();
    assert!(e.contains("not a non-negative integer"), "{e}");
    let e = parse_overlay_list("spiral").unwrap_err().to_string();
    assert!(e.contains("er:p=P"), "{e}");
}
