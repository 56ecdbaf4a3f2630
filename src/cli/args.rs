//! Options shared by several commands: which underlay, how to load it, and
//! the network and workload on top of it.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

use fedtopo::graph::failures::FailureSpec;
use fedtopo::net::connectivity::PathModel;
use fedtopo::net::delay::DelayModel;
use fedtopo::net::placement::SiloPlacement;
use fedtopo::net::scenario::{load_underlay, NetworkSpec};
use fedtopo::net::underlay::matrix::{MatrixGaps, MatrixValues};
use fedtopo::net::underlay::{
    Disconnected, IsolatedRouters, LoadOptions, MissingCoordinates, Underlay,
};
use fedtopo::overlay::build::{parse_overlay_list, BuildOptions, CenterPolicy, OverlayKind};
use fedtopo::units::parse_bandwidth;

/// What to do with nodes that lack coordinates when an edge needs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum MissingPolicy {
    /// Refuse the file and name the nodes (links get --default-length-km when given).
    Refuse,
    /// Estimate each node's position as the spherical mean of its located
    /// neighbours, in rounds; every estimate is reported.
    #[default]
    Estimate,
    /// Drop those nodes (and their edges) and report them.
    Drop,
}

impl From<MissingPolicy> for MissingCoordinates {
    fn from(p: MissingPolicy) -> Self {
        match p {
            MissingPolicy::Refuse => MissingCoordinates::Refuse,
            MissingPolicy::Estimate => MissingCoordinates::Estimate,
            MissingPolicy::Drop => MissingCoordinates::Drop,
        }
    }
}

/// `--isolated-routers`: routers without any link in the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum IsolatedPolicy {
    /// Leave them out, naming each in a note.
    #[default]
    Drop,
    /// Keep them (the underlay is then disconnected).
    Keep,
}

impl From<IsolatedPolicy> for IsolatedRouters {
    fn from(p: IsolatedPolicy) -> Self {
        match p {
            IsolatedPolicy::Drop => IsolatedRouters::Drop,
            IsolatedPolicy::Keep => IsolatedRouters::Keep,
        }
    }
}

/// The parser of a whole-number option accepting `lo..=hi`: anything
/// else (a negative number, a fraction, text, a value out of range) is
/// refused with the range, and clap names the option (`invalid value '-1'
/// for '--seed <SEED>': expected a whole number >= 0, found `-1``). Every
/// option accepts negative-looking values so that they reach this check
/// (see `cli::command`).
pub fn whole<T>(
    lo: u64,
    hi: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    move |text: &str| {
        let range = if hi == u64::MAX || hi == usize::MAX as u64 {
            format!(">= {lo}")
        } else {
            format!("in {lo}..={hi}")
        };
        match text.trim().parse::<u64>() {
            Ok(v) if (lo..=hi).contains(&v) => T::try_from(v)
                .map_err(|_| format!("expected a whole number {range}, found `{text}`")),
            _ => Err(format!("expected a whole number {range}, found `{text}`")),
        }
    }
}

/// [`whole`] for a network knob (`--local-steps`, `--silos`, ...): the
/// error says what the knob accepts, in the words of
/// [`fedtopo::net::scenario::NETWORK_KNOBS`] (as experiment files do).
fn knob_whole<T>(
    key: &'static str,
    lo: u64,
    hi: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    let expected = fedtopo::net::scenario::NETWORK_KNOBS
        .iter()
        .find(|k| k.0 == key)
        .map_or("a whole number", |k| k.2);
    move |text: &str| match text.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => {
            T::try_from(v).map_err(|_| format!("expected {expected}, found `{text}`"))
        }
        _ => Err(format!("expected {expected}, found `{text}`")),
    }
}

