//! Neighbour-list (candidate-set) local search for the directed RING
//! (asymmetric TSP on the arc delays `d_o`, \[Marfoq20\] Prop. 3.3 / 3.6),
//! used by [`super::improve_directed_ring`] above
//! [`super::RingSearch::full_scan_max`] nodes.
//!
//! The moves are those of the full scan (Or-opt of 1..=3 nodes kept or
//! reversed, 2-opt with either side reversed, segment-exchange 3-opt), but a
//! move is only tried when one of its new arcs joins a node to one of its
//! `k` nearest successors (`d(a, c)` among the `k` smallest of row `a`) or
//! predecessors (`d(c, a)` among the `k` smallest of column `a`), and with
//! don't-look bits: a node is examined again only after an arc at it
//! changed. A pass over the active nodes costs `O(N k^2)` instead of the full
//! scan's `O(N^3)`; applying a move costs `O(N)` (the tour is an array, the
//! reversal costs come from prefix sums rebuilt after each move).
//!
//! The result is a local optimum of the candidate neighbourhood only, so it
//! may differ from (and be slightly worse or better than) the full scan's.

use std::collections::VecDeque;

use super::{DenseMatrix, RingSearch};

/// Candidate lists: the `k` nearest successors and predecessors of every node.
struct Candidates {
    k: usize,
    /// Slot of node `v` in `out` / `into` (`u32::MAX`: not in the tour).
    slot: Vec<u32>,
    /// `out[a * k ..][..k]`: nodes `c` by increasing `d(a, c)` (ties: lower index).
    out: Vec<u32>,
    /// `into[a * k ..][..k]`: nodes `c` by increasing `d(c, a)`.
    into: Vec<u32>,
}

impl Candidates {
    fn new(d: &DenseMatrix, nodes: &[usize], k: usize) -> Self {
        let m = nodes.len();
        let k = k.min(m - 1);
        let mut out = Vec::with_capacity(m * k);
        let mut into = vec![0u32; m * k];
        let mut slot = vec![u32::MAX; d.n()];
        for (q, &v) in nodes.iter().enumerate() {
            slot[v] = q as u32;
        }
        let mut scratch: Vec<(f64, u32)> = Vec::with_capacity(m);
        let pick = |scratch: &mut Vec<(f64, u32)>, dst: &mut Vec<u32>| {
            let cmp = |x: &(f64, u32), y: &(f64, u32)| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1));
            if scratch.len() > k {
                scratch.select_nth_unstable_by(k, cmp);
                scratch.truncate(k);
            }
            scratch.sort_unstable_by(cmp);
            dst.extend(scratch.iter().map(|x| x.1));
        };
        for &a in nodes {
            let row = d.row(a);
            scratch.clear();
            scratch.extend(
                nodes
                    .iter()
                    .filter(|&&c| c != a)
                    .map(|&c| (row[c], c as u32)),
            );
            pick(&mut scratch, &mut out);
        }
        // Predecessors read columns: gather them for a block of COLUMNS
        // consecutive node indices at a time, row by row, so every row is
        // read in short contiguous runs (issue 28: one column entry at a
        // time missed the cache on every read of a 10,000 x 10,000 matrix).
        // The k nearest are the same whatever order they are gathered in:
        // `pick` orders by (delay, index).
        const COLUMNS: usize = 64;
        let mut columns: Vec<Vec<(f64, u32)>> =
            (0..COLUMNS).map(|_| Vec::with_capacity(m)).collect();
        let mut picked = Vec::with_capacity(k);
        for a0 in (0..d.n()).step_by(COLUMNS) {
            let a1 = (a0 + COLUMNS).min(d.n());
            columns.iter_mut().for_each(Vec::clear);
            for &c in nodes {
                let row = &d.row(c)[a0..a1];
                for (a, &v) in (a0..a1).zip(row) {
                    if slot[a] != u32::MAX && a != c {
                        columns[a - a0].push((v, c as u32));
                    }
                }
            }
            for a in a0..a1 {
                if slot[a] != u32::MAX {
                    picked.clear();
                    pick(&mut columns[a - a0], &mut picked);
                    let q = slot[a] as usize * k;
                    into[q..q + k].copy_from_slice(&picked);
                }
            }
        }
        Self { k, slot, out, into }
    }

    /// The `k` nearest successors of node `a` (by `d(a, c)`).
    fn outs(&self, a: usize) -> &[u32] {
        let s = self.slot[a] as usize * self.k;
        &self.out[s..s + self.k]
    }

    /// The `k` nearest predecessors of node `a` (by `d(c, a)`).
    fn ins(&self, a: usize) -> &[u32] {
        let s = self.slot[a] as usize * self.k;
        &self.into[s..s + self.k]
    }
}

