#!/usr/bin/env python3
"""Independent check of fedtopo's MATCHA activation probabilities.

For each design written by `fedtopo overlay ... --matcha-design` (see dump.sh)
this script solves MATCHA's first problem ([Wang19] eq. (5)) again with cvxpy,
on the *same* matchings and budget:

    maximise   lambda_2( sum_j p_j L_j )
    subject to 0 <= p_j <= 1,  sum_j p_j <= Cb * M        (M = number of matchings)

lambda_2 is written as lambda_min(V^T L(p) V), V an orthonormal basis of the
complement of the all-ones vector. Solvers: Clarabel (interior point, tight
tolerances: the reference optimum) and SCS with its default settings (a
first-order solver; what a plain `problem.solve()` used in older cvxpy).

It reports, per design:
  * lambda_2 at our p (recomputed here with numpy), our certified upper bound,
    lambda_2 at Clarabel's / SCS's p (made feasible: clipped to [0, 1] and
    scaled down if over budget) and Clarabel's optimal value;
  * the budget used, sum_j p_j / (Cb M);
  * the expected active arcs per round 2 sum_j p_j |M_j| (each active
    undirected edge is two arcs), ours and the solvers';
  * the range of 2 sum_j p_j |M_j| over the near-optimal face
    { p feasible : lambda_2(p) >= (1 - eps) lambda_2* } for eps = 1e-3 (our
    solver's tolerance) and eps = 1e-6: when the optimum is not unique,
    different solvers may return points with different expected traffic.

Usage: solve.py [--no-range] [DESIGN.json ...]   (default: designs/*.json)
Each design's row is cached in rows/DESIGN.json (delete it to recompute);
results.csv and results.md, next to this script, are made from every cached
row. --no-range skips the two near-optimal-face SDPs (columns left empty):
used for the connectivity-graph designs, whose optimum is the uniform p = Cb
(and whose 79..87-silo range SDPs take long).
"""
import csv
import glob
import json
import os
import sys
import time

import cvxpy as cp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def laplacians(n, matchings):
    out = []
    for m in matchings:
        l = np.zeros((n, n))
        for a, b in m:
            l[a, a] += 1
            l[b, b] += 1
            l[a, b] -= 1
            l[b, a] -= 1
        out.append(l)
    return out


def complement_basis(n):
    # Orthonormal basis of {x : sum x = 0}: the last n-1 columns of a QR of
    # [1, e_1, ..., e_{n-1}].
    a = np.eye(n)
    a[:, 0] = 1.0
    q, _ = np.linalg.qr(a)
    return q[:, 1:]


def lambda2(ls, p):
    l = sum(pj * lj for pj, lj in zip(p, ls))
    return float(np.linalg.eigvalsh(l)[1])


def feasible(p, budget):
    q = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    s = q.sum()
    if s > budget:
        q *= budget / s
    return q


def arcs(p, sizes):
    return 2.0 * float(np.dot(p, sizes))


def solve_sdp(ls, vt, budget, solver, **kw):
    m = len(ls)
    p = cp.Variable(m)
    small = [vt @ l @ vt.T for l in ls]
    expr = sum(p[j] * small[j] for j in range(m))
    expr = (expr + expr.T) / 2
    prob = cp.Problem(cp.Maximize(cp.lambda_min(expr)), [p >= 0, p <= 1, cp.sum(p) <= budget])
    t0 = time.time()
    prob.solve(solver=solver, **kw)
    return p.value, prob.value, time.time() - t0, prob.status


def arcs_range(ls, vt, budget, sizes, floor):
    m = len(ls)
    p = cp.Variable(m)
    small = [vt @ l @ vt.T for l in ls]
    expr = sum(p[j] * small[j] for j in range(m))
    expr = (expr + expr.T) / 2
    cons = [p >= 0, p <= 1, cp.sum(p) <= budget, cp.lambda_min(expr) >= floor]
    out = []
    for sense in (cp.Minimize, cp.Maximize):
        prob = cp.Problem(sense(2 * sizes @ p), cons)
        prob.solve(solver="CLARABEL")
        out.append(prob.value if prob.status.startswith("optimal") else float("nan"))
    return out


