//! `fedtopo design`: search the overlay families for the least predicted
//! wall-clock time to a target on the user's network.
//!
//! Wall-clock time to a target = cycle time x rounds to the target. The
//! cycle time is exact (max-plus; for schedules the exact max-plus rate of
//! their rounds); on the `paper` or `flow` network
//! ([`DesignOptions::network`]) it is the mean round of a replay, in which
//! transfers share links. The rounds depend on the model and data; they are
//! predicted from how fast each candidate's consensus mixes:
//!
//! * **mixing time** `tau = 1 / (1 - SLEM)`: the relaxation time of the
//!   candidate's consensus (SLEM per round,
//!   [`crate::mixing::slem_per_round`]; 1 for exact averaging, infinite
//!   when the overlay does not mix). In the convergence rates of
//!   decentralized SGD the topology enters through terms in `1 / p`, `p`
//!   the spectral gap, added to a topology-independent part;
//! * **predicted rounds** `a + b tau` ([`RoundsPredictor`]): without
//!   calibration the documented proxy `a = base rounds` (the rounds exact
//!   averaging needs; default 15, what STAR and iid data need in the
//!   issue's digits measurements), `b = 1`: a theory-shaped guess with unit
//!   constant that ignores the data, reported as such; calibrated, `a` and
//!   `b` are fitted by least squares to rounds to the target measured by
//!   short training runs of probe overlays, with the fit error reported
//!   ([`RoundsPredictor::fit`]).
//!
//! Candidates: the requested kinds (paper overlays, MATCHA, random,
//! modern families, files), each with its default weights; every
//! undirected static one also with fastest-mixing weights (\[Boyd04\]);
//! and the arc-augmented ring-opt and delta-MBST ([`super::augment`](mod@super::augment),
//! tolerance 0), with default weights.

use serde::Serialize;

use super::augment::{augment, AugmentError, AugmentOptions};
use super::figures::{fastest_figures, mixing_figures};
use super::predictor::{
    estimated_mixed_heterogeneity, is_asymmetric, mixed_heterogeneity, stationary_imbalance,
    FeatureModel, LabelMix, PredictorInputs,
};
use crate::evaluate::{EvalError, EvaluatedOverlay};
use crate::graph::Overlay;
use crate::mixing::consensus::ConsensusError;
use crate::mixing::{
    effective_neighbours, slem, ConsensusMatrix, FastestMixing, FastestOptions, MixingError,
};
use crate::net::delay::DelayModel;
use crate::net::underlay::Underlay;
use crate::network::NetworkKind;
use crate::overlay::build::{build_overlay, BuildError, BuildOptions, OverlayKind, SharedBuild};
use crate::replay::{replay_with_progress, ReplayError, ReplayOptions};
use crate::timing::{cycle_time, TimingError};

/// Above this many silos `fedtopo design` leaves `matcha+` out of its
/// default candidates (asked for with `--overlays`, it runs): its
/// activation probabilities are solved by subgradient steps that each
/// decompose an `n x n` expected Laplacian densely. Measured (issue 24,
/// dev profile, loaded 2-core machine): on a 1,000-router random
/// geometric underlay (`rgg_gml -- 1000`), `matcha+` alone had not
/// finished after 3 minutes. Plain MATCHA on the complete connectivity
/// graph has a closed form from 400 silos on (issue 28).
pub const MAX_MATCHA_PLUS_SILOS: usize = 400;

/// Settings of [`design_candidates`].
#[derive(Debug, Clone, PartialEq)]
pub struct DesignOptions {
    /// Overlay kinds searched.
    pub kinds: Vec<OverlayKind>,
    /// Add the fastest-mixing-weights variant of undirected static overlays.
    pub fastest_weights: bool,
    /// Add ring-opt and delta-MBST augmented at tolerance 0.
    pub augmented: bool,
    /// Decay of the effective number of neighbours, in `[0, 1)`.
    pub gamma: f64,
    /// Rounds of a schedule its mixing is measured over.
    pub schedule_rounds: u64,
    /// Fastest-mixing solver settings.
    pub fastest: FastestOptions,
    /// Skip a kind that cannot be built on this network (e.g. the default
    /// candidate `regular:k=4` on 2 or 3 silos) instead of failing; each
    /// skip is reported in [`DesignSearch::skipped`]. For default
    /// candidate lists: a kind the user asked for that does not fit is an
    /// error naming it.
    pub skip_unbuildable: bool,
    /// The network model a candidate's rounds are timed on. `Maxplus` (the
    /// default): the exact max-plus cycle time of \[Marfoq20\] eq. (3), in
    /// which transfers never share a core link. `Paper` or `Flow`: the mean
    /// round of a replay of [`Self::replay_rounds`] rounds on that network
    /// (on `flow` the transfers of a round share access and core links
    /// max-min fairly), so that a candidate that floods the core (a mesh
    /// all-reduce, a dense overlay) is ranked by what it costs there.
    pub network: NetworkKind,
    /// Rounds replayed per candidate when [`Self::network`] is not
    /// `Maxplus`, in `1..=`[`crate::replay::MAX_ROUNDS`].
    pub replay_rounds: u64,
}

/// The candidate kinds `fedtopo design` searches by default (an overlay
/// list, [`crate::overlay::build::parse_overlay_list`]); a default kind
/// that cannot be built on the network (e.g. `regular:k=4` on 2 or 3
/// silos) is skipped with a note.
pub const DEFAULT_CANDIDATES: &str = "star,mst,delta-mbst,ring,ring-opt,ring-allreduce,mesh-allreduce,matcha,matcha+,regular:k=4,dcliques-ring,exp,exp-1peer,base:k=1,base:k=2,base:k=3,d-equistatic,od-equidyn,multigraph,multigraph:base=ring-opt";

