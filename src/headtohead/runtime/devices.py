"""The small device layer: every CUDA call headtohead makes goes through here.

Engines and adapters never call ``torch.cuda`` directly; they ask this module. That keeps
the CUDA paths in one place and lets tests swap in a fake backend (:func:`use_backend`)
to exercise them on machines without a GPU.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol, cast

from headtohead.errors import DeviceError

__all__ = [
    "DeviceBackend",
    "TimingEvent",
    "TransferStreams",
    "TorchBackend",
    "resolve_device",
    "get_backend",
    "use_backend",
    "GPUInfo",
    "gpu_info",
    "is_cuda",
]


def is_cuda(device: str) -> bool:
    """Whether ``device`` (``cpu``, ``cuda:0``, ``mps`` …) names a CUDA device."""
    return str(device).startswith("cuda")


class TimingEvent(Protocol):
    """A timestamp recorded on a device's stream (``torch.cuda.Event(enable_timing=True)``).

    ``elapsed_time`` may only be read once the device has been synchronised after both
    events were recorded; before that the real CUDA call raises.
    """

    def record(self) -> None: ...
    def elapsed_time(self, end: TimingEvent) -> float: ...


class TransferStreams(Protocol):
    """Copies between host and one CUDA device on a side stream, overlapping compute.

    The quality pass copies batch ``i + 1`` to the GPU while batch ``i`` computes, and
    results back while later batches compute: host memory is page-locked (``pin``) so
    copies can be asynchronous, copies run on a side stream (``on_side``), and events
    order the two streams without ever blocking the host until results are needed.
    """

    def pin(self, tensor: Any) -> Any: ...
    def empty_pinned(self, shape: tuple[int, ...], dtype: Any) -> Any: ...
    def on_side(self) -> contextlib.AbstractContextManager[None]: ...
    def record_side(self) -> Any: ...
    def compute_waits(self, event: Any) -> None: ...
    def side_waits_for_compute(self) -> None: ...
    def used_on_compute(self, tensor: Any) -> None: ...
    def used_on_side(self, tensor: Any) -> None: ...
    def is_done(self, event: Any) -> bool: ...
    def wait(self, event: Any) -> None: ...


class DeviceBackend(Protocol):
    """What headtohead needs to know about accelerators. :class:`TorchBackend` is the real one.

    The timing and memory methods are only called for CUDA devices (see :func:`is_cuda`);
    the real backend answers ``None`` / does nothing for other devices.
    """

    def cuda_available(self) -> bool: ...
    def cuda_device_count(self) -> int: ...
    def cuda_device_name(self, index: int) -> str: ...
    def cuda_version(self) -> str | None: ...
    def mps_available(self) -> bool: ...
    def synchronize(self, device: str) -> None: ...
    def warm_up(self, device: str) -> None:
        """Create the device's context, its cuBLAS handle and the common kernels now, before any model.

        On CUDA the first use of a device creates its context (hundreds of milliseconds to
        seconds), the first matrix product its cuBLAS handle and workspace, and every kernel
        is loaded on its first call (lazy module loading: host memory and time); whichever
        model came first would otherwise pay all of it in its load time, first call and
        memory. The kernels almost every network runs (embedding, layer norm, GELU,
        attention, softmax, convolution, pooling) are loaded here, once.
        """
        if not (is_cuda(device) or device == "mps"):
            return
        import torch
        import torch.nn.functional as F

        with torch.inference_mode():
            x = torch.ones((16, 16), device=device)
            (x @ x).sum().item()  # a product: the cuBLAS handle; .item(): waits for it
            h = F.layer_norm(F.embedding(torch.zeros((2, 8), dtype=torch.long, device=device), x), (16,))
            h = F.gelu(F.linear(h, x, x[0]))
            q = h.view(2, 8, 2, 8).transpose(1, 2)
            F.scaled_dot_product_attention(q, q, q).softmax(-1).tanh().relu().sum().item()
            image = torch.ones((1, 3, 8, 8), device=device)
            F.adaptive_avg_pool2d(F.relu(F.conv2d(image, torch.ones((4, 3, 3, 3), device=device))), 1).sum().item()
        self.synchronize(device)

    def memory_allocated(self, device: str) -> int | None: ...
    def create_timing_event(self, device: str) -> TimingEvent: ...
    def reset_peak_memory_stats(self, device: str) -> None: ...
    def max_memory_allocated(self, device: str) -> int | None: ...
    def max_memory_reserved(self, device: str) -> int | None: ...
    def transfer_streams(self, device: str) -> TransferStreams: ...
    def empty_cache(self, device: str) -> None:
        """Hand the caching allocator's free blocks back (after running out of memory, before a smaller try)."""


