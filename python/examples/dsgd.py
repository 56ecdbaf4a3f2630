"""D-SGD on synthetic data, timed by fedtopo: time-to-accuracy per overlay.

Each silo holds a non-IID shard of a logistic-regression problem, takes a
local SGD step, then averages with its in-neighbours through the overlay's
consensus matrix; fedtopo's Clock says when each round would have ended on
the network (aws-north-america, 1 Gbit/s access). Runs on PyTorch tensors
when torch is installed, else on NumPy (same code: einsum, exp, @).
"""
import numpy as np
import fedtopo

try:
    import torch as xp
    array = xp.from_numpy                                # float64 tensors
except ImportError:
    xp, array = np, np.asarray

net = fedtopo.Network("aws-north-america", access="1G")
n, m, d, target = len(net), 200, 20, 0.85
rng = np.random.default_rng(0)
w_true = rng.normal(size=d)
X = rng.normal(size=(n, m, d)) + 3 * rng.normal(size=(n, 1, d))  # non-IID shards
y = (X @ w_true > 0).astype(float)
X, y = array(X), array(y)

for kind in ["star", "mst", "ring", "ring-opt"]:
    overlay = net.overlay(kind)
    clock = fedtopo.Clock(net, overlay)                 # the round stepper of fedtopo simulate
    W = array(overlay.consensus_matrix())               # row-stochastic, (n, n)
    models = array(np.zeros((n, d)))
    for k in range(1000):
        p = 1 / (1 + xp.exp(-xp.einsum("sed,sd->se", X, models)))
        grads = xp.einsum("sed,se->sd", X, p - y) / m
        models = W @ (models - 0.05 * grads)            # local step, then consensus
        clock.step()                                    # advance simulated wall-clock
        correct = (xp.einsum("sed,td->tse", X, models) > 0) == (y > 0.5)
        acc = float(correct.sum()) / (n * n * m)        # every silo's model on all data
        if acc >= target:
            break
    print(f"{kind:9s} {k + 1:4d} rounds  {clock.now_ms / 1e3:7.2f} s to {acc:.1%}"
          f"  (cycle time {overlay.cycle_time_ms():6.1f} ms)")
