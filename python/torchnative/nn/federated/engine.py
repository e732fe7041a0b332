"""federated.Engine: one process per client over the public torch.distributed API, rank 0
coordinating. Two transports:

- "store" (default, fault tolerant): the coordinator and clients exchange the model and
  the updates through the job's key-value store (torch.distributed's TCPStore: the
  default group's store after init_process_group, or any Store passed in) with a
  deadline per round. A client that dies or is late is dropped and the round completes
  with the rest; a restarted client rejoins; a restarted coordinator resumes from its
  checkpoint while the clients wait. Collectives cannot do this: one dead rank fails
  every collective of its group (docs/FEDERATED.md).
- "collective": broadcast of the global model and gather of the updates on the default
  gloo group. No relay through the store, but any fault ends the job.
"""
from __future__ import annotations

import datetime
import json
import struct
import time
import uuid
from typing import Callable, List, Optional

import numpy as np
import torch
import torch.distributed as dist

from . import secagg as sa
from .core import (ClientState, Coordinator, ParamSpace, below_minimum, decode_update, local_update, log, mean_loss,
                   new_record, prepare_update, training_seed)

__all__ = ["Engine"]

_MAGIC = b"TNF1"


def pack(header: dict, payload: bytes = b"") -> bytes:
    h = json.dumps(header).encode()
    return _MAGIC + struct.pack("<I", len(h)) + h + payload


def unpack(msg: bytes):
    if len(msg) < 8 or msg[:4] != _MAGIC:
        raise ValueError("not a federated message")
    (n,) = struct.unpack("<I", msg[4:8])
    if 8 + n > len(msg):
        raise ValueError("truncated federated message")
    return json.loads(msg[8:8 + n].decode()), msg[8 + n:]


def _sgd(params):
    return torch.optim.SGD(params, lr=0.05)


def _tail(key: str) -> int:
    """The client rank that ends a store key (".../upd/<s>/<rank>")."""
    return int(key.rsplit("/", 1)[1])


def _sealed_msg(sealed) -> bytes:
    """A client's encrypted shares {peer: ciphertext} as one store value."""
    return json.dumps({str(v): c.hex() for v, c in sealed.items()}).encode()


def _sealed_for(msg: bytes, me: int) -> bytes:
    """The ciphertext addressed to `me` in a _sealed_msg (ValueError if there is none)."""
    try:
        return bytes.fromhex(json.loads(msg)[str(me)])
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"secure aggregation: no shares for client {me} in the message ({e})") from e


def _sealed_covers(msg: bytes, u1, sender: int) -> bool:
    """Whether a _sealed_msg from `sender` holds a ciphertext for every other client of U1."""
    try:
        return {int(v) for v in json.loads(msg)} >= {c for c in u1 if c != sender}
    except (TypeError, ValueError):
        return False


def _is_timeout(e: Exception) -> bool:
    return isinstance(e, getattr(dist, "DistStoreError", ())) or "timeout" in str(e).lower()


