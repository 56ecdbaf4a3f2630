"""Bad inputs raise ValueError with the Rust message."""

from __future__ import annotations

import os
import re
import subprocess
import sys

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


# Issue 25: the bindings read files through the library's readers, so they
# refuse what the CLI refuses.

_FIFO_CALLS = {
    "underlay": "fedtopo.Underlay.load(P)",
    "access_csv": "fedtopo.Network('aws-gaia', access_csv=P)",
    "silos_csv": "fedtopo.Network('aws-gaia', silos_csv=P)",
    "links_csv": "fedtopo.Network('aws-gaia', links_csv=P)",
    "overlay file": "fedtopo.Network('aws-gaia').overlay('file:' + P)",
    "consensus file": (
        "fedtopo.Network('aws-gaia').overlay('ring').consensus_matrix('file:' + P)"
    ),
}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo (unix)")
@pytest.mark.parametrize("what", sorted(_FIFO_CALLS))
def test_fifo_inputs_are_refused_at_once(tmp_path, what):
    """A FIFO nobody writes to would block a reader forever: it is refused
    before it is opened. Run in a subprocess with a timeout, so that a
    regression fails instead of hanging the test session."""
    fifo = tmp_path / "input.csv"
    os.mkfifo(fifo)
    code = (
        "import fedtopo\n"
        f"P = {str(fifo)!r}\n"
        "try:\n"
        f"    {_FIFO_CALLS[what]}\n"
        "    print('accepted')\n"
        "except ValueError as e:\n"
        "    print('refused:', e)\n"
    )
    try:
        r = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what}: reading a FIFO still blocks after 60 s")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("refused:"), r.stdout + r.stderr
    assert "not a regular file" in r.stdout, r.stdout


def test_unknown_and_ambiguous_columns_are_refused(tmp_path):
    both = tmp_path / "access.csv"
    both.write_text("silo,up,capacity\nTokyo,1G,2G\n")
    with pytest.raises(ValueError, match=r"access\.csv:1: give `capacity`"):
        fedtopo.Network("aws-gaia", access_csv=str(both))
    typo = tmp_path / "silos.csv"
    typo.write_text("silo,compute\nTokyo,3\n")
    with pytest.raises(ValueError, match=r"unknown column `compute`.*`compute_ms`"):
        fedtopo.Network("aws-gaia", silos_csv=str(typo))
    links = tmp_path / "links.json"
    links.write_text('{"nodes": [], "links": [], "edges": []}')
    with pytest.raises(ValueError, match="both `links` and `edges`"):
        fedtopo.Network("aws-gaia").overlay(f"file:{links}")
