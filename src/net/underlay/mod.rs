//! The physical network ("underlay") read from a GML file: routers and the
//! undirected core links between them, with lengths in km and capacities in bit/s.
//!
//! [`Underlay::load`] reads a file, [`Underlay::from_gml_str`] parses text; both
//! apply the policies in [`LoadOptions`] and describe what they changed in a
//! [`LoadReport`].

mod build;
pub mod diameter;
pub mod geodesy;
pub mod gml;
pub mod matrix;
pub mod node_link;
pub mod notes;
pub mod projection;
pub mod routes;
pub mod synthetic;

#[cfg(test)]
mod corpus_tests;

pub use geodesy::{geodesic_km, spherical_mean};
pub use gml::{decode_bytes, GmlEntry, GmlError, GmlValue, Pos};

use serde::Serialize;
use std::path::{Path, PathBuf};

/// A router (GML node).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Router {
    /// The node's `id` in the GML file.
    pub gml_id: i64,
    /// The node's `label` (the id as text when absent).
    pub label: String,
    /// `(latitude, longitude)` in degrees, when the node has both.
    pub lat_lon: Option<(f64, f64)>,
}

/// Where a link's length comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum LengthSource {
    /// The edge's `distance` attribute (km).
    Distance,
    /// The WGS-84 geodesic between the endpoints' coordinates.
    Geodesic,
    /// The WGS-84 geodesic where at least one endpoint's position is an
    /// estimate ([`MissingCoordinates::Estimate`], listed in
    /// [`LoadReport::estimated_positions`]): an approximation.
    Estimated,
    /// [`LoadOptions::default_length_km`]: the edge has no `distance` and an
    /// endpoint has no position (an approximation).
    DefaultLength,
    /// A measured latency from a link file ([`crate::net::links`]), as the length
    /// that gives it under the connectivity model's ms per km.
    Measured,
}

/// Where a link's capacity comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CapacitySource {
    /// The edge's `capacity` attribute (bit/s).
    Capacity,
    /// The edge's `LinkSpeedRaw` attribute (bit/s, Topology Zoo).
    LinkSpeedRaw,
    /// [`LoadOptions::default_capacity_bps`].
    Default,
    /// A measured capacity from a link file ([`crate::net::links`]).
    Measured,
}

/// An undirected physical link between two routers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoreLink {
    /// Index of one endpoint in [`Underlay::routers`]; always `a < b`.
    pub a: usize,
    /// Index of the other endpoint in [`Underlay::routers`].
    pub b: usize,
    /// Length in km (≥ 0; co-located routers may have length 0).
    pub length_km: f64,
    /// Capacity in bit/s (> 0).
    pub capacity_bps: f64,
    /// Where `length_km` comes from.
    pub length_source: LengthSource,
    /// Where `capacity_bps` comes from.
    pub capacity_source: CapacitySource,
}

/// What to do with nodes whose incident edges need coordinates (no `distance`)
/// but which lack `Latitude`/`Longitude`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MissingCoordinates {
    /// Fail with [`UnderlayError::MissingCoordinates`] (unless
    /// [`LoadOptions::default_length_km`] gives such links a length).
    Refuse,
    /// Estimate each such node's position from its neighbours (the default).
    ///
    /// Rounds `k = 1, 2, ...`: every router still without a position that
    /// has at least one neighbour with a position known *before* round `k`
    /// (from the file, or estimated in an earlier round) gets the spherical
    /// mean of those neighbours' positions: latitude/longitude become unit
    /// vectors on a sphere, are averaged, and the mean is normalised back to
    /// latitude/longitude (when the mean vector is shorter than 1e-9, e.g.
    /// two antipodal neighbours, the first such neighbour's position is
    /// used). Within a round estimates use only earlier positions, so the
    /// result does not depend on file order; rounds stop when one estimates
    /// nothing. Neighbours are counted once each, whatever the number of
    /// parallel edges, and `distance` attributes do not weigh the mean.
    /// Treating geodetic latitude as spherical is an approximation of a few
    /// km at most for the neighbour spans of real networks; lengths are then
    /// WGS-84 geodesics ([`LengthSource::Estimated`]). Every estimate is
    /// listed in [`LoadReport::estimated_positions`]. Routers are estimated
    /// only when some router needs coordinates, and only within the routers
    /// kept by the [`Disconnected`] policy (applied first).
    #[default]
    Estimate,
    /// Drop such nodes and all their edges, recording each in [`LoadReport::dropped_nodes`].
    Drop,
}

