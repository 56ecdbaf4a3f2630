//! Overlays read from files (`--overlays file:PATH`): a user's topology,
//! or one fedtopo exported ([`crate::overlay::export`]).
//!
//! Formats, chosen by extension (`.gml`, `.json`, `.csv`, `.txt`), else by
//! the first non-blank character (`{` JSON, a GML key followed by `[`, else CSV):
//!
//! * **GML** (networkx `write_gml`, fedtopo's export): `graph [ directed 0|1
//!   node [ id .. label ".." ] edge [ source .. target .. weight .. ] ]`;
//!   `directed` defaults to 0 (undirected), as in networkx. A graph-level
//!   `center ID` (fedtopo's STAR export) makes the overlay server-client.
//! * **node-link JSON** (networkx `node_link_data`): `{"directed": .., "nodes":
//!   [{"id": ..}], "links": [{"source": .., "target": .., "weight": ..}]}`
//!   (or `"edges"`, newer networkx); `directed` defaults to false.
//! * **per-round JSON** (a time-varying schedule): `{"rounds": [[[src, dst],
//!   ...], ...], "periodic": true}`, arcs directed, replayed periodically.
//! * **CSV** `src,dst[,weight]`: one arc per line, directed unless the file
//!   starts with the line `# undirected` (then one edge per line, both
//!   directions). An optional header names the columns (`src,dst[,weight]`
//!   or `source,target[,weight]`); `#` starts a comment line. A header
//!   `round,src,dst[,weight]` makes it a per-round schedule (weights, in
//!   JSON `[src, dst, weight]`, are then every round's consensus weights).
//!
//! Nodes are matched to silos by name: a node's `label` (GML; its `id` when
//! it has none), its `id` then its `label` (JSON), against the silo labels (unique, as exported) and then the underlay's
//! router labels and GML ids ([`Underlay::find_router`]). Every silo must
//! appear; names that match nothing are listed in the error.
//!
//! A `weight` on an arc `j -> i` is the consensus weight silo `i` gives to
//! the model of `j` (\[Marfoq20\] eq. 2); a self-loop's weight is `A_ii`
//! (it may be negative, as MATCHA's `I - alpha L(k)` is when `alpha x
//! degree > 1`), else `A_ii = max(0, 1 - sum_j A_ij)`; then every row is
//! divided by its sum, so rows are stochastic ([`FileOverlay::weights`]).

use std::collections::HashMap;
use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use serde::Serialize;
use thiserror::Error;

use crate::graph::{Overlay, PeriodicSchedule, Protocol};
use crate::underlay::{GmlEntry, GmlValue, Underlay};

/// Files larger than this are refused (bytes).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The path of an overlay file, interned (one leaked string per distinct
/// path) so that [`crate::overlay::build::OverlayKind`] stays `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct OverlayPath(&'static str);

impl OverlayPath {
    /// The interned path `path`.
    pub fn new(path: &str) -> Self {
        static PATHS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
        let set = PATHS.get_or_init(|| Mutex::new(HashSet::new()));
        let mut set = match set.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(&p) = set.get(path) {
            return OverlayPath(p);
        }
        let p: &'static str = Box::leak(path.to_string().into_boxed_str());
        set.insert(p);
        OverlayPath(p)
    }

    /// The path as text.
    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The path.
    pub fn as_path(self) -> &'static Path {
        Path::new(self.0)
    }

    /// This path resolved against `base` when it is relative (experiment
    /// files name overlay files relative to themselves).
    pub fn relative_to(self, base: &Path) -> Self {
        if self.as_path().is_absolute() || base.as_os_str().is_empty() {
            self
        } else {
            OverlayPath::new(&base.join(self.0).to_string_lossy())
        }
    }
}

impl fmt::Display for OverlayPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Where in a file a problem is: the path, and the line and column when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLocation {
    /// The file.
    pub path: String,
    /// 1-based line.
    pub line: Option<u32>,
    /// 1-based column.
    pub col: Option<u32>,
}

