"""Example ids (``data.id_column``) and extra columns kept for slicing (``data.slice_columns``).

The rows ``data.label_ok`` flags false are left out by the loaders of text tables, their flags read
here (:func:`label_ok_flags`). Loaders read ids and columns with the examples, drop them with the rows
they skip, and check them here, once: an id column must exist, have a value in every kept row and no value twice;
a slice column must exist. Ids are compared as strings (a csv reads ``7`` as ``"7"``, a
JSON file as the number ``7``; both are the id ``"7"``). Slice values are kept as read,
with numpy scalars turned into Python values and missing values into ``None``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from headtohead.config.schema import DataConfig
from headtohead.errors import DataError, did_you_mean, listing

__all__ = [
    "name_some",
    "is_missing",
    "normalise_id",
    "normalise_value",
    "require_extra_columns",
    "check_ids",
    "refuse_extra_columns",
    "refuse_label_ok",
    "label_ok_flags",
    "LABEL_OK_VALUES",
]

_INTEGRAL_FLOAT = re.compile(r"^-?\d+\.0+$")


def name_some(values: Iterable[Any], limit: int = 5, *, quote: bool = True) -> str:
    """Name the first ``limit`` values and count the rest, for one-line messages (:func:`headtohead.errors.listing`,
    quoted by default).

    Examples
    --------
    >>> name_some(["a", "b", "c"], limit=2)
    "'a', 'b' … and 1 more"
    >>> name_some([3, 4], quote=False)
    '3, 4'
    """
    return listing(values, limit, quote=quote)


def is_missing(value: Any) -> bool:
    """True for ``None``, NaN/NA, and strings that are empty or only whitespace."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    try:
        import pandas as pd

        return bool(pd.isna(value))
    except (TypeError, ValueError):  # arrays and other containers are values, not missing
        return False


def normalise_value(value: Any) -> Any:
    """A Python value for a cell: numpy scalars unwrapped, missing (None/NaN/NA/blank) as ``None``."""
    if is_missing(value):
        return None
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # numpy scalar
        value = value.item()
    return value.strip() if isinstance(value, str) else value


def normalise_id(value: Any) -> str | None:
    """An id or label as a string (``7``, ``7.0``, ``"7"`` and ``"7.0"`` are all ``"7"``); ``None`` when missing.

    ``"7.0"`` is what pandas writes for an integer column that had a missing value.

    Examples
    --------
    >>> normalise_id(7.0), normalise_id("12.0"), normalise_id(" a1 "), normalise_id(float("nan"))
    ('7', '12', 'a1', None)
    """
    value = normalise_value(value)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value)
    return text.split(".")[0] if _INTEGRAL_FLOAT.match(text) else text


def require_extra_columns(source: str, config: DataConfig, available: Sequence[str]) -> None:
    """Check that ``data.id_column`` and every ``data.slice_columns`` entry is a column of the source.

    Raises
    ------
    DataError
        Naming the missing column, the closest existing one and the columns there are.
    """
    wanted = [("data.id_column", config.id_column)] if config.id_column is not None else []
    wanted += [("data.slice_columns", column) for column in config.slice_columns]
    wanted += [("data.group_column", config.group_column)] if config.group_column is not None else []
    wanted += [("data.label_ok", config.label_ok)] if config.label_ok is not None else []
    columns = [str(c) for c in available]
    for key, column in wanted:
        if column not in columns:
            fix = (
                f"set {key} to one of them or remove it"
                if key != "data.slice_columns"
                else f"correct or remove '{column}' in data.slice_columns"
            )
            raise DataError(
                f"{source}: no column '{column}' ({key}){did_you_mean(column, columns)}; the data has "
                f"columns: {name_some(columns, 20, quote=False)}; {fix}"
            )


