"""tnflower's ClientApp: torchnative.nn.federated.flower.client_app over this node's digits shard.
Each round appends which torch core ran it (torchnative or upstream) to the node's `out` file."""
import json

import torch

from torchnative.nn.federated.flower import client_app

from .task import load_shard, make_model


def _data(context):
    c = context.node_config
    return load_shard(str(c["data"]), int(c["partition-id"]), int(c["num-partitions"]))


def _log(kind, metrics, context):
    core = "torchnative" if hasattr(torch._C, "_tn_dist") else "upstream"
    with open(str(context.node_config["out"]), "a") as f:
        f.write(json.dumps({"kind": kind, "core": core, **metrics}) + "\n")


app = client_app(make_model, _data, optimizer=lambda p: torch.optim.SGD(p, lr=0.1), on_round=_log)
