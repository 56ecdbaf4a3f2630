//! From a GML value tree to an [`Underlay`]: validation, policies and the report.

use super::geodesy::geodesic_km;
use super::geodesy::spherical_mean;
use super::gml::{GmlEntry, GmlValue, Pos};
use super::{
    CapacitySource, CoreLink, Disconnected, EstimatedPosition, IsolatedRouters, LengthSource,
    LoadOptions, LoadReport, MissingCoordinates, NodeName, Router, Underlay, UnderlayError,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// A node as read from the file.
#[derive(Debug)]
struct RawNode {
    id: i64,
    label: String,
    /// `(latitude, longitude)` in degrees.
    lat_lon: Option<(f64, f64)>,
}

impl RawNode {
    fn describe(&self) -> String {
        self.name().to_string()
    }

    fn name(&self) -> NodeName {
        NodeName {
            gml_id: self.id,
            label: self.label.clone(),
        }
    }
}

/// An edge as read from the file; `a`, `b` index the raw node list.
#[derive(Debug)]
struct RawEdge {
    a: usize,
    b: usize,
    /// `distance` in km, if given.
    distance_km: Option<f64>,
    /// Capacity in bit/s and where it came from (`None`: default).
    capacity: Option<(f64, CapacitySource)>,
    /// Position of the `edge` key.
    pos: Pos,
}

/// Shared state for error construction.
struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn invalid(&self, pos: Pos, message: impl Into<String>) -> UnderlayError {
        UnderlayError::Invalid {
            file: self.file.to_string(),
            pos,
            message: message.into(),
        }
    }
}

/// Builds an underlay from the top-level GML entries.
pub(super) fn build(
    entries: &[GmlEntry],
    file: &str,
    opts: &LoadOptions,
) -> Result<Underlay, UnderlayError> {
    let ctx = Ctx { file };
    let graph = find_graph(&ctx, entries)?;
    let mut report = LoadReport::default();
    let directed_source = graph_flag(&ctx, graph, "directed")?;
    if directed_source {
        report
            .notes
            .push("the graph is directed; edges are treated as undirected physical links".into());
    }
    let (nodes, id_index) = read_nodes(&ctx, graph)?;
    let mut edges = read_edges(&ctx, graph, &id_index)?;
    let before = edges.len();
    edges.retain(|e| e.a != e.b);
    report.self_loops_removed = before - edges.len();

    if let Some(v) = opts.default_length_km {
        if !(v.is_finite() && v >= 0.0) {
            return Err(UnderlayError::BadDefaultLength {
                file: file.to_string(),
                value: v,
            });
        }
    }
    let mut keep = vec![true; nodes.len()];
    if opts.isolated_routers == IsolatedRouters::Drop {
        drop_isolated(&nodes, &edges, &mut keep, &mut report);
    }
    let mut pos = Positions {
        at: nodes.iter().map(|n| n.lat_lon).collect(),
        estimated: vec![false; nodes.len()],
    };
    if opts.missing_coordinates == MissingCoordinates::Estimate {
        if nodes.is_empty() {
            return Err(UnderlayError::Empty {
                file: file.to_string(),
            });
        }
        apply_connectivity_policy(&ctx, opts, &nodes, &edges, &mut keep, &mut report)?;
        estimate_positions(&nodes, &edges, &keep, &mut pos, &mut report);
        check_lengths_known(&ctx, opts, &nodes, &edges, &keep, &pos)?;
    } else {
        apply_coordinate_policy(&ctx, opts, &nodes, &edges, &mut keep, &mut report)?;
        if !keep.iter().any(|&k| k) {
            if !nodes.is_empty() && nodes.iter().all(|n| n.lat_lon.is_none()) {
                return Err(no_coordinates(
                    &ctx,
                    &nodes,
                    &edges,
                    &vec![true; nodes.len()],
                ));
            }
            return Err(UnderlayError::Empty {
                file: file.to_string(),
            });
        }
        apply_connectivity_policy(&ctx, opts, &nodes, &edges, &mut keep, &mut report)?;
    }
    let (routers, links) = assemble(&nodes, &edges, &keep, &pos, opts, &mut report);
    check_length_sum(file, &routers, &links)?;
    Ok(Underlay {
        name: stem(file),
        routers,
        links,
        directed_source,
        report,
        measured: None,
    })
}

/// Refuses links whose lengths sum to infinity: a route is a simple path,
/// so a finite sum keeps every route's length (and the latency `l(i,j)` of
/// \[Marfoq20\] eq. (3)) finite. Names the link at which the sum overflows.
fn check_length_sum(
    file: &str,
    routers: &[Router],
    links: &[CoreLink],
) -> Result<(), UnderlayError> {
    let mut sum = 0.0f64;
    for l in links {
        sum += l.length_km;
        if !sum.is_finite() {
            let name = |i: usize| routers.get(i).map_or("?", |r| r.label.as_str()).to_string();
            return Err(UnderlayError::LengthOverflow {
                file: file.to_string(),
                a: name(l.a),
                b: name(l.b),
            });
        }
    }
    Ok(())
}

pub(super) fn stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| file.to_string())
}

/// The contents of the single top-level `graph [...]`.
fn find_graph<'e>(ctx: &Ctx, entries: &'e [GmlEntry]) -> Result<&'e [GmlEntry], UnderlayError> {
    let found = unique(ctx, entries, "graph", "the file (at top level)")?;
    let Some(entry) = found else {
        return Err(ctx.invalid(
            Pos::START,
            "expected a top-level `graph [ ... ]`, found none",
        ));
    };
    match &entry.value {
        GmlValue::List(items) => Ok(items),
        other => Err(ctx.invalid(
            entry.value_pos,
            format!("expected a list for `graph`, found {}", other.kind()),
        )),
    }
}

/// A 0/1 graph attribute such as `directed` (absent = false).
fn graph_flag(ctx: &Ctx, graph: &[GmlEntry], key: &str) -> Result<bool, UnderlayError> {
    match unique(ctx, graph, key, "the graph")? {
        None => Ok(false),
        Some(e) => Ok(int_attr(ctx, e)? != 0),
    }
}

/// The single entry with `key` in `list`; a second one is an error.
fn unique<'e>(
    ctx: &Ctx,
    list: &'e [GmlEntry],
    key: &str,
    owner: &str,
) -> Result<Option<&'e GmlEntry>, UnderlayError> {
    let mut found: Option<&GmlEntry> = None;
    for entry in list.iter().filter(|e| e.key == key) {
        if let Some(first) = found {
            return Err(ctx.invalid(
                entry.key_pos,
                format!(
                    "expected one `{key}` in {owner}, found a second one (first at line {})",
                    first.key_pos.line
                ),
            ));
        }
        found = Some(entry);
    }
    Ok(found)
}

fn int_attr(ctx: &Ctx, e: &GmlEntry) -> Result<i64, UnderlayError> {
    match &e.value {
        GmlValue::Int(i) => Ok(*i),
        other => Err(ctx.invalid(
            e.value_pos,
            format!(
                "expected an integer for `{}`, found {}",
                e.key,
                other.kind()
            ),
        )),
    }
}

fn num_attr(ctx: &Ctx, e: &GmlEntry) -> Result<f64, UnderlayError> {
    e.value.as_f64().ok_or_else(|| {
        ctx.invalid(
            e.value_pos,
            format!(
                "expected a number for `{}`, found {}",
                e.key,
                e.value.kind()
            ),
        )
    })
}

