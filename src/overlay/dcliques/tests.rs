use super::*;

#[test]
fn names_round_trip() {
    for s in [
        "dcliques-full",
        "dcliques-random-ring",
        "dcliques-oneclass-smallworld",
        "dcliques-fractal",
        "random-regular10",
        "diverse-random10",
        "node-ring",
        "grid",
        "fully-connected",
    ] {
        let k: TopologyKind = s.parse().unwrap();
        assert_eq!(k.to_string(), s);
    }
    assert_eq!(
        "dcliques".parse::<TopologyKind>().unwrap(),
        TopologyKind::DEFAULT
    );
    assert_eq!(
        "random-regular".parse::<TopologyKind>().unwrap(),
        TopologyKind::RandomRegular { degree: 10 }
    );
    assert!("dcliques-foo".parse::<TopologyKind>().is_err());
    assert!("random-regularx".parse::<TopologyKind>().is_err());
}

#[test]
fn dcliques_structure() {
    let labels = LabelDistributions::one_class_per_node(100, 10).unwrap();
    let o = DCliquesOptions::default();
    let t = build_topology(TopologyKind::DEFAULT, &labels, &o).unwrap();
    assert_eq!(t.edges().len(), 495);
    assert_eq!(t.intra_edges().len(), 450);
    assert!(t.is_connected());
    let g = t.averaging_groups();
    assert!(g.iter().all(|v| v.len() == 10));
    assert_eq!(t.overlay().arc_count(), 990);
    assert_eq!(t.gradient_overlay().arc_count(), 900);
    // Same seed, same topology.
    assert_eq!(
        build_topology(TopologyKind::DEFAULT, &labels, &o).unwrap(),
        t
    );
    let minus = DCliquesOptions {
        remove_intra: 5,
        ..o.clone()
    };
    let m = build_topology(TopologyKind::DEFAULT, &labels, &minus).unwrap();
    assert_eq!(m.intra_edges().len(), 400);
    assert!(m.name.ends_with("minus5"));
    let too_many = DCliquesOptions {
        remove_intra: 46,
        ..o
    };
    assert!(build_topology(TopologyKind::DEFAULT, &labels, &too_many).is_err());
}

#[test]
fn baselines_are_singletons() {
    let labels = LabelDistributions::one_class_per_node(100, 10).unwrap();
    let o = DCliquesOptions::default();
    for s in [
        "random-regular10",
        "diverse-random10",
        "node-ring",
        "grid",
        "fully-connected",
    ] {
        let t = build_topology(s.parse().unwrap(), &labels, &o).unwrap();
        assert!(t.is_connected(), "{s}");
        assert_eq!(t.cliques.len(), 100);
        assert!(t.intra_edges().is_empty());
    }
}

#[test]
fn bad_partitions() {
    assert!(CliqueTopology::new("x", 3, vec![vec![0, 1]], [(0, 1)]).is_err());
    assert!(CliqueTopology::new("x", 2, vec![vec![0, 1], vec![1]], []).is_err());
    assert!(CliqueTopology::new("x", 2, vec![vec![0, 1]], [(0, 0)]).is_err());
}
