#!/usr/bin/env python3
"""Sync vs async time to target, per cell, from star/summary.csv and
ring-opt/summary.csv (written by `fedtopo run`): prints the markdown table
of experiments/async/README.md. A side wins a cell only when its slowest
seed beats the other's fastest (no overlap of the seed ranges)."""
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def cells(family):
    rows = list(csv.DictReader(open(os.path.join(HERE, family, "summary.csv"))))
    out = {}
    for r in rows:
        key = (r["access"], r["partition"], "heterogeneous" if r["silos_csv"] else "homogeneous")
        out.setdefault(key, {})[r["protocol"]] = r
    return out


def fmt(r):
    if not r["time_to_target_ms_mean"]:
        return "not reached (acc %.3f)" % float(r["final_test_acc_mean"])
    n = r["time_to_target_ms_n"]
    return "%.1f s (%.1f..%.1f, %s/3)" % (
        float(r["time_to_target_ms_mean"]) / 1e3,
        float(r["time_to_target_ms_min"]) / 1e3,
        float(r["time_to_target_ms_max"]) / 1e3,
        n,
    )


def verdict(s, a):
    if not s["time_to_target_ms_mean"] and not a["time_to_target_ms_mean"]:
        return "neither reaches it"
    if not a["time_to_target_ms_mean"] or a["time_to_target_ms_n"] != "3":
        return "**sync**"
    if not s["time_to_target_ms_mean"] or s["time_to_target_ms_n"] != "3":
        return "**async**"
    ratio = float(a["time_to_target_ms_mean"]) / float(s["time_to_target_ms_mean"])
    if float(a["time_to_target_ms_max"]) < float(s["time_to_target_ms_min"]):
        return "**async** (%.2fx)" % ratio
    if float(s["time_to_target_ms_max"]) < float(a["time_to_target_ms_min"]):
        return "**sync** (async %.2fx)" % ratio
    return "tie within seeds (async %.2fx)" % ratio


print("| family | access | partition | silos | sync: time to acc 0.7 | async: time to acc 0.7 | ms per round (sync / async) | winner |")
print("|---|---|---|---|---|---|---|---|")
for family, asyn in [("star", "fedbuff:10"), ("ring-opt", "async-gossip")]:
    for (access, part, silos), by in sorted(cells(family).items(), key=lambda kv: (kv[0][0] != "1G", kv[0])):
        s, a = by["sync"], by[asyn]
        print("| %s: sync vs %s | %s | %s | %s | %s | %s | %.0f / %.0f | %s |" % (
            family, asyn, access, part, silos, fmt(s), fmt(a),
            float(s["ms_per_round_mean"]), float(a["ms_per_round_mean"]), verdict(s, a)))
