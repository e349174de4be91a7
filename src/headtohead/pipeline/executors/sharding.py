"""Sharded evaluation: one model's evaluation set cut into parts, evaluated apart, merged back.

Shards are cut on **batch boundaries** of the run's one :class:`~headtohead.engines.batching.BatchPlan`,
so every batch — and with dynamic padding every padded shape — is exactly the batch a
single pass would have made; the merged predictions are then identical to an unsharded
run's. The merge checks that the shards cover the plan in order, and that the order they
were evaluated in hashes to the plan's index-order hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from headtohead.engines.batching import BatchPlan

__all__ = ["Shard", "plan_shards", "shard_plan", "merge_shards", "ShardMismatch"]


class ShardMismatch(RuntimeError):
    """Shards do not reassemble the batch plan (a bug or corrupted transport, never user input)."""


@dataclass(frozen=True)
class Shard:
    """Positions ``start:stop`` of the batch plan's order, one part of ``count``.

    Attributes
    ----------
    index : int
        0-based position of this part.
    count : int
        Number of parts the plan was cut into.
    start, stop : int
        Slice of ``plan.order`` (``start`` is a multiple of the batch size).
    """

    index: int
    count: int
    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start


def plan_shards(n_examples: int, batch_size: int, shards: int) -> list[Shard]:
    """Cut ``n_examples`` in plan order into at most ``shards`` parts of whole batches.

    The batches are spread as evenly as possible (earlier parts get the extra batch); a
    plan with fewer batches than ``shards`` gives one part per batch.

    Parameters
    ----------
    n_examples : int
        Length of the plan's order.
    batch_size : int
        The plan's batch size.
    shards : int
        Parts wanted (1: the whole plan).

    Returns
    -------
    list of Shard
        Contiguous, in order, covering ``0:n_examples``.

    Examples
    --------
    >>> [(s.start, s.stop) for s in plan_shards(10, 3, 2)]
    [(0, 6), (6, 10)]
    """
    if shards < 1 or batch_size < 1:
        raise ValueError("shards and batch_size must be positive")
    n_batches = (n_examples + batch_size - 1) // batch_size
    count = max(1, min(shards, n_batches))
    per_part = np.array_split(np.arange(n_batches), count) if n_batches else [np.arange(0)]
    parts: list[Shard] = []
    for index, batches in enumerate(per_part):
        start = int(batches[0]) * batch_size if len(batches) else 0
        stop = min(n_examples, (int(batches[-1]) + 1) * batch_size) if len(batches) else 0
        parts.append(Shard(index=index, count=count, start=start, stop=stop))
    return parts


def shard_plan(plan: BatchPlan, shard: Shard) -> BatchPlan:
    """The sub-plan of ``shard``: the same batches as ``plan`` from ``shard.start`` on.

    Examples
    --------
    >>> from headtohead.engines.batching import plan_batches
    >>> sub = shard_plan(plan_batches(10, 3), Shard(1, 2, 6, 10))
    >>> [b.tolist() for b in sub]
    [[6, 7, 8], [9]]
    """
    if shard.start % plan.batch_size:
        raise ValueError(f"shard start {shard.start} is not on a batch boundary of batch size {plan.batch_size}")
    return BatchPlan(np.asarray(plan.order[shard.start : shard.stop], dtype=np.int64), plan.batch_size)


def merge_shards(
    plan: BatchPlan,
    parts: Sequence[tuple[Shard, np.ndarray, np.ndarray, np.ndarray | None]],
) -> tuple[np.ndarray, np.ndarray | None]:
    """Reassemble one model's predictions from its shards, in the plan's order.

    Parameters
    ----------
    plan : BatchPlan
        The run's plan the shards were cut from.
    parts : sequence of (Shard, order, pred, proba)
        Every shard with the indices the worker evaluated (in its order) and its
        predictions; any order of parts.

    Returns
    -------
    pred : ndarray (n,), int64
    proba : ndarray (n, n_classes), float32, or None
        ``None`` when the model stored no probabilities (``kind: predictions``).

    Raises
    ------
    ShardMismatch
        A part is missing or repeated, a worker evaluated other indices than its shard's,
        or the merged order does not hash to ``plan.hash()``.
    """
    ordered = sorted(parts, key=lambda part: part[0].start)
    position = 0
    for shard, order, pred, proba in ordered:
        if shard.start != position:
            raise ShardMismatch(
                f"shards leave a gap or overlap at position {position} (next shard starts at {shard.start})"
            )
        if len(order) != len(shard) or len(pred) != len(shard) or (proba is not None and len(proba) != len(shard)):
            raise ShardMismatch(
                f"shard {shard.index} covers {len(shard)} examples but returned {len(order)} "
                f"indices, {len(pred)} predictions"
            )
        position = shard.stop
    if position != len(plan.order):
        raise ShardMismatch(f"shards cover {position} of {len(plan.order)} examples")
    order = np.concatenate([np.asarray(p[1], dtype=np.int64) for p in ordered]) if ordered else plan.order
    if BatchPlan(order, plan.batch_size).hash() != plan.hash():
        raise ShardMismatch("the merged example order does not match the run's index-order hash")
    pred = np.concatenate([np.asarray(p[2], dtype=np.int64) for p in ordered])
    widths = {np.asarray(p[3]).shape[1] for p in ordered if p[3] is not None}
    if not widths:
        return pred, None
    # an LLM's shard may have kept no answer's probabilities: its rows have a label and no probabilities (NaN)
    width = widths.pop()
    rows = [np.full((len(p[2]), width), np.nan, np.float32) if p[3] is None else p[3] for p in ordered]
    return pred, np.concatenate([np.asarray(r, dtype=np.float32) for r in rows])
