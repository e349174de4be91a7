"""Tiny datasets written on the fly: text tables, image folders and saved HF datasets.

The builders make data a model can actually learn (each class has its own words or its
own colour), so end-to-end runs in tests and examples give non-trivial accuracies, and
they are seeded, so the same call writes the same bytes.

Examples
--------
>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> table = make_text_table(root / "tiny.csv", n_per_class=3)
>>> folder = make_image_folder(root / "images", classes=("cat", "dog"), n_per_class=2)
>>> sorted(p.name for p in folder.iterdir())
['cat', 'dog']
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "TABLE_FORMATS",
    "write_text_table",
    "make_text_rows",
    "make_text_table",
    "make_image_folder",
    "save_hf_dataset",
]

#: Formats :func:`write_text_table` writes, by name (also inferred from the suffix).
TABLE_FORMATS = ("csv", "tsv", "jsonl", "json", "parquet")

_SUFFIX_FORMAT = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}

# Words per sentiment so that a bag-of-words model separates the classes; more classes
# reuse the pools with a class-specific marker word.
_POSITIVE = ("good", "great", "lovely", "wonderful", "charming", "superb", "delightful", "moving")
_NEGATIVE = ("bad", "dull", "awful", "boring", "tedious", "clumsy", "dreadful", "flat")
_NEUTRAL = ("the", "film", "story", "acting", "plot", "was", "and", "a", "music", "ending")


def write_text_table(
    path: str | Path, rows: Sequence[Mapping[str, Any]], *, fmt: str | None = None, columns: Sequence[str] | None = None
) -> Path:
    """Write ``rows`` (one mapping per row) as a csv/tsv/jsonl/parquet table.

    Values are written as given: ``None`` becomes an empty field (csv/tsv) or ``null``
    (jsonl/parquet), which lets tests build rows with missing values.

    Parameters
    ----------
    path : str or Path
        The file to write (parent folders are created).
    rows : sequence of mapping
        The rows; keys are column names.
    fmt : {"csv", "tsv", "jsonl", "json", "parquet"}, optional
        Format; inferred from the suffix when omitted. ``json`` writes JSON lines, as
        headtohead reads ``.json`` files as JSON lines.
    columns : sequence of str, optional
        Column order (default: keys in first-seen order). An empty ``rows`` with
        ``columns`` writes a header-only file.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ValueError
        Unknown format, or a tsv value containing a tab or newline (tsv is written unquoted).
    """
    path = Path(path)
    fmt = fmt or _SUFFIX_FORMAT.get(path.suffix.lower())
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"unknown table format {fmt!r} for {path.name}; use one of {TABLE_FORMATS}")
    names = list(columns) if columns is not None else _column_order(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("csv", "tsv"):
        _write_delimited(path, rows, names, tab=fmt == "tsv")
    elif fmt in ("jsonl", "json"):
        with path.open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps({name: _plain(row.get(name)) for name in names}) + "\n")
    else:
        import pandas as pd

        frame = pd.DataFrame([{name: _plain(row.get(name)) for name in names} for row in rows], columns=names)
        frame.to_parquet(path, index=False)
    return path


def make_text_rows(
    n_per_class: int = 8,
    *,
    classes: Sequence[str] = ("negative", "positive"),
    int_labels: bool = False,
    pair: bool = False,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Short synthetic sentences whose words give away the class, shuffled with ``seed``.

    Parameters
    ----------
    n_per_class : int
        Rows per class.
    classes : sequence of str
        Class names; with two classes the first is negative, the second positive.
    int_labels : bool
        Write labels as ``0..K-1`` instead of the names.
    pair : bool
        Add a ``text_pair`` column (a second, neutral sentence).
    seed : int
        Seed of the word choice and the row order.

    Returns
    -------
    list of dict
        Rows with ``text``, ``label`` (and ``text_pair``).
    """
    rng = np.random.default_rng(seed)
    rows = []
    for index, name in enumerate(classes):
        pool = _NEGATIVE if index % 2 == 0 else _POSITIVE
        for _ in range(n_per_class):
            words = list(rng.choice(_NEUTRAL, size=4)) + list(rng.choice(pool, size=2))
            if len(classes) > 2:  # beyond two classes the sentiment pools repeat: add a marker
                words.append(f"topic{index}")
            rng.shuffle(words)
            row: dict[str, Any] = {"text": " ".join(words), "label": index if int_labels else name}
            if pair:
                row["text_pair"] = " ".join(rng.choice(_NEUTRAL, size=5))
            rows.append(row)
    order = rng.permutation(len(rows))
    return [rows[i] for i in order]