/// A move in coordinates relative to a base position `b` (`t_r` = the node
/// at position `b + r`, cyclically; `m` nodes).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Move {
    /// Reverse `t_1..=t_j` (`2 <= j <= m - 1`): new arcs `t_0 -> t_j`,
    /// `t_1 -> t_{j+1}`.
    Inner { j: usize },
    /// Reverse `t_{j+1}..=t_m` (`1 <= j <= m - 2`, `t_m = t_0`): new arcs
    /// `t_j -> t_0`, `t_{j+1} -> t_1`.
    Outer { j: usize },
    /// Move `t_1..=t_len` to between `t_p` and its successor once the
    /// segment is removed (`p = 0` or `len < p < m`), reversed or not.
    Or {
        len: usize,
        p: usize,
        reversed: bool,
    },
    /// Exchange `t_1..=t_j` and `t_{j+1}..=t_k` (`1 <= j < k <= m - 1`):
    /// new arcs `t_0 -> t_{j+1}`, `t_k -> t_1`, `t_j -> t_{k+1}`.
    Exchange { j: usize, k: usize },
}

/// Mutable state of the candidate search.
struct CandidateSearch<'a> {
    d: &'a DenseMatrix,
    cand: Candidates,
    tour: Vec<usize>,
    /// Position of node `v` in `tour` (valid for the tour's nodes).
    pos: Vec<u32>,
    cost: f64,
    eps_scale: f64,
    /// `fwd[p] = sum_{q<p} d(t_q, t_{q+1})`, `p` in `0..=m` (`fwd[m]` = cost).
    fwd: Vec<f64>,
    /// `bwd[p] = sum_{q<p} d(t_{q+1}, t_q)`, `p` in `0..=m` (cyclic).
    bwd: Vec<f64>,
    opts: RingSearch,
}

impl<'a> CandidateSearch<'a> {
    fn new(d: &'a DenseMatrix, tour: Vec<usize>, opts: &RingSearch) -> Self {
        let cand = Candidates::new(d, &tour, opts.candidates.max(1));
        let mut s = Self {
            d,
            cand,
            pos: vec![0; d.n()],
            tour,
            cost: 0.0,
            eps_scale: d.max_abs(),
            fwd: Vec::new(),
            bwd: Vec::new(),
            opts: opts.clone(),
        };
        s.refresh();
        s
    }

    #[inline]
    fn m(&self) -> usize {
        self.tour.len()
    }

    fn refresh(&mut self) {
        let m = self.m();
        self.fwd.clear();
        self.bwd.clear();
        let (mut f, mut b) = (0.0, 0.0);
        for p in 0..m {
            self.pos[self.tour[p]] = p as u32;
            self.fwd.push(f);
            self.bwd.push(b);
            let (u, v) = (self.tour[p], self.tour[(p + 1) % m]);
            f += self.d.get(u, v);
            b += self.d.get(v, u);
        }
        self.fwd.push(f);
        self.bwd.push(b);
        self.cost = f;
    }

    /// Node `t_r` relative to base position `b`.
    #[inline]
    fn at(&self, b: usize, r: usize) -> usize {
        self.tour[(b + r) % self.m()]
    }

    /// Position of node `v` relative to base position `b`.
    #[inline]
    fn rel(&self, b: usize, v: usize) -> usize {
        let m = self.m();
        (self.pos[v] as usize + m - b) % m
    }

