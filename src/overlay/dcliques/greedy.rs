//! Clique construction: Greedy Swap (\[Bellet21\] Algorithm 2) and the extreme-skew
//! one-class-per-node construction (\[Bellet21\] Algorithm 5).

use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::labels::LabelDistributions;
use super::DCliquesError;

/// Greedy Swap (\[Bellet21\] Algorithm 2, with its printed pseudocode corrected:
/// line 11 evaluates `C2 \ {j} u {i}`, and the `if swaps` test runs once
/// per step):
/// random cliques of at most `max_size` nodes (the leftover nodes form the
/// last, smaller clique), then `steps` times: pick two distinct random
/// cliques, list every swap `(i in C1, j in C2)` that lowers
/// `skew(C1) + skew(C2)` and apply one of them uniformly at random.
/// `steps = 0` gives the "random cliques" baseline.
pub fn greedy_swap(
    labels: &LabelDistributions,
    max_size: usize,
    steps: usize,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<Vec<usize>>, DCliquesError> {
    if max_size == 0 {
        return Err(DCliquesError::Invalid(
            "clique size M must be positive".into(),
        ));
    }
    let n = labels.node_count();
    let mut nodes: Vec<usize> = (0..n).collect();
    nodes.shuffle(rng);
    let mut cliques: Vec<Vec<usize>> = nodes.chunks(max_size).map(<[usize]>::to_vec).collect();
    if cliques.len() < 2 {
        return Ok(cliques);
    }
    let l = labels.label_count();
    let sum_of = |c: &[usize]| {
        let mut s = vec![0.0; l];
        for &i in c {
            for (a, v) in s.iter_mut().zip(labels.node(i)) {
                *a += v;
            }
        }
        s
    };
    let mut sums: Vec<Vec<f64>> = cliques.iter().map(|c| sum_of(c)).collect();
    let mut swaps = Vec::new();
    let mut s1 = vec![0.0; l];
    let mut s2 = vec![0.0; l];
    for _ in 0..steps {
        let a = rng.gen_range(0..cliques.len());
        let mut b = rng.gen_range(0..cliques.len() - 1);
        if b >= a {
            b += 1;
        }
        let (na, nb) = (cliques[a].len(), cliques[b].len());
        let base = labels.skew_of_sum(&sums[a], na) + labels.skew_of_sum(&sums[b], nb);
        swaps.clear();
        for (pi, &i) in cliques[a].iter().enumerate() {
            for (pj, &j) in cliques[b].iter().enumerate() {
                for y in 0..l {
                    let d = labels.node(j)[y] - labels.node(i)[y];
                    s1[y] = sums[a][y] + d;
                    s2[y] = sums[b][y] - d;
                }
                let after = labels.skew_of_sum(&s1, na) + labels.skew_of_sum(&s2, nb);
                // Tolerance: only strict improvements, not rounding noise.
                if after < base - 1e-12 {
                    swaps.push((pi, pj));
                }
            }
        }
        if let Some(&(pi, pj)) = swaps.choose(rng) {
            let (i, j) = (cliques[a][pi], cliques[b][pj]);
            let (pi_row, pj_row) = (labels.node(i), labels.node(j));
            for (y, (vi, vj)) in pi_row.iter().zip(pj_row).enumerate() {
                sums[a][y] += vj - vi;
                sums[b][y] -= vj - vi;
            }
            cliques[a][pi] = j;
            cliques[b][pj] = i;
        }
    }
    for c in &mut cliques {
        c.sort_unstable();
    }
    Ok(cliques)
}

/// Extreme skew (\[Bellet21\] Algorithm 5): every node holds one class (its
/// [`LabelDistributions::dominant`] label). Cliques are built by repeatedly
/// adding a random remaining node whose class is not yet in the clique,
/// until the clique holds every class (clique size `L`, skew 0) or no such
/// node is left (the last cliques may then be smaller).
///
/// Errors if some node holds more than one label.
pub fn one_class_cliques(
    labels: &LabelDistributions,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<Vec<usize>>, DCliquesError> {
    let l = labels.label_count();
    let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); l];
    for i in 0..labels.node_count() {
        if labels.support(i).count() != 1 {
            return Err(DCliquesError::Invalid(format!(
                "one-class construction: node {i} holds more than one label"
            )));
        }
        by_class[labels.dominant(i)].push(i);
    }
    for v in &mut by_class {
        v.shuffle(rng);
    }
    let mut cliques = Vec::new();
    while by_class.iter().any(|v| !v.is_empty()) {
        let mut c: Vec<usize> = by_class.iter_mut().filter_map(Vec::pop).collect();
        c.sort_unstable();
        cliques.push(c);
    }
    Ok(cliques)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn total_skew(d: &LabelDistributions, cs: &[Vec<usize>]) -> f64 {
        cs.iter().map(|c| d.skew(c)).sum()
    }

    #[test]
    fn greedy_swap_partitions_and_reduces_skew() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let d = LabelDistributions::shards(100, 10, 600, 2, &mut rng).unwrap();
        let random = greedy_swap(&d, 10, 0, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
        let swapped = greedy_swap(&d, 10, 1000, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
        for cs in [&random, &swapped] {
            let mut all: Vec<usize> = cs.iter().flatten().copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..100).collect::<Vec<_>>());
            assert!(cs.iter().all(|c| c.len() == 10));
        }
        // Same initial cliques (same seed): swaps only ever lower the sum.
        assert!(total_skew(&d, &swapped) < 0.5 * total_skew(&d, &random));
        // Deterministic.
        let again = greedy_swap(&d, 10, 1000, &mut ChaCha8Rng::seed_from_u64(3)).unwrap();
        assert_eq!(again, swapped);
    }

    #[test]
    fn leftover_clique_and_bad_size() {
        let d = LabelDistributions::one_class_per_node(23, 10).unwrap();
        let cs = greedy_swap(&d, 10, 50, &mut ChaCha8Rng::seed_from_u64(0)).unwrap();
        let mut sizes: Vec<usize> = cs.iter().map(Vec::len).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![3, 10, 10]);
        assert!(greedy_swap(&d, 0, 1, &mut ChaCha8Rng::seed_from_u64(0)).is_err());
    }

    #[test]
    fn one_class_cliques_have_zero_skew() {
        let d = LabelDistributions::one_class_per_node(100, 10).unwrap();
        let cs = one_class_cliques(&d, &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
        assert_eq!(cs.len(), 10);
        for c in &cs {
            assert_eq!(c.len(), 10);
            assert!(d.skew(c) < 1e-12);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let two = LabelDistributions::shards(100, 10, 600, 2, &mut rng).unwrap();
        assert!(one_class_cliques(&two, &mut rng).is_err());
    }
}
