"""The example order and batch boundaries every model sees, and their hash.

Fairness starts here: one :class:`BatchPlan` is made per run and handed to every model,
so all models see the same examples, in the same order, cut into the same batches. Its
:meth:`BatchPlan.hash` is stored with each model's results so anyone can check.

Evaluation plans group examples of similar length (:func:`plan_batches` with ``lengths``):
a batch is padded to its longest member, so a batch of equals wastes no compute on
padding. The lengths are one array for the whole run, so the plan stays one plan.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["BatchPlan", "plan_batches", "padded_positions"]


@dataclass(frozen=True)
class BatchPlan:
    """Example indices in evaluation order, cut into batches of ``batch_size``.

    Every batch is full except possibly the last, so batch ``i`` is always
    ``order[i * batch_size:(i + 1) * batch_size]`` (sharding relies on it).

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
            yield self.order[start : start + self.batch_size]

    def in_order(self, values: np.ndarray | None) -> np.ndarray | None:
        """Per-example ``values`` of the dataset (e.g. its groups) in evaluation order; ``None`` stays ``None``."""
        return None if values is None else np.asarray(values)[self.order]

    def hash(self) -> str:
        """SHA-256 over the order and the batch size: equal hashes mean identical batches."""
        digest = hashlib.sha256()
        digest.update(np.asarray(self.order, dtype="<i8").tobytes())
        digest.update(str(self.batch_size).encode())
        return digest.hexdigest()


def plan_batches(
    n_examples: int, batch_size: int, *, shuffle: bool = False, seed: int = 0, lengths: np.ndarray | None = None
) -> BatchPlan:
    """Make the batch plan for ``n_examples``.

    Parameters
    ----------
    n_examples : int
    batch_size : int
    shuffle : bool
        Without ``lengths``: keep the dataset order (``False``) or take a seeded
        permutation, the same for every model (training passes ``True``).
    seed : int
        Seed of the permutation (of examples with ``shuffle``, of whole batches with ``lengths``).
    lengths : array-like of shape (n_examples,), optional
        One length per example (characters, tokens …). Examples are sorted by length
        (longest first; ties keep dataset order) and cut into batches, so each batch
        holds examples of similar length and little padding. The longest batch runs
        first (a batch too large for memory fails at once, not at the end), the other
        full batches follow in a seeded random order (progress estimates stay honest),
        and the one short batch, if any, runs last.

    Returns
    -------
    BatchPlan

    Examples
    --------
    >>> [b.tolist() for b in plan_batches(5, 2)]
    [[0, 1], [2, 3], [4]]
    >>> [b.tolist() for b in plan_batches(5, 2, lengths=[3, 9, 1, 8, 2])]
    [[1, 3], [0, 4], [2]]
    """
    if batch_size <= 0:
        raise ValueError("batch_size must be positive")
    if lengths is not None:
        return _length_plan(np.asarray(lengths), batch_size, seed)
    order = np.arange(n_examples, dtype=np.int64)
    if shuffle:
        order = np.random.default_rng(seed).permutation(order)
    return BatchPlan(order, batch_size)


def _length_plan(lengths: np.ndarray, batch_size: int, seed: int) -> BatchPlan:
    if lengths.ndim != 1:
        raise ValueError("lengths must be one number per example")
    order = np.argsort(-lengths.astype(np.float64), kind="stable")
    n_full = len(order) // batch_size
    if n_full <= 2:
        return BatchPlan(order, batch_size)
    full = order[: n_full * batch_size].reshape(n_full, batch_size)
    rest = np.random.default_rng(seed).permutation(np.arange(1, n_full))
    shuffled = np.concatenate([full[0], full[rest].ravel(), order[n_full * batch_size :]])
    return BatchPlan(shuffled, batch_size)


def padded_positions(plan: BatchPlan, lengths: np.ndarray) -> int:
    """Positions a model computes when every batch is padded to its longest member.

    Parameters
    ----------
    plan : BatchPlan
    lengths : ndarray of shape (n_examples,)
        Each example's length in the model's units (tokens after truncation).

    Returns
    -------
    int
        ``sum over batches of len(batch) * max(lengths[batch])``; compare with
        ``lengths.sum()`` (the real positions) to see the padding a plan costs.

    Examples
    --------
    >>> int(padded_positions(plan_batches(4, 2), np.array([1, 5, 5, 1])))
    20
    >>> int(padded_positions(plan_batches(4, 2, lengths=[1, 5, 5, 1]), np.array([1, 5, 5, 1])))
    12
    """
    lengths = np.asarray(lengths)
    return int(sum(len(batch) * int(lengths[batch].max()) for batch in plan if len(batch)))
