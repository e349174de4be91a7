"""A fake GPU and a fake clock, so the CUDA and timing code paths run in tests without a GPU.

See ``docs/architecture.md``, the section of this title.

Examples
--------
>>> from headtohead.runtime.devices import use_backend
>>> backend = FakeCudaBackend()
>>> with use_backend(backend):
...     start, end = backend.create_timing_event("cuda:0"), backend.create_timing_event("cuda:0")
...     start.record(); backend.run_kernel("cuda:0", 2_000_000); end.record()
...     backend.synchronize("cuda:0")
...     start.elapsed_time(end)
2.0
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FakeClock", "FakeCudaBackend", "FakeTimingEvent", "FakeTransferStreams"]


class FakeClock:
    """A nanosecond clock that advances only through :meth:`advance` (and ``tick_ns`` per read).

    Parameters
    ----------
    start_ns : int
        The first reading.
    tick_ns : int
        Added after every reading, so loops waiting on the clock always terminate.
    """

    def __init__(self, start_ns: int = 1_000_000_000, tick_ns: int = 0) -> None:
        self._now = int(start_ns)
        self.tick_ns = int(tick_ns)
        self.reads = 0
        #: Name of the simulated model that ran last (for switch penalties).
        self.last_model: str | None = None

    def __call__(self) -> int:
        """Read the clock (the signature of ``time.perf_counter_ns``)."""
        now = self._now
        self._now += self.tick_ns
        self.reads += 1
        return now

    def advance(self, ns: float) -> None:
        """Let ``ns`` nanoseconds pass."""
        if ns < 0:
            raise ValueError("a clock cannot go backwards")
        self._now += int(round(ns))


class FakeTimingEvent:
    """A timing event on a :class:`FakeCudaBackend` stream."""

    def __init__(self, backend: FakeCudaBackend, device: str) -> None:
        self._backend = backend
        self.device = device
        self.stamp_ns: int | None = None
        self.completed = False

    def record(self) -> None:
        self.stamp_ns = self._backend.gpu_time_ns(self.device)
        self.completed = False
        self._backend.pending.append(self)

    def elapsed_time(self, end: FakeTimingEvent) -> float:
        """Milliseconds between this event and ``end`` (``torch.cuda.Event.elapsed_time``)."""
        for event in (self, end):
            if event.stamp_ns is None:
                raise RuntimeError("Both events must be recorded before calculating elapsed time.")
            if not event.completed:
                raise RuntimeError(
                    "Both events must be completed before calculating elapsed time (synchronize the device first)."
                )
        return (end.stamp_ns - self.stamp_ns) / 1e6  # type: ignore[operator]


class FakeStreamEvent:
    """An event recorded on a :class:`FakeTransferStreams` side stream."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.completed = False


class FakeTransferStreams:
    """:class:`headtohead.runtime.devices.TransferStreams` that logs instead of copying.

    Tensors stay where they are (CPU tensors stand in for device ones); ``pin`` returns a
    copy marked ``h2h_pinned``. :attr:`log` holds ``(operation, detail)`` in call order:
    ``pin``, ``record`` (event number), ``compute waits`` (event number), ``side waits for
    compute``, ``used on compute``, ``used on side``, ``host waits`` (event number).
    :attr:`stream` is the stream work is issued on now (``"compute"`` or ``"side"``).
    """

    def __init__(self, device: str) -> None:
        self.device = device
        self.stream = "compute"
        self.log: list[tuple[str, object]] = []
        self.events: list[FakeStreamEvent] = []

    def pin(self, tensor: Any) -> Any:
        pinned = tensor.clone()
        pinned.h2h_pinned = True
        self.log.append(("pin", tuple(tensor.shape)))
        return pinned

    def empty_pinned(self, shape: tuple[int, ...], dtype: Any) -> Any:
        import torch

        host = torch.empty(shape, dtype=dtype)
        host.h2h_pinned = True
        return host

    @contextlib.contextmanager
    def on_side(self) -> Iterator[None]:
        previous, self.stream = self.stream, "side"
        try:
            yield
        finally:
            self.stream = previous

    def record_side(self) -> FakeStreamEvent:
        event = FakeStreamEvent(len(self.events))
        self.events.append(event)
        self.log.append(("record", event.number))
        return event

    def compute_waits(self, event: FakeStreamEvent) -> None:
        self.log.append(("compute waits", event.number))

    def side_waits_for_compute(self) -> None:
        self.log.append(("side waits for compute", None))

    def used_on_compute(self, tensor: Any) -> None:
        self.log.append(("used on compute", tuple(tensor.shape)))

    def used_on_side(self, tensor: Any) -> None:
        self.log.append(("used on side", tuple(tensor.shape)))

    def is_done(self, event: FakeStreamEvent) -> bool:
        return event.completed

    def wait(self, event: FakeStreamEvent) -> None:
        self.log.append(("host waits", event.number))
        event.completed = True

    def count(self, operation: str) -> int:
        """How many times ``operation`` was logged."""
        return sum(1 for op, _ in self.log if op == operation)


@dataclass
class _FakeGPU:
    clock_ns: int = 0
    allocated: int = 0
    peak: int = 0
    reserved_peak: int = 0