    /// Forward and backward cost of the arcs between `t_x` and `t_y`
    /// (`x <= y < x + m`): `sum d(t_q, t_{q+1})` and `sum d(t_{q+1}, t_q)`,
    /// `q` in `x..y`.
    fn inner(&self, b: usize, x: usize, y: usize) -> (f64, f64) {
        let m = self.m();
        let (ax, ay) = ((b + x) % m, (b + y) % m);
        if x == y {
            (0.0, 0.0)
        } else if ax < ay {
            (self.fwd[ay] - self.fwd[ax], self.bwd[ay] - self.bwd[ax])
        } else {
            (
                self.fwd[m] - self.fwd[ax] + self.fwd[ay],
                self.bwd[m] - self.bwd[ax] + self.bwd[ay],
            )
        }
    }

    /// Moves must lower the cost by more than this (as the full scan).
    fn eps(&self) -> f64 {
        1e-9 * (self.cost.abs() + self.eps_scale)
    }

    /// Relative position of the node after `t_p` once `t_1..=t_len` is removed.
    fn or_next(&self, len: usize, p: usize) -> usize {
        if p == 0 {
            len + 1
        } else {
            (p + 1) % self.m()
        }
    }

    /// Cost change of `mv` at base `b`.
    fn gain(&self, b: usize, mv: Move) -> f64 {
        let m = self.m();
        let t = |r: usize| self.at(b, r);
        let d = |x: usize, y: usize| self.d.get(t(x), t(y));
        match mv {
            Move::Inner { j } => {
                let (f, bw) = self.inner(b, 1, j);
                d(0, j) + d(1, j + 1) - d(0, 1) - d(j, j + 1) + bw - f
            }
            Move::Outer { j } => {
                let (f, bw) = self.inner(b, j + 1, m);
                d(j, 0) + d(j + 1, 1) - d(0, 1) - d(j, j + 1) + bw - f
            }
            Move::Or { len, p, reversed } => {
                let q = self.or_next(len, p);
                let removal = d(0, len + 1) - d(0, 1) - d(len, len + 1) - d(p, q);
                let insert = if reversed {
                    let (f, bw) = self.inner(b, 1, len);
                    d(p, len) + d(1, q) + bw - f
                } else {
                    d(p, 1) + d(len, q)
                };
                removal + insert
            }
            Move::Exchange { j, k } => {
                d(0, j + 1) + d(k, 1) + d(j, k + 1) - d(0, 1) - d(j, j + 1) - d(k, k + 1)
            }
        }
    }

    /// The tour after `mv` at base `b`, and the nodes at the ends of the
    /// arcs it removes or adds.
    fn moved(&self, b: usize, mv: Move) -> (Vec<usize>, Vec<usize>) {
        let m = self.m();
        let t: Vec<usize> = (0..m).map(|r| self.at(b, r)).collect();
        let mut out = Vec::with_capacity(m);
        let ends: Vec<usize> = match mv {
            Move::Inner { j } => {
                out.push(t[0]);
                out.extend(t[1..=j].iter().rev());
                out.extend_from_slice(&t[j + 1..]);
                vec![0, 1, j, j + 1]
            }
            Move::Outer { j } => {
                out.extend_from_slice(&t[1..=j]);
                out.push(t[0]);
                out.extend(t[j + 1..].iter().rev());
                vec![0, 1, j, j + 1]
            }
            Move::Or { len, p, reversed } => {
                // t_0 and t_{len+1}..: the tour without the segment, from t_0.
                let mut rest = Vec::with_capacity(m - len);
                rest.push(t[0]);
                rest.extend_from_slice(&t[len + 1..]);
                let cut = if p == 0 { 1 } else { p - len + 1 };
                out.extend_from_slice(&rest[..cut]);
                if reversed {
                    out.extend(t[1..=len].iter().rev());
                } else {
                    out.extend_from_slice(&t[1..=len]);
                }
                out.extend_from_slice(&rest[cut..]);
                vec![0, 1, len, len + 1, p, self.or_next(len, p)]
            }
            Move::Exchange { j, k } => {
                out.push(t[0]);
                out.extend_from_slice(&t[j + 1..=k]);
                out.extend_from_slice(&t[1..=j]);
                out.extend_from_slice(&t[k + 1..]);
                vec![0, 1, j, j + 1, k, k + 1]
            }
        };
        (out, ends.into_iter().map(|r| t[r % m]).collect())
    }

