"""federated.simulate: many virtual clients in one process, trained one after another on
one worker model, with the same selection, aggregators, validation, privacy and
compression as the multi-process Engine (for experiments with 100 clients on a laptop)."""
from __future__ import annotations

import time
from typing import Callable, List, Optional, Sequence

import numpy as np
import torch

from . import secagg as sa
from .core import (ClientState, Coordinator, ParamSpace, below_minimum, decode_update, local_update, log, mean_loss,
                   new_record, prepare_update, training_seed)

__all__ = ["simulate"]


def _sgd(params):
    return torch.optim.SGD(params, lr=0.05)


def simulate(model_fn: Callable[[], torch.nn.Module], client_data: Sequence, rounds: int, aggregator,
             loss_fn: Optional[Callable] = torch.nn.functional.cross_entropy, optimizer: Callable = _sgd,
             local_epochs: int = 1, evaluate: Optional[Callable] = None, seed: int = 0, fraction: float = 1.0,
             clients_per_round: Optional[int] = None, min_clients: int = 1, params="all", dp=None,
             secure_aggregation: bool = False, compression: Optional[str] = None, dropout: float = 0.0,
             checkpoint: Optional[str] = None, max_retries: int = 3, train_step: Optional[Callable] = None,
             model: Optional[torch.nn.Module] = None) -> List[dict]:
    """Runs `rounds` rounds over `client_data` (one iterable of batches per client) and
    returns the history (one dict per round, as Engine.participate). `dropout` is the
    probability that a selected client vanishes mid-round (seeded); `model` reuses a built
    model instead of calling model_fn."""
    if len(client_data) == 0:
        raise ValueError("simulate: client_data is empty")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"simulate: dropout must be in [0, 1), got {dropout}")
    torch.manual_seed(seed)
    model = model if model is not None else model_fn()
    space = ParamSpace(model, params)
    coord = Coordinator(model, space, aggregator, rounds, seed, evaluate, fraction, clients_per_round, min_clients,
                        dp, secure_aggregation, compression, checkpoint, max_retries)
    states = [ClientState() for _ in client_data]
    server_local = space.get_local() if space.local_params else None
    if server_local is not None:
        for s in states:
            s.local = [t.clone() for t in server_local]
    config = coord.config()
    mu = float(config.get("proximal_mu", 0.0))
    model_bytes = space.numel * np.dtype(space.dtype).itemsize
    candidates = list(range(len(client_data)))
    for r in range(coord.round_done + 1, rounds + 1):
        t0 = time.perf_counter()
        rec = new_record(r)
        for attempt in range(max_retries + 1):
            selected = coord.select(candidates, r, attempt)
            coord.planned, coord.candidates = len(selected), len(candidates)
            drng = np.random.default_rng([seed, 0xD0, r, attempt])
            gone = {c for c in selected if dropout > 0 and drng.random() < dropout}
            rec["bytes_sent"] += model_bytes * len(selected)
            secure = _SecureAttempt(selected, f"sim/{r}/{attempt}") if secure_aggregation else None
            updates = {}   # client -> (vector, examples, loss, error)
            for c in selected:
                if c in gone:
                    continue
                if states[c].local is not None:
                    space.set_local(states[c].local)
                delta, n, loss = local_update(model, space, coord.weights, client_data[c], loss_fn, optimizer,
                                              local_epochs, training_seed(seed, r, c), mu, train_step)
                if states[c].local is not None:
                    states[c].local = space.get_local()
                vec, header, payload = prepare_update(delta, config, states[c])
                rec["bytes_received"] += len(payload)
                if secure is not None:
                    masked, err = secure.upload(c, vec, 1.0 if dp is not None else float(n))
                    updates[c] = (masked, n, loss, err)
                else:
                    updates[c] = (decode_update(header, payload, space.numel), n, loss, None)
            accepted, rejected, losses = coord.screen(updates, masked=secure is not None)
            why = below_minimum(len(accepted), min_clients, secure.t if secure is not None else 0)
            if why is not None:
                msg = f"round {r} attempt {attempt}: {len(accepted)} valid update(s) from {len(selected)} selected, {why}"
                log.warning("federated: %s; retrying", msg)
                rec["retries"].append({"attempt": attempt, "reason": msg, "dropped": sorted(gone),
                                       "rejected": rejected})
                continue
            if server_local is not None:
                space.set_local(server_local)   # the global model keeps its own non-federated parameters
            if secure is not None:
                new = coord.aggregate_mean(r, attempt, secure.mean(accepted), len(accepted))
            else:
                new = coord.aggregate(r, attempt, accepted)
            rec.update(participants=[a[0] for a in accepted], dropped=sorted(gone), rejected=rejected,
                       train_loss=mean_loss(losses), attempts=attempt + 1)
            break
        else:
            need = f"min_clients={min_clients}" + (" (or the secure-aggregation threshold)" if secure_aggregation else "")
            raise RuntimeError(f"federated round {r}: fewer than {need} valid updates after {max_retries + 1} "
                               f"attempts: {rec['retries']}")
        rec["seconds"] = time.perf_counter() - t0
        coord.finish_round(r, new, rec)
    return coord.history


class _SecureAttempt:
    """Secure aggregation among the selected clients of one simulated attempt, every
    message passed in memory: all of them advertise and share keys (U1 = U2 = selected);
    a client that drops (or withholds its update) does so before uploading, and its masks
    are removed through its mask key's shares."""

    def __init__(self, selected, salt):
        self.selected, self.salt = list(selected), salt
        self.sessions = {c: sa.ClientSession(c, salt) for c in selected}
        self.pubs = {c: s.public() for c, s in self.sessions.items()}
        self.t = sa.threshold(len(selected))
        sealed = {u: s.share_keys(self.pubs, self.t) for u, s in self.sessions.items()}
        for v, s in self.sessions.items():
            s.receive_shares(self.selected, {u: sealed[u][v] for u in self.selected if u != v})

    def upload(self, c, vec, weight):
        """(masked upload or None, error): a non-finite update is withheld by the client,
        since the coordinator cannot inspect a masked one."""
        if not np.all(np.isfinite(vec)):
            return None, "non-finite update withheld from secure aggregation"
        return self.sessions[c].mask(sa.encode_weighted(vec, weight)), None

    def mean(self, accepted):
        alive = [a[0] for a in accepted]
        dropped = [c for c in self.selected if c not in alive]
        total = None
        with np.errstate(over="ignore"):
            for _, masked, _ in accepted:
                total = masked if total is None else total + masked
        responses = {u: self.sessions[u].reveal(alive, dropped) for u in alive}
        return sa.decode_mean(sa.unmask_sum(total, self.salt, self.t, self.pubs, alive, dropped, responses))
