//! Options shared by several commands: which underlay, how to load it, and
//! the network and workload on top of it.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};

use fedtopo::connectivity::{ConnectivityOptions, PathModel};
use fedtopo::delay::DelayModel;
use fedtopo::overlay::build::CenterPolicy;
use fedtopo::placement::SiloPlacement;
use fedtopo::scenario::{load_underlay, NetworkSpec};
use fedtopo::underlay::{Disconnected, LoadOptions, MissingCoordinates, Underlay};
use fedtopo::units::{parse_bandwidth, parse_bits};
use fedtopo::workload::Workload;

use super::choice::choice;

/// What to do with nodes that lack coordinates when an edge needs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum MissingPolicy {
    /// Refuse the file and name the nodes.
    #[default]
    Refuse,
    /// Drop those nodes (and their edges) and report them.
    Drop,
}

/// Underlay selection and loading policies.
#[derive(Debug, Clone, Args)]
pub struct UnderlayArgs {
    /// GML file, or a built-in underlay name (`fedtopo underlay list`);
    /// default: the built-in aws-north-america.
    pub underlay: Option<String>,
    /// Nodes without Latitude/Longitude whose edges have no `distance`.
    #[arg(long, value_enum, default_value_t = MissingPolicy::Refuse)]
    pub missing_coordinates: MissingPolicy,
    /// Keep the largest connected component of a disconnected underlay
    /// (default: refuse it).
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
            missing_coordinates: match self.missing_coordinates {
                MissingPolicy::Refuse => MissingCoordinates::Refuse,
                MissingPolicy::Drop => MissingCoordinates::Drop,
            },
            disconnected: if self.largest_component {
                Disconnected::LargestComponent
            } else {
                Disconnected::Refuse
            },
            default_capacity_bps: self.default_core_capacity,
        };
        let u = load_underlay(self.underlay.as_deref(), &opts)?;
        if !quiet {
            for line in super::load_notes::report_lines(&u) {
                eprintln!("note: {}: {line}", u.name);
            }
        }
        Ok(u)
    }
}

/// Network and workload options.
#[derive(Debug, Clone, Args)]
pub struct NetworkArgs {
    /// Workload preset ([Marfoq20] Table 2): shakespeare, femnist, sent140, inaturalist.
    #[arg(long, default_value = "inaturalist")]
    pub workload: String,
    /// Model size M, overriding the preset (`44961717`, `42.88Mbit`, `5MB`).
    #[arg(long, value_parser = parse_bits)]
    pub model_bits: Option<f64>,
    /// Time of one local step Tc in ms, overriding the preset.
    #[arg(long)]
    pub compute_ms: Option<f64>,
    /// Local steps per round s.
    #[arg(long, short = 's', default_value_t = 1)]
    pub local_steps: u32,
    /// Access link capacity of every silo, both directions (`10G`, `100Mbps`, `inf`).
    #[arg(long, default_value = "10G", value_parser = parse_bandwidth)]
    pub access: f64,
    /// Per-silo access capacities: CSV with `silo,up,down` or `silo,capacity`.
    #[arg(long)]
    pub access_csv: Option<PathBuf>,
    /// Capacity of every core link, overriding the file's values.
    #[arg(long, value_parser = parse_bandwidth)]
    pub core_capacity: Option<f64>,
    /// Path model: `paper` (capacity / hops) or `bottleneck` (min capacity on the route).
    #[arg(long, value_parser = choice(PathModel::ALL, PathModel::name), default_value_t = PathModel::Paper)]
    pub connectivity: PathModel,
}

impl NetworkArgs {
    /// The workload these options describe.
    pub fn workload(&self) -> Result<Workload> {
        let mut w = Workload::preset(&self.workload, self.local_steps).with_context(|| {
            format!(
                "unknown workload `{}`; expected shakespeare, femnist, sent140 or inaturalist \
                 (or set --model-bits and --compute-ms)",
                self.workload
            )
        })?;
        if self.local_steps == 0 {
            bail!("--local-steps must be at least 1");
        }
        if let Some(m) = self.model_bits {
            w.model_bits = m;
            w.name = "custom".into();
        }
        if let Some(tc) = self.compute_ms {
            if tc.is_nan() || tc < 0.0 || !tc.is_finite() {
                bail!("--compute-ms must be a finite number >= 0, got {tc}");
            }
            w.compute_ms = tc;
            w.name = "custom".into();
        }
        Ok(w)
    }

    /// The delay model of `underlay` under these options.
    pub fn delay_model(&self, underlay: &Underlay) -> Result<DelayModel> {
        self.delay_model_placed(
            underlay,
            SiloPlacement::one_per_router(underlay.node_count()),
        )
    }

    /// The delay model of `underlay` with silos attached by `placement`.
    pub fn delay_model_placed(
        &self,
        underlay: &Underlay,
        placement: SiloPlacement,
    ) -> Result<DelayModel> {
        let spec = NetworkSpec {
            connectivity: ConnectivityOptions {
                model: self.connectivity,
                core_capacity_bps: self.core_capacity,
                ..ConnectivityOptions::default()
            },
            access_bps: self.access,
            workload: self.workload()?,
        };
        let mut model = spec.delay_model_placed(underlay, placement);
        if let Some(path) = &self.access_csv {
            let placement = model.connectivity.placement().clone();
            model
                .access
                .apply_csv_at(path, underlay, Some(&placement))?;
        }
        Ok(model)
    }
}

/// Parses `--center`: `load`, `first`, `fastest`, or a silo label / GML id.
pub fn center_policy(text: &str, underlay: &Underlay) -> Result<CenterPolicy> {
    CenterPolicy::parse(text, underlay).map_err(|e| anyhow::anyhow!("--{e}"))
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

impl PlacementArgs {
    /// The placement these options describe on `underlay`.
    pub fn placement(&self, underlay: &Underlay) -> Result<SiloPlacement> {
        let routers = underlay.node_count();
        Ok(match (self.silos_per_router, self.silos) {
            (Some(0), _) => bail!("--silos-per-router must be at least 1"),
            (_, Some(0)) => bail!("--silos must be at least 1"),
            (Some(k), _) => SiloPlacement::per_router(k, routers)?,
            (None, Some(n)) => SiloPlacement::spread(n, routers, self.placement_seed)?,
            (None, None) => SiloPlacement::one_per_router(routers),
        })
    }
}

/// Parses `--center` under a silo placement: a router label / id names the
/// first silo placed at that router.
pub fn center_policy_at(
    text: &str,
    underlay: &Underlay,
    placement: &SiloPlacement,
) -> Result<CenterPolicy> {
    Ok(match center_policy(text, underlay)? {
        CenterPolicy::Silo(r) => CenterPolicy::Silo(
            placement
                .silos_at(r)
                .next()
                .with_context(|| format!("--center `{text}`: no silo is placed at that router"))?,
        ),
        other => other,
    })
}
