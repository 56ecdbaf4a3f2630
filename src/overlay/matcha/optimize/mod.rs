//! The two optimisation problems of MATCHA (\[Wang19\] Sec. 4;
//! \[Marfoq20\] App. G.3), solved with certified optimality gaps.
//!
//! 1. **Activation probabilities**: maximise `lambda_2(sum_j p_j L_j)` over
//!    `0 <= p_j <= 1`, `sum_j p_j <= B` (`B = Cb * #matchings`). `lambda_2` is
//!    concave in `p`; we run projected gradient ascent with backtracking on the
//!    soft-min smoothing `f_mu(p) = -mu log sum_{i>=2} exp(-lambda_i / mu)`
//!    (`lambda_2 - mu log(n-1) <= f_mu <= lambda_2`), lowering `mu` as the
//!    smoothed problem converges. The gradient is `g_j = <L_j, Z>` with
//!    `Z = sum_i w_i v_i v_i^T` (softmax weights, eigenvectors orthogonal to
//!    the all-ones vector), a point of the spectraplex; hence by weak duality
//!    `lambda_2(L(q)) <= <L(q), Z> = g . q` for every feasible `q`, and
//!    `max_{q feasible} g . q` (a fractional knapsack) is a certified upper
//!    bound on the optimum. The reported gap is upper bound minus the best
//!    `lambda_2` found.
//! 2. **Mixing parameter**: minimise `rho` subject to `alpha^2 <= beta`,
//!    `I - 2 alpha Lbar + beta (Lbar^2 + 2 Ltilde) - J/n <= rho I`, with
//!    `Lbar = sum p_j L_j`, `Ltilde = sum p_j (1 - p_j) L_j`. The matrix grows
//!    with `beta` (its coefficient is PSD), so `beta = alpha^2` and the problem
//!    is the 1-D convex `min_alpha lambda_max(A(alpha))`: golden-section search,
//!    certified by the supporting lines at the final bracket's ends.
//!
//! Matching Laplacians satisfy `L_j^2 = 2 L_j`, which gives
//! `E[L^2] = Lbar^2 + 2 Ltilde` for independent activations.

use nalgebra::DMatrix;
use serde::Serialize;

use super::MatchaError;
use crate::mixing::spectrum::{symmetric_eigen, symmetric_eigenvalues, SpectrumError};

/// Stopping rules of the activation-probability solver.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SolverOptions {
    /// Stop when (upper bound - lambda_2) <= `rel_tol` * lambda_2.
    pub rel_tol: f64,
    /// Largest number of eigen-decompositions (gradient evaluations).
    pub max_evals: usize,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            rel_tol: 1e-3,
            max_evals: 3000,
        }
    }
}

/// Optimal activation probabilities, with their certificate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActivationSolution {
    /// `p_j`, one per matching.
    pub probabilities: Vec<f64>,
    /// `lambda_2(sum_j p_j L_j)` at the returned `p` (a lower bound on the optimum).
    pub lambda2: f64,
    /// Certified upper bound on the optimum.
    pub upper_bound: f64,
    /// Eigen-decompositions used.
    pub evals: usize,
}

impl ActivationSolution {
    /// Absolute optimality gap (upper bound - lambda_2).
    pub fn gap(&self) -> f64 {
        (self.upper_bound - self.lambda2).max(0.0)
    }
    /// Gap relative to lambda_2.
    pub fn relative_gap(&self) -> f64 {
        self.gap() / self.lambda2
    }
}

/// The optimal mixing parameter, with its certificate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MixingSolution {
    /// `alpha`: the mixing matrix of a round is `W = I - alpha L`.
    pub alpha: f64,
    /// `beta = alpha^2`.
    pub beta: f64,
    /// `rho = || E[W^T W] - J/n ||_2` at `alpha`.
    pub rho: f64,
    /// Certified lower bound on the optimal `rho`.
    pub rho_lower_bound: f64,
}

/// `sum_j w_j L_j`, a dense `n x n` Laplacian.
pub fn weighted_laplacian(n: usize, matchings: &[Vec<(usize, usize)>], w: &[f64]) -> DMatrix<f64> {
    let mut l = DMatrix::zeros(n, n);
    for (m, &wj) in matchings.iter().zip(w) {
        if wj == 0.0 {
            continue;
        }
        for &(a, b) in m {
            l[(a, a)] += wj;
            l[(b, b)] += wj;
            l[(a, b)] -= wj;
            l[(b, a)] -= wj;
        }
    }
    l
}

