"""Preprocessing ahead of the forward pass, in plan order.

While the model computes batch ``i``, batches ``i + 1 …`` are being prepared: tokenised
in a background thread (fast tokenizers release the GIL), or — for families that give a
picklable :meth:`~headtohead.adapters.base.ModelAdapter.preprocess_function`, i.e. image
decoding and resizing — in ``torch.utils.data.DataLoader`` worker processes fed the very
same plan batches. Either way the batches come out in plan order, each exactly once, so
overlapping changes when preprocessing happens, never what the model sees.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any

import numpy as np

from headtohead.adapters.base import ModelAdapter
from headtohead.data.base import Dataset
from headtohead.engines.batching import BatchPlan
from headtohead.runtime.devices import is_cuda

__all__ = ["Prefetcher", "batch_examples", "available_cores", "spare_cores", "map_tensors"]

_END = object()


def batch_examples(
    dataset_or_examples: Dataset | Sequence[Any] | np.ndarray, indices: np.ndarray | Sequence[int]
) -> Any:
    """The raw examples at ``indices`` (a slice of the array, or a list)."""
    examples: Any = getattr(dataset_or_examples, "examples", dataset_or_examples)
    if isinstance(examples, np.ndarray):
        return examples[indices]
    return [examples[i] for i in indices]


def map_tensors(inputs: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every torch tensor in ``inputs`` (alone, or in dicts, lists, tuples)."""
    if hasattr(inputs, "pin_memory") and hasattr(inputs, "device"):
        return fn(inputs)
    if isinstance(inputs, dict):
        return {k: map_tensors(v, fn) for k, v in inputs.items()}
    if isinstance(inputs, (list, tuple)) and any(hasattr(v, "pin_memory") for v in inputs):
        return type(inputs)(map_tensors(v, fn) for v in inputs)
    return inputs


def available_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def spare_cores(adapter: ModelAdapter) -> int:
    """Cores the forward pass leaves idle, for preprocessing ahead of it.

    On a GPU the forward pass only launches kernels: all cores but one are spare. On the
    CPU, torch (and ONNX Runtime, which headtohead gives torch's setting) keeps
    ``torch.get_num_threads()`` cores busy; a preprocessing thread beside them would only
    preempt them (and an OpenMP barrier waits for the slowest thread), so overlapping pays
    only where a core is left.
    """
    cores = available_cores()
    if is_cuda(str(adapter.device)):
        return cores - 1
    torch = sys.modules.get("torch")
    busy = torch.get_num_threads() if torch is not None else 1
    return cores - busy


class Prefetcher:
    """Iterate ``(indices, inputs)`` over a plan, preprocessing ahead of the consumer.

    Parameters
    ----------
    adapter : ModelAdapter
    dataset : Dataset
    plan : BatchPlan
    depth : int, optional
        Batches prepared ahead by a background thread (memory holds at most ``depth + 1``
        preprocessed batches); ``0`` preprocesses each batch when it is asked for, in the
        caller's thread. ``None``: 2 when :func:`spare_cores` leaves a core for it, else 0.
    workers : int, optional
        Worker processes for families with a :meth:`~ModelAdapter.preprocess_function`
        (image decoding); ``None``: the spare cores, at most 8; ``0``: none.
    pin : callable, optional
        Applied to every tensor of a batch once it is ready (page-locking for CUDA copies).

    Use it as a context manager, so the thread and workers stop even when the consumer fails::

        with Prefetcher(adapter, dataset, plan) as batches:
            for indices, inputs in batches:
                ...
    """

    def __init__(
        self,
        adapter: ModelAdapter,
        dataset: Dataset,
        plan: BatchPlan,
        *,
        depth: int | None = None,
        workers: int | None = None,
        pin: Callable[[Any], Any] | None = None,
    ) -> None:
        self.adapter, self.dataset, self.plan, self.pin = adapter, dataset, plan, pin
        spare = spare_cores(adapter)
        function = adapter.preprocess_function()
        if workers is None:
            workers = max(0, min(8, spare, len(plan) - 1))
        self.workers = workers if function is not None else 0
        self.depth = depth if depth is not None else (2 if spare >= 1 else 0)
        self._function = function
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, self.depth))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._source: Iterator[tuple[np.ndarray, Any]] | None = None

    def __enter__(self) -> Prefetcher:
        self._source = self._batches()  # worker processes start here, in the caller's thread
        if self.depth > 0:
            self._thread = threading.Thread(target=self._produce, name="h2h-preprocess", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            while self._thread.is_alive():  # unblock a producer waiting on a full queue
                try:
                    self._queue.get(timeout=0.05)
                except queue.Empty:
                    pass
            self._thread.join()
        close = getattr(self._source, "close", None)
        if close is not None:
            close()

    def __iter__(self) -> Iterator[tuple[np.ndarray, Any]]:
        if self._source is None:
            raise RuntimeError("use the Prefetcher in a with block")
        if self._thread is None:
            yield from self._source
            return
        while True:
            item = self._queue.get()
            if item is _END:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item

    # -- the producer -------------------------------------------------------------------
    def _batches(self) -> Iterator[tuple[np.ndarray, Any]]:
        """Start the source now (worker processes fork here) and pair it with the plan's indices."""
        batches = list(self.plan)
        ready: Iterator[Any]
        if self.workers > 0:
            ready = _worker_batches(self._function, self.dataset.examples, batches, self.workers)
        else:
            ready = (self.adapter.preprocess(batch_examples(self.dataset, idx)) for idx in batches)
        return self._paired(batches, ready)

    def _paired(self, batches: list[np.ndarray], ready: Iterator[Any]) -> Iterator[tuple[np.ndarray, Any]]:
        for indices, inputs in zip(batches, ready, strict=True):
            if isinstance(inputs, _Failure):
                raise inputs.error
            yield indices, (map_tensors(inputs, self.pin) if self.pin is not None else inputs)

    def _produce(self) -> None:
        assert self._source is not None
        try:
            for item in self._source:
                if not self._put(item):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            self._put(_Failure(exc))
            return
        self._put(_END)

    def _put(self, item: Any) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False


class _Failure:
    """An exception raised while preprocessing, carried to the consumer (picklable)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class _PlanBatches:
    """Map-style dataset for DataLoader workers: item ``i`` is plan batch ``i``, preprocessed."""

    def __init__(
        self, function: Callable[[Sequence[Any]], Any], examples: Sequence[Any] | np.ndarray, batches: list[np.ndarray]
    ) -> None:
        self.function, self.examples, self.batches = function, examples, batches

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, i: int) -> Any:
        try:
            return self.function(batch_examples(self.examples, self.batches[i]))
        except Exception as exc:  # noqa: BLE001 - re-raised as itself in the main process
            return _Failure(exc)


def _as_is(item: Any) -> Any:
    return item


def _worker_batches(
    function: Any, examples: Sequence[Any] | np.ndarray, batches: list[np.ndarray], workers: int
) -> Iterator[Any]:
    from torch.utils.data import DataLoader

    loader = DataLoader(
        _PlanBatches(function, examples, batches),
        batch_size=None,
        shuffle=False,
        num_workers=workers,
        collate_fn=_as_is,
        prefetch_factor=2,
    )
    return iter(loader)  # in order: DataLoader returns items in index order whatever worker made them
