"""D-SGD on synthetic data, timed by fedtopo: time-to-accuracy per overlay.

Each silo holds a shard of a synthetic logistic-regression problem, takes a
local SGD step, then averages with its in-neighbours through the overlay's
consensus matrix. fedtopo's Clock says when each round would have ended on
the network (aws-north-america, 1 Gbit/s access). NumPy only (PyTorch not needed).
"""
import numpy as np
import fedtopo

net = fedtopo.Network("aws-north-america", access="1G")
n, d, target = len(net), 20, 0.85
rng = np.random.default_rng(0)
w_true = rng.normal(size=d)
X = rng.normal(size=(n, 200, d)) + 3 * rng.normal(size=(n, 1, d))  # non-IID shards
y = (X @ w_true > 0).astype(float)

for kind in ["star", "mst", "ring", "ring-opt"]:
    overlay = net.overlay(kind)
    clock = fedtopo.Clock(net, overlay)                 # the round stepper of fedtopo simulate
    W = overlay.consensus_matrix()                      # row-stochastic, (n, n)
    models = np.zeros((n, d))
    for k in range(1000):
        p = 1 / (1 + np.exp(-np.einsum("sed,sd->se", X, models)))
        grads = np.einsum("sed,se->sd", X, p - y) / X.shape[1]
        models = W @ (models - 0.05 * grads)             # local step, then consensus
        clock.step()                                    # advance simulated wall-clock
        acc = np.mean([((X @ m > 0) == y).mean() for m in models])  # every silo's model
        if acc >= target:
            break
    print(f"{kind:9s} {k + 1:4d} rounds  {clock.now_ms / 1e3:7.2f} s to {acc:.1%}"
          f"  (cycle time {overlay.cycle_time_ms():6.1f} ms)")
