"""Labelled text tables: .csv, .tsv, .jsonl/.json (JSON lines) and .parquet, read with pandas.

See ``docs/api/config.md``, the section of this title.
"""

from __future__ import annotations

import csv
import json
import re
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from headtohead.config.schema import DataConfig
from headtohead.data.base import Dataset, Modality, encode_labels
from headtohead.data.columns import (
    check_ids,
    is_missing,
    label_ok_flags,
    name_some,
    normalise_id,
    normalise_value,
    require_extra_columns,
)
from headtohead.errors import DataError, did_you_mean, listing

if TYPE_CHECKING:  # pandas is imported lazily
    import pandas as pd

__all__ = [
    "load_table",
    "frame_to_dataset",
    "read_table",
    "rows_to_dataset",
    "warn_skipped",
    "skipped_ids_of",
    "is_missing",
    "LABEL_OK_FALSE",
]

DEFAULT_TEXT_COLUMN = "text"
#: The reason a row flagged false in ``data.label_ok`` is skipped (``Dataset.skipped``, the report's data line).
LABEL_OK_FALSE = "label_ok false"
#: From this many rows on, a label column whose every value differs holds no classes (sentences, ids, an
#: unlabelled test split): refused when the data loads. Fewer rows may be a toy set of one example per class.
UNIQUE_LABELS_FROM = 20

# Leading bytes of binary formats someone may rename to .csv by mistake.
_BINARY_MAGIC = {
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"PK\x03\x04": "a zip archive (xlsx?)",
    b"PAR1": "a parquet file",
    b"%PDF": "a PDF",
    b"\x1f\x8b": "gzip-compressed data",
    b"\xd0\xcf\x11\xe0": "an old Excel/Office file",
}
_PARSER_LINE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_INTEGRAL_FLOAT = re.compile(r"^\s*-?\d+\.0*\s*$")


def load_table(spec: str, config: DataConfig) -> Dataset:
    """Read a labelled text table into a :class:`Dataset`.

    Parameters
    ----------
    spec : str
        Path of a ``.csv``, ``.tsv``, ``.jsonl``/``.json`` (JSON lines) or ``.parquet``/``.pq`` file.
    config : DataConfig
        ``text_column`` (default ``"text"``), ``text_pair_column``, ``label_column``,
        ``label_names``, ``id_column`` and ``slice_columns`` are used.

    Returns
    -------
    Dataset
        Modality ``"text"`` (examples are ``str``) or ``"text_pair"`` (``(text, pair)`` tuples),
        in file order, with skipped rows counted by reason, and the ids and slice columns
        when configured.

    Raises
    ------
    DataError
        Empty, header-only, binary or malformed file; a column that does not exist; labels
        mixing numbers and names, or not matching ``data.label_names``; empty or duplicate ids.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from headtohead.testing.data import write_text_table
    >>> path = write_text_table(pathlib.Path(tempfile.mkdtemp()) / "t.csv",
    ...                         [{"text": "fine", "label": 1}, {"text": "poor", "label": 0}])
    >>> ds = load_table(str(path), DataConfig(path=str(path), label_names=["neg", "pos"]))
    >>> ds.examples, ds.labels.tolist(), ds.label_names
    (['fine', 'poor'], [1, 0], ('neg', 'pos'))
    """
    return frame_to_dataset(read_table(spec), spec, config)


