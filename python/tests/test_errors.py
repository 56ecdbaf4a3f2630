"""Bad inputs raise ValueError with the Rust message."""

from __future__ import annotations

import re

import pytest

import fedtopo


def test_bad_gml_names_file_line_col(tmp_path):
    p = tmp_path / "bad.gml"
    p.write_text("graph [\n  node [ id 0 label \"a\" ]\n  node [ id 1 \n]\n")
    with pytest.raises(ValueError) as e:
        fedtopo.Underlay.load(str(p))
    assert re.search(r"bad\.gml:\d+:\d+", str(e.value)), str(e.value)


def test_unknown_builtin_lists_builtins():
    with pytest.raises(ValueError, match="aws-north-america"):
        fedtopo.Underlay.load("no-such-underlay")


def test_missing_file():
    with pytest.raises(ValueError, match="cannot read"):
        fedtopo.Underlay.load("/nonexistent/x.gml")


@pytest.mark.parametrize(
    "knobs, key",
    [
        (dict(access="fast"), "access"),
        (dict(core_capacity="-1"), "core_capacity"),
        (dict(workload="imagenet"), "workload"),
        (dict(model_bits=0), "model_bits"),
        (dict(compute_ms=-3), "compute_ms"),
        (dict(local_steps=0), "local_steps"),
        (dict(silos_per_router=2, silos=5), "silos"),
        (dict(silos_csv="/nonexistent.csv"), "nonexistent.csv"),
    ],
)
def test_bad_knob_names_it(knobs, key):
    with pytest.raises(ValueError, match=re.escape(key)):
        fedtopo.Network("aws-north-america", **knobs)


def test_bad_policies():
    with pytest.raises(ValueError, match="missing_coordinates"):
        fedtopo.Underlay.load(missing_coordinates="guess")
    with pytest.raises(ValueError, match="default_length_km"):
        fedtopo.Underlay.load(default_length_km=-1.0)


def test_bad_overlay_and_options():
    net = fedtopo.Network("aws-north-america")
    with pytest.raises(ValueError, match="spiral"):
        net.overlay("spiral")
    with pytest.raises(ValueError):
        net.overlay("star", center="Atlantis")
    with pytest.raises(ValueError, match="budget"):
        net.overlay("matcha", budget=2.0)
    with pytest.raises(ValueError):
        net.compare("ring,,star")
    with pytest.raises(ValueError):
        net.compare([])
    with pytest.raises(ValueError):
        net.overlay("file:/nonexistent.gml")


def test_bad_clock_arguments():
    net = fedtopo.Network("aws-north-america")
    o = net.overlay("ring")
    with pytest.raises(ValueError, match="network model"):
        fedtopo.Clock(net, o, network_model="wifi")
    with pytest.raises(ValueError, match="straggler"):
        fedtopo.Clock(net, o, stragglers="lognormal:-1")
    other = fedtopo.Network("aws-north-america", access="1G")
    with pytest.raises(ValueError, match="another network"):
        fedtopo.Clock(other, o)


def test_disconnected_underlay_refused(tmp_path):
    p = tmp_path / "two.gml"
    p.write_text(
        "graph [\n"
        + "".join(f'  node [ id {i} label "n{i}" ]\n' for i in range(4))
        + '  edge [ source 0 target 1 distance 100 ]\n'
        + '  edge [ source 2 target 3 distance 100 ]\n]\n'
    )
    with pytest.raises(ValueError, match="largest"):
        fedtopo.Underlay.load(str(p))
    assert len(fedtopo.Underlay.load(str(p), largest_component=True)) == 2
