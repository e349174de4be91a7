"""Timers: how one call is timed, on the CPU and on a CUDA device.

See ``docs/speed.md``, the section of this title.
"""

from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from headtohead.results.speed import TimerName
from headtohead.runtime.devices import TimingEvent, get_backend, is_cuda

__all__ = [
    "Clock",
    "Timer",
    "HostTimer",
    "CudaEventTimer",
    "make_timer",
    "run_timed",
    "gc_paused",
    "time_stages",
    "torch_threads",
]

#: A monotonic clock in integer nanoseconds (``time.perf_counter_ns`` or a test's fake).
Clock = Callable[[], int]


class Timer(Protocol):
    """Times calls: ``mark = stop(start())`` around each, ``collect(marks)`` → nanoseconds."""

    #: Name recorded with the latencies (``perf_counter_ns`` or ``cuda_event``).
    name: TimerName

    def begin_block(self) -> None: ...
    def start(self) -> Any: ...
    def stop(self, token: Any) -> Any: ...
    def collect(self, marks: Sequence[Any]) -> list[int]: ...


class HostTimer:
    """Wall-clock timer on the host.

    Parameters
    ----------
    device : str
        Where the timed work runs. For anything but ``cpu`` the device is synchronised
        before the start and stop readings.
    clock : callable, optional
        Nanosecond clock; ``time.perf_counter_ns`` by default.

    Examples
    --------
    >>> timer = HostTimer("cpu")
    >>> mark = timer.stop(timer.start())
    >>> timer.collect([mark])[0] >= 0
    True
    """

    name: TimerName = "perf_counter_ns"

    def __init__(self, device: str = "cpu", *, clock: Clock | None = None) -> None:
        self.device = device
        self.clock = clock or time.perf_counter_ns
        self._sync = device != "cpu"

    def begin_block(self) -> None:
        if self._sync:
            get_backend().synchronize(self.device)

    def start(self) -> int:
        if self._sync:
            get_backend().synchronize(self.device)
        return self.clock()

    def stop(self, token: int) -> int:
        if self._sync:
            get_backend().synchronize(self.device)
        return self.clock() - token

    def collect(self, marks: Sequence[int]) -> list[int]:
        return [int(m) for m in marks]


class CudaEventTimer:
    """GPU-side timer: a ``torch.cuda.Event`` pair per call, read after synchronising.

    Parameters
    ----------
    device : str
        A CUDA device (``cuda:0``).
    sync_each : bool
        Synchronise after every call (single-stream latency: the caller waits for each
        answer) instead of only in :meth:`collect`.
    """

    name: TimerName = "cuda_event"

    def __init__(self, device: str, *, sync_each: bool = False) -> None:
        if not is_cuda(device):
            raise ValueError(f"CudaEventTimer needs a CUDA device, not '{device}'")
        self.device = device
        self.sync_each = sync_each

    def begin_block(self) -> None:
        # Work queued before the block must not land inside its first interval.
        get_backend().synchronize(self.device)

    def start(self) -> TimingEvent:
        event = get_backend().create_timing_event(self.device)
        event.record()
        return event

    def stop(self, token: TimingEvent) -> tuple[TimingEvent, TimingEvent]:
        backend = get_backend()
        end = backend.create_timing_event(self.device)
        end.record()
        if self.sync_each:
            backend.synchronize(self.device)
        return token, end

    def collect(self, marks: Sequence[tuple[TimingEvent, TimingEvent]]) -> list[int]:
        # Events may only be read once the device has finished the work between them.
        get_backend().synchronize(self.device)
        return [int(round(start.elapsed_time(end) * 1e6)) for start, end in marks]


def make_timer(device: str, *, clock: Clock | None = None, sync_each: bool = False) -> Timer:
    """The timer for forward passes on ``device``: CUDA events on a GPU, the host clock elsewhere.

    Parameters
    ----------
    device : str
        A resolved device (``cpu``, ``cuda:0``, ``mps``).
    clock : callable, optional
        Host clock for :class:`HostTimer` (tests pass a fake one).
    sync_each : bool
        For :class:`CudaEventTimer`: synchronise after every call.

    Examples
    --------
    >>> make_timer("cpu").name
    'perf_counter_ns'
    """
    if is_cuda(device):
        return CudaEventTimer(device, sync_each=sync_each)
    return HostTimer(device, clock=clock)


@contextlib.contextmanager
def torch_threads(num_threads: int | None) -> Iterator[tuple[int | None, int | None]]:
    """Set torch's intra-op threads for a measurement and restore them afterwards.

    Yields ``(intra_op_threads, interop_threads)`` as in effect, ``(None, None)`` without torch.
    """
    try:
        import torch
    except ImportError:  # a scikit-learn-only install
        yield None, None
        return
    previous = torch.get_num_threads()
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    try:
        yield torch.get_num_threads(), torch.get_num_interop_threads()
    finally:
        torch.set_num_threads(previous)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (as ``timeit`` does) so a collection never lands in a timing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_timed(
    timer: Timer,
    call: Callable[[Any], Any],
    inputs: Sequence[Any],
    *,
    min_iterations: int,
    min_ns: float = 0.0,
    multiple_of: int = 1,
    clock: Clock | None = None,
) -> list[int]:
    """Call ``call(inputs[i % len(inputs)])`` until enough calls and enough time have passed.

    Parameters
    ----------
    timer : Timer
        Times each call.
    call : callable
        One step (a forward pass on ready inputs).
    inputs : sequence
        Cycled through in order, starting at the first, so every block sees the same batches.
    min_iterations : int
        Calls at least.
    min_ns : float
        Host-clock nanoseconds at least (both conditions must hold).
    multiple_of : int
        Stop only after a multiple of this many calls (``len(inputs)``: whole passes, so
        every input weighs the same in every block).
    clock : callable, optional
        Host clock for the time condition.

    Returns
    -------
    list of int
        Nanoseconds per call, in call order.
    """
    if not inputs:
        raise ValueError("run_timed needs at least one input")
    clock = clock or time.perf_counter_ns
    target = max(1, math.ceil(min_iterations / multiple_of) * multiple_of)
    marks: list[Any] = []
    n = len(inputs)
    timer.begin_block()
    with gc_paused():
        began = clock()
        i = 0
        while i < target or (clock() - began) < min_ns or i % multiple_of:
            token = timer.start()
            call(inputs[i % n])
            marks.append(timer.stop(token))
            i += 1
    return timer.collect(marks)


def time_stages(
    stages: Sequence[Callable[[Any], Any]], value: Any, *, device: str = "cpu", clock: Clock | None = None
) -> list[int]:
    """Pass ``value`` through ``stages`` in turn and time each one on the host clock.

    The device is synchronised after every stage (and before the first), so each time
    covers its stage's work; the stage times are contiguous and add up to the whole step.

    Parameters
    ----------
    stages : sequence of callables
        Each receives the previous stage's result (e.g. preprocess, to_device, forward).
    value : object
        The first stage's input.
    device : str
        Where the work runs (synchronised unless ``cpu``).
    clock : callable, optional

    Returns
    -------
    list of int
        Nanoseconds per stage.

    Examples
    --------
    >>> len(time_stages([str.upper, len], "abc"))
    2
    """
    clock = clock or time.perf_counter_ns
    backend = get_backend()
    sync = device != "cpu"
    out = []
    with gc_paused():
        if sync:
            backend.synchronize(device)
        last = clock()
        for stage in stages:
            value = stage(value)
            if sync:
                backend.synchronize(device)
            now = clock()
            out.append(now - last)
            last = now
    return out
