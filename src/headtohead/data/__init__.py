"""Datasets: read labelled examples from tables, image folders, scikit-learn and HF datasets.

One verb, :func:`create_dataset`, turns a :class:`~headtohead.config.DataConfig` into
:class:`DataSplits`. The kind of source is decided in one place, :func:`loader_for`,
from the path's scheme (``sklearn:``, ``hf:``), whether it is a folder, or its suffix.
A new source type is one new module and one entry in ``_LOADERS``.
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

from headtohead.config.schema import DataConfig
from headtohead.data.base import Dataset, DataSplits, Modality, encode_labels
from headtohead.errors import DataError

__all__ = ["create_dataset", "loader_for", "Dataset", "DataSplits", "Modality", "encode_labels", "TABLE_SUFFIXES"]

TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet", ".pq")

# kind -> "module:function"; each function is (spec: str, config: DataConfig) -> Dataset.
_LOADERS = {
    "table": "headtohead.data.tables:load_table",
    "image_folder": "headtohead.data.images:load_image_folder",
    "sklearn": "headtohead.data.sklearn_builtin:load_sklearn",
    "hf": "headtohead.data.hf:load_hf",
}


def loader_for(spec: str) -> str:
    """Name the loader kind for a ``data.path`` / ``data.train`` value.

    Raises
    ------
    DataError
        The path does not exist or has a suffix no loader reads.
    """
    if spec.startswith("sklearn:"):
        return "sklearn"
    if spec.startswith("hf:"):
        return "hf"
    if spec.strip() == "logs:":
        raise DataError(
            "data.path logs: is read from the models' logs (kind lm-eval, inspect) by h2h run and h2h suite; "
            "this command reads a data file: give its path"
        )
    path = Path(spec)
    if path.is_dir():
        return "image_folder"
    if not path.exists():
        raise DataError(
            f"{spec}: data file not found (check data.path; relative paths are read from the "
            f"folder of the experiment file)"
        )
    if path.suffix.lower() in TABLE_SUFFIXES:
        return "table"
    raise DataError(
        f"{spec}: cannot read '{path.suffix or path.name}' files (use {', '.join(TABLE_SUFFIXES)}, "
        f"an image folder, sklearn:<name> or hf:<dataset>)"
    )


def _load(spec: str, config: DataConfig) -> Dataset:
    module_name, func_name = _LOADERS[loader_for(spec)].split(":")
    dataset: Dataset = getattr(importlib.import_module(module_name), func_name)(spec, config)
    if len(dataset) == 0:
        raise DataError(
            f"{spec}: no usable examples (skipped: {dict(dataset.skipped) or 'none'}); "
            f"check the file and the column names"
        )
    return dataclasses.replace(dataset, group_column=config.group_column)


def create_dataset(config: DataConfig, *, seed: int = 42) -> DataSplits:
    """Load the evaluation data (and training data when configured).

    Parameters
    ----------
    config : DataConfig
        The ``data:`` section; paths must already be absolute or relative to the
        working directory (:func:`headtohead.run` resolves them against the experiment file).
    seed : int
        Seed of the stratified split when ``config.split`` is set.

    Returns
    -------
    DataSplits
        ``eval`` always; ``train`` when ``config.train`` or ``config.split`` is set. Both
        share the eval split's label names and order.
    """
    from headtohead.data.split import stratified_split

    full = _load(config.path, config)
    train: Dataset | None = None
    if config.split is not None:
        train, evaluation = stratified_split(full, config.split.eval_fraction, seed=seed)
    else:
        evaluation = full
        if config.train is not None:
            # ids and slice columns serve the evaluation; a training file need not have them
            train = _load(
                config.train,
                config.model_copy(
                    update={"id_column": None, "slice_columns": [], "group_column": None, "label_ok": None}
                ),
            )
            names = list(evaluation.label_names)
            names += [n for n in train.label_names if n not in names]
            if len(names) > evaluation.num_classes:
                extra = names[evaluation.num_classes :]
                raise DataError(
                    f"{config.train}: classes {extra} have training examples but no evaluation "
                    f"examples in {config.path}; add them to the eval data or drop them"
                )
            train = train.with_label_names(evaluation.label_names)
    _require_eval_examples(config, evaluation)
    if config.limit is not None and config.limit < len(evaluation):
        evaluation = evaluation.take(range(config.limit))
    return DataSplits(eval=evaluation, train=train)


def _require_eval_examples(config: DataConfig, evaluation: Dataset) -> None:
    """Every class needs evaluation examples: per-class metrics and the comparison are undefined without."""
    counts = evaluation.class_counts()
    empty = [name for name, count in zip(evaluation.label_names, counts, strict=True) if count == 0]
    if empty:
        present = ", ".join(f"{name}: {count}" for name, count in zip(evaluation.label_names, counts, strict=True))
        raise DataError(
            f"{config.path}: class(es) {empty} have no evaluation examples (per class: {present}); "
            f"add examples of them, or remove them from data.label_names (a model that knows classes the data "
            f"does not hold declares them in its own label_names: its predictions of them count as wrong answers)"
        )
