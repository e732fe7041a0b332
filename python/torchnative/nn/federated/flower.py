"""Flower interop: a torch model as a genuine Flower ClientApp (flwr's Message API), so a
process on torchnative (or on upstream torch) joins any Flower federation — a SuperNode
of Flower's deployment runtime runs it. Local training is torchnative's local_update
(FedProx's proximal-mu is read from the train config when the server sends one)."""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import torch

from .core import ParamSpace, local_update

__all__ = ["client_app"]


def _sgd(params):
    return torch.optim.SGD(params, lr=0.05)


def client_app(model_fn: Callable[[], torch.nn.Module], data_fn: Callable, *,
               loss_fn: Callable = torch.nn.functional.cross_entropy, optimizer: Callable = _sgd,
               local_epochs: int = 1, params="all", seed: int = 0, on_round: Optional[Callable] = None):
    """Returns a flwr.clientapp.ClientApp. `data_fn(context)` gives (train_batches,
    eval_batches) for this node (context.node_config has e.g. partition-id). The arrays
    travel keyed by parameter name ("arrays" ArrayRecord, as Flower's strategies expect);
    the reply's MetricRecord carries "num-examples" (FedAvg's weight) and "train_loss" /
    "eval_loss" / "eval_acc". `on_round(kind, metrics, context)` is called after each
    train/evaluate (logging, tests)."""
    from flwr.app import ArrayRecord, Context, Message, MetricRecord, RecordDict
    from flwr.clientapp import ClientApp

    app = ClientApp()
    state = {}

    def setup(context: Context):
        if "model" not in state:
            state["model"] = model_fn()
            state["space"] = ParamSpace(state["model"], params)
            state["data"] = data_fn(context)
        return state["model"], state["space"], state["data"]

    def load(space: ParamSpace, arrays) -> np.ndarray:
        got = {k: np.asarray(v.numpy()) for k, v in arrays.items()}
        missing = [n for n in space.names if n not in got]
        if missing:
            raise ValueError(f"the server's arrays lack parameters {missing[:5]}")
        parts = []
        for n, shape in zip(space.names, space.shapes):
            a = got[n]
            if tuple(a.shape) != tuple(shape):
                raise ValueError(f"parameter {n}: server sent shape {a.shape}, the model has {shape}")
            parts.append(a.reshape(-1).astype(space.dtype))
        return np.concatenate(parts)

    def to_record(space: ParamSpace, vec: np.ndarray):
        out, off = {}, 0
        for n, shape in zip(space.names, space.shapes):
            k = int(np.prod(shape)) if shape else 1
            out[n] = torch.from_numpy(vec[off:off + k].reshape(shape).copy())
            off += k
        return ArrayRecord(out)   # a torch state_dict (Flower keys it by name)

    @app.train()
    def train(msg: Message, context: Context):
        model, space, (train_data, _) = setup(context)
        glob = load(space, msg.content["arrays"])
        cfg = msg.content.get("config") if "config" in msg.content else None
        mu = float(cfg.get("proximal-mu", 0.0)) if cfg is not None and "proximal-mu" in cfg else 0.0
        rnd = int(cfg.get("server-round", 0)) if cfg is not None and "server-round" in cfg else 0
        delta, n, loss = local_update(model, space, glob, train_data, loss_fn, optimizer, local_epochs,
                                      seed * 1_000_003 + rnd, mu)
        metrics = {"train_loss": float(loss), "num-examples": int(n)}
        if on_round is not None:
            on_round("train", metrics, context)
        return Message(content=RecordDict({"arrays": to_record(space, glob + delta),
                                           "metrics": MetricRecord(metrics)}), reply_to=msg)

    @app.evaluate()
    def evaluate(msg: Message, context: Context):
        model, space, (_, eval_data) = setup(context)
        space.set(load(space, msg.content["arrays"]))
        model.eval()
        total, correct, count = 0.0, 0, 0
        with torch.no_grad():
            for x, y in eval_data:
                out = model(x)
                total += float(loss_fn(out, y)) * int(y.shape[0])
                correct += int((out.argmax(-1) == y).sum())
                count += int(y.shape[0])
        metrics = {"eval_loss": total / max(count, 1), "eval_acc": correct / max(count, 1), "num-examples": count}
        if on_round is not None:
            on_round("evaluate", metrics, context)
        return Message(content=RecordDict({"metrics": MetricRecord(metrics)}), reply_to=msg)

    return app
