"""Match a model's output labels to the dataset's label order.

See ``docs/api/adapters.md``, the section of this title.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from headtohead.errors import ModelError, listing

__all__ = ["LabelAlignment", "align_labels", "numbered_classes_hint"]

_GENERIC = re.compile(r"^(label_?)?(\d+)$", re.IGNORECASE)
_INTEGER = re.compile(r"^\d+$")


@dataclass(frozen=True)
class LabelAlignment:
    """How to read a model's outputs in dataset order.

    Attributes
    ----------
    columns : ndarray of int
        ``columns[j]`` is the model output column holding dataset class ``j``.
    how : {"identical", "remapped", "subset", "generic", "unnamed"}
        Which rule matched; ``subset``: the dataset holds some of the model's classes.
    warning : str or None
        Set for the rules a user should double-check.
    outside : tuple of str
        The model's classes the dataset does not hold, in output order (empty unless
        ``how`` is ``subset`` or a generic model has more outputs than the data classes).
    outside_columns : ndarray of int
        The output column of each class in ``outside``.
    """

    columns: np.ndarray
    how: str
    warning: str | None = None
    outside: tuple[str, ...] = ()
    outside_columns: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def n_outputs(self) -> int:
        """How many scores the model gives per example."""
        return len(self.columns) + len(self.outside_columns)

    @property
    def order(self) -> np.ndarray:
        """Output columns in aligned order: the dataset's classes, then :attr:`outside`."""
        return np.concatenate(
            [np.asarray(self.columns, dtype=np.int64), np.asarray(self.outside_columns, dtype=np.int64)]
        )

    def apply(self, scores: np.ndarray) -> np.ndarray:
        """Reorder the columns of ``scores`` (``batch × n_outputs``): dataset classes first, then the outside ones."""
        if not len(self.outside_columns):
            return scores[:, self.columns]
        return scores[:, self.order]


def align_labels(model_labels: Sequence[str] | None, dataset_labels: Sequence[str], *, model: str) -> LabelAlignment:
    """Work out the column permutation from a model's label names to the dataset's.

    Parameters
    ----------
    model_labels : sequence of str or None
        The model's output names in output order (``id2label``), or ``None`` when unknown.
    dataset_labels : sequence of str
        The dataset's classes, in label order.
    model : str
        The model's name, for messages.

    Returns
    -------
    LabelAlignment

    Raises
    ------
    ModelError
        The model cannot predict some of the dataset's classes, or its names match nothing
        (both sets are named, long lists cut with a count).

    Examples
    --------
    >>> align_labels(["pos", "neg"], ["neg", "pos"], model="m").columns
    array([1, 0])
    >>> subset = align_labels(["a", "b", "c"], ["c", "a"], model="m")
    >>> subset.how, subset.columns.tolist(), subset.outside, subset.outside_columns.tolist()
    ('subset', [2, 0], ('b',), [1])
    """
    data = [str(n) for n in dataset_labels]
    k = len(data)
    if model_labels is None:
        return LabelAlignment(
            np.arange(k),
            "unnamed",
            f"model '{model}' does not name its outputs; assuming they follow the dataset's "
            f"label order ({listing(data, quote=True)})",
        )
    names = [str(n) for n in model_labels]
    if names == data:
        return LabelAlignment(np.arange(k), "identical")
    for normalise in (_same, _folded):
        found = _by_name(names, [normalise(n) for n in names], [normalise(n) for n in data])
        if found is not None:
            return found
    generic = _generic(names, data, model)
    if generic is not None:
        return generic
    missing = [n for n in data if n.strip().lower() not in {m.strip().lower() for m in names}]
    if len(missing) < k:
        raise ModelError(
            f"model '{model}' cannot predict the dataset's class(es) {listing(missing, quote=True)}: its "
            f"{len(names)} outputs are {listing(names, quote=True)}; evaluate it on data of its classes, "
            f"or set its label_names (in output order) if the names differ"
        )
    raise ModelError(
        f"model '{model}' labels {listing(names, quote=True)} do not match the dataset labels "
        f"{listing(data, quote=True)}; "
        + (
            numbered_classes_hint(data, names)
            or "set the model's label_names (in output order) or data.label_names to reconcile them"
        )
    )


def numbered_classes_hint(data_labels: Sequence[str], names: Sequence[str]) -> str:
    """The fix when the data's classes are numbers ``0..K-1`` and a model names as many classes in words.

    Empty when that is not the case.

    Examples
    --------
    >>> numbered_classes_hint(["0", "1"], ["negative", "positive"])
    "the data's labels are numbers: name them, label i as data.label_names[i] (--set 'data.label_names=[negative,positive]' if 0 is negative, 1 is positive)"
    """
    if not data_labels or len(set(names)) != len(data_labels) or any(_INTEGER.match(str(n)) for n in names):
        return ""
    if [str(d) for d in data_labels] != [str(i) for i in range(len(data_labels))]:
        return ""
    pairs = ", ".join(f"{d} is {n}" for d, n in zip(data_labels, names, strict=True))
    return (
        f"the data's labels are numbers: name them, label i as data.label_names[i] "
        f"(--set 'data.label_names=[{','.join(names)}]' if {pairs})"
    )


def _same(name: str) -> str:
    return name


def _folded(name: str) -> str:
    return name.strip().lower()


def _by_name(names: list[str], model_norm: list[str], data_norm: list[str]) -> LabelAlignment | None:
    """Every dataset class found among the model's (unique) names: ``remapped`` or ``subset``."""
    if len(set(model_norm)) != len(model_norm) or not set(data_norm) <= set(model_norm):
        return None
    position = {n: i for i, n in enumerate(model_norm)}
    columns = np.array([position[n] for n in data_norm], dtype=np.int64)
    if len(model_norm) == len(data_norm):
        return LabelAlignment(columns, "remapped")
    wanted = set(data_norm)
    outside = [i for i, n in enumerate(model_norm) if n not in wanted]
    return LabelAlignment(
        columns, "subset", outside=tuple(names[i] for i in outside), outside_columns=np.array(outside, dtype=np.int64)
    )


def _generic(names: list[str], data: list[str], model: str) -> LabelAlignment | None:
    """Outputs called ``LABEL_0`` … (or ``0`` …): by position, or by number when the data has fewer classes."""
    numbers = [_GENERIC.match(n) for n in names]
    if not all(numbers):
        return None
    k = len(data)
    if len(names) == k:
        return LabelAlignment(
            np.arange(k),
            "generic",
            f"model '{model}' calls its outputs {listing(names)}; assuming output i is dataset "
            f"class i ({listing(data, quote=True)}). Set label_names on the model if that is wrong",
        )
    # More outputs than classes: only integer class names can say which output is which.
    index: Callable[[str], int] = lambda n: int(_GENERIC.match(n).group(2))  # type: ignore[union-attr]
    by_number = {index(n): i for i, n in enumerate(names)}
    if len(by_number) != len(names) or not all(_INTEGER.match(d) and int(d) in by_number for d in data):
        return None
    columns = np.array([by_number[int(d)] for d in data], dtype=np.int64)
    taken = set(columns.tolist())
    outside = [i for i in range(len(names)) if i not in taken]
    return LabelAlignment(
        columns,
        "generic",
        f"model '{model}' calls its outputs {listing(names)}; assuming output LABEL_n is the "
        f"dataset's class n ({listing(data, quote=True)}). Set label_names on the model if that "
        f"is wrong",
        outside=tuple(names[i] for i in outside),
        outside_columns=np.array(outside, dtype=np.int64),
    )
