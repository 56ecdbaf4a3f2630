//! The Base-(k+1) graph (\[Takezawa23\]): a finite sequence of graphs of
//! maximum degree `k` whose mixing matrices multiply to exact averaging
//! `J / n` for **any** number of nodes `n`, on abstract nodes `0..n` (the
//! caller places them on silos).
//!
//! Built from three pieces, as in \[Takezawa23\] and its public code
//! (yukiTakezawa/BaseGraph, read for the construction, not copied):
//!
//! * the **k-peer hyper-hypercube** for `n` whose prime factors are all at
//!   most `k + 1`: write `n = f_1 f_2 ... f_s` (factors `<= k + 1`, taken
//!   greedily from `k + 1` down, then in increasing order) and node indices
//!   in that mixed radix; in stage `r` every node averages uniformly with the
//!   `f_r - 1` nodes that differ from it only in digit `r`. After the `s`
//!   stages every node holds the exact average ([`hyper_hypercube`]).
//! * the **simple Base-(k+1) graph** for any `n`: write
//!   `n = sum_l a_l (k+1)^(p_l)` in base `k + 1` (`p_0 > p_1 > ...`,
//!   `1 <= a_l <= k`) and split the nodes into consecutive blocks `V_l` of
//!   `a_l (k+1)^(p_l)` nodes, each made of `a_l` sub-blocks of `(k+1)^(p_l)`.
//!   First every block averages internally (its hyper-hypercube; smaller
//!   blocks repeat their stages). Then, for `q = 0, 1, ...`, every node of a
//!   later block `V_l` (`l > q`) pairs with one node of each sub-block of
//!   `V_q` and moves the fraction `n_q / (n_q + n_(q+1) + ...)` of its value
//!   towards `V_q` (split evenly over the `a_q <= k` partners); the
//!   partners of `V_q` then re-average inside their sub-blocks (hypercube
//!   stages), which makes `V_q` hold the average of `V_q` and all later
//!   blocks, while the later blocks carry on with `V_(q+1)`. The unpaired
//!   nodes of `V_q` meanwhile average in cliques of at most `k + 1` (no
//!   effect on exact consensus, as the reference code's default)
//!   ([`simple_base_graph`]).
//! * the **Base-(k+1) graph**: with `n = n_s n_r`, `n_s` the largest divisor
//!   of `n` whose prime factors are at most `k + 1`, either the simple graph
//!   on all `n` nodes or, when shorter, the simple graph on each of the
//!   `n_s` consecutive groups of `n_r` nodes followed by the
//!   hyper-hypercube on each of the `n_r` strided groups `{j, j + n_r, ...}`
//!   ([`base_graph`]).
//!
//! Every matrix is symmetric and doubly stochastic; the length of the
//! sequence is at most `2 log_(k+1)(n) + 2`.

use crate::mixing::ConsensusMatrix;

/// Writes the local matrix `local` (over `nodes.len()` nodes) into `w` at
/// the rows and columns `nodes`.
fn place(w: &mut ConsensusMatrix, local: &ConsensusMatrix, nodes: &[usize]) {
    for (a, &i) in nodes.iter().enumerate() {
        for (b, &j) in nodes.iter().enumerate() {
            w[(i, j)] = local[(a, b)];
        }
    }
}

