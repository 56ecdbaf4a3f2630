//! The experiment file format (TOML).
//!
//! ```toml
//! name = "fig3-access-sweep"
//! description = "Cycle time vs access capacity on Geant (\[Marfoq20\] Fig. 3)"
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
//! `kind = "simulate"` replays every grid point in the event engine and adds
//! the axes `network = ["maxplus", "paper", "flow"]`, `rounds = [100]`,
//! `straggler = ["none", "lognormal:0.5"]` and `seed = [0]`; its results add
//! round statistics (`steady_round_ms`, `p95_round_ms`, ...) to the max-plus
//! `cycle_time_ms`. `metric` names the result column compared with a
//! published CSV and `table` the columns shown in `results.md`.
//!
//! `kind = "program"` runs a round program of [`crate::program`] per grid
//! point: the `overlay` axis names the method (`fedavg`, `tornadoes`, ...),
//! with the axes `network`, `rounds` (steps), `seed`, `partition`
//! (`mnist`, `fedprox-mnist`, `shakespeare`), `separation`, `lr`,
//! `batch_size`, `target` (`acc:X`) and `eval_every`.
//!
//! Every network knob of the CLI is an axis too ([`crate::net::scenario::NETWORK_KNOBS`],
//! parsed by the same [`crate::net::scenario::NetworkSpec::from_knobs`]): besides
//! the ones above, `model_bits` (`"42.88Mbit"`), `compute_ms`, `access_csv`
//! (a file of per-silo capacities), `silos_csv` (per-silo compute times,
//! capacities and data sizes, [`crate::net::silos`]; `train` jobs split their
//! data by its `data` column and report the sizes in `data_samples`), `links_csv` (measured core links,
//! [`crate::net::links`]), `silos_per_router`, `silos`,
//! `placement_seed` and `trace` (network dynamics, [`crate::net::dynamics`]:
//! `simulate` and `train` then replay event by event, `compare`'s closed
//! form refuses it) ([`OPTIONAL_NETWORK_AXES`]) are axes, and result
//! columns, only when the file gives them.
//!
//! Underlays load with the CLI's policies: `largest_component = true` keeps
//! the largest component of disconnected underlays (as `--largest-component`),
//! `missing_coordinates = "estimate"` (default), `"refuse"` or `"drop"` and
//! `default_length_km = 100` are `--missing-coordinates` and
//! `--default-length-km`, `matrix_values` and `matrix_gaps` are
//! `--matrix-values` and `--matrix-gaps` for latency-matrix underlays
//! (`.csv`; no bandwidth matrix in experiment files)
//! ([`ExperimentSpec::load_options`]). `fedtopo run`
//! checks every grid point before running any
//! ([`crate::experiment::validate`]). `[[ratio]]` tables add derived columns (a row's value over a baseline
//! row's, [`RatioSpec`]); `aggregate = "seed"` summarises rows that differ
//! only in that axis (`summary.csv`, [`crate::experiment::aggregate`]).
//!
//! No name is ignored and nothing is ambiguous: an unknown key is a TOML
//! error, a value listed twice on an axis, a `[[ratio]]` column named like
//! an axis, a result column or another ratio, and a plot file outside the
//! output directory or over another output are errors
//! ([`ExperimentSpec::parse`]).
//!
//! Underlays are paths relative to the experiment file, built-in names, or
//! `shared:REL` for `$FEDTOPO_SHARED/underlays/REL` (without the variable:
//! the first `shared/underlays` beside the experiment file's folder or one
//! of its ancestors, i.e. `../shared` beside the repository,
//! [`crate::experiment::validate::shared_dir`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::row::Cell;
use super::ExperimentError;
use crate::net::underlay::{Disconnected, IsolatedRouters, LoadOptions, MissingCoordinates};

/// What every grid point runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExperimentKind {
    /// Build the overlay and compute its cycle time (max-plus).
    Compare,
    /// Replay rounds in the event engine ([`crate::replay`]) with a network
    /// model, next to the max-plus cycle time.
    Simulate,
    /// Train a model with DPASGD on the overlay, timed by the event engine
    /// (needs the `train` feature).
    Train,
    /// Run a round program (TornadoAggregate and the baselines of its
    /// \[Lee21\] Table 4, [`crate::program`]): the `overlay` axis names the method;
    /// the program is timed in the event engine on the underlay and trained
    /// by the reference learner on synthetic label-skewed data.
    Program,
}

