"""Match a model's output labels to the dataset's label order.

A model trained elsewhere may order its classes differently (``{0: "positive", 1:
"negative"}``) or call them generically (``LABEL_0``). The engine compares predictions
against the dataset's labels, so every model's probability columns are permuted into
the dataset's order here — or the run stops with both label sets in the message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from headtohead.errors import ModelError

__all__ = ["LabelAlignment", "align_labels"]

_GENERIC = re.compile(r"^(label_?\d+|\d+)$", re.IGNORECASE)


@dataclass(frozen=True)
class LabelAlignment:
    """How to read a model's outputs in dataset order.

    Attributes
    ----------
    columns : ndarray of int
        ``columns[j]`` is the model output column holding dataset class ``j``.
    how : {"identical", "remapped", "generic", "unnamed"}
        Which rule matched.
    warning : str or None
        Set for the rules a user should double-check.
    """

    columns: np.ndarray
    how: str
    warning: str | None = None

    def apply(self, scores: np.ndarray) -> np.ndarray:
        """Reorder the columns of ``scores`` (``batch × n_outputs``) into dataset order."""
        return scores[:, self.columns]


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
        The counts differ, or the names are different sets (both sets are listed).

    Examples
    --------
    >>> align_labels(["pos", "neg"], ["neg", "pos"], model="m").columns
    array([1, 0])
    """
    data = [str(n) for n in dataset_labels]
    k = len(data)
    if model_labels is None:
        return LabelAlignment(np.arange(k), "unnamed",
                              f"model '{model}' does not name its outputs; assuming they follow the dataset's "
                              f"label order {data}")
    names = [str(n) for n in model_labels]
    if len(names) != k:
        raise ModelError(f"model '{model}' has {len(names)} outputs {names} but the dataset has {k} classes {data}; "
                         f"use a model trained for these classes (or set label_names)")
    if names == data:
        return LabelAlignment(np.arange(k), "identical")
    for normalise in (lambda s: s, lambda s: s.strip().lower()):
        model_norm = [normalise(n) for n in names]
        data_norm = [normalise(n) for n in data]
        if sorted(model_norm) == sorted(data_norm) and len(set(model_norm)) == k:
            position = {n: i for i, n in enumerate(model_norm)}
            return LabelAlignment(np.array([position[n] for n in data_norm]), "remapped")
    if all(_GENERIC.match(n) for n in names):
        return LabelAlignment(np.arange(k), "generic",
                              f"model '{model}' calls its outputs {names}; assuming output i is dataset class i "
                              f"({data}). Set label_names on the model if that is wrong")
    raise ModelError(f"model '{model}' labels {names} do not match the dataset labels {data}; "
                     f"set the model's label_names (in output order) or data.label_names to reconcile them")
