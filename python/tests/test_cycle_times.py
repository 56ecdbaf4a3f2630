"""Cycle times from Python equal `fedtopo compare --format json`."""

from __future__ import annotations

import pytest

import fedtopo
from conftest import BUILTINS, close, paper_underlays

OVERLAYS = ["star", "mst", "delta-mbst", "ring", "ring-opt"]

UNDERLAYS = BUILTINS + paper_underlays()


@pytest.mark.parametrize("underlay", UNDERLAYS)
def test_compare_equals_cli(cli, underlay):
    # Telstra (paper) has 3 components: both sides keep the largest.
    doc = cli("compare", underlay, "--overlays", ",".join(OVERLAYS), "--format", "json",
              "--largest-component")
    net = fedtopo.Network(fedtopo.Underlay.load(underlay, largest_component=True))
    rows = net.compare(OVERLAYS)
    assert [r["overlay"] for r in rows] == [r["overlay"] for r in doc["rows"]]
    for mine, theirs in zip(rows, doc["rows"]):
        assert close(mine["cycle_time_ms"], theirs["cycle_time_ms"]), mine["overlay"]
        assert mine["arcs"] == theirs["arcs"]
        assert mine["max_degree"] == theirs["max_degree"]
        assert mine["critical_circuit"] == theirs["critical_circuit"]
    for kind, theirs in zip(OVERLAYS, doc["rows"]):
        o = net.overlay(kind)
        assert close(o.cycle_time_ms(), theirs["cycle_time_ms"]), kind
        assert o.critical_circuit() == theirs["critical_circuit"]
        assert len(o.arcs) == theirs["arcs"]


def test_paper_underlays_ship_with_the_repository():
    assert len(paper_underlays()) == 8, "underlays/paper/ should hold the paper's eight underlays"


@pytest.mark.parametrize(
    "knobs, flags",
    [
        (dict(access="1G", core_capacity="1G"), ["--access", "1G", "--core-capacity", "1G"]),
        (dict(workload="femnist", local_steps=3), ["--workload", "femnist", "-s", "3"]),
        (dict(model_bits="5MB", compute_ms=12.5), ["--model-bits", "5MB", "--compute-ms", "12.5"]),
        (dict(silos_per_router=2), ["--silos-per-router", "2"]),
    ],
)
def test_network_knobs_equal_cli_options(cli, knobs, flags):
    doc = cli("compare", "--overlays", "star,ring,mst", "--format", "json", *flags)
    net = fedtopo.Network(fedtopo.Underlay.load(), **knobs)
    assert len(net) == doc["silos"]
    for mine, theirs in zip(net.compare("star,ring,mst"), doc["rows"]):
        assert close(mine["cycle_time_ms"], theirs["cycle_time_ms"]), (knobs, mine["overlay"])


def test_schedule_matches_cli(cli):
    doc = cli("compare", "--overlays", "matcha", "--matcha-rounds", "200", "--format", "json")
    net = fedtopo.Network(fedtopo.Underlay.load())
    o = net.overlay("matcha", matcha_rounds=200)
    assert o.is_schedule
    assert close(o.cycle_time_ms(), doc["rows"][0]["cycle_time_ms"])
    assert o.critical_circuit() == []


def test_comparison_document_has_network():
    net = fedtopo.Network("aws-north-america", access="1G")
    doc = net.comparison(["star", "ring"])
    assert doc["silos"] == len(net) == 22
    assert doc["network"]["workload"] == "inaturalist"
    assert net.description() == doc["network"]
    assert {s["up_bps"] for s in doc["network"]["silos"]} == {1e9}
