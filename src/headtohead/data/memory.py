"""Data handed over as Python objects (:func:`headtohead.compare`): a DataFrame, arrays, or a Dataset.

* a ``pandas.DataFrame`` with a text column (``text`` unless named) and a label column: a text
  table, read as :func:`~headtohead.data.tables.load_table` reads a file (ids, slice columns,
  skipped rows alike);
* a ``pandas.DataFrame`` without a text column: feature rows, every numeric column that is
  not the label, the id or a slice column being a feature;
* ``(X, y)``: a 2-D array of features and the labels;
* a :class:`~headtohead.data.base.Dataset`, used as it is.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from headtohead.config.schema import DataConfig
from headtohead.data.base import Dataset, encode_labels
from headtohead.data.columns import check_ids, name_some, normalise_value, refuse_label_ok, require_extra_columns
from headtohead.data.tables import DEFAULT_TEXT_COLUMN, frame_to_dataset
from headtohead.errors import DataError

__all__ = ["dataset_from_memory", "describe_data"]


def describe_data(data: Any) -> str:
    """How results name data given in memory: ``<in memory: DataFrame 872×3>``."""
    shape = getattr(data, "shape", None)
    if isinstance(data, Dataset):
        return data.source
    if isinstance(data, tuple) and len(data) == 2:
        return f"<in memory: arrays {len(data[1])} examples>"
    size = "×".join(str(n) for n in shape) if shape is not None else ""
    return f"<in memory: {type(data).__name__}{' ' + size if size else ''}>"


def dataset_from_memory(data: Any, config: DataConfig) -> Dataset:
    """The evaluation :class:`Dataset` of data given as an object (see the module docstring).

    Parameters
    ----------
    data : DataFrame, (X, y) or Dataset
    config : DataConfig
        Its ``text_column``, ``text_pair_column``, ``label_column``, ``label_names``,
        ``id_column``, ``slice_columns`` and ``group_column`` are used; ``path`` names the data in messages.

    Raises
    ------
    DataError
        One line: an unknown kind of object, missing columns, no usable examples.
    """
    where = config.path
    if isinstance(data, Dataset):
        refuse_label_ok(where, config, "a Dataset")
        dataset = data
    elif isinstance(data, tuple) and len(data) == 2:
        refuse_label_ok(where, config, "arrays (X, y)")
        dataset = _arrays(where, data[0], data[1], config)
    elif hasattr(data, "columns") and hasattr(data, "iloc"):
        text = config.text_column or DEFAULT_TEXT_COLUMN
        dataset = (
            frame_to_dataset(data, where, config)
            if text in [str(c) for c in data.columns]
            else _feature_frame(where, data, config)
        )
    else:
        raise DataError(
            f"{where}: cannot evaluate on a {type(data).__name__}; give a pandas DataFrame (a text and "
            f"a label column, or feature columns and a label column), arrays (X, y) or a "
            f"headtohead Dataset"
        )
    if len(dataset) == 0:
        raise DataError(f"{where}: no usable examples (skipped: {dict(dataset.skipped) or 'none'})")
    return dataclasses.replace(dataset, group_column=config.group_column)


def _arrays(where: str, features: Any, labels: Any, config: DataConfig) -> Dataset:
    x = np.asarray(features)
    y = list(np.asarray(labels).tolist())
    if x.ndim != 2 or len(x) != len(y):
        raise DataError(f"{where}: X must be 2-D with one row per label; got X of shape {x.shape} and {len(y)} labels")
    encoded, names = encode_labels(y, source=where, column="y", names=config.label_names)
    return Dataset(where, "features", x.astype(np.float32), encoded, names)


def _feature_frame(where: str, frame: Any, config: DataConfig) -> Dataset:
    from pandas.api.types import is_numeric_dtype  # a DataFrame was given: pandas is there

    refuse_label_ok(where, config, "a frame of features")
    columns = [str(c) for c in frame.columns]
    frame = frame.copy()
    frame.columns = columns
    require_extra_columns(where, config, columns)
    if config.label_column not in columns:
        raise DataError(
            f"{where}: no label column '{config.label_column}' (the frame has {name_some(columns, 20)}); "
            f"name it with label_column"
        )
    kept = {config.label_column, config.id_column, *config.kept_columns}
    features = [c for c in columns if c not in kept]
    numeric = [c for c in features if is_numeric_dtype(frame[c].dtype)]
    if not features or numeric != features:
        other = [c for c in features if c not in numeric]
        raise DataError(
            f"{where}: no text column '{config.text_column or DEFAULT_TEXT_COLUMN}' and "
            f"{'no feature columns' if not features else 'non-numeric columns ' + name_some(other)}; "
            f"name the text column with text_column, or give numeric feature columns"
        )
    encoded, names = encode_labels(
        frame[config.label_column].tolist(), source=where, column=config.label_column, names=config.label_names
    )
    ids = (
        check_ids(where, config.id_column, frame[config.id_column].tolist(), list(range(1, len(frame) + 1)))
        if config.id_column is not None
        else None
    )
    extra = {name: [normalise_value(v) for v in frame[name].tolist()] for name in config.kept_columns}
    return Dataset(
        where, "features", frame[features].to_numpy(dtype=np.float32), encoded, names, ids=ids, columns=extra
    )
