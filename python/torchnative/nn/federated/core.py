"""The transport-independent parts of a federated round: which parameters are federated
(ParamSpace), a client's local training (local_update), the client's post-processing of
its delta (DP clipping, compression, masking), and the coordinator's round logic
(selection, validation, aggregation, DP noise, evaluation, history, checkpoints) shared
by Engine (processes) and simulate (one process)."""
from __future__ import annotations

import logging
import math
import os
import pickle
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
import torch

from .aggregators import Aggregator, weighted_mean
from .compress import make_compressor
from .privacy import DPFedAvg, RDPAccountant, clip_to_norm

log = logging.getLogger("torchnative.nn.federated")

_NORM_CLASSES = ("BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm", "RMSNorm", "LocalResponseNorm")


# ---- which parameters are federated ----------------------------------------------------

def only_lora(name: str, param: torch.Tensor) -> bool:
    """Parameter filter: peft's LoRA adapter weights (lora_A / lora_B / lora_embedding_*)."""
    return "lora_" in name


def _norm_names(model: torch.nn.Module) -> set:
    out = set()
    for mname, mod in model.named_modules():
        if any(type(mod).__name__.endswith(c) for c in _NORM_CLASSES):
            for pname, _ in mod.named_parameters(recurse=False):
                out.add(f"{mname}.{pname}" if mname else pname)
    return out


class ParamSpace:
    """The federated parameters of a model as one flat vector (in named_parameters order).
    `params` is "all", "trainable" (requires_grad), "lora", "norm" (parameters of
    normalisation layers) or a callable (name, parameter) -> bool."""

    def __init__(self, model: torch.nn.Module, params="all"):
        named = list(model.named_parameters())
        if callable(params):
            sel = [(n, p) for n, p in named if params(n, p)]
        elif params == "all":
            sel = named
        elif params == "trainable":
            sel = [(n, p) for n, p in named if p.requires_grad]
        elif params == "lora":
            sel = [(n, p) for n, p in named if only_lora(n, p)]
        elif params == "norm":
            norms = _norm_names(model)
            sel = [(n, p) for n, p in named if n in norms]
        else:
            raise ValueError(f"params must be 'all', 'trainable', 'lora', 'norm' or a callable (name, param) -> bool, "
                             f"got {params!r}")
        if not sel:
            raise ValueError(f"the parameter filter {params!r} selects no parameter of {type(model).__name__}")
        for n, p in sel:
            if not p.is_floating_point():
                raise TypeError(f"federated parameter {n} has dtype {p.dtype}; only floating-point parameters can be averaged")
        self.model = model
        self.names = [n for n, _ in sel]
        self.params = [p for _, p in sel]
        self.shapes = [tuple(p.shape) for p in self.params]
        self.numel = int(sum(p.numel() for p in self.params))
        self.dtype = np.float64 if all(p.dtype == torch.float64 for p in self.params) else np.float32
        fed = {id(p) for p in self.params}
        # parameters trained locally but not federated (kept per client by simulate)
        self.local_params = [p for _, p in named if id(p) not in fed and p.requires_grad]

    def get(self) -> np.ndarray:
        """A copy of the federated parameters, flat, in the wire dtype."""
        tdt = torch.float64 if self.dtype == np.float64 else torch.float32
        with torch.no_grad():
            flat = torch.cat([p.detach().reshape(-1).to(tdt) for p in self.params])
        return flat.numpy().copy()

    def set(self, vec: np.ndarray) -> None:
        if vec.shape != (self.numel,):
            raise ValueError(f"expected a flat vector of {self.numel} values, got shape {vec.shape}")
        src = torch.from_numpy(np.ascontiguousarray(vec, dtype=self.dtype))
        off = 0
        with torch.no_grad():
            for p in self.params:
                n = p.numel()
                p.copy_(src[off:off + n].view(p.shape).to(p.dtype))
                off += n

    def as_tensors(self, vec: np.ndarray) -> List[torch.Tensor]:
        src = torch.from_numpy(np.ascontiguousarray(vec, dtype=self.dtype))
        out, off = [], 0
        for p in self.params:
            n = p.numel()
            out.append(src[off:off + n].view(p.shape).to(p.dtype))
            off += n
        return out

    def get_local(self) -> List[torch.Tensor]:
        return [p.detach().clone() for p in self.local_params]

    def set_local(self, values: List[torch.Tensor]) -> None:
        with torch.no_grad():
            for p, v in zip(self.local_params, values):
                p.copy_(v)


# ---- the client --------------------------------------------------------------------------

def _default_step(model, batch, loss_fn):
    if isinstance(batch, dict):
        out = model(**batch)
        loss = out.loss if loss_fn is None else loss_fn(out, batch)
        first = next(iter(batch.values()))
        return loss, int(first.shape[0])
    x, y = batch
    return loss_fn(model(x), y), int(y.shape[0])


