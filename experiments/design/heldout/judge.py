#!/usr/bin/env python3
"""Judges the shipped rounds predictor (src/design/fitted.rs) on kinds of
data it was not fitted on: the runs of experiments/design/heldout/runs.csv
(`design-train --out experiments/design/heldout --data
fashion-mnist/dirichlet,synthetic/mid`, see README.md there).

Per cell and seed: Kendall's tau-b between predicted and measured time to
the target (a run that missed the target is slower than every run that
reached it within its bound), the relative error of the predicted time
after one level per cell (the median log ratio: what --calibrate/--verify
fit; the uncalibrated level is meaningless here, the targets were chosen
for these runs), and the measured time of the predicted first over the
fastest measured; then `design --verify` replayed on the cells with two
seeds, with and without its window (experiments/design/main.rs
`verify_choice`). Standard library only.

    python3 experiments/design/heldout/judge.py [runs.csv] [fitted.rs]

With `--mirror`, it judges nothing: it reads a JSON object from stdin,
`{"verified_count": [[predicted, top, window], ...], "spread":
[[mixing_times, k], ...]}` (numbers, or strings such as "inf" and "NaN"),
and prints one JSON object: what its `verified_count` and `spread` give
for each, and `rounds`: for each committed run (runs.csv joined to
features.csv), the predictor's inputs as read and its predicted rounds,
non-finite numbers as strings. tests/heldout_judge.rs compares them with
the library's, so that the rules mirrored here cannot drift from it.
"""
import csv
import json
import math
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
MIRROR = "--mirror" in sys.argv[1:]
ARGS = [a for a in sys.argv[1:] if a != "--mirror"]
RUNS = ARGS[0] if len(ARGS) > 0 else os.path.join(HERE, "runs.csv")
FITTED = ARGS[1] if len(ARGS) > 1 else os.path.join(HERE, "../../../src/design/fitted.rs")


def shipped(path):
    src = open(path).read()
    body = re.search(r"SLOPES: \[f64; (\d+)\] = \[(.*?)\];", src, re.S)
    slopes = [float(x) for x in body.group(2).split(",") if x.strip()]
    if len(slopes) != int(body.group(1)) or len(slopes) != 30:
        sys.exit(f"{path}: expected 30 slopes (10 figures x 1, h, h s), found {len(slopes)}")
    const = lambda n: float(re.search(n + r": f64 = ([-0-9.e]+);", src).group(1))
    lo, hi = (float(x) for x in re.search(r"LEVEL_RANGE: \[f64; 2\] = \[(.*?)\]", src).group(1).split(","))
    return slopes, const("LEVEL_AT_ZERO"), const("LEVEL_SLOPE"), const("LEVEL_SHARE_SLOPE"), lo, hi


def unit(x):
    return min(max(x, 0.0), 1.0) if math.isfinite(x) else 0.0


def features(r):
    """src/design/predictor.rs `features` without the intercept."""
    mix = float(r["mixing_time"])
    if not math.isfinite(mix):
        return None
    tau = math.log(max(mix, 1.0))
    silos = math.log(max(int(r["silos"]), 1))
    mixed = unit(float(r["mixed_heterogeneity"]))
    asymmetric = 1.0 if r["asymmetric"] == "true" else 0.0
    core = [
        tau,
        silos,
        math.log(max(float(r["effective_neighbours"]), 1.0)),
        1.0 if r["time_varying"] == "true" else 0.0,
        mixed,
        unit(float(r["stationary_imbalance"])),
        tau * tau,
        mixed * silos,
        asymmetric,
        asymmetric * tau,
    ]
    h = unit(float(r["label_heterogeneity"]))
    hs = h * unit(float(r["label_share"]))
    return core + [h * c for c in core] + [hs * c for c in core]


def predicted_rounds(r, model):
    """src/design/predictor.rs `shipped(h, s).rounds(x)` of the run `r`
    (`model`: what `shipped` reads of fitted.rs); infinite when the
    candidate does not mix."""
    slopes, a, b, c, lo, hi = model
    x = features(r)
    if x is None:
        return math.inf
    h, s = unit(float(r["label_heterogeneity"])), unit(float(r["label_share"]))
    hc = min(max(h, lo), hi)
    return min(max(math.exp(a + b * hc + c * hc * s + sum(w * v for w, v in zip(slopes, x))), 1.0), 1e6)


def kendall(items):
    """experiments/design/main.rs `kendall`: (predicted, measured or None, bound)."""
    conc = disc = tp = tm = 0.0
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            (pi, mi, bi), (pj, mj, bj) = items[i], items[j]
            if mi is not None and mj is not None:
                m = (mi > mj) - (mi < mj)
            elif mi is not None and mi <= bj:
                m = -1
            elif mj is not None and mj <= bi:
                m = 1
            else:
                continue
            p = (pi > pj) - (pi < pj)
            if p == 0 and m == 0:
                continue
            if p == 0:
                tp += 1
            elif m == 0:
                tm += 1
            elif p == m:
                conc += 1
            else:
                disc += 1
    d = math.sqrt((conc + disc + tp) * (conc + disc + tm))
    return (conc - disc) / d if d > 0 else None