impl MissingCoordinates {
    /// Every policy, in documentation order.
    pub const ALL: [MissingCoordinates; 3] = [
        MissingCoordinates::Refuse,
        MissingCoordinates::Estimate,
        MissingCoordinates::Drop,
    ];

    /// The policy's name (`refuse`, `estimate`, `drop`), as the CLI and
    /// experiment files spell it.
    pub fn name(self) -> &'static str {
        match self {
            MissingCoordinates::Refuse => "refuse",
            MissingCoordinates::Estimate => "estimate",
            MissingCoordinates::Drop => "drop",
        }
    }
}

impl std::fmt::Display for MissingCoordinates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown [`MissingCoordinates`] name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("missing-coordinates policy `{0}`: expected refuse, estimate or drop")]
pub struct UnknownPolicy(pub String);

impl std::str::FromStr for MissingCoordinates {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MissingCoordinates::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| UnknownPolicy(s.to_string()))
    }
}

/// What to do when the graph (after drops) is not connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum Disconnected {
    /// Fail with [`UnderlayError::Disconnected`].
    #[default]
    Refuse,
    /// Keep the largest connected component (ties: the one holding the earliest router).
    LargestComponent,
}

/// What to do with routers that have no link at all in the file (after
/// self-loops are removed): they carry no traffic and no silo placed there
/// could reach another, so they are not part of the network.
///
/// Topology Zoo files hold such routers (planned or external points of
/// presence drawn without links: e.g. 55 of DialtelecomCz's 193 nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IsolatedRouters {
    /// Leave them out, naming each in [`LoadReport::dropped_nodes`] and
    /// counting them in [`LoadReport::isolated_routers_dropped`] (the
    /// default). A file whose routers *with* links form several components
    /// is still disconnected ([`Disconnected`]). A file without any link
    /// keeps its routers (and is refused later for having no link).
    #[default]
    Drop,
    /// Keep them: the graph is then disconnected, handled by [`Disconnected`].
    Keep,
}

impl IsolatedRouters {
    /// The policy's name (`drop`, `keep`), as the CLI and experiment files spell it.
    pub fn name(self) -> &'static str {
        match self {
            IsolatedRouters::Drop => "drop",
            IsolatedRouters::Keep => "keep",
        }
    }
}

/// Policies applied while building an [`Underlay`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadOptions {
    /// Policy for nodes lacking coordinates that an edge needs.
    pub missing_coordinates: MissingCoordinates,
    /// Policy for routers without any link (applied first).
    pub isolated_routers: IsolatedRouters,
    /// Policy for disconnected graphs.
    pub disconnected: Disconnected,
    /// Capacity in bit/s for edges with neither `capacity` nor `LinkSpeedRaw`
    /// (should be finite and positive; default 1e9 = 1 Gbit/s).
    pub default_capacity_bps: f64,
    /// Length in km of every edge that has no `distance` and an endpoint
    /// without a position (none in the file, none estimated): finite, >= 0.
    /// `None` (the default): such edges refuse the file. Counted in
    /// [`LoadReport::lengths_defaulted`] ([`LengthSource::DefaultLength`]).
    /// With [`MissingCoordinates::Refuse`] no position is estimated, so every
    /// such edge gets this length; with [`MissingCoordinates::Drop`] none
    /// is left.
    pub default_length_km: Option<f64>,
    /// Latency matrices ([`matrix`]): what the cells are (round-trip times
    /// by default, halved to one-way latencies).
    pub matrix_values: matrix::MatrixValues,
    /// Latency and bandwidth matrices: what is done with empty cells.
    pub matrix_gaps: matrix::MatrixGaps,
    /// Latency matrices: the bandwidth matrix giving `A(i,j)` (bit/s).
    pub bandwidth_matrix: Option<PathBuf>,
}

