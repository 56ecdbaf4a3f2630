//! Building overlays by name. [`build`] turns an [`OverlayKind`] into one of
//! the shapes fedtopo runs ([`Shape`]; `file:PATH` reads [`crate::overlay::file`]); callers above the builders use
//! [`crate::evaluate::EvaluatedOverlay`], which times, replays and clocks
//! whatever was built.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use thiserror::Error;

use crate::graph::Overlay;
use crate::graph::PeriodicSchedule;
use crate::mixing::ConsensusMatrix;
use crate::net::delay::DelayModel;
use crate::net::placement::SiloPlacement;
use crate::net::underlay::Underlay;
use crate::overlay::algo::{improve_directed_ring, RingSearch};
use crate::overlay::dcliques::placement::{DCliquesBuild, DCliquesOverlay};
use crate::overlay::dcliques::{CliqueTopology, DCliquesError};
use crate::overlay::export::unique_labels;
use crate::overlay::families::multigraph::{Multigraph, MultigraphBase};
use crate::overlay::families::{
    self, Family, FamilyBuilt, FamilyError, FamilySpec, FamilySpecError,
};
use crate::overlay::file::{self, FileOverlay, FileOverlayError, OverlayPath, SiloNames};
use crate::overlay::matcha::{
    MatchaBase, MatchaDesign, MatchaError, MatchaOn, MatchaOptions, MatchaSchedule, MatchaVariant,
    MatchaVariantError,
};
use crate::overlay::random::{random_overlay, RandomGraphError, RandomSpec, RandomSpecError};
use crate::overlay::spec::{split_overlay_list, NameKind, OverlaySpec, OverlaySpecError};
use crate::overlay::{complete, mbst, mst, ring, star};
use crate::timing::allreduce::AllReduceSchedule;

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
    /// Exact averaging by a ring all-reduce along the ring-opt tour
    /// (reduce-scatter then all-gather in chunks of `M/n` bit,
    /// [`crate::timing::allreduce`]): STAR's consensus at a fraction of its
    /// round time on slow access links. New, not in \[Marfoq20\].
    RingAllReduce,
    /// Exact averaging by a mesh all-reduce: reduce-scatter then
    /// all-gather by direct sends between every pair of silos, each silo
    /// averaging one chunk of `M/n` bit ([`crate::timing::mesh_allreduce`]):
    /// two chunk steps a round instead of the ring's `2(n-1)`. New, not in
    /// \[Marfoq20\].
    MeshAllReduce,
    /// Every silo to every other.
    Complete,
    /// MATCHA (a schedule, not a static overlay): on the connectivity graph
    /// Gc (`matcha`), the underlay Gu (`matcha+`) or another base, with an
    /// optional budget of its own (`matcha:base=delta-mbst,budget=0.1`).
    Matcha(MatchaVariant),
    /// D-Cliques topologies and their baselines (\[Bellet21\]), with
    /// or without Clique Averaging (`+ca`).
    DCliques(DCliquesOverlay),
    /// A topology read from a file (`file:PATH`: GML, node-link JSON, CSV,
    /// or a per-round schedule; [`crate::overlay::file`]).
    File(OverlayPath),
    /// A family of the decentralized-learning literature placed on the
    /// silos ([`crate::overlay::families`]): `exp` (static exponential
    /// graph, \[Ying21\]), `exp-1peer` (one-peer exponential graph,
    /// \[Ying21\]), `base:k=K` (Base-(k+1) graph, \[Takezawa23\]),
    /// `d-equistatic`, `od-equidyn` (EquiTopo, \[Song22\]); nodes along the
    /// `ring-opt` tour unless `order=identity`; and `multigraph` (\[Do23\]),
    /// a periodic schedule on a base overlay (RING by default).
    Family(FamilySpec),
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
            OverlayKind::RingAllReduce => "ring-allreduce",
            OverlayKind::MeshAllReduce => "mesh-allreduce",
            OverlayKind::Complete => "complete",
            OverlayKind::Matcha(m) => m.family(),
            OverlayKind::DCliques(d) => d.name(),
            OverlayKind::File(_) => "file",
            OverlayKind::Family(f) => f.name(),
        }
    }

    /// True for the kinds that change every round ([`build_schedule`]).
    pub fn is_schedule(self) -> bool {
        match self {
            OverlayKind::Matcha(_) => true,
            OverlayKind::Family(f) => f.is_schedule(),
            _ => false,
        }
    }

    /// The MATCHA variant of a MATCHA kind (base graph, own budget);
    /// `None` for every other kind.
    pub fn matcha_variant(self) -> Option<MatchaVariant> {
        match self {
            OverlayKind::Matcha(m) => Some(m),
            _ => None,
        }
    }

    /// This kind with a relative `file:PATH` resolved against `base` (the
    /// directory of the experiment file that names it); other kinds unchanged.
    pub fn relative_to(self, base: &std::path::Path) -> OverlayKind {
        match self {
            OverlayKind::File(p) => OverlayKind::File(p.relative_to(base)),
            other => other,
        }
    }

    /// Checks the inputs this kind reads, without building it: for
    /// `file:PATH`, that the file exists, is not too large and parses
    /// ([`file::check`]; matching its names needs the network, see [`build`]).
    /// Always `Ok` for the other kinds. For validating experiment grids
    /// before running them.
    pub fn check_input(self) -> Result<(), BuildError> {
        match self {
            OverlayKind::File(p) => Ok(file::check(p.as_path())?),
            _ => Ok(()),
        }
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
            OverlayKind::File(p) => write!(f, "file:{p}"),
            OverlayKind::Family(s) => write!(f, "{s}"),
            _ => f.write_str(self.name()),
        }
    }
}