impl fmt::Display for FileLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.col {
                write!(f, ":{c}")?;
            }
        }
        Ok(())
    }
}

/// Why an overlay file could not be read.
#[derive(Debug, Clone, Error)]
pub enum FileOverlayError {
    /// The file could not be read.
    #[error("{at}: cannot read the overlay file: {message}")]
    Io {
        /// The file.
        at: FileLocation,
        /// The operating system's message.
        message: String,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{at}: overlay file of {bytes} bytes is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        at: FileLocation,
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The text does not parse, or lacks what the format needs.
    #[error("{at}: {message}")]
    Syntax {
        /// Where.
        at: FileLocation,
        /// What was expected and what was found.
        message: String,
    },
    /// Node names that match no silo.
    #[error(
        "{at}: {} node name(s) match no silo: {}; silos are named by label or router id, e.g. {available}",
        .names.len(), shorten(.names)
    )]
    Unmatched {
        /// The file.
        at: FileLocation,
        /// The names that matched nothing.
        names: Vec<String>,
        /// Some of the names that would match (shortened).
        available: String,
    },
    /// Silos that no node of the file names.
    #[error("{at}: the file does not name {} of the {n} silos: {}", .missing.len(), shorten(.missing))]
    Missing {
        /// The file.
        at: FileLocation,
        /// Labels of the silos missing.
        missing: Vec<String>,
        /// Silos.
        n: usize,
    },
    /// Two nodes of the file name the same silo.
    #[error("{at}: nodes `{first}` and `{second}` both name silo {silo}")]
    Duplicate {
        /// Where the second node is.
        at: FileLocation,
        /// The first name.
        first: String,
        /// The second name.
        second: String,
        /// The silo.
        silo: String,
    },
}

/// The first 20 of `names`, then how many more.
fn shorten(names: &[String]) -> String {
    const SHOWN: usize = 20;
    if names.len() <= SHOWN {
        names.join(", ")
    } else {
        format!(
            "{} (and {} more)",
            names[..SHOWN].join(", "),
            names.len() - SHOWN
        )
    }
}

/// The silos' names, for matching file nodes.
#[derive(Debug, Clone)]
pub struct SiloNames<'a> {
    /// Unique silo labels (as exported, duplicates with ` #i`).
    pub labels: Vec<String>,
    /// The underlay, for router labels and GML ids.
    pub underlay: &'a Underlay,
    /// The router of every silo.
    pub routers: Vec<usize>,
}

impl SiloNames<'_> {
    /// The silo named `name`: a silo label, else a router label or GML id
    /// hosting exactly one silo.
    fn find(&self, name: &str, by_label: &HashMap<&str, usize>) -> Option<usize> {
        if let Some(&s) = by_label.get(name) {
            return Some(s);
        }
        let r = self.underlay.find_router(name)?;
        let mut at = self.routers.iter().enumerate().filter(|(_, &x)| x == r);
        match (at.next(), at.next()) {
            (Some((s, _)), None) => Some(s),
            _ => None,
        }
    }

    fn available(&self) -> String {
        let shown: Vec<&str> = self.labels.iter().take(8).map(String::as_str).collect();
        let more = self.labels.len().saturating_sub(shown.len());
        if more > 0 {
            format!("{} (and {more} more)", shown.join(", "))
        } else {
            shown.join(", ")
        }
    }
}

/// An overlay read from a file.
#[derive(Debug, Clone)]
pub enum FileOverlay {
    /// The same overlay every round, with consensus weights when the file
    /// gives them.
    Static {
        /// The overlay.
        overlay: Overlay,
        /// Row-stochastic consensus weights `A_ij` (row `i` receives), when
        /// the file's arcs carry a `weight`.
        weights: Option<Vec<Vec<f64>>>,
    },
    /// A per-round schedule, replayed periodically, with every round's
    /// consensus weights when the file's arcs carry a `weight` (as
    /// [`FileOverlay::Static`]'s, round by round).
    Periodic {
        /// The rounds of one period.
        schedule: PeriodicSchedule,
        /// Row-stochastic consensus weights of every round, when given.
        weights: Option<Vec<Vec<Vec<f64>>>>,
    },
}