/// Checks a default link length (`--default-length-km`, Python's
/// `default_length_km=`): a finite number of km >= 0.
///
/// # Errors
/// The message every front end shows.
pub fn check_default_length_km(km: f64) -> Result<f64, String> {
    if km.is_finite() && km >= 0.0 {
        Ok(km)
    } else {
        Err(format!("expected a finite length >= 0 in km, found `{km}`"))
    }
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            missing_coordinates: MissingCoordinates::Estimate,
            isolated_routers: IsolatedRouters::Drop,
            disconnected: Disconnected::Refuse,
            default_capacity_bps: 1e9,
            default_length_km: None,
            matrix_values: matrix::MatrixValues::default(),
            matrix_gaps: matrix::MatrixGaps::default(),
            bandwidth_matrix: None,
        }
    }
}

/// A router, named as in messages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeName {
    /// The node's `id` in the GML file.
    pub gml_id: i64,
    /// The node's `label`.
    pub label: String,
}

impl std::fmt::Display for NodeName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (id {})", self.label, self.gml_id)
    }
}

/// The estimated position of a router without coordinates
/// ([`MissingCoordinates::Estimate`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EstimatedPosition {
    /// The router.
    pub node: NodeName,
    /// `(latitude, longitude)` in degrees: the spherical mean of the
    /// neighbours' positions.
    pub lat_lon: (f64, f64),
    /// The neighbours averaged, in file order.
    pub neighbours: Vec<NodeName>,
    /// The round that estimated it: 1 when every neighbour used has
    /// coordinates in the file, `k` when some were estimated in round `k - 1`.
    pub round: usize,
}

/// What loading changed or inferred.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LoadReport {
    /// Each dropped node as `"label (id N): reason"`.
    pub dropped_nodes: Vec<String>,
    /// Number of routers without any link left out by [`IsolatedRouters::Drop`]
    /// (each also named in `dropped_nodes`).
    pub isolated_routers_dropped: usize,
    /// Number of edges with `source == target` that were removed.
    pub self_loops_removed: usize,
    /// Number of edges merged into an earlier edge between the same two routers.
    pub parallel_edges_merged: usize,
    /// Number of final links whose length is a WGS-84 geodesic.
    pub lengths_from_geodesic: usize,
    /// Routers without coordinates whose position was estimated, in file order.
    pub estimated_positions: Vec<EstimatedPosition>,
    /// Number of final links whose length is a geodesic with an estimated endpoint.
    pub lengths_from_estimates: usize,
    /// Number of final links whose length is [`LoadOptions::default_length_km`].
    pub lengths_defaulted: usize,
    /// Number of final links whose capacity is the default.
    pub capacities_defaulted: usize,
    /// Sizes (in routers) of the components dropped by [`Disconnected::LargestComponent`].
    pub dropped_components: Vec<usize>,
    /// Free-form remarks (directed source, zero-length links, ...).
    pub notes: Vec<String>,
}

