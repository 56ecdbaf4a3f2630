//! The summary of an underlay printed by `fedtopo underlay info` and
//! returned by the Python bindings' `Underlay.info()`: size, diameter
//! (km, hops, ms under the \[Marfoq20\] latency model), capacities, and
//! what loading dropped, merged or approximated.

use serde::Serialize;

use crate::net::connectivity::ConnectivityOptions;
use crate::net::underlay::diameter::{diameter, EXACT_DIAMETER_MAX_ROUTERS};
use crate::net::underlay::notes::report_lines;
use crate::net::underlay::{EstimatedPosition, Underlay};

/// Summary of an underlay (`fedtopo underlay info --format json`).
#[derive(Debug, Clone, Serialize)]
pub struct UnderlayInfo {
    /// The underlay's name (file stem or built-in name).
    pub name: String,
    /// Number of routers.
    pub routers: usize,
    /// Number of (undirected) core links.
    pub links: usize,
    /// True when the GML file declared a directed graph.
    pub directed_source: bool,
    /// Sum of the link lengths, km.
    pub total_length_km: f64,
    /// Largest shortest-path length between two routers, km (the longest
    /// found, a lower bound, when [`UnderlayInfo::diameter_bounds`] is set).
    pub diameter_km: f64,
    /// Largest hop count of a shortest path.
    pub diameter_hops: u32,
    /// Largest router-to-router latency, ms (0.0085 ms/km + 4 ms per hop).
    pub diameter_ms: f64,
    /// Smallest link capacity, bit/s (infinite without links).
    pub min_capacity_bps: f64,
    /// Largest link capacity, bit/s (0 without links).
    pub max_capacity_bps: f64,
    /// Routers without `Latitude`/`Longitude`.
    pub routers_without_coordinates: usize,
    /// Routers without coordinates whose position was estimated (node,
    /// neighbours averaged, position).
    pub estimated_positions: Vec<EstimatedPosition>,
    /// Above [`EXACT_DIAMETER_MAX_ROUTERS`] routers only: how far the
    /// diameter values are bounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diameter_bounds: Option<DiameterBounds>,
    /// What loading changed ([`report_lines`]), a note when the diameter
    /// is bounded, and a warning for underlays too small to time.
    pub notes: Vec<String>,
}

/// How far the diameter of a large underlay is bounded (above
/// [`EXACT_DIAMETER_MAX_ROUTERS`] routers, see [`crate::net::underlay::diameter`]):
/// `diameter_km` and `diameter_ms` are the longest route found,
/// `diameter_hops` the most hops found.
#[derive(Debug, Clone, Serialize)]
pub struct DiameterBounds {
    /// Upper bound on the longest route, km.
    pub km_upper: f64,
    /// Upper bound on its latency, ms.
    pub ms_upper: f64,
    /// Whether `diameter_km` is proven exact.
    pub km_exact: bool,
    /// Always true: `diameter_hops` is a lower bound.
    pub hops_lower_bound: bool,
    /// Sources whose shortest-path tree was computed.
    pub sources_scanned: usize,
}

impl UnderlayInfo {
    /// Summarises `u` in memory linear in its size: the diameter is exact
    /// (every source's shortest-path tree) up to
    /// [`EXACT_DIAMETER_MAX_ROUTERS`] routers, bounded above that
    /// ([`UnderlayInfo::diameter_bounds`] and a note say how).
    pub fn new(u: &Underlay) -> Self {
        let n = u.node_count();
        let d = diameter(u);
        let latency = ConnectivityOptions::default();
        // The latency of a route grows with its length, so the largest
        // latency is that of the longest route (0 ms with a single router).
        let ms = |km: f64| {
            if n < 2 {
                0.0
            } else {
                latency.route_latency_ms(km)
            }
        };
        let (dkm, dhops, dms) = (d.km, d.hops, ms(d.km));
        let bounds = (!d.all_pairs).then(|| DiameterBounds {
            km_upper: d.km_upper,
            ms_upper: ms(d.km_upper),
            km_exact: d.km_exact(),
            hops_lower_bound: true,
            sources_scanned: d.sources,
        });
        let caps = u.links.iter().map(|l| l.capacity_bps);
        let mut notes = report_lines(u);
        if let Some(b) = &bounds {
            notes.push(format!(
                "diameter from {} of {n} routers' shortest-path trees (all pairs only up to {} routers): {}; hops {} is the most found, a lower bound",
                b.sources_scanned,
                EXACT_DIAMETER_MAX_ROUTERS,
                if b.km_exact {
                    format!("{dkm:.0} km is exact (every other pair is provably no longer)")
                } else {
                    format!("the longest route is between {dkm:.0} and {:.0} km", b.km_upper)
                },
                dhops
            ));
        }
        if n < 2 {
            notes.push(format!(
                "only {n} router: compare, simulate, overlay and run refuse it (timing an overlay needs at least 2 silos)"
            ));
        }
        UnderlayInfo {
            name: u.name.clone(),
            routers: n,
            links: u.link_count(),
            directed_source: u.directed_source,
            // + 0.0: the empty sum is -0.0.
            total_length_km: u.links.iter().map(|l| l.length_km).sum::<f64>() + 0.0,
            diameter_km: dkm,
            diameter_hops: dhops,
            diameter_ms: dms,
            min_capacity_bps: caps.clone().fold(f64::INFINITY, f64::min),
            max_capacity_bps: caps.fold(0.0, f64::max),
            routers_without_coordinates: u.routers.iter().filter(|r| r.lat_lon.is_none()).count(),
            estimated_positions: u.report.estimated_positions.clone(),
            diameter_bounds: bounds,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::underlay::LoadOptions;

    fn load(gml: &str) -> Underlay {
        Underlay::from_gml_str(gml, "t", &LoadOptions::default()).unwrap()
    }

    #[test]
    fn diameter_and_notes_of_a_path() {
        // a - b - c on a meridian, c without coordinates: estimated, the
        // b-c link then has length 0 (c sits on b), a-b ~ 111 km.
        let u = load(
            "graph [ node [ id 0 label \"a\" Latitude 0 Longitude 0 ]
             node [ id 1 label \"b\" Latitude 1 Longitude 0 ]
             node [ id 2 label \"c\" ]
             node [ id 3 label \"d\" Latitude 5 Longitude 5 ]
             edge [ source 0 target 1 ] edge [ source 1 target 2 ]
             edge [ source 0 target 1 ] ]",
        );
        let info = UnderlayInfo::new(&u);
        assert_eq!((info.routers, info.links, info.diameter_hops), (3, 2, 2));
        assert!(
            (info.diameter_km - 110.574).abs() < 0.01,
            "{}",
            info.diameter_km
        );
        assert_eq!(info.routers_without_coordinates, 1);
        assert_eq!(info.estimated_positions.len(), 1);
        assert_eq!(info.notes, report_lines(&u));
        for start in [
            "dropped 1 node(s): d",
            "merged 1 parallel edge(s)",
            "estimated the position of c",
        ] {
            assert!(
                info.notes.iter().any(|n| n.starts_with(start)),
                "{start}: {:?}",
                info.notes
            );
        }
    }

    #[test]
    fn one_router_gets_a_warning_and_no_capacities() {
        let u = load("graph [ node [ id 0 label \"a\" Latitude 0 Longitude 0 ] ]");
        let info = UnderlayInfo::new(&u);
        assert_eq!(info.total_length_km.to_bits(), 0.0f64.to_bits());
        assert_eq!(info.min_capacity_bps, f64::INFINITY);
        assert!(info.notes.last().unwrap().starts_with("only 1 router"));
    }
}
