"""Out of device memory in the quality pass: the same batch again, in halves, in order.

See ``docs/architecture.md``, "Fairness invariants".
"""

from __future__ import annotations

import gc
from collections.abc import Mapping
from typing import Any

from headtohead.adapters.base import ModelAdapter
from headtohead.errors import ModelError
from headtohead.results.records import BatchBackoff
from headtohead.runtime.devices import get_backend
from headtohead.runtime.faults import is_out_of_memory

__all__ = ["BatchRunner", "split_inputs", "is_device_out_of_memory"]


class _Unsplittable(Exception):
    """The inputs have a structure whose batch axis is unknown."""


def is_device_out_of_memory(exc: BaseException) -> bool:
    """An accelerator's allocator ran out (CUDA, MPS, XPU), not the host."""
    return is_out_of_memory(exc) and not isinstance(exc, MemoryError)


def split_inputs(inputs: Any, n: int, at: int) -> tuple[Any, Any]:
    """Cut a batch of ``n`` examples into its first ``at`` examples and the rest.

    Tensors and arrays are cut along their first axis; dicts (a tokenizer's output) key by
    key (values without a batch axis go to both halves); a list or tuple of ``n`` examples is
    sliced, one of batched parts part by part.

    Raises
    ------
    _Unsplittable
        No part of ``inputs`` has a batch axis of length ``n``.

    Examples
    --------
    >>> import numpy as np
    >>> first, rest = split_inputs({"ids": np.arange(6).reshape(3, 2), "flag": True}, 3, 2)
    >>> first["ids"].tolist(), rest["ids"].tolist(), rest["flag"]
    ([[0, 1], [2, 3]], [[4, 5]], True)
    """
    if _batched(inputs, n):
        return inputs[:at], inputs[at:]
    if isinstance(inputs, Mapping):
        if not any(_batched(v, n) or isinstance(v, (Mapping, list, tuple)) for v in inputs.values()):
            raise _Unsplittable
        parts = {
            key: split_inputs(value, n, at) if _splittable(value, n) else (value, value)
            for key, value in inputs.items()
        }
        return {k: p[0] for k, p in parts.items()}, {k: p[1] for k, p in parts.items()}
    if isinstance(inputs, (list, tuple)):
        if inputs and all(_splittable(v, n) for v in inputs) and any(_batched(v, n) for v in inputs):
            halves = [split_inputs(v, n, at) for v in inputs]
            return type(inputs)(p[0] for p in halves), type(inputs)(p[1] for p in halves)
        if len(inputs) == n:
            return inputs[:at], inputs[at:]
    raise _Unsplittable


def _batched(value: Any, n: int) -> bool:
    shape = getattr(value, "shape", None)
    return shape is not None and len(shape) > 0 and int(shape[0]) == n


def _splittable(value: Any, n: int) -> bool:
    if _batched(value, n):
        return True
    if isinstance(value, (list, tuple)):
        return len(value) == n or (bool(value) and all(_batched(v, n) for v in value))
    if isinstance(value, Mapping):
        return any(_splittable(v, n) for v in value.values())
    return False


class BatchRunner:
    """Runs a model's forward pass on the plan's batches, backing off in halves when the device runs out.

    Parameters
    ----------
    adapter : ModelAdapter
        The model; its :attr:`~ModelAdapter.device` is the one whose memory ran out.

    Attributes
    ----------
    events : list of BatchBackoff
        One per reduction of the largest piece (empty while every batch runs whole).
    limit : int or None
        The largest piece run since the last back-off (``None``: no back-off yet).
    """

    def __init__(self, adapter: ModelAdapter) -> None:
        self.adapter = adapter
        self.events: list[BatchBackoff] = []
        self.limit: int | None = None

    def __call__(self, inputs: Any, n: int, batch: int) -> list[Any]:
        """The scores of plan batch number ``batch`` (``n`` examples), as one or more consecutive pieces.

        Raises
        ------
        ModelError
            A single example does not fit in the device's memory.
        Exception
            Whatever the model raised, when it is not a device out-of-memory error, or when
            the inputs cannot be cut.
        """
        if self.limit is not None and n > self.limit:
            try:
                first, rest = split_inputs(inputs, n, (n + 1) // 2)
            except _Unsplittable:
                pass  # cannot be cut: try it whole, as before the back-off
            else:
                return self(first, (n + 1) // 2, batch) + self(rest, n // 2, batch)
        try:
            return [self.adapter.forward(inputs)]
        except Exception as exc:
            if not is_device_out_of_memory(exc):
                raise
            if n <= 1:
                raise ModelError(
                    f"model '{self.adapter.name}' ran out of memory on {self.adapter.device} even for "
                    f"one example at a time (batch {batch + 1} of the plan; {type(exc).__name__}); "
                    f"free the device, use one with more memory, or evaluate on cpu"
                ) from exc
            try:
                first, rest = split_inputs(inputs, n, (n + 1) // 2)
            except _Unsplittable:
                raise exc from None
            error = type(exc).__name__
        # Outside the except block: the failed call's frames (and their tensors) are released now.
        self._release()
        self.limit = (n + 1) // 2
        self.events.append(BatchBackoff(batch=batch, batch_size=n, sub_batch_size=self.limit, error=error))
        return self(first, (n + 1) // 2, batch) + self(rest, n // 2, batch)

    def _release(self) -> None:
        """Collect the failed try's garbage and hand the allocator's cached blocks back before a smaller try."""
        gc.collect()
        device = str(self.adapter.device)
        if device.split(":", 1)[0] in ("cuda", "mps", "xpu"):
            get_backend().empty_cache(device)
