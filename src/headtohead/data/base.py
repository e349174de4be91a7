"""The in-memory dataset every loader returns and every engine reads.

See ``docs/api/config.md``, the section of this title.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from headtohead.errors import DataError, listing

__all__ = ["Dataset", "DataSplits", "Modality", "encode_labels"]

Modality = Literal["text", "text_pair", "image", "features"]


@dataclass(frozen=True)
class Dataset:
    """Labelled examples with the label set and its order recorded.

    Parameters
    ----------
    source : str
        Where the examples came from (a path, ``sklearn:digits`` …), for messages and results.
    modality : {"text", "text_pair", "image", "features"}
        What kind of example ``examples`` holds.
    examples : sequence
        One entry per example (see the module docstring for the type per modality).
    labels : ndarray of shape (n,), int64
        Index into ``label_names`` for every example.
    label_names : tuple of str
        The classes, in the order their integer labels refer to.
    skipped : mapping of str to int
        Rows or files dropped while loading, counted by reason (never dropped silently).
    ids : tuple of str, optional
        A unique id per example (``data.id_column``; for image folders the file path inside
        the folder), used to match prediction files to the data. ``None`` when there are none.
    columns : mapping of str to ndarray
        Extra per-example columns kept for slicing (``data.slice_columns``), each an object
        array of length ``n`` holding the values as read (missing values as ``None``).
    skipped_ids : tuple of str
        The ids of the rows or files in ``skipped`` (when the data has ids): predictions
        stored for them are ignored, as the user could not have known the row would be skipped.
    skipped_rows : tuple of int
        The 0-based positions in the source of the skipped rows (a table read whole): a
        prediction file without ids but with one row per source row is matched without
        them. Empty after :meth:`take`, whose positions no longer follow the source.
    group_column : str, optional
        The column of ``columns`` naming groups of related examples (``data.group_column``, set
        at load): ``groups`` then holds each example's group (an example without a value is a
        group of its own), else ``None``.
    """

    source: str
    modality: Modality
    examples: Sequence[Any] | np.ndarray
    labels: np.ndarray  # a sequence of ints is accepted and converted
    label_names: tuple[str, ...]
    skipped: Mapping[str, int] = field(default_factory=dict)
    ids: tuple[str, ...] | None = None
    columns: Mapping[str, Any] = field(default_factory=dict)  # lists are accepted, kept as object arrays
    skipped_ids: tuple[str, ...] = ()
    skipped_rows: tuple[int, ...] = ()
    group_column: str | None = None
    groups: np.ndarray | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        labels = np.asarray(self.labels, dtype=np.int64)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "label_names", tuple(str(n) for n in self.label_names))
        if len(self.examples) != len(labels):
            raise ValueError(f"{len(self.examples)} examples but {len(labels)} labels")
        if len(labels) and (labels.min() < 0 or labels.max() >= len(self.label_names)):
            raise ValueError("labels must index label_names")
        if self.ids is not None:
            object.__setattr__(self, "ids", tuple(str(i) for i in self.ids))
            if len(self.ids) != len(labels):
                raise ValueError(f"{len(self.ids)} ids but {len(labels)} examples")
        columns = {str(name): _object_array(values) for name, values in self.columns.items()}
        for name, values in columns.items():
            if len(values) != len(labels):
                raise ValueError(f"column '{name}' has {len(values)} values but there are {len(labels)} examples")
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "groups", None if self.group_column is None else self._group_labels(self.group_column))

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def num_classes(self) -> int:
        return len(self.label_names)

    def take(self, indices: Sequence[int] | np.ndarray) -> Dataset:
        """Return the examples at ``indices`` (same label names, same skip counts)."""
        idx = np.asarray(indices, dtype=np.int64)
        if isinstance(self.examples, np.ndarray):
            examples: Sequence[Any] | np.ndarray = self.examples[idx]
        else:
            examples = [self.examples[i] for i in idx]
        ids = tuple(self.ids[i] for i in idx) if self.ids is not None else None
        columns = {name: values[idx] for name, values in self.columns.items()}
        return replace(
            self,
            examples=examples,
            labels=self.labels[idx],
            skipped=dict(self.skipped),
            ids=ids,
            columns=columns,
            skipped_rows=(),
        )

    def source_rows(self, n_rows: int) -> list[int] | None:
        """The row of each example in a table of ``n_rows`` rows in data order, without ids.

        A table with one row per example, or with one row per row of the source (the
        :attr:`skipped_rows` among them, dropped); ``None`` when its length fits neither.
        """
        if n_rows == len(self):
            return list(range(n_rows))
        if self.skipped_rows and n_rows == len(self) + len(self.skipped_rows):
            dropped = set(self.skipped_rows)
            return [row for row in range(n_rows) if row not in dropped]
        return None

    def _group_labels(self, column: str) -> np.ndarray:
        """Each example's group as a string: ``=value``, or a group of its own without a value."""
        if column not in self.columns:
            raise DataError(f"{self.source}: no column '{column}' (data.group_column) was kept with the examples")
        return np.array(
            [f"\x00#{i}" if value is None else f"={value}" for i, value in enumerate(self.columns[column])],
            dtype=object,
        )

    def class_counts(self) -> np.ndarray:
        """Number of examples per class, in ``label_names`` order."""
        return np.bincount(self.labels, minlength=self.num_classes)

    def with_label_names(self, names: Sequence[str]) -> Dataset:
        """Re-express the labels against ``names`` (a superset of this dataset's names).

        Used to give a train split the eval split's label order.
        """
        names = tuple(str(n) for n in names)
        missing = [n for n in self.label_names if n not in names]
        if missing:
            raise DataError(
                f"{self.source}: labels {listing(missing, quote=True)} do not occur in the evaluation data "
                f"(eval labels: {listing(names, quote=True)}); every class needs eval examples"
            )
        position = {n: i for i, n in enumerate(names)}
        mapping = np.array([position[n] for n in self.label_names], dtype=np.int64)
        labels = mapping[self.labels] if len(self) else self.labels
        return replace(self, labels=labels, label_names=names, skipped=dict(self.skipped))

    def fingerprint(self) -> str:
        """A SHA-256 of the examples, labels and label names: equal data gives an equal hash.

        Ids and slice columns are hashed too when the dataset has them (data without them
        keeps the hash it had before they existed, so earlier runs still resume).
        """
        digest = hashlib.sha256()
        digest.update(self.modality.encode())
        digest.update("\x1f".join(self.label_names).encode())
        digest.update(self.labels.tobytes())
        if isinstance(self.examples, np.ndarray):
            digest.update(np.ascontiguousarray(self.examples).tobytes())
        else:
            for example in self.examples:
                if isinstance(example, np.ndarray):
                    digest.update(np.ascontiguousarray(example).tobytes())
                elif isinstance(example, tuple):
                    digest.update("\x1e".join(map(str, example)).encode())
                else:
                    digest.update(str(example).encode())
                digest.update(b"\x1d")
        if self.ids is not None:
            digest.update(b"\x1cids\x1c" + "\x1d".join(self.ids).encode())
        for name in sorted(self.columns):
            digest.update(b"\x1ccolumn\x1c" + name.encode() + b"\x1c")
            digest.update("\x1d".join(map(repr, self.columns[name].tolist())).encode())
        return digest.hexdigest()


