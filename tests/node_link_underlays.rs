//! Underlays in networkx node-link JSON (topohub's Topology Zoo, SNDlib and
//! CAIDA files; networkx's `node_link_data` with `lat`/`lon`), and the
//! `lat`/`lon`, `latitude`/`longitude` spellings in GML.

mod common;

use common::fedtopo;
use fedtopo::net::underlay::{LengthSource, LoadOptions, Underlay};

fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// topohub's Abilene (Topology Zoo; `pos` = [longitude, latitude], `dist`
/// in km, `edges`): 11 routers, 14 links, lengths from the file.
#[test]
fn topohub_abilene_loads_with_its_positions_and_lengths() {
    let u = Underlay::load(&data("topohub/Abilene.json"), &LoadOptions::default()).unwrap();
    assert_eq!(
        (u.name.as_str(), u.node_count(), u.link_count()),
        ("Abilene", 11, 14)
    );
    assert_eq!(u.routers[0].label, "New York");
    assert_eq!(u.routers[0].lat_lon, Some((40.71, -74.01)));
    assert!(u
        .links
        .iter()
        .all(|l| l.length_source == LengthSource::Distance));
    let ny_chicago = u.links.iter().find(|l| (l.a, l.b) == (0, 1)).unwrap();
    assert_eq!(ny_chicago.length_km, 1146.16);
    assert!(u
        .report
        .notes
        .iter()
        .any(|n| n.contains("11 node position(s) read from `pos`")));
    let o = fedtopo(&[
        "compare",
        data("topohub/Abilene.json").to_str().unwrap(),
        "--overlays",
        "ring",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Abilene (11 silos)"));
}

/// What networkx writes for a graph with `lat`/`lon` node attributes and
/// string ids, and the same graph in GML with `latitude`/`longitude`: the
/// same underlay, lengths as WGS-84 geodesics.
#[test]
fn networkx_lat_lon_json_and_gml_spellings_agree() {
    let json = r#"{"directed": false, "multigraph": false, "graph": {},
      "nodes": [{"lat": 48.8566, "lon": 2.3522, "id": "Paris"},
                {"lat": 50.1109, "lon": 8.6821, "id": "Frankfurt"},
                {"lat": 52.3676, "lon": 4.9041, "id": "Amsterdam"}],
      "edges": [{"source": "Paris", "target": "Frankfurt", "capacity": 1e10},
                {"source": "Frankfurt", "target": "Amsterdam"}]}"#;
    let opts = LoadOptions::default();
    let j = Underlay::from_node_link_str(json, "eu.json", &opts).unwrap();
    assert_eq!(j.routers[1].label, "Frankfurt");
    assert_eq!(j.routers[1].gml_id, 1);
    assert_eq!(j.links[0].capacity_bps, 1e10);
    assert!(j
        .links
        .iter()
        .all(|l| l.length_source == LengthSource::Geodesic));
    let gml = "graph [ node [ id 0 label \"Paris\" latitude 48.8566 longitude 2.3522 ]
      node [ id 1 label \"Frankfurt\" lat 50.1109 lon 8.6821 ]
      node [ id 2 label \"Amsterdam\" Latitude 52.3676 Longitude 4.9041 ]
      edge [ source 0 target 1 capacity 1e10 ] edge [ source 1 target 2 ] ]";
    let g = Underlay::from_gml_str(gml, "eu.gml", &opts).unwrap();
    assert_eq!(g.routers, j.routers);
    assert_eq!(g.links, j.links);
}

/// Bad node-link JSON is refused with `file:line:col` of the offending
/// object and what was expected; never a panic.
#[test]
fn bad_node_link_json_names_the_place() {
    let opts = LoadOptions::default();
    let err = |text: &str| {
        Underlay::from_node_link_str(text, "x.json", &opts)
            .unwrap_err()
            .to_string()
    };
    let e = err("{\"nodes\": [\n  {\"id\": 0, \"lat\": 95, \"lon\": 0},\n  {\"id\": 1}]}");
    assert!(
        e.starts_with("x.json:2:3: expected a latitude in [-90, 90]"),
        "{e}"
    );
    let e = err(
        "{\"nodes\": [{\"id\": 0}, {\"id\": 1}],\n \"links\": [{\"source\": 0, \"target\": 7}]}",
    );
    assert!(
        e.starts_with("x.json:2:12: links[0]: target `7` names no node"),
        "{e}"
    );
    let e = err("{\"nodes\": [{\"id\": 0, \"pos\": [300, 10]}]}");
    assert!(e.contains("planar layout"), "{e}");
    let e = err("{\"nodes\": [{\"id\": 0, \"lat\": 1, \"latitude\": 1}]}");
    assert!(
        e.contains("expected one of `Latitude`, `latitude`, `lat`"),
        "{e}"
    );
    let e = err("{\"nodes\": [1,");
    assert!(
        e.starts_with("x.json:1:") && e.contains("invalid JSON"),
        "{e}"
    );
    assert!(err("[1, 2]").contains("expected a node-link JSON object"));
}