impl Default for DesignOptions {
    fn default() -> Self {
        DesignOptions {
            kinds: Vec::new(),
            fastest_weights: true,
            augmented: true,
            gamma: 0.95,
            schedule_rounds: 60,
            fastest: FastestOptions::default(),
            skip_unbuildable: false,
            network: NetworkKind::Maxplus,
            replay_rounds: DEFAULT_REPLAY_ROUNDS,
        }
    }
}

/// Rounds replayed per candidate to time it on a network other than
/// `maxplus` ([`DesignOptions::replay_rounds`]).
pub const DEFAULT_REPLAY_ROUNDS: u64 = 20;

/// A kind left out of the search because it cannot be built on the
/// network ([`DesignOptions::skip_unbuildable`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkippedKind {
    /// The kind (`regular:k=4`).
    pub kind: String,
    /// Why it could not be built.
    pub reason: String,
}

/// The result of [`design_search`]: the candidates, sorted, and the kinds
/// skipped.
#[derive(Debug, Clone)]
pub struct DesignSearch {
    /// Every candidate, sorted by predicted time (ties: name).
    pub candidates: Vec<Candidate>,
    /// Kinds skipped because they cannot be built on the network.
    pub skipped: Vec<SkippedKind>,
}

/// What a candidate is, to rebuild or export it.
#[derive(Debug, Clone)]
pub enum CandidateOverlay {
    /// A kind built by the overlay builders, with its default weights.
    Kind(OverlayKind),
    /// A static overlay with explicit consensus weights or its default
    /// (local-degree) weights.
    Static {
        /// The overlay.
        overlay: Overlay,
        /// Consensus weights, `None` for the default rule.
        weights: Option<ConsensusMatrix>,
    },
}

/// One candidate overlay with its figures and prediction.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    /// Name (`mst`, `mst [fastest]`, `ring-opt+aug`, ...).
    pub name: String,
    /// Consensus weights (`local-degree`, `fastest`, `half`, `average`, ...).
    pub weights: String,
    /// Arcs (for schedules the mean per round is not computed: the first
    /// round's).
    pub arcs: usize,
    /// Time per round, ms: exact max-plus cycle time, or a schedule's exact
    /// max-plus rate; on another network ([`DesignOptions::network`]) the
    /// mean round of its replay.
    pub cycle_time_ms: f64,
    /// Spectral gap per round, `1 - SLEM`.
    pub spectral_gap: f64,
    /// Effective number of neighbours (\[Vogels22\]).
    pub effective_neighbours: f64,
    /// Mixing time, rounds: `1 / (1 - SLEM)`, or for finite-time exact
    /// consensus (STAR, Base-(k+1), one-peer exponential on 2^k silos) the
    /// rounds it takes.
    pub mixing_time: f64,
    /// Rounds after which the product of the consensus matrices is exact
    /// averaging (finite-time consensus: STAR 1, Base-(k+1), the one-peer
    /// exponential graph on 2^k silos), when within the rounds examined.
    pub exact_rounds: Option<usize>,
    /// True for a schedule that changes every round (MATCHA, one-peer
    /// exponential, Base-(k+1), EquiTopo's dynamic graphs).
    pub time_varying: bool,
    /// Predicted rounds to the target.
    pub predicted_rounds: f64,
    /// Predicted wall-clock time to the target, ms.
    pub predicted_time_ms: f64,
    /// Measured rounds to the target (filled by verification runs).
    pub measured_rounds: Option<f64>,
    /// Measured wall-clock time to the target, ms.
    pub measured_time_ms: Option<f64>,
    /// Why it does not mix, when it does not (its mixing time and
    /// predictions are then infinite): e.g. consensus matrices that are
    /// permutations ([`crate::design::figures::MixingFigures::no_mixing_reason`]).
    pub note: Option<String>,
    /// Rounds trained by the run that measured it: with no measured rounds,
    /// the target was **not reached** within them (a censored run: rounds to
    /// the target > this).
    pub rounds_tried: Option<u64>,
    /// When `design --verify` stopped its run behind the best time measured
    /// before it (ms, plus what an evaluation step hides): it could no
    /// longer win or tie; `rounds_tried` is then a lower bound short of
    /// the run's budget.
    pub stopped_behind_ms: Option<f64>,
    /// Other candidates that are this one (the same rounds, consensus
    /// weights and cycle time: an augmented overlay that gained no arc, a
    /// MATCHA variant on the same base graph), merged into it.
    #[serde(serialize_with = "join_names")]
    pub same_as: Vec<String>,
    /// The file it was exported to (`--out`), readable with
    /// `--overlays file:PATH`.
    pub file: Option<String>,
    /// Label heterogeneity left after one consensus round
    /// ([`super::predictor::mixed_heterogeneity`] on the data's labels, or
    /// its estimate from the predictor's label heterogeneity).
    pub mixed_heterogeneity: f64,
    /// Drift of its consensus from the plain average
    /// ([`super::predictor::stationary_imbalance`]; 0: doubly stochastic).
    pub stationary_imbalance: f64,
    /// True when a round's consensus matrix is not symmetric
    /// ([`super::predictor::is_asymmetric`]).
    pub asymmetric: bool,
    /// Silos of the network it was designed for.
    #[serde(skip)]
    pub silos: usize,
    /// How to rebuild it.
    #[serde(skip)]
    pub overlay: CandidateOverlay,
}

/// Writes merged names as one cell, `a; b`.
fn join_names<S: serde::Serializer>(names: &[String], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&names.join("; "))
}

