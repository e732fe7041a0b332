"""torchnative.nn.federated: federated learning over the public torch.distributed API
(Engine: one process per client, rank 0 coordinates) or in one process (simulate), with
FedAvg and stronger aggregators, fault tolerance, DP-FedAvg, secure aggregation and
compressed updates. Written against upstream torch's Python API only, so it runs on
torchnative and on upstream torch alike. docs/FEDERATED.md describes it."""
from .aggregators import (Aggregator, FedAdagrad, FedAdam, FedAvg, FedAvgM, FedMedian, FedProx, FedTrimmedAvg,
                          FedYogi, Krum, MultiKrum, weighted_mean)
from .compress import Int8, TopK
from .core import ParamSpace, local_update, only_lora, select_clients
from .engine import Engine
from .privacy import DPFedAvg, RDPAccountant
from .simulate import simulate

__all__ = ["Engine", "simulate", "Aggregator", "FedAvg", "FedAvgM", "FedProx", "FedAdam", "FedYogi", "FedAdagrad",
           "FedMedian", "FedTrimmedAvg", "Krum", "MultiKrum", "DPFedAvg", "RDPAccountant", "Int8", "TopK",
           "ParamSpace", "only_lora", "local_update", "select_clients", "weighted_mean"]
