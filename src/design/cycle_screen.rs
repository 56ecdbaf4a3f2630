//! Certificates that an overlay plus a few arcs keeps its cycle time under
//! a limit, or exceeds it, without a max-plus solve per candidate.
//!
//! The cycle time is the maximum cycle mean of the max-plus graph
//! (\[Marfoq20\] Sec. 2, [`crate::timing::cycle_time`]): it is `<= L` iff
//! no circuit has positive weight under the weights `w - L`. For the
//! current overlay `G` (cycle time `<= L`) this module computes
//!
//! * a **potential** `pi` with `pi_v >= pi_u + w_uv - L` on every arc
//!   (longest paths from a virtual source, Bellman–Ford): if every arc
//!   a candidate adds or slows (`w'_uv`, its delay at the new degrees,
//!   \[Marfoq20\] eq. 3) still satisfies `w'_uv - L + pi_u - pi_v <= 0`,
//!   every circuit of the candidate has weight `<= 0` (the reduced weights
//!   sum to the circuit's weight): the cycle time stays `<= L`;
//! * the **longest paths** `D(v, u)` under `w - L` between every two silos
//!   (Dijkstra on the reduced costs, Johnson's reweighting): delays only
//!   grow when degrees grow, so `w'_uv - L + D(v, u) > 0` for an added or
//!   slowed arc `u -> v` exhibits a closed walk of positive weight in the
//!   candidate: its cycle time exceeds `L`.
//!
//! Both tests keep a margin against rounding; a candidate neither test
//! decides is timed exactly (Howard) by the caller.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::net::delay::DelayModel;

/// Outcome of [`CycleScreen::verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Certified: the cycle time stays `<= L`.
    Within,
    /// Certified: the cycle time exceeds `L`.
    Beyond,
    /// Neither certificate applies: time it exactly.
    Unknown,
}

/// Potentials and all-pairs longest paths of one overlay at one limit.
#[derive(Debug, Clone)]
pub struct CycleScreen {
    n: usize,
    limit: f64,
    margin: f64,
    pi: Vec<f64>,
    /// Row-major `D(u, v)`, `-inf` when `v` is unreachable from `u`.
    longest: Vec<f64>,
    /// Out-arcs `(v, w_uv - L)` of every silo.
    out: Vec<Vec<(usize, f64)>>,
}

