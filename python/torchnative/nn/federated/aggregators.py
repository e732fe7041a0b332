"""Server-side aggregators: one small interface (weights + client deltas -> new weights)
for FedAvg, FedAvgM, FedProx, FedAdam, FedYogi, FedAdagrad, FedMedian, FedTrimmedAvg,
Krum and Multi-Krum. Pure numpy, float64 arithmetic; hyper-parameter defaults are Flower's.

Every aggregator works on flat vectors: `weights` is the current global model (the
federated parameters concatenated), `deltas[i]` is client i's local result minus
`weights`, `num_examples[i]` its example count. Aggregating deltas is the same as
aggregating Flower's client weights (w + d_i), since every rule here is translation
equivariant; the deltas are what the clients send."""
from __future__ import annotations

import math
from typing import Dict, List, Sequence

import numpy as np

__all__ = ["Aggregator", "FedAvg", "FedAvgM", "FedProx", "FedAdam", "FedYogi", "FedAdagrad",
           "FedMedian", "FedTrimmedAvg", "Krum", "MultiKrum", "weighted_mean"]


def weighted_mean(deltas: Sequence[np.ndarray], num_examples: Sequence[int]) -> np.ndarray:
    """sum_i n_i d_i / sum_i n_i in float64 (FedAvg's rule)."""
    if len(deltas) == 0:
        raise ValueError("weighted_mean: no client updates to aggregate")
    n = np.asarray(num_examples, dtype=np.float64)
    if np.any(n < 0) or n.sum() <= 0:
        raise ValueError(f"weighted_mean: example counts must be non-negative with a positive sum, got {list(num_examples)}")
    acc = np.zeros(deltas[0].shape, dtype=np.float64)
    for d, w in zip(deltas, n):
        acc += w * np.asarray(d, dtype=np.float64)
    return acc / n.sum()


class Aggregator:
    """The interface. `linear` aggregators depend on the updates only through their
    weighted mean, so they compose with secure aggregation and DP-FedAvg (which only ever
    reveal a sum): they implement `apply_mean`. Robust aggregators need each update."""

    linear = True
    #: per-round settings sent to the clients (FedProx's proximal_mu)
    client_config: Dict[str, float] = {}

    def aggregate(self, weights: np.ndarray, deltas: Sequence[np.ndarray], num_examples: Sequence[int],
                  server_round: int) -> np.ndarray:
        """Returns the new global weights (float64) for round `server_round` (1-based)."""
        return self.apply_mean(weights, weighted_mean(deltas, num_examples), server_round)

    def apply_mean(self, weights: np.ndarray, mean_delta: np.ndarray, server_round: int) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} needs every client's update; it cannot work from their mean "
                                  "(secure aggregation and DP-FedAvg only reveal the mean)")

    # server-optimizer state, for the coordinator's checkpoint
    def state_dict(self) -> Dict[str, object]:
        return {}

    def load_state_dict(self, state: Dict[str, object]) -> None:
        pass

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


class FedAvg(Aggregator):
    """w + sum_i n_i d_i / sum_i n_i (McMahan et al. 2017)."""

    def apply_mean(self, weights, mean_delta, server_round):
        return np.asarray(weights, np.float64) + mean_delta


class FedProx(FedAvg):
    """FedAvg on the server; the clients add (mu/2)||w - w_global||^2 to their loss
    (Li et al. 2020). Flower's FedProx has no default for mu; 0.01 is the paper's smallest."""

    def __init__(self, proximal_mu: float = 0.01):
        if proximal_mu < 0:
            raise ValueError(f"FedProx: proximal_mu must be >= 0, got {proximal_mu}")
        self.proximal_mu = float(proximal_mu)
        self.client_config = {"proximal_mu": self.proximal_mu}


class FedAvgM(Aggregator):
    """Server momentum (Hsu et al. 2019), as Flower: pseudo-gradient g = -mean delta,
    m = momentum*m + g (m = g in the first round), w - server_learning_rate*m."""

    def __init__(self, server_learning_rate: float = 1.0, server_momentum: float = 0.0):
        self.server_learning_rate = float(server_learning_rate)
        self.server_momentum = float(server_momentum)
        self._m = None

    def apply_mean(self, weights, mean_delta, server_round):
        g = -mean_delta
        if self.server_momentum > 0.0:
            self._m = g if self._m is None else self.server_momentum * self._m + g
            g = self._m
        return np.asarray(weights, np.float64) - self.server_learning_rate * g

    def state_dict(self):
        return {"m": self._m}

    def load_state_dict(self, state):
        self._m = state.get("m")


class _FedOpt(Aggregator):
    """Reddi et al. 2021, "Adaptive Federated Optimization": the mean delta is a
    pseudo-gradient for a server optimizer. State starts at zero as in Flower."""

    def __init__(self, eta, eta_l, beta_1, beta_2, tau):
        self.eta, self.eta_l, self.beta_1, self.beta_2, self.tau = map(float, (eta, eta_l, beta_1, beta_2, tau))
        self._m = None
        self._v = None

    def _second_moment(self, v, d2):
        raise NotImplementedError

    def _step_size(self, server_round):
        return self.eta

    def apply_mean(self, weights, mean_delta, server_round):
        d = mean_delta
        if self._m is None:
            self._m = np.zeros_like(d)
            self._v = np.zeros_like(d)
        self._m = self.beta_1 * self._m + (1.0 - self.beta_1) * d
        self._v = self._second_moment(self._v, d * d)
        return np.asarray(weights, np.float64) + self._step_size(server_round) * self._m / (np.sqrt(self._v) + self.tau)

    def state_dict(self):
        return {"m": self._m, "v": self._v}

    def load_state_dict(self, state):
        self._m, self._v = state.get("m"), state.get("v")


