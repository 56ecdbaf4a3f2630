//! MST (\[Marfoq20\] Prop. 3.1): the minimum spanning tree of the undirected
//! connectivity graph with weight `(d_c(i,j) + d_c(j,i)) / 2`, where
//! `d_c(i,j) = s*Tc(i) + l(i,j) + M/A(i,j)` is the edge-capacitated delay
//! (ms). Optimal among undirected overlays when the network is
//! edge-capacitated; evaluated afterwards with the access delays of \[Marfoq20\] eq. (3).

use rayon::prelude::*;

use crate::graph::Overlay;
use crate::net::delay::DelayModel;
use crate::overlay::algo::{minimum_spanning_tree, minimum_spanning_tree_by_rows, DenseMatrix};
use crate::overlay::silo_matrix;

/// The symmetric edge-capacitated weight of \[Marfoq20\] Prop. 3.1, ms.
pub fn edge_capacitated_weights(model: &DelayModel) -> DenseMatrix {
    silo_matrix(model, |i, j| {
        (model.edge_capacitated_delay(i, j) + model.edge_capacitated_delay(j, i)) / 2.0
    })
}

/// Entry `(i, j)` of [`edge_capacitated_weights`] (0 on the diagonal,
/// non-finite weights saturated to `f64::MAX`, as [`silo_matrix`] builds it).
fn edge_capacitated_weight(model: &DelayModel, i: usize, j: usize) -> f64 {
    if i == j {
        return 0.0;
    }
    let v = (model.edge_capacitated_delay(i, j) + model.edge_capacitated_delay(j, i)) / 2.0;
    if v.is_finite() {
        v
    } else {
        f64::MAX
    }
}

/// The MST overlay (undirected): Prim on the symmetric weights
/// ([`minimum_spanning_tree`] on [`edge_capacitated_weights`], the same
/// tree, checked by the tests), with the matrix built pair by pair in
/// cache-friendly tiles: each weight reads `d(i, j)` and `d(j, i)`, and a
/// row at a time the transposed reads missed the cache on every entry
/// (issue 28). One `n x n` matrix (800 MB at 10,000 silos, what RING holds
/// too).
pub fn mst(model: &DelayModel) -> Overlay {
    let n = model.silo_count();
    let w = DenseMatrix::from_fn_symmetric_saturating_par(n, |i, j| {
        edge_capacitated_weight(model, i, j)
    });
    Overlay::from_edges(
        "mst",
        n,
        &minimum_spanning_tree_by_rows(n, |v, row| row.copy_from_slice(w.row(v))),
    )
}

/// The MST overlay with Prim reading the weights row by row from the model
/// (no `n x n` matrix, each transposed read a cache miss at scale: the
/// path before the tiled build, kept for the cross-checks and the benches).
pub fn mst_by_rows(model: &DelayModel) -> Overlay {
    let n = model.silo_count();
    let tree = minimum_spanning_tree_by_rows(n, |v, row| {
        row.par_chunks_mut(1024).enumerate().for_each(|(c, chunk)| {
            for (k, x) in chunk.iter_mut().enumerate() {
                *x = edge_capacitated_weight(model, v, c * 1024 + k);
            }
        });
    });
    Overlay::from_edges("mst", n, &tree)
}

/// The MST overlay built from the full weight matrix (the path before
/// issue 28, kept for the cross-checks and the benches).
pub fn mst_from_matrix(model: &DelayModel) -> Overlay {
    let w = edge_capacitated_weights(model);
    Overlay::from_edges("mst", model.silo_count(), &minimum_spanning_tree(&w))
}