impl ExperimentKind {
    /// The kind as written in an experiment file (`compare`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ExperimentKind::Compare => "compare",
            ExperimentKind::Simulate => "simulate",
            ExperimentKind::Train => "train",
            ExperimentKind::Program => "program",
        }
    }

    /// The result column compared with published values and shown first in
    /// `results.md` unless the file names one.
    pub fn default_metric(self) -> &'static str {
        match self {
            ExperimentKind::Compare => "cycle_time_ms",
            ExperimentKind::Simulate => "steady_round_ms",
            ExperimentKind::Train => "time_to_target_ms",
            ExperimentKind::Program => "final_accuracy",
        }
    }

    /// The result columns shown in `results.md` unless the file names them.
    pub fn default_table(self) -> &'static [&'static str] {
        match self {
            ExperimentKind::Compare => &["silos", "cycle_time_ms"],
            ExperimentKind::Simulate => &[
                "silos",
                "cycle_time_ms",
                "steady_round_ms",
                "p95_round_ms",
                "steady_over_cycle_time",
            ],
            ExperimentKind::Train => &[
                "ms_per_round",
                "rounds_to_target",
                "time_to_target_ms",
                "final_train_loss",
                "final_test_acc",
            ],
            ExperimentKind::Program => &[
                "final_accuracy",
                "steps_to_target",
                "gb_to_target",
                "time_to_target_ms",
                "total_gb",
                "total_ms",
            ],
        }
    }
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
    /// CSV with published values to compare against (relative to the file):
    /// join columns named like grid axes (at least one), and a
    /// `published_ms` or `published` column; no other column, and one row
    /// per combination of join values.
    #[serde(default)]
    pub published: Option<String>,
    /// The result column compared with `published_ms` (default per kind:
    /// `cycle_time_ms` for compare, `steady_round_ms` for simulate).
    #[serde(default)]
    pub metric: Option<String>,
    /// Result columns shown in `results.md` (default per kind).
    #[serde(default)]
    pub table: Option<Vec<String>>,
    /// The parameter grid.
    pub grid: Grid,
    /// Plots to draw from the results.
    #[serde(default, rename = "plot")]
    pub plots: Vec<PlotSpec>,
    /// Columns derived as ratios to a baseline row (e.g. MATCHA's cycle
    /// time over RING's, \[Marfoq20\] Table 10).
    #[serde(default, rename = "ratio")]
    pub ratios: Vec<RatioSpec>,
    /// Routers without any link (as `--isolated-routers`): `"drop"` (the
    /// default: left out, each reported) or `"keep"`.
    #[serde(default)]
    pub isolated_routers: IsolatedRouters,
    /// Load disconnected underlays by keeping their largest connected
    /// component (as `--largest-component`; what is dropped is reported).
    #[serde(default)]
    pub largest_component: bool,
    /// Routers without coordinates that a link needs (as
    /// `--missing-coordinates`): `"estimate"` (the default: the spherical
    /// mean of located neighbours, reported), `"refuse"` or `"drop"`.
    #[serde(default)]
    pub missing_coordinates: MissingCoordinates,
    /// Length in km of links with no `distance` and an endpoint without a
    /// position (as `--default-length-km`; files without coordinates):
    /// finite, >= 0.
    #[serde(default)]
    pub default_length_km: Option<f64>,
    /// Latency-matrix underlays (`.csv`): `"rtt"` (the default, cells are
    /// round-trip times) or `"one-way"` (as `--matrix-values`).
    #[serde(default)]
    pub matrix_values: crate::net::underlay::matrix::MatrixValues,
    /// Latency-matrix underlays: gap policy `"reverse"` (the default),
    /// `"path"`, `"drop"` or `"refuse"` (as `--matrix-gaps`).
    #[serde(default)]
    pub matrix_gaps: crate::net::underlay::matrix::MatrixGaps,
    /// An axis to summarise over (usually `seed`): rows that differ only in
    /// it are grouped, and `summary.csv` plus a section of `results.md` give
    /// every shown column's mean, minimum, maximum and count.
    #[serde(default)]
    pub aggregate: Option<String>,
    /// The 64-bit FNV-1a hash of the file's text (not a TOML key): the
    /// fingerprint that marks an output directory as this experiment's
    /// (`OUT/jobs/experiment.fingerprint`).
    #[serde(skip)]
    pub file_fnv1a64: u64,
}

