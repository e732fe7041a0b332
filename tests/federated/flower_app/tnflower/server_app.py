"""tnflower's ServerApp: Flower's own FedAvg over two SuperNodes; the per-round aggregated
metrics go to the run config's `out` file as JSON. The initial model comes from the run
config's `init` (an .npz of named arrays: this process then never imports torch, seconds
of a test's critical path) or else from task.make_model()."""
import json
from collections import OrderedDict

import numpy as np
from flwr.app import Array, ArrayRecord, Context
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import FedAvg

app = ServerApp()


def _initial_arrays(context: Context) -> ArrayRecord:
    path = str(context.run_config.get("init", ""))
    if path:
        d = np.load(path)
        return ArrayRecord(array_dict=OrderedDict((k, Array(d[k])) for k in d.files))
    from .task import make_model
    return ArrayRecord(make_model().state_dict())


@app.main()
def main(grid: Grid, context: Context) -> None:
    rounds = int(context.run_config["num-server-rounds"])
    initial = _initial_arrays(context)
    strategy = FedAvg(fraction_train=1.0, fraction_evaluate=1.0, min_train_nodes=2, min_evaluate_nodes=2,
                      min_available_nodes=2)
    result = strategy.start(grid=grid, initial_arrays=initial, num_rounds=rounds, timeout=120)
    out = {"train": {str(k): dict(v) for k, v in result.train_metrics_clientapp.items()},
           "evaluate": {str(k): dict(v) for k, v in result.evaluate_metrics_clientapp.items()}}
    with open(str(context.run_config["out"]), "w") as f:
        json.dump(out, f)
