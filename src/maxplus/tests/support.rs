//! Test helpers: graph builders, random strongly connected digraphs, a
//! brute-force enumeration of elementary circuits, and circuit checks.

use crate::maxplus::{Arc, CycleTime, WeightedDigraph};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Builds a graph from `(from, to, weight)` triples; panics on invalid input.
pub fn graph(n: usize, arcs: &[(usize, usize, f64)]) -> WeightedDigraph {
    let arcs = arcs
        .iter()
        .map(|&(from, to, weight)| Arc { from, to, weight })
        .collect();
    WeightedDigraph::new(n, arcs).expect("valid test graph")
}

/// `|a - b| <= tol * max(|a|, |b|)`, with an absolute floor `tol * scale`
/// for values near zero (`scale` = largest |weight| of the graph).
pub fn close(a: f64, b: f64, tol: f64, scale: f64) -> bool {
    (a - b).abs()
        <= tol
            * a.abs()
                .max(b.abs())
                .max(scale * 1e-3)
                .max(f64::MIN_POSITIVE)
}

/// Largest absolute weight of the graph (0 without arcs).
pub fn scale(g: &WeightedDigraph) -> f64 {
    g.arcs().iter().fold(0.0, |m, a| m.max(a.weight.abs()))
}

/// Dense matrix `best[a][b]` = heaviest arc weight `a -> b`, or `None`.
pub fn dense(g: &WeightedDigraph) -> Vec<Vec<Option<f64>>> {
    let n = g.node_count();
    let mut best = vec![vec![None; n]; n];
    for a in g.arcs() {
        let cell: &mut Option<f64> = &mut best[a.from][a.to];
        *cell = Some(cell.map_or(a.weight, |w: f64| w.max(a.weight)));
    }
    best
}

/// Mean of a circuit with the heaviest parallel arcs; `Err` if the circuit
/// is empty, repeats a node, or uses a missing arc.
pub fn checked_mean(g: &WeightedDigraph, circuit: &[usize]) -> Result<f64, String> {
    if circuit.is_empty() {
        return Err("empty circuit".into());
    }
    let mut sorted = circuit.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != circuit.len() {
        return Err(format!("repeated node in {circuit:?}"));
    }
    let best = dense(g);
    let k = circuit.len();
    let mut sum = 0.0;
    for idx in 0..k {
        let (a, b) = (circuit[idx], circuit[(idx + 1) % k]);
        sum += best[a][b].ok_or_else(|| format!("no arc {a} -> {b} in {circuit:?}"))?;
    }
    Ok(sum / k as f64)
}

/// Asserts the circuit is a real elementary circuit with mean `ct.value`.
pub fn assert_valid(g: &WeightedDigraph, ct: &CycleTime, tol: f64) {
    let mean = checked_mean(g, &ct.circuit).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        close(mean, ct.value, tol, scale(g)),
        "circuit mean {mean} != value {}",
        ct.value
    );
}

/// Maximum cycle mean by enumerating all elementary circuits (DFS from each
/// smallest node); `None` without circuit. Exponential: small `n` only.
pub fn brute_force(g: &WeightedDigraph) -> Option<f64> {
    let best = dense(g);
    let n = g.node_count();
    let mut result: Option<f64> = None;
    for start in 0..n {
        let mut on_path = vec![false; n];
        on_path[start] = true;
        dfs(&best, start, start, 0.0, 1, &mut on_path, &mut result);
    }
    result
}

fn dfs(
    best: &[Vec<Option<f64>>],
    start: usize,
    at: usize,
    sum: f64,
    len: usize,
    on_path: &mut [bool],
    result: &mut Option<f64>,
) {
    for next in start..best.len() {
        let Some(w) = best[at][next] else { continue };
        if next == start {
            let mean = (sum + w) / len as f64;
            *result = Some(result.map_or(mean, |r| r.max(mean)));
        } else if !on_path[next] {
            on_path[next] = true;
            dfs(best, start, next, sum + w, len + 1, on_path, result);
            on_path[next] = false;
        }
    }
}

/// How random weights are drawn (ms).
#[derive(Debug, Clone, Copy)]
pub enum Weights {
    /// Small integers 0..=4: many ties and zeros.
    SmallInts,
    /// All arcs weigh the same.
    Equal,
    /// Log-uniform over 1e-3 .. 1e6, with some exact zeros.
    Spread,
    /// Uniform in [0, 100).
    Uniform,
}

impl Weights {
    pub fn draw(self, rng: &mut ChaCha8Rng) -> f64 {
        match self {
            Weights::SmallInts => f64::from(rng.gen_range(0..=4u8)),
            Weights::Equal => 7.25,
            Weights::Spread if rng.gen_bool(0.1) => 0.0,
            Weights::Spread => 10f64.powf(rng.gen_range(-3.0..6.0)),
            Weights::Uniform => rng.gen_range(0.0..100.0),
        }
    }
}

/// Random strongly connected digraph: a random Hamiltonian cycle plus
/// `extra` random arcs (self-loops and parallel arcs possible).
pub fn random_sc(n: usize, extra: usize, weights: Weights, seed: u64) -> WeightedDigraph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rng);
    let mut arcs = Vec::with_capacity(n + extra);
    for idx in 0..n {
        let (from, to) = (order[idx], order[(idx + 1) % n]);
        arcs.push(Arc {
            from,
            to,
            weight: weights.draw(&mut rng),
        });
    }
    for _ in 0..extra {
        let (from, to) = (rng.gen_range(0..n), rng.gen_range(0..n));
        arcs.push(Arc {
            from,
            to,
            weight: weights.draw(&mut rng),
        });
    }
    arcs.shuffle(&mut rng);
    WeightedDigraph::new(n, arcs).expect("valid random graph")
}