    /// Keeps `(b, mv)` in `best` when it improves by more than `eps` and
    /// more than `best`.
    fn consider(&self, b: usize, mv: Move, eps: f64, best: &mut Option<(f64, usize, Move)>) {
        let g = self.gain(b, mv);
        if g < -eps && best.is_none_or(|(x, _, _)| g < x) {
            *best = Some((g, b, mv));
        }
    }

    /// Best improving candidate move that adds an arc at node `a`:
    /// `(gain, base, move)`.
    fn best_move(&self, a: usize) -> Option<(f64, usize, Move)> {
        let m = self.m();
        if m < 4 {
            return None;
        }
        let eps = self.eps();
        let base = self.pos[a] as usize;
        let mut best = None;
        if self.opts.use_two_opt {
            for &c in self.cand.outs(a) {
                let j = self.rel(base, c as usize);
                if j >= 2 {
                    self.consider(base, Move::Inner { j }, eps, &mut best);
                }
            }
            for &c in self.cand.ins(a) {
                let j = self.rel(base, c as usize);
                if j <= m - 2 {
                    self.consider(base, Move::Outer { j }, eps, &mut best);
                }
            }
        }
        if self.opts.use_or_opt {
            // Segments t_1..=t_len starting at `a` (base one before `a`).
            let b1 = (base + m - 1) % m;
            for len in 1..=3.min(m - 3) {
                let last = self.at(b1, len);
                let outside = |r: usize| r == 0 || r > len;
                for (list, reversed) in [(self.cand.ins(a), false), (self.cand.ins(last), true)] {
                    for &p in list {
                        let p = self.rel(b1, p as usize);
                        if outside(p) {
                            self.consider(b1, Move::Or { len, p, reversed }, eps, &mut best);
                        }
                    }
                }
                for (list, reversed) in [(self.cand.outs(last), false), (self.cand.outs(a), true)] {
                    for &q in list {
                        let q = self.rel(b1, q as usize);
                        if outside(q) {
                            let p = if q == len + 1 { 0 } else { (q + m - 1) % m };
                            self.consider(b1, Move::Or { len, p, reversed }, eps, &mut best);
                        }
                    }
                }
            }
        }
        if self.opts.use_three_opt {
            let second = self.at(base, 1);
            for &c in self.cand.outs(a) {
                let j1 = self.rel(base, c as usize);
                if j1 < 2 {
                    continue;
                }
                for &e in self.cand.ins(second) {
                    let k = self.rel(base, e as usize);
                    if k >= j1 {
                        self.consider(base, Move::Exchange { j: j1 - 1, k }, eps, &mut best);
                    }
                }
            }
        }
        best
    }
}

/// Candidate-list local search from `tour` (at least 3 distinct nodes of
/// `d`): improving moves are applied until no node has one in its candidate
/// neighbourhood, or `opts.max_rounds` moves were applied. Deterministic.
pub(super) fn candidate_search(d: &DenseMatrix, tour: Vec<usize>, opts: &RingSearch) -> Vec<usize> {
    let mut s = CandidateSearch::new(d, tour, opts);
    let mut queued = vec![false; d.n()];
    let mut queue: VecDeque<usize> = s.tour.iter().copied().collect();
    for &v in &s.tour {
        queued[v] = true;
    }
    let mut moves = 0usize;
    while moves < opts.max_rounds {
        let Some(a) = queue.pop_front() else { break };
        queued[a] = false;
        let Some((gain, b, mv)) = s.best_move(a) else {
            continue;
        };
        let before = s.cost;
        let (tour, ends) = s.moved(b, mv);
        s.tour = tour;
        s.refresh();
        debug_assert!(
            (s.cost - (before + gain)).abs() <= 1e-6 * (before.abs() + s.eps_scale + 1.0),
            "move {mv:?}: predicted {} got {}",
            before + gain,
            s.cost
        );
        moves += 1;
        for v in ends.into_iter().chain([a]) {
            if !std::mem::replace(&mut queued[v], true) {
                queue.push_back(v);
            }
        }
    }
    s.tour
}

