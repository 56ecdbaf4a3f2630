"""Cost of Clock.step() per round, µs (issue 28: < 10 µs for 100 silos, maxplus).

    python python/benches/clock_step.py [--silos 100] [--rounds 2000]

Not a test: prints one line per overlay and network model, the best of 3
measures of wall time and of this process's CPU time (the CPU time is the
cost on a busy machine, where wall time also counts waiting for a core).
Build the extension in release (`pip install ./python`), not `maturin
develop`.
"""
import argparse
import time

import fedtopo

ap = argparse.ArgumentParser()
ap.add_argument("--silos", type=int, default=100)
ap.add_argument("--rounds", type=int, default=2000)
ap.add_argument("--underlay", default="aws-north-america")
a = ap.parse_args()

net = fedtopo.Network(a.underlay, silos=a.silos)
print(f"{a.underlay}, {len(net)} silos, {a.rounds} rounds per measure")
for network in ["maxplus", "paper", "flow"]:
    for kind in ["ring", "mst", "star"]:
        overlay = net.overlay(kind)
        clock = fedtopo.Clock(net, overlay, network_model=network)
        clock.step()  # warm-up
        wall = cpu = float("inf")
        for _ in range(3):
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(a.rounds):
                clock.step()
            wall = min(wall, (time.perf_counter() - t0) / a.rounds)
            cpu = min(cpu, (time.process_time() - c0) / a.rounds)
        print(f"{network:8s} {kind:5s} {wall * 1e6:7.1f} µs wall, {cpu * 1e6:7.1f} µs CPU per step"
              f"  ({len(overlay.arcs)} arcs, {clock.now_ms / clock.round:.1f} ms per round)")
