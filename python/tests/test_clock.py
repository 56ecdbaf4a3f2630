"""`Clock.step()` equals `fedtopo simulate`'s round times."""

from __future__ import annotations

import csv
from collections import defaultdict

import numpy as np
import pytest

import fedtopo
from conftest import close


def starts(path):
    """starts.csv -> {(overlay, round): [t_i]} (ms, 6 decimals)."""
    out = defaultdict(dict)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            out[(row["overlay"], int(row["round"]))][int(row["silo"])] = float(row["start_ms"])
    return {k: [v[i] for i in sorted(v)] for k, v in out.items()}


@pytest.mark.parametrize("kind", ["star", "ring", "mst", "ring-allreduce", "mesh-allreduce"])
def test_maxplus_clock_equals_simulate_makespan(cli, kind):
    rounds = 30
    doc = cli("simulate", "--overlays", kind, "--rounds", str(rounds), "--format", "json",
              "--access", "1G")
    row = doc["rows"][0]
    net = fedtopo.Network(fedtopo.Underlay.load(), access="1G")
    clock = fedtopo.Clock(net, net.overlay(kind))
    for _ in range(rounds):
        t = clock.step()
    assert clock.round == rounds
    assert close(float(t.max()), row["makespan_ms"])
    assert close(clock.now_ms, row["makespan_ms"])
    assert close(clock.now_ms / rounds, row["mean_round_ms"])


@pytest.mark.parametrize("network", ["maxplus", "paper", "flow"])
@pytest.mark.parametrize("straggler", [None, "lognormal:0.4"])
def test_clock_equals_simulate_starts(cli, tmp_path, network, straggler):
    # simulate stops the protocol after its last round, which changes the
    # last rounds' contention on paper/flow: compare the first half only.
    rounds, checked, seed = 16, 8, 7
    args = ["simulate", "--overlays", "star,ring,mst", "--rounds", str(rounds),
            "--network", network, "--access", "100M", "--seed", str(seed),
            "--format", "json", "--out", str(tmp_path)]
    if straggler:
        args += ["--straggler", straggler]
    cli(*args)
    expected = starts(tmp_path / "starts.csv")
    net = fedtopo.Network("aws-north-america", access="100M")
    for kind in ["star", "ring", "mst"]:
        clock = fedtopo.Clock(net, net.overlay(kind, seed=seed), network_model=network,
                              stragglers=straggler, seed=seed)
        for k in range(1, checked + 1):
            t = clock.step()
            assert t.shape == (len(net),)
            np.testing.assert_allclose(t, expected[(kind, k)], rtol=0, atol=1e-6,
                                       err_msg=f"{kind} {network} round {k}")


def test_clock_times_never_decrease_and_advance_matches_step():
    net = fedtopo.Network("aws-north-america")
    o = net.overlay("ring")
    a, b = fedtopo.Clock(net, o), fedtopo.Clock(net, o)
    prev = np.zeros(len(net))
    for _ in range(10):
        t = a.step()
        assert (t >= prev).all()
        prev = t
    np.testing.assert_array_equal(b.advance(10), prev)
    assert a.now_ms == b.now_ms == prev.max()
    # Long-run rate tends to the cycle time (max-plus theory).
    c = fedtopo.Clock(net, o)
    c.advance(400)
    assert abs(c.now_ms / 400 - o.cycle_time_ms()) < 0.01 * o.cycle_time_ms()


def test_clock_schedule_runs():
    net = fedtopo.Network("aws-north-america")
    clock = fedtopo.Clock(net, net.overlay("matcha", matcha_rounds=50))
    t = clock.advance(20)
    assert t.shape == (22,) and np.isfinite(t).all() and clock.round == 20


