"""Speed and memory of a parent and its variants at one batch size, with failures kept as results.

See ``docs/sweeps.md``, "What a sweep does".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import cast

from headtohead.adapters.base import ModelAdapter
from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.engines.evaluate import batch_examples
from headtohead.engines.speed import SpeedProgress, measure_speed
from headtohead.engines.speed_inputs import draw_batches
from headtohead.results.speed import ModelSpeed, SpeedComparison, SpeedSummary
from headtohead.results.sweep import SpeedPoint
from headtohead.runtime.devices import get_backend, is_cuda
from headtohead.sweeps.capabilities import is_out_of_memory, release_memory

__all__ = ["measure_batch_size", "largest_fitting_batch", "describe_failure", "sweep_speed_config", "same_examples"]

_MIB = 2**20


def describe_failure(exc: BaseException) -> str:
    """One line for a failed cell: ``out of memory (…)`` or ``TypeName: first line of the message``."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    first = lines[0][:240] if lines else ""
    if is_out_of_memory(exc):
        return f"out of memory ({first})" if first else "out of memory"
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def sweep_speed_config(speed: SpeedConfig) -> SpeedConfig:
    """The ``speed:`` section as the sweep uses it: the offline scenario at each swept batch size.

    ``single_stream`` is the batch-1 point of the curve (sweep batch size 1 for it), the time
    window is not a per-batch-size figure, and ``fixed_shape`` would override the swept batch
    sizes and lengths.
    """
    return speed.model_copy(update={"scenarios": ["offline"], "fixed_shape": None})


def same_examples(speed: SpeedConfig, batch_size: int, batch_sizes: Sequence[int]) -> SpeedConfig:
    """``speed`` with enough batches that every batch size is timed on the same examples.

    The engine times ``num_batches`` batches; at a small batch size those would be a few
    (short or long) sentences, and with dynamic padding their lengths, not the batch size,
    would shape the curve. Drawing ``num_batches × max(batch_sizes)`` examples at every batch
    size (as far as the data goes) compares like with like.

    Examples
    --------
    >>> same_examples(SpeedConfig(num_batches=2), 8, [1, 8, 32]).num_batches
    8
    """
    return speed.model_copy(
        update={"num_batches": max(1, math.ceil(speed.num_batches * max(batch_sizes) / batch_size))}
    )


def largest_fitting_batch(try_batch: Callable[[int], object], start: int, *, device: str = "cpu") -> int | None:
    """The largest batch below ``start`` that runs, stepping down like timm's benchmark; ``None`` if none does.

    Parameters
    ----------
    try_batch : callable
        Runs one batch of the given size; raises on failure.
    start : int
        The batch size that ran out of memory.
    device : str
        Whose allocator to clear between tries.

    Examples
    --------
    >>> def fits(size):
    ...     if size > 40:
    ...         raise MemoryError
    >>> largest_fitting_batch(fits, 128)
    32
    """
    from timm.utils import decay_batch_step

    size = start
    while size > 1:
        size = cast(int, decay_batch_step(size))
        try:
            try_batch(size)
            return size
        except Exception as exc:  # only memory errors mean "try smaller"
            if not is_out_of_memory(exc):
                return None
        if is_cuda(device):  # hand the failed try's blocks back; a full collection per step is slow elsewhere
            release_memory(device)
    return None


def _run_batch(adapter: ModelAdapter, dataset: Dataset, size: int) -> None:
    examples = batch_examples(dataset, draw_batches(dataset, size, 1)[0])
    adapter.forward(adapter.to_device(adapter.preprocess(examples)))
    if adapter.device != "cpu":
        get_backend().synchronize(str(adapter.device))


def _probe(adapter: ModelAdapter, dataset: Dataset, size: int) -> SpeedPoint | None:
    """``None`` when a full batch runs; a failed point otherwise."""
    try:
        _run_batch(adapter, dataset, size)
        return None
    except Exception as exc:  # failures are results: OOM, unsupported kernels, shape errors …
        reason = describe_failure(exc)
        oom = is_out_of_memory(exc)
    release_memory(str(adapter.device))
    if not oom:
        return SpeedPoint(batch_size=size, status="failed", reason=reason)
    fits = largest_fitting_batch(lambda b: _run_batch(adapter, dataset, b), size, device=str(adapter.device))
    tail = f"the largest batch that fits is {fits}" if fits else "not even a batch of 1 fits"
    return SpeedPoint(batch_size=size, status="failed", reason=f"{reason}; {tail}", largest_fitting_batch=fits)


