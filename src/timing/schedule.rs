//! Cycle time of an overlay schedule (a different overlay every round, e.g.
//! MATCHA \[Wang19\]), two ways.
//!
//! * [`round_estimate`], the paper's estimate (\[Marfoq20\] App. H.6): rounds are
//!   synchronous; round `k` lasts its largest arc delay (\[Marfoq20\] eq. 3, with round
//!   `k`'s degrees); the cycle time is the mean over `R` sampled rounds. The
//!   published numbers divide the total by `R - 1` (reported too).
//! * [`maxplus_growth`], the exact value for the max-plus recurrence
//!   `t_i(k) = max(t_i(k-1) + s Tc(i), max_{j -> i in G(k)} t_j(k-1) + d_k(j, i))`
//!   with a different graph each round: `lim t(K)/K` (the top Lyapunov
//!   exponent of the random max-plus product), estimated over several seeds
//!   with a Student-t 95% confidence interval.
//!
//! The max-plus value is never larger than the round estimate: a silo waits
//! only for its in-neighbours of the round, not for the slowest arc of the
//! whole network, so delays of disjoint parts of the topology overlap.

use serde::Serialize;

use super::TimingError;
use crate::graph::{Overlay, OverlaySchedule};
use crate::maxplus::{self, Arc, WeightedDigraph};
use crate::net::delay::DelayModel;
use crate::units::Ms;

/// Duration of one synchronous round on `overlay`: its largest arc delay
/// (\[Marfoq20\] eq. 3, with the overlay's degrees), or the largest compute time when it
/// has no arc. ms.
pub fn round_duration_ms(overlay: &Overlay, model: &DelayModel) -> Ms {
    let compute = (0..overlay.silo_count())
        .map(|i| model.compute_round_ms(i))
        .fold(0.0, f64::max);
    overlay
        .arcs()
        .iter()
        .map(|&(i, j)| model.arc_delay(i, j, overlay.out_degree(i), overlay.in_degree(j)))
        .fold(compute, f64::max)
}

/// The paper's cycle-time estimate over sampled rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RoundEstimate {
    /// Rounds sampled.
    pub rounds: u64,
    /// Mean round duration, ms.
    pub mean_ms: Ms,
    /// Total duration / (rounds - 1), the published convention, ms.
    pub published_ms: Ms,
    /// Standard deviation of a round's duration, ms.
    pub std_ms: Ms,
}

/// Mean round duration of rounds `0..rounds` of `schedule` (\[Marfoq20\] App. H.6).
///
/// # Errors
/// [`TimingError::Sampling`] for fewer than 2 rounds, [`TimingError::SizeMismatch`].
pub fn round_estimate(
    schedule: &dyn OverlaySchedule,
    model: &DelayModel,
    rounds: u64,
) -> Result<RoundEstimate, TimingError> {
    check(schedule, model)?;
    if rounds < 2 {
        return Err(TimingError::Sampling(format!(
            "need at least 2 rounds, got {rounds}"
        )));
    }
    let d: Vec<f64> = (0..rounds)
        .map(|k| round_duration_ms(&schedule.round(k), model))
        .collect();
    let total: f64 = d.iter().sum();
    let mean = total / rounds as f64;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (rounds - 1) as f64;
    Ok(RoundEstimate {
        rounds,
        mean_ms: mean,
        published_ms: total / (rounds - 1) as f64,
        std_ms: var.sqrt(),
    })
}

