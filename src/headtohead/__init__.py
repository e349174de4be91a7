"""headtohead: settle "which classification model is better?" fairly and with statistics.

The public surface is the names in ``__all__`` (pinned by a test); everything else is
internal. Heavy parts are imported on first use, so ``import headtohead`` stays light.

>>> import headtohead
>>> outcome = headtohead.run("experiment.yaml", out_dir="runs/x")   # doctest: +SKIP
>>> outcome.result.model("bert").quality.accuracy                  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from headtohead.config import Experiment, load_experiment
from headtohead.errors import ConfigError, DataError, DeviceError, H2HError, ModelError, ResultsError

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "run",
    "Run",
    "Experiment",
    "load_experiment",
    "load_result",
    "load_predictions",
    "H2HError",
    "ConfigError",
    "DataError",
    "ModelError",
    "DeviceError",
    "ResultsError",
]

_LAZY = {
    "run": "headtohead.runner",
    "Run": "headtohead.runner",
    "load_result": "headtohead.results",
}


def load_predictions(path: Any):  # noqa: ANN201 - Predictions
    """Read the ``predictions.npz`` written beside a ``results.json`` (a file or its folder)."""
    from pathlib import Path

    from headtohead.results import Predictions

    path = Path(path)
    return Predictions.load(path / "predictions.npz" if path.is_dir() else path)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'headtohead' has no attribute {name!r}")