impl FileOverlay {
    /// The consensus weights of a static overlay, when the file gives them.
    pub fn weights(&self) -> Option<&[Vec<f64>]> {
        match self {
            FileOverlay::Static { weights, .. } => weights.as_deref(),
            FileOverlay::Periodic { .. } => None,
        }
    }
}

/// A node of the file: its key (what arcs refer to) and its names.
struct RawNode {
    key: String,
    names: Vec<String>,
    line: Option<u32>,
}

/// An arc of the file by node keys.
struct RawArc {
    src: String,
    dst: String,
    weight: Option<f64>,
    line: Option<u32>,
}

/// What a reader found, before matching names to silos.
struct Raw {
    directed: bool,
    /// Declared nodes (empty: the arcs' endpoints are the nodes).
    nodes: Vec<RawNode>,
    /// Arcs per round (one round for a static overlay).
    rounds: Vec<Vec<RawArc>>,
    periodic: bool,
    /// Key of the server-client centre.
    center: Option<String>,
}

/// Reads overlay file `path` for the silos `names` (see the module doc).
pub fn read(path: &Path, names: &SiloNames<'_>) -> Result<FileOverlay, FileOverlayError> {
    let at = |line: Option<u32>, col: Option<u32>| FileLocation {
        path: path.display().to_string(),
        line,
        col,
    };
    let raw = load(path, &at)?;
    let name = path
        .file_stem()
        .map_or_else(|| "file".to_string(), |s| s.to_string_lossy().into_owned());
    resolve(raw, &name, names, &at)
}

/// Checks that overlay file `path` exists, is not too large and parses, without
/// matching its names to silos (for validating an experiment grid before
/// running it; [`read`] does the rest).
pub fn check(path: &Path) -> Result<(), FileOverlayError> {
    let at = |line: Option<u32>, col: Option<u32>| FileLocation {
        path: path.display().to_string(),
        line,
        col,
    };
    load(path, &at).map(|_| ())
}

/// Reads and parses `path` in whichever format it has.
fn load(path: &Path, at: At<'_>) -> Result<Raw, FileOverlayError> {
    let meta = std::fs::metadata(path).map_err(|e| FileOverlayError::Io {
        at: at(None, None),
        message: e.to_string(),
    })?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(FileOverlayError::TooLarge {
            at: at(None, None),
            bytes: meta.len(),
            limit: MAX_FILE_BYTES,
        });
    }
    let bytes =
        crate::input_file::read_bytes(path, MAX_FILE_BYTES).map_err(|e| FileOverlayError::Io {
            at: at(None, None),
            message: e.to_string(),
        })?;
    let text = crate::underlay::decode_bytes(&bytes);
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let first = text.trim_start().chars().next();
    let raw = match ext.as_str() {
        "gml" => read_gml(&text, at)?,
        "json" => read_json(&text, at)?,
        "csv" | "txt" => read_csv(&text, at)?,
        _ if first == Some('{') => read_json(&text, at)?,
        _ if looks_like_gml(&text) => read_gml(&text, at)?,
        _ => read_csv(&text, at)?,
    };
    Ok(raw)
}

fn looks_like_gml(text: &str) -> bool {
    let t: String = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join(" ");
    let mut words = t.split_whitespace();
    matches!((words.next(), words.next()), (Some(k), Some(v)) if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && v.starts_with('['))
}

type At<'a> = &'a dyn Fn(Option<u32>, Option<u32>) -> FileLocation;

