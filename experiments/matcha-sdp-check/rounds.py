#!/usr/bin/env python3
"""Samples MATCHA rounds from each decomposition of decomp.py and writes them
as fedtopo per-round files, so that `fedtopo compare --overlays file:...`
times every decomposition with the same delay model (see timing.sh).

Round k activates matching j with probability p_j, independently (numpy
seed 0, redrawing the all-inactive round), as MATCHA and both reference
implementations do. Usage: rounds.py OUT_DIR [ROUNDS]  (default 1000).
"""
import glob
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    out = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    os.makedirs(out, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(HERE, "decompositions", "*.json"))):
        d = json.load(open(path))
        labels, mats, p = d["silos"], d["matchings"], np.array(d["probabilities"])
        rng = np.random.default_rng(0)
        per_round = []
        for _ in range(rounds):
            act = rng.random(len(p)) < p
            while not act.any():
                act = rng.random(len(p)) < p
            arcs = []
            for j in np.flatnonzero(act):
                for a, b in mats[j]:
                    arcs += [[labels[a], labels[b]], [labels[b], labels[a]]]
            per_round.append(arcs)
        name = os.path.basename(path)[:-5]
        doc = {"name": name, "directed": True, "periodic": True, "nodes": labels, "rounds": per_round}
        json.dump(doc, open(os.path.join(out, name + ".json"), "w"))
        print(name, "mean arcs", sum(len(r) for r in per_round) / rounds)


if __name__ == "__main__":
    main()