/// A result column `column = of / of(baseline)`: each row's `of` divided by
/// the `of` of the row whose axes equal this row's except those named in
/// `baseline`, which take the baseline's values.
///
/// ```toml
/// [[ratio]]
/// column = "matcha_over_ring"     # new column
/// of = "cycle_time_ms"            # a numeric result column
/// baseline = { overlay = "ring" } # one or more grid axes and their values
/// ```
///
/// The cell is empty when either value is missing (a target not reached)
/// or the baseline's is zero.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatioSpec {
    /// Name of the new column.
    pub column: String,
    /// The numeric result column divided.
    pub of: String,
    /// Axis values of the baseline row.
    pub baseline: BTreeMap<String, String>,
}

fn one<T: From<&'static str>>(v: &'static str) -> Vec<T> {
    vec![T::from(v)]
}

/// The axes of the grid; every combination is one job.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    /// The experiment's kind (copied from the file's `kind`; not a TOML key).
    #[serde(skip)]
    pub kind: Option<ExperimentKind>,
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
    /// Workload presets (\[Marfoq20\] Table 2).
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
    /// Model size M overriding the workload preset (`42.88Mbit`, `5MB`);
    /// an axis only when given, like the other optional network knobs below
    /// ([`crate::net::scenario::NETWORK_KNOBS`]).
    #[serde(default)]
    pub model_bits: Option<Vec<Cell>>,
    /// Time of one local step Tc (ms) overriding the workload preset.
    #[serde(default)]
    pub compute_ms: Option<Vec<Cell>>,
    /// Per-silo access capacities: CSV file (`silo,up,down` or `silo,capacity`).
    #[serde(default)]
    pub access_csv: Option<Vec<Cell>>,
    /// Measured core links: CSV file (`a,b,latency_ms,capacity`).
    #[serde(default)]
    pub links_csv: Option<Vec<Cell>>,
    /// Heterogeneous silos: CSV file (`silo,compute_ms,up,down,data`).
    #[serde(default)]
    pub silos_csv: Option<Vec<Cell>>,
    /// Network dynamics: CSV file (`time_s,target,value`,
    /// [`crate::net::dynamics::read`]).
    #[serde(default)]
    pub trace: Option<Vec<Cell>>,
    /// What synchronous rounds do about a silo the trace sets down
    /// (`wait`, `skip`, `timeout:MS`; [`crate::net::dynamics::AvailabilityPolicy`]).
    #[serde(default)]
    pub availability: Option<Vec<Cell>>,
    /// Silos on every router.
    #[serde(default)]
    pub silos_per_router: Option<Vec<Cell>>,
    /// Total number of silos, spread over the routers.
    #[serde(default)]
    pub silos: Option<Vec<Cell>>,
    /// Seed of the random part of `silos`.
    #[serde(default)]
    pub placement_seed: Option<Vec<Cell>>,
    /// Simulate, train, program: network model (`maxplus`, `paper`, `flow`).
    #[serde(default)]
    pub network: Option<Vec<Cell>>,
    /// Simulate, train, program: rounds replayed or trained (program: steps).
    #[serde(default)]
    pub rounds: Option<Vec<Cell>>,
    /// Simulate: compute times, `none` or `lognormal:SIGMA`.
    #[serde(default)]
    pub straggler: Option<Vec<Cell>>,
    /// Simulate, train, program: seed of every random draw (stragglers, MATCHA, data,
    /// initialisation).
    #[serde(default)]
    pub seed: Option<Vec<Cell>>,
    /// Train: `synthetic`, `synthetic:ALPHA,BETA`, `mnist:DIR`, `cifar10:DIR`.
    #[serde(default)]
    pub dataset: Option<Vec<Cell>>,
    /// Train: partition of a real dataset (`iid`, `shards:2`, `dirichlet:0.5`, ...);
    /// program: synthetic label skew (`mnist`, `fedprox-mnist`, `shakespeare`).
    #[serde(default)]
    pub partition: Option<Vec<Cell>>,
    /// Train: model (`logreg`, `mlp:200`, `lenet`, `gn-lenet`).
    #[serde(default)]
    pub model: Option<Vec<Cell>>,
    /// Train: optimiser, `sgd`, `sgd:MOMENTUM` or `adam`.
    #[serde(default)]
    pub optimizer: Option<Vec<Cell>>,
    /// Train, program: learning rate.
    #[serde(default)]
    pub lr: Option<Vec<Cell>>,
    /// Train, program: mini-batch size.
    #[serde(default)]
    pub batch_size: Option<Vec<Cell>>,
    /// Train: consensus rule (`auto`, `local-degree`, `mh`, ...).
    #[serde(default)]
    pub consensus: Option<Vec<Cell>>,
    /// Train (and program, `acc:X` only): target of the time-to-target summary, `acc:X` (test accuracy)
    /// or `loss:X` (train loss); train's default `none` gives no
    /// time-to-target columns.
    #[serde(default)]
    pub target: Option<Vec<Cell>>,
    /// Train, program: evaluate every this many rounds (program steps).
    #[serde(default)]
    pub eval_every: Option<Vec<Cell>>,
    /// Simulate, train: random failures, `none`, `node:P` or `link:P`
    /// ([`OPTIONAL_KIND_AXES`]).
    #[serde(default)]
    pub failures: Option<Vec<Cell>>,
    /// Simulate, train: `true` adds where each round's time goes to the row
    /// (mean compute / transfer / wait per silo and round, the critical
    /// path's compute and transfer shares; [`crate::replay::breakdown`]).
    #[serde(default)]
    pub breakdown: Option<Vec<Cell>>,
    /// Train: `sync` (rounds), `async-gossip` or `fedbuff[:K]`
    /// ([`crate::replay::asynchronous::AsyncProtocol`]; the asynchronous
    /// runs spend the computations of `rounds` rounds).
    #[serde(default)]
    pub protocol: Option<Vec<Cell>>,
    /// Program: distance between the synthetic classes' means (reference
    /// learner, [`crate::program::learn::LearnOptions`]).
    #[serde(default)]
    pub separation: Option<Vec<Cell>>,
}

