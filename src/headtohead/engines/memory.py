"""Memory of a model at inference: process RSS sampled by a thread, CUDA peaks from the allocator.

Memory is measured in a pass of its own: a sampler thread competes for the interpreter
lock and would slow the very calls being timed.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from headtohead.runtime.devices import get_backend, is_cuda
from headtohead.results.speed import MemoryStats

__all__ = ["RssSampler", "RssStats", "measure_memory"]

_MIB = 2**20


@dataclass(frozen=True)
class RssStats:
    """Resident set size of the process during a sampling window, in bytes."""

    baseline: int
    peak: int
    mean: float
    samples: int


class RssSampler:
    """Sample this process's RSS every ``interval_s`` in a background thread.

    A reading is also taken at :meth:`start` (the baseline) and at :meth:`stop`, so even a
    window shorter than the interval has two.

    Parameters
    ----------
    interval_s : float
        Seconds between readings.
    process : psutil.Process, optional
        The process to watch (this one by default).

    Examples
    --------
    >>> sampler = RssSampler(interval_s=0.001)
    >>> sampler.start()
    >>> data = bytearray(10 * 2**20)
    >>> stats = sampler.stop()
    >>> stats.peak >= stats.baseline and stats.samples >= 2
    True
    """

    def __init__(self, interval_s: float = 0.005, process: psutil.Process | None = None) -> None:
        self.interval_s = interval_s
        self._process = process or psutil.Process()
        self._readings: list[int] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> None:
        self._readings.append(int(self._process.memory_info().rss))

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._read()

    def start(self) -> None:
        """Take the baseline reading and start the thread."""
        if self._thread is not None:
            raise RuntimeError("RssSampler is already running")
        self._readings = []
        self._stop.clear()
        self._read()
        self._thread = threading.Thread(target=self._loop, name="h2h-rss-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> RssStats:
        """Stop the thread, take a last reading and summarise."""
        if self._thread is None:
            raise RuntimeError("RssSampler.stop() called before start()")
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._read()
        readings = self._readings
        return RssStats(baseline=readings[0], peak=max(readings), mean=sum(readings) / len(readings),
                        samples=len(readings))


def measure_memory(step: Callable[[int], object], device: str, *, iterations: int,
                   interval_s: float = 0.005) -> MemoryStats:
    """Run ``step(i)`` for ``i in range(iterations)`` and record the memory it took.

    CUDA peak statistics are reset first, so the peaks belong to this model alone even
    when other models ran on the same GPU before it.

    Parameters
    ----------
    step : callable
        One end-to-end inference step (preprocess, transfer, forward); ``i`` picks the batch.
    device : str
        The model's device; CUDA peaks are read only for CUDA devices.
    iterations : int
        Steps to run.
    interval_s : float
        RSS sampling interval.

    Returns
    -------
    MemoryStats
    """
    backend = get_backend()
    cuda = is_cuda(device)
    gc.collect()
    if cuda:
        backend.synchronize(device)
        backend.reset_peak_memory_stats(device)
    sampler = RssSampler(interval_s)
    sampler.start()
    try:
        for i in range(iterations):
            step(i)
        if device != "cpu":
            backend.synchronize(device)
    finally:
        rss = sampler.stop()
    allocated = backend.max_memory_allocated(device) if cuda else None
    reserved = backend.max_memory_reserved(device) if cuda else None
    return MemoryStats(
        rss_baseline_mb=rss.baseline / _MIB,
        rss_peak_mb=rss.peak / _MIB,
        rss_mean_mb=rss.mean / _MIB,
        rss_samples=rss.samples,
        cuda_max_allocated_mb=None if allocated is None else allocated / _MIB,
        cuda_max_reserved_mb=None if reserved is None else reserved / _MIB,
    )

