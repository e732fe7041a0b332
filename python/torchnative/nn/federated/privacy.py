"""Differential privacy for federated averaging: the DP-FedAvg settings, clipping of a
client's update, and a Rényi-DP accountant for the subsampled Gaussian mechanism that
reports epsilon at a given delta (orders and RDP-to-(eps, delta) conversion as opacus's)."""
from __future__ import annotations

import math
from typing import Dict, List, Sequence, Tuple

import numpy as np

__all__ = ["DPFedAvg", "clip_to_norm", "RDPAccountant", "rdp_subsampled_gaussian", "eps_from_rdp"]

# the orders opacus's RDPAccountant uses by default
DEFAULT_ORDERS: List[float] = [1 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(12, 64)]


class DPFedAvg:
    """DP-FedAvg with fixed clipping (McMahan et al. 2018, "Learning Differentially Private
    Recurrent Language Models"): every client clips its update to L2 norm `clip_norm`;
    the server averages the sampled clients' updates with equal weight (a count-weighted
    mean would let one client's sensitivity grow with its data) and adds Gaussian noise of
    standard deviation noise_multiplier * clip_norm / m, m = clients sampled per round.
    Each round is accounted as a subsampled Gaussian mechanism with rate m / N."""

    def __init__(self, clip_norm: float, noise_multiplier: float, delta: float = 1e-5):
        if not clip_norm > 0:
            raise ValueError(f"DPFedAvg: clip_norm must be > 0, got {clip_norm}")
        if not noise_multiplier >= 0:
            raise ValueError(f"DPFedAvg: noise_multiplier must be >= 0, got {noise_multiplier}")
        if not 0 < delta < 1:
            raise ValueError(f"DPFedAvg: delta must be in (0, 1), got {delta}")
        self.clip_norm, self.noise_multiplier, self.delta = float(clip_norm), float(noise_multiplier), float(delta)

    def __repr__(self):
        return f"DPFedAvg(clip_norm={self.clip_norm}, noise_multiplier={self.noise_multiplier}, delta={self.delta})"


def clip_to_norm(vec: np.ndarray, max_norm: float) -> Tuple[np.ndarray, float]:
    """vec scaled to L2 norm at most max_norm; returns (clipped, original norm)."""
    norm = float(np.linalg.norm(np.asarray(vec, np.float64)))
    if norm > max_norm:
        vec = (vec * (max_norm / norm)).astype(vec.dtype)
    return vec, norm


def _log_moment(q: float, sigma: float, alpha: float) -> float:
    """log E_{z~N(0,s^2)}[((1-q) + q exp((2z-1)/(2 s^2)))^alpha]: the log of A_alpha in
    Mironov, Talwar, Zhang 2019 ("Rényi Differential Privacy of the Sampled Gaussian
    Mechanism"), by quadrature. The integrand is log-concave-like and smooth, so the
    trapezoid rule on a fine grid that covers its bulk (the mass sits between 0 and
    alpha) converges to machine precision."""
    if q == 0:
        return 0.0
    if q == 1.0:
        return alpha * (alpha - 1) / (2 * sigma ** 2)
    lo, hi = -14.0 * sigma - 1.0, alpha + 14.0 * sigma + 1.0
    z = np.linspace(lo, hi, 20_001)
    s2 = sigma * sigma
    log_pdf = -z * z / (2 * s2) - 0.5 * math.log(2 * math.pi * s2)
    log_mix = np.logaddexp(math.log1p(-q), math.log(q) + (2 * z - 1) / (2 * s2))
    f = log_pdf + alpha * log_mix
    m = f.max()
    w = np.exp(f - m)
    h = z[1] - z[0]
    integral = h * (w.sum() - 0.5 * (w[0] + w[-1]))
    return float(m + math.log(integral))


def rdp_subsampled_gaussian(q: float, noise_multiplier: float, steps: int,
                            orders: Sequence[float] = DEFAULT_ORDERS) -> np.ndarray:
    """RDP of `steps` compositions of the Poisson-subsampled Gaussian mechanism, per order."""
    if not 0 <= q <= 1:
        raise ValueError(f"sampling rate must be in [0, 1], got {q}")
    if noise_multiplier == 0:
        return np.full(len(orders), np.inf)
    return np.array([steps * _log_moment(q, noise_multiplier, a) / (a - 1) for a in orders])


def eps_from_rdp(orders: Sequence[float], rdp: Sequence[float], delta: float) -> Tuple[float, float]:
    """(epsilon, best order) by the conversion of Balle et al. 2020 (Proposition 12 /
    Canonne, Kamath, Steinke), the one opacus uses."""
    orders = np.asarray(orders, np.float64)
    rdp = np.asarray(rdp, np.float64)
    eps = rdp - (np.log(delta) + np.log(orders)) / (orders - 1) + np.log((orders - 1) / orders)
    eps = np.where(np.isnan(eps), np.inf, eps)
    i = int(np.argmin(eps))
    return float(eps[i]), float(orders[i])


class RDPAccountant:
    """Accumulates (noise_multiplier, sample_rate) steps and reports epsilon at delta."""

    def __init__(self, orders: Sequence[float] = DEFAULT_ORDERS):
        self.orders = list(orders)
        self.history: List[List[float]] = []   # [noise_multiplier, sample_rate, steps]
        self._cache: Dict[Tuple[float, float], np.ndarray] = {}

    def step(self, noise_multiplier: float, sample_rate: float) -> None:
        if self.history and self.history[-1][0] == noise_multiplier and self.history[-1][1] == sample_rate:
            self.history[-1][2] += 1
        else:
            self.history.append([float(noise_multiplier), float(sample_rate), 1])

    def rdp(self) -> np.ndarray:
        total = np.zeros(len(self.orders))
        for sigma, q, steps in self.history:
            key = (sigma, q)
            if key not in self._cache:
                self._cache[key] = rdp_subsampled_gaussian(q, sigma, 1, self.orders)
            total = total + steps * self._cache[key]
        return total

    def get_epsilon(self, delta: float) -> float:
        if not self.history:
            return 0.0
        return eps_from_rdp(self.orders, self.rdp(), delta)[0]

    def state_dict(self):
        return {"history": [list(h) for h in self.history]}

    def load_state_dict(self, state):
        self.history = [list(h) for h in state["history"]]
