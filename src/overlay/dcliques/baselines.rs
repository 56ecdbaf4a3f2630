//! Baseline topologies of the D-Cliques evaluation (\[Bellet21\] Sec. 4.1, 4.4,
//! App. C.3.4): random `d`-regular graph, "diverse" random graph (every
//! closed neighbourhood covers every label), node ring, grid, fully
//! connected. Edges `(a, b)` with `a < b`.

use std::collections::BTreeSet;

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::labels::LabelDistributions;
use super::DCliquesError;

/// Circulant `d`-regular graph on the cyclic order `order`: offsets
/// `1..=d/2` (and `n/2` when `d` is odd; needs `n` even).
fn circulant(order: &[usize], d: usize) -> BTreeSet<(usize, usize)> {
    let n = order.len();
    let mut e = BTreeSet::new();
    let mut add = |a: usize, b: usize| {
        e.insert((a.min(b), a.max(b)));
    };
    for p in 0..n {
        for off in 1..=d / 2 {
            add(order[p], order[(p + off) % n]);
        }
        if d % 2 == 1 {
            add(order[p], order[(p + n / 2) % n]);
        }
    }
    e
}

/// Degree-preserving random double-edge swaps: `{a,b},{c,d} -> {a,d},{c,b}`
/// when it creates neither a loop nor a duplicate and `accept` agrees.
fn double_edge_swaps(
    edges: &mut [(usize, usize)],
    swaps: usize,
    rng: &mut ChaCha8Rng,
    mut accept: impl FnMut(&BTreeSet<(usize, usize)>) -> bool,
) {
    let mut set: BTreeSet<(usize, usize)> = edges.iter().copied().collect();
    let m = edges.len();
    if m < 2 {
        return;
    }
    for _ in 0..swaps {
        let x = rng.gen_range(0..m);
        let y = rng.gen_range(0..m);
        if x == y {
            continue;
        }
        let (a, b) = edges[x];
        let (mut c, mut d) = edges[y];
        if rng.gen::<bool>() {
            std::mem::swap(&mut c, &mut d);
        }
        if a == d || c == b || a == c || b == d {
            continue;
        }
        let e1 = (a.min(d), a.max(d));
        let e2 = (c.min(b), c.max(b));
        if set.contains(&e1) || set.contains(&e2) {
            continue;
        }
        set.remove(&edges[x]);
        set.remove(&edges[y]);
        set.insert(e1);
        set.insert(e2);
        if accept(&set) {
            edges[x] = e1;
            edges[y] = e2;
        } else {
            set.remove(&e1);
            set.remove(&e2);
            set.insert(edges[x]);
            set.insert(edges[y]);
        }
    }
}

fn check_regular(n: usize, d: usize) -> Result<(), DCliquesError> {
    if d == 0 || d >= n || (n * d) % 2 == 1 {
        return Err(DCliquesError::Invalid(format!(
            "no {d}-regular graph on {n} nodes (need 0 < d < n and n*d even)"
        )));
    }
    Ok(())
}

/// A uniform-ish random `d`-regular graph: a circulant graph on a random
/// node order, then `20 * edges` random degree-preserving double-edge swaps.
pub fn random_regular(
    n: usize,
    d: usize,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<(usize, usize)>, DCliquesError> {
    check_regular(n, d)?;
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    let mut edges: Vec<_> = circulant(&order, d).into_iter().collect();
    let swaps = 20 * edges.len();
    double_edge_swaps(&mut edges, swaps, rng, |_| true);
    edges.sort_unstable();
    Ok(edges)
}

/// True when node `i`'s closed neighbourhood holds every label of `labels`.
fn diverse_at(labels: &LabelDistributions, adj: &[Vec<usize>], i: usize) -> bool {
    let mut seen = vec![false; labels.label_count()];
    for j in std::iter::once(i).chain(adj[i].iter().copied()) {
        for y in labels.support(j) {
            seen[y] = true;
        }
    }
    labels
        .global()
        .iter()
        .zip(&seen)
        .all(|(&g, &s)| g == 0.0 || s)
}

fn adjacency(n: usize, set: &BTreeSet<(usize, usize)>) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in set {
        adj[a].push(b);
        adj[b].push(a);
    }
    adj
}

