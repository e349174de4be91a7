"""Memory at inference: resident memory (exact kernel peak where Linux gives it, else sampled) and CUDA peaks.

See ``docs/speed.md``, the section of this title.
"""

from __future__ import annotations

import gc
import sys
import threading
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from headtohead.results.memory import MemoryStats
from headtohead.runtime.devices import get_backend, is_cuda

__all__ = [
    "RssSampler",
    "RssStats",
    "MemoryWindow",
    "WindowPeaks",
    "measure_memory",
    "reset_peak_rss",
    "read_peak_rss",
    "shared_library_rss",
    "MIB",
]

MIB = 2**20

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")
_SMAPS = Path("/proc/self/smaps")


def shared_library_rss() -> int | None:
    """Resident bytes of this process's shared-library mappings (``*.so``): code, not memory a model holds.

    A model's first calls page in library code it had not run yet (a kernel, an operator);
    those pages belong to the library, are shared with every process using it, and are read
    from ``/proc/self/smaps`` to be told apart from the model's memory. ``None`` outside Linux.
    """
    try:
        text = _SMAPS.read_text()
    except OSError:
        return None
    total, library = 0, False
    for line in text.splitlines():
        if line.startswith("Rss:"):
            if library:
                total += int(line.split()[1]) * 1024
        elif not line[:1].isupper():  # a mapping's header: "start-end perms offset dev inode path"
            fields = line.split(maxsplit=5)
            library = len(fields) > 5 and ".so" in fields[5].rsplit("/", 1)[-1]
    return total


def release_free_heap() -> None:
    """Hand the C heap's free memory back to the kernel (glibc ``malloc_trim``; a no-op elsewhere).

    Freed memory that the allocator keeps resident would be reused by the next allocations
    without the RSS growing, hiding them from a window that starts now: a process that has
    allocated and freed before (any long-lived one) would under-report what a model needs.
    """
    global _LIBC
    if _LIBC is None:
        try:
            import ctypes

            _LIBC = ctypes.CDLL("libc.so.6") if sys.platform.startswith("linux") else False
        except OSError:
            _LIBC = False
    if _LIBC:
        _LIBC.malloc_trim(0)


_LIBC: typing.Any = None  # libc, once loaded; False where it cannot be


def reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (``VmHWM``) of this process to its current RSS; ``False`` where impossible."""
    try:
        _CLEAR_REFS.write_text("5")  # 5: reset the peak RSS only (proc(5)); 1-4 would clear page bits
        return read_peak_rss() is not None
    except OSError:
        return False


def read_peak_rss() -> int | None:
    """The kernel's peak RSS of this process since the last reset, in bytes (``None`` outside Linux)."""
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


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
    >>> stats.samples >= 2
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
        return RssStats(
            baseline=readings[0], peak=max(readings), mean=sum(readings) / len(readings), samples=len(readings)
        )


@dataclass(frozen=True)
class WindowPeaks:
    """What a :class:`MemoryWindow` saw, in bytes.

    ``rss_start`` is the RSS when the window opened; ``rss_peak`` the highest RSS inside it
    (the kernel's mark where ``exact``, else the highest sample); ``library_growth`` the
    shared-library code paged in meanwhile (see :func:`shared_library_rss`), part of
    ``rss_peak`` that is no model's memory; the CUDA values are
    ``None`` off CUDA: ``cuda_start`` allocated when it opened, ``cuda_peak`` the allocator's
    peak inside it.
    """

    rss_start: int
    rss_peak: int
    rss: RssStats
    exact: bool
    library_growth: int
    cuda_start: int | None
    cuda_peak: int | None
    cuda_reserved_peak: int | None