/// The parser of a real-number option: finite, `> lo` (`>= lo` when
/// `lo_closed`), and `< hi` (`<= hi` when `hi_closed`; no upper bound for
/// an infinite `hi`); the error gives the range, clap names the option.
pub fn real(
    lo: f64,
    lo_closed: bool,
    hi: f64,
    hi_closed: bool,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        let range = if hi.is_infinite() {
            format!(
                "a finite number {} {lo}",
                if lo_closed { ">=" } else { ">" }
            )
        } else {
            format!(
                "a number in {}{lo}, {hi}{}",
                if lo_closed { '[' } else { '(' },
                if hi_closed { ']' } else { ')' }
            )
        };
        match text.trim().parse::<f64>() {
            Ok(v)
                if v.is_finite()
                    && (v > lo || (lo_closed && v == lo))
                    && (v < hi || (hi_closed && v == hi)) =>
            {
                Ok(v)
            }
            _ => Err(format!("expected {range}, found `{text}`")),
        }
    }
}

/// Parses `--default-length-km`: a finite length >= 0 in km.
fn parse_length_km(text: &str) -> Result<f64, String> {
    let v = text
        .trim()
        .parse::<f64>()
        .map_err(|_| format!("expected a finite length >= 0 in km, found `{text}`"))?;
    fedtopo::net::underlay::check_default_length_km(v)
}

fn parse_matrix_values(text: &str) -> Result<MatrixValues, String> {
    text.parse()
}

fn parse_matrix_gaps(text: &str) -> Result<MatrixGaps, String> {
    text.parse()
}

/// Parses `--default-core-capacity`, warning about a bare number below
/// 1 kbit/s ([`fedtopo::units::bare_bandwidth_warning`]).
fn default_core_capacity(text: &str) -> Result<f64, fedtopo::units::UnitError> {
    let v = parse_bandwidth(text)?;
    if let Some(w) = fedtopo::units::bare_bandwidth_warning(text) {
        eprintln!("warning: --default-core-capacity {w}");
    }
    Ok(v)
}

/// Parses `--failures` ([`FailureSpec::parse_optional`]), warning on stderr
/// about the deprecated `node:P` / `link:P` spellings.
pub fn failures(text: &str) -> Result<Option<FailureSpec>> {
    let f = FailureSpec::parse_optional(text).map_err(|e| match e {
        fedtopo::graph::failures::FailureError::Parse(_) => anyhow::anyhow!("--{e}"),
        _ => anyhow::anyhow!("--failures `{text}`: {e}"),
    })?;
    if let Some(w) = f.as_ref().and_then(FailureSpec::legacy_warning) {
        eprintln!("warning: --failures {w}");
    }
    Ok(f)
}

/// Parses a MATCHA communication budget (`--budget`): a number in
/// `[MIN_BUDGET, 1]` (the solver's time grows as 1/budget).
pub fn parse_budget(text: &str) -> Result<f64, String> {
    let b = text.trim().parse::<f64>().map_err(|_| {
        format!(
            "expected a communication budget in [{}, 1], found `{text}`",
            fedtopo::overlay::matcha::MIN_BUDGET
        )
    })?;
    fedtopo::overlay::matcha::check_budget(b)
}

/// Parses `--matcha-rounds`: 1 to [`fedtopo::overlay::matcha::MAX_MATCHA_ROUNDS`]
/// ([`fedtopo::overlay::matcha::check_matcha_rounds`], the check Python's
/// `matcha_rounds=` gets too).
pub fn matcha_rounds(text: &str) -> Result<u64, String> {
    let r = text.trim().parse::<u64>().map_err(|_| {
        format!(
            "expected a whole number of rounds from 1 to {}, found `{text}`",
            fedtopo::overlay::matcha::MAX_MATCHA_ROUNDS
        )
    })?;
    fedtopo::overlay::matcha::check_matcha_rounds(r)
}

/// The parser of a round or step count (`mixing --rounds`, `tornado
/// --steps`, `dcliques --rounds`): at most [`fedtopo::replay::MAX_ROUNDS`],
/// since per-round records are kept in memory. Lower bounds stay with
/// each command.
#[cfg_attr(not(feature = "train"), allow(dead_code))]
pub fn round_count() -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    whole(0, fedtopo::replay::MAX_ROUNDS)
}