impl Candidate {
    /// The candidate's name and the names merged into it (`ring-opt =
    /// ring-opt+aug`).
    pub fn display_name(&self) -> String {
        std::iter::once(self.name.as_str())
            .chain(self.same_as.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" = ")
    }

    /// Every name it answers to: its own and the merged ones.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.same_as.iter().map(String::as_str))
    }

    /// True when a run of it was measured and did not reach the target.
    pub fn not_reached(&self) -> bool {
        self.measured_rounds.is_none() && self.rounds_tried.is_some()
    }
}

/// The label share the fitted predictor assumes without the data
/// (`fedtopo design --label-share`): 1, label skew whose silos' features of
/// a class look alike (label shards of one data set, the usual federated
/// benchmark). Matters only with a label heterogeneity above 0.
pub const DEFAULT_LABEL_SHARE: f64 = 1.0;

/// Predicted rounds to the target: the fitted [`FeatureModel`] of
/// [`super::predictor`] when `model` is set (the default of `fedtopo
/// design`: [`RoundsPredictor::fitted`]), else the line `a + b x mixing
/// time` (the proxy, or a line fitted on probes).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundsPredictor {
    /// Intercept `a`, rounds (the line; unused with a model).
    pub a: f64,
    /// Slope `b`, rounds per round of mixing time (the line; unused with a model).
    pub b: f64,
    /// How it was obtained: `proxy`, `fitted on experiments/design`, `fit over N probes`.
    pub source: String,
    /// Root-mean-square relative error of the fit over the probes (None
    /// for the proxy and the uncalibrated model).
    pub rms_relative_error: Option<f64>,
    /// The fitted feature model, when the predictor is one.
    pub model: Option<FeatureModel>,
    /// Label heterogeneity of the data the model predicts for, in `[0, 1)`
    /// (0: iid; 0.8: two label shards per silo).
    pub label_heterogeneity: f64,
    /// Share of the data's gradient heterogeneity its label counts explain,
    /// in `[0, 1]` ([`super::label_share`]; [`DEFAULT_LABEL_SHARE`] without
    /// the data).
    pub label_share: f64,
    /// The data's label distributions, when known (the candidates' mixed
    /// heterogeneity is then exact, not estimated).
    #[serde(skip)]
    pub labels: Option<LabelMix>,
}

impl RoundsPredictor {
    /// The uncalibrated proxy `base_rounds + mixing time`.
    pub fn proxy(base_rounds: f64) -> RoundsPredictor {
        RoundsPredictor {
            a: base_rounds,
            b: 1.0,
            source: format!("proxy: {base_rounds} base rounds + mixing time (not calibrated)"),
            rms_relative_error: None,
            model: None,
            label_heterogeneity: 0.0,
            label_share: DEFAULT_LABEL_SHARE,
            labels: None,
        }
    }

    /// The shipped model fitted on `experiments/design`
    /// ([`super::predictor::shipped`]) for data of label heterogeneity
    /// `label_heterogeneity` whose label counts explain `label_share` of
    /// its gradient heterogeneity (both clamped to `[0, 1]`; 0 and
    /// [`DEFAULT_LABEL_SHARE`] when not finite).
    pub fn fitted(label_heterogeneity: f64, label_share: f64) -> RoundsPredictor {
        let unit = |x: f64, otherwise: f64| {
            if x.is_finite() {
                x.clamp(0.0, 1.0)
            } else {
                otherwise
            }
        };
        let h = unit(label_heterogeneity, 0.0);
        let s = unit(label_share, DEFAULT_LABEL_SHARE);
        RoundsPredictor {
            a: 0.0,
            b: 0.0,
            source: format!(
                "fitted on experiments/design (label heterogeneity {h:.2}, label share {s:.2}; \
                 not calibrated on this data)"
            ),
            rms_relative_error: None,
            model: Some(super::predictor::shipped(h, s)),
            label_heterogeneity: h,
            label_share: s,
            labels: None,
        }
    }

    /// [`Self::fitted`] for `data`: its label heterogeneity, and its
    /// label distributions for the candidates' mixed heterogeneity.
    pub fn fitted_for(data: &crate::train::data::FederatedData) -> RoundsPredictor {
        let labels = LabelMix::of(data);
        let mut p = RoundsPredictor::fitted(data.label_heterogeneity(), labels.label_share);
        p.labels = Some(labels);
        p.source = format!(
            "fitted on experiments/design (this data's labels: heterogeneity {:.2}, label share \
             {:.2}; not calibrated on it)",
            p.label_heterogeneity, p.label_share
        );
        p
    }

