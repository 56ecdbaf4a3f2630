"""The example of docs/python.md runs as written.

Its `...` (the user's local steps and averaging) is a valid statement, so
the block runs unchanged: loading, the network, `compare` with
`to_pandas()`, the overlay's closed forms and consensus matrix, and 100
steps of a flow-model clock with stragglers and failures.
"""

from __future__ import annotations

import re

import pytest

from conftest import REPO

DOC = REPO / "docs" / "python.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_docs_example_runs_as_written(capsys):
    pytest.importorskip("pandas")
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) == 1, f"expected the one python block of {DOC}"
    scope: dict = {}
    exec(compile(blocks[0], str(DOC), "exec"), scope)
    # The loop ran its 100 rounds: the clock moved, every silo has a time.
    assert scope["k"] == 99
    assert scope["clock"].now_ms > 0
    assert len(scope["t"]) == len(scope["W"])
    printed = capsys.readouterr().out.strip().splitlines()
    assert float(printed[-1]) == scope["clock"].now_ms