def make_text_table(
    path: str | Path,
    *,
    n_per_class: int = 8,
    classes: Sequence[str] = ("negative", "positive"),
    int_labels: bool = False,
    pair: bool = False,
    seed: int = 0,
    fmt: str | None = None,
) -> Path:
    """Write :func:`make_text_rows` to ``path`` (format from the suffix unless ``fmt``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = make_text_table(pathlib.Path(tempfile.mkdtemp()) / "t.tsv", n_per_class=2)
    >>> p.read_text().splitlines()[0]
    'text\\tlabel'
    """
    rows = make_text_rows(n_per_class, classes=classes, int_labels=int_labels, pair=pair, seed=seed)
    return write_text_table(path, rows, fmt=fmt)


def make_image_folder(
    root: str | Path,
    classes: Sequence[str] = ("a", "b"),
    n_per_class: int = 4,
    size: int | tuple[int, int] = 16,
    seed: int = 0,
    *,
    fmt: str = "png",
) -> Path:
    """Write an ImageFolder tree ``root/<class>/<class>_<i>.<fmt>`` of small RGB images.

    Each class has its own base colour plus noise, so a small model can tell them apart.

    Parameters
    ----------
    root : str or Path
        Folder to create (may exist).
    classes : sequence of str
        Class folder names.
    n_per_class : int
        Images per class.
    size : int or (width, height)
        Image size in pixels.
    seed : int
        Seed of the noise.
    fmt : {"png", "jpg", "jpeg", "bmp", "gif"}
        File format (and suffix).

    Returns
    -------
    Path
        ``root``.
    """
    from PIL import Image

    width, height = (size, size) if isinstance(size, int) else size
    rng = np.random.default_rng(seed)
    root = Path(root)
    for index, name in enumerate(classes):
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        base = _class_colour(index, len(classes))
        for i in range(n_per_class):
            noise = rng.integers(-40, 41, size=(height, width, 3))
            pixels = np.clip(base + noise, 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(folder / f"{name}_{i}.{fmt}")
    return root


def save_hf_dataset(
    root: str | Path,
    splits: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    label_names: Sequence[str] | None = None,
    label_column: str = "label",
) -> Path:
    """Save rows as a ``datasets.save_to_disk`` folder (a ``DatasetDict``), for ``hf:<folder>``.

    Needs the optional ``datasets`` package.

    Parameters
    ----------
    root : str or Path
        Folder to write.
    splits : mapping of str to rows
        ``{"train": rows, "validation": rows}``; rows as for :func:`write_text_table`.
        A split called ``""`` saves a single ``Dataset`` (no splits) instead.
    label_names : sequence of str, optional
        Make ``label_column`` a ``ClassLabel`` with these names (row labels must be ints).
    label_column : str
        Label column name.

    Returns
    -------
    Path
        ``root``.
    """
    import datasets

    def build(rows: Sequence[Mapping[str, Any]]) -> Any:
        columns = {name: [row.get(name) for row in rows] for name in _column_order(rows)}
        dataset = datasets.Dataset.from_dict(columns)
        if label_names is not None:
            dataset = dataset.cast_column(label_column, datasets.ClassLabel(names=list(label_names)))
        return dataset

    root = Path(root)
    if set(splits) == {""}:
        build(splits[""]).save_to_disk(str(root))
    else:
        datasets.DatasetDict({name: build(rows) for name, rows in splits.items()}).save_to_disk(str(root))
    return root


def _column_order(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    return list(names)


def _write_delimited(path: Path, rows: Sequence[Mapping[str, Any]], names: list[str], *, tab: bool) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        if tab:
            # headtohead reads .tsv unquoted (SST-2 style), so write it unquoted too.
            for row in rows:
                for name in names:
                    if any(c in str(row.get(name, "")) for c in "\t\n\r"):
                        raise ValueError(f"tsv value of column {name!r} contains a tab or newline: {row.get(name)!r}")
            lines = ["\t".join(names)] + ["\t".join(_field(row.get(n)) for n in names) for row in rows]
            handle.write("\n".join(lines) + "\n")
        else:
            writer = csv.writer(handle)
            writer.writerow(names)
            writer.writerows([_field(row.get(n)) for n in names] for row in rows)


def _field(value: Any) -> str:
    return "" if value is None else str(value)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _class_colour(index: int, count: int) -> np.ndarray:
    hue = index / max(count, 1)
    # Three phase-shifted cosines: distinct, saturated colours for any number of classes.
    channels = [0.5 + 0.5 * np.cos(2 * np.pi * (hue + shift)) for shift in (0.0, 1 / 3, 2 / 3)]
    return (np.array(channels) * 200 + 28).reshape(1, 1, 3)
