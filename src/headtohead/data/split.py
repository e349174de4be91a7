"""A seeded, stratified train/eval split of one dataset (``data.split`` in the experiment)."""

from __future__ import annotations

import numpy as np

from headtohead.data.base import Dataset
from headtohead.errors import DataError, listing

__all__ = ["stratified_split"]


def stratified_split(dataset: Dataset, eval_fraction: float, *, seed: int) -> tuple[Dataset, Dataset]:
    """Hold out ``eval_fraction`` of ``dataset``, keeping the class proportions in both parts.

    Uses :func:`sklearn.model_selection.train_test_split` with ``stratify`` and
    ``random_state=seed``: the same seed and data give the same split. Within each part
    the examples keep their original relative order.

    Parameters
    ----------
    dataset : Dataset
        The data to split.
    eval_fraction : float
        Share held out for evaluation, in ``(0, 1)``.
    seed : int
        Random state of the split.

    Returns
    -------
    train, eval : Dataset
        Both with the full ``label_names`` (in the same order) and the skip counts of ``dataset``.

    Raises
    ------
    DataError
        ``eval_fraction`` outside ``(0, 1)``, a class with fewer than two examples, or parts
        too small to hold every class.

    Examples
    --------
    >>> import numpy as np
    >>> ds = Dataset("toy", "text", [f"t{i}" for i in range(10)], np.array([0, 1] * 5), ("a", "b"))
    >>> train, evaluation = stratified_split(ds, 0.4, seed=0)
    >>> len(train), len(evaluation), evaluation.class_counts().tolist()
    (6, 4, [2, 2])
    """
    from sklearn.model_selection import train_test_split

    if not 0.0 < eval_fraction < 1.0:
        raise DataError(f"{dataset.source}: data.split.eval_fraction must be between 0 and 1 (got {eval_fraction})")
    counts = dataset.class_counts()
    too_few = [f"{name} ({count})" for name, count in zip(dataset.label_names, counts, strict=True) if 0 < count < 2]
    if too_few:
        raise DataError(
            f"{dataset.source}: cannot split stratified: class(es) {listing(too_few)} have fewer than "
            f"2 examples; add examples, or give a separate data.train file instead of data.split"
        )
    try:
        train_idx, eval_idx = train_test_split(
            np.arange(len(dataset)), test_size=eval_fraction, stratify=dataset.labels, random_state=seed, shuffle=True
        )
    except ValueError as error:  # e.g. fewer eval examples than classes
        raise DataError(
            f"{dataset.source}: cannot hold out {eval_fraction:g} of {len(dataset)} examples stratified "
            f"over {int((counts > 0).sum())} classes ({error}); change data.split.eval_fraction or "
            f"add examples"
        ) from error
    return dataset.take(np.sort(train_idx)), dataset.take(np.sort(eval_idx))