def local_update(model: torch.nn.Module, space: ParamSpace, global_vec: np.ndarray, data: Iterable,
                 loss_fn: Optional[Callable], optimizer: Callable, local_epochs: int, seed: int,
                 proximal_mu: float = 0.0, train_step: Optional[Callable] = None) -> Tuple[np.ndarray, int, float]:
    """Loads `global_vec`, trains `local_epochs` passes over `data` and returns
    (local - global as a flat vector, examples in one pass, mean training loss).
    FedProx: proximal_mu > 0 adds (mu/2) * ||w - w_global||^2 over the federated
    parameters to every batch's loss."""
    space.set(global_vec)
    torch.manual_seed(seed)
    model.train()
    opt = optimizer([p for p in model.parameters() if p.requires_grad])
    anchors = space.as_tensors(global_vec) if proximal_mu > 0 else None
    total, count, n_examples = 0.0, 0, 0
    for epoch in range(local_epochs):
        for batch in data:
            opt.zero_grad()
            if train_step is not None:
                loss, bs = train_step(model, batch)
            else:
                loss, bs = _default_step(model, batch, loss_fn)
            if anchors is not None:
                prox = sum(((p - a) ** 2).sum() for p, a in zip(space.params, anchors))
                (loss + 0.5 * proximal_mu * prox).backward()
            else:
                loss.backward()
            opt.step()
            total += float(loss.detach()) * bs
            count += bs
            if epoch == 0:
                n_examples += bs
    if count == 0:
        raise ValueError("local_update: the client's data yielded no batch")
    return space.get() - global_vec, n_examples, total / count


class ClientState:
    """What a client keeps between rounds: the compressor's error-feedback residual and
    (in simulation) its non-federated parameters."""

    def __init__(self):
        self.residual = None
        self.local = None


def prepare_update(delta: np.ndarray, config: dict, state: ClientState) -> Tuple[np.ndarray, dict, bytes]:
    """The client's post-processing, in order: DP clipping to config['clip_norm'], then
    compression (with error feedback). Returns (the vector the coordinator will see,
    header fields, payload bytes)."""
    header = {}
    if config.get("clip_norm"):
        delta, norm = clip_to_norm(delta, config["clip_norm"])
        header["norm"] = norm
    comp = make_compressor(config.get("compression"))
    if comp is None:
        vec = np.ascontiguousarray(delta)
        return vec, {**header, "enc": "raw", "dtype": vec.dtype.str}, vec.tobytes()
    if state.residual is not None and state.residual.shape == delta.shape:
        delta = delta + state.residual
    payload, meta = comp.encode(delta)
    vec = comp.decode(payload, meta, delta.size)
    state.residual = (delta - vec).astype(delta.dtype)
    return vec, {**header, **meta}, payload


def decode_update(header: dict, payload: bytes, numel: int) -> np.ndarray:
    """Inverse of prepare_update's payload (raises ValueError on a malformed one)."""
    enc = header.get("enc")
    if enc == "raw":
        dt = np.dtype(header.get("dtype", "<f4"))
        if dt.kind != "f":
            raise ValueError(f"update dtype {dt} is not floating point")
        if len(payload) != numel * dt.itemsize:
            raise ValueError(f"update has {len(payload) // max(dt.itemsize, 1)} values, expected {numel}")
        return np.frombuffer(payload, dtype=dt).copy()
    comp = make_compressor(header.get("compression"))
    if comp is None:
        raise ValueError(f"unknown update encoding {enc!r}")
    return comp.decode(payload, header, numel)


# ---- the coordinator ---------------------------------------------------------------------

def select_clients(candidates: Sequence[int], server_round: int, attempt: int, seed: int, fraction: float,
                   clients_per_round: Optional[int], min_clients: int) -> List[int]:
    """Seeded selection: count = clients_per_round, else max(min_clients,
    ceil(fraction * len(candidates))), capped at len(candidates); drawn without
    replacement by numpy's generator seeded with (seed, round, attempt)."""
    cands = sorted(candidates)
    if clients_per_round is not None:
        k = int(clients_per_round)
    else:
        k = max(int(min_clients), int(math.ceil(fraction * len(cands))))
    k = min(k, len(cands))
    if k == len(cands):
        return cands
    rng = np.random.default_rng([int(seed), int(server_round), int(attempt)])
    idx = rng.choice(len(cands), size=k, replace=False)
    return sorted(cands[i] for i in idx)


class BelowMinimum(RuntimeError):
    """A round ended with fewer valid updates than min_clients."""


