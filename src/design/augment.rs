//! Arc augmentation: from a designed overlay, add arcs greedily, best
//! mixing gain first, while the cycle time stays within a tolerance.
//!
//! The throughput paper's conclusion (\[Marfoq20\] Sec. 6) proposes adding
//! arcs to a designed overlay as long as its cycle time does not grow: the
//! rounds get no slower and consensus mixes faster. Here:
//!
//! * **Candidates**: every missing arc `j -> i` of a directed overlay; every
//!   missing edge `{i, j}` (both arcs) of an undirected one, so it stays
//!   undirected.
//! * **Mixing measure**: the spectral gap `1 - SLEM` of the local-degree
//!   consensus matrix (\[Marfoq20\] eqs. 22-23; equal to
//!   Metropolis–Hastings on undirected overlays), what `train` uses by
//!   default; the effective number of neighbours (\[Vogels22\]) is reported
//!   too.
//! * **Phase 1 (the augmented overlay)**: repeatedly add the candidate of
//!   largest spectral gap among those whose exact max-plus cycle time
//!   ([`crate::timing::cycle_time`]) is at most `(1 + tolerance)` times the
//!   base's, while that gap is larger than the current one.
//! * **Phase 2 (the front)**: continue past the tolerance, each step adding
//!   the candidate of largest gap gain per ms of cycle time added (a gain
//!   at no extra time first), for `front_steps` steps. Every overlay
//!   visited is a point; the Pareto front keeps the points no other point
//!   beats on both cycle time (lower) and the measure (higher).

use serde::Serialize;

use crate::delay::DelayModel;
use crate::graph::Overlay;
use crate::mixing::{effective_neighbours, spectral_gap, SpectrumError};
use crate::timing::{cycle_time, TimingError};
use crate::train::consensus::local_degree;

/// Most silos the commands augment (`augment`, `design`'s `+aug`
/// candidates) unless forced: every step times each missing arc (a
/// max-plus cycle time and an `n x n` eigendecomposition each, about `n²`
/// of them), so the work grows as `n^5`. At 200 silos a step took about
/// 18 s on a loaded 2-core machine (`fedtopo augment aws-gaia --silos 200
/// --front-steps 0`: 11 steps in 200 s); at 2000 silos it would take days.
pub const MAX_AUGMENT_SILOS: usize = 200;

/// Settings of [`augment`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AugmentOptions {
    /// Relative cycle-time tolerance of phase 1 (>= 0; 0: no slower at all).
    pub tolerance: f64,
    /// Steps of phase 2 (the front beyond the tolerance).
    pub front_steps: usize,
    /// Decay of the effective number of neighbours, in `[0, 1)`.
    pub gamma: f64,
}

impl Default for AugmentOptions {
    fn default() -> Self {
        AugmentOptions {
            tolerance: 0.0,
            front_steps: 30,
            gamma: 0.95,
        }
    }
}

/// One overlay visited by the augmentation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AugmentPoint {
    /// 0 for the base, then one per added arc (edge).
    pub step: usize,
    /// 1 (within the tolerance) or 2 (the front beyond it); 0 for the base.
    pub phase: u8,
    /// Tail (silo index) of the arc added at this step (for an undirected
    /// overlay the reverse arc was added too).
    pub added_from: Option<usize>,
    /// Head (silo index) of the arc added at this step.
    pub added_to: Option<usize>,
    /// Arcs of the overlay.
    pub arcs: usize,
    /// Exact max-plus cycle time, ms.
    pub cycle_time_ms: f64,
    /// Spectral gap of the local-degree consensus matrix.
    pub spectral_gap: f64,
    /// Effective number of neighbours of the same matrix.
    pub effective_neighbours: f64,
    /// On the Pareto front of cycle time against spectral gap.
    pub front_gap: bool,
    /// On the Pareto front of cycle time against effective neighbours.
    pub front_neighbours: bool,
}