/// An overlay name that fedtopo does not know (the names it knows are
/// listed from [`crate::overlay::spec::OVERLAY_NAMES`]).
#[derive(Debug, Clone, Error)]
#[error("unknown overlay `{0}`; expected one of: {names}", names = crate::overlay::spec::known_overlays())]
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
    /// A family spec (`exp`, `exp-1peer`, `base:k=K`) with bad parameters.
    #[error(transparent)]
    Family(#[from] FamilySpecError),
    /// A text that does not follow the overlay grammar
    /// ([`crate::overlay::spec`]).
    #[error(transparent)]
    Syntax(#[from] OverlaySpecError),
}

impl FromStr for OverlayKind {
    type Err = OverlayParseError;
    /// Parses one overlay with the one overlay grammar
    /// ([`crate::overlay::spec::OverlaySpec`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        OverlayKind::from_spec(&OverlaySpec::parse(s)?)
    }
}

impl OverlayKind {
    /// The overlay of a parsed spec: routed by its name
    /// ([`crate::overlay::spec::OVERLAY_NAMES`]), parameters read by the
    /// family.
    ///
    /// # Errors
    /// An unknown name, parameters the overlay does not take or accept.
    pub fn from_spec(spec: &OverlaySpec) -> Result<Self, OverlayParseError> {
        let unknown = || OverlayParseError::Unknown(UnknownOverlay(spec.text.clone()));
        let Some(kind) = spec.kind() else {
            return Err(unknown());
        };
        Ok(match kind {
            NameKind::File => match spec.get("path") {
                Some(path) => OverlayKind::File(OverlayPath::new(path)),
                None => return Err(unknown()),
            },
            NameKind::Random => OverlayKind::Random(RandomSpec::from_spec(spec)?),
            NameKind::Matcha => OverlayKind::Matcha(MatchaVariant::from_spec(spec)?),
            NameKind::Family => OverlayKind::Family(FamilySpec::from_spec(spec)?),
            NameKind::DCliques => {
                if !spec.params.is_empty() {
                    return Err(OverlaySpecError {
                        text: spec.text.clone(),
                        reason: "D-Cliques take no parameters here (see --dc-* options)".into(),
                    }
                    .into());
                }
                OverlayKind::DCliques(spec.name.parse().map_err(|_| unknown())?)
            }
            NameKind::Plain => {
                if !spec.params.is_empty() {
                    return Err(OverlaySpecError {
                        text: spec.text.clone(),
                        reason: format!("`{}` takes no parameters", spec.name),
                    }
                    .into());
                }
                match spec.name.as_str() {
                    "star" => OverlayKind::Star,
                    "mst" => OverlayKind::Mst,
                    "delta-mbst" => OverlayKind::DeltaMbst,
                    "ring" => OverlayKind::Ring,
                    "ring-opt" => OverlayKind::RingOpt,
                    "ring-allreduce" => OverlayKind::RingAllReduce,
                    "mesh-allreduce" => OverlayKind::MeshAllReduce,
                    "complete" => OverlayKind::Complete,
                    _ => return Err(unknown()),
                }
            }
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

    /// The policy under a silo placement: a router named by label or id
    /// ([`CenterPolicy::Silo`] from [`CenterPolicy::parse`]) designates the
    /// first silo placed at that router.
    pub fn at_placement(self, placement: &SiloPlacement) -> Result<CenterPolicy, String> {
        Ok(match self {
            CenterPolicy::Silo(r) => CenterPolicy::Silo(
                placement
                    .silos_at(r)
                    .next()
                    .ok_or_else(|| format!("center: no silo is placed at router {r}"))?,
            ),
            other => other,
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
    /// Work shared by the builders of one delay model (the Christofides
    /// ring tour RING and ring-opt both start from). `None`, the default:
    /// nothing shared. Only for one model: [`SharedBuild::new`] per model
    /// ([`crate::evaluate::compare::compare_overlays`] makes its own).
    pub shared: Option<Arc<SharedBuild>>,
}

/// Results the builders of one delay model share, each computed on first
/// use (issue 28: RING and ring-opt built the same Christofides tour twice,
/// 10 % of a 10,000-silo comparison each).
#[derive(Debug, Default)]
pub struct SharedBuild {
    ring_tour: OnceLock<Vec<usize>>,
    ring_opt_tour: OnceLock<Vec<usize>>,
}

impl SharedBuild {
    /// Nothing computed yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The Christofides ring tour of `model` ([`ring::christofides_ring_tour`]),
    /// computed on the first call; `model` must be the same at every call.
    pub fn ring_tour(&self, model: &DelayModel) -> &[usize] {
        self.ring_tour
            .get_or_init(|| ring::christofides_ring_tour(model))
    }

    /// The ring-opt tour of `model` ([`ring::ring_opt_tour`]: the local
    /// search from [`Self::ring_tour`]), computed on the first call;
    /// `model` and `search` must be the same at every call.
    pub fn ring_opt_tour(&self, model: &DelayModel, search: &RingSearch) -> &[usize] {
        self.ring_opt_tour.get_or_init(|| {
            let start = self.ring_tour(model).to_vec();
            improve_directed_ring(&ring::ring_delays(model), start, search)
        })
    }
}

/// Why an overlay could not be built.
#[derive(Debug, Error)]
pub enum BuildError {
    /// The kind changes every round (MATCHA): it has a schedule, not a
    /// single overlay ([`build`] gives either).
    #[error("`{overlay}` changes every round: it has a schedule, not a single overlay")]
    NotStatic {
        /// Overlay name.
        overlay: String,
    },
    /// MATCHA could not be built (the cause is the error's source).
    #[error("building `{overlay}`")]
    Matcha {
        /// Overlay name.
        overlay: String,
        /// The cause.
        source: MatchaError,
    },
    /// The network has a delay that is not finite, so the delay-matrix
    /// builders (MST, delta-MBST, RING, ring-opt) cannot compare arcs.
    #[error("building `{overlay}`")]
    NonFiniteDelay {
        /// Overlay name.
        overlay: String,
        /// The arc and its delay.
        source: crate::net::delay::NonFiniteDelay,
    },
    /// A D-Cliques topology could not be built.
    #[error("building `{overlay}`")]
    DCliques {
        /// Overlay name.
        overlay: String,
        /// The cause.
        source: DCliquesError,
    },
    /// A random overlay (Erdos-Renyi, ...) could not be built.
    #[error(transparent)]
    Random(#[from] RandomGraphError),
    /// An overlay file could not be read.
    #[error(transparent)]
    File(#[from] FileOverlayError),
    /// A family does not fit the network (too few silos for its degree).
    #[error(transparent)]
    Family(#[from] FamilyError),
}

/// What was built, in its own shape: the shapes of round fedtopo runs
/// ([`build`] returns one; [`crate::evaluate::EvaluatedOverlay`] holds it
/// and answers for every shape).
#[derive(Debug, Clone)]
pub enum Shape {
    /// The same overlay every round (one gossip or server-client exchange).
    Static {
        /// The overlay.
        overlay: Overlay,
        /// The consensus weights it brings (a file's arc weights, a
        /// family's matrix; row `i`: what silo `i` gives each model it
        /// receives, row-stochastic); `None`: a rule picks them.
        weights: Option<ConsensusMatrix>,
    },
    /// A new seeded overlay every round (MATCHA \[Wang19\]).
    Matcha(MatchaSchedule),
    /// A list of overlays replayed periodically (a per-round file, a
    /// family of the literature; [`crate::overlay::families`]).
    Periodic {
        /// The rounds of one period.
        schedule: PeriodicSchedule,
        /// Round `r`'s row-stochastic consensus weights, when the schedule
        /// brings its own (`exp-1peer`, `base:k=K`, a weighted file).
        weights: Option<Vec<ConsensusMatrix>>,
    },
    /// D-Cliques with Clique Averaging \[Bellet21\]: two phases per round,
    /// gradients inside cliques, then models over the whole topology.
    CliqueAveraging {
        /// The topology (cliques and inter-clique edges).
        topology: CliqueTopology,
        /// Its model-exchange overlay (both arcs of every edge).
        models: Overlay,
    },
    /// Exact averaging by an all-reduce ([`OverlayKind::RingAllReduce`],
    /// [`OverlayKind::MeshAllReduce`]): every round, every silo ends with
    /// the average of all models.
    AllReduce {
        /// How the chunks travel: around the ring's tour, or between every
        /// pair.
        schedule: AllReduceSchedule,
        /// The arcs the chunks travel on: the directed ring, or the
        /// complete digraph.
        links: Overlay,
    },
}

/// Builds overlay `kind` for `model` on `underlay`, in whichever shape the
/// kind has.
pub fn build(
    kind: OverlayKind,
    underlay: &Underlay,
    model: &DelayModel,
    options: &BuildOptions,
) -> Result<Shape, BuildError> {
    match kind {
        OverlayKind::Matcha(_) => match build_schedule(kind, underlay, model, options) {
            Ok(Some(s)) => Ok(Shape::Matcha(s)),
            Ok(None) => Err(BuildError::NotStatic {
                overlay: kind.to_string(),
            }),
            Err(source) => Err(BuildError::Matcha {
                overlay: kind.to_string(),
                source,
            }),
        },
        OverlayKind::DCliques(d) if d.clique_averaging => options
            .dcliques
            .topology(d, model.silo_count())
            .map(|topology| Shape::CliqueAveraging {
                models: topology.overlay(),
                topology,
            })
            .map_err(|source| BuildError::DCliques {
                overlay: kind.to_string(),
                source,
            }),
        OverlayKind::RingAllReduce => {
            let links = build_overlay(kind, underlay, model, options)?;
            Ok(Shape::AllReduce {
                schedule: AllReduceSchedule::Ring(allreduce_tour(model, options)),
                links,
            })
        }
        OverlayKind::MeshAllReduce => Ok(Shape::AllReduce {
            schedule: AllReduceSchedule::Mesh,
            links: build_overlay(kind, underlay, model, options)?,
        }),
        OverlayKind::File(path) => Ok(
            match file::read(path.as_path(), &silo_names(underlay, model))? {
                FileOverlay::Static { overlay, weights } => Shape::Static { overlay, weights },
                FileOverlay::Periodic { schedule, weights } => {
                    Shape::Periodic { schedule, weights }
                }
            },
        ),
        OverlayKind::Family(spec) => Ok(match family(spec, underlay, model, options)? {
            FamilyBuilt::Static { overlay, weights } => Shape::Static { overlay, weights },
            FamilyBuilt::Periodic { schedule, weights } => Shape::Periodic {
                schedule,
                weights: Some(weights),
            },
        }),
        _ => build_overlay(kind, underlay, model, options).map(|overlay| Shape::Static {
            overlay,
            weights: None,
        }),
    }
}

/// Builds family `spec`: on abstract nodes placed on the silos
/// ([`families::build`]), or for `multigraph` on its base overlay built here
/// ([`families::multigraph`]: the period's rounds, the background lags when
/// asked, local-degree weights per round).
fn family(
    spec: FamilySpec,
    underlay: &Underlay,
    model: &DelayModel,
    options: &BuildOptions,
) -> Result<FamilyBuilt, BuildError> {
    let Family::Multigraph { base, t_max, weak } = spec.family else {
        let search = &options.ring_search;
        return Ok(match &options.shared {
            Some(shared) => families::build_with_tour(spec, model, options.seed, || {
                shared.ring_opt_tour(model, search).to_vec()
            })?,
            None => families::build(spec, model, search, options.seed)?,
        });
    };
    families::check_size(spec, model.silo_count())?;
    let kind = match base {
        MultigraphBase::Ring => OverlayKind::Ring,
        MultigraphBase::RingOpt => OverlayKind::RingOpt,
        MultigraphBase::Mst => OverlayKind::Mst,
        MultigraphBase::DeltaMbst => OverlayKind::DeltaMbst,
        MultigraphBase::Star => OverlayKind::Star,
    };
    let base = build_overlay(kind, underlay, model, options)?;
    let m = Multigraph::new(&base, model, t_max);
    Ok(FamilyBuilt::Periodic {
        schedule: m.schedule(&spec.to_string(), weak),
        weights: m.round_weights(),
    })
}

/// The names of `model`'s silos on `underlay`, to match file nodes.
fn silo_names<'a>(underlay: &'a Underlay, model: &DelayModel) -> SiloNames<'a> {
    let placement = model.connectivity.placement();
    SiloNames {
        labels: unique_labels(&placement.labels(underlay)),
        underlay,
        routers: placement.routers().to_vec(),
    }
}

/// Builds the static overlay of `kind` for `model` on `underlay` (for
/// D-Cliques with Clique Averaging, the overlay its models travel on; for
/// the ring all-reduce, the directed ring its chunks travel on).
///
/// # Errors
/// [`BuildError::NotStatic`] for kinds that change every round; use
/// [`build`] or [`build_schedule`].
pub fn build_overlay(
    kind: OverlayKind,
    underlay: &Underlay,
    model: &DelayModel,
    options: &BuildOptions,
) -> Result<Overlay, BuildError> {
    let n = model.silo_count();
    if matches!(
        kind,
        OverlayKind::Mst
            | OverlayKind::DeltaMbst
            | OverlayKind::Ring
            | OverlayKind::RingOpt
            | OverlayKind::RingAllReduce
            | OverlayKind::MeshAllReduce
    ) {
        model
            .check_finite()
            .map_err(|source| BuildError::NonFiniteDelay {
                overlay: kind.to_string(),
                source,
            })?;
    }
    Ok(match kind {
        OverlayKind::Star => star::star(n, options.center.resolve(underlay, model)),
        OverlayKind::Mst => mst::mst(model),
        OverlayKind::DeltaMbst => mbst::delta_mbst(model),
        OverlayKind::Ring => match &options.shared {
            None => ring::ring(model),
            Some(shared) => Overlay::directed_ring("ring", n, shared.ring_tour(model)),
        },
        OverlayKind::RingOpt => match &options.shared {
            None => ring::ring_opt(model, &options.ring_search),
            Some(shared) => Overlay::directed_ring(
                "ring-opt",
                n,
                shared.ring_opt_tour(model, &options.ring_search),
            ),
        },
        OverlayKind::RingAllReduce => {
            Overlay::directed_ring("ring-allreduce", n, &allreduce_tour(model, options))
        }
        OverlayKind::MeshAllReduce => {
            let mut mesh = complete(n);
            mesh.name = "mesh-allreduce".into();
            mesh
        }
        OverlayKind::Complete => complete(n),
        OverlayKind::Random(spec) => random_overlay(&spec, n, options.seed)?,
        OverlayKind::DCliques(d) => {
            options
                .dcliques
                .overlay(d, n)
                .map_err(|source| BuildError::DCliques {
                    overlay: kind.to_string(),
                    source,
                })?
        }
        OverlayKind::File(path) => {
            match file::read(path.as_path(), &silo_names(underlay, model))? {
                FileOverlay::Static { overlay, .. } => overlay,
                FileOverlay::Periodic { .. } => {
                    return Err(BuildError::NotStatic {
                        overlay: kind.to_string(),
                    })
                }
            }
        }
        OverlayKind::Family(spec) => match family(spec, underlay, model, options)? {
            FamilyBuilt::Static { overlay, .. } => overlay,
            FamilyBuilt::Periodic { .. } => {
                return Err(BuildError::NotStatic {
                    overlay: kind.to_string(),
                })
            }
        },
        OverlayKind::Matcha(_) => {
            return Err(BuildError::NotStatic {
                overlay: kind.to_string(),
            })
        }
    })
}

/// The ring all-reduce's tour: the ring-opt tour (shared when `options`
/// share one).
fn allreduce_tour(model: &DelayModel, options: &BuildOptions) -> Vec<usize> {
    match &options.shared {
        None => ring::ring_opt_tour(model, &options.ring_search),
        Some(shared) => shared.ring_opt_tour(model, &options.ring_search).to_vec(),
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
    if !model.connectivity.placement().is_one_per_router() {
        return Err(MatchaError::NotOnePerRouter);
    }
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

/// Parses a comma-separated list of overlays (`all` = every kind) with
/// the one overlay grammar ([`split_overlay_list`]: a comma inside
/// `NAME[...]` belongs to the overlay, an item `KEY=VALUE` continues the
/// `NAME:...` item before it, anything else is an error).
pub fn parse_overlay_list(list: &str) -> Result<Vec<OverlayKind>, OverlayParseError> {
    if list.trim().eq_ignore_ascii_case("all") {
        return Ok(OverlayKind::ALL.to_vec());
    }
    split_overlay_list(list)?
        .iter()
        .map(|s| s.parse())
        .collect()
}
