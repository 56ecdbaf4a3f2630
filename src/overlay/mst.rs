//! MST (\[Marfoq20\] Prop. 3.1): the minimum spanning tree of the undirected
//! connectivity graph with weight `(d_c(i,j) + d_c(j,i)) / 2`, where
//! `d_c(i,j) = s*Tc(i) + l(i,j) + M/A(i,j)` is the edge-capacitated delay
//! (ms). Optimal among undirected overlays when the network is
//! edge-capacitated; evaluated afterwards with the access delays of \[Marfoq20\] eq. (3).

use crate::delay::DelayModel;
use crate::overlay::algo::{minimum_spanning_tree, DenseMatrix};
use crate::overlay::{silo_matrix, Overlay};

/// The symmetric edge-capacitated weight of \[Marfoq20\] Prop. 3.1, ms.
pub fn edge_capacitated_weights(model: &DelayModel) -> DenseMatrix {
    silo_matrix(model, |i, j| {
        (model.edge_capacitated_delay(i, j) + model.edge_capacitated_delay(j, i)) / 2.0
    })
}

/// The MST overlay (undirected).
pub fn mst(model: &DelayModel) -> Overlay {
    let w = edge_capacitated_weights(model);
    Overlay::from_edges("mst", model.silo_count(), &minimum_spanning_tree(&w))
}