/// A numeric attribute that must satisfy `ok`; `wanted` describes the valid range.
fn checked_num(
    ctx: &Ctx,
    e: &GmlEntry,
    wanted: &str,
    ok: impl Fn(f64) -> bool,
) -> Result<f64, UnderlayError> {
    let v = num_attr(ctx, e)?;
    if v.is_finite() && ok(v) {
        Ok(v)
    } else {
        Err(ctx.invalid(
            e.value_pos,
            format!("expected {wanted} for `{}`, found {}", e.key, short_num(v)),
        ))
    }
}

/// `v` as written by Rust, in scientific notation when that is shorter
/// (`1e-300` rather than 300 digits).
fn short_num(v: f64) -> String {
    let plain = v.to_string();
    let sci = format!("{v:e}");
    if sci.len() < plain.len() {
        sci
    } else {
        plain
    }
}

fn list_of<'e>(ctx: &Ctx, e: &'e GmlEntry) -> Result<&'e [GmlEntry], UnderlayError> {
    match &e.value {
        GmlValue::List(items) => Ok(items),
        other => Err(ctx.invalid(
            e.value_pos,
            format!("expected a list for `{}`, found {}", e.key, other.kind()),
        )),
    }
}

/// Reads every `node [...]`; returns the nodes and a map from GML id to node index.
fn read_nodes(
    ctx: &Ctx,
    graph: &[GmlEntry],
) -> Result<(Vec<RawNode>, HashMap<i64, usize>), UnderlayError> {
    let mut nodes = Vec::new();
    let mut index: HashMap<i64, usize> = HashMap::new();
    let mut id_lines: Vec<u32> = Vec::new();
    for entry in graph.iter().filter(|e| e.key == "node") {
        let (node, id_pos) = read_node(ctx, entry)?;
        if let Some(&first) = index.get(&node.id) {
            let line = id_lines.get(first).copied().unwrap_or(0);
            return Err(ctx.invalid(
                id_pos,
                format!(
                    "expected unique node ids, found duplicate node id {} (first at line {line})",
                    node.id
                ),
            ));
        }
        index.insert(node.id, nodes.len());
        id_lines.push(id_pos.line);
        nodes.push(node);
    }
    Ok((nodes, index))
}

/// One node and the position of its `id` value.
fn read_node(ctx: &Ctx, entry: &GmlEntry) -> Result<(RawNode, Pos), UnderlayError> {
    let attrs = list_of(ctx, entry)?;
    let Some(id_entry) = unique(ctx, attrs, "id", "a node")? else {
        return Err(ctx.invalid(entry.key_pos, "expected an `id` in this node, found none"));
    };
    let id = int_attr(ctx, id_entry)?;
    let label = match unique(ctx, attrs, "label", "a node")? {
        None => id.to_string(),
        Some(e) => label_text(ctx, e)?,
    };
    let lat_lon = read_coordinates(ctx, attrs)?;
    let node = RawNode { id, label, lat_lon };
    Ok((node, id_entry.value_pos))
}

fn label_text(ctx: &Ctx, e: &GmlEntry) -> Result<String, UnderlayError> {
    match &e.value {
        GmlValue::Str(s) => Ok(s.clone()),
        GmlValue::Int(i) => Ok(i.to_string()),
        GmlValue::Real(r) => Ok(r.to_string()),
        GmlValue::List(_) => Err(ctx.invalid(
            e.value_pos,
            "expected a string or number for `label`, found a list",
        )),
    }
}

/// The spellings of a node's coordinates, `(latitude key, longitude key)`:
/// the Topology Zoo's, networkx users' and short ones.
pub(super) const COORDINATE_KEYS: [(&str, &str); 3] = [
    ("Latitude", "Longitude"),
    ("latitude", "longitude"),
    ("lat", "lon"),
];

/// The spellings of an edge's length in km.
pub(super) const LENGTH_KEYS: [&str; 3] = ["distance", "length", "dist"];

/// The single entry among `keys` in `list`; two different keys (e.g.
/// `distance` and `length`) are an error naming both.
fn one_of<'e>(
    ctx: &Ctx,
    list: &'e [GmlEntry],
    keys: &[&str],
    owner: &str,
) -> Result<Option<&'e GmlEntry>, UnderlayError> {
    let mut found: Option<&GmlEntry> = None;
    for key in keys {
        if let Some(e) = unique(ctx, list, key, owner)? {
            if let Some(first) = found {
                return Err(ctx.invalid(
                    e.key_pos,
                    format!(
                        "expected one of `{}` in {owner}, found `{}` (line {}) and `{}`",
                        keys.join("`, `"),
                        first.key,
                        first.key_pos.line,
                        e.key
                    ),
                ));
            }
            found = Some(e);
        }
    }
    Ok(found)
}

/// `(latitude, longitude)` in degrees when both are present, under any one
/// spelling of [`COORDINATE_KEYS`].
fn read_coordinates(ctx: &Ctx, attrs: &[GmlEntry]) -> Result<Option<(f64, f64)>, UnderlayError> {
    let lat_keys = COORDINATE_KEYS.map(|k| k.0);
    let lon_keys = COORDINATE_KEYS.map(|k| k.1);
    let lat = match one_of(ctx, attrs, &lat_keys, "a node")? {
        None => None,
        Some(e) => Some(checked_num(
            ctx,
            e,
            "a latitude in [-90, 90] degrees",
            |v| (-90.0..=90.0).contains(&v),
        )?),
    };
    let lon = match one_of(ctx, attrs, &lon_keys, "a node")? {
        None => None,
        Some(e) => Some(checked_num(
            ctx,
            e,
            "a longitude in [-180, 180] degrees",
            |v| (-180.0..=180.0).contains(&v),
        )?),
    };
    Ok(lat.zip(lon))
}

/// Reads every `edge [...]`, resolving endpoints through `index`.
fn read_edges(
    ctx: &Ctx,
    graph: &[GmlEntry],
    index: &HashMap<i64, usize>,
) -> Result<Vec<RawEdge>, UnderlayError> {
    graph
        .iter()
        .filter(|e| e.key == "edge")
        .map(|e| read_edge(ctx, e, index))
        .collect()
}

fn read_edge(
    ctx: &Ctx,
    entry: &GmlEntry,
    index: &HashMap<i64, usize>,
) -> Result<RawEdge, UnderlayError> {
    let attrs = list_of(ctx, entry)?;
    let a = endpoint(ctx, entry, attrs, "source", index)?;
    let b = endpoint(ctx, entry, attrs, "target", index)?;
    let distance_km = match one_of(ctx, attrs, &LENGTH_KEYS, "an edge")? {
        None => None,
        Some(e) => Some(checked_num(ctx, e, "a non-negative distance in km", |v| {
            v >= 0.0
        })?),
    };
    let capacity = read_capacity(ctx, attrs)?;
    Ok(RawEdge {
        a,
        b,
        distance_km,
        capacity,
        pos: entry.key_pos,
    })
}

/// The node index named by the edge's `source` or `target`.
fn endpoint(
    ctx: &Ctx,
    edge: &GmlEntry,
    attrs: &[GmlEntry],
    key: &str,
    index: &HashMap<i64, usize>,
) -> Result<usize, UnderlayError> {
    let Some(e) = unique(ctx, attrs, key, "an edge")? else {
        return Err(ctx.invalid(
            edge.key_pos,
            format!("expected a `{key}` in this edge, found none"),
        ));
    };
    let id = int_attr(ctx, e)?;
    index.get(&id).copied().ok_or_else(|| {
        ctx.invalid(
            e.value_pos,
            format!("edge {key} {id} names no node (expected the id of a node)"),
        )
    })
}

