"""The example order and batch boundaries every model sees, and their hash.

Fairness starts here: one :class:`BatchPlan` is made per run and handed to every model,
so all models see the same examples, in the same order, cut into the same batches. Its
:meth:`BatchPlan.hash` is stored with each model's results so anyone can check.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["BatchPlan", "plan_batches"]


@dataclass(frozen=True)
class BatchPlan:
    """Example indices in evaluation order, cut into batches of ``batch_size``.

    Attributes
    ----------
    order : ndarray of int64
        Dataset index of each example, in the order models see them.
    batch_size : int
        The last batch may be smaller.
    """

    order: np.ndarray
    batch_size: int

    def __len__(self) -> int:
        return (len(self.order) + self.batch_size - 1) // self.batch_size

    def __iter__(self) -> Iterator[np.ndarray]:
        for start in range(0, len(self.order), self.batch_size):
            yield self.order[start:start + self.batch_size]

    def hash(self) -> str:
        """SHA-256 over the order and the batch size: equal hashes mean identical batches."""
        digest = hashlib.sha256()
        digest.update(np.asarray(self.order, dtype="<i8").tobytes())
        digest.update(str(self.batch_size).encode())
        return digest.hexdigest()


def plan_batches(n_examples: int, batch_size: int, *, shuffle: bool = False, seed: int = 0) -> BatchPlan:
    """Make the batch plan for ``n_examples``.

    Parameters
    ----------
    n_examples : int
    batch_size : int
    shuffle : bool
        Evaluation keeps the dataset order (``False``); training passes ``True`` to get a
        seeded permutation, the same for every model.
    seed : int
        Seed of the permutation when ``shuffle``.

    Returns
    -------
    BatchPlan

    Examples
    --------
    >>> [b.tolist() for b in plan_batches(5, 2)]
    [[0, 1], [2, 3], [4]]
    """
    if batch_size <= 0:
        raise ValueError("batch_size must be positive")
    order = np.arange(n_examples, dtype=np.int64)
    if shuffle:
        order = np.random.default_rng(seed).permutation(order)
    return BatchPlan(order, batch_size)
