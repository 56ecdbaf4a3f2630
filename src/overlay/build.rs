//! Building overlays by name: the one entry point used by the CLI and the
//! experiments.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use thiserror::Error;

use crate::delay::DelayModel;
use crate::overlay::algo::RingSearch;
use crate::overlay::dcliques::placement::{DCliquesBuild, DCliquesOverlay};
use crate::overlay::matcha::{
    MatchaBase, MatchaDesign, MatchaError, MatchaOn, MatchaOptions, MatchaSchedule, MatchaVariant,
    MatchaVariantError,
};
use crate::overlay::random::{random_overlay, RandomSpec, RandomSpecError};
use crate::overlay::{complete, mbst, mst, ring, star, Overlay};
use crate::timing::{cycle_time, Timing, TimingError};
use crate::underlay::Underlay;

/// The overlay families fedtopo can build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum OverlayKind {
    /// A seeded random graph (`er:p=0.1`, `ba:m=2`, `regular:k=4`,
    /// `chung-lu:gamma=3,k=8`, `torus`), redrawn until connected.
    Random(RandomSpec),
    /// Server-client (\[Marfoq20\] Sec. 3).
    Star,
    /// Minimum spanning tree (\[Marfoq20\] Prop. 3.1).
    Mst,
    /// delta-MBST (\[Marfoq20\] Algorithm 1).
    DeltaMbst,
    /// Christofides ring (\[Marfoq20\] Prop. 3.3).
    Ring,
    /// Ring improved by local search on the directed cycle time.
    RingOpt,
    /// Every silo to every other.
    Complete,
    /// MATCHA (a schedule, not a static overlay): on the connectivity graph
    /// Gc (`matcha`), the underlay Gu (`matcha+`) or another base, with an
    /// optional budget of its own (`matcha:base=delta-mbst,budget=0.1`).
    Matcha(MatchaVariant),
    /// D-Cliques topologies and their baselines (Bellet et al. 2021), with
    /// or without Clique Averaging (`+ca`).
    DCliques(DCliquesOverlay),
}

impl OverlayKind {
    /// All kinds, in report order.
    pub const ALL: [OverlayKind; 6] = [
        OverlayKind::Star,
        OverlayKind::Mst,
        OverlayKind::DeltaMbst,
        OverlayKind::Ring,
        OverlayKind::RingOpt,
        OverlayKind::Complete,
    ];

    /// The name used on the command line and in reports (for random
    /// overlays the family only; `to_string()` gives the full spec).
    pub fn name(self) -> &'static str {
        match self {
            OverlayKind::Random(r) => r.graph.family(),
            OverlayKind::Star => "star",
            OverlayKind::Mst => "mst",
            OverlayKind::DeltaMbst => "delta-mbst",
            OverlayKind::Ring => "ring",
            OverlayKind::RingOpt => "ring-opt",
            OverlayKind::Complete => "complete",
            OverlayKind::Matcha(m) => m.family(),
            OverlayKind::DCliques(d) => d.name(),
        }
    }

    /// True for the kinds that change every round ([`build_schedule`]).
    pub fn is_schedule(self) -> bool {
        matches!(self, OverlayKind::Matcha(_))
    }

    /// The paper's MATCHA, on the connectivity graph Gc.
    pub const MATCHA: OverlayKind = OverlayKind::Matcha(MatchaVariant::MATCHA);
    /// The paper's MATCHA+, on the underlay Gu.
    pub const MATCHA_PLUS: OverlayKind = OverlayKind::Matcha(MatchaVariant::MATCHA_PLUS);
}

impl fmt::Display for OverlayKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OverlayKind::Random(r) => write!(f, "{r}"),
            OverlayKind::Matcha(m) => write!(f, "{m}"),
            _ => f.write_str(self.name()),
        }
    }
}