use ExperimentKind::{Program, Simulate, Train};

/// Kind-specific axes that are grid axes (and result columns) only when
/// the file gives them: `(axis, kinds that accept it)`. `failures`:
/// `none`, `node:P` or `link:P` (each node / directed link active in a
/// round with probability P, drawn from the job's seed), as the CLI's
/// `--failures`.
pub const OPTIONAL_KIND_AXES: [(&str, &[ExperimentKind]); 3] = [
    ("failures", &[Simulate, Train]),
    ("breakdown", &[Simulate, Train]),
    ("protocol", &[Train]),
];

/// Network knobs that are grid axes (and result columns) only when the file
/// gives them, so that files without them keep their columns; every kind
/// accepts them ([`crate::net::scenario::NetworkSpec::from_knobs`] parses them).
pub const OPTIONAL_NETWORK_AXES: [&str; 10] = [
    "model_bits",
    "compute_ms",
    "access_csv",
    "links_csv",
    "silos_csv",
    "silos_per_router",
    "silos",
    "placement_seed",
    "trace",
    "availability",
];

/// Axes that only some kinds have, in key order: `(axis, kinds that accept
/// it, default value)`. An axis may appear twice with different kinds and
/// defaults (a program's `lr` defaults to the paper's 0.03).
pub const KIND_AXES: [(&str, &[ExperimentKind], &str); 19] = [
    ("network", &[Simulate, Train, Program], "maxplus"),
    ("rounds", &[Simulate, Train, Program], "100"),
    ("straggler", &[Simulate], "none"),
    ("seed", &[Simulate, Train, Program], "0"),
    ("dataset", &[Train], "synthetic"),
    ("partition", &[Train], "shards:2"),
    ("partition", &[Program], "mnist"),
    ("separation", &[Program], "0.3"),
    ("model", &[Train], "logreg"),
    ("optimizer", &[Train], "sgd"),
    ("lr", &[Train], "0.05"),
    ("lr", &[Program], "0.03"),
    ("batch_size", &[Train], "32"),
    ("batch_size", &[Program], "10"),
    ("consensus", &[Train], "auto"),
    ("target", &[Train], "none"),
    ("target", &[Program], "acc:0.45"),
    ("eval_every", &[Train], "5"),
    ("eval_every", &[Program], "100"),
];