/// `capacity`, else `LinkSpeedRaw` (both bit/s), else `None` (default).
fn read_capacity(
    ctx: &Ctx,
    attrs: &[GmlEntry],
) -> Result<Option<(f64, CapacitySource)>, UnderlayError> {
    let sources = [
        ("capacity", CapacitySource::Capacity),
        ("LinkSpeedRaw", CapacitySource::LinkSpeedRaw),
    ];
    for (key, source) in sources {
        if let Some(e) = unique(ctx, attrs, key, "an edge")? {
            let v = checked_num(ctx, e, "a capacity of at least 1 bit/s", |v| {
                v >= crate::units::MIN_CAPACITY_BPS
            })?;
            return Ok(Some((v, source)));
        }
    }
    Ok(None)
}

/// Finds nodes lacking coordinates that an edge without `distance` needs, and
/// refuses or drops them according to the policy.
fn apply_coordinate_policy(
    ctx: &Ctx,
    opts: &LoadOptions,
    nodes: &[RawNode],
    edges: &[RawEdge],
    keep: &mut [bool],
    report: &mut LoadReport,
) -> Result<(), UnderlayError> {
    let needy = nodes_needing_coordinates(nodes, edges);
    if needy.is_empty() {
        return Ok(());
    }
    let described: Vec<String> = needy
        .iter()
        .map(|(&n, &e)| describe_missing(nodes, n, e))
        .collect();
    match opts.missing_coordinates {
        // Such links get the default length (make_link).
        MissingCoordinates::Refuse if opts.default_length_km.is_some() => Ok(()),
        MissingCoordinates::Refuse | MissingCoordinates::Estimate
            if nodes.iter().all(|n| n.lat_lon.is_none()) =>
        {
            Err(no_coordinates(ctx, nodes, edges, &vec![true; nodes.len()]))
        }
        MissingCoordinates::Refuse | MissingCoordinates::Estimate => {
            Err(UnderlayError::MissingCoordinates {
                file: ctx.file.to_string(),
                nodes: described,
            })
        }
        MissingCoordinates::Drop => {
            for &n in needy.keys() {
                if let Some(k) = keep.get_mut(n) {
                    *k = false;
                }
            }
            report.dropped_nodes.extend(described);
            Ok(())
        }
    }
}

/// Node index -> the first edge that needs its (missing) coordinates.
fn nodes_needing_coordinates<'e>(
    nodes: &[RawNode],
    edges: &'e [RawEdge],
) -> BTreeMap<usize, &'e RawEdge> {
    let mut needy = BTreeMap::new();
    for edge in edges.iter().filter(|e| e.distance_km.is_none()) {
        for n in [edge.a, edge.b] {
            let lacks = nodes.get(n).is_some_and(|node| node.lat_lon.is_none());
            if lacks {
                needy.entry(n).or_insert(edge);
            }
        }
    }
    needy
}

fn describe_missing(nodes: &[RawNode], n: usize, edge: &RawEdge) -> String {
    let name = |i: usize| nodes.get(i).map_or_else(String::new, RawNode::describe);
    let id = |i: usize| nodes.get(i).map_or(0, |node| node.id);
    format!(
        "{}: no Latitude/Longitude, needed by edge {} -- {} at line {} (it has no `distance`)",
        name(n),
        id(edge.a),
        id(edge.b),
        edge.pos.line
    )
}

/// Positions of the raw nodes: from the file or estimated.
struct Positions {
    /// `(latitude, longitude)` in degrees.
    at: Vec<Option<(f64, f64)>>,
    /// Whether `at[i]` is an estimate.
    estimated: Vec<bool>,
}

impl Positions {
    fn get(&self, i: usize) -> Option<(f64, f64)> {
        self.at.get(i).copied().flatten()
    }

    fn is_estimated(&self, i: usize) -> bool {
        self.estimated.get(i).copied().unwrap_or(false)
    }
}

/// Whether `edge` needs coordinates (no `distance`) that an endpoint lacks.
fn lacks_length(edge: &RawEdge, pos: &Positions) -> bool {
    edge.distance_km.is_none() && (pos.get(edge.a).is_none() || pos.get(edge.b).is_none())
}

/// [`MissingCoordinates::Estimate`]: gives every kept router without a
/// position the spherical mean of its positioned neighbours, in rounds
/// (Jacobi: a round uses only positions known before it) until a round
/// estimates nothing; records each estimate in file order. Does nothing
/// when no kept edge needs a missing position.
fn estimate_positions(
    nodes: &[RawNode],
    edges: &[RawEdge],
    keep: &[bool],
    pos: &mut Positions,
    report: &mut LoadReport,
) {
    let kept = |i: usize| keep.get(i).copied().unwrap_or(false);
    let kept_edges: Vec<&RawEdge> = edges.iter().filter(|e| kept(e.a) && kept(e.b)).collect();
    if !kept_edges.iter().any(|e| lacks_length(e, pos)) {
        return;
    }
    let mut adj: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); nodes.len()];
    for e in &kept_edges {
        if let Some(s) = adj.get_mut(e.a) {
            s.insert(e.b);
        }
        if let Some(s) = adj.get_mut(e.b) {
            s.insert(e.a);
        }
    }
    let mut found: Vec<(usize, EstimatedPosition)> = Vec::new();
    for round in 1.. {
        let mut new = Vec::new();
        for (i, around) in adj.iter().enumerate() {
            if !kept(i) || pos.get(i).is_some() {
                continue;
            }
            let used: Vec<usize> = around
                .iter()
                .copied()
                .filter(|&j| pos.get(j).is_some())
                .collect();
            let points: Vec<(f64, f64)> = used.iter().filter_map(|&j| pos.get(j)).collect();
            if let Some(p) = spherical_mean(&points) {
                new.push((i, p, used));
            }
        }
        if new.is_empty() {
            break;
        }
        for (i, p, used) in new {
            if let (Some(slot), Some(flag)) = (pos.at.get_mut(i), pos.estimated.get_mut(i)) {
                *slot = Some(p);
                *flag = true;
            }
            let name = |j: usize| nodes.get(j).map(RawNode::name);
            if let Some(node) = name(i) {
                found.push((
                    i,
                    EstimatedPosition {
                        node,
                        lat_lon: p,
                        neighbours: used.iter().filter_map(|&j| name(j)).collect(),
                        round,
                    },
                ));
            }
        }
    }
    found.sort_by_key(|(i, _)| *i);
    report
        .estimated_positions
        .extend(found.into_iter().map(|(_, e)| e));
}

/// After estimation: every kept edge without `distance` has positioned
/// endpoints, or gets [`LoadOptions::default_length_km`]; otherwise the
/// file is refused ([`UnderlayError::NoCoordinates`] when no kept router
/// has a position).
fn check_lengths_known(
    ctx: &Ctx,
    opts: &LoadOptions,
    nodes: &[RawNode],
    edges: &[RawEdge],
    keep: &[bool],
    pos: &Positions,
) -> Result<(), UnderlayError> {
    if opts.default_length_km.is_some() {
        return Ok(());
    }
    let kept = |i: usize| keep.get(i).copied().unwrap_or(false);
    let kept_edges: Vec<&RawEdge> = edges.iter().filter(|e| kept(e.a) && kept(e.b)).collect();
    if !kept_edges.iter().any(|e| lacks_length(e, pos)) {
        return Ok(());
    }
    let any_positioned = (0..nodes.len()).any(|i| kept(i) && pos.get(i).is_some());
    if !any_positioned {
        return Err(no_coordinates(ctx, nodes, edges, keep));
    }
    // Defensive: the kept routers are connected, so all were estimated.
    let mut needy: BTreeMap<usize, &RawEdge> = BTreeMap::new();
    for e in kept_edges.into_iter().filter(|e| lacks_length(e, pos)) {
        for n in [e.a, e.b] {
            if pos.get(n).is_none() {
                needy.entry(n).or_insert(e);
            }
        }
    }
    Err(UnderlayError::MissingCoordinates {
        file: ctx.file.to_string(),
        nodes: needy
            .iter()
            .map(|(&n, &e)| describe_missing(nodes, n, e))
            .collect(),
    })
}

