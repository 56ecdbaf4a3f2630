//! Local search for the directed RING overlay (asymmetric TSP on the arc
//! delays `d_o`, \[Marfoq20\] Prop. 3.3 / 3.6): the cycle time of a directed ring is
//! `directed_ring_cost / N`, so minimising the ring cost maximises throughput.

use super::ring_candidates::candidate_search;
use super::DenseMatrix;

/// Options of [`improve_directed_ring`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingSearch {
    /// Maximum number of improving moves applied (a "round" = one move).
    pub max_rounds: usize,
    /// Or-opt: move a segment of 1..=3 nodes elsewhere, kept or reversed.
    pub use_or_opt: bool,
    /// 2-opt: reverse a segment (its inner arcs flip direction).
    pub use_two_opt: bool,
    /// Pure asymmetric 3-opt: exchange two adjacent segments, no reversal.
    pub use_three_opt: bool,
    /// Rings of at most this many nodes are searched by full scans of every
    /// neighbourhood (the historical search, `O(N^3)` per pass); larger ones
    /// by candidate lists ([`RingSearch::candidates`]). The default, 400,
    /// covers every paper underlay (Sprint: 315 silos).
    pub full_scan_max: usize,
    /// Size `k` of the candidate lists above [`RingSearch::full_scan_max`]:
    /// a move is tried only when a new arc joins a node to one of its `k`
    /// nearest successors or predecessors (by arc delay).
    pub candidates: usize,
}

impl Default for RingSearch {
    fn default() -> Self {
        Self {
            max_rounds: 1_000_000,
            use_or_opt: true,
            use_two_opt: true,
            use_three_opt: true,
            full_scan_max: 400,
            candidates: 10,
        }
    }
}

/// Cost (ms) of the directed ring `tour[0] -> tour[1] -> ... -> tour[0]`:
/// `sum_k d(tour[k], tour[k+1])` with wrap-around; `0` for fewer than 2 nodes.
pub fn directed_ring_cost(d: &DenseMatrix, tour: &[usize]) -> f64 {
    if tour.len() < 2 {
        return 0.0;
    }
    let closing = d.get(tour[tour.len() - 1], tour[0]);
    tour.windows(2).map(|p| d.get(p[0], p[1])).sum::<f64>() + closing
}

/// Local search for the asymmetric TSP: starting from the better orientation
/// of `tour`, applies improving Or-opt, 2-opt and segment-exchange 3-opt moves
/// (as enabled in `opts`) until none improves the ring cost by more than
/// `1e-9 * (|cost| + max |d|)`, or `opts.max_rounds` moves were applied.
///
/// Strategy (deterministic): the neighbourhoods are tried in the order Or-opt,
/// 2-opt, 3-opt; the first improving move found is applied (for a given outer
/// index the best inner move is taken) and the search restarts from the cheap
/// neighbourhoods. Every move is evaluated in `O(1)`: 2-opt uses prefix sums of
/// forward and backward arc costs (reversing a segment flips its inner arcs),
/// 3-opt scans a tour-ordered copy of `d`. A full pass costs `O(N^2)` for
/// Or-opt and 2-opt and `O(N^3)` for 3-opt.
///
/// Above `opts.full_scan_max` nodes the same moves are searched through
/// candidate lists with don't-look bits instead (`O(N k^2)` per pass, see
/// `ring_candidates.rs`); the result is then a local optimum of the
/// candidate neighbourhood only.
///
/// `tour` is a sequence of distinct nodes of `d` (usually a permutation of
/// `0..n`, e.g. from [`super::christofides_tour`]). The result is a rotation of
/// the improved cycle, and its cost is never above the input's.
///
/// # Panics
/// If `tour` repeats a node or holds an index `>= d.n()`.
pub fn improve_directed_ring(d: &DenseMatrix, tour: Vec<usize>, opts: &RingSearch) -> Vec<usize> {
    check_tour(d.n(), &tour);
    let start = better_orientation(d, tour);
    if start.len() < 3 {
        return start;
    }
    let start_cost = directed_ring_cost(d, &start);
    if start.len() > opts.full_scan_max {
        let out = candidate_search(d, start.clone(), opts);
        return if directed_ring_cost(d, &out) <= start_cost {
            out
        } else {
            start
        };
    }
    let mut search = Search::new(d, start.clone());
    for _ in 0..opts.max_rounds {
        let improved = (opts.use_or_opt && search.or_opt())
            || (opts.use_two_opt && search.two_opt())
            || (opts.use_three_opt && search.three_opt());
        if !improved {
            break;
        }
    }
    if search.cost <= start_cost {
        search.tour
    } else {
        start
    }
}