def read_runs():
    """runs.csv with the `asymmetric` column of features.csv beside it
    (`design-features` on the same cells, no training: the figure was added
    after these runs were trained), joined by underlay, access, data, seed
    and candidate."""
    figures = {}
    for f in csv.DictReader(open(os.path.join(os.path.dirname(RUNS), "features.csv"))):
        figures[(f["underlay"], f["access"], f["data"], f["seed"], f["candidate"])] = f["asymmetric"]
    runs = []
    for r in csv.DictReader(open(RUNS)):
        key = (r["underlay"], r["access"], r["data"], r["seed"], r["candidate"])
        if key not in figures:
            sys.exit(f"features.csv: no row for {key} (run design-features, see README.md)")
        r["asymmetric"] = figures[key]
        runs.append(r)
    return runs


def main():
    model = shipped(FITTED)
    cells = defaultdict(list)
    for r in read_runs():
        cells[(r["underlay"], r["access"], r["data"], r["seed"])].append(r)
    taus, levelled, ratios = [], [], []
    print("| underlay | access | data | seed | h | s | Kendall tau | error after one level | predicted first | its time / fastest |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|---:|")
    for key, rows in sorted(cells.items()):
        items = []
        for r in rows:
            rounds = predicted_rounds(r, model)
            if math.isinf(rounds):
                continue
            h, s = unit(float(r["label_heterogeneity"])), unit(float(r["label_share"]))
            ct = float(r["cycle_time_ms"])
            measured = float(r["time_to_target_ms"]) if r["reached"] == "true" else None
            items.append((rounds * ct, measured, int(r["rounds_budget"]) * ct, r["candidate"]))
        t = kendall([i[:3] for i in items])
        reached = [(p, m) for p, m, _, _ in items if m is not None]
        logs = sorted(math.log(p / m) for p, m in reached)
        level = math.exp(logs[len(logs) // 2])
        err = [abs(p / level - m) / m for p, m in reached]
        first = min(items, key=lambda i: i[0])
        fastest = min(m for _, m in reached)
        ratio = (first[1] / fastest) if first[1] is not None else float("inf")
        taus.append(t)
        levelled += err
        ratios.append(ratio)
        print(f"| {' | '.join(key)} | {h:.2f} | {s:.2f} | {t:.2f} | {100 * sum(err) / len(err):.0f}% | {first[3]} | {ratio:.2f} |")
    finite = [x for x in ratios if math.isfinite(x)]
    print(
        f"\n{len(taus)} cell-seeds: Kendall tau mean {sum(taus) / len(taus):.2f}, min {min(taus):.2f}, "
        f">= 0.7 in {sum(t >= 0.7 for t in taus)}; error after one level per cell mean "
        f"{100 * sum(levelled) / len(levelled):.0f}%; predicted first / fastest: geometric mean "
        f"{math.exp(sum(math.log(x) for x in finite) / len(finite)):.3f}, max {max(ratios):.2f}, "
        f"> 1.1 in {sum(x > 1.1 for x in ratios)}"
    )


# experiments/design/main.rs: the list the designed overlay is judged
# against, and `design --verify`'s defaults (src/design/calibrate.rs).
BASELINES = [
    "star", "mst", "delta-mbst", "ring", "ring-opt", "matcha", "dcliques-ring", "exp",
    "exp-1peer", "base:k=1", "base:k=2", "base:k=3", "d-equistatic", "od-equidyn",
    "multigraph", "multigraph:base=ring-opt",
]
VERIFY_PROBES, VERIFY_PROBE_ROUNDS, VERIFY_TOP = 3, 50, 4


def verified_count(predicted, top, window):
    """src/design/calibrate.rs `verified_count` (predicted ascending)."""
    if not predicted:
        return 0
    first = min(top, len(predicted))
    best = predicted[0]
    if not (math.isfinite(best) and math.isfinite(window) and window > 1.0):
        return first
    within = 0
    for t in predicted:
        if not t <= best * window:  # Rust's take_while: a NaN ends it too
            break
        within += 1
    return min(max(within, first), 2 * top, len(predicted))


def spread(taus, k):
    """src/design/calibrate.rs `spread_over_mixing_times`."""
    fin = sorted((i for i, t in enumerate(taus) if math.isfinite(t)), key=lambda i: (taus[i], i))
    if len(fin) <= k:
        return fin
    out = []
    for j in range(k):
        x = fin[j * (len(fin) - 1) // max(k - 1, 1)]
        if not out or out[-1] != x:
            out.append(x)
    return out


def verify_choice(rows, window):
    """experiments/design/main.rs `verify_choice` (raced; the winner only)."""
    probes = [rows[i] for i in spread([r["mix"] for r in rows], VERIFY_PROBES)]
    ranked = sorted(rows, key=lambda r: (r["pt"], r["candidate"]))
    top = ranked[: verified_count([r["pt"] for r in ranked], VERIFY_TOP, window)]
    measured = []
    for r, limit in [(r, r["budget"]) for r in top] + [
        (r, VERIFY_PROBE_ROUNDS) for r in probes if r not in top
    ]:
        if r["k"] is not None and r["k"] <= limit:
            measured.append((r["t"], r["candidate"]))
    return min(measured)[1] if measured else ranked[0]["candidate"]


def verify_check(cells, window):
    """`design --verify` on the cells with two seeds or more, as the
    experiment judges it: each seed's runs choose for the previous seed
    (cyclically); the choice's mean time over the seeds against the best
    of the list's, slower when beyond twice the standard error of the
    per-seed ratios. Returns (cells, slower, >= 10 % faster, not reached,
    geometric mean ratio, mean candidates trained in full)."""
    by_cell = defaultdict(dict)
    for (u, a, d, seed), rows in cells.items():
        by_cell[(u, a, d)][seed] = rows
    n = slower = faster = missed = 0
    logs, trained = [], []
    for seeds in by_cell.values():
        order = sorted(seeds)
        if len(order) < 2:
            continue
        times = []
        for p, s in enumerate(order):
            probe = seeds[order[(p + 1) % len(order)]]
            ranked = sorted(r["pt"] for r in probe)
            trained.append(verified_count(ranked, VERIFY_TOP, window))
            chosen = verify_choice(probe, window)
            hit = [r for r in seeds[s] if chosen in r["names"]]
            times.append(hit[0]["t"] if hit else None)
        best = None
        for b in BASELINES:
            per = [next((r["t"] for r in seeds[s] if r["candidate"] == b), None) for s in order]
            if None not in per and (best is None or sum(per) < sum(best)):
                best = per
        if best is None:
            continue
        n += 1
        if None in times:
            missed += 1
            continue
        ratio = sum(times) / sum(best)
        per = [t / b for t, b in zip(times, best)]
        m = sum(per) / len(per)
        se = math.sqrt(sum((x - m) ** 2 for x in per) / (len(per) - 1) / len(per))
        logs.append(math.log(ratio))
        if ratio > 1.0 + 2.0 * se:
            slower += 1
        elif ratio <= 0.9:
            faster += 1
    g = math.exp(sum(logs) / len(logs)) if logs else float("nan")
    return n, slower, faster, missed, g, sum(trained) / max(len(trained), 1)


def verify_main():
    model = shipped(FITTED)
    cells = defaultdict(list)
    for r in read_runs():
        ct = float(r["cycle_time_ms"])
        rounds = predicted_rounds(r, model)
        reached = r["reached"] == "true"
        r.update(
            pt=rounds * ct,
            mix=float(r["mixing_time"]),
            t=float(r["time_to_target_ms"]) if reached else None,
            k=int(r["rounds_to_target"]) if reached else None,
            budget=int(r["rounds_budget"]),
            names=[r["candidate"]] + [n for n in r["same_as"].split(";") if n],
        )
        cells[(r["underlay"], r["access"], r["data"], int(r["seed"]))].append(r)
    print("\n`design --verify` (cells with two seeds; each seed's runs choose for the other):")
    for window, label in [(1.0, "top 4 only (--window 1)"), (1.4, "top 4 and within 1.4x (the default)")]:
        n, slower, faster, missed, g, k = verify_check(cells, window)
        print(
            f"- {label}: {n} cells, slower than the best of the list beyond seed noise in {slower}, "
            f">= 10% faster in {faster}, not reached in {missed}; winner / best geometric mean {g:.3f}; "
            f"{k:.2f} candidates trained in full per cell-seed"
        )


# The predictor's inputs of a run, as runs.csv (and features.csv) give them.
INPUTS = [
    "mixing_time", "silos", "effective_neighbours", "time_varying", "label_heterogeneity",
    "label_share", "mixed_heterogeneity", "stationary_imbalance", "asymmetric",
]


def mirror_main():
    """`--mirror`: the mirrored rules on the cases of stdin and on the
    committed runs, for tests/heldout_judge.rs (see the module docs)."""
    cases = json.load(sys.stdin)
    floats = lambda xs: [float(x) for x in xs]
    model = shipped(FITTED)
    out = {
        "verified_count": [verified_count(floats(p), top, float(w)) for p, top, w in cases.get("verified_count", [])],
        "spread": [spread(floats(t), k) for t, k in cases.get("spread", [])],
        "rounds": [
            {"inputs": {k: r[k] for k in INPUTS}, "rounds": repr(predicted_rounds(r, model))}
            for r in read_runs()
        ],
    }
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    if MIRROR:
        mirror_main()
    else:
        main()
        verify_main()