/// The result of [`augment`].
#[derive(Debug, Clone)]
pub struct Augmentation {
    /// Every overlay visited, in order (the base first).
    pub points: Vec<AugmentPoint>,
    /// The augmented overlay: the last of phase 1 (the base if nothing
    /// could be added within the tolerance).
    pub augmented: Overlay,
}

/// Why augmentation failed.
#[derive(Debug, thiserror::Error)]
pub enum AugmentError {
    /// A cycle time could not be computed.
    #[error(transparent)]
    Timing(#[from] TimingError),
    /// Bad options or base overlay.
    #[error("augment: {0}")]
    Invalid(String),
    /// A spectral gap could not be computed.
    #[error("augment: {0}")]
    Spectrum(#[from] SpectrumError),
}

/// A candidate step: (score, arc added, overlay, cycle time ms, spectral gap).
type Candidate = (f64, (usize, usize), Overlay, f64, f64);

/// Evaluates an overlay: cycle time, spectral gap, effective neighbours.
fn measure(o: &Overlay, model: &DelayModel, gamma: f64) -> Result<(f64, f64, f64), AugmentError> {
    let t = cycle_time(o, model)?.cycle_time_ms;
    let w = local_degree(o);
    let n = o.silo_count();
    Ok((
        t,
        spectral_gap(n, w.as_slice())?,
        effective_neighbours(n, w.as_slice(), gamma),
    ))
}

/// Candidate arcs (edges when `undirected`) missing from an overlay of `n`
/// silos and `arcs` arcs: what one step of [`augment`] times.
fn candidate_count(n: usize, arcs: usize, undirected: bool) -> u64 {
    let all = (n * n.saturating_sub(1)) as u64;
    let missing = all.saturating_sub(arcs as u64);
    if undirected {
        missing / 2
    } else {
        missing
    }
}

/// `base` plus the candidate `(a, b)` (and `(b, a)` when undirected).
fn with_candidate(base: &Overlay, a: usize, b: usize, undirected: bool) -> Overlay {
    let mut arcs = base.arcs().to_vec();
    arcs.push((a, b));
    if undirected {
        arcs.push((b, a));
    }
    let mut o = Overlay::from_arcs(&base.name, base.silo_count(), arcs);
    o.protocol = base.protocol;
    o
}

/// Augments `base` (a gossip overlay) on `model`; see the module docs.
///
/// # Errors
/// [`AugmentError::Invalid`] for a negative or non-finite tolerance, `gamma`
/// outside `[0, 1)`, or a server-client base (STAR: its rounds are not
/// gossip); [`AugmentError::Timing`] when a cycle time fails.
pub fn augment(
    base: &Overlay,
    model: &DelayModel,
    options: &AugmentOptions,
) -> Result<Augmentation, AugmentError> {
    if !(options.tolerance.is_finite() && options.tolerance >= 0.0) {
        return Err(AugmentError::Invalid(format!(
            "tolerance {}: expected a finite number >= 0",
            options.tolerance
        )));
    }
    if !(0.0..1.0).contains(&options.gamma) {
        return Err(AugmentError::Invalid(format!(
            "gamma {}: expected a number in [0, 1)",
            options.gamma
        )));
    }
    if !matches!(base.protocol, crate::graph::Protocol::Gossip) {
        return Err(AugmentError::Invalid(format!(
            "{} is server-client (STAR); augment a gossip overlay such as ring-opt or delta-mbst",
            base.name
        )));
    }
    let n = base.silo_count();
    let undirected = base.is_undirected();
    let (t0, g0, e0) = measure(base, model, options.gamma)?;
    let limit = t0 * (1.0 + options.tolerance) + 1e-9 * t0.abs().max(1.0);
    let mut points = vec![AugmentPoint {
        step: 0,
        phase: 0,
        added_from: None,
        added_to: None,
        arcs: base.arcs().len(),
        cycle_time_ms: t0,
        spectral_gap: g0,
        effective_neighbours: e0,
        front_gap: false,
        front_neighbours: false,
    }];
    let mut current = base.clone();
    let (mut t_cur, mut g_cur) = (t0, g0);
    let mut augmented = base.clone();
    let mut phase: u8 = 1;
    let mut phase2_steps = 0;
    let task = crate::progress::Task::start("augment", "steps", 0);
    loop {
        if phase == 2 && phase2_steps >= options.front_steps {
            break;
        }
        let present: std::collections::BTreeSet<(usize, usize)> =
            current.arcs().iter().copied().collect();
        let mut best: Option<Candidate> = None;
        let candidates = candidate_count(n, present.len(), undirected);
        let tried = crate::progress::Task::start("candidates", "timed", candidates);
        if tried.is_shown() {
            task.message(&format!("phase {phase}, {n} silos"));
            tried.hint(
                "each candidate costs a max-plus cycle time and an eigendecomposition; \
                 a smaller --tolerance or --front-steps ends sooner",
            );
        }
        for a in 0..n {
            for b in 0..n {
                if a == b || present.contains(&(a, b)) || (undirected && a > b) {
                    continue;
                }
                tried.inc(1);
                let o = with_candidate(&current, a, b, undirected);
                let t = cycle_time(&o, model)?.cycle_time_ms;
                if phase == 1 && t > limit {
                    continue;
                }
                let w = local_degree(&o);
                let g = spectral_gap(n, w.as_slice())?;
                let gain = g - g_cur;
                if gain <= 1e-12 {
                    continue;
                }
                let score = if phase == 1 {
                    g
                } else if t <= t_cur + 1e-9 * t_cur.abs().max(1.0) {
                    // A gain at no extra time beats any paid gain.
                    f64::MAX / 2.0 + gain
                } else {
                    gain / (t - t_cur)
                };
                if best.as_ref().is_none_or(|b| score > b.0) {
                    best = Some((score, (a, b), o, t, g));
                }
            }
        }
        let Some((_, added, o, t, g)) = best else {
            if phase == 1 {
                phase = 2;
                continue;
            }
            break;
        };
        if phase == 1 && g <= g_cur + 1e-12 {
            phase = 2;
            continue;
        }
        if phase == 2 && g <= g_cur + 1e-12 {
            break;
        }
        let w = local_degree(&o);
        points.push(AugmentPoint {
            step: points.len(),
            phase,
            added_from: Some(added.0),
            added_to: Some(added.1),
            arcs: o.arcs().len(),
            cycle_time_ms: t,
            spectral_gap: g,
            effective_neighbours: effective_neighbours(n, w.as_slice(), options.gamma),
            front_gap: false,
            front_neighbours: false,
        });
        if phase == 1 {
            augmented = o.clone();
        } else {
            phase2_steps += 1;
        }
        task.inc(1);
        current = o;
        t_cur = t;
        g_cur = g;
    }
    mark_front(&mut points, |p| p.spectral_gap, |p, on| p.front_gap = on);
    mark_front(
        &mut points,
        |p| p.effective_neighbours,
        |p, on| p.front_neighbours = on,
    );
    augmented.name = format!("{}+aug", base.name);
    Ok(Augmentation { points, augmented })
}

/// Marks the points no other point beats on both cycle time (lower or
/// equal) and `measure` (higher or equal, one of them strictly).
fn mark_front(
    points: &mut [AugmentPoint],
    measure: impl Fn(&AugmentPoint) -> f64,
    set: impl Fn(&mut AugmentPoint, bool),
) {
    let values: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.cycle_time_ms, measure(p)))
        .collect();
    for (i, p) in points.iter_mut().enumerate() {
        let (t, m) = values[i];
        let dominated = values
            .iter()
            .enumerate()
            .any(|(j, &(tj, mj))| j != i && tj <= t && mj >= m && (tj < t || mj > m));
        set(p, !dominated);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overlay::build::{build_overlay, BuildOptions};
    use crate::scenario::{load_underlay, NetworkSpec};
    use crate::underlay::LoadOptions;

    fn setup(kind: &str) -> (Overlay, DelayModel) {
        let u = load_underlay(Some("aws-gaia"), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        let model = NetworkSpec::default()
            .build(&u)
            .unwrap_or_else(|e| panic!("{e}"));
        let k = kind.parse().unwrap_or_else(|e| panic!("{e:?}"));
        let o = build_overlay(k, &u, &model, &BuildOptions::default())
            .unwrap_or_else(|e| panic!("{e}"));
        (o, model)
    }

    /// Phase 1 never slows the overlay (tolerance 0), only adds arcs that
    /// raise the gap; the front is non-dominated and holds the base's
    /// cycle time's best point.
    #[test]
    fn zero_tolerance_keeps_the_cycle_time() {
        for kind in ["ring-opt", "delta-mbst"] {
            let (base, model) = setup(kind);
            let a = augment(&base, &model, &AugmentOptions::default())
                .unwrap_or_else(|e| panic!("{e}"));
            let t0 = a.points[0].cycle_time_ms;
            let aug = cycle_time(&a.augmented, &model)
                .unwrap_or_else(|e| panic!("{e}"))
                .cycle_time_ms;
            assert!(aug <= t0 * (1.0 + 1e-9), "{kind}: {aug} > {t0}");
            assert!(a.augmented.arcs().len() >= base.arcs().len());
            let mut gap = a.points[0].spectral_gap;
            for p in a.points.iter().filter(|p| p.phase == 1) {
                assert!(p.cycle_time_ms <= t0 * (1.0 + 1e-9));
                assert!(p.spectral_gap > gap, "{kind}: step {}", p.step);
                gap = p.spectral_gap;
            }
            if kind == "delta-mbst" {
                assert!(a.augmented.is_undirected());
            }
            // Front: non-dominated, and the cheapest point is on it.
            let front: Vec<&AugmentPoint> = a.points.iter().filter(|p| p.front_gap).collect();
            assert!(!front.is_empty());
            for p in &front {
                for q in &a.points {
                    assert!(
                        !(q.cycle_time_ms < p.cycle_time_ms && q.spectral_gap > p.spectral_gap),
                        "{kind}: front point {} dominated by {}",
                        p.step,
                        q.step
                    );
                }
            }
            let cheapest = a
                .points
                .iter()
                .map(|p| p.cycle_time_ms)
                .fold(f64::INFINITY, f64::min);
            assert!(front.iter().any(|p| p.cycle_time_ms == cheapest));
        }
    }

    /// A larger tolerance can only allow more mixing in phase 1.
    #[test]
    fn tolerance_trades_cycle_time_for_mixing() {
        let (base, model) = setup("ring-opt");
        let strict =
            augment(&base, &model, &AugmentOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let loose = augment(
            &base,
            &model,
            &AugmentOptions {
                tolerance: 0.5,
                front_steps: 0,
                ..AugmentOptions::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let last_gap = |a: &Augmentation| {
            a.points
                .iter()
                .filter(|p| p.phase <= 1)
                .map(|p| p.spectral_gap)
                .fold(0.0, f64::max)
        };
        assert!(last_gap(&loose) >= last_gap(&strict));
        assert!(loose.points.iter().all(|p| p.phase <= 1));
        let t0 = loose.points[0].cycle_time_ms;
        assert!(loose
            .points
            .iter()
            .all(|p| p.cycle_time_ms <= 1.5 * t0 + 1e-9));
    }

    #[test]
    fn bad_options_and_star_are_refused() {
        let (base, model) = setup("ring-opt");
        let bad = AugmentOptions {
            tolerance: -1.0,
            ..AugmentOptions::default()
        };
        assert!(augment(&base, &model, &bad).is_err());
        let (star, model) = setup("star");
        assert!(augment(&star, &model, &AugmentOptions::default()).is_err());
    }
}