def refuse_extra_columns(source: str, config: DataConfig, what: str) -> None:
    """For sources without columns (scikit-learn arrays, image folders): slice and group columns cannot exist."""
    if config.slice_columns:
        raise DataError(
            f"{source}: {what} has no columns, so data.slice_columns {config.slice_columns} cannot be "
            f"read; remove data.slice_columns (slices by class and by input size need no columns)"
        )
    if config.group_column is not None:
        raise DataError(
            f"{source}: {what} has no columns, so data.group_column '{config.group_column}' cannot be "
            f"read; remove it, or give the data as a table with a column of groups"
        )
    refuse_label_ok(source, config, what)


def refuse_label_ok(source: str, config: DataConfig, what: str) -> None:
    """For sources whose rows no ``data.label_ok`` column can flag (arrays, image folders, logs, feature frames)."""
    if config.label_ok is not None:
        raise DataError(
            f"{source}: {what} is not read as a table of texts, so data.label_ok '{config.label_ok}' cannot flag its "
            f"rows; remove data.label_ok, or leave the rows with wrong labels out of the data"
        )


#: How a ``data.label_ok`` cell is read (case and surrounding spaces ignored): kept, or left out.
LABEL_OK_VALUES = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def label_ok_flags(source: str, column: str, values: Sequence[Any]) -> list[bool]:
    """Each row's ``data.label_ok`` cell as True (keep) or False (leave out).

    Accepted: booleans, the numbers 1 and 0, and the words true/false, yes/no, 1/0 in any case.

    Raises
    ------
    DataError
        Naming the first other value (an empty cell too) and its 1-based row.

    Examples
    --------
    >>> label_ok_flags("d.csv", "ok", [True, "FALSE", " yes ", 0, 1.0, "no"])
    [True, False, True, False, True, False]
    """
    flags = []
    for row, value in enumerate(values, start=1):
        flag = _flag(value)
        if flag is None:
            shown = "an empty cell" if is_missing(value) else f"'{value}'"
            raise DataError(
                f"{source}: column '{column}' (data.label_ok) holds {shown} in row {row}; write true or false "
                f"(or yes/no, 1/0) in every row: false leaves a row with a wrong gold label out"
            )
        flags.append(flag)
    return flags


def _flag(value: Any) -> bool | None:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and not is_missing(value):
        return {1.0: True, 0.0: False}.get(float(value))
    if isinstance(value, str):
        return LABEL_OK_VALUES.get(value.strip().lower())
    return None


def check_ids(source: str, column: str, raw: Sequence[Any], rows: Sequence[int]) -> tuple[str, ...]:
    """Turn the id cells of the kept rows into unique string ids, or say which rows break the rule.

    Parameters
    ----------
    source, column : str
        For messages.
    raw : sequence
        The id cell of every kept row.
    rows : sequence of int
        The 1-based data row (header not counted) each kept id came from, for messages.

    Returns
    -------
    tuple of str

    Raises
    ------
    DataError
        A kept row has no id, or an id occurs more than once (a few named, the rest counted).
    """
    ids = [normalise_id(value) for value in raw]
    empty = [row for row, value in zip(rows, ids, strict=True) if value is None]
    if empty:
        raise DataError(
            f"{source}: column '{column}' (data.id_column) is empty in row(s) "
            f"{name_some(empty, quote=False)}; every example needs an id"
        )
    where: dict[str, list[int]] = defaultdict(list)
    for row, value in zip(rows, ids, strict=True):
        where[value].append(row)  # type: ignore[index]
    repeated = [(value, found) for value, found in where.items() if len(found) > 1]
    if repeated:
        named = [
            f"{value!r} (rows {', '.join(map(str, found[:3]))}{' …' if len(found) > 3 else ''})"
            for value, found in repeated
        ]
        raise DataError(
            f"{source}: column '{column}' (data.id_column) has {len(repeated)} duplicate id(s): "
            f"{name_some(named, quote=False)}; ids must be unique (fix the column, or remove "
            f"data.id_column to match prediction files by row order)"
        )
    return tuple(ids)  # type: ignore[arg-type]