fn check_tour(n: usize, tour: &[usize]) {
    let mut seen = vec![false; n];
    for &v in tour {
        assert!(v < n, "tour node {v} out of range for n = {n}");
        assert!(
            !std::mem::replace(&mut seen[v], true),
            "tour repeats node {v}"
        );
    }
}

/// The input cycle or its reverse, whichever is cheaper (input on ties).
fn better_orientation(d: &DenseMatrix, tour: Vec<usize>) -> Vec<usize> {
    let mut rev = tour.clone();
    rev.reverse();
    if directed_ring_cost(d, &rev) < directed_ring_cost(d, &tour) {
        rev
    } else {
        tour
    }
}

/// An improving move, with its cost change (negative).
#[derive(Debug, Clone, Copy)]
enum Move {
    /// Move the `len` nodes starting at position `start` to just after
    /// position `after` (which lies outside the segment), reversed or not.
    Or {
        start: usize,
        len: usize,
        after: usize,
        reversed: bool,
    },
    /// Reverse positions `i+1..=j` (`inner`) or the complementary arc
    /// `j+1..=i` (cyclically).
    TwoOpt { i: usize, j: usize, inner: bool },
    /// Exchange segments `i+1..=j` and `j+1..=k` (`i < j < k`).
    Exchange { i: usize, j: usize, k: usize },
}

/// Mutable state of the local search.
struct Search<'a> {
    d: &'a DenseMatrix,
    tour: Vec<usize>,
    cost: f64,
    eps_scale: f64,
    /// `fwd[k] = sum_{q<k} d(t_q, t_{q+1})`, `k` in `0..m`.
    fwd: Vec<f64>,
    /// `bwd[k] = sum_{q<k} d(t_{q+1}, t_q)`, `k` in `0..m`.
    bwd: Vec<f64>,
}

impl<'a> Search<'a> {
    fn new(d: &'a DenseMatrix, tour: Vec<usize>) -> Self {
        let mut s = Self {
            d,
            tour,
            cost: 0.0,
            eps_scale: d.max_abs(),
            fwd: Vec::new(),
            bwd: Vec::new(),
        };
        s.refresh();
        s
    }

    #[inline]
    fn m(&self) -> usize {
        self.tour.len()
    }

    /// Delay between the nodes at positions `p` and `q`.
    #[inline]
    fn dp(&self, p: usize, q: usize) -> f64 {
        self.d.get(self.tour[p], self.tour[q])
    }

    /// Forward arc leaving position `p` (with wrap-around).
    #[inline]
    fn arc(&self, p: usize) -> f64 {
        self.dp(p, (p + 1) % self.m())
    }

    /// Backward arc `t_{p+1} -> t_p` (with wrap-around).
    #[inline]
    fn back_arc(&self, p: usize) -> f64 {
        self.dp((p + 1) % self.m(), p)
    }

    fn refresh(&mut self) {
        let m = self.m();
        self.fwd.clear();
        self.bwd.clear();
        let (mut f, mut b) = (0.0, 0.0);
        for k in 0..m {
            self.fwd.push(f);
            self.bwd.push(b);
            if k + 1 < m {
                f += self.dp(k, k + 1);
                b += self.dp(k + 1, k);
            }
        }
        self.cost = directed_ring_cost(self.d, &self.tour);
    }

    /// Moves must lower the cost by more than this.
    fn eps(&self) -> f64 {
        1e-9 * (self.cost.abs() + self.eps_scale)
    }