@pytest.mark.parametrize("network", ["maxplus", "flow"])
@pytest.mark.parametrize("failures", ["node-down:0.3", "link-up:0.6"])
def test_clock_with_failures_equals_simulate(cli, tmp_path, network, failures):
    # A silo cut off by failures runs rounds ahead of the others; simulate
    # stops each silo after its last round, which changes the contention
    # the lagging silos see on flow: replay far more rounds than checked.
    rounds, checked, seed = 64, 8, 11
    cli("simulate", "--overlays", "ring,mst", "--rounds", str(rounds), "--network", network,
        "--access", "100M", "--seed", str(seed), "--failures", failures, "--format", "json",
        "--out", str(tmp_path))
    expected = starts(tmp_path / "starts.csv")
    net = fedtopo.Network("aws-north-america", access="100M")
    for kind in ["ring", "mst"]:
        o = net.overlay(kind, seed=seed)
        clock = fedtopo.Clock(net, o, network_model=network, seed=seed, failures=failures)
        plain = fedtopo.Clock(net, o, network_model=network, seed=seed)
        differs = False
        for k in range(1, checked + 1):
            t = clock.step()
            differs |= not np.array_equal(t, plain.step())
            np.testing.assert_allclose(t, expected[(f"{kind}/{failures}", k)], rtol=0,
                                       atol=1e-6, err_msg=f"{kind} {network} {failures} round {k}")
        assert differs, "failures changed no round: the test checks nothing"


def test_clock_failures_refused_where_simulate_refuses():
    net = fedtopo.Network("aws-north-america")
    with pytest.raises(ValueError, match="server-client"):
        fedtopo.Clock(net, net.overlay("star"), failures="node-down:0.5")
    for bad in ["node", "node-up:0", "disk:0.5", "link-up:1.5", "node-down:1", "node-down:-0.1"]:
        with pytest.raises(ValueError, match=r"\(0, 1\]|\[0, 1\)"):
            fedtopo.Clock(net, net.overlay("ring"), failures=bad)
    # "none", P = 1 up and Q = 0 down are no failures: the plain clock's times.
    a = fedtopo.Clock(net, net.overlay("ring"), failures="none").advance(5)
    b = fedtopo.Clock(net, net.overlay("ring"), failures="node-up:1").advance(5)
    c = fedtopo.Clock(net, net.overlay("ring"), failures="node-down:0").advance(5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("network", ["maxplus", "flow"])
def test_clock_breakdown_equals_simulate_breakdown(cli, tmp_path, network):
    # Where each round's time goes: the clock's breakdown is simulate's
    # (--breakdown CSV), round by round and silo by silo, and adds up.
    rounds, checked = 10, 5
    path = tmp_path / "breakdown.csv"
    cli("simulate", "--overlays", "star,ring", "--rounds", str(rounds), "--network", network,
        "--access", "100M", "--format", "json", "--breakdown", str(path))
    want = defaultdict(dict)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            want[(row["overlay"], int(row["round"]))][int(row["silo"])] = row
    net = fedtopo.Network("aws-north-america", access="100M")
    for kind in ["star", "ring"]:
        clock = fedtopo.Clock(net, net.overlay(kind), network_model=network, breakdown=True)
        assert clock.breakdown() is None
        for k in range(checked):
            t = clock.step()
            b = clock.breakdown()
            np.testing.assert_array_equal(b["end_ms"], t)
            np.testing.assert_allclose(b["compute_ms"] + b["transfer_ms"] + b["wait_ms"],
                                       b["end_ms"] - b["start_ms"], rtol=1e-12, atol=1e-9)
            for i in range(len(net)):
                row = want[(kind, k)][i]
                for col in ["start_ms", "compute_ms", "transfer_ms", "wait_ms", "end_ms"]:
                    assert abs(b[col][i] - float(row[col])) <= 1e-6, (kind, k, i, col)
                assert b["via"][i] == (int(row["via"]) if row["via"] else -1)
    with pytest.raises(ValueError, match="breakdown=True"):
        fedtopo.Clock(net, net.overlay("ring")).breakdown()


@pytest.mark.parametrize("kind", ["ring-allreduce", "mesh-allreduce"])
def test_allreduce_clock_refuses_what_it_does_not_model(kind):
    net = fedtopo.Network(fedtopo.Underlay.load(), access="100M")
    ar = net.overlay(kind)
    with pytest.raises(ValueError, match="all-reduce"):
        fedtopo.Clock(net, ar, stragglers="lognormal:0.4")
    # On the flow network it is clocked by its chunk-by-chunk replay.
    flow = fedtopo.Clock(net, ar, network_model="flow")
    maxplus = fedtopo.Clock(net, ar)
    for _ in range(3):
        f, m = flow.step(), maxplus.step()
    assert 0.5 * m.max() < f.max() < 2.0 * m.max()