    /// The formula, with its numbers: `rounds = 15.00 + 1.000 x mixing
    /// time`, or the model's `ln rounds = ...`.
    pub fn formula(&self) -> String {
        match &self.model {
            Some(m) => format!(
                "ln rounds = {}",
                super::predictor::feature_names()
                    .iter()
                    .zip(&m.weights)
                    .map(|(n, w)| if n == "intercept" {
                        format!("{w:.3}")
                    } else {
                        format!("{w:+.3} x {n}")
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            None => format!("rounds = {:.2} + {:.3} x mixing time", self.a, self.b),
        }
    }

    /// What the model reads of candidate `c` on `silos` silos.
    pub fn inputs(&self, c: &Candidate, silos: usize) -> PredictorInputs {
        PredictorInputs {
            mixing_time: c.mixing_time,
            silos,
            effective_neighbours: c.effective_neighbours,
            time_varying: c.time_varying,
            label_heterogeneity: self.label_heterogeneity,
            label_share: self.label_share,
            mixed_heterogeneity: c.mixed_heterogeneity,
            stationary_imbalance: c.stationary_imbalance,
            asymmetric: c.asymmetric,
        }
    }

    /// Predicted rounds of candidate `c` on `silos` silos: the model's, or
    /// the line's at its mixing time.
    pub fn predict(&self, c: &Candidate, silos: usize) -> f64 {
        match &self.model {
            Some(m) => m.rounds(&self.inputs(c, silos)),
            None => self.rounds(c.mixing_time),
        }
    }
}

impl RoundsPredictor {
    /// [`Self::proxy`] of a checked `base_rounds`: a finite number `>= 0`.
    ///
    /// # Errors
    /// [`DesignError::Options`] naming the value.
    pub fn checked_proxy(base_rounds: f64) -> Result<RoundsPredictor, DesignError> {
        if !(base_rounds.is_finite() && base_rounds >= 0.0) {
            return Err(DesignError::Options(format!(
                "base rounds {base_rounds}: expected a finite number >= 0"
            )));
        }
        Ok(RoundsPredictor::proxy(base_rounds))
    }

    /// Predicted rounds for mixing time `tau` (at least 1).
    pub fn rounds(&self, tau: f64) -> f64 {
        (self.a + self.b * tau).max(1.0)
    }

    /// Least-squares fit of `rounds = a + b tau` to probes `(tau, measured
    /// rounds)` with finite values; one probe (or equal `tau`) fits `a = 0`,
    /// `b = mean(rounds / tau)`. `None` without a usable probe.
    pub fn fit(probes: &[(f64, f64)]) -> Option<RoundsPredictor> {
        let p: Vec<(f64, f64)> = probes
            .iter()
            .copied()
            .filter(|(c, r)| c.is_finite() && r.is_finite() && *c > 0.0)
            .collect();
        if p.is_empty() {
            return None;
        }
        let m = p.len() as f64;
        let (mc, mr) = (
            p.iter().map(|x| x.0).sum::<f64>() / m,
            p.iter().map(|x| x.1).sum::<f64>() / m,
        );
        let sxx: f64 = p.iter().map(|x| (x.0 - mc).powi(2)).sum();
        let (a, b) = if sxx <= 1e-12 * mc.abs().max(1.0) || p.len() < 2 {
            (0.0, p.iter().map(|x| x.1 / x.0).sum::<f64>() / m)
        } else {
            let sxy: f64 = p.iter().map(|x| (x.0 - mc) * (x.1 - mr)).sum();
            let b = sxy / sxx;
            (mr - b * mc, b)
        };
        let mut fitted = RoundsPredictor {
            a,
            b,
            source: format!("least-squares fit over {} probe(s)", p.len()),
            rms_relative_error: None,
            model: None,
            label_heterogeneity: 0.0,
            label_share: DEFAULT_LABEL_SHARE,
            labels: None,
        };
        let err = (p
            .iter()
            .map(|&(c, r)| ((fitted.rounds(c) - r) / r.max(1.0)).powi(2))
            .sum::<f64>()
            / m)
            .sqrt();
        fitted.rms_relative_error = Some(err);
        Some(fitted)
    }
}

/// Why the design search failed.
#[derive(Debug, thiserror::Error)]
pub enum DesignError {
    /// Building or timing a candidate failed.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// Building an overlay failed.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A cycle time failed.
    #[error(transparent)]
    Timing(#[from] TimingError),
    /// A consensus matrix failed.
    #[error(transparent)]
    Consensus(#[from] ConsensusError),
    /// The fastest-mixing solver failed.
    #[error(transparent)]
    Mixing(#[from] MixingError),
    /// Augmentation failed.
    #[error(transparent)]
    Augment(#[from] AugmentError),
    /// Replaying a candidate on the design's network failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// Bad options.
    #[error("design: {0}")]
    Options(String),
    /// A candidate kind asked for cannot be built on this network.
    #[error("design: candidate `{kind}` does not fit this network: {source}")]
    Candidate {
        /// The kind.
        kind: String,
        /// Why it could not be built.
        source: Box<EvalError>,
    },
}

/// Fastest-mixing weights with their effective neighbours, `None` for a
/// directed overlay.
type FastestSolved = Option<(FastestMixing, f64)>;

/// Mixing time `1 / (1 - s)` at per-round SLEM `s`: 1 for exact averaging
/// (`s = 0`), infinite for `s >= 1` (no mixing).
pub fn mixing_time(s: f64) -> f64 {
    if s >= 1.0 {
        f64::INFINITY
    } else {
        1.0 / (1.0 - s.max(0.0))
    }
}

/// The figures of one candidate before its prediction.
struct Figures {
    name: String,
    weights: String,
    arcs: usize,
    cycle_time_ms: f64,
    slem: f64,
    exact_rounds: Option<usize>,
    effective_neighbours: f64,
    time_varying: bool,
    note: Option<String>,
    overlay: CandidateOverlay,
}

/// What makes two candidates the same: the first round's arcs and
/// protocol, and the consensus matrices of the rounds examined.
///
/// The matrices are kept by their nonzero entries (row-major index,
/// value): a schedule's 60 dense rounds on 1,000 silos are 480 MB, their
/// nonzeros a few MB. Missing entries are exact zeros, so [`Self::same`]
/// compares what the dense matrices would.
#[derive(Debug, Clone)]
struct Signature {
    protocol: crate::graph::Protocol,
    arcs: Vec<(usize, usize)>,
    /// Per matrix: its entry count and its nonzero entries.
    matrices: Vec<(usize, Vec<(usize, f64)>)>,
}

impl Signature {
    fn new(round0: &Overlay, matrices: &[ConsensusMatrix]) -> Signature {
        let mut arcs = round0.arcs().to_vec();
        arcs.sort_unstable();
        Signature {
            protocol: round0.protocol,
            arcs,
            matrices: matrices
                .iter()
                .map(|m| {
                    let a = m.as_slice();
                    let nonzero = a
                        .iter()
                        .enumerate()
                        .filter(|(_, x)| **x != 0.0)
                        .map(|(i, x)| (i, *x))
                        .collect();
                    (a.len(), nonzero)
                })
                .collect(),
        }
    }

    /// Same arcs and protocol, every matrix entry within `1e-12`.
    fn same(&self, other: &Signature) -> bool {
        self.protocol == other.protocol
            && self.arcs == other.arcs
            && self.matrices.len() == other.matrices.len()
            && self
                .matrices
                .iter()
                .zip(&other.matrices)
                .all(|((n, a), (m, b))| n == m && same_entries(a, b))
    }
}

/// Two sparse matrices (sorted nonzero entries) agree within `1e-12`
/// entry by entry, a missing entry being 0.
fn same_entries(a: &[(usize, f64)], b: &[(usize, f64)]) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-12;
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let ok = match (a.get(i), b.get(j)) {
            (Some(&(p, x)), Some(&(q, y))) if p == q => {
                i += 1;
                j += 1;
                close(x, y)
            }
            (Some(&(p, x)), Some(&(q, _))) if p < q => {
                i += 1;
                close(x, 0.0)
            }
            (Some(&(_, x)), None) => {
                i += 1;
                close(x, 0.0)
            }
            (_, Some(&(_, y))) => {
                j += 1;
                close(0.0, y)
            }
            (None, None) => true,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Candidates found so far, duplicates merged into the first of their kind.
#[derive(Default)]
struct Found {
    candidates: Vec<Candidate>,
    signatures: Vec<Signature>,
    silos: usize,
}

impl Found {
    /// Adds the candidate of figures `f`, of `signature` and whose rounds'
    /// consensus matrices are `matrices`, or merges it into an earlier one
    /// that is the same overlay with the same weights.
    fn push(
        &mut self,
        f: Figures,
        signature: Signature,
        matrices: &[ConsensusMatrix],
        predictor: &RoundsPredictor,
    ) {
        let same_time = |c: &Candidate| {
            (c.cycle_time_ms - f.cycle_time_ms).abs() <= 1e-9 * f.cycle_time_ms.abs().max(1.0)
        };
        if let Some(k) = (0..self.candidates.len()).find(|&k| {
            same_time(&self.candidates[k])
                && self.candidates[k].time_varying == f.time_varying
                && self.signatures[k].same(&signature)
        }) {
            self.candidates[k].same_as.push(f.name);
            return;
        }
        // Finite-time exact consensus: the rounds it takes, not the
        // geometric mean's 1.
        let tau = f.exact_rounds.map_or(mixing_time(f.slem), |r| r as f64);
        let mut c = Candidate {
            name: f.name,
            weights: f.weights,
            arcs: f.arcs,
            cycle_time_ms: f.cycle_time_ms,
            spectral_gap: 1.0 - f.slem,
            effective_neighbours: f.effective_neighbours,
            mixing_time: tau,
            exact_rounds: f.exact_rounds,
            time_varying: f.time_varying,
            predicted_rounds: f64::NAN,
            predicted_time_ms: f64::NAN,
            measured_rounds: None,
            measured_time_ms: None,
            rounds_tried: None,
            stopped_behind_ms: None,
            note: f.note,
            same_as: Vec::new(),
            file: None,
            mixed_heterogeneity: match &predictor.labels {
                Some(l) if l.silos.len() == self.silos => {
                    mixed_heterogeneity(matrices, &l.silos, &l.pooled)
                }
                _ => estimated_mixed_heterogeneity(
                    matrices,
                    self.silos,
                    predictor.label_heterogeneity,
                ),
            },
            stationary_imbalance: stationary_imbalance(matrices, self.silos),
            asymmetric: is_asymmetric(matrices),
            silos: self.silos,
            overlay: f.overlay,
        };
        c.predicted_rounds = predictor.predict(&c, self.silos);
        c.predicted_time_ms = c.cycle_time_ms * c.predicted_rounds;
        self.candidates.push(c);
        self.signatures.push(signature);
    }
}

/// Every candidate with its figures, predicted by `predictor`, sorted by
/// predicted time (ties: name). Candidates that are the same overlay with
/// the same weights (an augmented overlay that gained no arc, MATCHA and
/// MATCHA+ on a complete underlay) are merged into the first found, the
/// others' names kept in [`Candidate::same_as`].
///
/// # Errors
/// A candidate cannot be built, timed or its weights computed; bad options.
pub fn design_candidates(
    underlay: &Underlay,
    model: &DelayModel,
    build: &BuildOptions,
    options: &DesignOptions,
    predictor: &RoundsPredictor,
) -> Result<Vec<Candidate>, DesignError> {
    Ok(design_search(underlay, model, build, options, predictor)?.candidates)
}

/// [`design_candidates`] with the kinds skipped
/// ([`DesignOptions::skip_unbuildable`]).
///
/// # Errors
/// As [`design_candidates`]; with `skip_unbuildable`, also when no kind
/// can be built.
pub fn design_search(
    underlay: &Underlay,
    model: &DelayModel,
    build: &BuildOptions,
    options: &DesignOptions,
    predictor: &RoundsPredictor,
) -> Result<DesignSearch, DesignError> {
    if !(0.0..1.0).contains(&options.gamma) {
        return Err(DesignError::Options(format!(
            "expected gamma in [0, 1), got {}",
            options.gamma
        )));
    }
    if options.network != NetworkKind::Maxplus
        && !(1..=crate::replay::MAX_ROUNDS).contains(&options.replay_rounds)
    {
        return Err(DesignError::Options(format!(
            "expected replay rounds in 1..={}, got {}",
            crate::replay::MAX_ROUNDS,
            options.replay_rounds
        )));
    }
    let n = model.silo_count();
    // One Christofides tour and one ring-opt tour for RING, ring-opt and
    // every family placed on them (a dozen candidates), not one each.
    let with_shared;
    let build = if build.shared.is_some() {
        build
    } else {
        with_shared = BuildOptions {
            shared: Some(std::sync::Arc::new(SharedBuild::new())),
            ..build.clone()
        };
        &with_shared
    };
    let mut found = Found {
        silos: n,
        ..Found::default()
    };
    let task = crate::progress::Task::start(
        "design",
        "candidates",
        (options.kinds.len() + if options.augmented { 2 } else { 0 }) as u64,
    );
    let mut skipped = Vec::new();
    // Fastest-mixing weights by the arcs they were solved for: the solver
    // is deterministic, so an overlay with the same arcs as an earlier
    // candidate (MST and delta-MBST often are) gets the same weights
    // without solving again.
    let mut fastest_cache: Vec<(Vec<(usize, usize)>, FastestSolved)> = Vec::new();
    for &kind in &options.kinds {
        task.message(&kind.to_string());
        let e = match EvaluatedOverlay::build(kind, underlay, model, build) {
            Ok(e) => e,
            Err(e @ EvalError::Build(_)) if options.skip_unbuildable => {
                skipped.push(SkippedKind {
                    kind: kind.to_string(),
                    reason: e.to_string(),
                });
                task.inc(1);
                continue;
            }
            Err(e @ EvalError::Build(_)) => {
                return Err(DesignError::Candidate {
                    kind: kind.to_string(),
                    source: Box::new(e),
                })
            }
            Err(e) => return Err(e.into()),
        };
        let t = match options.network {
            NetworkKind::Maxplus => {
                let timing = e.cycle_time(model)?;
                timing
                    .schedule
                    .as_ref()
                    .map_or(timing.cycle_time_ms, |s| s.maxplus_ms)
            }
            network => {
                let mut net = network.build(model);
                e.replay(
                    model,
                    net.as_mut(),
                    &replay_options(options),
                    None,
                    &mut |_| {},
                )?
                .mean_round_ms()
            }
        };
        let f = mixing_figures(&e, options.schedule_rounds, options.gamma)?;
        let round0 = e.schedule().round(0).into_owned();
        found.push(
            Figures {
                name: e.name(),
                weights: f.rule.clone(),
                arcs: round0.arcs().len(),
                cycle_time_ms: t,
                slem: f.slem,
                exact_rounds: f.exact_round,
                effective_neighbours: f.effective_neighbours,
                time_varying: e.is_schedule(),
                note: f.no_mixing_reason(),
                overlay: CandidateOverlay::Kind(kind),
            },
            Signature::new(&round0, &f.matrices),
            &f.matrices,
            predictor,
        );
        if options.fastest_weights && f.rule != "average" {
            if let Some(o) = e.overlay() {
                let solved = match fastest_cache.iter().find(|(arcs, _)| arcs == o.arcs()) {
                    Some((_, r)) => r.clone(),
                    None => {
                        let r = fastest_figures(o, &options.fastest, options.gamma)?;
                        fastest_cache.push((o.arcs().to_vec(), r.clone()));
                        r
                    }
                };
                if let Some((fm, eff)) = solved {
                    let matrix = [fm.matrix.clone()];
                    found.push(
                        Figures {
                            name: format!("{} [fastest]", e.name()),
                            weights: "fastest".into(),
                            arcs: o.arcs().len(),
                            cycle_time_ms: t,
                            slem: fm.slem,
                            exact_rounds: None,
                            effective_neighbours: eff,
                            time_varying: false,
                            note: None,
                            overlay: CandidateOverlay::Static {
                                overlay: o.clone(),
                                weights: Some(fm.matrix),
                            },
                        },
                        Signature::new(o, &matrix),
                        &matrix,
                        predictor,
                    );
                }
            }
        }
        task.inc(1);
    }
    if options.augmented {
        for base in ["ring-opt", "delta-mbst"] {
            task.message(&format!("{base}+aug"));
            let kind: OverlayKind = base
                .parse()
                .map_err(|e| DesignError::Options(format!("{base}: {e:?}")))?;
            let o = build_overlay(kind, underlay, model, build)?;
            let a = augment(
                &o,
                model,
                &AugmentOptions {
                    front_steps: 0,
                    gamma: options.gamma,
                    // Only the augmented overlay is used (its figures below).
                    neighbours: false,
                    ..AugmentOptions::default()
                },
            )?;
            let note = (a.estimated_scans > 0).then(|| {
                format!(
                    "augmented by an approximation of the greedy: {} scan(s) of this directed \
                     overlay scored exactly only the candidates of best estimated gap (`fedtopo \
                     augment --from {base} --exhaustive` scores them all)",
                    a.estimated_scans
                )
            });
            let aug = a.augmented;
            let t = match options.network {
                NetworkKind::Maxplus => cycle_time(&aug, model)?.cycle_time_ms,
                network => {
                    let mut net = network.build(model);
                    let opts = replay_options(options);
                    replay_with_progress(&aug, model, net.as_mut(), &opts, &mut |_| {})?
                        .mean_round_ms()
                }
            };
            let w = [crate::mixing::consensus::local_degree(&aug)];
            let signature = Signature::new(&aug, &w);
            found.push(
                Figures {
                    name: aug.name.clone(),
                    weights: "local-degree".into(),
                    arcs: aug.arcs().len(),
                    cycle_time_ms: t,
                    slem: slem(n, w[0].as_slice()).map_err(MixingError::from)?,
                    exact_rounds: None,
                    effective_neighbours: effective_neighbours(n, w[0].as_slice(), options.gamma),
                    time_varying: false,
                    note,
                    overlay: CandidateOverlay::Static {
                        overlay: aug,
                        weights: None,
                    },
                },
                signature,
                &w,
                predictor,
            );
            task.inc(1);
        }
    }
    let mut out = found.candidates;
    if out.is_empty() && !skipped.is_empty() {
        return Err(DesignError::Options(format!(
            "no candidate can be built on this network: {}",
            skipped
                .iter()
                .map(|s| format!("{} ({})", s.kind, s.reason))
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    out.sort_by(|a, b| {
        a.predicted_time_ms
            .total_cmp(&b.predicted_time_ms)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(DesignSearch {
        candidates: out,
        skipped,
    })
}

/// The replay that times a candidate on [`DesignOptions::network`].
fn replay_options(options: &DesignOptions) -> ReplayOptions {
    ReplayOptions {
        rounds: options.replay_rounds,
        ..ReplayOptions::default()
    }
}

/// Re-predicts `candidates` with `predictor` and sorts them again.
pub fn repredict(candidates: &mut [Candidate], predictor: &RoundsPredictor) {
    for c in candidates.iter_mut() {
        c.predicted_rounds = predictor.predict(c, c.silos);
        c.predicted_time_ms = c.cycle_time_ms * c.predicted_rounds;
    }
    candidates.sort_by(|a, b| {
        a.predicted_time_ms
            .total_cmp(&b.predicted_time_ms)
            .then_with(|| a.name.cmp(&b.name))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;

    #[test]
    fn mixing_time_and_fit() {
        assert_eq!(mixing_time(0.0), 1.0);
        assert!(mixing_time(1.0).is_infinite());
        assert!((mixing_time(0.75) - 4.0).abs() < 1e-12);
        assert_eq!(RoundsPredictor::proxy(15.0).rounds(4.0), 19.0);
        // An exact line is recovered with zero error.
        let probes: Vec<(f64, f64)> = [1.0, 5.0, 20.0]
            .iter()
            .map(|&c| (c, 10.0 + 3.0 * c))
            .collect();
        let p = RoundsPredictor::fit(&probes).unwrap_or_else(|| panic!("no fit"));
        assert!((p.a - 10.0).abs() < 1e-9 && (p.b - 3.0).abs() < 1e-9);
        assert!(p.rms_relative_error.unwrap_or(1.0) < 1e-12);
        // One probe: proportional.
        let p = RoundsPredictor::fit(&[(4.0, 40.0)]).unwrap_or_else(|| panic!("no fit"));
        assert_eq!((p.a, p.b), (0.0, 10.0));
        assert!(RoundsPredictor::fit(&[(f64::INFINITY, 3.0)]).is_none());
    }

    #[test]
    fn candidates_are_sorted_and_consistent() {
        let u = load_underlay(Some("aws-gaia"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let model = NetworkSpec::default()
            .build(&u)
            .unwrap_or_else(|e| panic!("{e}"));
        let kinds: Vec<OverlayKind> = ["star", "mst", "ring-opt", "matcha"]
            .iter()
            .map(|k| k.parse().unwrap_or_else(|e| panic!("{e:?}")))
            .collect();
        let options = DesignOptions {
            kinds,
            ..DesignOptions::default()
        };
        let c = design_candidates(
            &u,
            &model,
            &BuildOptions::default(),
            &options,
            &RoundsPredictor::proxy(15.0),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        for expected in [
            "star",
            "mst",
            "mst [fastest]",
            "ring-opt",
            "matcha",
            "ring-opt+aug",
            "delta-mbst+aug",
        ] {
            assert!(
                names.contains(&expected),
                "{expected} missing from {names:?}"
            );
        }
        for w in c.windows(2) {
            assert!(w[0].predicted_time_ms <= w[1].predicted_time_ms);
        }
        for x in &c {
            assert!(
                (x.predicted_time_ms - x.cycle_time_ms * x.predicted_rounds).abs()
                    <= 1e-9 * x.predicted_time_ms
            );
        }
        let get = |n: &str| {
            c.iter()
                .find(|x| x.name == n)
                .unwrap_or_else(|| panic!("{n}"))
        };
        // Fastest weights never mix slower than the default ones, at the
        // same cycle time; STAR averages exactly in one round.
        assert!(get("mst [fastest]").spectral_gap >= get("mst").spectral_gap - 1e-12);
        assert_eq!(get("mst [fastest]").cycle_time_ms, get("mst").cycle_time_ms);
        assert_eq!(get("star").mixing_time, 1.0);
        // Augmented ring-opt: same cycle time, faster mixing.
        assert!(get("ring-opt+aug").cycle_time_ms <= get("ring-opt").cycle_time_ms * (1.0 + 1e-9));
        assert!(get("ring-opt+aug").spectral_gap >= get("ring-opt").spectral_gap);
    }

    /// Two kinds that build the same overlay with the same weights are one
    /// candidate with both names (on AWS North America the MST is the
    /// delta-MBST, and MATCHA+'s underlay is MATCHA's connectivity graph);
    /// different ones stay apart.
    #[test]
    fn identical_candidates_are_merged() {
        let u = load_underlay(Some("aws-north-america"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let model = NetworkSpec::default()
            .build(&u)
            .unwrap_or_else(|e| panic!("{e}"));
        let kinds: Vec<OverlayKind> = ["mst", "delta-mbst", "ring-opt", "ring-opt"]
            .iter()
            .map(|k| k.parse().unwrap_or_else(|e| panic!("{e:?}")))
            .collect();
        let options = DesignOptions {
            kinds,
            fastest_weights: false,
            augmented: false,
            ..DesignOptions::default()
        };
        let c = design_candidates(
            &u,
            &model,
            &BuildOptions::default(),
            &options,
            &RoundsPredictor::proxy(15.0),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<String> = c.iter().map(Candidate::display_name).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.contains(&"mst = delta-mbst".to_string()), "{names:?}");
        assert!(
            names.contains(&"ring-opt = ring-opt".to_string()),
            "{names:?}"
        );
    }
}

#[cfg(test)]
mod network_tests {
    use super::*;
    use crate::net::underlay::LoadOptions;
    use crate::replay::ReplayOptions;

    fn geant_10g() -> (Underlay, DelayModel) {
        let path = format!(
            "{}/underlays/paper/geantdistance.gml",
            env!("CARGO_MANIFEST_DIR")
        );
        let u = Underlay::load(std::path::Path::new(&path), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let m = crate::net::scenario::NetworkSpec::from_knobs(|k| (k == "access").then_some("10G"))
            .unwrap_or_else(|e| panic!("{e}"))
            .delay_model(&u);
        (u, m)
    }

    #[test]
    fn on_the_flow_network_candidates_are_timed_by_their_replay() {
        let (u, m) = geant_10g();
        let kinds: Vec<OverlayKind> = ["mesh-allreduce", "ring-opt", "star"]
            .iter()
            .map(|k| k.parse().unwrap_or_else(|e| panic!("{e:?}")))
            .collect();
        let build = BuildOptions::default();
        let predictor = RoundsPredictor::fitted(0.8, DEFAULT_LABEL_SHARE);
        let base = DesignOptions {
            kinds,
            fastest_weights: false,
            augmented: false,
            ..DesignOptions::default()
        };
        let exact =
            design_candidates(&u, &m, &build, &base, &predictor).unwrap_or_else(|e| panic!("{e}"));
        let flow_options = DesignOptions {
            network: NetworkKind::Flow,
            replay_rounds: 10,
            ..base.clone()
        };
        let flow = design_candidates(&u, &m, &build, &flow_options, &predictor)
            .unwrap_or_else(|e| panic!("{e}"));
        let get = |c: &[Candidate], name: &str| {
            c.iter()
                .find(|x| x.name == name)
                .map(|x| x.cycle_time_ms)
                .unwrap_or_else(|| panic!("no {name}"))
        };
        for name in ["mesh-allreduce", "ring-opt", "star"] {
            // The flow time is the mean round of a 10-round flow replay.
            let kind: OverlayKind = name.parse().unwrap_or_else(|e| panic!("{e:?}"));
            let e = EvaluatedOverlay::build(kind, &u, &m, &build).unwrap_or_else(|e| panic!("{e}"));
            let mut net = NetworkKind::Flow.build(&m);
            let opts = ReplayOptions {
                rounds: 10,
                ..ReplayOptions::default()
            };
            let r = e
                .replay(&m, net.as_mut(), &opts, None, &mut |_| {})
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(get(&flow, name), r.mean_round_ms(), "{name}");
        }
        // The mesh all-reduce's n(n-1) chunks of a step share Geant's core
        // on `flow`: measured 250.0 ms (eq. (3)) against 665.4 ms.
        let (mesh_exact, mesh_flow) = (get(&exact, "mesh-allreduce"), get(&flow, "mesh-allreduce"));
        assert!(mesh_flow > 2.0 * mesh_exact, "{mesh_exact} {mesh_flow}");
        // Sorted by the predicted time on the flow network.
        assert!(flow
            .windows(2)
            .all(|w| w[0].predicted_time_ms <= w[1].predicted_time_ms));
        for c in &flow {
            assert_eq!(c.predicted_time_ms, c.cycle_time_ms * c.predicted_rounds);
        }
        let bad = DesignOptions {
            replay_rounds: 0,
            ..flow_options
        };
        assert!(matches!(
            design_candidates(&u, &m, &build, &bad, &predictor),
            Err(DesignError::Options(_))
        ));
    }
}

#[cfg(test)]
mod signature_tests {
    use super::same_entries;

    /// The sparse comparison answers as the dense one would.
    #[test]
    fn sparse_entries_compare_as_dense_matrices() {
        let dense_same =
            |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-12);
        let sparse = |a: &[f64]| -> Vec<(usize, f64)> {
            a.iter()
                .enumerate()
                .filter(|(_, x)| **x != 0.0)
                .map(|(i, x)| (i, *x))
                .collect()
        };
        // Deterministic pseudo-random pairs: zeros, equal, near and far entries.
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut agree = [0usize; 2];
        for _ in 0..2000 {
            let len = 1 + (next() % 12) as usize;
            let a: Vec<f64> = (0..len)
                .map(|_| {
                    if next() % 3 == 0 {
                        0.0
                    } else {
                        (next() % 5) as f64 / 4.0
                    }
                })
                .collect();
            let b: Vec<f64> = a
                .iter()
                .map(|&x| match next() % 6 {
                    0 => 0.0,
                    1 => x + 5e-13,
                    2 => x + 1e-9,
                    3 => -0.0 * x,
                    _ => x,
                })
                .collect();
            let d = dense_same(&a, &b);
            assert_eq!(same_entries(&sparse(&a), &sparse(&b)), d, "{a:?} {b:?}");
            agree[usize::from(d)] += 1;
        }
        // Both answers occur.
        assert!(agree[0] > 100 && agree[1] > 100, "{agree:?}");
    }
}
