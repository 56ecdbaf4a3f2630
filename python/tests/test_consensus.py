"""Consensus matrices are row-stochastic and supported on the overlay."""

from __future__ import annotations

import numpy as np
import pytest

import fedtopo


@pytest.fixture(scope="module")
def net():
    return fedtopo.Network("aws-north-america")


@pytest.mark.parametrize("kind", ["star", "mst", "delta-mbst", "ring", "ring-opt", "matcha"])
@pytest.mark.parametrize("rule", ["auto", "local-degree", "mh", "decavg"])
def test_row_stochastic(net, kind, rule):
    o = net.overlay(kind, matcha_rounds=50)
    for k in range(3 if o.is_schedule else 1):
        a = o.consensus_matrix(rule, round=k)
        n = len(net)
        assert isinstance(a, np.ndarray) and a.shape == (n, n) and a.dtype == np.float64
        np.testing.assert_allclose(a.sum(axis=1), 1.0, atol=1e-12)
        assert (a >= -1e-12).all() or rule == "auto" and kind == "matcha"
        if not (kind == "star" or rule == "auto" and kind == "matcha"):
            # Off-diagonal weights only on arcs j -> i of the round.
            arcs = set(o.arcs_at(k))
            for i, j in zip(*np.nonzero(a)):
                assert i == j or (j, i) in arcs


def test_star_auto_is_exact_average(net):
    a = net.overlay("star").consensus_matrix()
    np.testing.assert_allclose(a, np.full_like(a, 1 / len(net)), atol=1e-15)


def test_schedule_rounds_differ(net):
    o = net.overlay("matcha", matcha_rounds=50)
    mats = [o.consensus_matrix(round=k) for k in range(6)]
    assert any(not np.array_equal(mats[0], m) for m in mats[1:])


def test_bad_rule(net):
    with pytest.raises(ValueError, match="unknown rule"):
        net.overlay("ring").consensus_matrix("spiral")
