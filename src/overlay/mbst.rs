//! delta-MBST (\[Marfoq20\] Algorithm 1, Appendix D): an undirected overlay for
//! node-capacitated networks, the best of several bounded-degree spanning
//! trees of the undirected connectivity graph with weight (\[Marfoq20\] Algorithm 1, line 3)
//!
//! ```text
//! w(i,j) = d_o(i,j) + d_o(j,i)   with \[Marfoq20\] eq. (3) delays at degree 1
//!        = s*Tc(i) + s*Tc(j) + l(i,j) + l(j,i)
//!          + max(M/Cup(i), M/Cdn(j), M/A(i,j)) + max(M/Cup(j), M/Cdn(i), M/A(j,i))
//! ```
//!
//! Candidates: (a) a Hamiltonian path in the cube of the MST of `w`
//! (lines 6-9, a 2-MBST approximation); (b) delta-Prim trees for
//! delta = 3 .. N-1 (lines 10-12, \[Marfoq20\] Algorithm 2). The candidate with the
//! smallest cycle time, with the degrees it really has, is returned
//! (line 13). Ties go to the earlier candidate in that order.

use crate::delay::DelayModel;
use crate::overlay::algo::{
    delta_prim, hamiltonian_path_in_cube, minimum_spanning_tree, DenseMatrix,
};
use crate::overlay::{silo_matrix, Overlay};
use crate::timing::undirected_tree_cycle_time;

/// The weight of \[Marfoq20\] Algorithm 1, line 3, ms.
pub fn mbst_weights(model: &DelayModel) -> DenseMatrix {
    silo_matrix(model, |i, j| {
        model.arc_delay(i, j, 1, 1) + model.arc_delay(j, i, 1, 1)
    })
}

/// One candidate of \[Marfoq20\] Algorithm 1 and its cycle time.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// "cube-path" or "delta-prim(d)".
    pub label: String,
    /// The candidate overlay.
    pub overlay: Overlay,
    /// Its cycle time, ms.
    pub cycle_time_ms: f64,
}

/// All candidates of \[Marfoq20\] Algorithm 1, in the order they are considered.
pub fn candidates(model: &DelayModel) -> Vec<Candidate> {
    let n = model.silo_count();
    let w = mbst_weights(model);
    let mut out = Vec::new();
    let mut push = |label: String, edges: Vec<(usize, usize)>| {
        let overlay = Overlay::from_edges("delta-mbst", n, &edges);
        let cycle_time_ms = undirected_tree_cycle_time(&overlay, model);
        out.push(Candidate {
            label,
            overlay,
            cycle_time_ms,
        });
    };
    let tree = minimum_spanning_tree(&w);
    let path = hamiltonian_path_in_cube(n, &tree);
    let path_edges = path
        .windows(2)
        .map(|p| (p[0].min(p[1]), p[0].max(p[1])))
        .collect();
    push("cube-path".into(), path_edges);
    for delta in 3..n.max(3) {
        if let Some(edges) = delta_prim(&w, delta, 0) {
            push(format!("delta-prim({delta})"), edges);
        }
    }
    out
}

/// The delta-MBST overlay: the best candidate of \[Marfoq20\] Algorithm 1 (candidates are
/// trees, ranked by their exact closed-form cycle time; ties go to the
/// earlier candidate).
pub fn delta_mbst(model: &DelayModel) -> Overlay {
    candidates(model)
        .into_iter()
        .reduce(|a, b| {
            if b.cycle_time_ms < a.cycle_time_ms {
                b
            } else {
                a
            }
        })
        .expect("the cube path is always a candidate")
        .overlay
}