fn syntax(at: FileLocation, message: impl Into<String>) -> FileOverlayError {
    FileOverlayError::Syntax {
        at,
        message: message.into(),
    }
}

fn gml_key(v: &GmlValue) -> Option<String> {
    match v {
        GmlValue::Int(i) => Some(i.to_string()),
        GmlValue::Str(s) => Some(s.clone()),
        GmlValue::Real(r) => Some(r.to_string()),
        GmlValue::List(_) => None,
    }
}

fn read_gml(text: &str, at: At<'_>) -> Result<Raw, FileOverlayError> {
    let top = crate::underlay::gml::parse(text)
        .map_err(|e| syntax(at(Some(e.pos.line), Some(e.pos.col)), e.message))?;
    let graph = top
        .iter()
        .find(|e| e.key == "graph")
        .ok_or_else(|| syntax(at(None, None), "expected a top-level `graph [ ... ]`"))?;
    let GmlValue::List(items) = &graph.value else {
        return Err(syntax(
            at(Some(graph.value_pos.line), Some(graph.value_pos.col)),
            format!("`graph` must be a list, found {}", graph.value.kind()),
        ));
    };
    let pos = |e: &GmlEntry| at(Some(e.value_pos.line), Some(e.value_pos.col));
    let mut raw = Raw {
        directed: false,
        nodes: Vec::new(),
        rounds: vec![Vec::new()],
        periodic: false,
        center: None,
    };
    for e in items {
        match e.key.as_str() {
            "directed" => {
                raw.directed = match e.value {
                    GmlValue::Int(0) => false,
                    GmlValue::Int(1) => true,
                    _ => return Err(syntax(pos(e), "`directed` must be 0 or 1")),
                }
            }
            "multigraph" => {}
            "center" => {
                raw.center = Some(
                    gml_key(&e.value)
                        .ok_or_else(|| syntax(pos(e), "`center` must name a node id"))?,
                )
            }
            "node" => {
                let GmlValue::List(fields) = &e.value else {
                    return Err(syntax(pos(e), "`node` must be a list `[ id .. ]`"));
                };
                let id = fields
                    .iter()
                    .find(|f| f.key == "id")
                    .ok_or_else(|| syntax(pos(e), "node without an `id`"))?;
                let key = gml_key(&id.value)
                    .ok_or_else(|| syntax(pos(id), "a node `id` must be a number or string"))?;
                // The label when there is one (networkx writes one for
                // every node), else the id.
                let names = match fields.iter().find(|f| f.key == "label") {
                    Some(l) => vec![gml_key(&l.value)
                        .ok_or_else(|| syntax(pos(l), "a node `label` must be a string"))?],
                    None => vec![key.clone()],
                };
                raw.nodes.push(RawNode {
                    key,
                    names,
                    line: Some(e.key_pos.line),
                });
            }
            "edge" => {
                let GmlValue::List(fields) = &e.value else {
                    return Err(syntax(
                        pos(e),
                        "`edge` must be a list `[ source .. target .. ]`",
                    ));
                };
                let end = |k: &str| {
                    let f = fields
                        .iter()
                        .find(|f| f.key == k)
                        .ok_or_else(|| syntax(pos(e), format!("edge without a `{k}`")))?;
                    gml_key(&f.value)
                        .ok_or_else(|| syntax(pos(f), format!("edge `{k}` must be a node id")))
                };
                let weight = match fields.iter().find(|f| f.key == "weight") {
                    Some(f) => Some(
                        f.value
                            .as_f64()
                            .ok_or_else(|| syntax(pos(f), "edge `weight` must be a number"))?,
                    ),
                    None => None,
                };
                raw.rounds[0].push(RawArc {
                    src: end("source")?,
                    dst: end("target")?,
                    weight,
                    line: Some(e.key_pos.line),
                });
            }
            _ => {}
        }
    }
    Ok(raw)
}