/// Most worker threads `run --threads` starts.
pub const MAX_THREADS: u64 = 1024;

/// The parser of `--threads`: 1 to [`MAX_THREADS`].
pub fn threads() -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    whole(1, MAX_THREADS)
}

/// Underlay selection and loading policies.
#[derive(Debug, Clone, Args)]
pub struct UnderlayArgs {
    /// GML file, networkx node-link JSON file (`.json`), latency matrix
    /// (`.csv`: measured site x site times in ms, see --matrix-values), or
    /// a built-in underlay name (`fedtopo underlay list`); default: the
    /// built-in aws-north-america.
    pub underlay: Option<String>,
    /// Latency matrix (`.csv` underlay): its cells are round-trip times
    /// (`rtt`, the default: l(i,j) = cell / 2) or one-way latencies
    /// (`one-way`), in ms.
    #[arg(long, value_name = "rtt|one-way", default_value = "rtt", value_parser = parse_matrix_values)]
    pub matrix_values: MatrixValues,
    /// Latency and bandwidth matrices: empty cells are `reverse` (the
    /// default: filled from the reverse direction, refused if that is empty
    /// too), `path` (then the shortest path through measured pairs, an
    /// approximation), `drop` (then the sites with gaps are dropped, most
    /// gaps first) or `refuse`d. Every fill and drop is reported.
    #[arg(long, value_name = "POLICY", default_value = "reverse", value_parser = parse_matrix_gaps)]
    pub matrix_gaps: MatrixGaps,
    /// Latency matrix: a bandwidth matrix CSV of the same sites giving the
    /// available bandwidth A(i,j) of every pair (`10G`, `500Mbps`, `1e9`
    /// bit/s); default: every pair gets --default-core-capacity (or
    /// --core-capacity).
    #[arg(long, value_name = "FILE")]
    pub bandwidth_matrix: Option<PathBuf>,
    /// Nodes without Latitude/Longitude whose edges have no `distance`.
    #[arg(long, value_enum, default_value_t = MissingPolicy::Estimate)]
    pub missing_coordinates: MissingPolicy,
    /// Length in km of every link that has no `distance` and an endpoint
    /// without a position (none in the file, none estimated), e.g. in files
    /// without any coordinates; reported as an approximation.
    #[arg(long, value_name = "KM", value_parser = parse_length_km)]
    pub default_length_km: Option<f64>,
    /// Routers without any link in the file: `drop` (the default) leaves
    /// them out and names each in a note; `keep` keeps them, which makes
    /// the underlay disconnected (see --largest-component).
    #[arg(long, value_enum, default_value_t = IsolatedPolicy::Drop)]
    pub isolated_routers: IsolatedPolicy,
    /// Keep the largest connected component of a disconnected underlay
    /// (default: refuse it). Routers without links are handled first, by
    /// --isolated-routers.
    #[arg(long)]
    pub largest_component: bool,
    /// Capacity of core links that give none (`capacity` or `LinkSpeedRaw`).
    #[arg(long, default_value = "1G", value_parser = default_core_capacity)]
    pub default_core_capacity: f64,
}

impl UnderlayArgs {
    /// Loads the underlay with the chosen policies, reporting what was
    /// dropped or approximated on stderr.
    pub fn load(&self, quiet: bool) -> Result<Underlay> {
        let opts = LoadOptions {
            missing_coordinates: self.missing_coordinates.into(),
            isolated_routers: self.isolated_routers.into(),
            disconnected: if self.largest_component {
                Disconnected::LargestComponent
            } else {
                Disconnected::Refuse
            },
            default_capacity_bps: self.default_core_capacity,
            default_length_km: self.default_length_km,
            matrix_values: self.matrix_values,
            matrix_gaps: self.matrix_gaps,
            bandwidth_matrix: self.bandwidth_matrix.clone(),
        };
        let u = load_underlay(self.underlay.as_deref(), &opts)?;
        if !quiet {
            for line in fedtopo::net::underlay::notes::report_lines(&u) {
                eprintln!("note: {}: {line}", u.name);
            }
        }
        Ok(u)
    }
}