/// Eigenpairs of a Laplacian restricted to the complement of the all-ones
/// vector: `n - 1` values ascending, with their vectors as columns.
struct Spectrum {
    values: Vec<f64>,
    vectors: DMatrix<f64>,
}

fn shifted(l: &DMatrix<f64>) -> (DMatrix<f64>, f64) {
    let n = l.nrows();
    // lambda_max(L) <= trace(L) for PSD L, so the all-ones direction, moved
    // to eigenvalue `shift`, is the largest one.
    let shift = l.trace() + 1.0;
    let mut a = l.clone();
    a.add_scalar_mut(shift / n as f64);
    (a, shift)
}

fn spectrum(l: &DMatrix<f64>) -> Result<Spectrum, SpectrumError> {
    let n = l.nrows();
    let (a, _) = shifted(l);
    let e = symmetric_eigen(a)?;
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&x, &y| e.eigenvalues[x].total_cmp(&e.eigenvalues[y]));
    idx.truncate(n - 1);
    let values = idx.iter().map(|&i| e.eigenvalues[i]).collect();
    let vectors = DMatrix::from_fn(n, n - 1, |r, c| e.eigenvectors[(r, idx[c])]);
    Ok(Spectrum { values, vectors })
}

/// `lambda_2(sum_j p_j L_j)`, the algebraic connectivity (0 if disconnected).
///
/// # Errors
/// The bounded eigenvalue iteration fails ([`crate::mixing::spectrum`]):
/// a non-finite probability.
pub fn lambda2(
    n: usize,
    matchings: &[Vec<(usize, usize)>],
    p: &[f64],
) -> Result<f64, SpectrumError> {
    if n < 2 {
        return Ok(0.0);
    }
    let (a, _) = shifted(&weighted_laplacian(n, matchings, p));
    Ok(symmetric_eigenvalues(&a)?
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min))
}

/// `max_{0 <= q <= 1, sum q <= budget} c . q` for `c >= 0` (greedy).
pub fn knapsack(c: &[f64], budget: f64) -> f64 {
    let mut s: Vec<f64> = c.to_vec();
    s.sort_by(|a, b| b.total_cmp(a));
    let mut left = budget;
    let mut total = 0.0;
    for v in s {
        if left <= 0.0 || v <= 0.0 {
            break;
        }
        let take = left.min(1.0);
        total += take * v;
        left -= take;
    }
    total
}

/// Euclidean projection onto `{0 <= q <= 1, sum q <= budget}`.
pub fn project(y: &[f64], budget: f64) -> Vec<f64> {
    let clip = |t: f64| -> Vec<f64> { y.iter().map(|v| (v - t).clamp(0.0, 1.0)).collect() };
    let q = clip(0.0);
    if q.iter().sum::<f64>() <= budget {
        return q;
    }
    let (mut lo, mut hi) = (0.0, y.iter().copied().fold(0.0, f64::max));
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if clip(mid).iter().sum::<f64>() > budget {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-15 * (1.0 + hi) {
            break;
        }
    }
    clip(hi)
}

struct Eval {
    /// Smoothed objective.
    f: f64,
    /// Gradient of the smoothed objective, `<L_j, Z>`.
    g: Vec<f64>,
    /// Exact lambda_2.
    lambda2: f64,
}