def frame_to_dataset(frame: Any, spec: str, config: DataConfig) -> Dataset:
    """A labelled text table already in memory (a ``pandas.DataFrame``) as a :class:`Dataset`.

    The columns are read as :func:`load_table` reads a file's (``spec`` names the table in
    messages and becomes ``Dataset.source``).
    """
    text_column = config.text_column or DEFAULT_TEXT_COLUMN
    wanted = {"data.text_column": text_column, "data.label_column": config.label_column}
    if config.text_pair_column is not None:
        wanted["data.text_pair_column"] = config.text_pair_column
    columns = [str(c) for c in frame.columns]
    for key, column in wanted.items():
        if column not in columns:
            raise DataError(_unknown_column_message(spec, key, column, columns))
    require_extra_columns(spec, config, columns)
    pairs = frame[config.text_pair_column].tolist() if config.text_pair_column is not None else None
    ids = frame[config.id_column].tolist() if config.id_column is not None else None
    extra = {name: frame[name].tolist() for name in config.kept_columns}
    return rows_to_dataset(
        spec,
        frame[text_column].tolist(),
        frame[config.label_column].tolist(),
        pairs=pairs,
        label_column=config.label_column,
        label_names=config.label_names,
        ids=ids,
        id_column=config.id_column or "id",
        columns=extra,
        all_columns=columns,
        label_ok=frame[config.label_ok].tolist() if config.label_ok is not None else None,
        label_ok_column=config.label_ok or "label_ok",
    )


def read_table(spec: str) -> pd.DataFrame:
    """Read a table file into a ``DataFrame`` (csv/tsv as strings), with one-line errors.

    Raises
    ------
    DataError
        The file is empty, has a header but no rows, is binary, is not UTF-8, or has a
        malformed row (the line number is given when pandas reports it).
    """
    path = Path(spec)
    suffix = path.suffix.lower()
    _check_not_empty(spec, path)
    if suffix in (".parquet", ".pq"):
        frame = _read_parquet(spec, path)
    else:
        _check_text_file(spec, path)
        frame = _read_jsonl(spec, path) if suffix in (".jsonl", ".json") else _read_delimited(spec, path, suffix)
    if len(frame.columns) == 0:
        raise DataError(f"{spec}: the file has no columns; it needs a header line with the column names")
    if len(frame) == 0:
        raise DataError(f"{spec}: the file has a header ({listing(frame.columns)}) but no rows")
    return frame


def rows_to_dataset(
    source: str,
    texts: list[Any],
    labels: list[Any],
    *,
    pairs: list[Any] | None = None,
    label_column: str = "label",
    label_names: list[str] | None = None,
    ids: list[Any] | None = None,
    id_column: str = "id",
    columns: Mapping[str, list[Any]] | None = None,
    all_columns: Sequence[str] = (),
    label_ok: list[Any] | None = None,
    label_ok_column: str = "label_ok",
) -> Dataset:
    """Build a text :class:`Dataset` from column values, skipping and counting unusable rows.

    A row is skipped (first reason that applies) for a ``"label_ok false"`` (its ``data.label_ok``
    cell says its gold label is wrong), an ``"empty text"``, an ``"empty text
    pair"`` or a ``"missing label"``; empty means ``None``, NaN, ``""`` or only whitespace.
    Ids and slice columns of skipped rows are dropped with them.

    Parameters
    ----------
    source : str
        For messages and ``Dataset.source``.
    texts, labels : list
        One value per row.
    pairs : list, optional
        Second texts; gives modality ``"text_pair"``.
    label_column : str
        For messages.
    label_names : list of str, optional
        ``data.label_names``: names of integer labels, or the order of name labels.
    ids : list, optional
        The id cell of every row (``data.id_column``); checked for empty and repeated ids.
    id_column : str
        For messages.
    columns : mapping of str to list, optional
        Slice columns, one value per row.
    all_columns : sequence of str
        Every column of the table, named when the label column looks like no labels.
    label_ok : list, optional
        The ``data.label_ok`` cell of every row (:func:`~headtohead.data.columns.label_ok_flags`).
    label_ok_column : str
        For messages.

    Returns
    -------
    Dataset

    Raises
    ------
    DataError
        Labels that do not fit ``label_names``, mix numbers and names, or (without ``label_names``)
        are all different over :data:`UNIQUE_LABELS_FROM` rows or more: that column holds no classes.
    """
    skipped: Counter[str] = Counter()
    examples: list[Any] = []
    kept_labels: list[Any] = []
    kept_rows: list[int] = []
    flags = label_ok_flags(source, label_ok_column, label_ok) if label_ok is not None else None
    for i, (text, label) in enumerate(zip(texts, labels, strict=True)):
        pair = pairs[i] if pairs is not None else None
        if flags is not None and not flags[i]:
            skipped[LABEL_OK_FALSE] += 1
        elif is_missing(text):
            skipped["empty text"] += 1
        elif pairs is not None and is_missing(pair):
            skipped["empty text pair"] += 1
        elif is_missing(label):
            skipped["missing label"] += 1
        else:
            examples.append((str(text), str(pair)) if pairs is not None else str(text))
            kept_labels.append(_normalise_label(label))
            kept_rows.append(i)
    encoded, names = encode_labels(kept_labels, source=source, column=label_column, names=label_names)
    if label_names is None and len(names) == len(kept_labels) >= UNIQUE_LABELS_FROM:
        raise DataError(
            f"{source}: column '{label_column}' (data.label_column): all {len(names)} values differ, so it is "
            f"probably not labels (an unlabelled file?); set data.label_column (--label-column) to the column of "
            f"classes" + (f" (columns: {listing(all_columns)})" if all_columns else "")
        )
    kept_ids = None
    skipped_rows = sorted(set(range(len(texts))) - set(kept_rows))
    skipped_ids = skipped_ids_of(ids, skipped_rows)
    if ids is not None:
        kept_ids = check_ids(source, id_column, [ids[i] for i in kept_rows], [i + 1 for i in kept_rows])
    extra = {name: [normalise_value(values[i]) for i in kept_rows] for name, values in (columns or {}).items()}
    warn_skipped(source, skipped, unit="rows", ids=skipped_ids if ids is not None else None)
    modality: Modality = "text_pair" if pairs is not None else "text"
    return Dataset(
        source, modality, examples, encoded, names, dict(skipped), kept_ids, extra, skipped_ids, tuple(skipped_rows)
    )


