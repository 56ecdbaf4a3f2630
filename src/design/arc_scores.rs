//! The candidates of one augmentation step: which keep the cycle time
//! ([`super::cycle_screen`]), and bounds on their spectral gaps from a few
//! sparse products ([`crate::mixing::krylov`]), so that only the
//! candidates that can win are scored exactly.
//!
//! Exact scores are the ones the augmentation always used: the gap of the
//! dense local-degree matrix by [`crate::mixing::spectral_gap`] up to
//! [`DENSE_MAX`] silos (bit-identical values, so identical choices), and
//! for larger symmetric overlays the Lanczos SLEM to 1e-12. Up to
//! [`DENSE_MAX`] silos a symmetric candidate also has a fast gap
//! ([`Current::fast_gap`]: tridiagonalisation and Sturm bisection for the
//! two eigenvalues that decide the SLEM, within [`FAST_GAP_ERROR`] of the
//! exact gap); the augmentation computes the exact gap only of the
//! candidates whose fast gap could reach the best exact score so far, so
//! its choices are those of the exact scores (choosing by the fast gaps
//! themselves would not be: candidates that tie exactly, such as two
//! symmetric leaves of a tree, are told apart by rounding, which differs
//! between the two methods; it changed the augmented delta-MBST of AWS
//! North America and Geant).

use crate::graph::Overlay;
use crate::mixing::consensus::local_degree;
use crate::mixing::krylov::{
    dominant_ritz_vectors, krylov_ritz, lanczos_slem, largest_modulus, seeded_vector, PatchedRows,
    SparseMatrix, SpectralError,
};
use crate::mixing::measures::symmetric_stochastic_slem;
use crate::mixing::spectral_gap;
use crate::mixing::spectrum::symmetric_eigen;
use crate::net::delay::DelayModel;

/// Largest number of silos whose candidates are scored with the dense
/// eigenvalue solver.
pub const DENSE_MAX: usize = 400;

/// Largest difference between [`Current::fast_gap`] and
/// [`Current::exact_gap`] the augmentation allows for: both are backward
/// stable, and they differ by at most 1e-14 on the tests' random
/// local-degree matrices up to 60 silos; three orders of magnitude of
/// margin for up to [`DENSE_MAX`] silos.
pub const FAST_GAP_ERROR: f64 = 1e-11;

/// Depth of the Krylov subspaces that bound a candidate's gap.
const KRYLOV_DEPTH: usize = 3;

/// The current overlay of an augmentation with what its candidates share,
/// on the model its candidates are timed on.
pub struct Current<'m> {
    /// The overlay.
    pub overlay: Overlay,
    /// Whether candidates are edges (both arcs).
    pub undirected: bool,
    in_nb: Vec<Vec<usize>>,
    out_nb: Vec<Vec<usize>>,
    /// Local-degree consensus matrix, sparse.
    w: SparseMatrix,
    /// Whether `w` is symmetric (then Krylov bounds are rigorous).
    pub symmetric: bool,
    /// Start vectors of the Krylov bounds.
    starts: Vec<Vec<f64>>,
    /// The model every candidate is timed on.
    model: &'m DelayModel,
    /// \[Marfoq20\] eq. (3) delay of every arc `x -> out_nb[x][k]` on
    /// `model` at the current degrees (what [`Self::changed_arcs`]
    /// compares with), ms.
    out_delays: Vec<Vec<f64>>,
}

