"""The examples run and print what they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(name: str) -> list[str]:
    out = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                         text=True, check=True, timeout=300)
    return out.stdout.splitlines()


def test_dsgd_prints_time_to_accuracy_per_overlay():
    lines = run("dsgd.py")
    assert [line.split()[0] for line in lines] == ["star", "mst", "ring", "ring-opt"]
    assert all(" s to " in line and "cycle time" in line for line in lines)


def test_networkx_round_trip():
    pytest.importorskip("networkx")
    lines = run("networkx_round_trip.py")
    assert lines[0].startswith("my overlay: 48 arcs")
    assert len(lines) == 3