/// [`round_estimate`] and [`maxplus_rate`] over the same rounds `0..rounds`
/// in one pass: each arc delay computed once, the arcs visited through
/// [`OverlaySchedule::for_each_round_arc`] (MATCHA at 1,000 silos: half a
/// million arcs a round, no overlay built). Equal, bit for bit, to the two
/// separate calls: the same delays, whose maxima do not depend on the order
/// (finite delays, [`DelayModel::check_finite`]); cross-checked by the tests. Schedules with lagged
/// arcs take the two separate calls.
///
/// # Errors
/// As [`round_estimate`] and [`maxplus_rate`].
pub fn round_estimate_and_maxplus_rate(
    schedule: &dyn OverlaySchedule,
    model: &DelayModel,
    rounds: u64,
) -> Result<(RoundEstimate, Ms), TimingError> {
    check(schedule, model)?;
    if rounds < 2 || schedule.max_lag() > 0 {
        return Ok((
            round_estimate(schedule, model, rounds)?,
            maxplus_rate(schedule, model, rounds)?,
        ));
    }
    let n = schedule.silo_count();
    let compute: Vec<f64> = (0..n).map(|i| model.compute_round_ms(i)).collect();
    let max_compute = (0..n)
        .map(|i| model.compute_round_ms(i))
        .fold(0.0, f64::max);
    let mut t = vec![0.0; n];
    let mut next = vec![0.0; n];
    let mut d = Vec::with_capacity(usize::try_from(rounds).unwrap_or(0).min(1 << 20));
    for k in 0..rounds {
        for i in 0..n {
            next[i] = t[i] + compute[i];
        }
        let mut longest = max_compute;
        schedule.for_each_round_arc(k, &mut |j, i, out_j, in_i| {
            let delay = model.arc_delay(j, i, out_j, in_i);
            longest = longest.max(delay);
            let v = t[j] + delay;
            if v > next[i] {
                next[i] = v;
            }
        });
        d.push(longest);
        std::mem::swap(&mut t, &mut next);
    }
    let total: f64 = d.iter().sum();
    let mean = total / rounds as f64;
    let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (rounds - 1) as f64;
    let estimate = RoundEstimate {
        rounds,
        mean_ms: mean,
        published_ms: total / (rounds - 1) as f64,
        std_ms: var.sqrt(),
    };
    Ok((
        estimate,
        t.iter().copied().fold(0.0, f64::max) / rounds as f64,
    ))
}

fn check(schedule: &dyn OverlaySchedule, model: &DelayModel) -> Result<(), TimingError> {
    if schedule.silo_count() != model.silo_count() {
        return Err(TimingError::SizeMismatch {
            overlay: schedule.silo_count(),
            network: model.silo_count(),
        });
    }
    Ok(())
}

/// `max_i t_i(K) / K` for the max-plus recurrence over rounds `0..K` of
/// `schedule`, from `t(0) = 0` (lagged arcs, [`OverlaySchedule::arc_lag`],
/// read `t_j(k - L)` for `t_j(k)`, `t_j(0)` while `k < L`). ms per round.
///
/// # Errors
/// [`TimingError::Sampling`] for `rounds == 0`, [`TimingError::SizeMismatch`].
pub fn maxplus_rate(
    schedule: &dyn OverlaySchedule,
    model: &DelayModel,
    rounds: u64,
) -> Result<Ms, TimingError> {
    check(schedule, model)?;
    if rounds == 0 {
        return Err(TimingError::Sampling("need at least 1 round".into()));
    }
    let n = schedule.silo_count();
    let compute: Vec<f64> = (0..n).map(|i| model.compute_round_ms(i)).collect();
    if schedule.max_lag() > 0 {
        return Ok(lagged_recurrence(schedule, model, &compute, rounds)
            .iter()
            .copied()
            .fold(0.0, f64::max)
            / rounds as f64);
    }
    let mut t = vec![0.0; n];
    let mut next = vec![0.0; n];
    for k in 0..rounds {
        let o = schedule.round(k);
        for i in 0..n {
            next[i] = t[i] + compute[i];
        }
        for &(j, i) in o.arcs() {
            let v = t[j] + model.arc_delay(j, i, o.out_degree(j), o.in_degree(i));
            if v > next[i] {
                next[i] = v;
            }
        }
        std::mem::swap(&mut t, &mut next);
    }
    Ok(t.iter().copied().fold(0.0, f64::max) / rounds as f64)
}

/// `t(rounds)` of the recurrence with lagged arcs
/// ([`OverlaySchedule::arc_lag`]): `t_i(k+1) = max(t_i(k) + s Tc(i),
/// max_{j -> i in G(k)} t_j(k - min(L, k)) + d_k(j, i))`, `t(0) = 0`, ms.
fn lagged_recurrence(
    schedule: &dyn OverlaySchedule,
    model: &DelayModel,
    compute: &[f64],
    rounds: u64,
) -> Vec<f64> {
    let n = compute.len();
    let depth = schedule.max_lag() as usize + 1;
    // history[k % depth] = t(k) for the last `depth` rounds.
    let mut history = vec![vec![0.0; n]; depth];
    for k in 0..rounds {
        let o = schedule.round(k);
        let now = (k as usize) % depth;
        let mut next: Vec<f64> = (0..n).map(|i| history[now][i] + compute[i]).collect();
        for &(j, i) in o.arcs() {
            let lag = schedule.arc_lag(k, j, i).min(k) as usize;
            let sent = history[(k as usize - lag) % depth][j];
            let v = sent + model.arc_delay(j, i, o.out_degree(j), o.in_degree(i));
            if v > next[i] {
                next[i] = v;
            }
        }
        history[(k as usize + 1) % depth] = next;
    }
    history[(rounds as usize) % depth].clone()
}