@dataclass
class FakeCudaBackend:
    """A device backend with ``device_count`` fake CUDA GPUs (see the module docstring).

    Attributes
    ----------
    sync_calls : list of str
        Every device :meth:`synchronize` was called for, in order.
    transfers : list of FakeTransferStreams
        Every :meth:`transfer_streams` made, in order.
    peak_resets : list of str
        Every device whose peak memory statistics were reset, in order.
    """

    device_count: int = 1
    name: str = "Fake GPU"
    reserve_block: int = 2 * 2**20
    sync_calls: list[str] = field(default_factory=list)
    peak_resets: list[str] = field(default_factory=list)
    transfers: list[FakeTransferStreams] = field(default_factory=list)
    warm_ups: list[str] = field(default_factory=list)
    #: Bytes the first use of a device allocates (as the CUDA context and cuBLAS workspace do).
    context_bytes: int = 0
    #: Device memory in bytes: an allocation beyond it raises ``torch.cuda.OutOfMemoryError``
    #: (``None``: unlimited), as a real GPU's allocator does.
    memory_limit: int | None = None
    #: Every device whose cached blocks were handed back (:meth:`empty_cache`), in order.
    cache_empties: list[str] = field(default_factory=list)
    pending: list[FakeTimingEvent] = field(default_factory=list)
    _gpus: dict[int, _FakeGPU] = field(default_factory=dict)

    # -- DeviceBackend ---------------------------------------------------------------
    def cuda_available(self) -> bool:
        return True

    def cuda_device_count(self) -> int:
        return self.device_count

    def cuda_device_name(self, index: int) -> str:
        return f"{self.name} {index}"

    def cuda_version(self) -> str | None:
        return "12.0"

    def mps_available(self) -> bool:
        return False

    def synchronize(self, device: str) -> None:
        self.sync_calls.append(device)
        for streams in self.transfers:
            if streams.device == device:
                for stream_event in streams.events:
                    stream_event.completed = True
        still_pending = []
        for event in self.pending:
            if event.device == device:
                event.completed = True
            else:
                still_pending.append(event)
        self.pending = still_pending

    def warm_up(self, device: str) -> None:
        """Create the fake context: ``context_bytes`` allocated once per device, as a real first use does."""
        if device not in self.warm_ups:
            self.allocate(device, self.context_bytes)
        self.warm_ups.append(device)

    def memory_allocated(self, device: str) -> int | None:
        return self._gpu(device).allocated

    def create_timing_event(self, device: str) -> FakeTimingEvent:
        self._gpu(device)
        return FakeTimingEvent(self, device)

    def reset_peak_memory_stats(self, device: str) -> None:
        gpu = self._gpu(device)
        self.peak_resets.append(device)
        gpu.peak = gpu.allocated
        gpu.reserved_peak = self._reserved(gpu.allocated)

    def max_memory_allocated(self, device: str) -> int | None:
        return self._gpu(device).peak

    def max_memory_reserved(self, device: str) -> int | None:
        return self._gpu(device).reserved_peak

    def empty_cache(self, device: str) -> None:
        self._gpu(device)
        self.cache_empties.append(device)

    def transfer_streams(self, device: str) -> FakeTransferStreams:
        self._gpu(device)
        streams = FakeTransferStreams(device)
        self.transfers.append(streams)
        return streams

    # -- simulation ------------------------------------------------------------------
    def run_kernel(self, device: str, ns: float) -> None:
        """Simulate GPU work taking ``ns`` nanoseconds on ``device``."""
        self._gpu(device).clock_ns += int(round(ns))

    def gpu_time_ns(self, device: str) -> int:
        """The device's simulated clock."""
        return self._gpu(device).clock_ns

    def allocate(self, device: str, nbytes: int) -> None:
        """Simulate allocating ``nbytes`` on ``device`` (raises the peak; out of memory beyond ``memory_limit``)."""
        gpu = self._gpu(device)
        if self.memory_limit is not None and gpu.allocated + int(nbytes) > self.memory_limit:
            import torch

            raise torch.cuda.OutOfMemoryError(
                f"CUDA out of memory. Tried to allocate {int(nbytes)} bytes on {device} "
                f"({gpu.allocated} of {self.memory_limit} bytes in use; fake GPU)"
            )
        gpu.allocated += int(nbytes)
        gpu.peak = max(gpu.peak, gpu.allocated)
        gpu.reserved_peak = max(gpu.reserved_peak, self._reserved(gpu.allocated))

    def free(self, device: str, nbytes: int) -> None:
        """Simulate freeing ``nbytes`` on ``device``."""
        gpu = self._gpu(device)
        gpu.allocated = max(0, gpu.allocated - int(nbytes))

    def _reserved(self, nbytes: int) -> int:
        # The caching allocator reserves whole blocks: reserved >= allocated, as on a real GPU.
        blocks = -(-nbytes // self.reserve_block)
        return blocks * self.reserve_block

    def _gpu(self, device: str) -> _FakeGPU:
        if not device.startswith("cuda"):
            raise ValueError(f"FakeCudaBackend only simulates CUDA devices, not '{device}'")
        index = int(device.split(":", 1)[1]) if ":" in device else 0
        if index >= self.device_count:
            raise ValueError(f"FakeCudaBackend has {self.device_count} GPU(s); '{device}' does not exist")
        return self._gpus.setdefault(index, _FakeGPU())