/// A physical network: routers and undirected core links.
///
/// # Examples
/// ```
/// use fedtopo::prelude::*;
///
/// // The built-in default (aws-north-america), or a GML file's path.
/// let u = load_underlay(None, &LoadOptions::default())?;
/// assert_eq!(u.node_count(), 22);
/// assert!(u.links.len() > 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Underlay {
    /// The file stem of the source (e.g. `gaia` for `paper/gaia.gml`).
    pub name: String,
    /// Routers in file order (after drops).
    pub routers: Vec<Router>,
    /// Links, in order of first appearance in the file; `a < b`, no duplicates.
    pub links: Vec<CoreLink>,
    /// Whether the GML graph declared `directed 1` (edges are still treated as undirected).
    pub directed_source: bool,
    /// What loading changed.
    pub report: LoadReport,
    /// Measured site-to-site latencies and bandwidths when the underlay was
    /// read from a latency matrix ([`matrix`]): they replace routes.
    #[serde(skip)]
    pub measured: Option<std::sync::Arc<matrix::MeasuredPairs>>,
}

/// Why an underlay could not be loaded. Messages start with `file:line:col:` when
/// there is a position.
#[derive(Debug, thiserror::Error)]
pub enum UnderlayError {
    /// The file could not be read.
    #[error("{}: cannot read file: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The text is not valid GML.
    #[error("{file}:{}:{}: {}", source.pos.line, source.pos.col, source.message)]
    Gml {
        /// The source name (file path).
        file: String,
        /// The syntax error.
        source: GmlError,
    },
    /// Valid GML that does not describe a usable graph.
    #[error("{file}:{}:{}: {message}", pos.line, pos.col)]
    Invalid {
        /// The source name (file path).
        file: String,
        /// Where the problem is.
        pos: Pos,
        /// What was expected and what was found.
        message: String,
    },
    /// Nodes lack coordinates that edges without `distance` need.
    #[error(
        "{file}: expected Latitude/Longitude (or latitude/longitude, lat/lon) on every node whose edges lack `distance`, \
         found {} node(s) without: {}; estimate their positions from their neighbours with the \
         Estimate policy (CLI: --missing-coordinates estimate, the default), drop them with the Drop \
         policy (--missing-coordinates drop), or give such links a length (--default-length-km KM)",
        nodes.len(),
        nodes.join("; ")
    )]
    MissingCoordinates {
        /// The source name (file path).
        file: String,
        /// Each node as `"label (id N): ... needed by edge ... at line L"`.
        nodes: Vec<String>,
    },
    /// No router has coordinates, so links without `distance` have no length
    /// (and no position can be estimated).
    #[error(
        "{file}: none of the {routers} router(s) kept has Latitude/Longitude and {edges} edge(s) \
         among them have no `distance`, so their lengths are unknown and cannot be estimated; give every such link \
         one length with --default-length-km KM (experiment files: default_length_km = KM; \
         reported as an approximation), or add `distance` (km) attributes to the edges"
    )]
    NoCoordinates {
        /// The source name (file path).
        file: String,
        /// Routers considered (after the connectivity policy).
        routers: usize,
        /// Edges without `distance` among them.
        edges: usize,
    },
    /// The link lengths sum to infinity, so a route between two routers
    /// could have an infinite length (and latency).
    #[error("{file}: link {a} -- {b}: the link lengths sum to infinity here, so a route could have an infinite length; expected lengths (km) whose sum is finite")]
    LengthOverflow {
        /// The source name (file path).
        file: String,
        /// Label of one end of the link where the sum overflows.
        a: String,
        /// Label of its other end.
        b: String,
    },
    /// A load option with a value it does not accept.
    #[error("{file}: default length {value} km: expected a finite length >= 0 km")]
    BadDefaultLength {
        /// The source name (file path).
        file: String,
        /// The value given.
        value: f64,
    },
    /// The graph is not connected.
    #[error(
        "{file}: expected a connected graph, found {} components of sizes {:?}; \
         keep the largest with the LargestComponent policy (CLI: --largest-component; experiment \
         files: largest_component = true), which drops {}",
        component_sizes.len(),
        component_sizes,
        outside_largest
    )]
    Disconnected {
        /// The source name (file path).
        file: String,
        /// Component sizes in routers, largest first.
        component_sizes: Vec<usize>,
        /// The routers outside the largest component (the first 10 named,
        /// then how many more), as the LargestComponent policy would drop them.
        outside_largest: String,
    },
    /// A latency or bandwidth matrix whose cells could not be read.
    #[error(transparent)]
    InputFile(#[from] crate::csv_file::CsvFileError),
    /// A latency or bandwidth matrix that cannot be used as it is (gaps
    /// under the chosen policy); the message says what to do.
    #[error("{file}: {message}")]
    Matrix {
        /// The matrix file.
        file: String,
        /// What is wrong and the options that handle it.
        message: String,
    },
    /// No routers (none in the file, or none left after the policies).
    #[error("{file}: expected at least one node, found none (after applying the load policies)")]
    Empty {
        /// The source name (file path).
        file: String,
    },
}