impl<'m> Current<'m> {
    /// Prepares `overlay`, whose candidates are timed on `model`.
    ///
    /// # Errors
    /// A spectral computation of the start vectors fails.
    pub fn new(
        overlay: Overlay,
        undirected: bool,
        model: &'m DelayModel,
    ) -> Result<Current<'m>, SpectralError> {
        let n = overlay.silo_count();
        let dense = local_degree(&overlay);
        let d = dense.as_slice();
        let symmetric =
            (0..n).all(|i| (0..i).all(|j| (d[i * n + j] - d[j * n + i]).abs() <= 1e-12));
        let w = SparseMatrix::from_dense(n, d);
        let starts = if n <= 2 {
            Vec::new()
        } else if symmetric && n <= DENSE_MAX {
            // Extreme eigenvectors on 1⊥ from one dense solve.
            let mut m = nalgebra::DMatrix::from_row_slice(n, n, d);
            m.add_scalar_mut(-1.0 / n as f64);
            let e = symmetric_eigen(m)?;
            let (mut hi, mut lo) = (0, 0);
            for k in 0..n {
                if e.eigenvalues[k] > e.eigenvalues[hi] {
                    hi = k;
                }
                if e.eigenvalues[k] < e.eigenvalues[lo] {
                    lo = k;
                }
            }
            vec![
                e.eigenvectors.column(hi).iter().copied().collect(),
                e.eigenvectors.column(lo).iter().copied().collect(),
            ]
        } else if symmetric {
            let e = lanczos_slem(&w, &[], 1e-10, n)?;
            vec![e.largest_vector, e.smallest_vector]
        } else {
            let (re, im) = dominant_ritz_vectors(&w, 40.min(n - 1))?;
            vec![re, im, seeded_vector(n, 3)]
        };
        let out_nb = overlay.out_neighbours();
        let out_delays = out_delays(&overlay, &out_nb, model);
        Ok(Current {
            model,
            out_delays,
            in_nb: overlay.in_neighbours(),
            out_nb,
            overlay,
            undirected,
            w,
            symmetric,
            starts,
        })
    }

    /// Arcs the candidate `a -> b` adds (and `b -> a` when undirected).
    pub fn added(&self, a: usize, b: usize) -> Vec<(usize, usize)> {
        self.added_arcs(a, b).as_slice().to_vec()
    }

    /// [`Self::added`] without an allocation (a slice of a pair).
    fn added_arcs(&self, a: usize, b: usize) -> AddedArcs {
        AddedArcs {
            arcs: [(a, b), (b, a)],
            len: if self.undirected { 2 } else { 1 },
        }
    }

    fn degrees_with(&self, a: usize, b: usize) -> impl Fn(usize) -> (usize, usize) + '_ {
        let o = &self.overlay;
        let und = self.undirected;
        move |i: usize| {
            let out = o.out_degree(i) + usize::from(i == a) + usize::from(und && i == b);
            let inn = o.in_degree(i) + usize::from(i == b) + usize::from(und && i == a);
            (out, inn)
        }
    }

    /// Every arc of the candidate that is new or whose \[Marfoq20\] eq. (3)
    /// delay grew with the degrees, with its new delay, ms.
    ///
    /// The delays at the current degrees are computed once per overlay
    /// (in [`Self::new`]), not once per candidate.
    pub fn changed_arcs(&self, a: usize, b: usize) -> Vec<(usize, usize, f64)> {
        let model = self.model;
        let deg = self.degrees_with(a, b);
        let delays = &self.out_delays;
        let mut out = Vec::new();
        for &(u, v) in self.added_arcs(a, b).as_slice() {
            out.push((u, v, model.arc_delay(u, v, deg(u).0, deg(v).1)));
        }
        // Touched arcs `(u, v)` with their delay at the current degrees.
        let o = &self.overlay;
        let mut touched: Vec<(usize, usize, f64)> = Vec::new();
        let ends: &[usize] = if self.undirected { &[a, b] } else { &[] };
        for &x in [a].iter().chain(ends) {
            let out = self.out_nb[x].iter().zip(&delays[x]);
            touched.extend(out.map(|(&v, &d)| (x, v, d)));
        }
        for &y in [b].iter().chain(ends) {
            for &u in &self.in_nb[y] {
                let known = self.out_nb[u].iter().position(|&v| v == y);
                let d = known.map_or_else(
                    || model.arc_delay(u, y, o.out_degree(u), o.in_degree(y)),
                    |k| delays[u][k],
                );
                touched.push((u, y, d));
            }
        }
        touched.sort_unstable_by_key(|&(u, v, _)| (u, v));
        touched.dedup_by_key(|&mut (u, v, _)| (u, v));
        for (u, v, old) in touched {
            let new = model.arc_delay(u, v, deg(u).0, deg(v).1);
            if new > old {
                out.push((u, v, new));
            }
        }
        out
    }

    /// The rows of the candidate's local-degree matrix that differ from the
    /// current one (rows of silos whose in-neighbours or in-degree, or an
    /// in-neighbour's in-degree, changed), in column order with the
    /// diagonal `1 - sum` as [`local_degree`] computes it.
    fn changed_rows(&self, a: usize, b: usize) -> Vec<(usize, Vec<(usize, f64)>)> {
        let deg = self.degrees_with(a, b);
        let added = self.added_arcs(a, b);
        let added = added.as_slice();
        let heads: &[usize] = if self.undirected { &[a, b] } else { &[b] };
        let mut rows: Vec<usize> = heads.to_vec();
        for &h in heads {
            rows.extend(self.out_nb[h].iter().copied());
        }
        rows.extend(added.iter().map(|&(_, v)| v));
        rows.sort_unstable();
        rows.dedup();
        rows.into_iter()
            .map(|i| {
                let mut cols: Vec<usize> = self.in_nb[i].clone();
                for &(u, v) in added {
                    if v == i {
                        cols.push(u);
                    }
                }
                cols.sort_unstable();
                cols.dedup();
                let mut entries: Vec<(usize, f64)> = cols
                    .iter()
                    .map(|&j| (j, 1.0 / (1.0 + deg(i).1.max(deg(j).1) as f64)))
                    .collect();
                let off: f64 = entries.iter().map(|e| e.1).sum();
                entries.push((i, 1.0 - off));
                (i, entries)
            })
            .collect()
    }

    /// A bound on the candidate's spectral gap: for symmetric matrices a
    /// rigorous upper bound (Ritz values lie inside the spectrum), else an
    /// estimate.
    ///
    /// # Errors
    /// The small projected eigenproblem does not converge.
    pub fn gap_bound(&self, a: usize, b: usize) -> Result<f64, SpectralError> {
        if self.starts.is_empty() {
            return Ok(1.0);
        }
        let rows = self.changed_rows(a, b);
        let op = PatchedRows {
            base: &self.w,
            rows: &rows,
        };
        let ritz = krylov_ritz(&op, &self.starts, KRYLOV_DEPTH, self.symmetric)?;
        Ok(1.0 - largest_modulus(&ritz).min(1.0))
    }

    /// The candidate overlay.
    pub fn with(&self, a: usize, b: usize) -> Overlay {
        let mut arcs = self.overlay.arcs().to_vec();
        arcs.extend_from_slice(self.added_arcs(a, b).as_slice());
        let mut o = Overlay::from_arcs(&self.overlay.name, self.overlay.silo_count(), arcs);
        o.protocol = self.overlay.protocol;
        o
    }

    /// The candidate's spectral gap within [`FAST_GAP_ERROR`] of
    /// [`Self::exact_gap`], at about half its work, where the exact score
    /// is the dense symmetric one (symmetric candidates up to
    /// [`DENSE_MAX`] silos): tridiagonalisation and Sturm bisection for the
    /// two eigenvalues that decide the SLEM instead of every eigenvalue
    /// ([`symmetric_stochastic_slem`]). `None` elsewhere. The augmentation
    /// uses it only to pass over candidates that cannot beat the best
    /// exact score, so its choices stay those of the exact scores.
    ///
    /// # Errors
    /// As [`Self::exact_gap`].
    pub fn fast_gap(&self, a: usize, b: usize) -> Result<Option<f64>, SpectralError> {
        let n = self.overlay.silo_count();
        if !(self.symmetric && self.undirected && n <= DENSE_MAX) {
            return Ok(None);
        }
        let o = self.with(a, b);
        Ok(Some(
            1.0 - symmetric_stochastic_slem(n, local_degree(&o).as_slice())?,
        ))
    }

    /// The candidate's exact spectral gap (see the module docs).
    ///
    /// # Errors
    /// Lanczos does not converge (large symmetric overlays).
    pub fn exact_gap(&self, a: usize, b: usize) -> Result<f64, SpectralError> {
        let n = self.overlay.silo_count();
        if n <= DENSE_MAX || !self.symmetric {
            let o = self.with(a, b);
            return Ok(spectral_gap(n, local_degree(&o).as_slice())?);
        }
        let rows = self.changed_rows(a, b);
        let op = PatchedRows {
            base: &self.w,
            rows: &rows,
        };
        let starts: Vec<&[f64]> = self.starts.iter().map(Vec::as_slice).collect();
        let e = lanczos_slem(&op, &starts, 1e-12, n)?;
        Ok(1.0 - e.slem())
    }
}

