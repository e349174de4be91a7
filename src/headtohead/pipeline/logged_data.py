"""A run's data read from its models' own logs (``data.path: logs:``).

``h2h run --model a=lm-eval:runs/a --model b=lm-eval:runs/b`` has no ``--data``: the logs hold the
documents. :func:`run_splits` is where every command reads a run's data: from ``data.path`` as
always, or, for ``logs:``, from each model's log (read by its family,
:meth:`~headtohead.adapters.logged.LoggedAdapter.read_log`) joined by item id
(:func:`~headtohead.data.logged.dataset_from_logs`). See ``docs/harnesses.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from headtohead.adapters import adapter_class
from headtohead.adapters.logged import LoggedAdapter
from headtohead.config import Experiment
from headtohead.config.models import FAMILIES, family
from headtohead.config.schema import DataConfig, ModelConfig
from headtohead.data import DataSplits, create_dataset
from headtohead.data.logged import LOGS, LoggedRun, dataset_from_logs, is_logs
from headtohead.errors import ConfigError, listing

__all__ = ["run_splits", "logged_splits"]

#: ``data:`` keys that describe a file's columns: a log has none of them.
_FILE_KEYS = (
    "text_column",
    "text_pair_column",
    "label_names",
    "train",
    "split",
    "hf_split",
    "id_column",
    "label_ok",
)


def run_splits(experiment: Experiment, data: DataConfig, base_dir: Path) -> DataSplits:
    """The run's data: read from ``data.path``, or from its models' logs when it is ``logs:``.

    ``data`` is the experiment's data section with its paths made absolute.
    """
    if is_logs(data.path):
        return logged_splits(experiment.models, data, base_dir)
    return create_dataset(data, seed=experiment.seed)


def logged_splits(models: Sequence[ModelConfig], data: DataConfig, base_dir: Path) -> DataSplits:
    """The items every model's log holds (the others named in ``skipped``), as the run's evaluation data.

    Raises
    ------
    ConfigError
        A model whose source is no log, or a ``data:`` key that describes a file.
    """
    given = [key for key in _FILE_KEYS if getattr(data, key) not in (None, [])]
    if given:
        raise ConfigError(
            f"data.{given[0]}: data.path {LOGS} reads the examples from the models' logs, which have no such "
            f"setting; remove it"
        )
    runs = {}
    for model in models:
        if not family(model.kind).holds_data:
            logs = [row.kind for row in FAMILIES if row.holds_data]
            raise ConfigError(
                f"model '{model.name}' (kind {model.kind}) has no log to read examples from (data.path {LOGS}: "
                f"every model's source is a log, kind {listing(logs)}); give the data (data.path / --data)"
            )
        reader = adapter_class(model.kind)
        assert issubclass(reader, LoggedAdapter)
        runs[model.name] = reader.logged(model, base_dir)
    _refuse_a_run_with_itself(models, runs)
    dataset = dataset_from_logs(runs, slice_columns=data.slice_columns, group_column=data.group_column)
    if data.limit is not None and data.limit < len(dataset):
        dataset = dataset.take(range(data.limit))
    return DataSplits(eval=dataset, train=None)


def _reading(model: ModelConfig) -> dict[str, object]:
    """How a model reads its log (metric, filter, scorer …): its settings but its name, source and tasks."""
    return model.model_dump(exclude={"name", "source", "tasks"})


def _refuse_a_run_with_itself(models: Sequence[ModelConfig], runs: dict[str, LoggedRun]) -> None:
    """Two models reading one log file the same way are one run compared with itself: refused in one line.

    The same file read another way (``metric: acc`` and ``metric: acc_norm`` of one lm-eval run) is a
    real comparison of two scoring rules over the same answers, and stays allowed.
    """
    seen: dict[str, ModelConfig] = {}
    for model in models:
        for file in runs[model.name].files:
            first = seen.setdefault(file, model)
            if first is not model and _reading(first) == _reading(model):
                raise ConfigError(
                    f"models '{first.name}' and '{model.name}' read the same log ({file}) the same way: that is one "
                    f"run compared with itself; give each model the log of its own run"
                )