impl Underlay {
    /// Builds an underlay from GML text; `source_name` (usually the file path) is
    /// used in error messages, and its file stem becomes [`Underlay::name`].
    pub fn from_gml_str(
        src: &str,
        source_name: &str,
        opts: &LoadOptions,
    ) -> Result<Underlay, UnderlayError> {
        let entries = gml::parse(src).map_err(|source| UnderlayError::Gml {
            file: source_name.to_string(),
            source,
        })?;
        build::build(&entries, source_name, opts)
    }

    /// Builds an underlay from networkx node-link JSON text
    /// ([`node_link`]: `nodes` with ids, labels and coordinates, `links`
    /// or `edges` with lengths and capacities); the GML reader's policies,
    /// checks and report apply.
    pub fn from_node_link_str(
        src: &str,
        source_name: &str,
        opts: &LoadOptions,
    ) -> Result<Underlay, UnderlayError> {
        let (entries, notes) = node_link::to_gml_entries(src, source_name)?;
        let mut u = build::build(&entries, source_name, opts)?;
        u.report.notes.extend(notes);
        Ok(u)
    }

    /// Reads an underlay file (UTF-8, else Latin-1) and builds an underlay
    /// named after the file stem: a latency matrix ([`matrix`]) when the
    /// extension is `.csv`; node-link JSON when it is `.json` or
    /// the text starts with `{`; else GML.
    pub fn load(path: &Path, opts: &LoadOptions) -> Result<Underlay, UnderlayError> {
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
        {
            return matrix::load(path, opts);
        }
        let bytes = crate::input_file::read_bytes(path, crate::input_file::MAX_INPUT_BYTES)
            .map_err(|source| UnderlayError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        let text = decode_bytes(&bytes);
        let name = path.display().to_string();
        let json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if json || node_link::looks_like_json(&text) {
            Underlay::from_node_link_str(&text, &name, opts)
        } else {
            Underlay::from_gml_str(&text, &name, opts)
        }
    }

    /// Number of routers.
    pub fn node_count(&self) -> usize {
        self.routers.len()
    }

    /// Number of links.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// For each router, its `(neighbour router, link index)` pairs in link order.
    pub fn neighbours(&self) -> Vec<Vec<(usize, usize)>> {
        let mut adj = vec![Vec::new(); self.routers.len()];
        for (i, link) in self.links.iter().enumerate() {
            if let Some(list) = adj.get_mut(link.a) {
                list.push((link.b, i));
            }
            if let Some(list) = adj.get_mut(link.b) {
                list.push((link.a, i));
            }
        }
        adj
    }

    /// The index of the first router whose label is exactly `label_or_id`, else
    /// of the router whose GML id is `label_or_id` parsed as an integer.
    pub fn find_router(&self, label_or_id: &str) -> Option<usize> {
        self.routers
            .iter()
            .position(|r| r.label == label_or_id)
            .or_else(|| {
                let id: i64 = label_or_id.trim().parse().ok()?;
                self.routers.iter().position(|r| r.gml_id == id)
            })
    }
}
