"""Underlay loading and info equal `fedtopo underlay info --format json`."""

from __future__ import annotations

import pytest

import fedtopo
from conftest import BUILTINS, close


@pytest.mark.parametrize("name", BUILTINS)
def test_info_equals_cli(cli, name):
    doc = cli("underlay", "info", name, "--format", "json")
    u = fedtopo.Underlay.load(name)
    info = u.info()
    assert u.name == doc["name"] == info["name"]
    assert len(u) == len(u.routers) == doc["routers"]
    for key in ["links", "diameter_hops", "routers_without_coordinates"]:
        assert info[key] == doc[key], key
    for key in ["total_length_km", "diameter_km", "diameter_ms", "min_capacity_bps",
                "max_capacity_bps"]:
        assert close(info[key], doc[key]), key


def test_default_is_aws_north_america():
    assert fedtopo.Underlay.load().name == "aws-north-america"


def test_to_pandas():
    pd = pytest.importorskip("pandas")
    net = fedtopo.Network("aws-north-america")
    df = fedtopo.to_pandas(net.compare(["star", "ring"]))
    assert isinstance(df, pd.DataFrame) and list(df["overlay"]) == ["star", "ring"]