#[cfg(test)]
mod tests {
    use super::super::ring_search::directed_ring_cost;
    use super::super::test_support::*;
    use super::super::{christofides_tour, improve_directed_ring};
    use super::*;

    /// The candidate lists equal a plain scan by rows and by columns, for
    /// a subset of nodes in scrambled order spanning several column blocks
    /// (with ties: integral weights).
    #[test]
    fn candidate_lists_equal_a_plain_scan() {
        use rand::seq::SliceRandom;
        let mut r = rng(5);
        for (n, integral) in [(150, false), (150, true), (70, true)] {
            let mut d = random_asymmetric(n, &mut r);
            if integral {
                d = DenseMatrix::from_fn(n, |i, j| (d.get(i, j) / 10.0).round()).unwrap();
            }
            let mut nodes: Vec<usize> = (0..n).filter(|v| v % 5 != 3).collect();
            nodes.shuffle(&mut r);
            for k in [1, 8, 200] {
                let c = Candidates::new(&d, &nodes, k);
                let nearest = |a: usize, w: &dyn Fn(usize) -> f64| {
                    let mut v: Vec<(f64, usize)> = nodes
                        .iter()
                        .filter(|&&x| x != a)
                        .map(|&x| (w(x), x))
                        .collect();
                    v.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
                    v.truncate(c.k);
                    v.into_iter().map(|x| x.1 as u32).collect::<Vec<u32>>()
                };
                for &a in &nodes {
                    assert_eq!(c.outs(a), nearest(a, &|x| d.get(a, x)), "n={n} k={k} a={a}");
                    assert_eq!(c.ins(a), nearest(a, &|x| d.get(x, a)), "n={n} k={k} a={a}");
                }
            }
        }
    }

    fn full(k: usize) -> RingSearch {
        RingSearch {
            full_scan_max: 0,
            candidates: k,
            ..RingSearch::default()
        }
    }

    /// Every move the search can generate, for every base.
    fn all_moves(m: usize) -> Vec<Move> {
        let mut v = Vec::new();
        for j in 2..m {
            v.push(Move::Inner { j });
        }
        for j in 1..m - 1 {
            v.push(Move::Outer { j });
        }
        for len in 1..=3.min(m - 3) {
            for p in std::iter::once(0).chain(len + 1..m) {
                for reversed in [false, true] {
                    v.push(Move::Or { len, p, reversed });
                }
            }
        }
        for j in 1..m - 1 {
            for k in j + 1..m {
                v.push(Move::Exchange { j, k });
            }
        }
        v
    }

