"""D-SGD on synthetic data, timed by fedtopo: time-to-accuracy per overlay.

Each silo holds a non-IID shard of a logistic-regression problem, takes a
local SGD step, then averages with its in-neighbours through the overlay's
consensus matrix; fedtopo's Clock says when each round would have ended on
the network (aws-north-america, 1 Gbit/s access). With PyTorch installed the
step is torch autograd + torch.optim.SGD; without it, the same step in NumPy.
"""
import numpy as np
import fedtopo

try:
    import torch
except ImportError:
    torch = None

net = fedtopo.Network("aws-north-america", access="1G")
n, m, d, lr, target = len(net), 200, 20, 0.05, 0.85
rng = np.random.default_rng(0)
w_true = rng.normal(size=d)
X = rng.normal(size=(n, m, d)) + 3 * rng.normal(size=(n, 1, d))  # non-IID shards
y = (X @ w_true > 0).astype(float)
print("backend:", f"torch {torch.__version__}" if torch else "numpy")

for kind in ["star", "mst", "ring", "ring-opt"]:
    overlay = net.overlay(kind)
    clock = fedtopo.Clock(net, overlay)                # the round stepper of fedtopo simulate
    W = overlay.consensus_matrix()                     # row-stochastic (n, n) NumPy array
    if torch:
        Xt, yt, Wt = (torch.from_numpy(a) for a in (X, y, W))
        models = torch.zeros(n, d, dtype=torch.float64, requires_grad=True)
        opt = torch.optim.SGD([models], lr=lr)
    else:
        models = np.zeros((n, d))
    for k in range(1000):
        if torch:                                      # local step: autograd + optimizer
            opt.zero_grad()
            logits = torch.einsum("sed,sd->se", Xt, models)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, yt, reduction="sum")
            (loss / m).backward()                      # row s: silo s's mean-loss gradient
            opt.step()
            with torch.no_grad():
                models.copy_(Wt @ models)              # consensus with in-neighbours
            current = models.detach().numpy()
        else:
            p = 1 / (1 + np.exp(-np.einsum("sed,sd->se", X, models)))
            models = W @ (models - lr * np.einsum("sed,se->sd", X, p - y) / m)
            current = models
        clock.step()                                   # advance simulated wall-clock
        acc = float(((np.einsum("sed,td->tse", X, current) > 0) == (y > 0.5)).mean())
        if acc >= target:                              # every silo's model on all data
            break
    print(f"{kind:9s} {k + 1:4d} rounds  {clock.now_ms / 1e3:7.2f} s to {acc:.1%}"
          f"  (cycle time {overlay.cycle_time_ms():6.1f} ms)")
