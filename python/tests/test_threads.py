"""Long Rust computations release the GIL: Python threads run meanwhile."""

from __future__ import annotations

import threading
import time

import fedtopo

KINDS = ["mst", "delta-mbst", "ring-opt"]


def test_compare_runs_without_the_gil():
    # A compare long enough to tell a stall from the OS scheduler: the
    # smallest network (of growing size) whose compare takes > 0.2 s.
    for silos in [300, 600, 1000, 1500, 2000]:
        net = fedtopo.Network("aws-gaia", silos=silos)
        t0 = time.perf_counter()
        net.compare(KINDS)
        alone = time.perf_counter() - t0
        if alone > 0.2:
            break
    assert alone > 0.2, f"compare took {alone:.3f} s at {silos} silos: too short to tell"

    result = {}
    worker = threading.Thread(target=lambda: result.update(rows=net.compare(KINDS)))
    ticks, gap = 0, 0.0
    last = time.perf_counter()
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        gap, last = max(gap, now - last), now
        ticks += 1  # the main thread keeps running Python code
    worker.join()
    assert len(result["rows"]) == len(KINDS)
    # Holding the GIL, compare would stop this loop for its whole duration;
    # released, the loop only waits for the OS scheduler.
    assert ticks > 1000, ticks
    assert gap < alone / 2, f"main thread stalled {gap:.3f} s of a {alone:.3f} s compare"