/// An overlay name that fedtopo does not know.
#[derive(Debug, Clone, Error)]
#[error("unknown overlay `{0}`; expected one of: star, mst, delta-mbst (or mbst), ring, ring-opt, complete, matcha, matcha+, dcliques[-ring|-fractal|-smallworld|-full][+ca], dc-random-regular10, dc-diverse-random10, dc-node-ring, dc-grid, or a random graph er:p=P|k=K, ba:m=M, regular:k=K, chung-lu:gamma=G,k=K, torus[:rows=R]")]
pub struct UnknownOverlay(pub String);

/// An overlay name that does not parse.
#[derive(Debug, Clone, Error)]
pub enum OverlayParseError {
    /// Not a known family.
    #[error(transparent)]
    Unknown(#[from] UnknownOverlay),
    /// A random-graph spec with bad parameters.
    #[error(transparent)]
    Random(#[from] RandomSpecError),
    /// A MATCHA spec with bad parameters.
    #[error(transparent)]
    Matcha(#[from] MatchaVariantError),
}

impl FromStr for OverlayKind {
    type Err = OverlayParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if RandomSpec::is_random_name(s) {
            return Ok(OverlayKind::Random(s.parse()?));
        }
        if MatchaVariant::claims(s) {
            return Ok(OverlayKind::Matcha(s.parse()?));
        }
        if DCliquesOverlay::claims(s) {
            return s
                .parse()
                .map(OverlayKind::DCliques)
                .map_err(|_| OverlayParseError::Unknown(UnknownOverlay(s.to_string())));
        }
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "star" | "server-client" => OverlayKind::Star,
            "mst" => OverlayKind::Mst,
            "delta-mbst" | "mbst" | "δ-mbst" => OverlayKind::DeltaMbst,
            "ring" => OverlayKind::Ring,
            "ring-opt" | "ringopt" => OverlayKind::RingOpt,
            "complete" | "full" => OverlayKind::Complete,
            _ => return Err(UnknownOverlay(s.to_string()).into()),
        })
    }
}

/// Where the STAR's orchestrator goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub enum CenterPolicy {
    /// Highest load centrality over the underlay, latency-weighted.
    #[default]
    Load,
    /// The first silo of the file (the paper's effective choice).
    First,
    /// The centre minimising the STAR cycle time.
    Fastest,
    /// A silo index.
    Silo(usize),
}

impl CenterPolicy {
    /// Parses `load`, `first`, `fastest`, or a silo label / GML id of `underlay`.
    pub fn parse(text: &str, underlay: &Underlay) -> Result<CenterPolicy, String> {
        Ok(match text {
            "load" => CenterPolicy::Load,
            "first" => CenterPolicy::First,
            "fastest" => CenterPolicy::Fastest,
            other => CenterPolicy::Silo(underlay.find_router(other).ok_or_else(|| {
                format!(
                    "center `{other}`: expected load, first, fastest, or a silo label or id of {}",
                    underlay.name
                )
            })?),
        })
    }

    /// The silo this policy designates on `underlay` under `model`.
    pub fn resolve(&self, underlay: &Underlay, model: &DelayModel) -> usize {
        match self {
            CenterPolicy::Load => {
                let placement = model.connectivity.placement();
                if placement.is_one_per_router() {
                    star::center_by_load(underlay, model.connectivity.options().ms_per_km)
                } else {
                    // The first silo of the most loaded router that hosts one.
                    let load =
                        star::load_centrality(underlay, model.connectivity.options().ms_per_km);
                    let mut best = 0;
                    for (s, &r) in placement.routers().iter().enumerate() {
                        let b = placement.router(best);
                        if load[r] > load[b] + 1e-9 * load[b].abs().max(1.0) {
                            best = s;
                        }
                    }
                    best
                }
            }
            CenterPolicy::First => 0,
            CenterPolicy::Fastest => star::center_fastest(model),
            CenterPolicy::Silo(i) => *i,
        }
    }
}

/// Options of the overlay builders.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// STAR centre.
    pub center: CenterPolicy,
    /// Local search of `ring-opt`.
    pub ring_search: RingSearch,
    /// MATCHA budget, seed and rounds.
    pub matcha: MatchaOptions,
    /// Seed of random overlays (`er`, `ba`, ...) that give none of their own.
    pub seed: u64,
    /// D-Cliques construction and silo labels.
    pub dcliques: DCliquesBuild,
}