    #[test]
    fn gains_are_exact_and_moves_valid() {
        let mut r = rng(31);
        for m in 4..14 {
            let d = random_asymmetric(m, &mut r);
            let s = CandidateSearch::new(&d, random_permutation(m, &mut r), &full(3));
            for b in 0..m {
                for mv in all_moves(m) {
                    let (t, ends) = s.moved(b, mv);
                    assert!(is_permutation(&t, m), "{mv:?}");
                    let actual = directed_ring_cost(&d, &t) - s.cost;
                    let g = s.gain(b, mv);
                    assert!(
                        (g - actual).abs() < 1e-9 * s.cost,
                        "m={m} b={b} {mv:?}: {g} vs {actual}"
                    );
                    // Every changed arc has both ends listed.
                    let succ = |t: &[usize], v: usize| {
                        let p = t.iter().position(|&x| x == v).unwrap();
                        t[(p + 1) % m]
                    };
                    for v in 0..m {
                        let (old, new) = (succ(&s.tour, v), succ(&t, v));
                        let reversed_arc = succ(&s.tour, new) == v;
                        if old != new && !reversed_arc {
                            assert!(ends.contains(&v) && ends.contains(&new), "{mv:?} {v}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn candidate_lists_are_the_nearest() {
        let mut r = rng(32);
        let d = random_asymmetric(30, &mut r);
        let nodes: Vec<usize> = (0..30).rev().collect();
        let c = Candidates::new(&d, &nodes, 5);
        for a in 0..30 {
            let outs = c.outs(a);
            let mut row: Vec<f64> = (0..30).filter(|&x| x != a).map(|x| d.get(a, x)).collect();
            row.sort_by(f64::total_cmp);
            let got: Vec<f64> = outs.iter().map(|&x| d.get(a, x as usize)).collect();
            assert_eq!(got, row[..5].to_vec());
            let mut col: Vec<f64> = (0..30).filter(|&x| x != a).map(|x| d.get(x, a)).collect();
            col.sort_by(f64::total_cmp);
            let got: Vec<f64> = c.ins(a).iter().map(|&x| d.get(x as usize, a)).collect();
            assert_eq!(got, col[..5].to_vec());
        }
    }

    /// With exhaustive lists (`k = N - 1`) every 2-opt, Or-opt and
    /// exchange move that adds an arc at a node is tried; the search stops
    /// at a tour where no node examined last has one. Checked: the result
    /// is never worse than the start, and no improving move remains at the
    /// nodes (every node is re-examined by a final sweep here).
    #[test]
    fn exhaustive_lists_reach_a_local_optimum() {
        let mut r = rng(33);
        for it in 0..60 {
            let m = 5 + it % 25;
            let d = random_asymmetric(m, &mut r);
            let input = random_permutation(m, &mut r);
            let before = directed_ring_cost(&d, &input);
            let out = improve_directed_ring(&d, input, &full(m));
            assert!(is_permutation(&out, m));
            let s = CandidateSearch::new(&d, out, &full(m));
            assert!(s.cost <= before);
            let stuck = (0..m).filter(|&a| s.best_move(a).is_some()).count();
            // Don't-look bits may leave a node whose move came from a change
            // elsewhere (a reversal's inner arcs); allow very few.
            assert!(stuck <= m / 5, "it={it}: {stuck} nodes still improvable");
        }
    }

    /// Candidate search (k = 10) vs the full scan on random instances of
    /// 60..200 nodes from the Christofides start: never worse than the
    /// start, and on average within 2 % of the full scan's cost (stated
    /// bound; measured below 1 %), at most 6 % on any instance.
    #[test]
    fn close_to_the_full_scan() {
        let mut r = rng(34);
        let (mut sum, mut worst, mut count) = (0.0, f64::NEG_INFINITY, 0);
        for it in 0..12 {
            let m = 60 + 12 * it;
            let d = if it % 2 == 0 {
                random_asymmetric(m, &mut r)
            } else {
                euclidean(&random_points(m, &mut r))
            };
            let start = christofides_tour(&d);
            let c0 = directed_ring_cost(&d, &start);
            let scan = improve_directed_ring(&d, start.clone(), &RingSearch::default());
            let cand = improve_directed_ring(&d, start, &full(10));
            let (cs, cc) = (directed_ring_cost(&d, &scan), directed_ring_cost(&d, &cand));
            assert!(cc <= c0);
            let gap = cc / cs - 1.0;
            sum += gap;
            worst = worst.max(gap);
            count += 1;
        }
        let avg = sum / f64::from(count);
        println!(
            "candidate vs full scan: avg gap {:.3}%, worst {:.3}%",
            100.0 * avg,
            100.0 * worst
        );
        assert!(avg < 0.02, "avg gap {avg}");
        assert!(worst < 0.06, "worst gap {worst}");
    }

    #[test]
    fn sub_rings_and_tiny_rings() {
        let mut r = rng(35);
        let d = random_asymmetric(40, &mut r);
        for len in 1..12 {
            let sub: Vec<usize> = (0..len).map(|q| (7 * q + 3) % 40).collect();
            let out = improve_directed_ring(&d, sub.clone(), &full(4));
            let (mut a, mut b) = (out.clone(), sub.clone());
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b);
            assert!(directed_ring_cost(&d, &out) <= directed_ring_cost(&d, &sub));
        }
    }
}