def _torch_or_none() -> Any:
    """torch, or ``None`` in the light install (no torch: no CUDA, no MPS, only the CPU)."""
    try:
        import torch
    except ModuleNotFoundError:
        return None
    return torch


class TorchBackend:
    """The backend that asks torch (imported lazily, so config-only code stays light)."""

    def cuda_available(self) -> bool:
        torch = _torch_or_none()
        return torch is not None and bool(torch.cuda.is_available())

    def cuda_device_count(self) -> int:
        return int(_torch_or_none().cuda.device_count()) if self.cuda_available() else 0

    def cuda_device_name(self, index: int) -> str:
        import torch

        return str(torch.cuda.get_device_name(index))

    def cuda_version(self) -> str | None:
        import torch

        return cast("str | None", torch.version.cuda)

    def mps_available(self) -> bool:
        torch = _torch_or_none()
        if torch is None:
            return False
        backend = getattr(torch.backends, "mps", None)
        return bool(backend is not None and backend.is_available())

    def synchronize(self, device: str) -> None:
        if is_cuda(device):
            import torch

            torch.cuda.synchronize(device)
        elif device == "mps":
            import torch

            torch.mps.synchronize()

    def empty_cache(self, device: str) -> None:
        if is_cuda(device):
            import torch

            torch.cuda.empty_cache()
        elif device == "mps":
            import torch

            torch.mps.empty_cache()

    def warm_up(self, device: str) -> None:
        """Create the device's context and its cuBLAS handle now, so no model's load or first call pays for them.

        On CUDA the first use of a device creates its context (hundreds of milliseconds to
        seconds) and the first matrix product its cuBLAS handle and workspace; whichever
        model came first would otherwise pay both inside its load time and first call.
        """
        if not (is_cuda(device) or device == "mps"):
            return
        import torch

        x = torch.ones((16, 16), device=device)
        (x @ x).sum().item()  # a product: the cuBLAS handle; .item(): waits for it
        self.synchronize(device)

    def memory_allocated(self, device: str) -> int | None:
        if not is_cuda(device):
            return None
        import torch

        return int(torch.cuda.memory_allocated(device))

    def create_timing_event(self, device: str) -> TimingEvent:
        return _TorchCudaEvent(device)

    def reset_peak_memory_stats(self, device: str) -> None:
        if is_cuda(device):
            import torch

            torch.cuda.reset_peak_memory_stats(device)

    def max_memory_allocated(self, device: str) -> int | None:
        if not is_cuda(device):
            return None
        import torch

        return int(torch.cuda.max_memory_allocated(device))

    def max_memory_reserved(self, device: str) -> int | None:
        if not is_cuda(device):
            return None
        import torch

        return int(torch.cuda.max_memory_reserved(device))

    def transfer_streams(self, device: str) -> TransferStreams:
        return _TorchTransferStreams(device)


