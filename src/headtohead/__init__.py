"""headtohead: settle "which classification model is better?" fairly and with statistics.

The public surface is the names in ``__all__`` (pinned by a test); everything else is
internal. Everything is imported on first use, so ``import headtohead`` (and ``h2h --help``) stays light.

>>> import headtohead
>>> outcome = headtohead.run("experiment.yaml", out_dir="runs/x")   # doctest: +SKIP
>>> outcome.result.model("bert").quality.accuracy                  # doctest: +SKIP

Every command of ``h2h`` is one function here: :func:`run` (``h2h run``, ``h2h bench`` with
``quality=False``), :func:`train`, :func:`sweep`, :func:`gate`, :func:`compare_machines`, :func:`suite`
(``h2h suite``: the same models across several data sets);
:func:`compare` is :func:`run` for models and data held in memory (a notebook):

>>> outcome = headtohead.compare({"bert": (model, tokenizer), "gpt": gpt_labels}, data=frame)  # doctest: +SKIP
"""

import typing as _typing

from headtohead.errors import ConfigError, DataError, DeviceError, H2HError, ModelError, ResultsError
from headtohead.version import __version__

if _typing.TYPE_CHECKING:
    from os import PathLike

    from headtohead.results.predictions import Predictions


__all__ = [
    "__version__",
    "run",
    "compare",
    "Run",
    "train",
    "sweep",
    "gate",
    "compare_machines",
    "suite",
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

# name → (module, attribute), imported on first use
_LAZY = {
    "run": ("headtohead.pipeline.run", "run"),
    "compare": ("headtohead.pipeline.compare", "compare"),
    "Run": ("headtohead.pipeline.run", "Run"),
    "train": ("headtohead.pipeline.training", "train_experiment"),
    "sweep": ("headtohead.pipeline.sweep", "run_sweep"),
    "gate": ("headtohead.pipeline.gate", "gate"),
    "compare_machines": ("headtohead.pipeline.machines", "compare_machines"),
    "suite": ("headtohead.pipeline.suite", "suite"),
    "load_result": ("headtohead.results", "load_result"),
    "Experiment": ("headtohead.config", "Experiment"),
    "load_experiment": ("headtohead.config", "load_experiment"),
}


def load_predictions(path: "str | PathLike[str]") -> "Predictions":
    """Read the ``predictions.npz`` written beside a ``results.json`` (a file or its folder)."""
    from pathlib import Path

    from headtohead.results import Predictions
    from headtohead.results.files import PREDICTIONS_FILE

    path = Path(path)
    return Predictions.load(path / PREDICTIONS_FILE if path.is_dir() else path)


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY:
        import importlib

        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'headtohead' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the public surface only: the lazy names are attributes too (dir(), tab completion and help() list
    # them), and the helpers of this module (typing, the lazy table) are not part of it
    return sorted(__all__)