fn json_key(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn read_json(text: &str, at: At<'_>) -> Result<Raw, FileOverlayError> {
    use serde_json::Value;
    let v: Value = serde_json::from_str(text).map_err(|e| {
        syntax(
            at(Some(e.line() as u32), Some(e.column() as u32)),
            format!("invalid JSON: {e}"),
        )
    })?;
    let here = at(None, None);
    let obj = v
        .as_object()
        .ok_or_else(|| syntax(here.clone(), "expected a JSON object"))?;
    let flag = |k: &str| -> Result<Option<bool>, FileOverlayError> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(syntax(here.clone(), format!("`{k}` must be true or false"))),
        }
    };
    let mut raw = Raw {
        directed: flag("directed")?.unwrap_or(false),
        nodes: Vec::new(),
        rounds: Vec::new(),
        periodic: false,
        center: None,
    };
    if let Some(g) = obj.get("graph").and_then(Value::as_object) {
        raw.center = g.get("center").and_then(json_key);
    }
    if let Some(nodes) = obj.get("nodes") {
        let nodes = nodes
            .as_array()
            .ok_or_else(|| syntax(here.clone(), "`nodes` must be an array"))?;
        for (i, n) in nodes.iter().enumerate() {
            let (key, label) = match n {
                Value::Object(o) => (
                    o.get("id").and_then(json_key).ok_or_else(|| {
                        syntax(here.clone(), format!("nodes[{i}]: expected an `id`"))
                    })?,
                    o.get("label").and_then(json_key),
                ),
                other => (
                    json_key(other).ok_or_else(|| {
                        syntax(
                            here.clone(),
                            format!("nodes[{i}]: expected an object or a name"),
                        )
                    })?,
                    None,
                ),
            };
            let mut names = vec![key.clone()];
            names.extend(label);
            raw.nodes.push(RawNode {
                key,
                names,
                line: None,
            });
        }
    }
    let pair = |a: &Value, what: &str| -> Result<RawArc, FileOverlayError> {
        let bad = || {
            syntax(
                here.clone(),
                format!("{what}: expected {{\"source\": .., \"target\": ..}} or [src, dst]"),
            )
        };
        let (src, dst, weight) = match a {
            Value::Object(o) => (
                o.get("source").and_then(json_key).ok_or_else(bad)?,
                o.get("target").and_then(json_key).ok_or_else(bad)?,
                match o.get("weight") {
                    None | Some(Value::Null) => None,
                    Some(w) => Some(w.as_f64().ok_or_else(|| {
                        syntax(here.clone(), format!("{what}: `weight` must be a number"))
                    })?),
                },
            ),
            Value::Array(p) if p.len() == 2 || p.len() == 3 => (
                json_key(&p[0]).ok_or_else(bad)?,
                json_key(&p[1]).ok_or_else(bad)?,
                match p.get(2) {
                    None => None,
                    Some(w) => Some(w.as_f64().ok_or_else(|| {
                        syntax(here.clone(), format!("{what}: weight must be a number"))
                    })?),
                },
            ),
            _ => return Err(bad()),
        };
        Ok(RawArc {
            src,
            dst,
            weight,
            line: None,
        })
    };
    if let Some(rounds) = obj.get("rounds") {
        if flag("periodic")? == Some(false) || flag("period")? == Some(false) {
            return Err(syntax(
                here,
                "per-round files are replayed periodically; `periodic` must be true or absent",
            ));
        }
        raw.periodic = true;
        raw.directed = flag("directed")?.unwrap_or(true);
        let rounds = rounds
            .as_array()
            .ok_or_else(|| syntax(here.clone(), "`rounds` must be an array of arc lists"))?;
        for (k, r) in rounds.iter().enumerate() {
            let arcs = r.as_array().ok_or_else(|| {
                syntax(
                    here.clone(),
                    format!("rounds[{k}] must be an array of [src, dst]"),
                )
            })?;
            raw.rounds.push(
                arcs.iter()
                    .enumerate()
                    .map(|(a, x)| pair(x, &format!("rounds[{k}][{a}]")))
                    .collect::<Result<_, _>>()?,
            );
        }
        if raw.rounds.is_empty() {
            return Err(syntax(here, "`rounds` is empty"));
        }
        return Ok(raw);
    }
    let (key, links) = match (obj.get("links"), obj.get("edges")) {
        (Some(l), _) => ("links", l),
        (None, Some(e)) => ("edges", e),
        (None, None) => {
            return Err(syntax(
                here,
                "expected node-link JSON (`nodes` and `links` or `edges`) or a per-round \
                 schedule (`rounds`)",
            ))
        }
    };
    let links = links
        .as_array()
        .ok_or_else(|| syntax(here.clone(), format!("`{key}` must be an array")))?;
    raw.rounds.push(
        links
            .iter()
            .enumerate()
            .map(|(i, l)| pair(l, &format!("{key}[{i}]")))
            .collect::<Result<_, _>>()?,
    );
    Ok(raw)
}

