"""tnflower's ServerApp: Flower's own FedAvg over two SuperNodes; the per-round aggregated
metrics go to the run config's `out` file as JSON."""
import json

from flwr.app import ArrayRecord, Context
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import FedAvg

from .task import make_model

app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
    rounds = int(context.run_config["num-server-rounds"])
    model = make_model()
    initial = ArrayRecord(model.state_dict())
    strategy = FedAvg(fraction_train=1.0, fraction_evaluate=1.0, min_train_nodes=2, min_evaluate_nodes=2,
                      min_available_nodes=2)
    result = strategy.start(grid=grid, initial_arrays=initial, num_rounds=rounds, timeout=120)
    out = {"train": {str(k): dict(v) for k, v in result.train_metrics_clientapp.items()},
           "evaluate": {str(k): dict(v) for k, v in result.evaluate_metrics_clientapp.items()}}
    with open(str(context.run_config["out"]), "w") as f:
        json.dump(out, f)