impl Grid {
    /// Every axis of this grid with its values as text, in key order: the
    /// network axes shared by all kinds, then the kind's own axes (present
    /// only when the kind has them; missing ones get their defaults).
    pub fn axes(&self) -> Vec<(&'static str, Vec<String>)> {
        let text = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>();
        let mut axes = vec![
            ("underlay", self.underlay.clone()),
            ("overlay", self.overlay.clone()),
            ("access", self.access.clone()),
            ("center_access", self.center_access.clone()),
            ("local_steps", text(&self.local_steps)),
            ("workload", self.workload.clone()),
            ("core_capacity", self.core_capacity.clone()),
            ("connectivity", self.connectivity.clone()),
            ("center", self.center.clone()),
        ];
        for axis in OPTIONAL_NETWORK_AXES {
            if let Some(v) = self.values(axis) {
                axes.push((axis, v.iter().map(Cell::to_string).collect()));
            }
        }
        let Some(kind) = self.kind else {
            return axes;
        };
        for (axis, kinds, default) in KIND_AXES {
            if kinds.contains(&kind) {
                let values = match self.values(axis) {
                    Some(v) => v.iter().map(Cell::to_string).collect(),
                    None => vec![default.to_string()],
                };
                axes.push((axis, values));
            }
        }
        for (axis, kinds) in OPTIONAL_KIND_AXES {
            if let (true, Some(v)) = (kinds.contains(&kind), self.values(axis)) {
                axes.push((axis, v.iter().map(Cell::to_string).collect()));
            }
        }
        axes
    }

    /// The values given for a kind-specific axis (`None` when absent).
    fn values(&self, axis: &str) -> Option<&Vec<Cell>> {
        match axis {
            "network" => self.network.as_ref(),
            "rounds" => self.rounds.as_ref(),
            "straggler" => self.straggler.as_ref(),
            "seed" => self.seed.as_ref(),
            "dataset" => self.dataset.as_ref(),
            "partition" => self.partition.as_ref(),
            "model" => self.model.as_ref(),
            "optimizer" => self.optimizer.as_ref(),
            "lr" => self.lr.as_ref(),
            "batch_size" => self.batch_size.as_ref(),
            "consensus" => self.consensus.as_ref(),
            "target" => self.target.as_ref(),
            "eval_every" => self.eval_every.as_ref(),
            "separation" => self.separation.as_ref(),
            "failures" => self.failures.as_ref(),
            "breakdown" => self.breakdown.as_ref(),
            "protocol" => self.protocol.as_ref(),
            "model_bits" => self.model_bits.as_ref(),
            "compute_ms" => self.compute_ms.as_ref(),
            "access_csv" => self.access_csv.as_ref(),
            "silos_csv" => self.silos_csv.as_ref(),
            "links_csv" => self.links_csv.as_ref(),
            "silos_per_router" => self.silos_per_router.as_ref(),
            "silos" => self.silos.as_ref(),
            "placement_seed" => self.placement_seed.as_ref(),
            "trace" => self.trace.as_ref(),
            "availability" => self.availability.as_ref(),
            _ => None,
        }
    }
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
    /// Output SVG file: a relative path inside the output directory
    /// (no `..`, not absolute), not a results file, not under `jobs/`, not
    /// another plot's ([`output_path_parts`], checked when the file is read).
    pub file: String,
    /// Column for the x axis (must be numeric: `access`, `local_steps`, ...).
    pub x: String,
    /// Column for the y axis (`cycle_time_ms`, `rounds_per_s`).
    pub y: String,
    /// Column whose values make the lines (`overlay`), or several separated
    /// by commas (`overlay,network`).
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
    /// Train experiments: draw every job's per-round curve (`x`, `y` are
    /// columns of its `metrics.csv`, e.g. `wall_clock_ms`, `train_loss_mean`)
    /// instead of one point per job.
    #[serde(default)]
    pub per_round: bool,
}

