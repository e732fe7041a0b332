"""federated.simulate: many virtual clients in one process, trained one after another on
one worker model, with the same selection, aggregators, validation, privacy and
compression as the multi-process Engine (for experiments with 100 clients on a laptop)."""
from __future__ import annotations

import time
from typing import Callable, List, Optional, Sequence

import numpy as np
import torch

from . import secagg as sa
from .core import (ClientState, Coordinator, ParamSpace, decode_update, local_update, log, mean_loss, new_record,
                   prepare_update, training_seed)

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
            keys = {c: sa.KeyPair() for c in selected} if secure_aggregation else {}
            accepted, rejected, losses, vectors = [], [], [], {}
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
                if not secure_aggregation:
                    vec = decode_update(header, payload, space.numel)
                why = coord.check(c, vec, n, loss)
                if why is not None:
                    rejected.append({"client": c, "reason": why})
                    continue
                accepted.append((c, vec, n))
                losses.append((loss, n))
            if len(accepted) < min_clients:
                msg = (f"round {r} attempt {attempt}: {len(accepted)} valid update(s) from {len(selected)} selected, "
                       f"below min_clients={min_clients}")
                log.warning("federated: %s; retrying", msg)
                rec["retries"].append({"attempt": attempt, "reason": msg, "dropped": sorted(gone),
                                       "rejected": rejected})
                continue
            if server_local is not None:
                space.set_local(server_local)   # the global model keeps its own non-federated parameters
            if secure_aggregation:
                new = _secure_round(coord, r, attempt, selected, accepted, keys, dp is not None)
            else:
                new = coord.aggregate(r, attempt, accepted)
            rec.update(participants=[a[0] for a in accepted], dropped=sorted(gone), rejected=rejected,
                       train_loss=mean_loss(losses), attempts=attempt + 1)
            break
        else:
            raise RuntimeError(f"federated round {r}: fewer than min_clients={min_clients} valid updates after "
                               f"{max_retries + 1} attempts: {rec['retries']}")
        rec["seconds"] = time.perf_counter() - t0
        coord.finish_round(r, new, rec)
    return coord.history


def _secure_round(coord, r, attempt, selected, accepted, keys, dp):
    """Masks each accepted update against every selected peer (all of them exchanged
    keys), sums, and removes the masks of the peers that dropped with the survivors'
    revealed seeds."""
    salt = f"sim/{r}/{attempt}"
    pubs = {c: keys[c].public for c in selected}
    total = None
    alive = [a[0] for a in accepted]
    for c, vec, n in accepted:
        w = 1.0 if dp else float(n)
        ring = sa.encode_fixed(np.concatenate([np.asarray(vec, np.float64) * w, [w]]))
        masked = sa.mask(ring, c, keys[c], pubs, salt)
        with np.errstate(over="ignore"):
            total = masked if total is None else total + masked
    dropped = [c for c in selected if c not in alive]
    revealed = {c: sa.reveal(c, keys[c], pubs, dropped, salt) for c in alive}
    plain = sa.decode_fixed(sa.unmask(total, revealed))
    weight = plain[-1]
    return coord.aggregate_mean(r, attempt, plain[:-1] / weight, len(alive))