/// Network and workload options: the knobs of [`NetworkSpec`], parsed by
/// [`NetworkSpec::from_knobs`] (the parser experiment files use too).
#[derive(Debug, Clone, Args)]
pub struct NetworkArgs {
    /// Workload preset ([Marfoq20] Table 2): shakespeare, femnist, sent140, inaturalist.
    #[arg(long, default_value = "inaturalist")]
    pub workload: String,
    /// Model size M, overriding the preset (`44961717`, `42.88Mbit`, `5MB`).
    #[arg(long)]
    pub model_bits: Option<String>,
    /// Time of one local step Tc in ms, overriding the preset.
    #[arg(long)]
    pub compute_ms: Option<String>,
    /// Local steps per round s.
    #[arg(long, short = 's', default_value_t = 1, value_parser = knob_whole::<u32>("local_steps", 1, u32::MAX as u64))]
    pub local_steps: u32,
    /// Access link capacity of every silo, both directions (`10G`, `100Mbps`, `inf`).
    #[arg(long, default_value = "10G")]
    pub access: String,
    /// Per-silo access capacities: CSV with `silo,up,down` or `silo,capacity`.
    #[arg(long)]
    pub access_csv: Option<PathBuf>,
    /// Measured core links: CSV with `a,b` (a link's routers) and any of
    /// `latency_ms`, `capacity`; overrides the underlay file's values.
    #[arg(long)]
    pub links_csv: Option<PathBuf>,
    /// Heterogeneous silos: CSV with `silo` (router label/id = all its silos,
    /// or `ROUTER#k`) and any of `compute_ms` (ms per local step), `up`,
    /// `down` or `capacity`, `data` (training examples held by the silo, a
    /// whole number >= 1, every silo needs one when the column is given);
    /// applied after --access-csv. `data` does not change timing; `train`
    /// gives silo i exactly data(i) examples and weights DecAvg and STAR's
    /// average by them.
    #[arg(long)]
    pub silos_csv: Option<PathBuf>,
    /// Capacity of every core link (`1G`), or `file` to keep the file's values.
    #[arg(long, default_value = "file")]
    pub core_capacity: String,
    /// Path model: `paper` (capacity / hops) or `bottleneck` (min capacity on the route).
    #[arg(long, default_value = "paper", value_parser = PathModel::ALL.map(PathModel::name))]
    pub connectivity: String,
    /// Network dynamics: CSV `time_s,target,value` of bandwidth, latency
    /// and availability changes over time (targets `up:SILO`, `down:SILO`,
    /// `access:SILO`, `latency:SILO` ms, `avail:SILO` up/down,
    /// `link:A|B`, `link_latency:A|B` ms); write one with `fedtopo trace
    /// diurnal|churn`. Replays
    /// and clocks then run event by event (no max-plus closed form).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// What synchronous rounds do about a silo the trace sets down:
    /// `wait` for it, `skip` it (a failure detector: no wait, no send, the
    /// averaging weights re-normalised over the models received), or
    /// `timeout:MS` (wait at most MS ms after the local steps, late models
    /// dropped). A silo left out rejoins from its neighbours' model when
    /// back up. Needs `--trace`.
    #[arg(long, default_value = "wait", value_name = "POLICY")]
    pub availability: String,
}