    /// Applies `mv` (expected change `gain`, negative), then rotates the tour
    /// so that position `anchor` becomes position 0 (the next scan starts
    /// where this improvement was found).
    fn apply(&mut self, mv: Move, gain: f64, anchor: usize) {
        let before = self.cost;
        let mut t = match mv {
            Move::Or {
                start,
                len,
                after,
                reversed,
            } => self.or_moved(start, len, after, reversed),
            Move::TwoOpt { i, j, inner } => self.two_opt_moved(i, j, inner),
            Move::Exchange { i, j, k } => self.exchanged(i, j, k),
        };
        let m = t.len();
        t.rotate_left(anchor % m);
        self.tour = t;
        self.refresh();
        debug_assert!(
            (self.cost - (before + gain)).abs() <= 1e-6 * (before.abs() + self.eps_scale + 1.0),
            "move {mv:?}: predicted {} got {}",
            before + gain,
            self.cost
        );
    }

    // ---------------------------------------------------------------- Or-opt

    /// Inner forward and backward cost of the segment `start..start+len`.
    fn segment_costs(&self, start: usize, len: usize) -> (f64, f64) {
        let m = self.m();
        (0..len - 1).fold((0.0, 0.0), |(f, b), q| {
            let p = (start + q) % m;
            (f + self.arc(p), b + self.back_arc(p))
        })
    }

    /// Best Or-opt move of the segment of `len` nodes at `start`.
    fn best_or_move(&self, start: usize, len: usize) -> Option<(f64, Move)> {
        let m = self.m();
        let prev = (start + m - 1) % m;
        let next = (start + len) % m;
        let first = self.tour[start];
        let last = self.tour[(start + len - 1) % m];
        let (seg_f, seg_b) = self.segment_costs(start, len);
        let removal =
            self.dp(prev, start) + self.d.get(last, self.tour[next]) - self.dp(prev, next);
        let mut best: Option<(f64, Move)> = None;
        for off in 0..(m - len - 1) {
            let p = (next + off) % m;
            let q = (p + 1) % m;
            let (tp, tq) = (self.tour[p], self.tour[q]);
            let base = self.d.get(tp, tq) + removal;
            let keep = self.d.get(tp, first) + self.d.get(last, tq) - base;
            let flip = self.d.get(tp, last) + self.d.get(first, tq) + seg_b - seg_f - base;
            for (gain, reversed) in [(keep, false), (flip, true)] {
                if best.is_none_or(|(g, _)| gain < g) {
                    best = Some((
                        gain,
                        Move::Or {
                            start,
                            len,
                            after: p,
                            reversed,
                        },
                    ));
                }
            }
        }
        best
    }

    fn or_moved(&self, start: usize, len: usize, after: usize, reversed: bool) -> Vec<usize> {
        let m = self.m();
        let mut seg: Vec<usize> = (0..len).map(|q| self.tour[(start + q) % m]).collect();
        if reversed {
            seg.reverse();
        }
        let next = (start + len) % m;
        let rest: Vec<usize> = (0..m - len).map(|q| self.tour[(next + q) % m]).collect();
        let cut = (after + m - next) % m + 1;
        let mut t = Vec::with_capacity(m);
        t.extend_from_slice(&rest[..cut]);
        t.extend_from_slice(&seg);
        t.extend_from_slice(&rest[cut..]);
        t
    }

    /// First improving Or-opt move (best over lengths and insertion points
    /// for the first segment start that has one); applies it.
    fn or_opt(&mut self) -> bool {
        let m = self.m();
        let eps = self.eps();
        for start in 0..m {
            let best = (1..=3.min(m.saturating_sub(2)))
                .filter_map(|len| self.best_or_move(start, len))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((gain, mv)) = best.filter(|(g, _)| *g < -eps) {
                self.apply(mv, gain, start);
                return true;
            }
        }
        false
    }

    // ----------------------------------------------------------------- 2-opt

