"""Shared fixtures: the `fedtopo` CLI binary the bindings are checked against.

The binary is `$FEDTOPO_BIN`, else the newest of `target/{release,debug}/fedtopo`
of this repository, else it is built with `cargo build --bin fedtopo`.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILTINS = ["aws-north-america", "aws-gaia"]


def _find_binary() -> Path:
    env = os.environ.get("FEDTOPO_BIN")
    if env:
        return Path(env)
    found = [REPO / "target" / p / "fedtopo" for p in ("release", "debug")]
    found = [p for p in found if p.exists()]
    if not found:
        subprocess.run(
            ["cargo", "build", "--bin", "fedtopo"], cwd=REPO, check=True
        )
        found = [REPO / "target" / "debug" / "fedtopo"]
    return max(found, key=lambda p: p.stat().st_mtime)


@pytest.fixture(scope="session")
def cli():
    """`cli(*args)`: runs the fedtopo binary, returns its stdout parsed as JSON
    (stderr notes ignored)."""
    binary = _find_binary()

    def run(*args: str):
        out = subprocess.run(
            [str(binary), *args], capture_output=True, text=True, check=False
        )
        if out.returncode != 0:
            raise RuntimeError(f"fedtopo {' '.join(args)} failed: {out.stderr}")
        return json.loads(out.stdout)

    run.binary = binary
    return run


def paper_underlays() -> list[str]:
    """The throughput paper's eight underlays, shipped in the repository
    (underlays/paper/, re-exported with their source noted)."""
    d = Path(__file__).resolve().parents[2] / "underlays" / "paper"
    return sorted(str(p) for p in d.glob("*.gml"))


def close(a: float, b: float, tol: float = 1e-12) -> bool:
    """|a - b| <= tol * max(1, |b|)."""
    return abs(a - b) <= tol * max(1.0, abs(b))
