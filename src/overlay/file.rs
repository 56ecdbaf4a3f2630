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
//!   ...], ...], "periodic": true}`, arcs directed, replayed periodically;
//!   `"timing": "sampled"` (CSV: a first line `# timing: sampled`) marks a
//!   sample of a random schedule (MATCHA's export), timed as MATCHA is
//!   ([`crate::graph::PeriodicSchedule::is_sampled`]).
//! * **CSV** `src,dst[,weight]`: one arc per line, directed unless the file
//!   starts with the line `# undirected` (then one edge per line, both
//!   directions). An optional header names the columns (`src,dst[,weight]`
//!   or `source,target[,weight]`); `#` starts a comment line. A header
//!   `round,src,dst[,weight]` makes it a per-round schedule (weights, in
//!   JSON `[src, dst, weight]`, are then every round's consensus weights);
//!   its rounds run 0, 1, 2, ... without a gap, a round without arcs
//!   written `ROUND,,`.
//!
//! The rounds of a per-round schedule must, together, connect every silo
//! to every other ([`never_hear_from`]), as a static overlay must be
//! strongly connected to have a cycle time.
//!
//! No name is ignored: a JSON file's top-level keys are those above
//! (`directed`, `multigraph`, `graph`, `nodes`, `links` or `edges`, or
//! `rounds`, `periodic`, `timing`, `nodes`, plus `name`); another key (`"Directed"`)
//! is an error naming the accepted ones, and so are both `links` and
//! `edges` (ambiguous). Node, link and graph attributes are free (networkx
//! writes any), except one that differs from a key read only in case
//! (`"Weight"`, GML `Directed 1`). A CSV header is `[round,]src,dst[,weight]`
//! exactly (any other or repeated column is an error), and a third column
//! is read as weights only under a header naming it `weight`.
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
use crate::mixing::ConsensusMatrix;
use crate::net::underlay::{GmlEntry, GmlValue, Underlay};

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
    /// A per-round schedule whose rounds, together, do not connect every
    /// silo to every other: replayed periodically, some models never reach
    /// some silos (static files get the same check from their cycle time).
    #[error(
        "{at}: the {rounds} round(s) of this schedule ({arcs} arc(s) in all) never connect every \
         silo to every other: {} never hear from {}, directly or relayed, in any round; a \
         schedule must connect every silo to every other over one period (for a sampled \
         schedule such as MATCHA's, export more rounds)",
        silos_phrase(.deaf), silos_phrase(.unheard)
    )]
    NotConnected {
        /// The file.
        at: FileLocation,
        /// Rounds of the period.
        rounds: usize,
        /// Arcs over all rounds.
        arcs: usize,
        /// Silos that never hear from `unheard`.
        deaf: Vec<String>,
        /// Silos never heard from by `deaf`.
        unheard: Vec<String>,
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

/// When the union of `rounds` (overlays on `n` silos) is not strongly
/// connected: `(deaf, unheard)`, silos `deaf` that never receive, directly
/// or relayed over any number of rounds, a model from the silos `unheard`
/// (both non-empty). With `R` the silos reachable from silo 0: the silos
/// outside `R` never hear from `R`; when `R` is everything, with `B` the
/// silos that reach silo 0, `B` never hears from the silos outside `B`.
/// `None` when every silo hears from every other (or `n <= 1`).
pub fn never_hear_from(n: usize, rounds: &[Overlay]) -> Option<(Vec<usize>, Vec<usize>)> {
    if n <= 1 {
        return None;
    }
    let mut out = vec![Vec::new(); n];
    let mut inn = vec![Vec::new(); n];
    for o in rounds {
        for &(a, b) in o.arcs() {
            out[a].push(b);
            inn[b].push(a);
        }
    }
    let reach = |next: &[Vec<usize>]| {
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(v) = stack.pop() {
            for &w in &next[v] {
                if !seen[w] {
                    seen[w] = true;
                    stack.push(w);
                }
            }
        }
        seen
    };
    let split = |seen: &[bool]| -> (Vec<usize>, Vec<usize>) { (0..n).partition(|&s| seen[s]) };
    let forward = reach(&out);
    if forward.iter().any(|&x| !x) {
        let (reached, rest) = split(&forward);
        return Some((rest, reached));
    }
    let backward = reach(&inn);
    if backward.iter().any(|&x| !x) {
        let (reaching, rest) = split(&backward);
        return Some((reaching, rest));
    }
    None
}

/// `silo A` or `the 3 silos A, B, C` (shortened).
fn silos_phrase(names: &[String]) -> String {
    if names.len() == 1 {
        format!("silo {}", names[0])
    } else {
        format!("the {} silos {}", names.len(), shorten(names))
    }
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
        weights: Option<ConsensusMatrix>,
    },
    /// A per-round schedule, replayed periodically, with every round's
    /// consensus weights when the file's arcs carry a `weight` (as
    /// [`FileOverlay::Static`]'s, round by round).
    Periodic {
        /// The rounds of one period.
        schedule: PeriodicSchedule,
        /// Row-stochastic consensus weights of every round, when given.
        weights: Option<Vec<ConsensusMatrix>>,
    },
}