/// Total order on non-negative costs for the heap.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cost(f64);
impl Eq for Cost {}
impl PartialOrd for Cost {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Cost {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

impl CycleScreen {
    /// The screen of the overlay with arcs `arcs` (its delays `delay(u, v)`
    /// in ms at its current degrees) on `model`, at limit `limit` ms (at
    /// least its cycle time).
    pub fn new(
        model: &DelayModel,
        arcs: &[(usize, usize)],
        delay: impl Fn(usize, usize) -> f64,
        limit: f64,
    ) -> CycleScreen {
        let n = model.silo_count();
        let mut out: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
        for &(u, v) in arcs {
            out[u].push((v, delay(u, v) - limit));
        }
        // Potentials: longest paths from a virtual source (weight 0 to
        // every silo). No circuit is positive, so n rounds suffice; the
        // cap guards against rounding on zero-weight circuits.
        let mut pi = vec![0.0f64; n];
        for _ in 0..=n {
            let mut changed = false;
            for u in 0..n {
                for &(v, r) in &out[u] {
                    let c = pi[u] + r;
                    if c > pi[v] + 1e-12 * (1.0 + c.abs()) {
                        pi[v] = c;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // Reduced costs c = -(r + pi_u - pi_v) >= 0 (clamped against
        // rounding); D(s, v) = -dist_c(s, v) + pi_v - pi_s.
        let mut longest = vec![f64::NEG_INFINITY; n * n];
        let mut dist = vec![f64::INFINITY; n];
        let mut heap = BinaryHeap::new();
        for s in 0..n {
            dist.iter_mut().for_each(|d| *d = f64::INFINITY);
            dist[s] = 0.0;
            heap.push(Reverse((Cost(0.0), s)));
            while let Some(Reverse((Cost(d), u))) = heap.pop() {
                if d > dist[u] {
                    continue;
                }
                for &(v, r) in &out[u] {
                    let c = (-(r + pi[u] - pi[v])).max(0.0);
                    let nd = d + c;
                    if nd < dist[v] {
                        dist[v] = nd;
                        heap.push(Reverse((Cost(nd), v)));
                    }
                }
            }
            for v in 0..n {
                if dist[v].is_finite() {
                    longest[s * n + v] = -dist[v] + pi[v] - pi[s];
                }
            }
        }
        CycleScreen {
            n,
            limit,
            margin: 1e-7 * limit.abs().max(1.0),
            pi,
            longest,
            out,
        }
    }

    /// The limit `L`, ms.
    pub fn limit(&self) -> f64 {
        self.limit
    }

    /// Whether the overlay with `changed` arcs `(u, v, w'_uv)` (every arc
    /// added or whose delay grew, at the new degrees) keeps its cycle time
    /// `<= L`.
    pub fn verdict(&self, changed: &[(usize, usize, f64)]) -> Verdict {
        let n = self.n;
        let mut within = true;
        for &(u, v, w) in changed {
            let r = w - self.limit;
            let back = self.longest[v * n + u];
            if back.is_finite() && r + back > self.margin {
                return Verdict::Beyond;
            }
            // Two changed arcs closing a 2-circuit (an added edge).
            if let Some(&(_, _, w2)) = changed.iter().find(|&&(x, y, _)| x == v && y == u) {
                if r + (w2 - self.limit) > self.margin {
                    return Verdict::Beyond;
                }
            }
            if r + self.pi[u] - self.pi[v] > -self.margin {
                within = false;
            }
        }
        if within {
            return Verdict::Within;
        }
        self.repair(changed)
    }

    /// Repairs the potential after the change by label-correcting longest
    /// paths (Bellman–Ford from the violated arcs, only the silos whose
    /// potential must rise): when it settles, the new potential certifies
    /// that no circuit is positive (`Within`). Bounded work; `Unknown`
    /// when the bound is hit (a positive circuit makes it rise forever).
    fn repair(&self, changed: &[(usize, usize, f64)]) -> Verdict {
        use std::collections::{HashMap, VecDeque};
        let weight = |u: usize, v: usize, base: f64| {
            changed
                .iter()
                .find(|&&(x, y, _)| x == u && y == v)
                .map_or(base, |&(_, _, w)| w - self.limit)
        };
        let mut pi: HashMap<usize, f64> = HashMap::new();
        let get = |pi: &HashMap<usize, f64>, x: usize| pi.get(&x).copied().unwrap_or(self.pi[x]);
        let mut queue: VecDeque<usize> = VecDeque::new();
        let mut in_queue: std::collections::HashSet<usize> = std::collections::HashSet::new();
        for &(u, v, w) in changed {
            let r = w - self.limit;
            let c = get(&pi, u) + r;
            if c > get(&pi, v) {
                pi.insert(v, c);
                if in_queue.insert(v) {
                    queue.push_back(v);
                }
            }
        }
        let budget = 8 * (self.n + self.out.iter().map(Vec::len).sum::<usize>());
        let mut work = 0usize;
        while let Some(u) = queue.pop_front() {
            in_queue.remove(&u);
            let pu = get(&pi, u);
            let extra = changed
                .iter()
                .filter(|&&(x, y, _)| x == u && !self.out[u].iter().any(|&(v, _)| v == y))
                .map(|&(_, y, w)| (y, w - self.limit));
            let arcs: Vec<(usize, f64)> = self.out[u]
                .iter()
                .map(|&(v, r)| (v, weight(u, v, r)))
                .chain(extra)
                .collect();
            for (v, r) in arcs {
                work += 1;
                if work > budget {
                    return Verdict::Unknown;
                }
                let c = pu + r;
                if c > get(&pi, v) + 4.0 * f64::EPSILON * self.limit.abs().max(1.0) {
                    pi.insert(v, c);
                    if in_queue.insert(v) {
                        queue.push_back(v);
                    }
                }
            }
        }
        Verdict::Within
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::arc_scores::Current;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;
    use crate::overlay::build::{build_overlay, BuildOptions};
    use crate::timing::cycle_time;

    /// Every certificate agrees with Howard, for every candidate arc of
    /// ring-opt and delta-MBST on two built-in underlays, at the base's
    /// cycle time and 3 % above it.
    #[test]
    fn certificates_agree_with_howard() {
        for name in ["aws-gaia", "aws-north-america"] {
            let u = load_underlay(Some(name), &LoadOptions::default())
                .unwrap_or_else(|e| panic!("{e}"));
            let model = NetworkSpec::default()
                .build(&u)
                .unwrap_or_else(|e| panic!("{e}"));
            for kind in ["ring-opt", "delta-mbst"] {
                let k = kind.parse().unwrap_or_else(|e| panic!("{e:?}"));
                let o = build_overlay(k, &u, &model, &BuildOptions::default())
                    .unwrap_or_else(|e| panic!("{e}"));
                let t0 = cycle_time(&o, &model)
                    .unwrap_or_else(|e| panic!("{e}"))
                    .cycle_time_ms;
                let und = o.is_undirected();
                let cur = Current::new(o.clone(), und, &model).unwrap_or_else(|e| panic!("{e}"));
                let n = o.silo_count();
                for limit in [t0 * (1.0 + 1e-9), t0 * 1.03] {
                    let screen = CycleScreen::new(
                        &model,
                        o.arcs(),
                        |u, v| model.arc_delay(u, v, o.out_degree(u), o.in_degree(v)),
                        limit,
                    );
                    let mut decided = 0;
                    for a in 0..n {
                        for b in 0..n {
                            if a == b || o.arcs().contains(&(a, b)) || (und && a > b) {
                                continue;
                            }
                            let t = cycle_time(&cur.with(a, b), &model)
                                .unwrap_or_else(|e| panic!("{e}"))
                                .cycle_time_ms;
                            match screen.verdict(&cur.changed_arcs(a, b)) {
                                Verdict::Within => {
                                    decided += 1;
                                    assert!(t <= limit, "{name} {kind} {a}->{b}: {t} > {limit}");
                                }
                                Verdict::Beyond => {
                                    decided += 1;
                                    assert!(t > limit, "{name} {kind} {a}->{b}: {t} <= {limit}");
                                }
                                Verdict::Unknown => {}
                            }
                        }
                    }
                    assert!(decided > 0, "{name} {kind}: nothing certified");
                }
            }
        }
    }
}
