"""A fake GPU and a fake clock, so the CUDA and timing code paths run in tests without a GPU.

:class:`FakeCudaBackend` implements :class:`headtohead.runtime.devices.DeviceBackend` the way a
CUDA device behaves where it matters to measurements:

* work is *simulated*: a fake model calls :meth:`FakeCudaBackend.run_kernel` with the
  nanoseconds its forward "takes" on the GPU, and the GPU clock advances;
* timing events stamp the GPU clock when recorded, and — like ``torch.cuda.Event`` —
  refuse :meth:`FakeTimingEvent.elapsed_time` until :meth:`FakeCudaBackend.synchronize`
  has run after both were recorded;
* memory is counted by :meth:`FakeCudaBackend.allocate` / :meth:`FakeCudaBackend.free`,
  with a peak that only :meth:`FakeCudaBackend.reset_peak_memory_stats` resets.

:class:`FakeClock` is a monotonic nanosecond clock that only moves when told to; passed
as ``clock=`` to the speed engine it makes timings exact and tests deterministic.

:class:`SimulatedAdapter` is a model adapter whose forward pass "takes" a chosen time on
one of them (with optional seeded jitter, drift and a penalty for running right after
another model), for testing speed measurement and its statistics.

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.config.schema import ModelConfig

__all__ = ["FakeClock", "FakeCudaBackend", "FakeTimingEvent", "SimulatedAdapter"]


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
                raise RuntimeError("Both events must be completed before calculating elapsed time "
                                   "(synchronize the device first).")
        return (end.stamp_ns - self.stamp_ns) / 1e6  # type: ignore[operator]


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
    peak_resets : list of str
        Every device whose peak memory statistics were reset, in order.
    """

    device_count: int = 1
    name: str = "Fake GPU"
    reserve_block: int = 2 * 2**20
    sync_calls: list[str] = field(default_factory=list)
    peak_resets: list[str] = field(default_factory=list)
    warm_ups: list[str] = field(default_factory=list)
    #: Bytes the first use of a device allocates (as the CUDA context and cuBLAS workspace do).
    context_bytes: int = 0
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

    # -- simulation ------------------------------------------------------------------
    def run_kernel(self, device: str, ns: float) -> None:
        """Simulate GPU work taking ``ns`` nanoseconds on ``device``."""
        self._gpu(device).clock_ns += int(round(ns))

    def gpu_time_ns(self, device: str) -> int:
        """The device's simulated clock."""
        return self._gpu(device).clock_ns

    def allocate(self, device: str, nbytes: int) -> None:
        """Simulate allocating ``nbytes`` on ``device`` (raises the peak if it is exceeded)."""
        gpu = self._gpu(device)
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


class SimulatedAdapter(ModelAdapter):
    """A model whose forward pass takes a simulated, controlled time.

    On the CPU the time passes on a :class:`FakeClock`; on a ``cuda:N`` device it passes
    on a :class:`FakeCudaBackend` GPU (and the host clock moves only by ``launch_ns``).

    Parameters
    ----------
    name : str
    cost_ns : float
        Forward time per example.
    clock : FakeClock
    backend : FakeCudaBackend, optional
        Needed for a CUDA ``device``.
    device : str
    overhead_ns : float
        Fixed forward time per call.
    jitter : float
        Sigma of a seeded log-normal factor on every call (0: exact).
    drift : callable, optional
        ``drift(now_ns) -> factor``: a machine getting slower or faster over time.
    switch_penalty_ns : float
        Extra time when the previous simulated call was another model's (cold caches).
    preprocess_ns : float
        Preprocessing time per example (on the host clock).
    memory_bytes : int
        Simulated device memory one forward call allocates per example (freed after it).
    weight_bytes : int
        The model's weights, held from construction on: allocated on the fake GPU for a CUDA
        ``device``, a real (touched) host array on the CPU, so memory measurements see them.
        :meth:`parameter_bytes` reports them.
    first_call_ns : float
        Extra time of the first forward call only (lazy initialisation).
    seed : int
    """

    kind = "python"
    modalities = ("text", "text_pair", "image", "features")

    def __init__(self, name: str, *, cost_ns: float, clock: FakeClock, backend: FakeCudaBackend | None = None,
                 device: str = "cpu", overhead_ns: float = 0.0, jitter: float = 0.0,
                 drift: Callable[[int], float] | None = None, switch_penalty_ns: float = 0.0,
                 preprocess_ns: float = 0.0, launch_ns: float = 1_000.0, memory_bytes: int = 0,
                 weight_bytes: int = 0, first_call_ns: float = 0.0, seed: int = 0) -> None:
        super().__init__(ModelConfig(name=name, kind="python", source="simulated"),
                         LoadContext(label_names=("negative", "positive"), modality="features", device=device))
        self.cost_ns, self.overhead_ns, self.jitter = cost_ns, overhead_ns, jitter
        self.clock, self.backend, self.drift = clock, backend, drift
        self.switch_penalty_ns, self.preprocess_ns, self.launch_ns = switch_penalty_ns, preprocess_ns, launch_ns
        self.memory_bytes, self.weight_bytes, self.first_call_ns = memory_bytes, int(weight_bytes), first_call_ns
        self.calls = 0
        self._rng = np.random.default_rng(seed)
        self._weights: np.ndarray | None = None
        if self.weight_bytes and backend is not None and device.startswith("cuda"):
            backend.allocate(device, self.weight_bytes)
        elif self.weight_bytes:
            self._weights = np.ones(self.weight_bytes, dtype=np.uint8)  # ones: every page touched, resident

    def parameter_bytes(self) -> int:
        return self.weight_bytes

    def release(self) -> None:
        """Free the weights (on the fake GPU: hand the bytes back)."""
        if self.weight_bytes and self.backend is not None and self.device.startswith("cuda"):
            self.backend.free(self.device, self.weight_bytes)
        self._weights = None

    @classmethod
    def load(cls, config: ModelConfig, context: LoadContext) -> SimulatedAdapter:
        raise NotImplementedError("SimulatedAdapter is built directly, not loaded from a config")

    def preprocess(self, examples: Sequence[Any]) -> np.ndarray:
        self.clock.advance(self.preprocess_ns * len(examples))
        return np.asarray(examples)

    def to_device(self, inputs: Any) -> Any:
        return inputs  # nothing to move: the device is simulated

    def forward(self, inputs: Any) -> np.ndarray:
        n = len(inputs)
        ns = self.overhead_ns + self.cost_ns * n
        if self.drift is not None:
            ns *= self.drift(self.clock._now)
        if self.jitter:
            ns *= float(self._rng.lognormal(0.0, self.jitter))
        if self.clock.last_model not in (None, self.name):
            ns += self.switch_penalty_ns
        if self.calls == 0:
            ns += self.first_call_ns
        self.clock.last_model = self.name
        self.calls += 1
        if self.backend is not None and self.device.startswith("cuda"):
            self.backend.allocate(self.device, self.memory_bytes * n)
            self.backend.run_kernel(self.device, ns)
            self.backend.free(self.device, self.memory_bytes * n)
            self.clock.advance(self.launch_ns)
        else:
            self.clock.advance(ns)
        return np.zeros((n, 2))
