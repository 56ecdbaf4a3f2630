#!/usr/bin/env python3
"""How much MATCHA+'s expected traffic depends on the matching decomposition.

MATCHA's budget counts matchings (sum_j p_j <= Cb M), not edges, so the
expected active arcs per round, 2 sum_j p_j |M_j|, depend on how the edges
are split into matchings. For each paper underlay graph Gu given on the
command line, this script builds several proper edge colourings of the same
graph, solves MATCHA's activation problem on each (cvxpy + Clarabel, as in
solve.py) and reports the number of matchings, their sizes, the optimal
lambda_2 and 2 sum_j p_j |M_j|:

  * fedtopo: the matchings fedtopo uses (from designs/U-matcha+.json;
    rustworkx-core's Misra-Gries over fedtopo's edge order);
  * mg-gml-order: a textbook Misra-Gries (our own implementation below, palette
    0..Delta, smallest free colour, neighbours scanned in adjacency order)
    over the edges in networkx's `read_gml` order, the order the throughput
    paper's code colours them in; like that code it keeps Delta + 1 colour
    classes, so the budget is Cb (Delta + 1) even if a class stays empty;
  * mg-shuffle-K: the same over the edges in a random order (seed K);
  * greedy-largest-first: a greedy colouring, edges by decreasing line-graph
    degree (may need more than Delta + 1 colours, hence a larger budget Cb M).

A decomposition whose matchings equal those cached in decompositions/ reuses
the cached probabilities (delete the file to re-solve).

Usage: decomp.py [UNDERLAY ...]   (default: exodus ebone; GML files from
$FEDTOPO_SHARED/underlays/paper). Writes decomp.csv and decomp.md here, and
each decomposition with its optimal probabilities to
decompositions/U-LABEL.json (read by rounds.py).
"""
import csv
import json
import os
import random
import sys

import networkx as nx
import numpy as np

from solve import HERE, arcs, complement_basis, laplacians, lambda2, solve_sdp, feasible


def misra_gries(n, edges):
    """Proper edge colouring with at most Delta + 1 colours; returns colour per edge."""
    adj = [[] for _ in range(n)]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    delta = max(len(x) for x in adj)
    palette = range(delta + 1)
    col = {}

    def get(a, b):
        return col.get((min(a, b), max(a, b)))

    def put(a, b, c):
        key = (min(a, b), max(a, b))
        if c is None:
            col.pop(key, None)
        else:
            col[key] = c

    def free(x, c):
        return all(get(x, y) != c for y in adj[x])

    for u, v in edges:
        if get(u, v) is not None:
            continue
        fan = [v]
        grown = True
        while grown:
            grown = False
            for x in adj[u]:
                cx = get(u, x)
                if x not in fan and cx is not None and free(fan[-1], cx):
                    fan.append(x)
                    grown = True
                    break
        c = next(k for k in palette if free(u, k))
        d = next(k for k in palette if free(fan[-1], k))
        # Invert the cd-path from u (edges coloured d, c, d, ...).
        path, x, want, seen = [], u, d, {u}
        while True:
            nxt = next((y for y in adj[x] if get(x, y) == want and y not in seen), None)
            if nxt is None:
                break
            path.append((x, nxt))
            seen.add(nxt)
            x, want = nxt, (c if want == d else d)
        for a, b in path:
            put(a, b, c if get(a, b) == d else d)
        # A prefix of the fan, still a fan after the inversion, ending at a
        # vertex where d is free (Misra and Gries prove one exists).
        def is_fan(w):
            return all(
                get(u, fan[i + 1]) is not None and free(fan[i], get(u, fan[i + 1]))
                for i in range(w)
            )

        w = next(i for i, x in enumerate(fan) if free(x, d) and is_fan(i))
        for i in range(w):
            put(u, fan[i], get(u, fan[i + 1]))
        put(u, fan[w], d)
    return col, delta