/// [`UnderlayError::NoCoordinates`] over the kept routers.
fn no_coordinates(ctx: &Ctx, nodes: &[RawNode], edges: &[RawEdge], keep: &[bool]) -> UnderlayError {
    let kept = |i: usize| keep.get(i).copied().unwrap_or(false);
    UnderlayError::NoCoordinates {
        file: ctx.file.to_string(),
        routers: (0..nodes.len()).filter(|&i| kept(i)).count(),
        edges: edges
            .iter()
            .filter(|e| kept(e.a) && kept(e.b) && e.distance_km.is_none())
            .count(),
    }
}

/// [`IsolatedRouters::Drop`]: leaves out routers with no edge (self-loops
/// already removed), naming each in the report. Keeps every router of a file
/// without edges (refused later, with a message about that).
fn drop_isolated(nodes: &[RawNode], edges: &[RawEdge], keep: &mut [bool], report: &mut LoadReport) {
    if edges.is_empty() {
        return;
    }
    let mut linked = vec![false; nodes.len()];
    for e in edges {
        for n in [e.a, e.b] {
            if let Some(l) = linked.get_mut(n) {
                *l = true;
            }
        }
    }
    for (i, node) in nodes.iter().enumerate() {
        if !linked.get(i).copied().unwrap_or(true) {
            if let Some(k) = keep.get_mut(i) {
                *k = false;
            }
            report.isolated_routers_dropped += 1;
            report.dropped_nodes.push(format!(
                "{}: no link in the file (isolated router, left out; CLI: --isolated-routers keep; experiment files: isolated_routers = \"keep\")",
                node.describe()
            ));
        }
    }
}

/// Connected components among kept nodes, each a list of node indices in
/// increasing order; components are ordered by their smallest node index.
fn components(n: usize, edges: &[RawEdge], keep: &[bool]) -> Vec<Vec<usize>> {
    let kept = |i: usize| keep.get(i).copied().unwrap_or(false);
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in edges.iter().filter(|e| kept(e.a) && kept(e.b)) {
        if let Some(list) = adj.get_mut(e.a) {
            list.push(e.b);
        }
        if let Some(list) = adj.get_mut(e.b) {
            list.push(e.a);
        }
    }
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    for start in (0..n).filter(|&i| kept(i)) {
        if seen.get(start).copied().unwrap_or(true) {
            continue;
        }
        out.push(flood(start, &adj, &mut seen));
    }
    out
}

/// All nodes reachable from `start`, sorted.
fn flood(start: usize, adj: &[Vec<usize>], seen: &mut [bool]) -> Vec<usize> {
    let mut comp = Vec::new();
    let mut stack = vec![start];
    if let Some(s) = seen.get_mut(start) {
        *s = true;
    }
    while let Some(v) = stack.pop() {
        comp.push(v);
        for &w in adj.get(v).map_or(&[][..], |l| l.as_slice()) {
            if let Some(s) = seen.get_mut(w) {
                if !*s {
                    *s = true;
                    stack.push(w);
                }
            }
        }
    }
    comp.sort_unstable();
    comp
}

/// Refuses a disconnected graph or keeps its largest component, per the policy.
fn apply_connectivity_policy(
    ctx: &Ctx,
    opts: &LoadOptions,
    nodes: &[RawNode],
    edges: &[RawEdge],
    keep: &mut [bool],
    report: &mut LoadReport,
) -> Result<(), UnderlayError> {
    let comps = components(nodes.len(), edges, keep);
    if comps.len() <= 1 {
        return Ok(());
    }
    if opts.disconnected == Disconnected::Refuse {
        let mut sizes: Vec<usize> = comps.iter().map(Vec::len).collect();
        sizes.sort_unstable_by(|x, y| y.cmp(x));
        let largest = largest_component(&comps);
        let outside: Vec<String> = comps
            .iter()
            .enumerate()
            .filter(|(ci, _)| *ci != largest)
            .flat_map(|(_, c)| c.iter())
            .filter_map(|&n| nodes.get(n).map(RawNode::describe))
            .collect();
        let more = outside.len().saturating_sub(10);
        let mut named = outside.into_iter().take(10).collect::<Vec<_>>().join(", ");
        if more > 0 {
            named.push_str(&format!(" and {more} more router(s)"));
        }
        return Err(UnderlayError::Disconnected {
            file: ctx.file.to_string(),
            component_sizes: sizes,
            outside_largest: named,
        });
    }
    let largest = largest_component(&comps);
    for (ci, comp) in comps.iter().enumerate().filter(|(ci, _)| *ci != largest) {
        report.dropped_components.push(comp.len());
        for &n in comp {
            if let Some(k) = keep.get_mut(n) {
                *k = false;
            }
            if let Some(node) = nodes.get(n) {
                report.dropped_nodes.push(format!(
                    "{}: not in the largest connected component (dropped component #{} of {} router(s))",
                    node.describe(),
                    ci + 1,
                    comp.len()
                ));
            }
        }
    }
    Ok(())
}

/// Index of the largest component; ties go to the earliest (components are
/// ordered by their smallest router index).
fn largest_component(comps: &[Vec<usize>]) -> usize {
    let mut best = 0;
    for (i, c) in comps.iter().enumerate() {
        if c.len() > comps.get(best).map_or(0, Vec::len) {
            best = i;
        }
    }
    best
}

/// Routers and merged links over the kept nodes; fills the link counters of `report`.
fn assemble(
    nodes: &[RawNode],
    edges: &[RawEdge],
    keep: &[bool],
    pos: &Positions,
    opts: &LoadOptions,
    report: &mut LoadReport,
) -> (Vec<Router>, Vec<CoreLink>) {
    let mut new_index: Vec<Option<usize>> = vec![None; nodes.len()];
    let mut routers = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        if keep.get(i).copied().unwrap_or(false) {
            if let Some(slot) = new_index.get_mut(i) {
                *slot = Some(routers.len());
            }
            routers.push(Router {
                gml_id: node.id,
                label: node.label.clone(),
                lat_lon: node.lat_lon,
            });
        }
    }
    let mut links: Vec<CoreLink> = Vec::new();
    let mut by_pair: HashMap<(usize, usize), usize> = HashMap::new();
    let mut removed_with_nodes = 0;
    for edge in edges {
        let Some(link) = make_link(edge, &new_index, pos, opts) else {
            removed_with_nodes += 1;
            continue;
        };
        match by_pair
            .get(&(link.a, link.b))
            .and_then(|&i| links.get_mut(i))
        {
            Some(existing) => {
                merge_into(existing, &link);
                report.parallel_edges_merged += 1;
            }
            None => {
                by_pair.insert((link.a, link.b), links.len());
                links.push(link);
            }
        }
    }
    summarise_links(&links, removed_with_nodes, report);
    (routers, links)
}