impl NetworkArgs {
    /// The network spec of these options with silos placed by `placement`
    /// (one per router when `None`). Errors name the option.
    pub fn spec(&self, placement: Option<&PlacementArgs>) -> Result<NetworkSpec> {
        let steps = self.local_steps.to_string();
        let seed = placement.map(|p| p.placement_seed.to_string());
        let count = |v: Option<usize>| v.map(|k| k.to_string());
        let per_router = placement.and_then(|p| count(p.silos_per_router));
        let silos = placement.and_then(|p| count(p.silos));
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.to_string_lossy().into_owned());
        let csv = path(&self.access_csv);
        let silos_csv = path(&self.silos_csv);
        let links_csv = path(&self.links_csv);
        let trace = path(&self.trace);
        let knob = |key: &str| match key {
            "workload" => Some(self.workload.as_str()),
            "local_steps" => Some(steps.as_str()),
            "model_bits" => self.model_bits.as_deref(),
            "compute_ms" => self.compute_ms.as_deref(),
            "access" => Some(self.access.as_str()),
            "access_csv" => csv.as_deref(),
            "silos_csv" => silos_csv.as_deref(),
            "links_csv" => links_csv.as_deref(),
            "core_capacity" => Some(self.core_capacity.as_str()),
            "connectivity" => Some(self.connectivity.as_str()),
            "silos_per_router" => per_router.as_deref(),
            "silos" => silos.as_deref(),
            "placement_seed" => seed.as_deref(),
            "trace" => trace.as_deref(),
            "availability" => Some(self.availability.as_str()),
            _ => None,
        };
        for (key, warning) in NetworkSpec::knob_warnings(knob) {
            eprintln!("warning: --{} {warning}", key.replace('_', "-"));
        }
        NetworkSpec::from_knobs(knob).map_err(option_error)
    }

    /// These options as command-line flags, those that differ from the
    /// defaults only (`--access 100M`), to print a command that runs on the
    /// same network.
    pub fn as_flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut flag = |name: &str, value: &str, default: Option<&str>| {
            if default != Some(value) {
                out.push(format!("--{name}"));
                out.push(value.to_string());
            }
        };
        flag("workload", &self.workload, Some("inaturalist"));
        if let Some(m) = &self.model_bits {
            flag("model-bits", m, None);
        }
        if let Some(c) = &self.compute_ms {
            flag("compute-ms", c, None);
        }
        flag("local-steps", &self.local_steps.to_string(), Some("1"));
        flag("access", &self.access, Some("10G"));
        for (name, path) in [
            ("access-csv", &self.access_csv),
            ("links-csv", &self.links_csv),
            ("silos-csv", &self.silos_csv),
            ("trace", &self.trace),
        ] {
            if let Some(p) = path {
                flag(name, &p.display().to_string(), None);
            }
        }
        flag("availability", &self.availability, Some("wait"));
        flag("core-capacity", &self.core_capacity, Some("file"));
        flag("connectivity", &self.connectivity, Some("paper"));
        out
    }

    /// The delay model of `underlay` under these options, one silo per
    /// router (static: a `--trace` is refused).
    pub fn delay_model(&self, underlay: &Underlay) -> Result<DelayModel> {
        self.refuse_trace()?;
        Ok(self.spec(None)?.build(underlay)?)
    }

    /// Refuses `--trace` in a command that times the static network
    /// (max-plus cycle times, overlay design, calibration): it would be
    /// ignored there.
    pub fn refuse_trace(&self) -> Result<()> {
        if let Some(t) = &self.trace {
            bail!(
                "--trace {}: this command times the static network (max-plus cycle times, \
                 designs, fits) and cannot follow a trace; `fedtopo simulate`, `fedtopo train`, \
                 experiment files of kind simulate or train and Python clocks replay one",
                t.display()
            );
        }
        Ok(())
    }
}

/// An overlay name usable as one file or directory name: path separators
/// become `_` (`file:a/b.gml` -> `file:a_b.gml`); other names are unchanged.
pub fn file_safe(name: &str) -> String {
    name.replace(['/', '\\'], "_")
}

/// Parses `--center`: `load`, `first`, `fastest`, or a silo label / GML id.
pub fn center_policy(text: &str, underlay: &Underlay) -> Result<CenterPolicy> {
    CenterPolicy::parse(text, underlay).map_err(|e| anyhow::anyhow!("--{e}"))
}