class FedAdam(_FedOpt):
    """v = b2 v + (1-b2) d^2; Flower's bias-corrected step eta*sqrt(1-b2^(t+1))/(1-b1^(t+1))."""

    def __init__(self, eta=1e-1, eta_l=1e-1, beta_1=0.9, beta_2=0.99, tau=1e-9):
        super().__init__(eta, eta_l, beta_1, beta_2, tau)

    def _second_moment(self, v, d2):
        return self.beta_2 * v + (1.0 - self.beta_2) * d2

    def _step_size(self, t):
        return self.eta * math.sqrt(1.0 - self.beta_2 ** (t + 1.0)) / (1.0 - self.beta_1 ** (t + 1.0))


class FedYogi(_FedOpt):
    """v = v - (1-b2) d^2 sign(v - d^2)."""

    def __init__(self, eta=1e-2, eta_l=0.0316, beta_1=0.9, beta_2=0.99, tau=1e-3):
        super().__init__(eta, eta_l, beta_1, beta_2, tau)

    def _second_moment(self, v, d2):
        return v - (1.0 - self.beta_2) * d2 * np.sign(v - d2)


class FedAdagrad(_FedOpt):
    """v = v + d^2, no first-moment averaging (beta_1 = 0, as Flower)."""

    def __init__(self, eta=1e-1, eta_l=1e-1, tau=1e-9):
        super().__init__(eta, eta_l, 0.0, 0.0, tau)

    def _second_moment(self, v, d2):
        return v + d2


class FedMedian(Aggregator):
    """Coordinate-wise median of the client updates (Yin et al. 2018); ignores counts."""

    linear = False

    def aggregate(self, weights, deltas, num_examples, server_round):
        _need(deltas, 1, self)
        return np.asarray(weights, np.float64) + np.median(np.stack([np.asarray(d, np.float64) for d in deltas]), axis=0)


class FedTrimmedAvg(Aggregator):
    """Coordinate-wise mean after cutting the `beta` fraction of smallest and largest
    values (Flower's default beta = 0.2); ignores counts."""

    linear = False

    def __init__(self, beta: float = 0.2):
        if not 0.0 <= beta < 0.5:
            raise ValueError(f"FedTrimmedAvg: beta must be in [0, 0.5), got {beta}")
        self.beta = float(beta)

    def aggregate(self, weights, deltas, num_examples, server_round):
        _need(deltas, 1, self)
        a = np.sort(np.stack([np.asarray(d, np.float64) for d in deltas]), axis=0)
        cut = int(self.beta * a.shape[0])
        return np.asarray(weights, np.float64) + a[cut:a.shape[0] - cut].mean(axis=0)


class Krum(Aggregator):
    """Blanchard et al. 2017: each update is scored by the sum of squared distances to its
    n - f - 2 nearest others (at least 1); Krum keeps the lowest-scoring update,
    Multi-Krum (num_clients_to_keep = m > 0) the example-weighted mean of the m lowest."""

    linear = False

    def __init__(self, num_malicious_clients: int = 0, num_clients_to_keep: int = 0):
        if num_malicious_clients < 0 or num_clients_to_keep < 0:
            raise ValueError("Krum: num_malicious_clients and num_clients_to_keep must be >= 0")
        self.num_malicious_clients = int(num_malicious_clients)
        self.num_clients_to_keep = int(num_clients_to_keep)
        self.last_selected: List[int] = []

    def scores(self, deltas) -> np.ndarray:
        x = np.stack([np.asarray(d, np.float64) for d in deltas])
        sq = np.sum(x * x, axis=1)
        dist = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (x @ x.T), 0.0)
        np.fill_diagonal(dist, np.inf)
        k = max(1, len(deltas) - self.num_malicious_clients - 2)
        return np.sort(dist, axis=1)[:, :k].sum(axis=1)

    def aggregate(self, weights, deltas, num_examples, server_round):
        _need(deltas, 1, self)
        if len(deltas) == 1:
            self.last_selected = [0]
            return np.asarray(weights, np.float64) + np.asarray(deltas[0], np.float64)
        s = self.scores(deltas)
        order = [int(i) for i in np.argsort(s, kind="stable")]
        if self.num_clients_to_keep > 0:
            keep = order[:self.num_clients_to_keep]
            self.last_selected = keep
            return np.asarray(weights, np.float64) + weighted_mean([deltas[i] for i in keep], [num_examples[i] for i in keep])
        self.last_selected = order[:1]
        return np.asarray(weights, np.float64) + np.asarray(deltas[order[0]], np.float64)


class MultiKrum(Krum):
    """Krum keeping the `num_clients_to_keep` best updates (default: n - f)."""

    def __init__(self, num_malicious_clients: int = 0, num_clients_to_keep: int = 0):
        super().__init__(num_malicious_clients, num_clients_to_keep)

    def aggregate(self, weights, deltas, num_examples, server_round):
        if self.num_clients_to_keep == 0:
            m = max(1, len(deltas) - self.num_malicious_clients)
            inner = Krum(self.num_malicious_clients, m)
            out = inner.aggregate(weights, deltas, num_examples, server_round)
            self.last_selected = inner.last_selected
            return out
        return super().aggregate(weights, deltas, num_examples, server_round)


def _need(deltas, k, agg):
    if len(deltas) < k:
        raise ValueError(f"{type(agg).__name__}: needs at least {k} client update(s), got {len(deltas)}")
