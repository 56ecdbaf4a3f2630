//! `fedtopo compare`: build each overlay and compute its cycle time.

use crate::overlay::algo::{
    christofides_matching_is_exact, EXACT_MATCHING_MAX_NODES, MATCHING_CANDIDATES,
};
use serde::Serialize;

use crate::evaluate::{EvalError, EvaluatedOverlay, ScheduleMixing};
use crate::net::delay::DelayModel;
use crate::net::description::NetworkDescription;
use crate::net::underlay::Underlay;
use crate::overlay::build::{BuildOptions, CenterPolicy, OverlayKind};

/// One overlay's line in a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// Overlay name.
    pub overlay: String,
    /// Number of arcs.
    pub arcs: usize,
    /// Largest in- or out-degree.
    pub max_degree: usize,
    /// Cycle time, ms per round.
    pub cycle_time_ms: f64,
    /// Rounds per second (1000 / cycle time).
    pub rounds_per_s: f64,
    /// STAR's cycle time divided by this one's (when STAR is in the comparison).
    pub speedup_vs_star: Option<f64>,
    /// A critical circuit, as silo labels.
    pub critical_circuit: Vec<String>,
    /// For schedules (MATCHA): how the cycle time was obtained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleStats>,
    /// What was approximated in building this overlay, when anything was
    /// (RING and ring-opt above the exact-matching limit of Christofides).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approximation: Option<String>,
}

/// The approximation made in building `kind` on `n` silos, if any.
fn approximation(kind: OverlayKind, n: usize) -> Option<String> {
    let ring = matches!(kind, OverlayKind::Ring | OverlayKind::RingOpt);
    (ring && !christofides_matching_is_exact(n)).then(|| {
        format!(
            "Christofides matching approximated above {EXACT_MATCHING_MAX_NODES} silos (exact blossom on the {MATCHING_CANDIDATES} nearest odd vertices of each, the rest greedy): no 1.5 guarantee"
        )
    })
}

/// Cycle time of an overlay that changes every round (MATCHA).
///
/// `cycle_time_ms` of the row is the paper's estimate (mean round duration,
/// \[Marfoq20\] App. H.6); `maxplus_ms` is the exact max-plus growth rate of the same
/// sampled sequence (never larger: silos only wait for their round's
/// in-neighbours).
#[derive(Debug, Clone, Serialize)]
pub struct ScheduleStats {
    /// Rounds sampled.
    pub rounds: u64,
    /// Mean round duration, ms.
    pub mean_round_ms: f64,
    /// Total of the rounds / (rounds - 1), the published convention, ms.
    pub published_convention_ms: f64,
    /// Exact max-plus growth rate `t(K)/K` of the same sequence, ms.
    pub maxplus_ms: f64,
    /// How the schedule mixes (MATCHA: seed, matchings, budget, lambda_2,
    /// alpha, rho); `None` for periodic schedules (per-round files and the
    /// families `exp-1peer`, `base:k=K`), whose row cycle time is the exact
    /// max-plus rate of the period and `mean_round_ms` the paper-style
    /// estimate over one period.
    #[serde(flatten)]
    pub mixing: Option<ScheduleMixing>,
    /// A sample of a random schedule read from a file (a MATCHA export,
    /// `"timing": "sampled"`): the row's cycle time is `mean_round_ms`,
    /// as MATCHA's, not the periodic rate.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sampled: bool,
}

/// A comparison: the rows plus the overlays themselves (for export).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Underlay name.
    pub underlay: String,
    /// Number of silos.
    pub silos: usize,
    /// One row per overlay, in the order asked.
    pub rows: Vec<CompareRow>,
    /// Label of the silo STAR is centred at (the speed-up baseline), when
    /// STAR is in the comparison.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub star_center: Option<String>,
    /// How that centre was chosen (`fastest`, `load`, `first`, `silo`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub star_center_policy: Option<String>,
    /// The network the cycle times were computed on (set by the caller:
    /// [`NetworkDescription::new`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkDescription>,
    /// The overlays built, one per row.
    #[serde(skip)]
    pub overlays: Vec<EvaluatedOverlay>,
}

/// Builds every overlay of `kinds` and computes its cycle time.
pub fn compare_overlays(
    underlay: &Underlay,
    model: &DelayModel,
    kinds: &[OverlayKind],
    options: &BuildOptions,
) -> Result<Comparison, EvalError> {
    let labels = model.connectivity.placement().labels(underlay);
    let mut rows = Vec::new();
    let mut overlays = Vec::new();
    // The STAR centre is resolved once (`fastest` times every centre,
    // O(N^2)), for the build and for the report.
    let center = kinds
        .contains(&OverlayKind::Star)
        .then(|| options.center.resolve(underlay, model));
    let resolved = BuildOptions {
        center: center.map_or(options.center.clone(), CenterPolicy::Silo),
        // RING and ring-opt share one Christofides tour (of this model).
        shared: Some(std::sync::Arc::new(
            crate::overlay::build::SharedBuild::new(),
        )),
        ..options.clone()
    };
    let task = crate::progress::Task::start("compare", "overlays", kinds.len() as u64);
    for &kind in kinds {
        task.message(&kind.to_string());
        let overlay = EvaluatedOverlay::build(kind, underlay, model, &resolved)?;
        let t = overlay.cycle_time(model)?;
        task.inc(1);
        let degrees = overlay.degree_stats();
        let schedule = match (&t.schedule, overlay.mixing()) {
            (Some(s), mixing) => Some(ScheduleStats {
                rounds: s.estimate.rounds,
                mean_round_ms: s.estimate.mean_ms,
                published_convention_ms: s.estimate.published_ms,
                maxplus_ms: s.maxplus_ms,
                sampled: mixing.is_none() && !overlay.has_exact_cycle_time(),
                mixing,
            }),
            _ => None,
        };
        rows.push(CompareRow {
            overlay: overlay.name(),
            arcs: degrees.arcs,
            max_degree: degrees.max_degree,
            cycle_time_ms: t.cycle_time_ms,
            rounds_per_s: t.rounds_per_second(),
            speedup_vs_star: None,
            critical_circuit: t
                .critical_circuit
                .iter()
                .map(|&i| labels[i].to_string())
                .collect(),
            schedule,
            approximation: approximation(kind, model.silo_count()),
        });
        overlays.push(overlay);
    }
    task.finish();
    let star = rows
        .iter()
        .find(|r| r.overlay == "star")
        .map(|r| r.cycle_time_ms);
    if let Some(star) = star {
        for r in &mut rows {
            r.speedup_vs_star = Some(star / r.cycle_time_ms);
        }
    }
    let (star_center, star_center_policy) = match star {
        Some(_) => {
            let c = center.unwrap_or_else(|| options.center.resolve(underlay, model));
            let policy = match options.center {
                CenterPolicy::Load => "load",
                CenterPolicy::First => "first",
                CenterPolicy::Fastest => "fastest",
                CenterPolicy::Silo(_) => "silo",
            };
            (labels.get(c).cloned(), Some(policy.to_string()))
        }
        None => (None, None),
    };
    Ok(Comparison {
        underlay: underlay.name.clone(),
        silos: model.silo_count(),
        rows,
        star_center,
        star_center_policy,
        network: None,
        overlays,
    })
}
