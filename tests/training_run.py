"""Trains small models on scikit-learn's digits with the genuine torch.nn / torch.optim and
prints per-step losses, final parameters and test accuracy as JSON. Run under upstream
torch and under torchnative by tests/test_training.py (and bench/ for timing).
    python tests/training_run.py MODEL:OPTIMIZER[,MODEL:OPTIMIZER...] [EPOCHS]"""
import json
import sys

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits


def data():
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(x))
    x, y = x[perm], y[perm]
    n = 1400
    return torch.from_numpy(x[:n]), torch.from_numpy(y[:n]), torch.from_numpy(x[n:]), torch.from_numpy(y[n:])


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32), torch.nn.Tanh(),
                               torch.nn.Linear(32, 10))


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # no bias before a batch norm: its true gradient is 0, so its value would follow
        # rounding noise (amplified by Adam) on each side
        self.conv = torch.nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.drop = torch.nn.Dropout(0.2)
        self.fc = torch.nn.Linear(16 * 2 * 2, 10)

    def forward(self, x):
        x = x.view(-1, 1, 8, 8)
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(self.drop(x.flatten(1)))


OPTIMIZERS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4),
    "adam": lambda p: torch.optim.Adam(p, lr=1e-2),
    "adamw_amsgrad": lambda p: torch.optim.AdamW(p, lr=1e-2, amsgrad=True, weight_decay=0.05),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=1e-3, momentum=0.5, centered=True),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=0.05),
}


def train(model_name, opt_name, epochs=3, batch=64):
    torch.manual_seed(0)
    xtr, ytr, xte, yte = data()
    model = mlp() if model_name == "mlp" else CNN()
    opt = OPTIMIZERS[opt_name](model.parameters())
    losses = []
    for _ in range(epochs):
        model.train()
        perm = torch.randperm(len(xtr))
        for i in range(0, len(xtr), batch):
            idx = perm[i:i + batch]
            opt.zero_grad()
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    params = {k: v.detach().reshape(-1)[:16].tolist() for k, v in model.state_dict().items()
              if v.dtype.is_floating_point}
    return {"losses": losses, "acc": acc, "params": params}


if __name__ == "__main__":
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    runs = [r.split(":") for r in sys.argv[1].split(",")]
    print(json.dumps({f"{m}:{o}": train(m, o, epochs) for m, o in runs}))