class _TorchTransferStreams:
    """:class:`TransferStreams` with ``torch.cuda``: a side stream next to the current one."""

    def __init__(self, device: str) -> None:
        import torch

        self._torch = torch
        self._compute = torch.cuda.current_stream(torch.device(device))
        self._side = torch.cuda.Stream(torch.device(device))

    def pin(self, tensor: Any) -> Any:
        return tensor if tensor.device.type != "cpu" or tensor.is_pinned() else tensor.pin_memory()

    def empty_pinned(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self._torch.empty(shape, dtype=dtype, pin_memory=True)

    def on_side(self) -> contextlib.AbstractContextManager[None]:
        return cast("contextlib.AbstractContextManager[None]", self._torch.cuda.stream(self._side))

    def record_side(self) -> Any:
        event = self._torch.cuda.Event()
        event.record(self._side)
        return event

    def compute_waits(self, event: Any) -> None:
        self._compute.wait_event(event)

    def side_waits_for_compute(self) -> None:
        self._side.wait_stream(self._compute)

    def used_on_compute(self, tensor: Any) -> None:
        # Made on the side stream, read on the compute stream: without this the caching
        # allocator could hand its memory to the next copy while compute still reads it.
        tensor.record_stream(self._compute)

    def used_on_side(self, tensor: Any) -> None:
        tensor.record_stream(self._side)

    def is_done(self, event: Any) -> bool:
        return bool(event.query())

    def wait(self, event: Any) -> None:
        event.synchronize()


class _TorchCudaEvent:
    """A ``torch.cuda.Event`` recorded on the current stream of *its* device.

    ``Event.record()`` without a stream records on the current device's stream, which is
    the wrong GPU when the model lives on ``cuda:1``; the stream is named explicitly here.
    """

    def __init__(self, device: str) -> None:
        import torch

        self._device = torch.device(device)
        self._event = torch.cuda.Event(enable_timing=True)

    def record(self) -> None:
        import torch

        self._event.record(torch.cuda.current_stream(self._device))

    def elapsed_time(self, end: TimingEvent) -> float:
        return float(self._event.elapsed_time(end._event))  # type: ignore[attr-defined]


_backend: DeviceBackend = TorchBackend()


def get_backend() -> DeviceBackend:
    """The backend in use (the real torch one unless a test swapped it)."""
    return _backend


@contextlib.contextmanager
def use_backend(backend: DeviceBackend) -> Iterator[DeviceBackend]:
    """Swap the device backend for the duration of a ``with`` block (tests use a fake)."""
    global _backend
    previous, _backend = _backend, backend
    try:
        yield backend
    finally:
        _backend = previous


def resolve_device(spec: str) -> str:
    """Turn ``auto``/``cpu``/``cuda``/``cuda:N``/``mps`` into a device that exists here.

    Parameters
    ----------
    spec : str
        The ``eval.device`` value.

    Returns
    -------
    str
        ``"cpu"``, ``"cuda:N"`` or ``"mps"``.

    Raises
    ------
    DeviceError
        A GPU is asked for and there is none, or the index is out of range.

    Examples
    --------
    >>> resolve_device("cpu")
    'cpu'
    """
    backend = get_backend()
    if spec == "auto":
        return "cuda:0" if backend.cuda_available() else "cpu"
    if spec == "cpu":
        return "cpu"
    if spec == "mps":
        if not backend.mps_available():
            raise DeviceError("eval.device is 'mps' but no Apple GPU is available here; use device: auto or cpu")
        return "mps"
    if spec.startswith("cuda"):
        if not backend.cuda_available():
            raise DeviceError(
                f"eval.device is '{spec}' but CUDA is not available on this machine "
                f"(no GPU, or torch built without CUDA); use device: auto or cpu"
            )
        index = int(spec.split(":", 1)[1]) if ":" in spec else 0
        count = backend.cuda_device_count()
        if index >= count:
            raise DeviceError(
                f"eval.device is '{spec}' but this machine has {count} GPU(s) "
                f"(cuda:0..cuda:{count - 1}); pick one of those"
            )
        return f"cuda:{index}"
    raise DeviceError(f"unknown device '{spec}' (use auto, cpu, cuda, cuda:N or mps)")


@dataclass(frozen=True)
class GPUInfo:
    """Name, driver and CUDA version of one GPU."""

    index: int
    name: str
    driver: str | None
    cuda: str | None
    memory_total_mb: float | None


def gpu_info() -> list[GPUInfo]:
    """Describe the GPUs torch can see; an empty list without CUDA. Never raises."""
    backend = get_backend()
    try:
        if not backend.cuda_available():
            return []
        count = backend.cuda_device_count()
        driver, totals = _nvml_driver_and_memory(count)
        return [
            GPUInfo(i, backend.cuda_device_name(i), driver, backend.cuda_version(), totals[i]) for i in range(count)
        ]
    except Exception:  # environment capture must not break a run
        return []


def _nvml_driver_and_memory(count: int) -> tuple[str | None, list[float | None]]:
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            driver: Any = pynvml.nvmlSystemGetDriverVersion()
            driver = driver.decode() if isinstance(driver, bytes) else str(driver)
            totals: list[float | None] = []
            for i in range(count):
                handle = pynvml.nvmlDeviceGetHandleByIndex(i)
                totals.append(pynvml.nvmlDeviceGetMemoryInfo(handle).total / 2**20)
            return driver, totals
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        return None, [None] * count