fn read_csv(text: &str, at: At<'_>) -> Result<Raw, FileOverlayError> {
    let mut raw = Raw {
        directed: true,
        nodes: Vec::new(),
        rounds: Vec::new(),
        periodic: false,
        center: None,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut header_seen = false;
    let mut content_seen = false;
    let mut per_round = false;
    let mut arcs: Vec<(Option<u64>, RawArc)> = Vec::new();
    for rec in reader.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map(|p| p.line() as u32);
            syntax(at(line, None), format!("invalid CSV: {e}"))
        })?;
        let line = rec.position().map(|p| p.line() as u32);
        let cells: Vec<&str> = rec.iter().collect();
        let first = cells.first().copied().unwrap_or("");
        if cells.iter().all(|c| c.is_empty()) {
            continue;
        }
        if first.starts_with('#') {
            let marker = first.trim_start_matches('#').trim().to_ascii_lowercase();
            if !content_seen && cells.len() == 1 {
                match marker.as_str() {
                    "undirected" => raw.directed = false,
                    "directed" => raw.directed = true,
                    _ => {}
                }
            }
            continue;
        }
        let lower: Vec<String> = cells.iter().map(|c| c.to_ascii_lowercase()).collect();
        let is =
            |i: usize, names: &[&str]| lower.get(i).is_some_and(|c| names.contains(&c.as_str()));
        if !header_seen && !content_seen {
            header_seen = true;
            if is(0, &["round"]) && is(1, &["src", "source"]) && is(2, &["dst", "target"]) {
                per_round = true;
                content_seen = true;
                continue;
            }
            if is(0, &["src", "source"]) && is(1, &["dst", "target"]) {
                content_seen = true;
                continue;
            }
        }
        content_seen = true;
        let off = usize::from(per_round);
        let expected = if per_round {
            "round,src,dst[,weight]"
        } else {
            "src,dst[,weight]"
        };
        if cells.len() < 2 + off || cells.len() > 3 + off {
            return Err(syntax(
                at(line, None),
                format!("expected {expected}, found {} field(s)", cells.len()),
            ));
        }
        let round = if per_round {
            Some(cells[0].parse::<u64>().map_err(|_| {
                syntax(
                    at(line, None),
                    format!("round `{}` is not a non-negative integer", cells[0]),
                )
            })?)
        } else {
            None
        };
        let weight = match cells.get(2 + off) {
            Some(w) if !w.is_empty() => Some(
                w.parse::<f64>()
                    .map_err(|_| syntax(at(line, None), format!("weight `{w}` is not a number")))?,
            ),
            _ => None,
        };
        arcs.push((
            round,
            RawArc {
                src: cells[off].to_string(),
                dst: cells[1 + off].to_string(),
                weight,
                line,
            },
        ));
    }
    if per_round {
        raw.periodic = true;
        let period = arcs
            .iter()
            .filter_map(|(r, _)| *r)
            .max()
            .map_or(0, |m| m + 1);
        if period == 0 {
            return Err(syntax(
                at(None, None),
                "a per-round CSV needs at least one arc",
            ));
        }
        if period > 1_000_000 {
            return Err(syntax(
                at(None, None),
                format!(
                    "round numbers up to {} : at most 1000000 rounds",
                    period - 1
                ),
            ));
        }
        raw.rounds = (0..period).map(|_| Vec::new()).collect();
        for (r, a) in arcs {
            raw.rounds[r.unwrap_or(0) as usize].push(a);
        }
    } else {
        raw.rounds.push(arcs.into_iter().map(|(_, a)| a).collect());
    }
    Ok(raw)
}