impl FileOverlay {
    /// The consensus weights of a static overlay, when the file gives them.
    pub fn weights(&self) -> Option<&ConsensusMatrix> {
        match self {
            FileOverlay::Static { weights, .. } => weights.as_ref(),
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
    /// A per-round file marked as a sample of a random schedule
    /// (`"timing": "sampled"`, CSV `# timing: sampled`).
    sampled: bool,
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
    let text = crate::net::underlay::decode_bytes(&bytes);
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
    let top = crate::net::underlay::gml::parse(text)
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
        sampled: false,
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
                for f in fields {
                    gml_case_miss(&f.key, &["id", "label"], f, at)?;
                }
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
                for f in fields {
                    gml_case_miss(&f.key, &["source", "target", "weight"], f, at)?;
                }
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
            // Other graph attributes (networkx writes any, e.g. `name`)
            // are descriptive, unless they differ from a key read only
            // in case.
            other => gml_case_miss(other, &GML_GRAPH_KEYS, e, at)?,
        }
    }
    Ok(raw)
}

/// The keys of a GML overlay's `graph` that fedtopo reads.
const GML_GRAPH_KEYS: [&str; 5] = ["directed", "multigraph", "center", "node", "edge"];

/// An error when GML key `key` (of entry `e`) equals one of `reads` but for
/// its case (`Directed 1`, `Weight 0.5`): it would be ignored.
fn gml_case_miss(
    key: &str,
    reads: &[&str],
    e: &GmlEntry,
    at: At<'_>,
) -> Result<(), FileOverlayError> {
    match reads
        .iter()
        .find(|r| r.eq_ignore_ascii_case(key) && **r != key)
    {
        Some(want) => Err(syntax(
            at(Some(e.key_pos.line), Some(e.key_pos.col)),
            format!("key `{key}` is not read; the key is `{want}` (GML keys are case-sensitive)"),
        )),
        None => Ok(()),
    }
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
    check_json_keys(obj, &here)?;
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
        sampled: false,
        center: None,
    };
    if let Some(g) = obj.get("graph").and_then(Value::as_object) {
        check_attribute_case(g, &["center"], "graph", &here)?;
        raw.center = g.get("center").and_then(json_key);
    }
    if let Some(nodes) = obj.get("nodes") {
        let nodes = nodes
            .as_array()
            .ok_or_else(|| syntax(here.clone(), "`nodes` must be an array"))?;
        for (i, n) in nodes.iter().enumerate() {
            if let Value::Object(o) = n {
                check_attribute_case(o, &["id", "label"], &format!("nodes[{i}]"), &here)?;
            }
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
        if let Value::Object(o) = a {
            check_attribute_case(o, &["source", "target", "weight"], what, &here)?;
        }
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
        raw.sampled = match obj.get("timing") {
            None | Some(Value::Null) => false,
            Some(Value::String(t)) if t == "periodic" => false,
            Some(Value::String(t)) if t == "sampled" => true,
            Some(other) => {
                return Err(syntax(
                    here,
                    format!(
                        "`timing` is {other}: expected \"periodic\" (the exact rate of the \
                         rounds repeated, the default) or \"sampled\" (a sample of a random \
                         schedule such as MATCHA's, timed as MATCHA is)"
                    ),
                ))
            }
        };
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
        sampled: false,
        center: None,
    };
    // True when a header names a `weight` column: a third column is read
    // as consensus weights only then.
    let mut weighted = false;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut header_seen = false;
    let mut content_seen = false;
    let mut per_round = false;
    let mut arcs: Vec<(Option<u64>, RawArc)> = Vec::new();
    // Rounds written `ROUND,,` (no arc), with their line.
    let mut empty_rounds: Vec<(u64, Option<u32>)> = Vec::new();
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
                    "timing: sampled" => raw.sampled = true,
                    "timing: periodic" => raw.sampled = false,
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
            if is(0, &["round", "src", "source"]) {
                per_round = is(0, &["round"]);
                weighted = csv_header_has_weight(&cells, per_round)
                    .map_err(|m| syntax(at(line, None), m))?;
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
        if cells.len() == 3 + off && !weighted {
            return Err(syntax(
                at(line, None),
                format!(
                    "a third column is read as consensus weights only under a header \
                     naming it: `{expected}`"
                ),
            ));
        }
        let weight = match cells.get(2 + off) {
            Some(w) if !w.is_empty() => Some(
                w.parse::<f64>()
                    .map_err(|_| syntax(at(line, None), format!("weight `{w}` is not a number")))?,
            ),
            _ => None,
        };
        if let Some(r) = round.filter(|_| cells[1].is_empty() && cells[2].is_empty()) {
            // `ROUND,,`: round ROUND has no arc (how empty rounds are written).
            if weight.is_some() {
                return Err(syntax(
                    at(line, None),
                    "a round without arcs (`ROUND,,`) has no weight",
                ));
            }
            empty_rounds.push((r, line));
            continue;
        }
        if cells[off].is_empty() || cells[1 + off].is_empty() {
            return Err(syntax(
                at(line, None),
                format!(
                    "expected {expected} with both `src` and `dst`{}",
                    if per_round {
                        " (a round without arcs is written `ROUND,,`)"
                    } else {
                        ""
                    }
                ),
            ));
        }
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
            .chain(empty_rounds.iter().map(|&(r, _)| r))
            .max()
            .map_or(0, |m| m + 1);
        if arcs.is_empty() {
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
        let mut seen = vec![false; period as usize];
        for (r, a) in arcs {
            let r = r.unwrap_or(0) as usize;
            seen[r] = true;
            raw.rounds[r].push(a);
        }
        for &(r, line) in &empty_rounds {
            if seen[r as usize] && !raw.rounds[r as usize].is_empty() {
                return Err(syntax(
                    at(line, None),
                    format!("round {r} is written as having no arc (`{r},,`) but has arcs"),
                ));
            }
            seen[r as usize] = true;
        }
        let missing: Vec<u64> = (0..period).filter(|&r| !seen[r as usize]).collect();
        if !missing.is_empty() {
            return Err(syntax(
                at(None, None),
                format!(
                    "round numbers must run 0, 1, ..., {} without a gap: {} {} no line (write \
                     a round without arcs as `ROUND,,`)",
                    period - 1,
                    round_ranges(&missing),
                    if missing.len() == 1 { "has" } else { "have" }
                ),
            ));
        }
    } else {
        if raw.sampled {
            return Err(syntax(
                at(None, None),
                "`# timing: sampled` applies to per-round schedules (header `round,src,dst`)",
            ));
        }
        raw.rounds.push(arcs.into_iter().map(|(_, a)| a).collect());
    }
    Ok(raw)
}

/// `rounds` (sorted) as `round 3` or `rounds 0-2, 5, 7-9` (at most 20
/// ranges, then how many more).
fn round_ranges(rounds: &[u64]) -> String {
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for &r in rounds {
        match ranges.last_mut() {
            Some((_, hi)) if *hi + 1 == r => *hi = r,
            _ => ranges.push((r, r)),
        }
    }
    let text: Vec<String> = ranges
        .iter()
        .map(|&(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }
        })
        .collect();
    let word = if rounds.len() == 1 { "round" } else { "rounds" };
    format!("{word} {}", shorten(&text))
}

