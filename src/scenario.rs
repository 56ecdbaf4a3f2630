//! Assembling a network scenario: underlay (file or built-in) + access links
//! + connectivity options + workload -> [`DelayModel`].

use std::path::Path;

use thiserror::Error;

use crate::access::{AccessError, AccessLinks, DEFAULT_ACCESS_BPS};
use crate::builtin::{builtin_underlay, BUILTIN_UNDERLAYS, DEFAULT_UNDERLAY};
use crate::connectivity::{Connectivity, ConnectivityOptions};
use crate::delay::DelayModel;
use crate::placement::SiloPlacement;
use crate::underlay::{LoadOptions, Underlay, UnderlayError};
use crate::units::BitsPerSec;
use crate::workload::Workload;

/// Why a scenario could not be assembled.
#[derive(Debug, Error)]
pub enum ScenarioError {
    /// The underlay could not be loaded.
    #[error(transparent)]
    Underlay(#[from] UnderlayError),
    /// The access file could not be applied.
    #[error(transparent)]
    Access(#[from] AccessError),
    /// Neither a file nor a built-in underlay.
    #[error("`{0}` is neither a readable file nor a built-in underlay (built-ins: {1})")]
    NotFound(String, String),
}

/// Loads `spec`: a GML file path, `builtin:NAME`, a built-in name, or
/// `None` for the default built-in underlay.
pub fn load_underlay(spec: Option<&str>, options: &LoadOptions) -> Result<Underlay, ScenarioError> {
    let spec = spec.unwrap_or(DEFAULT_UNDERLAY);
    let name = spec.strip_prefix("builtin:").unwrap_or(spec);
    let path = Path::new(spec);
    if !spec.starts_with("builtin:") && path.exists() {
        return Ok(Underlay::load(path, options)?);
    }
    match builtin_underlay(name) {
        Some(text) => {
            let mut u = Underlay::from_gml_str(text, &format!("builtin:{name}"), options)?;
            u.name = name.to_string();
            Ok(u)
        }
        None if spec.starts_with("builtin:") || !spec.contains(['/', '.']) => {
            Err(ScenarioError::NotFound(spec.to_string(), builtin_names()))
        }
        // Looks like a path: let the loader report the I/O error with the path.
        None => Ok(Underlay::load(path, options)?),
    }
}

fn builtin_names() -> String {
    BUILTIN_UNDERLAYS
        .iter()
        .map(|b| b.0)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Everything that turns an underlay into a [`DelayModel`].
#[derive(Debug, Clone)]
pub struct NetworkSpec {
    /// Connectivity options (path model, latency constants, core capacity).
    pub connectivity: ConnectivityOptions,
    /// Access capacity of every silo, bit/s.
    pub access_bps: BitsPerSec,
    /// Workload.
    pub workload: Workload,
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec {
            connectivity: ConnectivityOptions::default(),
            access_bps: DEFAULT_ACCESS_BPS,
            workload: Workload::default(),
        }
    }
}

impl NetworkSpec {
    /// The delay model of `underlay` under this spec (one silo per router).
    pub fn delay_model(&self, underlay: &Underlay) -> DelayModel {
        self.delay_model_placed(
            underlay,
            SiloPlacement::one_per_router(underlay.node_count()),
        )
    }

    /// The delay model of `underlay` with silos attached by `placement`
    /// (one access link of `access_bps` per silo).
    pub fn delay_model_placed(&self, underlay: &Underlay, placement: SiloPlacement) -> DelayModel {
        let silos = placement.silo_count();
        let conn = Connectivity::with_placement(underlay, &self.connectivity, placement);
        let access = AccessLinks::uniform(silos, self.access_bps);
        DelayModel::new(conn, access, self.workload.clone())
    }
}
