//! The experiment file format (TOML).
//!
//! ```toml
//! name = "fig3-access-sweep"
//! description = "Cycle time vs access capacity on Geant (paper Fig. 3)"
//! kind = "compare"                      # what each grid point runs
//! published = "published.csv"           # optional: ours vs published
//!
//! [grid]                                # the Cartesian product of these axes
//! underlay = ["shared:paper/geantdistance.gml"]
//! overlay = ["star", "mst", "delta-mbst", "ring", "ring-opt"]
//! access = ["100M", "1G", "10G"]
//! center_access = ["same", "10G"]       # access of the STAR centre's silo
//! local_steps = [1]
//! workload = ["inaturalist"]
//! core_capacity = ["1G"]                # or "file"
//! connectivity = ["paper"]
//! center = ["first"]
//!
//! [[plot]]
//! file = "fig3.svg"
//! x = "access"
//! y = "cycle_time_ms"
//! series = "overlay"
//! log_x = true
//! filter = { center_access = "same" }
//! ```
//!
//! Underlays are paths relative to the experiment file, built-in names, or
//! `shared:REL` for `$FEDTOPO_SHARED/underlays/REL` (default `../shared`
//! beside the repository).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ExperimentError;

/// What every grid point runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExperimentKind {
    /// Build the overlay and compute its cycle time (max-plus).
    Compare,
}

/// A whole experiment file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    /// Short name (used in reports).
    pub name: String,
    /// What the experiment shows.
    #[serde(default)]
    pub description: String,
    /// What each grid point runs.
    pub kind: ExperimentKind,
    /// CSV with published values to compare against (relative to the file).
    #[serde(default)]
    pub published: Option<String>,
    /// The parameter grid.
    pub grid: Grid,
    /// Plots to draw from the results.
    #[serde(default, rename = "plot")]
    pub plots: Vec<PlotSpec>,
}

fn one<T: From<&'static str>>(v: &'static str) -> Vec<T> {
    vec![T::from(v)]
}

/// The axes of the grid; every combination is one job.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    /// Underlays: paths, built-in names or `shared:REL`.
    pub underlay: Vec<String>,
    /// Overlay names (`fedtopo compare --overlays`).
    #[serde(default = "default_overlays")]
    pub overlay: Vec<String>,
    /// Access capacity of every silo (`10G`, `100Mbps`).
    #[serde(default = "default_access")]
    pub access: Vec<String>,
    /// Access capacity of the STAR centre's silo: `same` or a bandwidth.
    #[serde(default = "default_same")]
    pub center_access: Vec<String>,
    /// Local steps s.
    #[serde(default = "default_steps")]
    pub local_steps: Vec<u32>,
    /// Workload presets (paper Table 2).
    #[serde(default = "default_workload")]
    pub workload: Vec<String>,
    /// Core link capacity: `file` (keep the underlay's) or a bandwidth.
    #[serde(default = "default_core")]
    pub core_capacity: Vec<String>,
    /// Path model: `paper` or `bottleneck`.
    #[serde(default = "default_connectivity")]
    pub connectivity: Vec<String>,
    /// STAR centre policy: `load`, `first`, `fastest` or a silo label.
    #[serde(default = "default_center")]
    pub center: Vec<String>,
}

fn default_overlays() -> Vec<String> {
    ["star", "mst", "delta-mbst", "ring", "ring-opt"]
        .map(String::from)
        .to_vec()
}
fn default_access() -> Vec<String> {
    one("10G")
}
fn default_same() -> Vec<String> {
    one("same")
}
fn default_steps() -> Vec<u32> {
    vec![1]
}
fn default_workload() -> Vec<String> {
    one("inaturalist")
}
fn default_core() -> Vec<String> {
    one("file")
}
fn default_connectivity() -> Vec<String> {
    one("paper")
}
fn default_center() -> Vec<String> {
    one("load")
}

/// A line plot drawn from the results.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Output SVG file name (in the output directory).
    pub file: String,
    /// Column for the x axis (must be numeric: `access`, `local_steps`, ...).
    pub x: String,
    /// Column for the y axis (`cycle_time_ms`, `rounds_per_s`).
    pub y: String,
    /// Column whose values make the lines (`overlay`).
    pub series: String,
    /// Title (default: the experiment's name).
    #[serde(default)]
    pub title: Option<String>,
    /// Logarithmic x axis.
    #[serde(default)]
    pub log_x: bool,
    /// Logarithmic y axis.
    #[serde(default)]
    pub log_y: bool,
    /// Only rows whose columns have these values.
    #[serde(default)]
    pub filter: BTreeMap<String, String>,
}

impl ExperimentSpec {
    /// Reads and validates an experiment file.
    pub fn load(path: &Path) -> Result<ExperimentSpec, ExperimentError> {
        let text = std::fs::read_to_string(path).map_err(|source| ExperimentError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses experiment TOML; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<ExperimentSpec, ExperimentError> {
        let spec: ExperimentSpec = toml::from_str(text).map_err(|e| {
            let (line, col) = e.span().map(|s| line_col(text, s.start)).unwrap_or((0, 0));
            ExperimentError::Spec {
                file: source.to_string(),
                line,
                col,
                message: e.message().to_string(),
            }
        })?;
        spec.validate(source)?;
        Ok(spec)
    }

    fn validate(&self, source: &str) -> Result<(), ExperimentError> {
        let g = &self.grid;
        let axes: [(&str, usize); 9] = [
            ("underlay", g.underlay.len()),
            ("overlay", g.overlay.len()),
            ("access", g.access.len()),
            ("center_access", g.center_access.len()),
            ("local_steps", g.local_steps.len()),
            ("workload", g.workload.len()),
            ("core_capacity", g.core_capacity.len()),
            ("connectivity", g.connectivity.len()),
            ("center", g.center.len()),
        ];
        for (name, len) in axes {
            if len == 0 {
                return Err(ExperimentError::Invalid(format!(
                    "{source}: grid axis `{name}` is empty; give at least one value"
                )));
            }
        }
        Ok(())
    }
}

/// 1-based line and column of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}
