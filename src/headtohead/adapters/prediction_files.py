"""Prediction files: another system's outputs, read and checked against the dataset.

See ``docs/api/adapters.md``, the section of this title.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from headtohead.adapters.labels import numbered_classes_hint
from headtohead.config.models import family
from headtohead.data.base import Dataset
from headtohead.data.columns import name_some, normalise_id
from headtohead.data.tables import read_table
from headtohead.errors import ModelError, did_you_mean, listing

__all__ = [
    "PredictionFile",
    "read_prediction_file",
    "read_prediction_frame",
    "write_prediction_file",
    "check_prediction_path",
    "PREDICTION_SUFFIXES",
    "PREDICTION_COLUMN",
    "PROBA_PREFIX",
    "PROBA_LIST_COLUMN",
    "FAILED_COLUMN",
    "NO_PREDICTION",
    "SUM_TOLERANCE",
]

#: The prediction file formats (the ``predictions`` kind's row in the registry recognises them).
PREDICTION_SUFFIXES = family("predictions").suffixes

PREDICTION_COLUMN = "prediction"
PROBA_PREFIX = "proba_"
PROBA_LIST_COLUMN = "proba"
#: A column saying the model failed on a row (true/false, 1/0, yes/no; empty is false).
FAILED_COLUMN = "failed"
#: Predicted class of a row where the model failed (``results.predictions.NO_PREDICTION``; adapters come before results).
NO_PREDICTION = -1
#: How far a row of probabilities may sum from 1 (float32 softmax outputs written as text are
#: off by ~1e-7; a row off by more than this is a bug, not rounding).
SUM_TOLERANCE = 1e-3


@dataclass(frozen=True)
class PredictionFile:
    """A prediction file's contents in the dataset's example order and label order.

    Attributes
    ----------
    source : str
        The file.
    pred : ndarray of shape (n,), int64
        Predicted class index into the dataset's label names (then ``outside``);
        :data:`NO_PREDICTION` where the model failed.
    proba : ndarray of shape (n, K), float64, or None
        Class probabilities (rows sum to 1; a NaN row where the model failed), or ``None``
        when the file has none.
    matched_by : {"id", "row order"}
        How rows were matched to examples.
    warnings : tuple of str
        Things the user should know (matched by row order, ignored extra ids, names read
        although they look like indices, predictions that are not the most probable class).
    """

    source: str
    pred: np.ndarray
    proba: np.ndarray | None
    matched_by: Literal["id", "row order"]
    warnings: tuple[str, ...] = ()

    @property
    def n_failed(self) -> int:
        """Examples the model failed on (each a wrong answer)."""
        return int(np.count_nonzero(self.pred == NO_PREDICTION))


def read_prediction_file(
    path: str | Path,
    dataset: Dataset,
    *,
    id_column: str = "id",
    tolerance: float = SUM_TOLERANCE,
    extra_ids: Literal["error", "ignore"] = "error",
    missing_ids: Literal["error", "failed"] = "error",
    empty: Literal["error", "failed"] = "error",
    outside: Sequence[str] = (),
    name: str | None = None,
) -> PredictionFile:
    """Read a prediction file and align it with ``dataset``.

    Parameters
    ----------
    path : str or Path
        The file (see the module docstring for its columns).
    dataset : Dataset
        The evaluation data: its label names, its length and its ids (``dataset.ids``).
    id_column : str
        The file's id column: the experiment's ``data.id_column`` (``"id"`` when unset).
    tolerance : float
        How far a row of probabilities may sum from 1.
    extra_ids : {"error", "ignore"}
        What to do with ids the dataset does not have (``"ignore"`` suits a file covering
        more rows than ``data.limit`` keeps); they are counted in a warning when ignored.
    missing_ids : {"error", "failed"}
        What an example of the data without a row is: an error (the default: a file cut short
        is a mistake), or a failure of the model (a wrong answer, counted and named).
    empty : {"error", "failed"}
        What a row with an empty prediction is: an error (a file meant to be complete), or a
        failure of the model (what ``kind: predictions`` reads: an LLM's unparseable answer).
    outside : sequence of str
        The model's classes the data does not hold (its ``label_names`` beyond the data's):
        predictions of them are read as wrong answers, their probabilities as columns after
        the data's classes.
    name : str, optional
        The model's name, for messages.

    Returns
    -------
    PredictionFile
        A row marks a failure of the model (:data:`NO_PREDICTION`, a NaN row of probabilities,
        a wrong answer as any model's failure) when its ``failed`` column is true, its
        probabilities are all empty or NaN, or (with ``empty="failed"``) its prediction is empty.

    Raises
    ------
    ModelError
        One line naming the file, the column or row, and the fix: file missing or of an
        unknown format; no ``prediction`` column; empty, duplicate or unknown ids, missing ids
        (unless ``missing_ids="failed"``);
        a file with ids for data without (or the reverse, with different lengths); labels
        the dataset does not have; probability columns for unknown or missing labels;
        probabilities that are not numbers, negative, NaN, or do not sum to 1.
    DataError
        The file cannot be parsed (from :func:`headtohead.data.tables.read_table`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> ds = Dataset("dev.tsv", "text", ["good", "bad"], np.array([1, 0]), ("negative", "positive"))
    >>> path = write_prediction_file(pathlib.Path(tempfile.mkdtemp()) / "p.csv", None, ["positive", "positive"],
    ...                              [[0.2, 0.8], [0.4, 0.6]], label_names=ds.label_names)
    >>> read = read_prediction_file(path, ds)
    >>> read.pred.tolist(), read.proba[:, 1].tolist(), read.matched_by
    ([1, 1], [0.8, 0.6], 'row order')
    """
    where = f"{path}" if name is None else f"model '{name}' ({path})"
    check_prediction_path(where, Path(path))
    return read_prediction_frame(
        read_table(str(path)),
        dataset,
        where=where,
        source=str(path),
        id_column=id_column,
        tolerance=tolerance,
        extra_ids=extra_ids,
        missing_ids=missing_ids,
        empty=empty,
        outside=outside,
    )


def read_prediction_frame(
    frame: Any,
    dataset: Dataset,
    *,
    where: str,
    source: str,
    id_column: str = "id",
    tolerance: float = SUM_TOLERANCE,
    extra_ids: Literal["error", "ignore"] = "error",
    missing_ids: Literal["error", "failed"] = "error",
    empty: Literal["error", "failed"] = "error",
    outside: Sequence[str] = (),
    note_position: bool = True,
) -> PredictionFile:
    """:func:`read_prediction_file` for a table already in memory (a ``pandas.DataFrame``).

    Parameters
    ----------
    frame : pandas.DataFrame
        The columns of a prediction file.
    dataset : Dataset
    where : str
        How messages name the table (``"model 'gpt' (in memory)"``).
    source : str
        Recorded as :attr:`PredictionFile.source`.
    id_column, tolerance, extra_ids, missing_ids, empty, outside, note_position
        As for :func:`read_prediction_file`; ``note_position=False``: no warning for rows matched by position.

    Returns
    -------
    PredictionFile
    """
    frame = frame.reset_index(drop=True)
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    if PREDICTION_COLUMN not in columns:
        raise ModelError(
            f"{where}: no '{PREDICTION_COLUMN}' column{did_you_mean(PREDICTION_COLUMN, columns)}; the "
            f"file has columns: {name_some(columns, 20, quote=False)}; add a column 'prediction' "
            f"with each row's predicted label (name or index)"
        )
    notes: list[str] = []
    rows, matched_by = _match_rows(
        where, frame, dataset, id_column, extra_ids, missing_ids, notes, note_position=note_position
    )
    absent = np.array(rows) == len(frame)  # examples without a row read an empty row: failures
    if absent.any():
        frame.loc[len(frame)] = [None] * len(columns)
    frame = frame.iloc[rows].reset_index(drop=True)
    file_rows = [r + 1 for r in rows]  # 1-based data rows of the file, for messages
    names = (*dataset.label_names, *outside)
    failed = _failed_rows(where, frame, file_rows) | absent
    blank = np.array([normalise_id(v) is None for v in frame[PREDICTION_COLUMN].tolist()], dtype=bool)
    if empty == "error" and (blank & ~failed).any():
        raise ModelError(
            f"{where}: column '{PREDICTION_COLUMN}' is empty in row(s) "
            f"{name_some([r for r, b, f in zip(file_rows, blank, failed, strict=True) if b and not f], quote=False)}; "
            f"every row needs a predicted label"
        )
    failed |= blank
    proba = _probabilities(where, frame, names, file_rows, tolerance, failed, outside=len(outside))
    if proba is not None:
        failed |= np.isnan(proba).any(axis=1)
        proba[failed] = np.nan
    answered = np.flatnonzero(~failed)
    pred = np.full(len(frame), NO_PREDICTION, dtype=np.int64)
    cells = frame[PREDICTION_COLUMN].tolist()  # once: indexing the frame row by row costs seconds per 100k rows
    pred[answered] = _labels(
        where,
        [cells[i] for i in answered],
        names,
        [file_rows[i] for i in answered],
        notes,
        outside=len(outside),
    )
    if proba is not None:
        chosen = proba[answered, pred[answered]]
        off = int(np.count_nonzero(chosen < proba[answered].max(axis=1) - 1e-12))
        if off:
            notes.append(
                f"{where}: {off} row(s) predict a class that is not their most probable one; "
                f"calibration uses the probability of the predicted class"
            )
    return PredictionFile(source, pred, proba, matched_by, tuple(notes))


def _failed_rows(where: str, frame: Any, rows: list[int]) -> np.ndarray:
    """The rows whose ``failed`` column says the model failed (none without the column)."""
    if FAILED_COLUMN not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    out = np.zeros(len(frame), dtype=bool)
    for i, cell in enumerate(frame[FAILED_COLUMN].tolist()):
        value = normalise_id(cell)
        said = None if value is None else _TRUTH.get(value.lower())
        if value is not None and said is None:
            raise ModelError(
                f"{where}: row {rows[i]}, column '{FAILED_COLUMN}': {cell!r} is neither true nor false; "
                f"write true/false, 1/0 or yes/no (empty is false)"
            )
        out[i] = bool(said)
    return out


#: How a ``failed`` cell says yes or no.
_TRUTH = {"true": True, "1": True, "yes": True, "y": True, "false": False, "0": False, "no": False, "n": False}


def write_prediction_file(
    path: str | Path,
    ids: Sequence[Any] | None,
    labels: Sequence[Any],
    proba: Any = None,
    *,
    label_names: Sequence[str] | None = None,
    id_column: str = "id",
) -> Path:
    """Write predictions in the format :func:`read_prediction_file` reads (chosen by the suffix).

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.tsv``, ``.jsonl``/``.json`` or ``.parquet``/``.pq``.
    ids : sequence or None
        One id per row (written as the ``id_column``), or ``None`` to match by row order.
    labels : sequence
        Predicted labels: names, or indices (written as names when ``label_names`` is given).
    proba : array_like of shape (n, K), optional
        Probabilities in ``label_names`` order, written as ``proba_<label>`` columns.
    label_names : sequence of str, optional
        Required with ``proba``.
    id_column : str

    Returns
    -------
    Path
        ``path``. Floats are written at full precision (they read back bit for bit).
    """
    import pandas as pd

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in PREDICTION_SUFFIXES:
        raise ValueError(f"{path}: write .csv, .tsv, .jsonl, .json, .parquet or .pq, not '{suffix}'")
    values = [label_names[int(v)] if label_names is not None and _is_int(v) else v for v in labels]
    columns: dict[str, list[Any]] = {}
    if ids is not None:
        if len(ids) != len(values):
            raise ValueError(f"{len(ids)} ids for {len(values)} predictions")
        columns[id_column] = list(ids)
    columns[PREDICTION_COLUMN] = values
    if proba is not None:
        matrix = np.asarray(proba, dtype=np.float64)
        if label_names is None or matrix.shape != (len(values), len(label_names)):
            raise ValueError(
                f"proba must have shape (n, K) = ({len(values)}, "
                f"{len(label_names) if label_names else '?'}) with label_names given"
            )
        for k, label in enumerate(label_names):
            columns[f"{PROBA_PREFIX}{label}"] = matrix[:, k].tolist()
    frame = pd.DataFrame(columns)
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix in (".parquet", ".pq"):
        frame.to_parquet(path, index=False)
    elif suffix in (".jsonl", ".json"):  # json.dumps writes shortest round-trip floats; to_json rounds them
        with path.open("w", encoding="utf-8") as handle:
            for record in frame.to_dict(orient="records"):
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    else:
        text = frame.astype(str) if suffix == ".tsv" else frame
        if suffix == ".tsv" and any("\t" in v or "\n" in v for column in text for v in text[column]):
            raise ValueError(f"{path}: a value contains a tab or a newline; write .csv or .jsonl instead")
        text.to_csv(path, index=False, sep="\t" if suffix == ".tsv" else ",", float_format=None)
    return path


def check_prediction_path(where: str, path: Path) -> None:
    """Raise a one-line :class:`ModelError` naming ``where`` unless ``path`` is a readable prediction file."""
    if not path.is_file():
        hint = " (it is a folder)" if path.is_dir() else ""
        raise ModelError(
            f"{where}: prediction file not found{hint}; check the model's source path (relative "
            f"paths are read from the experiment file's folder)"
        )
    if path.suffix.lower() not in PREDICTION_SUFFIXES:
        raise ModelError(
            f"{where}: cannot read '{path.suffix or path.name}' prediction files; use {', '.join(PREDICTION_SUFFIXES)}"
        )


def _match_rows(
    where: str,
    frame: Any,
    dataset: Dataset,
    id_column: str,
    extra_ids: str,
    missing_ids: str,
    notes: list[str],
    *,
    note_position: bool = True,
) -> tuple[list[int], Literal["id", "row order"]]:
    """File row (0-based) of every dataset example, in dataset order; ``len(frame)`` for an example without one."""
    n = len(dataset)
    if id_column not in frame.columns:
        rows = dataset.source_rows(len(frame))  # a row per example, or per row of the data file
        if rows is None:
            skipped = sum(dataset.skipped.values())
            why = f" (loading the data skipped {skipped} row(s): {dict(dataset.skipped)})" if skipped else ""
            raise ModelError(
                f"{where}: {len(frame)} rows but the data has {n} examples{why}, and there is no "
                f"'{id_column}' column to match them by; give one row per example in data order, or "
                f"add an id column (data.id_column names it)"
            )
        without = f", once the {len(frame) - n} row(s) loading skipped are dropped" if len(frame) > n else ""
        notes += (
            [
                (
                    f"{where}: no '{id_column}' column, so rows are matched to the data by position (row i is "
                    f"example i{without}); add ids to match by id"
                )
            ]
            if note_position
            else []
        )
        return rows, "row order"
    if dataset.ids is None:
        raise ModelError(
            f"{where}: the file has an id column '{id_column}' but the data has no ids; set "
            f"data.id_column to the data's id column, or remove the column from the file to match "
            f"rows by position"
        )
    cells = [normalise_id(v) for v in frame[id_column].tolist()]
    empty = [i + 1 for i, v in enumerate(cells) if v is None]
    if empty:
        raise ModelError(
            f"{where}: column '{id_column}' is empty in row(s) {name_some(empty, quote=False)}; "
            f"every row needs the id of its example"
        )
    ids = [v for v in cells if v is not None]  # all of them, as none is empty
    position = {value: row for row, value in reversed(list(enumerate(ids)))}  # each id's first row
    repeated = [value for value, count in Counter(ids).items() if count > 1]
    if repeated:
        raise ModelError(
            f"{where}: column '{id_column}' has {len(repeated)} duplicate id(s): "
            f"{name_some(repeated)}; give each example one row"
        )
    missing = [i for i in dataset.ids if i not in position]
    if missing and missing_ids != "failed":
        raise ModelError(
            f"{where}: {len(missing)} of the data's {n} ids have no row: {name_some(missing)}; "
            f"predict every example (ids are matched to data.id_column), or set the model's "
            f"missing_ids: failed if the model failed on them (each then counts as a wrong answer)"
        )
    if missing:
        notes.append(f"{where}: {len(missing)} id(s) have no row, each a failure of the model: {name_some(missing)}")
    known = set(dataset.ids) | set(dataset.skipped_ids)  # a skipped row's prediction is ignored: its warning says so
    extra = [v for v in ids if v not in known]
    if extra and extra_ids != "ignore":
        raise ModelError(
            f"{where}: {len(extra)} id(s) are not in the data: {name_some(extra)}; remove those rows "
            f"(or check that data.id_column and the file's '{id_column}' hold the same ids)"
        )
    if extra:
        notes.append(f"{where}: ignored {len(extra)} row(s) whose ids are not in the evaluated data")
    return [position.get(i, len(frame)) for i in dataset.ids], "id"


def _labels(
    where: str, raw: list[Any], names: tuple[str, ...], rows: list[int], notes: list[str], *, outside: int = 0
) -> np.ndarray:
    """Predicted labels (names or indices; none empty) as indices into ``names``.

    The last ``outside`` of ``names`` are the model's classes the data does not hold.
    """
    values = [v for v in (normalise_id(v) for v in raw) if v is not None]  # all of them, as none is empty
    lookup = {n: i for i, n in enumerate(names)}
    indices = {v: int(v) for v in set(values) if _is_index(v) and 0 <= int(v) < len(names)}
    if all(v in lookup for v in values):
        if len(indices) == len(set(values)) and any(lookup[v] != i for v, i in indices.items()):
            notes.append(
                f"{where}: predictions such as {name_some(sorted(indices)[:3])} are read as label names, "
                f"not as indices (the data's labels are {', '.join(names)})"
            )
        return np.array([lookup[v] for v in values], dtype=np.int64)
    if all(v in indices for v in values):
        return np.array([indices[v] for v in values], dtype=np.int64)
    unknown = sorted({v for v in values if v not in lookup}, key=str)
    first = next(row for row, v in zip(rows, values, strict=True) if v not in lookup)
    data_names = names[: len(names) - outside]
    raise ModelError(
        f"{where}: column '{PREDICTION_COLUMN}' has labels the data does not have: "
        f"{name_some(unknown)} (first in row {first}); the data's labels are: {listing(data_names)}"
        + _label_fix(unknown, names, outside)
    )


def _label_fix(unknown: list[str], names: tuple[str, ...], outside: int) -> str:
    """How to go on from predictions of labels the data does not have."""
    fix = f" (write these names, or their indices 0..{len(names) - 1}, not a mix)"
    if all(_is_number(v) and not _is_index(v) for v in unknown):
        return (
            f"{fix}; a prediction is a class, not a score: write the probability of each class in "
            f"{PROBA_PREFIX}<label> columns and the predicted class in '{PREDICTION_COLUMN}'"
        )
    if any(_is_index(v) for v in unknown):
        return fix
    hint = numbered_classes_hint(names, sorted(unknown)) if not outside else ""
    if hint:
        return f"{fix}; {hint}"
    known = [*names, *unknown]
    return (
        f"{fix}; if the model knows classes the data does not hold, declare all its classes in its "
        f"label_names (label_names: [{', '.join(known)}] in its entry; with --model: --set "
        f"models.<name>.label_names=[{','.join(known)}]): its predictions of the others then count as wrong answers"
    )


def _probabilities(
    where: str,
    frame: Any,
    names: tuple[str, ...],
    rows: list[int],
    tolerance: float,
    failed: np.ndarray,
    *,
    outside: int = 0,
) -> np.ndarray | None:
    """The ``(n, K)`` probabilities in label order, checked and renormalised; ``None`` if the file has none.

    A row whose probabilities are all empty or NaN (or one of the ``failed`` rows) is a failure
    of the model: all NaN, not checked; a row with only some of them empty is an error. The last
    ``outside`` of ``names`` are the model's classes the data does not hold.
    """
    prefixed = [c for c in frame.columns if c.startswith(PROBA_PREFIX)]
    has_list = PROBA_LIST_COLUMN in frame.columns
    if not prefixed and not has_list:
        return None
    if prefixed and has_list:
        raise ModelError(
            f"{where}: both a '{PROBA_LIST_COLUMN}' column and {PROBA_PREFIX}<label> columns; keep one of the two forms"
        )
    if has_list:
        matrix = _list_column(where, frame[PROBA_LIST_COLUMN].tolist(), names, rows)
        columns = [PROBA_LIST_COLUMN] * len(names)
    else:
        columns = [f"{PROBA_PREFIX}{n}" for n in names]
        unknown = [c for c in prefixed if c not in columns]
        if unknown:
            # named columns on numbered data: the fix is the data's label_names, as for named predictions
            hint = numbered_classes_hint(names, [c[len(PROBA_PREFIX) :] for c in prefixed]) if not outside else ""
            raise ModelError(
                f"{where}: probability columns for labels the data does not have: {name_some(unknown)}; "
                f"the data's labels are {listing(names)} (columns {listing(columns)}); "
                + (
                    hint
                    or "a model that knows classes the data does not hold declares all its classes in its label_names"
                )
            )
        absent = [c for c in columns if c not in prefixed]
        if absent:
            raise ModelError(
                f"{where}: probability columns missing for {len(absent)} label(s): {name_some(absent)}; "
                f"give one {PROBA_PREFIX}<label> column per label, or none"
            )
        matrix = np.column_stack([_numbers(where, frame[c].tolist(), c, rows) for c in columns])
    matrix[failed | np.isnan(matrix).all(axis=1)] = np.nan
    _check_rows(where, matrix, columns, rows, tolerance)
    return cast(np.ndarray, matrix / matrix.sum(axis=1, keepdims=True))


def _numbers(where: str, cells: list[Any], column: str, rows: list[int]) -> np.ndarray:
    out = np.empty(len(cells), dtype=np.float64)
    for i, cell in enumerate(cells):
        try:
            out[i] = math.nan if cell is None or (isinstance(cell, str) and not cell.strip()) else float(cell)
        except (TypeError, ValueError):
            raise ModelError(
                f"{where}: row {rows[i]}, column '{column}': {cell!r} is not a number; write "
                f"probabilities as numbers between 0 and 1"
            ) from None
    return out


def _list_column(where: str, cells: list[Any], names: tuple[str, ...], rows: list[int]) -> np.ndarray:
    out = np.empty((len(cells), len(names)), dtype=np.float64)
    for i, cell in enumerate(cells):
        value = cell
        if not isinstance(cell, (list, np.ndarray)) and normalise_id(cell) is None:
            out[i] = np.nan  # an empty cell: the model failed on this row
            continue
        if isinstance(cell, str):
            try:
                value = json.loads(cell)
            except json.JSONDecodeError:
                value = None
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if not isinstance(value, list):
            raise ModelError(
                f"{where}: row {rows[i]}, column '{PROBA_LIST_COLUMN}': {cell!r} is not a list of "
                f"numbers; write e.g. [0.1, 0.9] in label order ({', '.join(names)})"
            )
        if len(value) != len(names):
            raise ModelError(
                f"{where}: row {rows[i]}, column '{PROBA_LIST_COLUMN}' has {len(value)} values but the "
                f"data has {len(names)} labels; give one probability per label in the order "
                f"{', '.join(names)}"
            )
        out[i] = _numbers(where, value, PROBA_LIST_COLUMN, [rows[i]] * len(value))
    return out


def _check_rows(where: str, matrix: np.ndarray, columns: list[str], rows: list[int], tolerance: float) -> None:
    """Refuse rows partly empty, infinite, negative or unnormalised (all-NaN rows are failures, not checked)."""
    answered = ~np.isnan(matrix).all(axis=1)
    unreadable = ~np.isfinite(matrix) & answered[:, None]
    for problem, bad in (("is empty, NaN or infinite", unreadable), ("is negative", matrix < 0)):
        if bad.any():
            i, k = (int(x) for x in np.argwhere(bad)[0])
            raise ModelError(
                f"{where}: row {rows[i]}, column '{columns[k]}': the probability {problem} "
                f"({int(bad.any(axis=1).sum())} row(s) like this); write probabilities in [0, 1]"
            )
    sums = matrix.sum(axis=1)
    off = answered & (np.abs(sums - 1.0) > tolerance)
    if off.any():
        i = int(np.argmax(off))
        raise ModelError(
            f"{where}: row {rows[i]}: the probabilities sum to {sums[i]:.6g}, not 1 (tolerance "
            f"{tolerance:g}; {int(off.sum())} row(s) like this); write normalised probabilities "
            f"(e.g. a softmax) or leave the probability columns out"
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_index(value: Any) -> bool:
    return _is_int(value) or (isinstance(value, str) and value.strip().isdigit())


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