/// Matches the raw file's names to silos and builds the overlay.
fn resolve(
    raw: Raw,
    name: &str,
    names: &SiloNames<'_>,
    at: At<'_>,
) -> Result<FileOverlay, FileOverlayError> {
    let n = names.labels.len();
    let by_label: HashMap<&str, usize> = names
        .labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    // Node key -> silo.
    let mut silo_of: HashMap<String, usize> = HashMap::new();
    let mut named_by: Vec<Option<String>> = vec![None; n];
    let mut unmatched: Vec<String> = Vec::new();
    let mut claim = |key: &str,
                     node_names: &[String],
                     line: Option<u32>,
                     silo_of: &mut HashMap<String, usize>|
     -> Result<(), FileOverlayError> {
        if silo_of.contains_key(key) {
            return Ok(());
        }
        let Some(s) = node_names.iter().find_map(|x| names.find(x, &by_label)) else {
            let shown = node_names.first().map_or(key, String::as_str);
            if !unmatched.iter().any(|u| u == shown) {
                unmatched.push(shown.to_string());
            }
            return Ok(());
        };
        if let Some(first) = &named_by[s] {
            return Err(FileOverlayError::Duplicate {
                at: at(line, None),
                first: first.clone(),
                second: node_names.first().map_or(key, String::as_str).to_string(),
                silo: names.labels[s].clone(),
            });
        }
        named_by[s] = Some(node_names.first().map_or(key, String::as_str).to_string());
        silo_of.insert(key.to_string(), s);
        Ok(())
    };
    let declared: HashSet<&str> = raw.nodes.iter().map(|x| x.key.as_str()).collect();
    for node in &raw.nodes {
        claim(&node.key, &node.names, node.line, &mut silo_of)?;
    }
    for a in raw.rounds.iter().flatten() {
        for end in [&a.src, &a.dst] {
            if raw.nodes.is_empty() {
                claim(end, std::slice::from_ref(end), a.line, &mut silo_of)?;
            } else if !declared.contains(end.as_str()) {
                return Err(syntax(
                    at(a.line, None),
                    format!("arc endpoint `{end}` is not a declared node"),
                ));
            }
        }
    }
    if !unmatched.is_empty() {
        return Err(FileOverlayError::Unmatched {
            at: at(None, None),
            names: unmatched,
            available: names.available(),
        });
    }
    let missing: Vec<String> = (0..n)
        .filter(|&s| named_by[s].is_none())
        .map(|s| names.labels[s].clone())
        .collect();
    if !missing.is_empty() {
        return Err(FileOverlayError::Missing {
            at: at(None, None),
            missing,
            n,
        });
    }
    let arcs_of = |round: &[RawArc]| -> Vec<(usize, usize, Option<f64>, Option<u32>)> {
        let mut v = Vec::new();
        for a in round {
            let (i, j) = (silo_of[&a.src], silo_of[&a.dst]);
            v.push((i, j, a.weight, a.line));
            if !raw.directed && i != j {
                v.push((j, i, a.weight, a.line));
            }
        }
        v
    };
    if raw.periodic {
        let rounds: Vec<Overlay> = raw
            .rounds
            .iter()
            .map(|r| Overlay::from_arcs(name, n, arcs_of(r).into_iter().map(|(i, j, ..)| (i, j))))
            .collect();
        let s = PeriodicSchedule::new(name, n, rounds).ok_or_else(|| {
            syntax(
                at(None, None),
                "a per-round schedule needs at least one round",
            )
        })?;
        let all: Vec<_> = raw.rounds.iter().map(|r| arcs_of(r)).collect();
        let weights = match all.iter().flatten().find(|a| a.2.is_some()) {
            None => None,
            Some(_) => {
                if let Some(a) = all.iter().flatten().find(|a| a.2.is_none()) {
                    return Err(syntax(
                        at(a.3, None),
                        "some arcs have a `weight` and this one has none: give every arc a weight or none",
                    ));
                }
                Some(
                    all.iter()
                        .map(|arcs| stochastic_rows(n, arcs, at))
                        .collect::<Result<Vec<_>, _>>()?,
                )
            }
        };
        return Ok(FileOverlay::Periodic {
            schedule: s,
            weights,
        });
    }
    let arcs = raw.rounds.first().map(|r| arcs_of(r)).unwrap_or_default();
    let mut overlay = Overlay::from_arcs(name, n, arcs.iter().map(|&(i, j, ..)| (i, j)));
    if let Some(c) = &raw.center {
        let s = silo_of.get(c).copied().ok_or_else(|| {
            syntax(
                at(None, None),
                format!("`center` `{c}` is not a node of the file"),
            )
        })?;
        overlay.protocol = Protocol::ServerClient { center: s };
    }
    let weighted = arcs.iter().filter(|a| a.2.is_some()).count();
    let weights = if weighted == 0 {
        None
    } else {
        if let Some(a) = arcs.iter().find(|a| a.2.is_none()) {
            return Err(syntax(
                at(a.3, None),
                "some arcs have a `weight` and this one has none: give every arc a weight or none",
            ));
        }
        Some(stochastic_rows(n, &arcs, at)?)
    };
    Ok(FileOverlay::Static { overlay, weights })
}