impl ExperimentSpec {
    /// True for a train experiment with no target: its `target` axis is
    /// absent or only `none`, so its jobs have no time-to-target columns.
    fn trains_without_target(&self) -> bool {
        self.kind == ExperimentKind::Train
            && self
                .grid
                .target
                .as_ref()
                .is_none_or(|t| t.iter().all(|c| c.to_string() == "none"))
    }

    /// The result column compared with published values: the file's
    /// `metric`, else the kind's default ([`ExperimentKind::default_metric`];
    /// `final_test_acc` for a train experiment without a target).
    pub fn metric(&self) -> String {
        match &self.metric {
            Some(m) => m.clone(),
            None if self.trains_without_target() => "final_test_acc".into(),
            None => self.kind.default_metric().into(),
        }
    }

    /// The result columns shown in `results.md`: the file's `table`, else
    /// the kind's default ([`ExperimentKind::default_table`], without the
    /// target columns for a train experiment without a target).
    pub fn table_columns(&self) -> Vec<String> {
        if let Some(t) = &self.table {
            return t.clone();
        }
        let no_target = self.trains_without_target();
        self.kind
            .default_table()
            .iter()
            .filter(|c| !(no_target && c.contains("_to_target")))
            .map(|c| c.to_string())
            .collect()
    }

    /// Reads and validates an experiment file.
    pub fn load(path: &Path) -> Result<ExperimentSpec, ExperimentError> {
        let text = crate::input_file::read_text(path, crate::input_file::MAX_INPUT_BYTES).map_err(
            |source| ExperimentError::Io {
                path: path.display().to_string(),
                source,
            },
        )?;
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
        let mut spec = spec;
        spec.grid.kind = Some(spec.kind);
        spec.file_fnv1a64 = super::hash::fnv1a64(text.as_bytes());
        spec.validate(source)?;
        Ok(spec)
    }