fn evaluate(
    n: usize,
    matchings: &[Vec<(usize, usize)>],
    p: &[f64],
    mu: f64,
) -> Result<Eval, SpectrumError> {
    let s = spectrum(&weighted_laplacian(n, matchings, p))?;
    let l2 = s.values[0];
    let e: Vec<f64> = s.values.iter().map(|&v| (-(v - l2) / mu).exp()).collect();
    let z: f64 = e.iter().sum();
    let f = l2 - mu * z.ln();
    let mut g = vec![0.0; matchings.len()];
    for (i, &ei) in e.iter().enumerate() {
        let w = ei / z;
        if w < 1e-14 {
            continue;
        }
        let v = s.vectors.column(i);
        for (gj, m) in g.iter_mut().zip(matchings) {
            *gj += w * m.iter().map(|&(a, b)| (v[a] - v[b]).powi(2)).sum::<f64>();
        }
    }
    Ok(Eval { f, g, lambda2: l2 })
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Maximises `lambda_2(sum_j p_j L_j)` s.t. `0 <= p_j <= 1`,
/// `sum_j p_j <= budget * matchings.len()` (MATCHA's first problem).
///
/// # Errors
/// [`MatchaError::BadBudget`] unless `MIN_BUDGET <= budget <= 1` ([`super::MIN_BUDGET`]);
/// [`MatchaError::Disconnected`] when the union of the matchings is disconnected.
pub fn activation_probabilities(
    n: usize,
    matchings: &[Vec<(usize, usize)>],
    budget: f64,
    opts: &SolverOptions,
) -> Result<ActivationSolution, MatchaError> {
    if !super::budget_ok(budget) {
        return Err(MatchaError::BadBudget(budget));
    }
    let m = matchings.len();
    if m == 0 {
        return Err(MatchaError::NoEdges);
    }
    let b = budget * m as f64;
    let ones = vec![1.0; m];
    let full = lambda2(n, matchings, &ones)?;
    if full <= 1e-9 * (1.0 + m as f64) {
        return Err(MatchaError::Disconnected);
    }
    if budget >= 1.0 {
        // lambda_2 is non-decreasing in every p_j: p = 1 is optimal.
        return Ok(ActivationSolution {
            probabilities: ones,
            lambda2: full,
            upper_bound: full,
            evals: 1,
        });
    }
    let mut p = vec![budget; m];
    let ln_n = ((n - 1).max(2) as f64).ln();
    let mut mu = 0.1 * full / ln_n;
    let mu_min = 1e-9 * full;
    let mut cur = evaluate(n, matchings, &p, mu)?;
    let mut evals = 1;
    let (mut best_p, mut best_lb) = (p.clone(), cur.lambda2);
    let mut best_ub = knapsack(&cur.g, b);
    let mut t = 1.0 / full.max(1e-12);
    while evals < opts.max_evals {
        if best_ub - best_lb <= opts.rel_tol * best_lb {
            break;
        }
        // Frank-Wolfe gap of the smoothed problem: once it is small against
        // the smoothing error, sharpen the smoothing.
        let fw = knapsack(&cur.g, b) - dot(&cur.g, &p);
        if fw <= 0.25 * mu * ln_n && mu > mu_min {
            mu = (mu * 0.25).max(mu_min);
            cur = evaluate(n, matchings, &p, mu)?;
            evals += 1;
            continue;
        }
        // Projected gradient step with backtracking.
        loop {
            let y: Vec<f64> = p.iter().zip(&cur.g).map(|(pi, gi)| pi + t * gi).collect();
            let q = project(&y, b);
            let d: Vec<f64> = q.iter().zip(&p).map(|(a, b)| a - b).collect();
            let dd = dot(&d, &d);
            let next = evaluate(n, matchings, &q, mu)?;
            evals += 1;
            if next.lambda2 > best_lb {
                best_lb = next.lambda2;
                best_p.clone_from(&q);
            }
            best_ub = best_ub.min(knapsack(&next.g, b));
            if next.f >= cur.f + dot(&cur.g, &d) - dd / (2.0 * t) - 1e-15 * cur.f.abs() || dd == 0.0
            {
                p = q;
                cur = next;
                t *= 1.5;
                break;
            }
            t *= 0.5;
            if evals >= opts.max_evals {
                break;
            }
        }
    }
    Ok(ActivationSolution {
        probabilities: best_p,
        lambda2: best_lb,
        upper_bound: best_ub.max(best_lb),
        evals,
    })
}

/// The exact optimum of MATCHA's first problem on a 1-factorisation of the
/// complete graph `K_n` ([`super::complete_graph_matchings`], `m` matchings,
/// `m = n - 1` or `n`): every `p_j = budget`, `lambda_2 = budget * n`, with a
/// zero gap.
///
/// Proof: the matchings' Laplacians sum to `L(K_n) = n I - J`, so uniform
/// `p_j = budget` gives `budget (n I - J)`, whose `lambda_2` is `budget * n`.
/// Every matching has `2 floor(n/2)` matched vertices, so for any feasible `q`,
/// `lambda_2(L(q)) <= trace(L(q)) / (n - 1) = 2 floor(n/2) sum q / (n - 1)
/// <= 2 floor(n/2) budget m / (n - 1) = budget * n` (both parities).
pub fn complete_graph_activation(n: usize, matchings: usize, budget: f64) -> ActivationSolution {
    let lambda2 = budget * n as f64;
    ActivationSolution {
        probabilities: vec![budget; matchings],
        lambda2,
        upper_bound: lambda2,
        evals: 0,
    }
}

/// The exact optimum of MATCHA's second problem for uniform probabilities
/// `p` on a 1-factorisation of `K_n`: there `Lbar = p (n I - J)`,
/// `Ltilde = p (1 - p) (n I - J)`, so every eigenvalue of
/// `A(alpha)` off the all-ones vector is
/// `1 - 2 alpha p n + alpha^2 (p^2 n^2 + 2 p (1 - p) n)` (and 0 on it):
/// minimised at `alpha = 1 / (p n + 2 (1 - p))`, where `rho = 1 - alpha p n`.
/// Exact, so the lower bound equals `rho`.
pub fn complete_graph_mixing(n: usize, p: f64) -> MixingSolution {
    let pn = p * n as f64;
    let alpha = 1.0 / (pn + 2.0 * (1.0 - p));
    let rho = (1.0 - alpha * pn).max(0.0);
    MixingSolution {
        alpha,
        beta: alpha * alpha,
        rho,
        rho_lower_bound: rho,
    }
}

/// Minimises `rho = lambda_max(I - 2 alpha Lbar + alpha^2 (Lbar^2 + 2 Ltilde) - J/n)`
/// over `alpha` (MATCHA's second problem, with `beta = alpha^2`).
///
/// # Errors
/// The bounded eigenvalue iteration fails ([`crate::mixing::spectrum`]):
/// a non-finite probability.
pub fn mixing_parameter(
    n: usize,
    matchings: &[Vec<(usize, usize)>],
    p: &[f64],
) -> Result<MixingSolution, SpectrumError> {
    let lbar = weighted_laplacian(n, matchings, p);
    let var: Vec<f64> = p.iter().map(|&q| q * (1.0 - q)).collect();
    let lt = weighted_laplacian(n, matchings, &var);
    let quad = &lbar * &lbar + lt * 2.0;
    let base = DMatrix::<f64>::identity(n, n) - DMatrix::from_element(n, n, 1.0 / n as f64);
    let a_of = |alpha: f64| &base - &lbar * (2.0 * alpha) + &quad * (alpha * alpha);
    let h = |alpha: f64| -> Result<f64, SpectrumError> {
        Ok(symmetric_eigenvalues(&a_of(alpha))?
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max))
    };
    // Value and a subgradient: v^T A'(alpha) v for a top eigenvector v.
    let h_sub = |alpha: f64| -> Result<(f64, f64), SpectrumError> {
        let e = symmetric_eigen(a_of(alpha))?;
        let i = e.eigenvalues.imax();
        let v = e.eigenvectors.column(i);
        let d = &quad * (2.0 * alpha) - &lbar * 2.0;
        Ok((e.eigenvalues[i], (v.transpose() * d * v)[(0, 0)]))
    };
    let lmax = symmetric_eigenvalues(&lbar)?
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .max(1e-12);
    // Bracket: h is convex with h(0) = 1; double until it stops decreasing.
    let mut hi = 1.0 / lmax;
    let mut h_hi = h(hi)?;
    for _ in 0..60 {
        let h2 = h(2.0 * hi)?;
        if h2 >= h_hi {
            hi *= 2.0;
            break;
        }
        hi *= 2.0;
        h_hi = h2;
    }
    let (mut lo, mut up) = (0.0, hi);
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let mut x1 = up - r * (up - lo);
    let mut x2 = lo + r * (up - lo);
    let (mut f1, mut f2) = (h(x1)?, h(x2)?);
    for _ in 0..200 {
        if up - lo <= 1e-9 * up {
            break;
        }
        if f1 <= f2 {
            up = x2;
            x2 = x1;
            f2 = f1;
            x1 = up - r * (up - lo);
            f1 = h(x1)?;
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + r * (up - lo);
            f2 = h(x2)?;
        }
    }
    let (alpha, rho) = if f1 <= f2 { (x1, f1) } else { (x2, f2) };
    let (ha, sa) = h_sub(lo)?;
    let (hb, sb) = h_sub(up)?;
    let la = |x: f64| ha + sa * (x - lo);
    let lb = |x: f64| hb + sb * (x - up);
    let mut cands = vec![lo, up];
    if sa != sb {
        let xc = (hb - ha + sa * lo - sb * up) / (sa - sb);
        if xc > lo && xc < up {
            cands.push(xc);
        }
    }
    let lower = cands
        .into_iter()
        .map(|x| la(x).max(lb(x)))
        .fold(f64::INFINITY, f64::min);
    Ok(MixingSolution {
        alpha,
        beta: alpha * alpha,
        rho,
        rho_lower_bound: lower.min(rho),
    })
}

#[cfg(test)]
mod tests;