/// The link for `edge`, or `None` when an endpoint was dropped (or, defensively,
/// when its length cannot be determined).
fn make_link(
    edge: &RawEdge,
    new_index: &[Option<usize>],
    pos: &Positions,
    opts: &LoadOptions,
) -> Option<CoreLink> {
    let ia = new_index.get(edge.a).copied().flatten()?;
    let ib = new_index.get(edge.b).copied().flatten()?;
    let (length_km, length_source) = match (edge.distance_km, pos.get(edge.a), pos.get(edge.b)) {
        (Some(d), _, _) => (d, LengthSource::Distance),
        (None, Some(pa), Some(pb)) => {
            let source = if pos.is_estimated(edge.a) || pos.is_estimated(edge.b) {
                LengthSource::Estimated
            } else {
                LengthSource::Geodesic
            };
            (geodesic_km(pa, pb), source)
        }
        (None, _, _) => (opts.default_length_km?, LengthSource::DefaultLength),
    };
    let (capacity_bps, capacity_source) = edge
        .capacity
        .unwrap_or((opts.default_capacity_bps, CapacitySource::Default));
    Some(CoreLink {
        a: ia.min(ib),
        b: ia.max(ib),
        length_km,
        capacity_bps,
        length_source,
        capacity_source,
    })
}

/// Merges a parallel edge: the shortest length wins; an explicit capacity beats
/// the default, and among explicit ones the largest wins.
fn merge_into(existing: &mut CoreLink, new: &CoreLink) {
    if new.length_km < existing.length_km {
        existing.length_km = new.length_km;
        existing.length_source = new.length_source;
    }
    let new_explicit = new.capacity_source != CapacitySource::Default;
    let old_default = existing.capacity_source == CapacitySource::Default;
    if new_explicit && (old_default || new.capacity_bps > existing.capacity_bps) {
        existing.capacity_bps = new.capacity_bps;
        existing.capacity_source = new.capacity_source;
    }
}