def check(path, with_range=True):
    d = json.load(open(path))
    des = d["design"]
    n, cb = des["silos"], des["budget"]
    mats = des["matchings"]
    m = len(mats)
    budget = cb * m
    sizes = np.array([len(x) for x in mats], dtype=float)
    ls = laplacians(n, mats)
    vt = complement_basis(n).T
    ours = np.array(des["activation"]["probabilities"])
    row = {
        "design": os.path.basename(path)[:-5],
        "silos": n,
        "edges": int(sizes.sum()),
        "max_degree": int(max(np.diag(sum(ls)))),
        "matchings": m,
        "budget_cb": cb,
        "ours_lambda2_reported": des["activation"]["lambda2"],
        "ours_lambda2": lambda2(ls, ours),
        "ours_upper_bound": des["activation"]["upper_bound"],
    }
    pc, vc, tc, sc = solve_sdp(ls, vt, budget, "CLARABEL")
    pcf = feasible(pc, budget)
    row.update(
        clarabel_status=sc,
        clarabel_value=vc,
        clarabel_lambda2=lambda2(ls, pcf),
        clarabel_s=round(tc, 2),
    )
    ps, vs, ts, ss = solve_sdp(ls, vt, budget, "SCS")
    psf = feasible(ps, budget)
    row.update(scs_status=ss, scs_lambda2=lambda2(ls, psf))
    best = max(row["clarabel_lambda2"], row["clarabel_value"])
    row["ours_vs_clarabel_rel"] = (row["ours_lambda2"] - row["clarabel_lambda2"]) / row["clarabel_lambda2"]
    row["ours_budget_use"] = ours.sum() / budget
    row["clarabel_budget_use"] = pcf.sum() / budget
    row["ours_arcs"] = arcs(ours, sizes)
    row["clarabel_arcs"] = arcs(pcf, sizes)
    row["scs_arcs"] = arcs(psf, sizes)
    for eps in (1e-3, 1e-6):
        lo, hi = arcs_range(ls, vt, budget, sizes, (1 - eps) * best) if with_range else ("", "")
        row[f"arcs_min_eps{eps:g}"] = lo
        row[f"arcs_max_eps{eps:g}"] = hi
    row["max_abs_dp_vs_clarabel"] = float(np.max(np.abs(ours - pcf)))
    row["ours_p"] = " ".join(f"{x:.4f}" for x in ours)
    row["clarabel_p"] = " ".join(f"{x:.4f}" for x in pcf)
    row["sizes"] = " ".join(str(int(s)) for s in sizes)
    return row


def fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def main():
    args = sys.argv[1:]
    with_range = "--no-range" not in args
    args = [a for a in args if a != "--no-range"]
    paths = args or sorted(glob.glob(os.path.join(HERE, "designs", "*.json")))
    os.makedirs(os.path.join(HERE, "rows"), exist_ok=True)
    for p in paths:
        r = check(p, with_range)
        json.dump(r, open(os.path.join(HERE, "rows", os.path.basename(p)), "w"), indent=1)
        print(
            f"{r['design']}: lambda2 ours {r['ours_lambda2']:.6f} (ub {r['ours_upper_bound']:.6f}) "
            f"clarabel {r['clarabel_lambda2']:.6f} ({r['ours_vs_clarabel_rel']:+.2e}); arcs ours "
            f"{r['ours_arcs']:.1f} clarabel {r['clarabel_arcs']:.1f} scs {r['scs_arcs']:.1f}",
            flush=True,
        )
    order = ["gaia", "amazon_us", "geantdistance", "exodus", "ebone"]
    rows = [json.load(open(f)) for f in glob.glob(os.path.join(HERE, "rows", "*.json"))]
    rows.sort(key=lambda r: (order.index(r["design"].split("-matcha")[0]), r["design"]))
    keys = list(rows[0].keys())
    with open(os.path.join(HERE, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: fmt(v) for k, v in r.items()})
    cols = [
        ("design", "design"),
        ("silos", "n"),
        ("edges", "edges"),
        ("matchings", "M"),
        ("ours_lambda2", "ours lambda2"),
        ("ours_upper_bound", "ours upper bound"),
        ("clarabel_lambda2", "cvxpy/Clarabel lambda2"),
        ("ours_vs_clarabel_rel", "ours vs Clarabel"),
        ("scs_lambda2", "cvxpy/SCS (default) lambda2"),
        ("ours_budget_use", "ours budget use"),
        ("clarabel_budget_use", "Clarabel budget use"),
        ("max_abs_dp_vs_clarabel", "max abs p diff"),
        ("ours_arcs", "ours E[arcs]"),
        ("clarabel_arcs", "Clarabel E[arcs]"),
        ("scs_arcs", "SCS E[arcs]"),
        ("arcs_min_eps0.001", "E[arcs] range, lambda2 >= (1-1e-3) opt"),
        ("arcs_max_eps0.001", ""),
        ("arcs_min_eps1e-06", "E[arcs] range, lambda2 >= (1-1e-6) opt"),
        ("arcs_max_eps1e-06", ""),
    ]
    with open(os.path.join(HERE, "results.md"), "w") as f:
        f.write("| " + " | ".join(c[1] or "(max)" for c in cols) + " |\n")
        f.write("|" + "---|" * len(cols) + "\n")
        for r in rows:
            f.write("| " + " | ".join(fmt(r[c[0]]) for c in cols) + " |\n")


if __name__ == "__main__":
    main()
