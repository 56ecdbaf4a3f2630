"""Build an overlay in networkx, time it with fedtopo, and back.

Needs networkx (pip install networkx).
"""
import os
import tempfile

import networkx as nx

import fedtopo

net = fedtopo.Network("aws-north-america")

# 1. A graph of your own: a ring over the silos plus two chords, both directions.
g = nx.cycle_graph(net.silos)
g.add_edges_from([(net.silos[0], net.silos[11]), (net.silos[5], net.silos[16])])
path = os.path.join(tempfile.mkdtemp(), "my-overlay.gml")
nx.write_gml(g.to_directed(), path)

mine = net.overlay(f"file:{path}")
print(f"my overlay: {len(mine.arcs)} arcs, cycle time {mine.cycle_time_ms():.1f} ms,"
      f" critical circuit {' -> '.join(mine.critical_circuit())}")

# 2. fedtopo's designs, exported to networkx (arcs carry the eq. (3) delay_ms).
for kind in ["mst", "ring-opt"]:
    o = net.overlay(kind)
    h = o.to_networkx()
    slowest = max(h.edges(data="delay_ms"), key=lambda e: e[2])
    print(f"{kind:9s} cycle time {o.cycle_time_ms():6.1f} ms; slowest arc"
          f" {slowest[0]} -> {slowest[1]} ({slowest[2]:.1f} ms)")