    /// Cost changes of reversing `i+1..=j` and of reversing its complement.
    fn two_opt_gains(&self, i: usize, j: usize) -> (f64, f64) {
        let m = self.m();
        let j1 = (j + 1) % m;
        let removed = self.arc(i) + self.arc(j);
        let inner_f = self.fwd[j] - self.fwd[i + 1];
        let inner_b = self.bwd[j] - self.bwd[i + 1];
        let total_f = self.cost;
        let total_b = self.bwd[m - 1] + self.dp(0, m - 1);
        let outer_f = total_f - inner_f - removed;
        let outer_b = total_b - inner_b - self.back_arc(i) - self.back_arc(j);
        let inner = self.dp(i, j) + self.dp(i + 1, j1) - removed + inner_b - inner_f;
        let outer = self.dp(j, i) + self.dp(j1, i + 1) - removed + outer_b - outer_f;
        (inner, outer)
    }

    fn two_opt_moved(&self, i: usize, j: usize, inner: bool) -> Vec<usize> {
        let mut t = self.tour.clone();
        if inner {
            t[i + 1..=j].reverse();
        } else {
            // S followed by the reversed complement.
            t.clear();
            t.extend_from_slice(&self.tour[i + 1..=j]);
            t.extend(self.tour[..=i].iter().rev());
            t.extend(self.tour[j + 1..].iter().rev());
        }
        t
    }

    /// First improving 2-opt move (best `j` for the first `i` that has one).
    fn two_opt(&mut self) -> bool {
        let m = self.m();
        let eps = self.eps();
        for i in 0..m.saturating_sub(2) {
            let mut best: Option<(f64, Move)> = None;
            for j in (i + 2)..m {
                let (g_in, g_out) = self.two_opt_gains(i, j);
                for (gain, inner) in [(g_in, true), (g_out, false)] {
                    if gain < -eps && best.is_none_or(|(g, _)| gain < g) {
                        best = Some((gain, Move::TwoOpt { i, j, inner }));
                    }
                }
            }
            if let Some((gain, mv)) = best {
                self.apply(mv, gain, i);
                return true;
            }
        }
        false
    }

    // ----------------------------------------------------------------- 3-opt

    fn exchanged(&self, i: usize, j: usize, k: usize) -> Vec<usize> {
        let t = &self.tour;
        let mut out = Vec::with_capacity(t.len());
        out.extend_from_slice(&t[..=i]);
        out.extend_from_slice(&t[j + 1..=k]);
        out.extend_from_slice(&t[i + 1..=j]);
        out.extend_from_slice(&t[k + 1..]);
        out
    }

    /// First improving segment exchange (best `k` for the first `(i, j)`).
    ///
    /// Cutting arcs `i`, `j`, `k` (`i < j < k`) and reconnecting
    /// `t_i -> t_{j+1}`, `t_k -> t_{i+1}`, `t_j -> t_{k+1}` is the only 3-opt
    /// reconnection that keeps every arc's direction.
    fn three_opt(&mut self) -> bool {
        let m = self.m();
        if m < 3 {
            return false;
        }
        let eps = self.eps();
        let tables = TourTables::new(self);
        for i in 0..m - 2 {
            for j in (i + 1)..m - 1 {
                let c = tables.at(i, j + 1) - tables.arc[i] - tables.arc[j];
                let (val, k) = tables.best_k(i, j);
                if c + val < -eps {
                    self.apply(Move::Exchange { i, j, k }, c + val, i);
                    return true;
                }
            }
        }
        false
    }
}

/// Tour-ordered copies of `d` for the `O(N^3)` segment-exchange scan, so that
/// its inner loop reads contiguous memory.
struct TourTables {
    m: usize,
    /// `fwd[p * (m + 1) + q] = d(t_p, t_q)`, with column `m` = column 0.
    fwd: Vec<f64>,
    /// `into[q * m + p] = d(t_p, t_q)`.
    into: Vec<f64>,
    /// `arc[p] = d(t_p, t_{p+1})` (wrapping).
    arc: Vec<f64>,
}

