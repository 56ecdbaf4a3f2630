"""Underlay loading and info equal `fedtopo underlay info --format json`."""

from __future__ import annotations

import pytest

import fedtopo
from conftest import BUILTINS, close


ODD_GML = """graph [
  node [ id 0 label "a" ]
  node [ id 1 label "b" Latitude 40 Longitude -70 ]
  node [ id 2 label "c" Latitude 41 Longitude -71 ]
  node [ id 3 label "d" ]
  edge [ source 0 target 1 ]
  edge [ source 1 target 2 ]
  edge [ source 1 target 2 ]
  edge [ source 2 target 2 ]
]
"""


@pytest.fixture
def odd_gml(tmp_path):
    """An underlay whose loading drops, merges, removes and estimates."""
    p = tmp_path / "odd.gml"
    p.write_text(ODD_GML)
    return str(p)


@pytest.mark.parametrize("name", BUILTINS + ["odd"])
def test_info_equals_cli(cli, name, odd_gml):
    name = odd_gml if name == "odd" else name
    doc = cli("underlay", "info", name, "--format", "json")
    u = fedtopo.Underlay.load(name)
    info = u.info()
    # The CLI's notes, line for line (loading drops, merges, estimates).
    assert info["notes"] == doc["notes"]
    assert info["estimated_positions"] == doc["estimated_positions"]
    assert u.name == doc["name"] == info["name"]
    assert len(u) == len(u.routers) == doc["routers"]
    for key in ["links", "diameter_hops", "routers_without_coordinates"]:
        assert info[key] == doc[key], key
    for key in ["total_length_km", "diameter_km", "diameter_ms", "min_capacity_bps",
                "max_capacity_bps"]:
        assert close(info[key], doc[key]), key


def test_default_is_aws_north_america():
    assert fedtopo.Underlay.load().name == "aws-north-america"


def test_info_notes_say_what_loading_changed(odd_gml):
    notes = fedtopo.Underlay.load(odd_gml).info()["notes"]
    assert any(n.startswith("dropped 1 node(s): d") for n in notes), notes
    assert "removed 1 self-loop(s)" in notes
    assert any(n.startswith("merged 1 parallel edge(s)") for n in notes)
    assert any(n.startswith("estimated the position of a") for n in notes)
    # Keeping the isolated router leaves two components: refused, as the CLI does.
    with pytest.raises(ValueError, match="2 components"):
        fedtopo.Underlay.load(odd_gml, isolated_routers="keep")


def test_compare_returns_records_without_pandas():
    net = fedtopo.Network("aws-north-america")
    rows = net.compare(["star", "ring"])
    assert isinstance(rows, fedtopo.Records) and isinstance(rows, list)
    assert all(type(r) is dict for r in rows)
    assert [r["overlay"] for r in rows] == ["star", "ring"]


def test_to_pandas():
    pd = pytest.importorskip("pandas", reason="pandas not installed")
    net = fedtopo.Network("aws-north-america")
    rows = net.compare(["star", "ring", "matcha"], matcha_rounds=20)
    for df in [rows.to_pandas(), fedtopo.to_pandas(rows)]:
        assert isinstance(df, pd.DataFrame)
        assert list(df["overlay"]) == [r["overlay"] for r in rows]
        assert list(df["cycle_time_ms"]) == [r["cycle_time_ms"] for r in rows]
        # A schedule's nested stats become schedule.KEY columns.
        assert any(c.startswith("schedule.") for c in df.columns)
