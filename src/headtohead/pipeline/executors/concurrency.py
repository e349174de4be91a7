"""A model's bound on its requests in flight over its shards: the bound holds for the model, not for each shard.

Each family says what its bound is (``ModelConfig.request_bound``: an endpoint's key, with its
default) and where a shard's share of it is kept (``ModelConfig.with_request_share``), so nothing
here names a family's key.

See ``docs/llm.md``, "Concurrency, faults and the cache".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from headtohead.config.schema import ModelConfig

__all__ = ["request_bound", "shard_count", "shard_bounds", "shard_config"]


def request_bound(model: ModelConfig) -> int | None:
    """The model's bound on its requests in flight (its family's key, with its default); ``None``: it sends none."""
    return model.request_bound


def shard_count(shards: int, bound: int | None, *, side_by_side: bool) -> int:
    """How many shards a model is cut into: at most its bound when they run side by side.

    Examples
    --------
    >>> shard_count(3, 2, side_by_side=True), shard_count(3, 2, side_by_side=False), shard_count(3, None, side_by_side=True)
    (2, 3, 3)
    """
    return min(shards, bound) if bound is not None and side_by_side else shards


def shard_bounds(bound: int | None, shards: int, *, side_by_side: bool) -> list[int | None]:
    """Each shard's bound on its requests in flight, in shard order.

    Parameters
    ----------
    bound : int or None
        The model's request bound (:func:`request_bound`; ``None``: it sends no requests).
    shards : int
        The model's shards (at most ``bound`` when ``side_by_side``; see :func:`shard_count`).
    side_by_side : bool
        Whether the shards may run at the same time.

    Returns
    -------
    list of int or None
        ``None`` for each shard of a model without a bound; ``bound`` for each shard run one
        after another; else shares of ``bound``, each ``q`` or ``q + 1``, summing to it.

    Examples
    --------
    >>> shard_bounds(8, 3, side_by_side=True)
    [3, 3, 2]
    >>> shard_bounds(8, 3, side_by_side=False)
    [8, 8, 8]
    """
    if bound is None:
        return [None] * shards
    if not side_by_side:
        return [bound] * shards
    if not 1 <= shards <= bound:
        raise ValueError(f"cannot share {bound} requests in flight among {shards} shards (each needs one)")
    q, extra = divmod(bound, shards)
    return [q + (i < extra) for i in range(shards)]


def shard_config(model: ModelConfig, bound: int | None) -> ModelConfig:
    """``model`` as one shard loads it: with the shard's share of its request bound (unchanged without one)."""
    return model if bound is None else model.with_request_share(bound)
