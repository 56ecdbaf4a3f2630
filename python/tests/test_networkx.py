"""networkx export and round trip through `file:PATH` overlays."""

from __future__ import annotations

import pytest

import fedtopo
from conftest import close

nx = pytest.importorskip("networkx")


def test_to_networkx_has_arcs_and_delays():
    net = fedtopo.Network("aws-north-america")
    o = net.overlay("mst")
    g = o.to_networkx()
    assert isinstance(g, nx.DiGraph)
    assert g.number_of_nodes() == len(net) and g.number_of_edges() == len(o.arcs)
    labels = net.silos
    for s, d in o.arcs:
        assert g.has_edge(labels[s], labels[d])
        assert g.edges[labels[s], labels[d]]["delay_ms"] > 0


def test_gml_round_trip_keeps_cycle_time(tmp_path):
    net = fedtopo.Network("aws-north-america")
    o = net.overlay("ring-opt")
    path = tmp_path / "ring.gml"
    nx.write_gml(o.to_networkx(), path)
    back = net.overlay(f"file:{path}")
    assert sorted(back.arcs) == sorted(o.arcs)
    assert close(back.cycle_time_ms(), o.cycle_time_ms())


def test_graph_built_in_networkx(tmp_path):
    net = fedtopo.Network("aws-north-america")
    g = nx.cycle_graph(net.silos).to_directed()
    path = tmp_path / "bidir-ring.gml"
    nx.write_gml(g, path)
    o = net.overlay(f"file:{path}")
    assert len(o.arcs) == 2 * len(net)
    assert o.cycle_time_ms() > 0


def test_to_networkx_keeps_coordinates(cli):
    # Issue 26 item 4: the silos' positions, as `fedtopo overlay --format json`.
    doc = cli("overlay", "mst", "--format", "json")
    positions = {n["id"]: (n["latitude"], n["longitude"]) for n in doc["nodes"]}
    net = fedtopo.Network("aws-north-america")
    g = net.overlay("mst").to_networkx()
    assert len(positions) == g.number_of_nodes() == 22
    for node, data in g.nodes(data=True):
        assert (data["latitude"], data["longitude"]) == positions[node], node


def test_coordinates_survive_a_gml_round_trip(tmp_path):
    net = fedtopo.Network("aws-north-america")
    g = net.overlay("ring").to_networkx()
    path = tmp_path / "ring.gml"
    nx.write_gml(g, path)
    back = nx.read_gml(path)
    for node, data in g.nodes(data=True):
        assert back.nodes[node]["latitude"] == data["latitude"]
