//! Options shared by several commands: which underlay, how to load it, and
//! the network and workload on top of it.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};

use fedtopo::connectivity::PathModel;
use fedtopo::delay::DelayModel;
use fedtopo::overlay::build::{BuildOptions, CenterPolicy};
use fedtopo::placement::SiloPlacement;
use fedtopo::scenario::{load_underlay, NetworkSpec};
use fedtopo::underlay::{Disconnected, IsolatedRouters, LoadOptions, MissingCoordinates, Underlay};
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

/// Parses `--default-length-km`: a finite length >= 0 in km.
fn parse_length_km(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!(
            "expected a finite length >= 0 in km, found `{text}`"
        )),
    }
}

/// Parses a MATCHA communication budget (`--budget`): a number in
/// `[MIN_BUDGET, 1]` (the solver's time grows as 1/budget).
pub fn parse_budget(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(b) if fedtopo::overlay::matcha::budget_ok(b) => Ok(b),
        _ => Err(format!(
            "expected a communication budget in [{}, 1], found `{text}` (below {0} the MATCHA solver's time grows as 1/budget)",
            fedtopo::overlay::matcha::MIN_BUDGET
        )),
    }
}

/// The parser of `--matcha-rounds`: 1 to [`fedtopo::overlay::matcha::MAX_MATCHA_ROUNDS`].
pub fn matcha_rounds() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=fedtopo::overlay::matcha::MAX_MATCHA_ROUNDS)
}

/// The parser of a round or step count (`mixing --rounds`, `tornado
/// --steps`, `dcliques --rounds`): at most [`fedtopo::replay::MAX_ROUNDS`],
/// since per-round records are kept in memory. Lower bounds stay with
/// each command.
pub fn round_count() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(0..=fedtopo::replay::MAX_ROUNDS)
}

/// Most worker threads `run --threads` starts.
pub const MAX_THREADS: u64 = 1024;

/// The parser of `--threads`: 1 to [`MAX_THREADS`].
pub fn threads() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_THREADS)
}

/// Underlay selection and loading policies.
#[derive(Debug, Clone, Args)]
pub struct UnderlayArgs {
    /// GML file, or a built-in underlay name (`fedtopo underlay list`);
    /// default: the built-in aws-north-america.
    pub underlay: Option<String>,
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
    #[arg(long, default_value = "1G", value_parser = parse_bandwidth)]
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
        };
        let u = load_underlay(self.underlay.as_deref(), &opts)?;
        if !quiet {
            for line in fedtopo::underlay::notes::report_lines(&u) {
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
    #[arg(long, short = 's', default_value_t = 1)]
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
        NetworkSpec::from_knobs(|key| match key {
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
            _ => None,
        })
        .map_err(|e| {
            anyhow::anyhow!(
                "--{} `{}`: expected {}",
                e.key.replace('_', "-"),
                e.value,
                e.expected
            )
        })
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
        ] {
            if let Some(p) = path {
                flag(name, &p.display().to_string(), None);
            }
        }
        flag("core-capacity", &self.core_capacity, Some("file"));
        flag("connectivity", &self.connectivity, Some("paper"));
        out
    }

    /// The delay model of `underlay` under these options, one silo per router.
    pub fn delay_model(&self, underlay: &Underlay) -> Result<DelayModel> {
        Ok(self.spec(None)?.build(underlay)?)
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

/// Where silos sit on the underlay (`compare`, `simulate`).
#[derive(Debug, Clone, Args)]
pub struct PlacementArgs {
    /// Silos attached to every router (default 1: silo i on router i).
    /// Silos on one router talk over their access links only (no core
    /// link, zero latency).
    #[arg(long, conflicts_with = "silos")]
    pub silos_per_router: Option<usize>,
    /// Total number of silos, spread as evenly as possible over the routers,
    /// the remainder on routers drawn with --placement-seed.
    #[arg(long)]
    pub silos: Option<usize>,
    /// Seed of the random part of --silos.
    #[arg(long, default_value_t = 0)]
    pub placement_seed: u64,
}

/// Parses `--center` under a silo placement: a router label / id names the
/// first silo placed at that router.
pub fn center_policy_at(
    text: &str,
    underlay: &Underlay,
    placement: &SiloPlacement,
) -> Result<CenterPolicy> {
    center_policy(text, underlay)?
        .at_placement(placement)
        .map_err(|_| anyhow::anyhow!("--center `{text}`: no silo is placed at that router"))
}

/// Checks an `--overlays` list: no empty list, no empty item (`ring,,star`,
/// a trailing comma), every name parses. Returns the list unchanged (the
/// commands parse it with `parse_overlay_list`).
pub fn overlay_list(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(
            "empty list; give overlay names separated by commas, e.g. `star,ring`, or `all`".into(),
        );
    }
    if let Some(i) = text.split(',').position(|item| item.trim().is_empty()) {
        return Err(format!(
            "item {} of `{text}` is empty; give overlay names separated by single commas",
            i + 1
        ));
    }
    fedtopo::overlay::build::parse_overlay_list(text).map_err(|e| e.to_string())?;
    Ok(text.to_string())
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
    /// Loads the underlay and builds the network of the options.
    pub fn load(u: &UnderlayArgs, n: &NetworkArgs, p: &PlacementArgs) -> Result<Setup> {
        let underlay = u.load(false)?;
        let spec = n.spec(Some(p))?;
        let model = spec.build(&underlay)?;
        Ok(Setup {
            underlay,
            spec,
            model,
        })
    }

    /// Build options with the STAR centre of `center` and `seed` for
    /// MATCHA's activations and random overlays.
    pub fn build_options(&self, center: &CenterArgs, seed: u64) -> Result<BuildOptions> {
        Ok(BuildOptions {
            center: center_policy_at(
                &center.center,
                &self.underlay,
                self.model.connectivity.placement(),
            )?,
            matcha: fedtopo::overlay::matcha::MatchaOptions {
                seed,
                ..Default::default()
            },
            seed,
            ..BuildOptions::default()
        })
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
        for good in ["ring", "star,ring", "all", "chung-lu:gamma=3,k=8,ring"] {
            assert_eq!(overlay_list(good).as_deref(), Ok(good));
        }
    }
}
