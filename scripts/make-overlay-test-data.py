#!/usr/bin/env python3
"""Writes the networkx-made overlay files of tests/data/overlays/ (read by
tests/overlay_files.rs with `--overlays file:PATH`).

Usage: scripts/make-overlay-test-data.py   (needs networkx: `pip install networkx`
in a virtual environment; the committed files were written by networkx 3.6.1)

Files:
* nx-ring-aws-north-america.gml: an undirected ring over the 22 routers of
  the built-in aws-north-america underlay (alphabetical order), nodes named by
  their labels, written by `nx.write_gml` (directed 0, quoted labels);
* nx-ring-aws-north-america.json: the same graph as node-link JSON
  (`nx.node_link_data`, networkx >= 3.4 writes the arcs under `edges`);
* nx-int-ring-aws-gaia.gml: `nx.cycle_graph(11)` (integer nodes 0..10,
  labels "0".."10", matched to aws-gaia's GML ids);
* nx-weighted-aws-gaia.json: a directed ring over aws-gaia with consensus
  weights 0.25 on every arc and 0.75 on self-loops, node-link JSON with the
  older `links` key (`edges="links"`).
"""

import json
import os

import networkx as nx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "data", "overlays")


def labels(underlay):
    g = nx.read_gml(os.path.join(ROOT, "underlays", underlay + ".gml"), label="id")
    return [d["label"] for _, d in sorted(g.nodes(data=True))]


def main():
    os.makedirs(OUT, exist_ok=True)
    na = sorted(labels("aws-north-america"))
    ring = nx.cycle_graph(na)
    nx.write_gml(ring, os.path.join(OUT, "nx-ring-aws-north-america.gml"))
    with open(os.path.join(OUT, "nx-ring-aws-north-america.json"), "w") as f:
        json.dump(nx.node_link_data(ring), f, indent=1)
        f.write("\n")

    nx.write_gml(nx.cycle_graph(11), os.path.join(OUT, "nx-int-ring-aws-gaia.gml"))

    gaia = labels("aws-gaia")
    d = nx.DiGraph()
    d.add_nodes_from(gaia)
    for i, a in enumerate(gaia):
        d.add_edge(a, gaia[(i + 1) % len(gaia)], weight=0.25)
        d.add_edge(a, a, weight=0.75)
    with open(os.path.join(OUT, "nx-weighted-aws-gaia.json"), "w") as f:
        json.dump(nx.node_link_data(d, edges="links"), f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
