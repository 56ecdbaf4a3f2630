//! Property tests on random strongly connected digraphs (n in 1..40).

use super::support::{assert_valid, brute_force, close, random_sc, scale, Weights};
use crate::maxplus::{howard, karp, recurrence_slope};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Relative agreement demanded between algorithms and with brute force.
const TOL: f64 = 1e-9;

fn weights() -> impl Strategy<Value = Weights> {
    prop_oneof![
        Just(Weights::SmallInts),
        Just(Weights::Equal),
        Just(Weights::Spread),
        Just(Weights::Uniform),
    ]
}

/// `(n, extra arcs, weights, seed)`; extra arcs in 0..=3n.
fn graph_params(max_n: usize) -> impl Strategy<Value = (usize, usize, Weights, u64)> {
    (1..max_n).prop_flat_map(|n| (Just(n), 0..=3 * n, weights(), any::<u64>()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn karp_and_howard_agree_with_valid_circuits((n, extra, w, seed) in graph_params(40)) {
        let g = random_sc(n, extra, w, seed);
        let k = karp(&g).unwrap();
        let h = howard(&g).unwrap();
        prop_assert!(close(k.value, h.value, TOL, scale(&g)), "karp {} howard {}", k.value, h.value);
        assert_valid(&g, &k, TOL);
        assert_valid(&g, &h, TOL);
    }

    #[test]
    fn small_graphs_match_brute_force((n, extra, w, seed) in graph_params(8)) {
        let g = random_sc(n, extra, w, seed);
        let exact = brute_force(&g).expect("strongly connected with arcs");
        let s = scale(&g);
        for ct in [karp(&g).unwrap(), howard(&g).unwrap()] {
            prop_assert!(close(ct.value, exact, TOL, s), "got {} brute force {exact}", ct.value);
            assert_valid(&g, &ct, TOL);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// `tau <= slope <= tau + (span(x0) + (n - 1)(w_max - w_min)) / K`
    /// (bound proved in `recurrence.rs`), plus rounding slack.
    #[test]
    fn recurrence_slope_brackets_tau(
        (n, extra, w, seed) in graph_params(40),
        steps in 2000usize..=5000,
    ) {
        let g = random_sc(n, extra, w, seed);
        let tau = howard(&g).unwrap().value;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let x0: Vec<f64> = (0..n).map(|_| rng.gen_range(-50.0..50.0)).collect();
        let slope = recurrence_slope(&g, &x0, steps);
        let span = |xs: &mut dyn Iterator<Item = f64>| {
            let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| (l.min(x), h.max(x)));
            hi - lo
        };
        let x_span = span(&mut x0.iter().copied());
        let w_span = span(&mut g.arcs().iter().map(|a| a.weight));
        let bound = (x_span + (n - 1) as f64 * w_span) / steps as f64;
        // Rounding: t(K) reaches about K * w_max + 50; each step rounds once.
        let slack = 1e-12 * (scale(&g) + 50.0);
        prop_assert!(slope >= tau - slack, "slope {slope} < tau {tau}");
        prop_assert!(slope <= tau + bound + slack, "slope {slope} > tau {tau} + {bound}");
    }
}