class MemoryWindow:
    """The peak RSS and CUDA allocation of the work done between :meth:`open` and :meth:`close`.

    Parameters
    ----------
    device : str
        CUDA peaks are read (and reset at :meth:`open`) for a CUDA device only.
    interval_s : float
        RSS sampling interval (the samples give the mean, and the peak where the kernel's is absent).

    Examples
    --------
    >>> window = MemoryWindow("cpu").open()
    >>> block = b"x" * (64 * 2**20)  # written, so resident
    >>> peaks = window.close()
    >>> peaks.rss_peak - peaks.rss_start >= 60 * 2**20
    True
    """

    def __init__(self, device: str = "cpu", *, interval_s: float = 0.005) -> None:
        self.device = device
        self._cuda = is_cuda(device)
        self._sampler = RssSampler(interval_s)
        self._exact = False
        self._cuda_start: int | None = None
        self._library: int | None = None

    def open(self) -> MemoryWindow:
        backend = get_backend()
        if self._cuda:
            backend.synchronize(self.device)
            backend.reset_peak_memory_stats(self.device)
            self._cuda_start = backend.memory_allocated(self.device)
        release_free_heap()  # what the window then sees grow is new memory, not reused free blocks
        self._library = shared_library_rss()
        self._exact = reset_peak_rss()
        self._sampler.start()
        return self

    def close(self) -> WindowPeaks:
        backend = get_backend()
        if self.device != "cpu":
            backend.synchronize(self.device)
        rss = self._sampler.stop()
        kernel_peak = read_peak_rss() if self._exact else None
        peak = max(rss.peak, kernel_peak) if kernel_peak is not None else rss.peak
        library = shared_library_rss() if self._library is not None else None
        return WindowPeaks(
            rss_start=rss.baseline,
            rss_peak=peak,
            rss=rss,
            exact=kernel_peak is not None,
            library_growth=max(0, library - self._library) if library is not None and self._library is not None else 0,
            cuda_start=self._cuda_start,
            cuda_peak=backend.max_memory_allocated(self.device) if self._cuda else None,
            cuda_reserved_peak=backend.max_memory_reserved(self.device) if self._cuda else None,
        )


def _mb(nbytes: int | float | None) -> float | None:
    return None if nbytes is None else nbytes / MIB


def measure_memory(
    step: Callable[[int], object],
    device: str,
    *,
    iterations: int,
    weights_bytes: int | None = None,
    interval_s: float = 0.005,
) -> MemoryStats:
    """Run ``step(i)`` for ``i in range(iterations)`` in this process and record the memory the calls took.

    Everything already resident (every loaded model, staged batches) is in the process
    figures; the ``inference`` figures are the growth above what was held just before the
    calls (CUDA peaks are reset first, so another model's calls never count). Which part of
    the resident memory is this model's cannot be told apart here: ``model_peak_mb`` is left
    ``None`` (see :mod:`headtohead.engines.isolated` for that).

    Parameters
    ----------
    step : callable
        One end-to-end inference step (preprocess, transfer, forward); ``i`` picks the batch.
    device : str
        The model's device; CUDA peaks are read only for CUDA devices.
    iterations : int
        Steps to run.
    weights_bytes : int, optional
        The model's parameter and buffer bytes, recorded as ``weights_mb``.
    interval_s : float
        RSS sampling interval.

    Returns
    -------
    MemoryStats
        ``isolated=False``.
    """
    gc.collect()
    window = MemoryWindow(device, interval_s=interval_s).open()
    try:
        for i in range(iterations):
            step(i)
    finally:
        peaks = window.close()
    cuda_growth = None if peaks.cuda_peak is None else max(0, peaks.cuda_peak - (peaks.cuda_start or 0))
    return MemoryStats(
        isolated=False,
        peak_method="high_water_mark" if peaks.exact else "sampled",
        weights_mb=_mb(weights_bytes),
        inference_rss_mb=max(0, peaks.rss_peak - peaks.rss_start - peaks.library_growth) / MIB,
        cuda_inference_peak_mb=_mb(cuda_growth),
        process_rss_baseline_mb=peaks.rss_start / MIB,
        process_rss_peak_mb=peaks.rss_peak / MIB,
        process_rss_mean_mb=peaks.rss.mean / MIB,
        process_rss_samples=peaks.rss.samples,
        process_cuda_max_allocated_mb=_mb(peaks.cuda_peak),
        process_cuda_max_reserved_mb=_mb(peaks.cuda_reserved_peak),
    )
