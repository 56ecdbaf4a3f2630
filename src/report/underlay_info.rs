//! The summary of an underlay printed by `fedtopo underlay info` and
//! returned by the Python bindings' `Underlay.info()`: size, diameter
//! (km, hops, ms under the \[Marfoq20\] latency model), capacities, and
//! what loading dropped, merged or approximated.

use serde::Serialize;
use thiserror::Error;

use crate::connectivity::{Connectivity, ConnectivityOptions};
use crate::placement::MAX_SILOS;
use crate::underlay::notes::report_lines;
use crate::underlay::{EstimatedPosition, Underlay};

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
    /// Largest shortest-path length between two routers, km.
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
    /// What loading changed ([`report_lines`]), and a warning for
    /// underlays too small to time.
    pub notes: Vec<String>,
}

/// The underlay is too large for the all-pairs diameter.
#[derive(Debug, Clone, Error)]
#[error("{name}: {routers} routers are more than the {MAX_SILOS} whose diameter `underlay info` computes (all-pairs routes need dense router x router matrices, at least 24 bytes x N^2 = {gb:.1} GB here)")]
pub struct TooLargeForInfo {
    /// The underlay's name.
    pub name: String,
    /// Its number of routers.
    pub routers: usize,
    /// Memory the dense matrices would take, GB.
    pub gb: f64,
}

impl UnderlayInfo {
    /// Summarises `u` (all-pairs shortest paths, so at most
    /// [`MAX_SILOS`] routers).
    ///
    /// # Errors
    /// [`TooLargeForInfo`] above [`MAX_SILOS`] routers.
    pub fn new(u: &Underlay) -> Result<Self, TooLargeForInfo> {
        let n = u.node_count();
        if n > MAX_SILOS {
            return Err(TooLargeForInfo {
                name: u.name.clone(),
                routers: n,
                gb: 24.0 * (n as f64).powi(2) / 1e9,
            });
        }
        let conn = Connectivity::new(u, &ConnectivityOptions::default());
        let (mut dkm, mut dhops, mut dms) = (0.0f64, 0u32, 0.0f64);
        for i in 0..n {
            for j in 0..n {
                dkm = dkm.max(conn.length_km(i, j));
                dhops = dhops.max(conn.hops(i, j));
                dms = dms.max(conn.latency_ms(i, j));
            }
        }
        let caps = u.links.iter().map(|l| l.capacity_bps);
        let mut notes = report_lines(u);
        if n < 2 {
            notes.push(format!(
                "only {n} router: compare, simulate, overlay and run refuse it (timing an overlay needs at least 2 silos)"
            ));
        }
        Ok(UnderlayInfo {
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
            notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::underlay::LoadOptions;

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
        let info = UnderlayInfo::new(&u).unwrap();
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
        let info = UnderlayInfo::new(&u).unwrap();
        assert_eq!(info.total_length_km.to_bits(), 0.0f64.to_bits());
        assert_eq!(info.min_capacity_bps, f64::INFINITY);
        assert!(info.notes.last().unwrap().starts_with("only 1 router"));
    }
}
