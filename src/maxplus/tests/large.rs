//! Howard on a large random overlay just runs (timings are in benches).

use super::support::{assert_valid, random_sc, Weights};
use crate::maxplus::howard;

#[test]
fn howard_on_ten_thousand_nodes() {
    let n = 10_000;
    let g = random_sc(n, 100_000 - n, Weights::Uniform, 42);
    let ct = howard(&g).expect("strongly connected");
    assert!(ct.value > 0.0 && ct.value < 100.0);
    assert_valid(&g, &ct, 1e-9);
}

#[test]
fn howard_on_large_graph_with_ties() {
    let n = 5_000;
    let g = random_sc(n, 50_000 - n, Weights::SmallInts, 7);
    let ct = howard(&g).expect("strongly connected");
    assert_valid(&g, &ct, 1e-9);
}