    /// How this experiment loads its underlays: the file's
    /// `isolated_routers`, `largest_component`, `missing_coordinates` and
    /// `default_length_km`.
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            missing_coordinates: self.missing_coordinates,
            isolated_routers: self.isolated_routers,
            disconnected: if self.largest_component {
                Disconnected::LargestComponent
            } else {
                Disconnected::Refuse
            },
            default_length_km: self.default_length_km,
            matrix_values: self.matrix_values,
            matrix_gaps: self.matrix_gaps,
            ..LoadOptions::default()
        }
    }

    fn validate(&self, source: &str) -> Result<(), ExperimentError> {
        if let Some(km) = self.default_length_km {
            if !(km.is_finite() && km >= 0.0) {
                return Err(ExperimentError::Invalid(format!(
                    "{source}: default_length_km = {km}: expected a finite length >= 0 km"
                )));
            }
        }
        let g = &self.grid;
        let kind_axes = KIND_AXES
            .iter()
            .map(|&(a, k, _)| (a, k))
            .chain(OPTIONAL_KIND_AXES);
        for (axis, _) in kind_axes {
            let kinds: Vec<ExperimentKind> = KIND_AXES
                .iter()
                .map(|&(a, k, _)| (a, k))
                .chain(OPTIONAL_KIND_AXES)
                .filter(|(a, _)| *a == axis)
                .flat_map(|(_, k)| k.iter().copied())
                .collect();
            if g.values(axis).is_some() && !kinds.contains(&self.kind) {
                let names: Vec<String> = kinds
                    .iter()
                    .map(|k| format!("{k:?}").to_lowercase())
                    .collect();
                return Err(ExperimentError::Invalid(format!(
                    "{source}: grid axis `{axis}` applies only to kind = {}",
                    names.join(" or ")
                )));
            }
        }
        let axes = g.axes();
        for (name, values) in &axes {
            if values.is_empty() {
                return Err(ExperimentError::Invalid(format!(
                    "{source}: grid axis `{name}` is empty; give at least one value"
                )));
            }
            if let Some((i, v)) = values
                .iter()
                .enumerate()
                .find(|(i, v)| values[..*i].contains(v))
            {
                return Err(ExperimentError::Invalid(format!(
                    "{source}: grid axis `{name}` lists `{v}` twice (values {} and {}); \
                     give every value once (a repeated value repeats its rows)",
                    values.iter().position(|x| x == v).map_or(0, |p| p + 1),
                    i + 1
                )));
            }
        }
        self.validate_outputs(source)?;
        if let Some(over) = &self.aggregate {
            if !axes.iter().any(|(a, _)| a == over) {
                let names: Vec<&str> = axes.iter().map(|(a, _)| *a).collect();
                return Err(ExperimentError::Invalid(format!(
                    "{source}: aggregate = `{over}` is not a grid axis; expected one of {}",
                    names.join(", ")
                )));
            }
        }
        for (k, r) in self.ratios.iter().enumerate() {
            let clash = if axes.iter().any(|(a, _)| *a == r.column) {
                Some("a grid axis")
            } else if self.ratios[..k].iter().any(|o| o.column == r.column) {
                Some("another ratio's column")
            } else if RESERVED_COLUMNS.contains(&r.column.as_str()) {
                Some("a column of results.csv")
            } else {
                None
            };
            if let Some(what) = clash {
                return Err(ExperimentError::Invalid(format!(
                    "{source}: ratio column `{}` is already {what}; give it another name",
                    r.column
                )));
            }
            if r.baseline.is_empty() {
                return Err(ExperimentError::Invalid(format!(
                    "{source}: ratio `{}` has an empty baseline; name at least one axis, e.g. baseline = {{ overlay = \"ring\" }}",
                    r.column
                )));
            }
            for (axis, value) in &r.baseline {
                let Some((_, values)) = axes.iter().find(|(a, _)| a == axis) else {
                    let names: Vec<&str> = axes.iter().map(|(a, _)| *a).collect();
                    return Err(ExperimentError::Invalid(format!(
                        "{source}: ratio `{}`: baseline axis `{axis}` is not a grid axis; expected one of {}",
                        r.column,
                        names.join(", ")
                    )));
                };
                if !values.contains(value) {
                    return Err(ExperimentError::Invalid(format!(
                        "{source}: ratio `{}`: baseline {axis} = `{value}` is not in the grid ({})",
                        r.column,
                        values.join(", ")
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Columns `results.csv` adds beside the result columns (a ratio may not
/// take their names).
const RESERVED_COLUMNS: [&str; 3] = ["published_ms", "published", "relative_error"];

/// The files an experiment writes in its output directory besides its
/// plots (and `jobs/`, the run store).
pub const RESULT_FILES: [&str; 3] = ["results.csv", "results.md", "summary.csv"];

/// `file` as a path inside the output directory: relative, without `..`,
/// `.` only as a no-op; the normal components, or why not.
pub fn output_path_parts(file: &str) -> Result<Vec<String>, String> {
    use std::path::Component;
    let path = Path::new(file);
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err("contains `..`: outputs stay inside the output directory".into())
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(
                    "is an absolute path: outputs are written inside the output directory (--out)"
                        .into(),
                )
            }
        }
    }
    if parts.is_empty() {
        return Err("names no file".into());
    }
    Ok(parts)
}

impl ExperimentSpec {
    /// Every file the experiment writes stays inside its output directory:
    /// a plot's `file` is a relative path without `..`, is not a results
    /// file, the run store (`jobs/`) or another plot's file (compared
    /// ignoring ASCII case, as on case-insensitive file systems).
    fn validate_outputs(&self, source: &str) -> Result<(), ExperimentError> {
        let mut taken: Vec<(String, String)> = RESULT_FILES
            .iter()
            .map(|f| (f.to_string(), format!("the results file {f}")))
            .collect();
        for plot in &self.plots {
            let bad = |why: String| {
                ExperimentError::Invalid(format!("{source}: plot file `{}` {why}", plot.file))
            };
            let parts = output_path_parts(&plot.file).map_err(bad)?;
            if parts[0].eq_ignore_ascii_case("jobs") {
                return Err(bad(
                    "is in jobs/, where the job results are stored; choose another path".into(),
                ));
            }
            let key = parts.join("/").to_ascii_lowercase();
            if let Some((_, what)) = taken.iter().find(|(k, _)| *k == key) {
                return Err(bad(format!(
                    "would overwrite {what}; give every output its own file"
                )));
            }
            taken.push((key, format!("plot `{}`", plot.file)));
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