/// The exact max-plus growth rate of a schedule that repeats rounds
/// `0..period` forever: `lim t(K)/K` for the recurrence of [`maxplus_rate`]
/// with round `k` using overlay `k mod period`. ms per round.
///
/// The rounds of one period compose into one max-plus matrix
/// `B = M(period-1) ... M(0)` (`B_ij` the longest time-respecting path from
/// `j` to `i` over the period); the rate is the largest maximum cycle mean
/// of `B`'s strongly connected components (\[BCOQ92\] Thm. 3.23), divided
/// by `period`. `O(period (n + m) n)` time, `O(n^2)` memory.
///
/// With lagged arcs ([`OverlaySchedule::arc_lag`], largest lag `L`) the
/// same on the state `(t(k), ..., t(k-L))` of `n (L+1)` entries
/// (`O(period (n + m) n (L+1))` time, `O((n (L+1))^2)` memory): the exact
/// rate of the recurrence that [`maxplus_rate`] iterates.
///
/// # Errors
/// [`TimingError::Sampling`] for `period == 0`, [`TimingError::SizeMismatch`].
pub fn periodic_rate(
    schedule: &dyn OverlaySchedule,
    model: &DelayModel,
    period: u64,
) -> Result<Ms, TimingError> {
    check(schedule, model)?;
    if period == 0 {
        return Err(TimingError::Sampling(
            "need a period of at least 1 round".into(),
        ));
    }
    let n = schedule.silo_count();
    let compute: Vec<f64> = (0..n).map(|i| model.compute_round_ms(i)).collect();
    if schedule.max_lag() > 0 {
        let (size, b) = lagged_period_product(schedule, model, &compute, period);
        return Ok(max_cycle_mean_of(size, &b)? / period as f64);
    }
    // b[i * n + j]: longest path from j (time 0) to i (time k), -inf if none.
    let mut b = vec![f64::NEG_INFINITY; n * n];
    for i in 0..n {
        b[i * n + i] = 0.0;
    }
    let mut next = vec![f64::NEG_INFINITY; n * n];
    for k in 0..period {
        let o = schedule.round(k);
        for i in 0..n {
            for j in 0..n {
                next[i * n + j] = b[i * n + j] + compute[i];
            }
        }
        for &(l, i) in o.arcs() {
            let d = model.arc_delay(l, i, o.out_degree(l), o.in_degree(i));
            for j in 0..n {
                let v = b[l * n + j] + d;
                if v > next[i * n + j] {
                    next[i * n + j] = v;
                }
            }
        }
        std::mem::swap(&mut b, &mut next);
    }
    Ok(max_cycle_mean_of(n, &b)? / period as f64)
}

/// The product over rounds `0..period` of the max-plus matrices of a
/// schedule with lagged arcs, on the state `x(k) = (t(k), t(k-1), ...,
/// t(k-L))`, `L` the largest lag: `(n (L+1), b)` with `b[r * size + c]` the
/// longest time-respecting path from state entry `c` to entry `r` over the
/// period (`-inf` if none). Round `k` maps `x(k)` to `x(k+1)`: `t_i(k+1) =
/// max(t_i(k) + s Tc(i), max_{j -> i in G(k)} t_j(k - L_ji) + d_k(j, i))`,
/// and the older entries shift by one. (Round `k < L`'s arcs are taken with
/// their full lag: the transient before the first period does not change
/// the growth rate.)
fn lagged_period_product(
    schedule: &dyn OverlaySchedule,
    model: &DelayModel,
    compute: &[f64],
    period: u64,
) -> (usize, Vec<f64>) {
    let n = compute.len();
    let depth = schedule.max_lag() as usize + 1;
    let size = n * depth;
    let mut b = vec![f64::NEG_INFINITY; size * size];
    for r in 0..size {
        b[r * size + r] = 0.0;
    }
    let mut next = vec![f64::NEG_INFINITY; size * size];
    for k in 0..period {
        let o = schedule.round(k);
        // Entries `t(k - h)`, h = 1..=L, of x(k+1) are entries `t(k - h + 1)` of x(k).
        next[n * size..].copy_from_slice(&b[..(depth - 1) * n * size]);
        for i in 0..n {
            for c in 0..size {
                next[i * size + c] = b[i * size + c] + compute[i];
            }
        }
        for &(j, i) in o.arcs() {
            let lag = schedule.arc_lag(k, j, i) as usize;
            let d = model.arc_delay(j, i, o.out_degree(j), o.in_degree(i));
            let from = (lag * n + j) * size;
            for c in 0..size {
                let v = b[from + c] + d;
                if v > next[i * size + c] {
                    next[i * size + c] = v;
                }
            }
        }
        std::mem::swap(&mut b, &mut next);
    }
    (size, b)
}