/// Checks the header of a CSV overlay (`cells`, the header's cells):
/// `[round,]src,dst[,weight]`, `source`/`target` for `src`/`dst`, in this
/// order, each once. Returns whether it names a `weight` column.
fn csv_header_has_weight(cells: &[&str], per_round: bool) -> Result<bool, String> {
    let record = csv::StringRecord::from(cells.to_vec());
    crate::csv_file::Columns::unique(&record)?;
    let mut expected: Vec<&[&str]> = Vec::new();
    if per_round {
        expected.push(&["round"]);
    }
    expected.extend([&["src", "source"][..], &["dst", "target"], &["weight"]]);
    let form = if per_round {
        "round,src,dst[,weight] (or source,target)"
    } else {
        "src,dst[,weight] (or source,target)"
    };
    if cells.len() > expected.len() {
        return Err(format!(
            "unknown column `{}` (column {}); a header is {form}",
            cells[expected.len()],
            expected.len() + 1
        ));
    }
    if cells.len() + 1 < expected.len() {
        return Err(format!(
            "the header has {} column(s); expected {form}",
            cells.len()
        ));
    }
    for (i, (cell, names)) in cells.iter().zip(&expected).enumerate() {
        if !names.iter().any(|n| cell.eq_ignore_ascii_case(n)) {
            return Err(format!(
                "unknown column `{cell}` (column {}); expected {} there: a header is {form}",
                i + 1,
                crate::csv_file::one_of(names)
            ));
        }
    }
    Ok(cells.len() == expected.len())
}