def skipped_ids_of(ids: Sequence[Any] | None, rows: Sequence[int]) -> tuple[str, ...]:
    """The ids (as strings) of the skipped ``rows``, those that have one; empty without ids."""
    if ids is None:
        return ()
    return tuple(i for i in (normalise_id(ids[row]) for row in rows) if i is not None)


def warn_skipped(source: str, skipped: Mapping[str, int], *, unit: str, ids: Sequence[str] | None = None) -> None:
    """Emit one warning naming what was skipped and why (nothing when nothing was skipped).

    ``ids``: the skipped rows' ids when the data has an id column (named in the warning). Either
    way the warning says that predictions stored for the skipped rows are ignored (by id, or by
    position in a prediction file with one row per source row; see
    :mod:`headtohead.adapters.prediction_files`): the user did nothing wrong in such a file.
    """
    total = sum(skipped.values())
    if total:
        reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(skipped.items()))
        named = f": {name_some(list(ids))}" if ids else ""
        warnings.warn(
            f"{source}: skipped {total} {unit} ({reasons}){named}; counted in the dataset's skipped "
            f"totals, and predictions stored for them are ignored",
            UserWarning,
            stacklevel=3,
        )


def _normalise_label(label: Any) -> Any:
    # "1.0" is what pandas writes for an integer column that had missing values.
    if isinstance(label, str) and _INTEGRAL_FLOAT.match(label):
        return label.strip().split(".")[0]
    return label


def _unknown_column_message(spec: str, key: str, column: str, columns: list[str]) -> str:
    hint = did_you_mean(column, columns)
    if len(columns) == 1:
        for sep, name in (("\t", "tabs"), (";", "semicolons"), (",", "commas")):
            if sep in columns[0]:
                hint += f" (the header is one column containing {name}: check the separator and the file suffix)"
                break
    return (
        f"{spec}: no column '{column}' ({key}){hint}; the file has columns: {listing(columns)}; "
        f"set {key} to one of them"
    )