class Coordinator:
    """Round state and logic of the server, independent of how updates travel."""

    def __init__(self, model, space: ParamSpace, aggregator: Aggregator, rounds: int, seed: int,
                 evaluate: Optional[Callable], fraction: float, clients_per_round: Optional[int], min_clients: int,
                 dp: Optional[DPFedAvg], secure_aggregation: bool, compression, checkpoint: Optional[str],
                 max_retries: int):
        if not isinstance(aggregator, Aggregator):
            raise TypeError(f"aggregator must be a torchnative.nn.federated aggregator, got {type(aggregator).__name__}")
        if rounds < 0:
            raise ValueError(f"rounds must be >= 0, got {rounds}")
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"fraction must be in (0, 1], got {fraction}")
        if min_clients < 1:
            raise ValueError(f"min_clients must be >= 1, got {min_clients}")
        if (dp is not None or secure_aggregation) and not aggregator.linear:
            what = "DP-FedAvg" if dp is not None else "secure aggregation"
            raise ValueError(f"{type(aggregator).__name__} needs each client's update; {what} only gives the server "
                             "their sum (use FedAvg, FedAvgM, FedProx, FedAdam, FedYogi or FedAdagrad)")
        if secure_aggregation and compression is not None:
            raise ValueError("secure aggregation masks dense vectors; it cannot be combined with compression")
        make_compressor(compression)   # validates the name
        self.model, self.space, self.aggregator = model, space, aggregator
        self.rounds, self.seed, self.evaluate = int(rounds), int(seed), evaluate
        self.fraction, self.clients_per_round, self.min_clients = fraction, clients_per_round, int(min_clients)
        self.dp, self.secure_aggregation, self.compression = dp, bool(secure_aggregation), compression
        self.checkpoint, self.max_retries = checkpoint, int(max_retries)
        self.weights = space.get()
        self.round_done = 0
        self.history: List[dict] = []
        self.accountant = RDPAccountant() if dp is not None else None
        self.resumed_from = None
        if checkpoint and os.path.exists(checkpoint):
            self._load()

    # -- plan and validation --
    def config(self) -> dict:
        c = dict(self.aggregator.client_config)
        if self.dp is not None:
            c["clip_norm"] = self.dp.clip_norm
        if self.compression is not None:
            c["compression"] = self.compression
        if self.secure_aggregation:
            c["secagg"] = True
        return c

    def select(self, candidates, server_round, attempt):
        return select_clients(candidates, server_round, attempt, self.seed, self.fraction, self.clients_per_round,
                              self.min_clients)

    def check(self, client, vec: Optional[np.ndarray], n: int, loss: float, error: Optional[str] = None,
              masked: bool = False) -> Optional[str]:
        """Why an update is rejected, or None. Rejections are logged; never averaged. A
        `masked` (securely aggregated) vector looks random: only its count and loss can be
        checked (its length is the transport's to check)."""
        reason = error
        if reason is None:
            if vec is None or (not masked and vec.shape != (self.space.numel,)):
                reason = f"wrong shape {None if vec is None else vec.shape}, expected ({self.space.numel},)"
            elif not masked and not np.all(np.isfinite(vec)):
                reason = f"{int(np.size(vec) - np.count_nonzero(np.isfinite(vec)))} non-finite values (NaN/Inf)"
            elif not (isinstance(n, (int, np.integer)) and n > 0):
                reason = f"bad example count {n!r}"
            elif not math.isfinite(loss):
                reason = f"non-finite training loss {loss}"
        if reason is not None:
            log.warning("federated: update from client %s rejected: %s", client, reason)
        return reason

    def screen(self, updates: Dict[int, tuple], masked: bool = False):
        """The updates of one attempt, {client: (vector, examples, loss, transport error or
        None)}, through check() in client order: (accepted [(client, vector, examples)],
        rejected [{"client", "reason"}], losses [(loss, examples)] of the accepted)."""
        accepted, rejected, losses = [], [], []
        for c in sorted(updates):
            vec, n, loss, err = updates[c]
            why = self.check(c, vec, n, loss, err, masked)
            if why is not None:
                rejected.append({"client": c, "reason": why})
                continue
            accepted.append((c, vec, n))
            losses.append((loss, n))
        return accepted, rejected, losses

    # -- aggregation --
    def aggregate(self, server_round: int, attempt: int, updates: List[Tuple[int, np.ndarray, int]]) -> np.ndarray:
        """updates: (client, delta, examples) that passed check()."""
        w = np.asarray(self.weights, np.float64)
        deltas = [u[1] for u in updates]
        if self.dp is not None:
            mean = np.mean(np.stack([np.asarray(d, np.float64) for d in deltas]), axis=0)
            return self._finish_dp(server_round, attempt, w, mean, len(deltas))
        out = self.aggregator.aggregate(w, deltas, [u[2] for u in updates], server_round)
        kept = getattr(self.aggregator, "last_selected", None)
        self.last_kept = None if kept is None else sorted(updates[i][0] for i in kept)
        return out

    last_kept = None

    def aggregate_mean(self, server_round: int, attempt: int, mean: np.ndarray, count: int) -> np.ndarray:
        """Secure aggregation: only the (weighted, or under DP uniform) mean is known."""
        w = np.asarray(self.weights, np.float64)
        if self.dp is not None:
            return self._finish_dp(server_round, attempt, w, mean, count)
        return self.aggregator.apply_mean(w, mean, server_round)

    def _finish_dp(self, server_round, attempt, w, mean, count):
        # DP-FedAvg (McMahan et al. 2018), fixed clipping and uniform weights, noise on the
        # server: mean + N(0, (z C / m)^2) with m the number of clients sampled this round
        m = self.planned
        rng = np.random.default_rng([self.seed, 0x44505, int(server_round), int(attempt)])
        noisy = mean * (count / m) + rng.normal(0.0, self.dp.noise_multiplier * self.dp.clip_norm / m, size=mean.shape)
        return self.aggregator.apply_mean(w, noisy, server_round)

    def finish_round(self, server_round: int, new_weights: np.ndarray, record: dict) -> dict:
        if self.last_kept is not None:
            record["kept"] = self.last_kept   # Krum / Multi-Krum: whose updates were used
            self.last_kept = None
        self.weights = np.asarray(new_weights, np.float64).astype(self.space.dtype)
        self.space.set(self.weights)
        if self.accountant is not None:
            q = self.planned / max(1, self.candidates)
            self.accountant.step(self.dp.noise_multiplier, q)
            record["epsilon"] = self.accountant.get_epsilon(self.dp.delta)
            record["delta"] = self.dp.delta
        if self.evaluate is not None:
            self.model.eval()
            with torch.no_grad():
                record["metrics"] = dict(self.evaluate(self.model))
        else:
            record["metrics"] = {}
        self.round_done = server_round
        self.history.append(record)
        self._save()
        return record

    # -- checkpoints --
    def _save(self):
        if not self.checkpoint:
            return
        state = {"round_done": self.round_done, "weights": self.weights, "history": self.history,
                 "aggregator": self.aggregator.state_dict(), "aggregator_type": type(self.aggregator).__name__,
                 "accountant": None if self.accountant is None else self.accountant.state_dict(),
                 "numel": self.space.numel}
        tmp = self.checkpoint + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.checkpoint)

    def _load(self):
        with open(self.checkpoint, "rb") as f:
            state = pickle.load(f)
        if state["numel"] != self.space.numel or state["aggregator_type"] != type(self.aggregator).__name__:
            raise ValueError(f"checkpoint {self.checkpoint} is for {state['aggregator_type']} over {state['numel']} "
                             f"parameters, not {type(self.aggregator).__name__} over {self.space.numel}")
        self.round_done = state["round_done"]
        self.weights = state["weights"]
        self.history = state["history"]
        self.aggregator.load_state_dict(state["aggregator"])
        if self.accountant is not None and state["accountant"] is not None:
            self.accountant.load_state_dict(state["accountant"])
        self.space.set(self.weights)
        self.resumed_from = self.round_done
        log.warning("federated: resumed from %s after round %d", self.checkpoint, self.round_done)

    # set per attempt by the transport: how many clients were sampled out of how many
    planned = 0
    candidates = 0


def training_seed(seed: int, server_round: int, client: int) -> int:
    return (int(seed) * 1_000_003 + int(server_round) * 10_007 + int(client)) % (2 ** 63)


def below_minimum(valid: int, min_clients: int, secagg_threshold: int = 0) -> Optional[str]:
    """Why `valid` updates cannot make a round (fewer than min_clients, or fewer than the
    secure-aggregation threshold t that unmasking needs), or None."""
    if valid < min_clients and min_clients >= secagg_threshold:
        return f"below min_clients={min_clients}"
    if valid < secagg_threshold:
        return f"below the secure-aggregation threshold t={secagg_threshold}"
    return None


def new_record(server_round: int) -> dict:
    return {"round": server_round, "participants": [], "dropped": [], "rejected": [], "train_loss": float("nan"),
            "metrics": {}, "bytes_sent": 0, "bytes_received": 0, "seconds": 0.0, "retries": []}


def mean_loss(losses: Sequence[Tuple[float, int]]) -> float:
    if not losses:
        return float("nan")
    return float(sum(l * n for l, n in losses) / sum(n for _, n in losses))


__all__ = ["ParamSpace", "only_lora", "local_update", "Coordinator", "select_clients", "BelowMinimum",
           "weighted_mean"]