/// Row `i`: the weights of arcs `j -> i`; the diagonal is a self-loop's
/// weight or `max(0, 1 - sum)`; then each row is divided by its sum.
fn stochastic_rows(
    n: usize,
    arcs: &[(usize, usize, Option<f64>, Option<u32>)],
    at: At<'_>,
) -> Result<Vec<Vec<f64>>, FileOverlayError> {
    let mut rows = vec![vec![0.0; n]; n];
    let mut self_loop = vec![false; n];
    for &(j, i, w, line) in arcs {
        let w = w.unwrap_or(0.0);
        if !w.is_finite() || (w < 0.0 && i != j) {
            return Err(syntax(
                at(line, None),
                format!(
                    "consensus weight {w} must be a finite number >= 0 (only a self-loop's may \
                     be negative)"
                ),
            ));
        }
        rows[i][j] = w;
        if i == j {
            self_loop[i] = true;
        }
    }
    for (i, row) in rows.iter_mut().enumerate() {
        if !self_loop[i] {
            let off: f64 = row.iter().sum();
            row[i] = (1.0 - off).max(0.0);
        }
        let sum: f64 = row.iter().sum();
        if sum <= 0.0 && row[i] < 0.0 {
            return Err(syntax(
                at(None, None),
                format!(
                    "the consensus weights of node {i}'s row sum to {sum} with a negative \
                     self-loop; a row must sum to a positive number"
                ),
            ));
        }
        if sum <= 0.0 {
            // Only a zero self-loop and zero arcs: keep the silo's model.
            row[i] = 1.0;
            continue;
        }
        for x in row.iter_mut() {
            *x /= sum;
        }
    }
    Ok(rows)
}
