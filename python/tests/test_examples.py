"""The examples run and print what they promise."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_FLWR = importlib.util.find_spec("flwr") is not None

# Runs an example with `import torch` failing: its NumPy branch.
WITHOUT_TORCH = "import runpy, sys; sys.modules['torch'] = None; runpy.run_path(sys.argv[1], run_name='__main__')"


def run(name: str, without_torch: bool = False) -> list[str]:
    cmd = [sys.executable, str(EXAMPLES / name)]
    if without_torch:
        cmd = [sys.executable, "-c", WITHOUT_TORCH, str(EXAMPLES / name)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def time_to_accuracy(lines: list[str]) -> dict[str, tuple[int, float]]:
    """{overlay: (rounds, seconds)} from dsgd.py's lines."""
    out = {}
    for line in lines[1:]:
        kind, rounds, _, seconds = line.split()[:4]
        out[kind] = (int(rounds), float(seconds))
    return out


def check_dsgd(lines: list[str]) -> dict[str, tuple[int, float]]:
    assert [line.split()[0] for line in lines[1:]] == ["star", "mst", "ring", "ring-opt"]
    assert all(" s to " in line and "cycle time" in line for line in lines[1:])
    result = time_to_accuracy(lines)
    assert all(r < 1000 for r, _ in result.values()), "an overlay never reached the target"
    return result


def test_dsgd_numpy_branch():
    lines = run("dsgd.py", without_torch=True)
    assert lines[0] == "backend: numpy"
    check_dsgd(lines)


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed (pip install torch)")
def test_dsgd_torch_branch_equals_numpy_branch():
    torch_lines = run("dsgd.py")
    assert lines_backend(torch_lines).startswith("torch ")
    with_torch = check_dsgd(torch_lines)
    # Autograd + torch.optim.SGD compute the NumPy branch's gradient step:
    # same rounds to the target (within one round of float rounding) and,
    # through the same Clock, the same simulated time for the same rounds.
    with_numpy = time_to_accuracy(run("dsgd.py", without_torch=True))
    for kind, (rounds, seconds) in with_torch.items():
        assert abs(rounds - with_numpy[kind][0]) <= 1, (kind, rounds, with_numpy[kind])
        if rounds == with_numpy[kind][0]:
            assert seconds == with_numpy[kind][1], kind


def lines_backend(lines: list[str]) -> str:
    assert lines[0].startswith("backend: ")
    return lines[0][len("backend: "):]


@pytest.mark.skipif(not HAS_FLWR, reason="flwr not installed (pip install flwr)")
def test_flower_fedavg_advances_the_clock_each_round():
    lines = run("flower_fedavg.py")
    assert lines[0].startswith("Flower FedAvg on 22 silos")
    cycle = float(lines[0].split("cycle time ")[1].split()[0])
    rounds = [line for line in lines if line.startswith("round ")]
    assert len(rounds) == 15
    acc = [float(line.split("accuracy ")[1].split()[0]) for line in rounds]
    clock_ms = [float(line.split("wall-clock ")[1].split()[0]) for line in rounds]
    assert acc[-1] > 0.8 and acc[-1] > acc[0], acc
    assert all(b > a for a, b in zip(clock_ms, clock_ms[1:])), clock_ms
    # STAR rounds: the simulated time per round is the STAR cycle time
    # (a static overlay's rounds settle at the max-plus rate).
    per_round_ms = (clock_ms[-1] - clock_ms[-5]) / 4
    assert abs(per_round_ms - cycle) <= 0.01 * cycle + 1.0, (per_round_ms, cycle)


def test_networkx_round_trip():
    pytest.importorskip("networkx", reason="networkx not installed")
    lines = run("networkx_round_trip.py")
    assert lines[0].startswith("my overlay: 48 arcs")
    assert len(lines) == 3