def greedy_largest_first(n, edges):
    """Greedy edge colouring, edges by decreasing line-graph degree (ties: the
    given order), each the smallest colour free at both ends (at most
    2 Delta - 1 colours; deterministic, unlike networkx's greedy_color on a
    line graph, whose order follows string hashes)."""
    deg = [0] * n
    for a, b in edges:
        deg[a] += 1
        deg[b] += 1
    order = sorted(range(len(edges)), key=lambda i: -(deg[edges[i][0]] + deg[edges[i][1]]))
    used = [set() for _ in range(n)]
    classes = []
    for i in order:
        a, b = edges[i]
        c = 0
        while c in used[a] or c in used[b]:
            c += 1
        if c == len(classes):
            classes.append([])
        classes[c].append((a, b))
        used[a].add(c)
        used[b].add(c)
    return classes


def classes_from_colouring(col, ncolours):
    out = [[] for _ in range(ncolours)]
    for e, c in col.items():
        out[c].append(e)
    return out


def check_proper(n, edges, classes):
    want = sorted((min(a, b), max(a, b)) for a, b in edges)
    seen = []
    for m in classes:
        used = set()
        for a, b in m:
            assert a not in used and b not in used, "not a matching"
            used.update((a, b))
            seen.append((min(a, b), max(a, b)))
    assert sorted(seen) == want, "not a partition of the edges"


def study(name, shared):
    g = nx.read_gml(os.path.join(shared, f"{name}.gml"))
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    des = json.load(open(os.path.join(HERE, "designs", f"{name}-matcha+.json")))
    labels = des["silos"]
    index = {l: i for i, l in enumerate(labels)}
    n = len(labels)
    assert set(g.nodes) == set(labels), "fedtopo's silos are not the GML's nodes"
    edges = [(index[a], index[b]) for a, b in g.edges]
    cands = {"fedtopo": des["design"]["matchings"]}
    col, delta = misra_gries(n, edges)
    cands["mg-gml-order"] = classes_from_colouring(col, delta + 1)
    for k in range(3):
        e = edges[:]
        random.Random(k).shuffle(e)
        col, _ = misra_gries(n, e)
        cands[f"mg-shuffle-{k}"] = classes_from_colouring(col, delta + 1)
    cands["greedy-largest-first"] = greedy_largest_first(n, edges)
    rows = []
    vt = complement_basis(n).T
    for label, classes in cands.items():
        check_proper(n, edges, classes)
        m = len(classes)
        budget = 0.5 * m
        sizes = np.array([len(x) for x in classes], dtype=float)
        ls = laplacians(n, classes)
        cache = os.path.join(HERE, "decompositions", f"{name}-{label}.json")
        old = json.load(open(cache)) if os.path.exists(cache) else None
        if old is not None and [sorted(map(tuple, m)) for m in old["matchings"]] == [
            sorted(map(tuple, m)) for m in classes
        ]:
            pf, status = np.array(old["probabilities"]), old.get("status", "optimal")
        else:
            p, _, secs, status = solve_sdp(ls, vt, budget, "CLARABEL")
            pf = feasible(p, budget)
        row = {
            "underlay": name,
            "decomposition": label,
            "matchings": m,
            "empty": int((sizes == 0).sum()),
            "sizes": " ".join(str(int(s)) for s in sorted(sizes, reverse=True)),
            "lambda2": lambda2(ls, pf),
            "expected_arcs": arcs(pf, sizes),
            "status": status,
        }
        os.makedirs(os.path.join(HERE, "decompositions"), exist_ok=True)
        with open(os.path.join(HERE, "decompositions", f"{name}-{label}.json"), "w") as f:
            json.dump(
                {
                    "silos": labels,
                    "matchings": classes,
                    "probabilities": [float(x) for x in pf],
                    "status": status,
                },
                f,
            )
        print(row, flush=True)
        rows.append(row)
    return rows


def main():
    shared = os.path.join(HERE, "..", "..", "underlays", "paper")  # shipped with the repository
    names = sys.argv[1:] or ["exodus", "ebone"]
    rows = [r for name in names for r in study(name, shared)]
    keys = list(rows[0].keys())
    with open(os.path.join(HERE, "decomp.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    with open(os.path.join(HERE, "decomp.md"), "w") as f:
        f.write("| underlay | decomposition | M | empty | sizes | lambda2* | E[arcs] |\n")
        f.write("|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(
                f"| {r['underlay']} | {r['decomposition']} | {r['matchings']} | {r['empty']} | "
                f"{r['sizes']} | {r['lambda2']:.6f} | {r['expected_arcs']:.1f} |\n"
            )


if __name__ == "__main__":
    main()