def _resident_mb(device: str) -> float | None:
    """Memory the CUDA allocator holds now (all resident models), read as the peak right after a reset."""
    if not is_cuda(device):
        return None
    backend = get_backend()
    backend.reset_peak_memory_stats(device)
    value = backend.max_memory_allocated(device)
    return value / _MIB if value is not None else None


def _memory_mb(adapter: ModelAdapter, record: ModelSpeed, resident_mb: float | None) -> float | None:
    """Weights plus the peak growth over what was held before this model's memory pass (``None``: weights unknown)."""
    stats = record.memory
    weights = adapter.parameter_bytes()
    if stats is None or weights is None:
        return None
    if stats.process_cuda_max_allocated_mb is not None and resident_mb is not None:
        growth = stats.process_cuda_max_allocated_mb - resident_mb
    else:
        growth = stats.process_rss_peak_mb - stats.process_rss_baseline_mb
    return weights / _MIB + max(0.0, growth)


def _points(
    summary: SpeedSummary, adapters: Sequence[ModelAdapter], parent: str, resident_mb: float | None
) -> dict[str, SpeedPoint]:
    comparisons: dict[str, SpeedComparison] = {}
    for comparison in summary.scenario("offline").comparisons:
        if comparison.model_a == parent:
            comparisons[comparison.model_b] = comparison
    out = {}
    for adapter in adapters:
        record = summary.model(adapter.name)
        out[adapter.name] = SpeedPoint(
            batch_size=summary.batch_size,
            status="measured",
            offline=record.offline,
            vs_parent=comparisons.get(adapter.name),
            memory=record.memory,
            memory_mb=_memory_mb(adapter, record, resident_mb),
            first_call_s=record.first_call_s,
        )
    return out


def measure_batch_size(
    parent: ModelAdapter,
    variants: Sequence[ModelAdapter],
    dataset: Dataset,
    speed: SpeedConfig,
    batch_size: int,
    *,
    seed: int = 0,
    progress: SpeedProgress | None = None,
) -> dict[str, SpeedPoint]:
    """Time the parent and its variants at ``batch_size``; every model gets a point, measured or failed.

    Parameters
    ----------
    parent : ModelAdapter
        The fp32 eager model (model A of every speed ratio).
    variants : sequence of ModelAdapter
        Its variants that passed the quality pass.
    dataset : Dataset
        Where the batches come from.
    speed : SpeedConfig
        As returned by :func:`sweep_speed_config`.
    batch_size : int
    seed : int
    progress : callable, optional

    Returns
    -------
    dict of str to SpeedPoint
        Keyed by model name, the parent included.
    """
    points: dict[str, SpeedPoint] = {}
    alive: list[ModelAdapter] = []
    for adapter in [parent, *variants]:
        failed = _probe(adapter, dataset, batch_size)
        if failed is None:
            alive.append(adapter)
        else:
            points[adapter.name] = failed
    if not alive:
        return points
    resident = _resident_mb(str(parent.device))
    try:
        summary = measure_speed(alive, dataset, speed, batch_size=batch_size, seed=seed, progress=progress)
        points.update(_points(summary, alive, parent.name, resident))
        return points
    except Exception as exc:  # fall back to one variant at a time (beside the parent when it runs)
        if len(alive) == 1:
            points[alive[0].name] = SpeedPoint(batch_size=batch_size, status="failed", reason=describe_failure(exc))
            return points
    release_memory(str(parent.device))
    with_parent = alive[0] is parent
    for adapter in alive[1:] if with_parent else alive:
        group = [parent, adapter] if with_parent else [adapter]
        try:
            summary = measure_speed(group, dataset, speed, batch_size=batch_size, seed=seed, progress=progress)
        except Exception as exc:  # this variant alone fails: record it, keep the others
            points[adapter.name] = SpeedPoint(batch_size=batch_size, status="failed", reason=describe_failure(exc))
            release_memory(str(parent.device))
            continue
        measured = _points(summary, group, parent.name, resident)
        points[adapter.name] = measured[adapter.name]
        if with_parent and parent.name not in points:
            points[parent.name] = measured[parent.name]
    if with_parent and parent.name not in points:
        try:
            summary = measure_speed([parent], dataset, speed, batch_size=batch_size, seed=seed, progress=progress)
            points.update(_points(summary, [parent], parent.name, resident))
        except Exception as exc:  # the parent itself fails at this batch size
            points[parent.name] = SpeedPoint(batch_size=batch_size, status="failed", reason=describe_failure(exc))
    return points