impl TourTables {
    fn new(s: &Search<'_>) -> Self {
        let m = s.m();
        let mut fwd = Vec::with_capacity(m * (m + 1));
        let mut into = vec![0.0; m * m];
        for p in 0..m {
            let row = s.d.row(s.tour[p]);
            fwd.extend(s.tour.iter().map(|&v| row[v]));
            fwd.push(row[s.tour[0]]);
            for q in 0..m {
                into[q * m + p] = row[s.tour[q]];
            }
        }
        let arc = (0..m).map(|p| fwd[p * (m + 1) + p + 1]).collect();
        Self { m, fwd, into, arc }
    }

    #[inline]
    fn at(&self, p: usize, q: usize) -> f64 {
        self.fwd[p * (self.m + 1) + q]
    }

    /// `min_k d(t_k, t_{i+1}) + d(t_j, t_{k+1}) - d(t_k, t_{k+1})` over
    /// `k` in `j+1..m`, with its argmin (lowest on ties).
    fn best_k(&self, i: usize, j: usize) -> (f64, usize) {
        let m = self.m;
        let into = &self.into[(i + 1) * m + j + 1..(i + 2) * m];
        let out = &self.fwd[j * (m + 1) + j + 2..(j + 1) * (m + 1)];
        let arc = &self.arc[j + 1..];
        let mut best = (f64::INFINITY, usize::MAX);
        for (o, ((a, b), c)) in into.iter().zip(out).zip(arc).enumerate() {
            let v = a + b - c;
            if v < best.0 {
                best = (v, j + 1 + o);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::{christofides_tour, DenseMatrix};
    use super::*;

    fn all_on() -> RingSearch {
        RingSearch::default()
    }

    #[test]
    fn ring_cost_basics() {
        let d = DenseMatrix::from_fn(3, |i, j| (10 * i + j) as f64).unwrap();
        assert_eq!(directed_ring_cost(&d, &[]), 0.0);
        assert_eq!(directed_ring_cost(&d, &[2]), 0.0);
        assert_eq!(directed_ring_cost(&d, &[0, 1]), 1.0 + 10.0);
        assert_eq!(directed_ring_cost(&d, &[0, 1, 2]), 1.0 + 12.0 + 20.0);
        assert_eq!(directed_ring_cost(&d, &[0, 2, 1]), 2.0 + 21.0 + 10.0);
    }

    #[test]
    fn two_opt_gains_are_exact() {
        let mut r = rng(21);
        for m in 3..14 {
            let d = random_asymmetric(m, &mut r);
            let s = Search::new(&d, random_permutation(m, &mut r));
            for i in 0..m - 2 {
                for j in (i + 2)..m {
                    let (g_in, g_out) = s.two_opt_gains(i, j);
                    for (g, inner) in [(g_in, true), (g_out, false)] {
                        let t = s.two_opt_moved(i, j, inner);
                        assert!(is_permutation(&t, m));
                        let actual = directed_ring_cost(&d, &t) - s.cost;
                        assert!(
                            (g - actual).abs() < 1e-9 * s.cost,
                            "m={m} i={i} j={j} inner={inner}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn or_opt_best_move_is_exact_and_best() {
        let mut r = rng(22);
        for m in 3..13 {
            let d = random_asymmetric(m, &mut r);
            let s = Search::new(&d, random_permutation(m, &mut r));
            for start in 0..m {
                for len in 1..=3.min(m - 2) {
                    let (gain, mv) = s.best_or_move(start, len).unwrap();
                    let Move::Or {
                        after, reversed, ..
                    } = mv
                    else {
                        unreachable!()
                    };
                    let t = s.or_moved(start, len, after, reversed);
                    assert!(is_permutation(&t, m));
                    assert!((directed_ring_cost(&d, &t) - s.cost - gain).abs() < 1e-9 * s.cost);
                    // Every insertion point, both orientations, built explicitly.
                    let next = (start + len) % m;
                    for off in 0..(m - len - 1) {
                        for rev in [false, true] {
                            let t = s.or_moved(start, len, (next + off) % m, rev);
                            assert!(is_permutation(&t, m));
                            assert!(directed_ring_cost(&d, &t) - s.cost >= gain - 1e-9 * s.cost);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn segment_exchange_gains_are_exact() {
        let mut r = rng(23);
        for m in 3..13 {
            let d = random_asymmetric(m, &mut r);
            let s = Search::new(&d, random_permutation(m, &mut r));
            let tb = TourTables::new(&s);
            for i in 0..m - 2 {
                for j in (i + 1)..m - 1 {
                    let c = tb.at(i, j + 1) - tb.arc[i] - tb.arc[j];
                    let mut best = f64::INFINITY;
                    for k in (j + 1)..m {
                        let t = s.exchanged(i, j, k);
                        assert!(is_permutation(&t, m));
                        let actual = directed_ring_cost(&d, &t) - s.cost;
                        let predicted = c + tb.into[(i + 1) * m + k] + tb.at(j, k + 1) - tb.arc[k];
                        assert!(
                            (predicted - actual).abs() < 1e-9 * s.cost,
                            "m={m} ({i},{j},{k})"
                        );
                        best = best.min(actual);
                    }
                    let (v, k) = tb.best_k(i, j);
                    assert!((c + v - best).abs() < 1e-9 * s.cost);
                    assert!(k > j && k < m);
                }
            }
        }
    }

    /// All tours one enabled move away from `tour`, built explicitly.
    fn neighbours(d: &DenseMatrix, tour: &[usize]) -> Vec<Vec<usize>> {
        let s = Search::new(d, tour.to_vec());
        let m = tour.len();
        let mut out = Vec::new();
        for start in 0..m {
            for len in 1..=3.min(m.saturating_sub(2)) {
                let next = (start + len) % m;
                for off in 0..(m - len - 1) {
                    for rev in [false, true] {
                        out.push(s.or_moved(start, len, (next + off) % m, rev));
                    }
                }
            }
        }
        for i in 0..m.saturating_sub(2) {
            for j in (i + 2)..m {
                out.push(s.two_opt_moved(i, j, true));
                out.push(s.two_opt_moved(i, j, false));
                for k in (j + 1)..m {
                    out.push(s.exchanged(i, j, k));
                }
            }
            for k in (i + 2)..m {
                out.push(s.exchanged(i, i + 1, k));
            }
        }
        out
    }

    #[test]
    fn result_is_a_local_optimum_and_never_worse() {
        let mut r = rng(24);
        for it in 0..150 {
            // Up to 26 nodes, so that segment exchanges of three segments of
            // length >= 4 (not covered by Or-opt) occur.
            let m = 1 + it % 26;
            let d = random_asymmetric(m, &mut r);
            let input = random_permutation(m, &mut r);
            let before = directed_ring_cost(&d, &input);
            let out = improve_directed_ring(&d, input, &all_on());
            assert!(is_permutation(&out, m));
            let after = directed_ring_cost(&d, &out);
            assert!(after <= before, "it={it}: {after} > {before}");
            let tol = 1e-9 * (after + d.max_abs()) + 1e-9;
            for nb in neighbours(&d, &out) {
                assert!(
                    directed_ring_cost(&d, &nb) >= after - tol,
                    "it={it}: improving neighbour missed"
                );
            }
        }
    }

    #[test]
    fn never_worse_with_any_option_set() {
        let mut r = rng(25);
        for it in 0..200 {
            let m = 1 + it % 30;
            let d = random_asymmetric(m, &mut r);
            let opts = RingSearch {
                max_rounds: [0, 1, 5, 1_000_000][it % 4],
                use_or_opt: it % 2 == 0,
                use_two_opt: (it / 2) % 2 == 0,
                use_three_opt: (it / 4) % 2 == 0,
                // Half of the instances through the candidate search.
                full_scan_max: if it % 8 < 4 { 400 } else { 3 },
                candidates: 1 + it % 12,
            };
            let input = if it % 3 == 0 {
                christofides_tour(&d)
            } else {
                random_permutation(m, &mut r)
            };
            let before = directed_ring_cost(&d, &input);
            let out = improve_directed_ring(&d, input, &opts);
            assert!(is_permutation(&out, m));
            assert!(directed_ring_cost(&d, &out) <= before);
        }
    }

    #[test]
    fn picks_better_orientation_without_moves() {
        let d = DenseMatrix::from_fn(4, |i, j| if j == (i + 3) % 4 { 1.0 } else { 10.0 }).unwrap();
        let off = RingSearch {
            max_rounds: 0,
            ..RingSearch::default()
        };
        assert_eq!(
            improve_directed_ring(&d, vec![0, 1, 2, 3], &off),
            vec![3, 2, 1, 0]
        );
        assert_eq!(
            improve_directed_ring(&d, vec![0, 3, 2, 1], &off),
            vec![0, 3, 2, 1]
        );
    }

    #[test]
    fn works_on_sub_rings() {
        let mut r = rng(26);
        let d = random_asymmetric(20, &mut r);
        let sub = vec![3, 17, 5, 9, 11, 2, 8];
        let out = improve_directed_ring(&d, sub.clone(), &all_on());
        let (mut a, mut b) = (out.clone(), sub.clone());
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
        assert!(directed_ring_cost(&d, &out) <= directed_ring_cost(&d, &sub));
    }

    #[test]
    #[should_panic(expected = "repeats node")]
    fn rejects_repeated_nodes() {
        let d = DenseMatrix::from_fn(3, |_, _| 1.0).unwrap();
        improve_directed_ring(&d, vec![0, 1, 1], &all_on());
    }

    #[test]
    fn close_to_brute_force_optimum_on_small_instances() {
        let mut r = rng(27);
        let (mut sum_gap, mut max_gap, mut sum_start_gap, mut optimal, mut count) =
            (0.0, 0.0_f64, 0.0, 0, 0);
        for it in 0..600 {
            let n = 4 + it % 5;
            let d = random_asymmetric(n, &mut r);
            let (opt, _) = brute_force_ring(&d);
            let start = christofides_tour(&d);
            let start_gap = directed_ring_cost(&d, &start) / opt - 1.0;
            let out = improve_directed_ring(&d, start, &all_on());
            let gap = directed_ring_cost(&d, &out) / opt - 1.0;
            assert!(gap >= -1e-12);
            sum_gap += gap;
            sum_start_gap += start_gap;
            max_gap = max_gap.max(gap);
            optimal += usize::from(gap < 1e-12);
            count += 1;
        }
        let avg = sum_gap / count as f64;
        println!(
            "ring search vs brute force, n in 4..=8, {count} instances: avg gap {:.3}%, max gap {:.2}%, optimal {optimal}/{count}; Christofides start avg gap {:.2}%",
            100.0 * avg,
            100.0 * max_gap,
            100.0 * sum_start_gap / count as f64
        );
        assert!(avg < 0.01, "average gap {avg}");
        assert!(max_gap < 0.10, "max gap {max_gap}");
    }

    /// `cargo test --release -- --ignored --nocapture timing` prints timings.
    #[test]
    #[ignore]
    fn timing_on_315_nodes() {
        for seed in 0..4 {
            let mut r = rng(100 + seed);
            let n = 315;
            let d = if seed < 3 {
                random_asymmetric(n, &mut r)
            } else {
                euclidean(&random_points(n, &mut r))
            };
            let t0 = std::time::Instant::now();
            let start = christofides_tour(&d);
            let t1 = std::time::Instant::now();
            let c0 = directed_ring_cost(&d, &start);
            let oriented = directed_ring_cost(&d, &better_orientation(&d, start.clone()));
            let out = improve_directed_ring(&d, start, &all_on());
            let t2 = std::time::Instant::now();
            let c1 = directed_ring_cost(&d, &out);
            println!(
                "seed {seed}: christofides {:.1} ms, cost {c0:.0} (best orientation {oriented:.0}); search {:.1} ms, cost {c1:.0} ({:.1}% below oriented Christofides)",
                (t1 - t0).as_secs_f64() * 1e3,
                (t2 - t1).as_secs_f64() * 1e3,
                100.0 * (1.0 - c1 / oriented)
            );
        }
    }
}