/// The delays on `model` of the arcs of `overlay` out of every silo
/// (`out_nb`, its out-neighbours), at its degrees, ms.
fn out_delays(overlay: &Overlay, out_nb: &[Vec<usize>], model: &DelayModel) -> Vec<Vec<f64>> {
    let of = |(u, out): (usize, &Vec<usize>)| {
        out.iter()
            .map(|&v| model.arc_delay(u, v, overlay.out_degree(u), overlay.in_degree(v)))
            .collect()
    };
    out_nb.iter().enumerate().map(of).collect()
}

/// The arcs a candidate adds: one, or two for an edge.
struct AddedArcs {
    arcs: [(usize, usize); 2],
    len: usize,
}

impl AddedArcs {
    fn as_slice(&self) -> &[(usize, usize)] {
        &self.arcs[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::scenario::{load_underlay, NetworkSpec};
    use crate::net::underlay::LoadOptions;
    use crate::overlay::build::{build_overlay, BuildOptions};

    /// The fast gap stays within [`FAST_GAP_ERROR`] of the exact one (what
    /// the augmentation's filter relies on), by far, on candidate edges of
    /// trees and 4-regular overlays of the paper's underlays up to Ebone's 87
    /// silos.
    #[test]
    fn fast_gaps_are_within_their_error_of_the_exact_ones() {
        let mut worst = 0.0f64;
        let dir = crate::net::builtin::paper_underlays_dir();
        for name in ["aws-north-america", "geantdistance", "ebone"] {
            let path = dir.join(format!("{name}.gml"));
            let spec = if name.starts_with("aws") {
                name.to_string()
            } else {
                path.to_string_lossy().into_owned()
            };
            let u = load_underlay(Some(&spec), &LoadOptions::default())
                .unwrap_or_else(|e| panic!("{e}"));
            let model = NetworkSpec::default()
                .build(&u)
                .unwrap_or_else(|e| panic!("{e}"));
            for kind in ["delta-mbst", "mst", "regular:k=4"] {
                let k = kind.parse().unwrap_or_else(|e| panic!("{e:?}"));
                let o = build_overlay(k, &u, &model, &BuildOptions::default())
                    .unwrap_or_else(|e| panic!("{e}"));
                let n = o.silo_count();
                let current = Current::new(o, true, &model).unwrap_or_else(|e| panic!("{e}"));
                assert!(current.symmetric, "{name} {kind}");
                // About 40 candidate edges, spread over the pairs.
                let pairs: Vec<(usize, usize)> = (0..n)
                    .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                    .collect();
                for &(a, b) in pairs.iter().step_by(pairs.len() / 40 + 1) {
                    let fast = current.fast_gap(a, b).unwrap_or_else(|e| panic!("{e}"));
                    let fast = fast.unwrap_or_else(|| panic!("{name} {kind}: no fast gap"));
                    let exact = current.exact_gap(a, b).unwrap_or_else(|e| panic!("{e}"));
                    worst = worst.max((fast - exact).abs());
                }
            }
        }
        assert!(
            worst <= FAST_GAP_ERROR / 100.0,
            "worst difference {worst:e}"
        );
    }
}