fn summarise_links(links: &[CoreLink], removed_with_nodes: usize, report: &mut LoadReport) {
    report.lengths_from_geodesic = links
        .iter()
        .filter(|l| l.length_source == LengthSource::Geodesic)
        .count();
    report.lengths_from_estimates = links
        .iter()
        .filter(|l| l.length_source == LengthSource::Estimated)
        .count();
    report.lengths_defaulted = links
        .iter()
        .filter(|l| l.length_source == LengthSource::DefaultLength)
        .count();
    report.capacities_defaulted = links
        .iter()
        .filter(|l| l.capacity_source == CapacitySource::Default)
        .count();
    if removed_with_nodes > 0 {
        report.notes.push(format!(
            "{removed_with_nodes} edge(s) removed together with dropped nodes"
        ));
    }
    let zero = |estimated: bool| {
        links
            .iter()
            .filter(|l| l.length_km == 0.0)
            .filter(|l| (l.length_source == LengthSource::Estimated) == estimated)
            .count()
    };
    if zero(false) > 0 {
        report.notes.push(format!(
            "{} link(s) have length 0 km (co-located routers)",
            zero(false)
        ));
    }
    if zero(true) > 0 {
        report.notes.push(format!(
            "{} link(s) to estimated positions have length 0 km (a router estimated from one neighbour sits on it)",
            zero(true)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    const FILE: &str = "net/test.gml";

    fn load(src: &str, opts: &LoadOptions) -> Result<Underlay, UnderlayError> {
        Underlay::from_gml_str(src, FILE, opts)
    }

    fn ok(src: &str) -> Underlay {
        load(src, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn err(src: &str) -> String {
        match load(src, &LoadOptions::default()) {
            Err(e) => e.to_string(),
            Ok(u) => panic!("loaded {u:?}"),
        }
    }

    fn lenient() -> LoadOptions {
        LoadOptions {
            missing_coordinates: MissingCoordinates::Drop,
            disconnected: Disconnected::LargestComponent,
            ..LoadOptions::default()
        }
    }

    fn node(id: i64, extra: &str) -> String {
        format!("  node [ id {id} {extra} ]\n")
    }

    fn edge(s: i64, t: i64, extra: &str) -> String {
        format!("  edge [ source {s} target {t} {extra} ]\n")
    }

    fn graph(parts: &[String]) -> String {
        format!(
            "Creator \"test\"\ngraph [\n  directed 0\n{}]\n",
            parts.concat()
        )
    }

    #[test]
    fn minimal_graph_with_negative_ids_and_default_labels() {
        let u = ok(&graph(&[
            node(-7, "label \"West\""),
            node(100, ""),
            edge(-7, 100, "distance 12.5 capacity 1e10"),
        ]));
        assert_eq!(u.name, "test");
        assert_eq!(u.routers[0].label, "West");
        assert_eq!(u.routers[1].label, "100");
        assert_eq!(u.routers[1].gml_id, 100);
        let l = &u.links[0];
        assert_eq!((l.a, l.b, l.length_km, l.capacity_bps), (0, 1, 12.5, 1e10));
        assert_eq!(l.length_source, LengthSource::Distance);
        assert_eq!(l.capacity_source, CapacitySource::Capacity);
        assert_eq!(u.find_router("West"), Some(0));
        assert_eq!(u.find_router("-7"), Some(0));
        assert_eq!(u.find_router("100"), Some(1));
        assert_eq!(u.find_router("nope"), None);
        assert_eq!(u.neighbours(), vec![vec![(1, 0)], vec![(0, 0)]]);
        assert!(!u.directed_source);
    }

    #[test]
    fn numeric_labels_and_integer_coordinates() {
        let u = ok(&graph(&[
            node(0, "label 5 Latitude 10 Longitude -20"),
            node(1, "label 2.5 Latitude 11.5 Longitude -20"),
            edge(0, 1, ""),
        ]));
        assert_eq!(u.routers[0].label, "5");
        assert_eq!(u.routers[1].label, "2.5");
        assert_eq!(u.routers[0].lat_lon, Some((10.0, -20.0)));
    }

    #[test]
    fn geodesic_lengths_and_defaults_are_counted() {
        let opts = LoadOptions {
            default_capacity_bps: 2.5e9,
            ..LoadOptions::default()
        };
        let src = graph(&[
            node(1, "label \"JFK\" Latitude 40.6413 Longitude -73.7781"),
            node(2, "label \"LHR\" Latitude 51.4700 Longitude -0.4543"),
            edge(1, 2, "LinkSpeedRaw 1e8"),
            node(3, "Latitude 51.47 Longitude -0.4543"),
            edge(2, 3, ""),
        ]);
        let u = load(&src, &opts).unwrap_or_else(|e| panic!("{e}"));
        let l = &u.links[0];
        assert!((l.length_km - 5555.0).abs() < 1.0, "{}", l.length_km);
        assert_eq!(l.length_source, LengthSource::Geodesic);
        assert_eq!(
            (l.capacity_bps, l.capacity_source),
            (1e8, CapacitySource::LinkSpeedRaw)
        );
        assert_eq!(
            (u.links[1].capacity_bps, u.links[1].capacity_source),
            (2.5e9, CapacitySource::Default)
        );
        assert_eq!(u.report.lengths_from_geodesic, 2);
        assert_eq!(u.report.capacities_defaulted, 1);
        assert!(u.report.notes.iter().any(|n| n.contains("length 0 km")));
    }

    #[test]
    fn capacity_beats_link_speed_raw() {
        let u = ok(&graph(&[
            node(0, ""),
            node(1, ""),
            edge(0, 1, "distance 1 LinkSpeedRaw 5 capacity 7"),
        ]));
        assert_eq!(
            (u.links[0].capacity_bps, u.links[0].capacity_source),
            (7.0, CapacitySource::Capacity)
        );
    }

    #[test]
    fn self_loops_removed_and_parallel_edges_merged() {
        let src = format!(
            "graph [ directed 1 multigraph 1\n{}]",
            [
                node(0, ""),
                node(1, ""),
                node(2, ""),
                edge(0, 0, "distance 1"),
                edge(0, 1, "distance 10 capacity 1e9"),
                edge(1, 0, "distance 4 capacity 5e8"),
                edge(0, 1, "distance 7 capacity 4e9"),
                edge(2, 1, "distance 3"),
                edge(1, 2, "distance 3 capacity 1e6"),
            ]
            .concat()
        );
        let u = ok(&src);
        assert!(u.directed_source);
        assert_eq!(u.report.self_loops_removed, 1);
        assert_eq!(u.report.parallel_edges_merged, 3);
        assert_eq!(u.link_count(), 2);
        let l = &u.links[0];
        assert_eq!((l.a, l.b, l.length_km, l.capacity_bps), (0, 1, 4.0, 4e9));
        // An explicit capacity beats the default even when smaller.
        let l = &u.links[1];
        assert_eq!(
            (l.a, l.b, l.capacity_bps, l.capacity_source),
            (1, 2, 1e6, CapacitySource::Capacity)
        );
        assert_eq!(u.report.capacities_defaulted, 0);
    }

    #[test]
    fn missing_coordinates_refused_with_names() {
        let src = graph(&[
            node(0, "label \"A\" Latitude 1 Longitude 2"),
            node(1, "label \"B\""),
            node(2, "label \"C\""),
            edge(0, 1, ""),
            edge(1, 2, "distance 5"),
        ]);
        let refuse = LoadOptions {
            missing_coordinates: MissingCoordinates::Refuse,
            ..LoadOptions::default()
        };
        let e = load(&src, &refuse).map(|_| ()).unwrap_err().to_string();
        assert!(
            e.starts_with("net/test.gml: expected Latitude/Longitude"),
            "{e}"
        );
        assert!(
            e.contains("B (id 1): no Latitude/Longitude, needed by edge 0 -- 1 at line 7"),
            "{e}"
        );
        assert!(!e.contains("C (id 2)"), "{e}");
        assert!(e.contains("--missing-coordinates drop"), "{e}");
    }

    fn refuse() -> LoadOptions {
        LoadOptions {
            missing_coordinates: MissingCoordinates::Refuse,
            ..LoadOptions::default()
        }
    }

    /// A, B, C at (0, 0), (0, 90) and the North Pole; X (no coordinates)
    /// linked to all three; Y (no coordinates) linked to X only.
    fn one_unlocated() -> String {
        graph(&[
            node(0, "label \"A\" Latitude 0 Longitude 0"),
            node(1, "label \"B\" Latitude 0 Longitude 90"),
            node(2, "label \"C\" Latitude 90 Longitude 0"),
            node(3, "label \"X\""),
            node(4, "label \"Y\""),
            edge(3, 0, ""),
            edge(1, 3, ""),
            edge(3, 2, "capacity 1e10"),
            edge(3, 0, ""),
            edge(4, 3, ""),
            edge(0, 1, ""),
        ])
    }

    #[test]
    fn unlocated_node_gets_the_spherical_mean_of_its_neighbours() {
        let u = ok(&one_unlocated());
        assert_eq!(u.node_count(), 5);
        assert_eq!(u.routers[3].lat_lon, None, "file coordinates stay absent");
        let est = &u.report.estimated_positions;
        assert_eq!(est.len(), 2);
        // By hand: unit vectors (1,0,0), (0,1,0), (0,0,1); their mean
        // (1/3, 1/3, 1/3) is at longitude 45 and latitude
        // atan(1/sqrt 2) = 35.264389682754654 degrees.
        let x = &est[0];
        assert_eq!((x.node.label.as_str(), x.node.gml_id, x.round), ("X", 3, 1));
        assert!((x.lat_lon.0 - 35.264_389_682_754_654).abs() < 1e-9, "{x:?}");
        assert!((x.lat_lon.1 - 45.0).abs() < 1e-9, "{x:?}");
        let used: Vec<&str> = x.neighbours.iter().map(|n| n.label.as_str()).collect();
        assert_eq!(used, ["A", "B", "C"], "each neighbour once, in file order");
        // Y only sees X, estimated in round 1: round 2, on X.
        let y = &est[1];
        assert_eq!((y.node.label.as_str(), y.round), ("Y", 2));
        assert_eq!(y.lat_lon, x.lat_lon);
        assert_eq!(y.neighbours[0].to_string(), "X (id 3)");
        // X's links are geodesics to its estimate; A -- B is from the file.
        let link = |a: usize, b: usize| {
            u.links
                .iter()
                .find(|l| (l.a, l.b) == (a, b))
                .unwrap_or_else(|| panic!("no link {a}-{b}"))
        };
        let xa = link(0, 3);
        assert_eq!(xa.length_source, LengthSource::Estimated);
        assert!((xa.length_km - geodesic_km((0.0, 0.0), x.lat_lon)).abs() < 1e-9);
        assert_eq!(link(2, 3).capacity_bps, 1e10);
        assert_eq!(link(3, 4).length_km, 0.0);
        assert_eq!(link(0, 1).length_source, LengthSource::Geodesic);
        assert_eq!(u.report.lengths_from_estimates, 4);
        assert_eq!(u.report.lengths_from_geodesic, 1);
        assert!(u
            .report
            .notes
            .iter()
            .any(|n| n.contains("1 link(s) to estimated")));
        // The same file refuses under Refuse and drops X, Y under Drop.
        assert!(matches!(
            load(&one_unlocated(), &refuse()),
            Err(UnderlayError::MissingCoordinates { nodes, .. }) if nodes.len() == 2
        ));
        // (Dropping X and Y isolates C.)
        let d = load(&one_unlocated(), &lenient()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((d.node_count(), d.report.dropped_nodes.len()), (2, 3));
    }

    #[test]
    fn an_estimated_length_by_hand() {
        // X halfway (on the sphere) between (0, 0) and (0, 90): (0, 45); its
        // links run 45 degrees along the equator, a * pi / 4 on WGS-84.
        let u = ok(&graph(&[
            node(0, "Latitude 0 Longitude 0"),
            node(1, "Latitude 0 Longitude 90"),
            node(2, "label \"X\""),
            edge(0, 2, ""),
            edge(2, 1, ""),
        ]));
        let want = 6378.137 * std::f64::consts::PI / 4.0;
        for l in &u.links {
            assert!(
                (l.length_km - want).abs() < 1e-6,
                "{} vs {want}",
                l.length_km
            );
        }
        let x = &u.report.estimated_positions[0];
        assert!(x.lat_lon.0.abs() < 1e-12 && (x.lat_lon.1 - 45.0).abs() < 1e-12);
    }

    #[test]
    fn estimates_do_not_depend_on_file_order() {
        // X -- A(0, 10), X -- Y, Y -- B(0, 20): both estimated in round 1
        // from their located neighbour only, whatever the order.
        let parts = [
            node(0, "label \"A\" Latitude 0 Longitude 10"),
            node(1, "label \"B\" Latitude 0 Longitude 20"),
            node(2, "label \"X\""),
            node(3, "label \"Y\""),
            edge(2, 0, ""),
            edge(2, 3, ""),
            edge(3, 1, ""),
        ];
        let mut reversed = parts.to_vec();
        reversed.reverse();
        for src in [graph(&parts), graph(&reversed)] {
            let u = ok(&src);
            let mut est: Vec<(String, (f64, f64), usize)> = u
                .report
                .estimated_positions
                .iter()
                .map(|e| (e.node.label.clone(), e.lat_lon, e.round))
                .collect();
            est.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(
                est,
                [("X".into(), (0.0, 10.0), 1), ("Y".into(), (0.0, 20.0), 1)]
            );
        }
    }

    #[test]
    fn no_coordinates_at_all_says_so_and_loads_with_a_default_length() {
        let src = graph(&[
            node(0, "label \"A\""),
            node(1, "label \"B\""),
            node(2, "label \"C\""),
            edge(0, 1, ""),
            edge(1, 2, "distance 7"),
        ]);
        let e = err(&src);
        assert_eq!(
            e,
            "net/test.gml: none of the 3 router(s) kept has Latitude/Longitude and 1 edge(s) among \
             them have no `distance`, so their lengths are unknown and cannot be estimated; give \
             every such link one length with --default-length-km KM (experiment files: \
             default_length_km = KM; reported as an approximation), or add `distance` (km) \
             attributes to the edges"
        );
        assert!(matches!(
            load(&src, &refuse()),
            Err(UnderlayError::NoCoordinates { .. })
        ));
        // Drop keeps C (its only edge has a distance) and reports A and B.
        let drop = LoadOptions {
            missing_coordinates: MissingCoordinates::Drop,
            ..LoadOptions::default()
        };
        let d = load(&src, &drop).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((d.node_count(), d.report.dropped_nodes.len()), (1, 2));
        for policy in [MissingCoordinates::Estimate, MissingCoordinates::Refuse] {
            let opts = LoadOptions {
                missing_coordinates: policy,
                default_length_km: Some(100.0),
                ..LoadOptions::default()
            };
            let u = load(&src, &opts).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(u.links[0].length_km, 100.0);
            assert_eq!(u.links[0].length_source, LengthSource::DefaultLength);
            assert_eq!(u.links[1].length_km, 7.0);
            assert_eq!(u.report.lengths_defaulted, 1);
            assert!(u.report.estimated_positions.is_empty());
        }
        let bad = LoadOptions {
            default_length_km: Some(-1.0),
            ..LoadOptions::default()
        };
        assert!(matches!(
            load(&src, &bad),
            Err(UnderlayError::BadDefaultLength { .. })
        ));
    }

    #[test]
    fn disconnected_refusal_names_what_largest_component_drops() {
        let src = graph(&[
            node(0, "label \"A\" Latitude 0 Longitude 0"),
            node(1, "label \"B\""),
            node(2, "label \"C\" Latitude 1 Longitude 1"),
            edge(0, 1, ""),
        ]);
        let keep_isolated = LoadOptions {
            isolated_routers: IsolatedRouters::Keep,
            ..LoadOptions::default()
        };
        let e = load(&src, &keep_isolated)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("--largest-component"), "{e}");
        assert!(e.ends_with("which drops C (id 2)"), "{e}");
        let u = load(
            &src,
            &LoadOptions {
                isolated_routers: IsolatedRouters::Keep,
                ..lenient_estimate()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(u.report.estimated_positions.len(), 1);
        assert_eq!(u.report.dropped_nodes.len(), 1);
    }

    #[test]
    fn isolated_routers_are_left_out_and_named_by_default() {
        let src = graph(&[
            node(0, "label \"A\" Latitude 0 Longitude 0"),
            node(1, "label \"B\" Latitude 0 Longitude 1"),
            node(2, "label \"C\""),
            node(3, "label \"D\" Latitude 1 Longitude 1"),
            edge(0, 1, ""),
            edge(1, 3, ""),
            edge(2, 2, ""),
        ]);
        let u = ok(&src);
        let labels: Vec<&str> = u.routers.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["A", "B", "D"]);
        assert_eq!(u.report.isolated_routers_dropped, 1);
        assert_eq!(u.report.self_loops_removed, 1);
        assert_eq!(u.report.dropped_nodes.len(), 1);
        assert!(
            u.report.dropped_nodes[0].starts_with("C (id 2): no link in the file"),
            "{:?}",
            u.report.dropped_nodes
        );
        // Kept, C makes the graph disconnected.
        let keep = LoadOptions {
            isolated_routers: IsolatedRouters::Keep,
            ..LoadOptions::default()
        };
        assert!(matches!(
            load(&src, &keep),
            Err(UnderlayError::Disconnected { .. })
        ));
        // A file without any link keeps its routers (one router loads).
        let single = graph(&[node(0, "label \"A\" Latitude 0 Longitude 0")]);
        assert_eq!(ok(&single).routers.len(), 1);
    }

    fn lenient_estimate() -> LoadOptions {
        LoadOptions {
            disconnected: Disconnected::LargestComponent,
            ..LoadOptions::default()
        }
    }

    #[test]
    fn missing_coordinates_policy_parses() {
        assert_eq!(
            LoadOptions::default().missing_coordinates,
            MissingCoordinates::Estimate
        );
        for p in MissingCoordinates::ALL {
            assert_eq!(p.name().parse::<MissingCoordinates>(), Ok(p));
            assert_eq!(p.to_string(), p.name());
        }
        assert_eq!(" drop ".parse(), Ok(MissingCoordinates::Drop));
        let e = "guess"
            .parse::<MissingCoordinates>()
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "missing-coordinates policy `guess`: expected refuse, estimate or drop"
        );
    }

    #[test]
    fn missing_coordinates_dropped_then_largest_component() {
        let src = graph(&[
            node(0, "label \"A\" Latitude 1 Longitude 2"),
            node(1, "label \"B\""),
            node(2, "label \"C\""),
            node(3, "label \"D\""),
            edge(0, 1, ""),
            edge(1, 2, "distance 5"),
            edge(2, 3, "distance 5"),
        ]);
        let u = load(&src, &lenient()).unwrap_or_else(|e| panic!("{e}"));
        let labels: Vec<&str> = u.routers.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["C", "D"]);
        assert_eq!(u.links[0].a, 0);
        assert_eq!(u.report.dropped_components, vec![1]);
        assert_eq!(u.report.dropped_nodes.len(), 2);
        assert!(u.report.dropped_nodes[0].starts_with("B (id 1): no Latitude/Longitude"));
        assert!(u.report.dropped_nodes[1]
            .starts_with("A (id 0): not in the largest connected component"));
    }

    #[test]
    fn disconnected_refused_with_sizes() {
        let src = graph(&[
            node(0, ""),
            node(1, ""),
            node(2, ""),
            node(3, ""),
            node(4, ""),
            node(5, ""),
            edge(0, 1, "distance 1"),
            edge(2, 3, "distance 1"),
            edge(3, 4, "distance 1"),
        ]);
        // By default the isolated router 5 is left out (and named); the
        // routers with links still form two components.
        let e = load(&src, &LoadOptions::default());
        assert!(
            matches!(&e, Err(UnderlayError::Disconnected { component_sizes, .. }) if component_sizes == &[3, 2])
        );
        let keep_isolated = LoadOptions {
            isolated_routers: IsolatedRouters::Keep,
            ..LoadOptions::default()
        };
        let e = load(&src, &keep_isolated);
        assert!(
            matches!(&e, Err(UnderlayError::Disconnected { component_sizes, .. }) if component_sizes == &[3, 2, 1])
        );
        let text = e.map(|_| ()).unwrap_err().to_string();
        assert!(
            text.starts_with(
                "net/test.gml: expected a connected graph, found 3 components of sizes [3, 2, 1]"
            ),
            "{text}"
        );
        assert!(text.contains("LargestComponent"));
    }

    #[test]
    fn largest_component_tie_goes_to_earliest_router() {
        let src = graph(&[
            node(9, ""),
            node(8, ""),
            node(7, ""),
            node(6, ""),
            edge(7, 6, "distance 1"),
            edge(9, 8, "distance 2"),
        ]);
        let u = load(&src, &lenient()).unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<i64> = u.routers.iter().map(|r| r.gml_id).collect();
        assert_eq!(ids, [9, 8]);
        assert_eq!(u.links[0].length_km, 2.0);
        assert_eq!(u.report.dropped_components, vec![2]);
    }

    #[test]
    fn single_node_loads_and_no_nodes_is_empty() {
        assert_eq!(ok(&graph(&[node(1, "")])).node_count(), 1);
        assert_eq!(err("graph [ label \"x\" ]"), "net/test.gml: expected at least one node, found none (after applying the load policies)");
    }

    fn assert_invalid(src: &str, line: u32, col: u32, needle: &str) {
        let e = err(src);
        let prefix = format!("net/test.gml:{line}:{col}: ");
        assert!(
            e.starts_with(&prefix) && e.contains(needle),
            "{e}\nwanted {prefix}...{needle}"
        );
    }

    #[test]
    fn structural_errors_have_positions() {
        assert_invalid(
            "Version 1",
            1,
            1,
            "expected a top-level `graph [ ... ]`, found none",
        );
        assert_invalid(
            "graph [ ]\ngraph [ ]",
            2,
            1,
            "found a second one (first at line 1)",
        );
        assert_invalid(
            "graph 3",
            1,
            7,
            "expected a list for `graph`, found an integer",
        );
        assert_invalid(
            "graph [ node 3 ]",
            1,
            14,
            "expected a list for `node`, found an integer",
        );
        assert_invalid(
            "graph [\n node [ label \"x\" ] ]",
            2,
            2,
            "expected an `id` in this node, found none",
        );
        assert_invalid(
            "graph [ node [ id \"3\" ] ]",
            1,
            19,
            "expected an integer for `id`, found a string",
        );
        assert_invalid(
            "graph [ node [ id 1.0 ] ]",
            1,
            19,
            "expected an integer for `id`, found a real",
        );
        assert_invalid(
            "graph [ node [ id 1 id 2 ] ]",
            1,
            21,
            "expected one `id` in a node, found a second one",
        );
        assert_invalid(
            "graph [ directed \"yes\" ]",
            1,
            18,
            "expected an integer for `directed`",
        );
    }

    #[test]
    fn node_and_edge_errors_have_positions() {
        let dup = graph(&[node(3, ""), node(3, "")]);
        assert_invalid(&dup, 5, 13, "duplicate node id 3 (first at line 4)");
        let dangling = graph(&[node(1, ""), edge(1, 17, "")]);
        assert_invalid(
            &dangling,
            5,
            26,
            "edge target 17 names no node (expected the id of a node)",
        );
        let no_target = graph(&[node(1, ""), "  edge [ source 1 ]\n".into()]);
        assert_invalid(
            &no_target,
            5,
            3,
            "expected a `target` in this edge, found none",
        );
        let lat = graph(&[node(1, "Latitude 95 Longitude 0")]);
        assert_invalid(
            &lat,
            4,
            24,
            "expected a latitude in [-90, 90] degrees for `Latitude`, found 95",
        );
        let lon = graph(&[node(1, "Latitude 0 Longitude \"east\"")]);
        assert_invalid(
            &lon,
            4,
            36,
            "expected a number for `Longitude`, found a string",
        );
    }

    #[test]
    fn bad_capacities_and_distances_are_invalid() {
        let base = |extra: &str| graph(&[node(0, ""), node(1, ""), edge(0, 1, extra)]);
        assert_invalid(
            &base("distance 1 capacity 0"),
            6,
            48,
            "expected a capacity of at least 1 bit/s for `capacity`, found 0",
        );
        assert_invalid(
            &base("distance 1 capacity 1e-300"),
            6,
            48,
            "at least 1 bit/s for `capacity`, found 1e-300",
        );
        assert_invalid(&base("distance 1 capacity -INF"), 6, 48, "found -inf");
        assert_invalid(
            &base("distance 1 LinkSpeedRaw NAN"),
            6,
            52,
            "for `LinkSpeedRaw`, found NaN",
        );
        assert_invalid(
            &base("distance -1"),
            6,
            37,
            "expected a non-negative distance in km for `distance`, found -1",
        );
        assert_invalid(&base("distance INF"), 6, 37, "found inf");
        // Finite lengths whose sum is not: the link where it overflows is named.
        let far = graph(&[
            node(0, "label \"a\""),
            node(1, "label \"b\""),
            node(2, "label \"c\""),
            edge(0, 1, "distance 1.7e308"),
            edge(1, 2, "distance 1.7e308"),
        ]);
        assert!(err(&far).contains("link b -- c: the link lengths sum to infinity"));
        // Zero distance (co-located routers, as in the Rocketfuel files) is accepted.
        assert_eq!(ok(&base("distance 0.0")).links[0].length_km, 0.0);
    }

    #[test]
    fn syntax_errors_are_prefixed_with_file_line_col() {
        let e = err("graph [\n  node [ id 1 label \"x ]\n]\n");
        assert!(
            e.starts_with("net/test.gml:2:21: expected a closing `\"`"),
            "{e}"
        );
    }

    #[test]
    fn load_reports_io_errors_and_uses_the_file_stem() {
        let missing = std::path::Path::new("/nonexistent/dir/none.gml");
        let e = Underlay::load(missing, &LoadOptions::default())
            .map(|_| ())
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/dir/none.gml: cannot read file"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("fedtopo-underlay-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("latin.gml");
        let bytes = b"graph [ node [ id 1 label \"Z\xfcrich\" ] ]".to_vec();
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
        let u = Underlay::load(&path, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            (u.name.as_str(), u.routers[0].label.as_str()),
            ("latin", "Zürich")
        );
    }

    #[test]
    fn public_types_are_serializable() {
        fn is_serialize<T: serde::Serialize>() {}
        is_serialize::<Underlay>();
        is_serialize::<LoadReport>();
        is_serialize::<Router>();
        is_serialize::<CoreLink>();
    }

    fn number_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            (-200i64..200).prop_map(|v| v.to_string()),
            (-200.0f64..200.0).prop_map(|v| format!("{v:?}")),
            Just("NAN".to_string()),
            Just("-INF".to_string()),
            Just("\"7\"".to_string()),
        ]
    }

    proptest::proptest! {
        #[test]
        fn random_graphs_never_panic(
            nodes in proptest::collection::vec((-5i64..5, proptest::option::of((number_text(), number_text()))), 0..8),
            edges in proptest::collection::vec((-6i64..6, -6i64..6, proptest::option::of(number_text()), proptest::option::of(number_text())), 0..12),
            drop in proptest::bool::ANY,
        ) {
            let mut parts = Vec::new();
            for (id, coords) in &nodes {
                let extra = coords.as_ref().map_or(String::new(), |(la, lo)| format!("Latitude {la} Longitude {lo}"));
                parts.push(node(*id, &extra));
            }
            for (s, t, d, c) in &edges {
                let mut extra = String::new();
                if let Some(d) = d { extra.push_str(&format!("distance {d} ")); }
                if let Some(c) = c { extra.push_str(&format!("capacity {c}")); }
                parts.push(edge(*s, *t, &extra));
            }
            let opts = if drop { lenient() } else { LoadOptions::default() };
            if let Ok(u) = load(&graph(&parts), &opts) {
                for l in &u.links {
                    proptest::prop_assert!(l.a < l.b && l.b < u.node_count());
                    proptest::prop_assert!(l.length_km >= 0.0 && l.capacity_bps > 0.0);
                }
            }
        }
    }
}