/// The largest prime factor of `n` (1 for `n <= 1`).
fn largest_prime_factor(mut n: usize) -> usize {
    let mut largest = 1;
    let mut p = 2;
    while p * p <= n {
        while n.is_multiple_of(p) {
            largest = p;
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        largest = n;
    }
    largest
}

/// True when every prime factor of `n` is at most `k + 1`.
pub fn is_smooth(n: usize, k: usize) -> bool {
    largest_prime_factor(n) <= k + 1
}

/// The largest divisor of `n` whose prime factors are all at most `k + 1`.
pub fn smooth_part(mut n: usize, k: usize) -> usize {
    let mut part = 1;
    for p in 2..=k + 1 {
        while n.is_multiple_of(p) {
            part *= p;
            n /= p;
        }
    }
    part
}

/// The factors `<= k + 1` of a `(k+1)`-smooth `n`, taken greedily from
/// `k + 1` down, in increasing order (one hypercube stage each).
fn stage_factors(n: usize, k: usize) -> Vec<usize> {
    let mut rest = n;
    let mut factors = Vec::new();
    for f in (2..=k + 1).rev() {
        while rest > 1 && rest.is_multiple_of(f) {
            factors.push(f);
            rest /= f;
        }
    }
    factors.reverse();
    factors
}

/// The k-peer hyper-hypercube on `n` nodes, `n`'s prime factors all at most
/// `k + 1`: one matrix per stage (the identity for `n = 1`). Stage `r`
/// averages uniformly over the nodes that differ only in mixed-radix digit
/// `r`.
///
/// # Panics
/// If `n` has a prime factor above `k + 1` (callers check [`is_smooth`]).
pub fn hyper_hypercube(n: usize, k: usize) -> Vec<ConsensusMatrix> {
    assert!(n >= 1 && is_smooth(n, k), "{n} is not {}-smooth", k + 1);
    if n == 1 {
        return vec![ConsensusMatrix::identity(1)];
    }
    let mut stride = 1;
    let mut stages = Vec::new();
    for f in stage_factors(n, k) {
        let mut w = ConsensusMatrix::zeros(n);
        for (i, row) in w.rows_mut().enumerate() {
            let digit = (i / stride) % f;
            let first = i - digit * stride;
            for m in 0..f {
                row[first + m * stride] = 1.0 / f as f64;
            }
        }
        stages.push(w);
        stride *= f;
    }
    stages
}

/// The simple Base-(k+1) graph on `n >= 1` nodes (see the module
/// documentation), `k >= 1`.
pub fn simple_base_graph(n: usize, k: usize) -> Vec<ConsensusMatrix> {
    if n == 1 || is_smooth(n, k) {
        return hyper_hypercube(n, k);
    }
    let base = k + 1;
    // Base-(k+1) digits of n, most significant first: blocks of a (k+1)^p.
    let mut sizes: Vec<(usize, usize)> = Vec::new(); // (a_l, (k+1)^(p_l))
    let mut power = 1;
    while power <= n / base {
        power *= base;
    }
    let mut rest = n;
    while rest > 0 {
        let a = rest / power;
        if a > 0 {
            sizes.push((a, power));
            rest -= a * power;
        }
        power /= base;
    }
    let count = sizes.len();
    let mut blocks: Vec<Vec<usize>> = Vec::with_capacity(count);
    let mut start = 0;
    for &(a, p) in &sizes {
        blocks.push((start..start + a * p).collect());
        start += a * p;
    }
    let sub_blocks: Vec<Vec<Vec<usize>>> = blocks
        .iter()
        .zip(&sizes)
        .map(|(b, &(_, p))| b.chunks(p).map(<[usize]>::to_vec).collect())
        .collect();
    let cubes: Vec<Vec<ConsensusMatrix>> =
        blocks.iter().map(|b| hyper_hypercube(b.len(), k)).collect();
    let sub_cubes: Vec<Vec<ConsensusMatrix>> =
        sizes.iter().map(|&(_, p)| hyper_hypercube(p, k)).collect();
    // Nodes in block q and after.
    let tail: Vec<usize> = (0..count)
        .map(|q| blocks[q..].iter().map(Vec::len).sum())
        .collect();
    let first_phase = cubes[0].len();
    let mut done = vec![0usize; count];
    let mut rounds = Vec::new();
    for m in 0.. {
        let mut w = ConsensusMatrix::zeros(n);
        let mut partners: Option<Vec<Vec<usize>>> = None;
        let mut unpaired: Vec<usize> = Vec::new();
        for l in (0..count).rev() {
            if m < first_phase {
                let c = &cubes[l];
                place(&mut w, &c[m % c.len()], &blocks[l]);
            } else if m < first_phase + l {
                let q = m - first_phase;
                let stacks = partners.get_or_insert_with(|| {
                    unpaired = sub_blocks[q].concat();
                    sub_blocks[q].clone()
                });
                let frac = blocks[q].len() as f64 / tail[q] as f64;
                let each = frac / stacks.len() as f64;
                for &i in &blocks[l] {
                    for stack in stacks.iter_mut() {
                        // Enough partners: a sub-block of V_q has (k+1)^(p_q)
                        // nodes, more than all later blocks together.
                        let Some(j) = stack.pop() else { continue };
                        unpaired.retain(|&x| x != j);
                        w[(i, j)] = each;
                        w[(j, i)] = each;
                        w[(j, j)] = 1.0 - each;
                    }
                    w[(i, i)] = 1.0 - frac;
                }
            } else if m == first_phase + l && l + 1 != count {
                while unpaired.len() > 1 {
                    let group: Vec<usize> = unpaired.drain(..unpaired.len().min(base)).collect();
                    let g = 1.0 / group.len() as f64;
                    for &i in &group {
                        for &j in &group {
                            w[(i, j)] = g;
                        }
                    }
                }
            } else {
                if blocks[l].len() < base {
                    let c = &cubes[l];
                    place(&mut w, &c[done[l] % c.len()], &blocks[l]);
                } else {
                    let c = &sub_cubes[l];
                    for s in &sub_blocks[l] {
                        place(&mut w, &c[done[l] % c.len()], s);
                    }
                }
                done[l] += 1;
            }
        }
        for (i, row) in w.rows_mut().enumerate() {
            if row[i] == 0.0 {
                row[i] = 1.0;
            }
        }
        rounds.push(w);
        if done[0] == sub_cubes[0].len() {
            break;
        }
    }
    rounds
}

/// The Base-(k+1) graph on `n >= 1` nodes, `k >= 1`: one mixing matrix per
/// round of its period; their product is `J / n`.
pub fn base_graph(n: usize, k: usize) -> Vec<ConsensusMatrix> {
    let whole = simple_base_graph(n, k);
    let n_s = smooth_part(n, k);
    let n_r = n / n_s;
    let simple = simple_base_graph(n_r, k);
    let cube = hyper_hypercube(n_s, k);
    if whole.len() < simple.len() + cube.len() {
        return whole;
    }
    let mut rounds = Vec::with_capacity(simple.len() + cube.len());
    for local in &simple {
        let mut w = ConsensusMatrix::zeros(n);
        for g in 0..n_s {
            let nodes: Vec<usize> = (g * n_r..(g + 1) * n_r).collect();
            place(&mut w, local, &nodes);
        }
        rounds.push(w);
    }
    for local in &cube {
        let mut w = ConsensusMatrix::zeros(n);
        for j in 0..n_r {
            let nodes: Vec<usize> = (0..n_s).map(|g| g * n_r + j).collect();
            place(&mut w, local, &nodes);
        }
        rounds.push(w);
    }
    rounds
}