/// Builds overlay `kind` for `model` on `underlay`.
pub fn build_overlay(
    kind: OverlayKind,
    underlay: &Underlay,
    model: &DelayModel,
    options: &BuildOptions,
) -> Result<Overlay, TimingError> {
    let n = model.silo_count();
    Ok(match kind {
        OverlayKind::Star => star::star(n, options.center.resolve(underlay, model)),
        OverlayKind::Mst => mst::mst(model),
        OverlayKind::DeltaMbst => mbst::delta_mbst(model),
        OverlayKind::Ring => ring::ring(model),
        OverlayKind::RingOpt => ring::ring_opt(model, &options.ring_search),
        OverlayKind::Complete => complete(n),
        OverlayKind::Random(spec) => random_overlay(&spec, n, options.seed)?,
        OverlayKind::DCliques(d) => {
            options
                .dcliques
                .overlay(d, n)
                .map_err(|source| TimingError::DCliques {
                    overlay: kind.to_string(),
                    source,
                })?
        }
        OverlayKind::Matcha(_) => {
            return Err(TimingError::NotStatic {
                overlay: kind.to_string(),
            })
        }
    })
}

/// Cycle time of `overlay`, built as `kind`: the max-plus cycle time, except
/// for D-Cliques with Clique Averaging (two phases per round,
/// [`crate::overlay::dcliques::timing`]).
pub fn overlay_cycle_time(
    kind: OverlayKind,
    overlay: &Overlay,
    model: &DelayModel,
    options: &BuildOptions,
) -> Result<Timing, TimingError> {
    match kind {
        OverlayKind::DCliques(d) if d.clique_averaging => options.dcliques.cycle_time(d, model),
        _ => cycle_time(overlay, model),
    }
}

/// Builds the schedule of a kind that changes every round (MATCHA on Gc,
/// MATCHA+ on Gu, MATCHA over an overlay built for `model`, with the
/// variant's budget or `options.matcha.budget`); `Ok(None)` for static kinds.
pub fn build_schedule(
    kind: OverlayKind,
    underlay: &Underlay,
    model: &DelayModel,
    options: &BuildOptions,
) -> Result<Option<MatchaSchedule>, MatchaError> {
    let OverlayKind::Matcha(variant) = kind else {
        return Ok(None);
    };
    let over = |k: OverlayKind| {
        build_overlay(k, underlay, model, options)
            .map(MatchaBase::Overlay)
            .map_err(|e| MatchaError::Base(format!("{k}: {e}")))
    };
    let base = match variant.base {
        MatchaOn::Connectivity => MatchaBase::Connectivity,
        MatchaOn::Underlay => MatchaBase::Underlay,
        MatchaOn::Mst => over(OverlayKind::Mst)?,
        MatchaOn::DeltaMbst => over(OverlayKind::DeltaMbst)?,
        MatchaOn::Ring => over(OverlayKind::Ring)?,
    };
    let matcha = MatchaOptions {
        budget: variant.budget_or(options.matcha.budget),
        ..options.matcha
    };
    let d = MatchaDesign::on(&kind.to_string(), &base, underlay, &matcha)?;
    Ok(Some(d.schedule(matcha.seed)))
}

/// Parses a comma-separated list of overlay names (`all` = every kind).
///
/// Random specs hold commas of their own (`chung-lu:gamma=3,k=8`): an item
/// `KEY=VALUE` continues the random spec before it.
pub fn parse_overlay_list(list: &str) -> Result<Vec<OverlayKind>, OverlayParseError> {
    if list.trim().eq_ignore_ascii_case("all") {
        return Ok(OverlayKind::ALL.to_vec());
    }
    let mut items: Vec<String> = Vec::new();
    for part in list.split(',').filter(|s| !s.trim().is_empty()) {
        match items.last_mut() {
            Some(last) if part.contains('=') && !part.contains(':') => {
                last.push(',');
                last.push_str(part);
            }
            _ => items.push(part.to_string()),
        }
    }
    items.iter().map(|s| s.parse()).collect()
}