@dataclass(frozen=True)
class DataSplits:
    """The evaluation split and, when there is one, the training split (same label names)."""

    eval: Dataset
    train: Dataset | None = None


def _object_array(values: Any) -> np.ndarray:
    """A 1-D object array of the values as given (``np.asarray`` would turn lists into a 2-D array)."""
    values = list(values)
    array = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):  # element-wise: a slice assignment would unpack list values
        array[i] = value
    return array


def encode_labels(
    raw: Sequence[Any], *, source: str, column: str = "label", names: Sequence[str] | None = None
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Turn raw label values (names or integers) into indices and ordered label names.

    Integer labels keep their numeric order (``0, 1, 2``) and are named by ``names``
    when given (``names[i]`` is the name of label ``i``), else by their digits. String
    labels are sorted. A column mixing numbers and words is an error.

    Parameters
    ----------
    raw : sequence
        The label of every example, as read.
    source, column : str
        For error messages.
    names : sequence of str, optional
        Names for integer labels ``0..K-1`` (``data.label_names`` in the experiment).

    Returns
    -------
    labels : ndarray of int64
    label_names : tuple of str

    Examples
    --------
    >>> encode_labels([1, 0, 1], source="x.csv", names=["negative", "positive"])
    (array([1, 0, 1]), ('negative', 'positive'))
    """
    values = list(raw)
    kinds = {_label_kind(v) for v in values}
    if kinds == {"int", "fraction"}:
        example_int = next(v for v in values if _label_kind(v) == "int")
        example = next(v for v in values if _label_kind(v) == "fraction")
        raise DataError(
            f"{source}: column '{column}' holds {example!r} among whole-number labels (e.g. {example_int!r}); a "
            f"class label is a whole number or a name, and a score or probability is not one: give each example "
            f"its class (or point data.label_column at the column of classes)"
        )
    kinds = {"str" if k == "fraction" else k for k in kinds}
    if len(kinds) > 1:
        example_int = next(v for v in values if _label_kind(v) == "int")
        example_str = next(v for v in values if _label_kind(v) == "str")
        raise DataError(
            f"{source}: column '{column}' mixes numbers and names (e.g. {example_int!r} and "
            f"{example_str!r}); use one kind of label throughout"
        )
    if kinds == {"int"}:
        ints = np.array([int(float(v)) for v in values], dtype=np.int64)
        present = sorted(set(ints.tolist()))
        if names is not None:
            if present and (present[0] < 0 or present[-1] >= len(names)):
                raise DataError(
                    f"{source}: label values {listing(present)} do not fit data.label_names ({listing(names, quote=True)}) "
                    f"(label i is named label_names[i])"
                )
            return ints, tuple(str(n) for n in names)
        if present and present[0] >= 0 and present == list(range(present[-1] + 1)):
            return ints, tuple(str(i) for i in present)
        lookup = {v: i for i, v in enumerate(present)}
        return np.array([lookup[v] for v in ints.tolist()], dtype=np.int64), tuple(str(v) for v in present)
    strings = [str(v) for v in values]
    if names is not None:
        unknown = sorted(set(strings) - set(names))
        if unknown:
            raise DataError(
                f"{source}: labels {listing(unknown, quote=True)} are not in data.label_names ({listing(names, quote=True)})"
            )
        ordered = tuple(str(n) for n in names)
    else:
        ordered = tuple(sorted(set(strings)))
    lookup = {n: i for i, n in enumerate(ordered)}
    return np.array([lookup[s] for s in strings], dtype=np.int64), ordered


def _label_kind(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "str"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "int" if float(value).is_integer() else "fraction" if np.isfinite(value) else "str"
    text = str(value).strip()
    if text.lstrip("-").isdigit():
        return "int"
    try:
        number = float(text)
    except ValueError:
        return "str"
    return "fraction" if np.isfinite(number) and not number.is_integer() else "str"