/// The keys a node-link or per-round JSON overlay file may have at its top
/// level: a misspelled one (`"Directed"`) is an error, never ignored.
const JSON_KEYS: [&str; 10] = [
    "directed",
    "multigraph",
    "graph",
    "nodes",
    "links",
    "edges",
    "rounds",
    "periodic",
    "timing",
    "name",
];

/// Refuses top-level keys outside [`JSON_KEYS`], and, in the free-form
/// attributes of a node, link or `graph` (networkx writes any attribute
/// there), a key that differs from one fedtopo reads (`reads`) only in
/// case (`"Weight"`): it would be ignored.
fn check_json_keys(
    obj: &serde_json::Map<String, serde_json::Value>,
    here: &FileLocation,
) -> Result<(), FileOverlayError> {
    if let Some(bad) = obj.keys().find(|k| !JSON_KEYS.contains(&k.as_str())) {
        return Err(syntax(
            here.clone(),
            format!(
                "unknown key `{bad}`; expected {} (node-link JSON, or a per-round schedule \
                 with `rounds`)",
                crate::csv_file::one_of(&JSON_KEYS)
            ),
        ));
    }
    if obj.contains_key("links") && obj.contains_key("edges") {
        return Err(syntax(
            here.clone(),
            "both `links` and `edges`: which one holds the arcs is ambiguous; give one",
        ));
    }
    if obj.contains_key("rounds") {
        if let Some(bad) = ["links", "edges", "multigraph", "graph"]
            .iter()
            .find(|k| obj.contains_key(**k))
        {
            return Err(syntax(
                here.clone(),
                format!(
                    "`rounds` (a per-round schedule) and `{bad}` (node-link JSON): give one form"
                ),
            ));
        }
    }
    Ok(())
}

/// An error when `attrs` has a key equal to one of `reads` but for its
/// case (`what` names the object in the message).
fn check_attribute_case(
    attrs: &serde_json::Map<String, serde_json::Value>,
    reads: &[&str],
    what: &str,
    here: &FileLocation,
) -> Result<(), FileOverlayError> {
    for key in attrs.keys() {
        if let Some(want) = reads
            .iter()
            .find(|r| r.eq_ignore_ascii_case(key) && **r != key.as_str())
        {
            return Err(syntax(
                here.clone(),
                format!("{what}: key `{key}` is not read; the key is `{want}` (lower case)"),
            ));
        }
    }
    Ok(())
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
        if let Some((deaf, unheard)) = never_hear_from(n, &rounds) {
            let label = |v: &[usize]| -> Vec<String> {
                v.iter().map(|&s| names.labels[s].clone()).collect()
            };
            return Err(FileOverlayError::NotConnected {
                at: at(None, None),
                rounds: rounds.len(),
                arcs: rounds.iter().map(Overlay::arc_count).sum(),
                deaf: label(&deaf),
                unheard: label(&unheard),
            });
        }
        let s = PeriodicSchedule::new(name, n, rounds)
            .ok_or_else(|| {
                syntax(
                    at(None, None),
                    "a per-round schedule needs at least one round",
                )
            })?
            .with_sampled(raw.sampled);
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
) -> Result<ConsensusMatrix, FileOverlayError> {
    let mut rows = ConsensusMatrix::zeros(n);
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
        rows[(i, j)] = w;
        if i == j {
            self_loop[i] = true;
        }
    }
    for (i, row) in rows.rows_mut().enumerate() {
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