/// "Diverse" random `d`-regular graph (\[Bellet21\] App. C.3.4): every node's closed
/// neighbourhood holds every label. Starts from a circulant graph on the
/// nodes interleaved by dominant label (diverse when `d + 1 >= L` and the
/// labels are balanced), then random double-edge swaps that keep every
/// neighbourhood diverse. Errors if the start is not diverse.
pub fn diverse_random(
    labels: &LabelDistributions,
    d: usize,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<(usize, usize)>, DCliquesError> {
    let n = labels.node_count();
    check_regular(n, d)?;
    let mut by_label: Vec<Vec<usize>> = vec![Vec::new(); labels.label_count()];
    for i in 0..n {
        by_label[labels.dominant(i)].push(i);
    }
    for v in &mut by_label {
        v.shuffle(rng);
    }
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        for v in &mut by_label {
            if let Some(i) = v.pop() {
                order.push(i);
            }
        }
    }
    let start = circulant(&order, d);
    let adj = adjacency(n, &start);
    if let Some(i) = (0..n).find(|&i| !diverse_at(labels, &adj, i)) {
        return Err(DCliquesError::Invalid(format!(
            "diverse random graph: degree {d} cannot give node {i} every label in its neighbourhood"
        )));
    }
    let mut edges: Vec<_> = start.into_iter().collect();
    let swaps = 20 * edges.len();
    double_edge_swaps(&mut edges, swaps, rng, |set| {
        let adj = adjacency(n, set);
        (0..n).all(|i| diverse_at(labels, &adj, i))
    });
    edges.sort_unstable();
    Ok(edges)
}

/// Ring over the nodes in a random order.
pub fn node_ring(n: usize, rng: &mut ChaCha8Rng) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    let mut e: BTreeSet<(usize, usize)> = BTreeSet::new();
    if n >= 2 {
        for p in 0..n {
            let (a, b) = (order[p], order[(p + 1) % n]);
            e.insert((a.min(b), a.max(b)));
        }
    }
    e.into_iter().collect()
}

/// Grid (no wrap-around) with `ceil(sqrt n)` columns, nodes placed in a
/// random order (the last row may be partial).
pub fn grid(n: usize, rng: &mut ChaCha8Rng) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(rng);
    let cols = (n as f64).sqrt().ceil().max(1.0) as usize;
    let mut e = BTreeSet::new();
    for p in 0..n {
        let mut add = |q: usize| {
            let (a, b) = (order[p], order[q]);
            e.insert((a.min(b), a.max(b)));
        };
        if p % cols + 1 < cols && p + 1 < n {
            add(p + 1);
        }
        if p + cols < n {
            add(p + cols);
        }
    }
    e.into_iter().collect()
}

/// Every pair of nodes.
pub fn fully_connected(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn degrees(n: usize, e: &[(usize, usize)]) -> Vec<usize> {
        let mut d = vec![0; n];
        for &(a, b) in e {
            assert!(a < b);
            d[a] += 1;
            d[b] += 1;
        }
        d
    }

    #[test]
    fn regular_graphs_are_regular() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let e = random_regular(100, 10, &mut rng).unwrap();
        assert_eq!(e.len(), 500);
        assert!(degrees(100, &e).iter().all(|&d| d == 10));
        let e3 = random_regular(10, 3, &mut rng).unwrap();
        assert!(degrees(10, &e3).iter().all(|&d| d == 3));
        assert!(random_regular(9, 3, &mut rng).is_err());
        assert!(random_regular(5, 5, &mut rng).is_err());
        // Not the circulant start any more.
        let again = random_regular(100, 10, &mut ChaCha8Rng::seed_from_u64(5)).unwrap();
        assert_eq!(again, e);
    }

    #[test]
    fn diverse_graph_covers_labels() {
        let labels = LabelDistributions::one_class_per_node(100, 10).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let e = diverse_random(&labels, 10, &mut rng).unwrap();
        assert!(degrees(100, &e).iter().all(|&d| d == 10));
        let set: BTreeSet<_> = e.iter().copied().collect();
        let adj = adjacency(100, &set);
        assert!((0..100).all(|i| diverse_at(&labels, &adj, i)));
        assert!(diverse_random(&labels, 4, &mut rng).is_err());
    }

    #[test]
    fn ring_grid_full() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert!(degrees(10, &node_ring(10, &mut rng))
            .iter()
            .all(|&d| d == 2));
        let g = grid(100, &mut rng);
        assert_eq!(g.len(), 2 * 10 * 9);
        assert_eq!(grid(7, &mut rng).len(), 8);
        assert_eq!(fully_connected(100).len(), 4950);
    }
}
