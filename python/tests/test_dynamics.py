"""`Network(..., trace=FILE)`: the clock follows a network-dynamics trace,
as `fedtopo simulate --trace FILE` does."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import fedtopo
from test_clock import starts


def churn(cli, path):
    """A seeded churn trace on aws-north-america, written by the CLI."""
    out = subprocess.run(
        [str(cli.binary), "trace", "churn", "--mean-up-s", "1", "--mean-down-s", "0.3",
         "--duration-s", "20", "--seed", "5", "-o", str(path)],
        capture_output=True, text=True, check=True,
    )
    assert out.returncode == 0
    return path


@pytest.mark.parametrize("network", ["maxplus", "flow"])
def test_clock_with_a_trace_equals_simulate(cli, tmp_path, network):
    trace = churn(cli, tmp_path / "churn.csv")
    rounds, checked = 16, 8
    doc = cli("simulate", "--overlays", "ring,mst", "--rounds", str(rounds),
              "--network", network, "--access", "100M", "--trace", str(trace),
              "--format", "json", "--out", str(tmp_path))
    assert doc["rows"][0]["network"] == f"{network}+traces"
    assert doc["dynamics"]["model"] == "event replay with traces"
    expected = starts(tmp_path / "starts.csv")
    net = fedtopo.Network("aws-north-america", access="100M", trace=trace)
    plain = fedtopo.Network("aws-north-america", access="100M")
    for kind in ["ring", "mst"]:
        clock = fedtopo.Clock(net, net.overlay(kind), network_model=network)
        assert clock.network == f"{network}+traces"
        static = fedtopo.Clock(plain, plain.overlay(kind), network_model=network)
        assert static.network == network
        for k in range(1, checked + 1):
            t = clock.step()
            np.testing.assert_allclose(t, expected[(kind, k)], rtol=0, atol=1e-6,
                                       err_msg=f"{kind} round {k}")
            static.step()
        # The churn slows the run down.
        assert clock.now_ms > static.now_ms


def test_bad_trace_names_the_file_and_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("time_s,target,value\n1,up:Atlantis,1G\n")
    with pytest.raises(ValueError, match=r"bad.csv:2: column 2 \(target\)"):
        fedtopo.Network("aws-north-america", trace=bad)


def test_closed_forms_refuse_a_traced_network(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("time_s,target,value\n1,avail:Seattle,down\n2,avail:Seattle,up\n")
    net = fedtopo.Network("aws-north-america", trace=trace)
    ring = net.overlay("ring")
    with pytest.raises(ValueError, match="cannot follow a trace"):
        ring.cycle_time_ms()
    # The clock replays it.
    clock = fedtopo.Clock(net, ring)
    assert clock.network == "maxplus+traces"
    assert clock.step().shape == (len(net),)


@pytest.mark.parametrize("policy", ["skip", "timeout:3000"])
def test_clock_with_an_availability_policy_equals_simulate(cli, tmp_path, policy):
    """`availability=` reaches the clock: its times are simulate's, its
    network name says the policy, and `participation()` says who took part
    (every silo averaged, took a model, or was absent; a silo averages only
    its in-neighbours' models)."""
    trace = churn(cli, tmp_path / "churn.csv")
    rounds = 12
    doc = cli("simulate", "--overlays", "ring", "--rounds", str(rounds),
              "--access", "100M", "--trace", str(trace), "--availability", policy,
              "--format", "json", "--out", str(tmp_path))
    assert doc["rows"][0]["network"] == f"maxplus+traces+{policy}"
    expected = starts(tmp_path / "starts.csv")
    net = fedtopo.Network("aws-north-america", access="100M", trace=trace,
                          availability=policy)
    ring = net.overlay("ring")
    clock = fedtopo.Clock(net, ring)
    assert clock.network == f"maxplus+traces+{policy}"
    assert clock.participation() is None
    arcs = set(map(tuple, ring.arcs))
    absent = 0
    for k in range(1, rounds + 1):
        np.testing.assert_allclose(clock.step(), expected[("ring", k)], rtol=0, atol=1e-6)
        p = clock.participation()
        assert len(p["computed"]) == len(net)
        for i, used in enumerate(p["used"]):
            if used is not None:
                assert all((u, i) in arcs for u in used)
            elif p["joined"][i] is None:
                absent += 1
    assert doc["rows"][0]["silo_rounds_absent"] == absent


def test_an_availability_policy_needs_a_trace():
    with pytest.raises(ValueError, match="availability `skip`: expected wait without a trace"):
        fedtopo.Network("aws-north-america", availability="skip")
    with pytest.raises(ValueError, match="availability `later`"):
        fedtopo.Network("aws-north-america", availability="later")
