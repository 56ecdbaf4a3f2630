"""Flower FedAvg on synthetic data, with fedtopo's simulated wall-clock.

Flower's own server-side code runs in process (no Ray, no gRPC): a
SimpleClientManager holds one ClientProxy per silo, FedAvg.configure_fit
samples them, each trains locally (NumPy logistic regression on its non-IID
shard), FedAvg.aggregate_fit averages the updates weighted by examples and
FedAvg.evaluate scores the global model. Each Flower round is one round of
fedtopo's STAR overlay (server aggregation, [Marfoq20] Sec. 3), so
clock.step() says when it would have ended on the network.

    pip install flwr   # then: python flower_fedavg.py
"""
import numpy as np
from flwr.common import Code, FitRes, Status, ndarrays_to_parameters, parameters_to_ndarrays
from flwr.server.client_manager import SimpleClientManager
from flwr.server.client_proxy import ClientProxy
from flwr.server.strategy import FedAvg

import fedtopo

net = fedtopo.Network("aws-north-america", access="1G")
n, d, lr, local_steps, rounds = len(net), 20, 0.1, 5, 15
rng = np.random.default_rng(0)
w_true = rng.normal(size=d)
sizes = rng.integers(50, 300, size=n)                  # unequal shards: FedAvg weights them
X = [rng.normal(size=(s, d)) + 3 * rng.normal(size=d) for s in sizes]
y = [(x @ w_true > 0).astype(float) for x in X]


class Silo(ClientProxy):
    """A silo as a Flower client: local SGD steps on its own shard."""

    def fit(self, ins, timeout, group_id):
        i = int(self.cid)
        (w,) = parameters_to_ndarrays(ins.parameters)
        for _ in range(local_steps):
            p = 1 / (1 + np.exp(-X[i] @ w))
            w = w - lr * X[i].T @ (p - y[i]) / len(y[i])
        return FitRes(Status(Code.OK, ""), ndarrays_to_parameters([w]), len(y[i]), {})

    def get_properties(self, ins, timeout, group_id): raise NotImplementedError
    def get_parameters(self, ins, timeout, group_id): raise NotImplementedError
    def evaluate(self, ins, timeout, group_id): raise NotImplementedError
    def reconnect(self, ins, timeout, group_id): raise NotImplementedError


def accuracy(server_round, arrays, config):
    (w,) = arrays
    correct = sum(int(((x @ w > 0) == (t > 0.5)).sum()) for x, t in zip(X, y))
    return 0.0, {"accuracy": correct / int(sizes.sum())}


manager = SimpleClientManager()
for i in range(n):
    manager.register(Silo(str(i)))
strategy = FedAvg(min_fit_clients=n, min_available_clients=n, fraction_evaluate=0.0,
                  evaluate_fn=accuracy, fit_metrics_aggregation_fn=lambda metrics: {})
parameters = ndarrays_to_parameters([np.zeros(d)])
star = net.overlay("star")
clock = fedtopo.Clock(net, star, network_model="maxplus")
print(f"Flower FedAvg on {n} silos; fedtopo STAR overlay, cycle time {star.cycle_time_ms():.1f} ms")
for server_round in range(1, rounds + 1):
    instructions = strategy.configure_fit(server_round, parameters, manager)
    results = [(c, c.fit(ins, None, None)) for c, ins in instructions]
    parameters, _ = strategy.aggregate_fit(server_round, results, [])
    _, metrics = strategy.evaluate(server_round, parameters)
    t = clock.step()                                   # per-silo end of this round, ms
    print(f"round {server_round:2d}  accuracy {metrics['accuracy']:.3f}  simulated wall-clock"
          f" {clock.now_ms:8.1f} ms (silos done {t.min():.1f}..{t.max():.1f} ms)")
