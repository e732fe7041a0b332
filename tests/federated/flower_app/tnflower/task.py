"""tnflower's model and data: the digits MLP, and this node's shard of a digits .npz file."""
import numpy as np
import torch


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))


def load_shard(path, partition, partitions, batch=32):
    d = np.load(path)
    idx = np.array_split(np.arange(len(d["y_train"])), partitions)[partition]
    x, y = torch.from_numpy(d["x_train"][idx]), torch.from_numpy(d["y_train"][idx])
    xt, yt = torch.from_numpy(d["x_test"]), torch.from_numpy(d["y_test"])
    train = [(x[i:i + batch], y[i:i + batch]) for i in range(0, len(y), batch)]
    return train, [(xt, yt)]