class Engine:
    """Federated training of `model`. Every rank constructs the same Engine (same model
    architecture, aggregator and settings) and calls participate(); rank 0 coordinates
    and, if its `data` is not None, also trains as a client.

    Selection: `clients_per_round`, else max(min_clients, ceil(fraction * available)),
    seeded by (seed, round, attempt). `params` chooses the federated parameters ("all",
    "trainable", "lora", "norm" or a callable (name, param) -> bool). `round_timeout`
    (seconds) is the deadline for updates; a round with fewer than `min_clients` valid
    updates is logged, recorded under "retries" and run again, up to `max_retries`
    times, then raises. `checkpoint` is a file the coordinator writes after every round
    and resumes from. `dp` (DPFedAvg), `secure_aggregation`, `compression` ("int8",
    "topk:<fraction>") as in docs/FEDERATED.md."""

    def __init__(self, model: torch.nn.Module, rounds: int = 10, aggregator=None, data=None,
                 loss_fn: Optional[Callable] = torch.nn.functional.cross_entropy, optimizer: Callable = _sgd,
                 local_epochs: int = 1, evaluate: Optional[Callable] = None, seed: int = 0, *,
                 fraction: float = 1.0, clients_per_round: Optional[int] = None, min_clients: int = 1,
                 params="all", round_timeout: float = 60.0, max_retries: int = 3, retry_wait: float = 1.0,
                 checkpoint: Optional[str] = None, dp=None, secure_aggregation: bool = False,
                 compression: Optional[str] = None, transport: str = "store", store=None,
                 rank: Optional[int] = None, world_size: Optional[int] = None, client_timeout: float = 600.0,
                 train_step: Optional[Callable] = None, join_timeout: float = 120.0, name: str = "fed"):
        from .aggregators import FedAvg
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        if transport not in ("store", "collective"):
            raise ValueError(f"transport must be 'store' or 'collective', got {transport!r}")
        if transport == "collective" and (secure_aggregation or compression is not None):
            raise ValueError("secure aggregation and compression need transport='store' (the collective transport "
                             "gathers dense float vectors)")
        if local_epochs < 1:
            raise ValueError(f"local_epochs must be >= 1, got {local_epochs}")
        if round_timeout <= 0:
            raise ValueError(f"round_timeout must be > 0, got {round_timeout}")
        self.model, self.rounds = model, int(rounds)
        self.aggregator = aggregator if aggregator is not None else FedAvg()
        self.data, self.loss_fn, self.optimizer = data, loss_fn, optimizer
        self.local_epochs, self.evaluate, self.seed = int(local_epochs), evaluate, int(seed)
        self.fraction, self.clients_per_round, self.min_clients = fraction, clients_per_round, min_clients
        self.params, self.round_timeout, self.max_retries = params, float(round_timeout), int(max_retries)
        self.retry_wait, self.checkpoint, self.dp = float(retry_wait), checkpoint, dp
        self.secure_aggregation, self.compression, self.transport = secure_aggregation, compression, transport
        self.client_timeout, self.train_step = float(client_timeout), train_step
        self.join_timeout = float(join_timeout)
        self._garbage: List[tuple] = []   # (seq, keys) of finished attempts, deleted two attempts later
        self._store, self._rank, self._world = store, rank, world_size
        self.prefix = f"tnfed/{name}/"
        self.space = ParamSpace(model, params)
        self.coordinator: Optional[Coordinator] = None

    # ---- entry point ----
    def participate(self) -> List[dict]:
        """Runs the federation on this rank. Returns the coordinator's history on rank 0
        (one record per round) and this client's own records on the other ranks."""
        if self._store is not None:
            if self._rank is None or self._world is None:
                raise ValueError("Engine(store=...) also needs rank= and world_size=")
            rank, world, store = int(self._rank), int(self._world), self._store
        else:
            if not dist.is_initialized():
                raise RuntimeError("Engine.participate(): call torch.distributed.init_process_group first, or pass "
                                   "store=, rank= and world_size=")
            rank, world = dist.get_rank(), dist.get_world_size()
            store = dist.distributed_c10d._get_default_store()
        if world < 2 and self.data is None:
            raise ValueError("a federation needs at least one client: world_size is 1 and rank 0 has no data")
        if self.transport == "collective":
            if self._store is not None or not dist.is_initialized():
                raise ValueError("transport='collective' runs on the default process group (init_process_group)")
            return self._collective(rank, world)
        self.store, self.rank, self.world = store, rank, world
        if rank == 0:
            return self._coordinate()
        if self.data is None:
            raise ValueError(f"rank {rank} has no data: only rank 0 may coordinate without training")
        return self._client()

    # ---- store helpers ----
    def _k(self, *parts) -> str:
        return self.prefix + "/".join(str(p) for p in parts)

    def _wait_keys(self, keys: List[str], deadline: float) -> List[str]:
        """The keys that exist by `deadline` (monotonic seconds)."""
        got = []
        for k in keys:
            left = deadline - time.monotonic()
            if left > 0:
                try:
                    self.store.wait([k], datetime.timedelta(seconds=left))
                    got.append(k)
                    continue
                except Exception as e:  # noqa: BLE001 - the store's timeout class differs by version
                    if not _is_timeout(e):
                        raise
            if self.store.check([k]):
                got.append(k)
        return got

    def _delete(self, keys):
        for k in keys:
            try:
                self.store.delete_key(k)
            except Exception:  # noqa: BLE001 - best effort clean-up
                pass

    # ---- coordinator (store transport) ----
    def _coordinate(self) -> List[dict]:
        st, K = self.store, self._k
        coord = Coordinator(self.model, self.space, self.aggregator, self.rounds, self.seed, self.evaluate,
                            self.fraction, self.clients_per_round, self.min_clients, self.dp,
                            self.secure_aggregation, self.compression, self.checkpoint, self.max_retries)
        self.coordinator = coord
        config = coord.config()
        own = ClientState()
        clients = ([0] if self.data is not None else []) + list(range(1, self.world))
        itemsize = np.dtype(self.space.dtype).itemsize
        # at start (or resume) give every client of the world until the deadline to join
        self._wait_keys([K("join", c) for c in clients if c != 0], time.monotonic() + self.join_timeout)
        try:
            for r in range(coord.round_done + 1, self.rounds + 1):
                t0 = time.perf_counter()
                rec = new_record(r)
                for attempt in range(self.max_retries + 1):
                    out = self._coordinate_attempt(coord, r, attempt, clients, config, own, rec, itemsize)
                    if out is not None:
                        break
                    time.sleep(self.retry_wait)
                else:
                    raise RuntimeError(f"federated round {r}: fewer than min_clients={self.min_clients} valid updates "
                                       f"after {self.max_retries + 1} attempts: {rec['retries']}")
                rec["seconds"] = time.perf_counter() - t0
                coord.finish_round(r, out, rec)
                log.info("federated: round %d done: %s", r, {k: rec[k] for k in ("participants", "dropped", "train_loss")})
        finally:
            self._stop(clients)
        return coord.history

    def _coordinate_attempt(self, coord, r, attempt, clients, config, own, rec, itemsize):
        st, K = self.store, self._k
        cands = [c for c in clients if c == 0 or st.check([K("join", c)])]
        if len(cands) < self.min_clients:
            msg = f"round {r} attempt {attempt}: {len(cands)} client(s) connected, below min_clients={self.min_clients}"
            log.warning("federated: %s; retrying", msg)
            rec["retries"].append({"attempt": attempt, "reason": msg})
            # give late joiners until the deadline
            self._wait_keys([K("join", c) for c in clients if c != 0], time.monotonic() + self.round_timeout)
            return None
        selected = coord.select(cands, r, attempt)
        coord.planned, coord.candidates = len(selected), len(cands)
        s = st.add(K("seq"), 1)
        model_msg = pack({"round": r}, np.ascontiguousarray(coord.weights).tobytes())
        st.set(K("model", s), model_msg)
        plan = json.dumps({"round": r, "attempt": attempt, "selected": selected, "config": config,
                           "timeout": self.round_timeout}).encode()
        st.set(K("plan", s), plan)
        remote = [c for c in selected if c != 0]
        rec["bytes_sent"] += len(model_msg) * len(remote) + len(plan) * (self.world - 1)
        keys_used = [K("model", s)] + [K("upd", s, c) for c in remote]
        secure, why = None, None
        if self.secure_aggregation:
            secure = self._secure_setup(s, selected, keys_used)
            why = secure["failed"]
            remote = [c for c in remote if c in secure["u2"]]
        deadline = time.monotonic() + self.round_timeout
        updates = {}   # client -> (vec or None, n, loss, error)
        if why is None:
            if 0 in selected and (secure is None or 0 in secure["u2"]):
                updates[0] = self._own_update(coord, r, config, own, secure)
            for k in self._wait_keys([K("upd", s, c) for c in remote], deadline):
                msg = st.get(k)
                rec["bytes_received"] += len(msg)
                updates[_tail(k)] = self._parse(msg, secure is not None)
        dropped = sorted(set(selected) - (set(updates) if why is None else set(secure["u2"])))
        for c in dropped:
            if c != 0:
                self._delete([K("join", c)])   # a client that missed its step must rejoin
        accepted, rejected, losses = coord.screen(updates, masked=secure is not None)
        new = None
        if why is None:
            why = below_minimum(len(accepted), self.min_clients, secure["t"] if secure is not None else 0)
        if why is None:
            if secure is not None:
                new, why = self._unmask_round(coord, r, attempt, s, accepted, secure, rec, keys_used)
            else:
                new = coord.aggregate(r, attempt, accepted)
        if new is None and secure is not None:
            # release clients waiting for the next step of this abandoned attempt
            for step in ("peers", "u2", "unmask"):
                if not st.check([K(step, s)]):
                    st.set(K(step, s), json.dumps({"abort": True}))
            keys_used += [K("unmask", s)]
        # clean up lagged by two attempts, so a late client never reads a vanished key
        self._garbage.append((s, keys_used + [K("plan", s - 3)]))
        while len(self._garbage) > 2:
            self._delete(self._garbage.pop(0)[1])
        if new is None:
            msg = (f"round {r} attempt {attempt}: {len(accepted)} valid update(s) from {len(selected)} selected "
                   f"(dropped {dropped}, rejected {[x['client'] for x in rejected]}), {why}")
            log.warning("federated: %s; retrying", msg)
            rec["retries"].append({"attempt": attempt, "reason": msg, "dropped": dropped, "rejected": rejected})
            return None
        rec.update(participants=[a[0] for a in accepted], dropped=dropped, rejected=rejected,
                   train_loss=mean_loss(losses), attempts=attempt + 1)
        return new

    def _own_update(self, coord, r, config, own, secure):
        delta, n, loss = local_update(self.model, self.space, coord.weights, self.data, self.loss_fn, self.optimizer,
                                      self.local_epochs, training_seed(self.seed, r, 0),
                                      float(config.get("proximal_mu", 0.0)), self.train_step)
        vec, header, payload = prepare_update(delta, config, own)
        self.space.set(coord.weights)   # the coordinator's model holds the global weights
        if secure is not None:
            if not np.all(np.isfinite(vec)):
                return (None, n, loss, "non-finite update withheld from secure aggregation")
            return (secure["own"].mask(sa.encode_weighted(vec, self._weight(n))), n, loss, None)
        return (decode_update(header, payload, self.space.numel), n, loss, None)

    def _weight(self, n):
        """A client's weight in the securely aggregated mean: its examples, or 1 under DP-FedAvg."""
        return 1.0 if self.dp is not None else float(n)

    def _parse(self, msg, secure):
        try:
            header, payload = unpack(msg)
            n, loss = header.get("n"), float(header.get("loss", float("nan")))
            if [list(x) for x in header.get("shapes", [])] != [list(x) for x in self.space.shapes]:
                return (None, n, loss, f"wrong shapes {header.get('shapes')}, expected {[list(x) for x in self.space.shapes]}")
            if secure:
                if len(payload) != 8 * (self.space.numel + 1):
                    return (None, n, loss, f"masked update of {len(payload)} bytes, expected {8 * (self.space.numel + 1)}")
                return (np.frombuffer(payload, np.uint64).copy(), n, loss, None)
            return (decode_update(header, payload, self.space.numel), n, loss, None)
        except (ValueError, TypeError, KeyError) as e:
            return (None, 0, float("nan"), f"malformed update: {e}")

    def _secure_setup(self, s, selected, keys_used) -> dict:
        """Rounds 1-2 of secure aggregation (secagg.py) on the coordinator: U1 (the clients
        whose public keys arrive within a third of the round timeout), the threshold t, U2
        (the clients whose encrypted shares arrive within another third); rank 0 takes part
        as a client when selected. Returns the attempt's state; state["failed"] says why the
        attempt cannot go on (fewer than t clients shared keys)."""
        st, K = self.store, self._k
        salt = f"{self.prefix}{s}"
        own = sa.ClientSession(0, salt) if 0 in selected else None
        remote = [c for c in selected if c != 0]
        keys_used += [K(step, s, c) for step in ("pk", "shares") for c in selected] + [K("peers", s), K("u2", s)]
        if own is not None:
            st.set(K("pk", s, 0), own.public())
        got = self._wait_keys([K("pk", s, c) for c in remote], time.monotonic() + self.round_timeout / 3)
        u1 = sorted(([0] if own is not None else []) + [_tail(k) for k in got])
        pubs = {c: st.get(K("pk", s, c)) for c in u1}
        t = sa.threshold(len(u1))
        st.set(K("peers", s), json.dumps({"t": t, "keys": {str(c): pubs[c].decode() for c in u1}}))
        if own is not None:
            st.set(K("shares", s, 0), _sealed_msg(own.share_keys(pubs, t)))
        got = self._wait_keys([K("shares", s, c) for c in u1 if c != 0], time.monotonic() + self.round_timeout / 3)
        # U2: the clients whose shares arrived with one ciphertext for every other member of U1
        u2 = sorted(([0] if own is not None else []) + [_tail(k) for k in got if _sealed_covers(st.get(k), u1, _tail(k))])
        state = {"salt": salt, "own": own, "pubs": pubs, "t": t, "u2": u2, "failed": None}
        if len(u2) < t:
            state["failed"] = f"{len(u2)} of {len(u1)} client(s) shared their keys, below the secure-aggregation threshold t={t}"
            return state
        st.set(K("u2", s), json.dumps({"u2": u2}))
        if own is not None:
            try:
                own.receive_shares(u2, {u: _sealed_for(st.get(K("shares", s, u)), 0) for u in u2 if u != 0})
            except (sa.Refused, ValueError) as e:
                state["failed"] = str(e)
        return state

    def _unmask_round(self, coord, r, attempt, s, accepted, secure, rec, keys_used):
        """Round 4: asks the survivors U3 for the shares that remove the masks (b_v of the
        survivors, the mask keys of U2's dropouts), waits a third of the round timeout for
        them, unmasks the sum. Returns (new weights, None) or (None, why)."""
        st, K = self.store, self._k
        alive = [a[0] for a in accepted]
        dropped = [c for c in secure["u2"] if c not in alive]
        remote = [c for c in alive if c != 0]
        st.set(K("unmask", s), json.dumps({"alive": alive, "dropped": dropped}))
        keys_used += [K("unmask", s)] + [K("reveal", s, c) for c in remote]
        responses = {}
        if 0 in alive:
            responses[0] = secure["own"].reveal(alive, dropped)
        for k in self._wait_keys([K("reveal", s, c) for c in remote], time.monotonic() + self.round_timeout / 3):
            msg = st.get(k)
            rec["bytes_received"] += len(msg)
            refused = json.loads(msg).get("refused")
            if refused:
                log.warning("federated: round %d: %s", r, refused)
            else:
                responses[_tail(k)] = msg
        total = None
        with np.errstate(over="ignore"):
            for _, vec, _ in accepted:
                total = vec if total is None else total + vec
        try:
            ring = sa.unmask_sum(total, secure["salt"], secure["t"], secure["pubs"], alive, dropped, responses)
            mean = sa.decode_mean(ring)
        except (sa.BelowThreshold, ValueError) as e:
            log.warning("federated: round %d: the sum cannot be unmasked: %s", r, e)
            return None, f"the sum could not be unmasked: {e}"
        return coord.aggregate_mean(r, attempt, mean, len(alive)), None

    def _stop(self, clients):
        st, K = self.store, self._k
        try:
            s = st.add(K("seq"), 1)
            st.set(K("plan", s), json.dumps({"stop": True}))
            # the store may live in this process: wait (briefly) until the clients have read it
            remote = [c for c in clients if c != 0]
            end = time.monotonic() + min(10.0, self.round_timeout)
            while time.monotonic() < end and st.add(K("bye"), 0) < sum(st.check([K("join", c)]) for c in remote):
                time.sleep(0.02)
        except Exception as e:  # noqa: BLE001 - the store may be gone if we are being torn down
            log.warning("federated: could not publish the stop message: %s", e)

    # ---- client (store transport) ----
    def _client(self) -> List[dict]:
        st, K, rank = self.store, self._k, self.rank
        token = uuid.uuid4().hex
        s_now = st.add(K("seq"), 0)
        if s_now and st.check([K("plan", s_now)]) and json.loads(st.get(K("plan", s_now))).get("stop"):
            # joined after the federation ended (a client restarted late): nothing to wait for
            st.add(K("bye"), 1)
            return []
        s_next = s_now + 1
        state = ClientState()
        records = []
        while True:
            st.set(K("join", rank), token)
            plan = self._wait_plan(s_next)
            s, s_next = s_next, s_next + 1
            if plan.get("stop"):
                st.add(K("bye"), 1)
                break
            if rank not in plan["selected"]:
                continue
            try:
                rec = self._client_round(s, plan, state)
            except Exception as e:  # noqa: BLE001
                if not _is_timeout(e):
                    raise
                # the coordinator abandoned this attempt and cleaned up before we read it
                log.warning("federated: client %d: attempt %d abandoned (%s)", rank, s, e)
                rec = None
            if rec is not None:
                records.append(rec)
            s_next = max(s_next, st.add(K("seq"), 0))
        return records

    def _client_round(self, s, plan, state):
        st, K, rank = self.store, self._k, self.rank
        t0 = time.perf_counter()
        if not st.check([K("model", s)]):
            return None
        msg = st.get(K("model", s))
        header, payload = unpack(msg)
        glob = np.frombuffer(payload, dtype=self.space.dtype).copy()
        config = plan["config"]
        r = plan["round"]
        session = None
        if config.get("secagg"):
            # keys are shared before training: from here on, a death is a dropout the protocol survives
            session = self._secure_keys(s, plan)
            if session is None:
                return None
        delta, n, loss = local_update(self.model, self.space, glob, self.data, self.loss_fn, self.optimizer,
                                      self.local_epochs, training_seed(self.seed, r, rank),
                                      float(config.get("proximal_mu", 0.0)), self.train_step)
        vec, hdr, payload = prepare_update(delta, config, state)
        hdr.update(n=n, loss=loss, round=r, shapes=[list(x) for x in self.space.shapes])
        if session is not None and not np.all(np.isfinite(vec)):
            # a masked update cannot be inspected by the coordinator: an honest client
            # withholds a non-finite one itself (the coordinator sees a dropout)
            log.warning("federated: client %d: non-finite update withheld from secure aggregation", rank)
            return None
        if session is not None:
            sent = self._secure_upload(s, plan, session, vec, n, hdr)
        else:
            out = pack(hdr, payload)
            st.set(K("upd", s, rank), out)
            sent = len(out)
        return {"round": r, "train_loss": loss, "examples": n, "bytes_sent": sent, "bytes_received": len(msg),
                "seconds": time.perf_counter() - t0}

    def _wait_plan(self, s):
        K = self._k
        end = time.monotonic() + self.client_timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"federated client {self.rank}: no message from the coordinator in "
                                   f"{self.client_timeout:.0f} s")
            try:
                self.store.wait([K("plan", s)], datetime.timedelta(seconds=min(left, 5.0)))
                return json.loads(self.store.get(K("plan", s)))
            except Exception as e:  # noqa: BLE001
                if not _is_timeout(e):
                    raise

    def _secure_keys(self, s, plan):
        """Rounds 1-2 of secure aggregation on a client: advertise the public keys, send the
        encrypted shares to U1, receive U2's. None when the coordinator leaves this client
        out or abandons the attempt, or the request breaks the protocol (logged)."""
        st, K, rank = self.store, self._k, self.rank
        session = sa.ClientSession(rank, f"{self.prefix}{s}")
        st.set(K("pk", s, rank), session.public())
        wait = plan["timeout"] + 5.0
        if not self._wait_keys([K("peers", s)], time.monotonic() + wait):
            return None
        peers = json.loads(st.get(K("peers", s)))
        if peers.get("abort") or str(rank) not in peers["keys"]:
            return None
        try:
            sealed = session.share_keys({int(v): m.encode() for v, m in peers["keys"].items()}, peers["t"])
            st.set(K("shares", s, rank), _sealed_msg(sealed))
            if not self._wait_keys([K("u2", s)], time.monotonic() + wait):
                return None
            u2 = json.loads(st.get(K("u2", s)))
            if u2.get("abort") or rank not in u2["u2"]:
                return None
            session.receive_shares(u2["u2"], {u: _sealed_for(st.get(K("shares", s, u)), rank)
                                              for u in u2["u2"] if u != rank})
        except (sa.Refused, ValueError) as e:
            log.warning("federated: client %d: %s", rank, e)
            return None
        return session

    def _secure_upload(self, s, plan, session, vec, n, hdr):
        """Rounds 3-4 on a client: the masked upload, then the shares the coordinator asks
        for, or a refusal when it asks for more than the protocol allows."""
        st, K, rank = self.store, self._k, self.rank
        masked = session.mask(sa.encode_weighted(vec, self._weight(n)))
        hdr["enc"] = "masked"
        out = pack(hdr, masked.tobytes())
        st.set(K("upd", s, rank), out)
        if not self._wait_keys([K("unmask", s)], time.monotonic() + 2 * plan["timeout"] + 5.0):
            return len(out)
        req = json.loads(st.get(K("unmask", s)))
        if req.get("abort"):
            return len(out)
        try:
            msg = session.reveal(req["alive"], req["dropped"])
        except sa.Refused as e:
            log.warning("federated: %s", e)
            msg = json.dumps({"refused": str(e)}).encode()
        st.set(K("reveal", s, rank), msg)
        return len(out)

    # ---- collective transport ----
    def _collective(self, rank, world) -> List[dict]:
        coord = None
        if rank == 0:
            coord = Coordinator(self.model, self.space, self.aggregator, self.rounds, self.seed, self.evaluate,
                                self.fraction, self.clients_per_round, self.min_clients, self.dp, False, None,
                                self.checkpoint, self.max_retries)
            self.coordinator = coord
        clients = ([0] if (rank == 0 and self.data is not None) else []) + list(range(1, world))
        tdt = torch.float64 if self.space.dtype == np.float64 else torch.float32
        numel = self.space.numel
        state, records = ClientState(), []
        while True:
            t0 = time.perf_counter()
            obj = [None]
            if rank == 0:
                r = coord.round_done + 1
                if r > self.rounds:
                    obj = [{"stop": True}]
                else:
                    selected = coord.select(clients, r, 0)
                    coord.planned, coord.candidates = len(selected), len(clients)
                    obj = [{"round": r, "selected": selected, "config": coord.config()}]
            dist.broadcast_object_list(obj, src=0)
            plan = obj[0]
            if plan.get("stop"):
                break
            r = plan["round"]
            glob = torch.from_numpy(coord.weights.copy()) if rank == 0 else torch.empty(numel, dtype=tdt)
            dist.broadcast(glob, src=0)
            glob_np = glob.numpy().copy()
            out = torch.zeros(numel + 2, dtype=tdt)
            if rank in plan["selected"] and (rank != 0 or self.data is not None):
                delta, n, loss = local_update(self.model, self.space, glob_np, self.data, self.loss_fn,
                                              self.optimizer, self.local_epochs, training_seed(self.seed, r, rank),
                                              float(plan["config"].get("proximal_mu", 0.0)), self.train_step)
                vec, _, _ = prepare_update(delta, plan["config"], state)
                out[:numel] = torch.from_numpy(np.ascontiguousarray(vec, dtype=self.space.dtype))
                out[numel] = float(n)
                out[numel + 1] = float(loss)
                records.append({"round": r, "train_loss": loss, "examples": n, "bytes_sent": out.numel() * out.element_size(),
                                "bytes_received": numel * out.element_size(), "seconds": 0.0})
            gather = [torch.empty_like(out) for _ in range(world)] if rank == 0 else None
            dist.gather(out, gather, dst=0)
            if records and records[-1]["round"] == r:
                records[-1]["seconds"] = time.perf_counter() - t0
            if rank != 0:
                continue
            if 0 in plan["selected"]:
                self.space.set(coord.weights)
            rec = new_record(r)
            rec["bytes_sent"] = numel * out.element_size() * (world - 1)
            rec["bytes_received"] = out.numel() * out.element_size() * len([c for c in plan["selected"] if c != 0])
            updates = {}
            for c in plan["selected"]:
                g = gather[c].numpy()
                updates[c] = (g[:numel].copy(), int(g[numel]), float(g[numel + 1]), None)
            accepted, rejected, losses = coord.screen(updates)
            if len(accepted) < self.min_clients:
                raise RuntimeError(f"federated round {r}: {len(accepted)} valid update(s), below min_clients="
                                   f"{self.min_clients} (rejected: {rejected}); the collective transport cannot retry "
                                   "with other clients")
            new = coord.aggregate(r, 0, accepted)
            rec.update(participants=[a[0] for a in accepted], rejected=rejected, train_loss=mean_loss(losses),
                       attempts=1, seconds=time.perf_counter() - t0)
            coord.finish_round(r, new, rec)
        return coord.history if rank == 0 else records