/// `--center`: where STAR is centred.
#[derive(Debug, Clone, Args)]
pub struct CenterArgs {
    /// STAR centre. `fastest` (the default): the silo that gives STAR the
    /// least cycle time on this network, so "speed-up vs STAR" is against
    /// the best STAR. `load`: the highest load centrality, the paper's
    /// choice ([Marfoq20]; experiment files use it for reproduction).
    /// `first`: the first silo. Or a silo's label / GML id.
    #[arg(long, default_value = "fastest")]
    pub center: String,
}

impl CenterArgs {
    /// `--center` as a build knob ([`build_options`]).
    pub fn knobs(&self) -> Vec<(&'static str, String)> {
        vec![("center", self.center.clone())]
    }
}

/// The overlays' build options from the commands' build knobs
/// (`(key, text)` pairs: `center`, `seed`, `budget`, `matcha_rounds`,
/// `dc_*`): one parser, [`BuildOptions::from_knobs`], for the CLI,
/// experiment files and Python; errors name the option (`--dc-steps`).
pub fn build_options(
    knobs: &[(&'static str, String)],
    underlay: &Underlay,
    placement: &SiloPlacement,
) -> Result<BuildOptions> {
    BuildOptions::from_knobs(knob_value(knobs), underlay, placement).map_err(option_error)
}

/// The text of a knob among `(key, text)` pairs, for the `from_knobs` parsers.
pub fn knob_value<'a>(knobs: &'a [(&'static str, String)]) -> impl Fn(&str) -> Option<&'a str> {
    move |key| {
        knobs
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A knob's error as the option that gave it (`--dc-steps `x`: expected ...`).
pub fn option_error(e: fedtopo::net::scenario::KnobError) -> anyhow::Error {
    anyhow::anyhow!(
        "--{} `{}`: expected {}",
        e.key.replace('_', "-"),
        e.value,
        e.expected
    )
}

/// Where silos sit on the underlay (`compare`, `simulate`).
#[derive(Debug, Clone, Args)]
pub struct PlacementArgs {
    /// Silos attached to every router (default 1: silo i on router i).
    /// Silos on one router talk over their access links only (no core
    /// link, zero latency).
    #[arg(long, conflicts_with = "silos", value_parser = knob_whole::<usize>("silos_per_router", 1, 10_000))]
    pub silos_per_router: Option<usize>,
    /// Total number of silos, spread as evenly as possible over the routers,
    /// the remainder on routers drawn with --placement-seed.
    #[arg(long, value_parser = knob_whole::<usize>("silos", 1, 10_000))]
    pub silos: Option<usize>,
    /// Seed of the random part of --silos.
    #[arg(long, default_value_t = 0, value_parser = knob_whole::<u64>("placement_seed", 0, u64::MAX))]
    pub placement_seed: u64,
}

/// An `--overlays` list, parsed once by the value parser with the one
/// overlay grammar ([`fedtopo::overlay::spec`]): the text as given and
/// its overlays.
#[derive(Debug, Clone)]
pub struct OverlayList {
    /// The list as given.
    pub text: String,
    /// Its overlays, in order.
    pub kinds: Vec<OverlayKind>,
}

/// Parses an `--overlays` list ([`parse_overlay_list`]): no empty list or
/// item, every name known, parameters unambiguous.
pub fn overlay_list(text: &str) -> Result<OverlayList, String> {
    let kinds = parse_overlay_list(text).map_err(|e| e.to_string())?;
    Ok(OverlayList {
        text: text.to_string(),
        kinds,
    })
}

/// The help of a command's `--overlays`: `what`, then every name the
/// grammar knows ([`fedtopo::overlay::spec::known_overlays`]).
pub fn overlays_help(what: &str) -> String {
    format!(
        "{what}, comma-separated, or `all`. Names: {}. Parameters go as NAME:KEY=VALUE,... or \
         NAME[KEY=VALUE,...]; `file:PATH` reads your own overlay (GML, node-link JSON, CSV or \
         per-round file; see docs/overlays.md)",
        fedtopo::overlay::spec::known_overlays()
    )
}

/// The network a command times overlays on: the underlay, the network
/// knobs and the delay model they build.
pub struct Setup {
    /// The underlay (notes printed).
    pub underlay: Underlay,
    /// The network knobs.
    pub spec: NetworkSpec,
    /// The delay model of `spec` on `underlay`.
    pub model: DelayModel,
}

impl Setup {
    /// Loads the underlay and builds the static network of the options
    /// (a `--trace` is refused: see [`NetworkArgs::refuse_trace`]).
    pub fn load(u: &UnderlayArgs, n: &NetworkArgs, p: &PlacementArgs) -> Result<Setup> {
        n.refuse_trace()?;
        Self::load_dynamic(u, n, p)
    }

    /// As [`Self::load`], with the network dynamics of `--trace` (for
    /// the commands that replay event by event).
    pub fn load_dynamic(u: &UnderlayArgs, n: &NetworkArgs, p: &PlacementArgs) -> Result<Setup> {
        let underlay = u.load(false)?;
        let spec = n.spec(Some(p))?;
        let model = spec.build(&underlay)?;
        Ok(Setup {
            underlay,
            spec,
            model,
        })
    }

    /// The overlays' build options from the build knobs `knobs`
    /// ([`build_options`]) on this underlay and placement.
    pub fn build_options(&self, knobs: &[(&'static str, String)]) -> Result<BuildOptions> {
        build_options(knobs, &self.underlay, self.model.connectivity.placement())
    }
}

#[cfg(test)]
mod tests {
    use super::overlay_list;

    #[test]
    fn empty_overlay_lists_and_items_are_refused() {
        for bad in ["", " ", "ring,,star", "ring,", ",ring", "ring, ,star"] {
            assert!(overlay_list(bad).is_err(), "`{bad}` accepted");
        }
        assert!(overlay_list("ring,,star").unwrap_err().contains("item 2"));
        assert!(overlay_list("spiral")
            .unwrap_err()
            .contains("unknown overlay"));
        for (good, n) in [
            ("ring", 1),
            ("star,ring", 2),
            ("all", 6),
            ("chung-lu:gamma=3,k=8,ring", 2),
            ("chung-lu[gamma=3,k=8],base[k=2]", 2),
        ] {
            let list = overlay_list(good).unwrap();
            assert_eq!((list.text.as_str(), list.kinds.len()), (good, n));
        }
    }
    /// `--trace FILE` is a network option: every command that takes the
    /// network options (simulate, train, calibrate, ...) puts it in the
    /// spec, and prints it back as a flag.
    #[test]
    fn the_trace_option_reaches_the_network_spec() {
        use clap::Parser;
        #[derive(Parser)]
        struct W {
            #[command(flatten)]
            n: super::NetworkArgs,
        }
        let w = W::try_parse_from(["w", "--trace", "churn.csv"]).unwrap();
        let spec = w.n.spec(None).unwrap();
        assert_eq!(
            spec.trace.as_deref(),
            Some(std::path::Path::new("churn.csv"))
        );
        assert!(w.n.as_flags().join(" ").contains("--trace churn.csv"));
        let none = W::try_parse_from(["w"]).unwrap();
        assert!(none.n.spec(None).unwrap().trace.is_none());
    }
}

/// `--protocol`: `sync` (`None`: synchronous rounds) or an asynchronous
/// protocol ([`fedtopo::replay::asynchronous::AsyncProtocol::parse_choice`]).
#[derive(Debug, Clone, Copy)]
pub struct ProtocolArg(pub Option<fedtopo::replay::asynchronous::AsyncProtocol>);

/// Parses `--protocol`.
pub fn protocol(s: &str) -> Result<ProtocolArg, String> {
    fedtopo::replay::asynchronous::AsyncProtocol::parse_choice(s).map(ProtocolArg)
}
