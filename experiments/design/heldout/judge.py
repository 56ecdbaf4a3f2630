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
fastest measured. Standard library only.

    python3 experiments/design/heldout/judge.py [runs.csv] [fitted.rs]
"""
import csv
import math
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "runs.csv")
FITTED = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "../../../src/design/fitted.rs")


def shipped(path):
    src = open(path).read()
    body = re.search(r"SLOPES: \[f64; (\d+)\] = \[(.*?)\];", src, re.S)
    slopes = [float(x) for x in body.group(2).split(",") if x.strip()]
    if len(slopes) != int(body.group(1)) or len(slopes) != 24:
        sys.exit(f"{path}: expected 24 slopes (8 figures x 1, h, h s), found {len(slopes)}")
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
    core = [
        tau,
        silos,
        math.log(max(float(r["effective_neighbours"]), 1.0)),
        1.0 if r["time_varying"] == "true" else 0.0,
        mixed,
        unit(float(r["stationary_imbalance"])),
        tau * tau,
        mixed * silos,
    ]
    h = unit(float(r["label_heterogeneity"]))
    hs = h * unit(float(r["label_share"]))
    return core + [h * c for c in core] + [hs * c for c in core]


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


def main():
    slopes, a, b, c, lo, hi = shipped(FITTED)
    cells = defaultdict(list)
    for r in csv.DictReader(open(RUNS)):
        cells[(r["underlay"], r["access"], r["data"], r["seed"])].append(r)
    taus, levelled, ratios = [], [], []
    print("| underlay | access | data | seed | h | s | Kendall tau | error after one level | predicted first | its time / fastest |")
    print("|---|---|---|---:|---:|---:|---:|---:|---|---:|")
    for key, rows in sorted(cells.items()):
        items = []
        for r in rows:
            x = features(r)
            if x is None:
                continue
            h, s = unit(float(r["label_heterogeneity"])), unit(float(r["label_share"]))
            hc = min(max(h, lo), hi)
            rounds = min(max(math.exp(a + b * hc + c * hc * s + sum(w * v for w, v in zip(slopes, x))), 1.0), 1e6)
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


if __name__ == "__main__":
    main()