/// The largest maximum cycle mean of the strongly connected components of
/// the max-plus matrix `b` (`size x size`, `b[i * size + j]` the weight of
/// arc `j -> i`, `-inf` for none), ms (\[BCOQ92\] Thm. 3.23: the growth
/// rate of `b^k x` for a finite `x`).
fn max_cycle_mean_of(n: usize, b: &[f64]) -> Result<Ms, TimingError> {
    let arcs: Vec<Arc> = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .filter(|&(i, j)| b[i * n + j].is_finite())
        .map(|(i, j)| Arc {
            from: j,
            to: i,
            weight: b[i * n + j],
        })
        .collect();
    let name = || "periodic schedule".to_string();
    let g = WeightedDigraph::new(n, arcs).map_err(|source| TimingError::MaxPlus {
        overlay: name(),
        source,
    })?;
    let mut best = f64::NEG_INFINITY;
    for comp in g.strongly_connected_components() {
        let mut index = vec![usize::MAX; n];
        for (k, &v) in comp.iter().enumerate() {
            index[v] = k;
        }
        let sub: Vec<Arc> = g
            .arcs()
            .iter()
            .filter(|a| index[a.from] != usize::MAX && index[a.to] != usize::MAX)
            .map(|a| Arc {
                from: index[a.from],
                to: index[a.to],
                weight: a.weight,
            })
            .collect();
        if sub.is_empty() {
            // A single entry on no circuit (a history entry of a lagged
            // schedule): it bounds no growth rate.
            continue;
        }
        let sg = WeightedDigraph::new(comp.len(), sub).map_err(|source| TimingError::MaxPlus {
            overlay: name(),
            source,
        })?;
        let ct = maxplus::howard(&sg).map_err(|source| TimingError::MaxPlus {
            overlay: name(),
            source,
        })?;
        best = best.max(ct.value);
    }
    Ok(best)
}

/// The max-plus growth rate over several seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MaxPlusEstimate {
    /// Rounds per seed.
    pub rounds: u64,
    /// `t(K)/K` for every seed, ms.
    pub per_seed_ms: Vec<Ms>,
    /// Mean over seeds, ms.
    pub mean_ms: Ms,
    /// Half-width of the Student-t 95% confidence interval, ms (0 for one seed).
    pub ci95_ms: Ms,
}

/// Student-t 0.975 quantile with `df` degrees of freedom.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        31..=60 => 2.00,
        _ => 1.96,
    }
}

/// [`maxplus_rate`] of `make(seed)` for every seed, with a 95% CI.
///
/// # Errors
/// [`TimingError::Sampling`] for no seed or `rounds == 0`; [`TimingError::SizeMismatch`].
pub fn maxplus_growth<S: OverlaySchedule>(
    make: impl Fn(u64) -> S,
    model: &DelayModel,
    rounds: u64,
    seeds: &[u64],
) -> Result<MaxPlusEstimate, TimingError> {
    if seeds.is_empty() {
        return Err(TimingError::Sampling("need at least one seed".into()));
    }
    let per_seed_ms = seeds
        .iter()
        .map(|&s| maxplus_rate(&make(s), model, rounds))
        .collect::<Result<Vec<_>, _>>()?;
    let k = per_seed_ms.len();
    let mean = per_seed_ms.iter().sum::<f64>() / k as f64;
    let ci95_ms = if k > 1 {
        let var = per_seed_ms.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
        t975(k - 1) * (var / k as f64).sqrt()
    } else {
        0.0
    };
    Ok(MaxPlusEstimate {
        rounds,
        per_seed_ms,
        mean_ms: mean,
        ci95_ms,
    })
}