def _check_not_empty(spec: str, path: Path) -> None:
    with path.open("rb") as handle:
        head = handle.read(65536)
    text_like = path.suffix.lower() not in (".parquet", ".pq")
    if not head or (text_like and not head.strip() and path.stat().st_size <= len(head)):
        raise DataError(f"{spec}: the file is empty; it needs a header line and at least one row")


def _check_text_file(spec: str, path: Path) -> None:
    with path.open("rb") as handle:
        head = handle.read(8192)
    for magic, what in _BINARY_MAGIC.items():
        if head.startswith(magic):
            raise DataError(f"{spec}: not a text table (the file is {what}); give a UTF-8 csv/tsv/jsonl file")
    if b"\x00" in head:
        raise DataError(
            f"{spec}: not a text table (it contains NUL bytes: binary, or UTF-16 text); give a UTF-8 csv/tsv/jsonl file"
        )


def _read_delimited(spec: str, path: Path, suffix: str) -> pd.DataFrame:
    import pandas as pd

    options: dict[str, Any] = {"dtype": str, "keep_default_na": False, "encoding": "utf-8-sig", "index_col": False}
    if suffix == ".tsv":
        options.update(sep="\t", quoting=csv.QUOTE_NONE)
    try:
        return pd.read_csv(path, **options)
    except pd.errors.EmptyDataError as error:
        raise DataError(f"{spec}: the file is empty; it needs a header line and at least one row") from error
    except pd.errors.ParserError as error:
        raise DataError(_parser_message(spec, str(error), tab=suffix == ".tsv")) from error
    except UnicodeDecodeError as error:
        raise DataError(
            f"{spec}: not UTF-8 text (byte 0x{error.object[error.start]:02x} at position {error.start}); "
            f"save the file as UTF-8"
        ) from error


def _parser_message(spec: str, message: str, *, tab: bool) -> str:
    found = _PARSER_LINE.search(message)
    separator = "tabs" if tab else "commas"
    if found:
        expected, line, saw = found.groups()
        return (
            f"{spec}: malformed row at line {line}: expected {expected} fields, saw {saw}; "
            f"quote values that contain {separator} or fix the row"
        )
    first = message.strip().splitlines()[0] if message.strip() else "parse error"
    return f"{spec}: malformed table ({first}); check the quoting and the separator"


def _read_jsonl(spec: str, path: Path) -> pd.DataFrame:
    import io

    import pandas as pd

    text = _read_utf8(spec, path)
    as_array = text.lstrip().startswith("[")  # tolerate a .json file holding one JSON array
    try:
        frame = pd.read_json(io.StringIO(text), lines=not as_array, dtype=False, precise_float=True)
    except ValueError as error:
        raise DataError(_json_message(spec, text, error)) from error
    if as_array and frame.empty:
        raise DataError(f"{spec}: the JSON array is empty; it needs at least one row object")
    return frame


def _read_utf8(spec: str, path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataError(
            f"{spec}: not UTF-8 text (byte 0x{error.object[error.start]:02x} at position {error.start}); "
            f"save the file as UTF-8"
        ) from error


def _json_message(spec: str, text: str, error: ValueError) -> str:
    # pandas names a character position; find the first bad line to point at instead.
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as bad:
            return f"{spec}: line {number} is not valid JSON ({bad.msg}); write one JSON object per line"
        if not isinstance(row, dict):
            return f"{spec}: line {number} is not a JSON object ({type(row).__name__}); write one object per line"
    return f"{spec}: cannot read it as JSON lines ({error}); write one JSON object per line"


def _read_parquet(spec: str, path: Path) -> pd.DataFrame:
    import pandas as pd

    try:
        return pd.read_parquet(path)
    except (ValueError, OSError) as error:  # pyarrow.ArrowInvalid is a ValueError
        raise DataError(
            f"{spec}: not a readable parquet file ({str(error).splitlines()[0]}); "
            f"re-save it with pandas.DataFrame.to_parquet or use csv/jsonl"
        ) from error
