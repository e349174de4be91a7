"""What the machine was doing while models were timed: GPU telemetry and other processes' load.

See ``docs/speed.md``, the section of this title.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import psutil

from headtohead.engines.timing import Clock
from headtohead.results.speed import HostLoad, MeanMax, TelemetryStats
from headtohead.runtime.devices import is_cuda

__all__ = ["TelemetrySampler", "open_nvml", "host_load"]

_FIELDS = ("utilization_pct", "memory_used_mb", "power_w", "temperature_c", "sm_clock_mhz")

#: Other processes using this much CPU (100 = one core) make a measurement suspect.
BUSY_CPU_PERCENT = 50.0


def open_nvml() -> Any | None:
    """The initialised ``pynvml`` module, or ``None`` when there is no NVIDIA driver/GPU."""
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:  # NVMLError_LibraryNotFound, DriverNotLoaded, ImportError …
        return None


def _nvml_handle(nvml: Any, device: str) -> Any:
    # NVML numbers GPUs physically; CUDA numbers those in CUDA_VISIBLE_DEVICES.
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    visible = [e.strip() for e in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if e.strip()]
    if index < len(visible):
        entry = visible[index]
        if entry.isdigit():
            return nvml.nvmlDeviceGetHandleByIndex(int(entry))
        return nvml.nvmlDeviceGetHandleByUUID(entry)
    return nvml.nvmlDeviceGetHandleByIndex(index)


def _read_or_none(read: Any) -> float | None:
    try:
        return float(read())
    except Exception:  # a field this GPU does not report (NVMLError_NotSupported)
        return None


class TelemetrySampler:
    """Sample one GPU through NVML in a background thread.

    Parameters
    ----------
    device : str
        The CUDA device to watch; for any other device the sampler is inert.
    interval_s : float
        Seconds between samples.
    clock : callable, optional
        Nanosecond clock for the sample times (the one the engine marks intervals with).
    nvml : module, optional
        A ``pynvml``-like module, already initialised (tests pass a fake). By default
        :func:`open_nvml` is tried when the sampler starts.

    Attributes
    ----------
    available : bool
        Whether NVML answered for this device.
    """

    def __init__(
        self, device: str, *, interval_s: float = 0.1, clock: Clock | None = None, nvml: Any | None = None
    ) -> None:
        self.device = device
        self.interval_s = interval_s
        self.clock = clock or time.perf_counter_ns
        self._nvml = nvml
        self._owns_nvml = nvml is None
        self._handle: Any = None
        self.available = False
        self.samples: list[tuple[int, dict[str, float | None]]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Open NVML and start sampling (does nothing without a GPU)."""
        if not is_cuda(self.device):
            return
        if self._nvml is None:
            self._nvml = open_nvml()
        if self._nvml is None:
            return
        try:
            self._handle = _nvml_handle(self._nvml, self.device)
        except Exception:
            self._close()
            return
        self.available = True
        self._stop.clear()
        self._sample()
        self._thread = threading.Thread(target=self._loop, name="h2h-nvml-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling and release NVML."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._sample()
        self._close()

    def _close(self) -> None:
        if self._owns_nvml and self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except Exception:  # noqa: S110 - a driver that fails to shut down leaves nothing to report
                pass
            self._nvml = None

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        nvml, handle = self._nvml, self._handle
        if nvml is None:  # closed while the thread was waking up
            return
        values = {
            "utilization_pct": _read_or_none(lambda: nvml.nvmlDeviceGetUtilizationRates(handle).gpu),
            "memory_used_mb": _read_or_none(lambda: nvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20),
            "power_w": _read_or_none(lambda: nvml.nvmlDeviceGetPowerUsage(handle) / 1000.0),
            "temperature_c": _read_or_none(lambda: nvml.nvmlDeviceGetTemperature(handle, nvml.NVML_TEMPERATURE_GPU)),
            "sm_clock_mhz": _read_or_none(lambda: nvml.nvmlDeviceGetClockInfo(handle, nvml.NVML_CLOCK_SM)),
        }
        self.samples.append((self.clock(), values))

    def summarise(self, intervals: Sequence[tuple[int, int]] | None = None) -> TelemetryStats:
        """Mean and max of each field over the samples inside ``intervals`` (all samples if ``None``).

        Parameters
        ----------
        intervals : sequence of (start_ns, end_ns), optional
            When one model ran, on the sampler's clock.

        Returns
        -------
        TelemetryStats
            ``available=False`` and all fields ``None`` without NVML.
        """
        if not self.available:
            return TelemetryStats()
        chosen = [
            values
            for t, values in self.samples
            if intervals is None or any(start <= t <= end for start, end in intervals)
        ]
        summary: dict[str, MeanMax | None] = {}
        for name in _FIELDS:
            readings = [value for v in chosen if (value := v[name]) is not None]
            summary[name] = MeanMax(mean=sum(readings) / len(readings), max=max(readings)) if readings else None
        return TelemetryStats(available=True, samples=len(chosen), **summary)


def host_load(*, window_s: float = 0.2) -> HostLoad:
    """Load average and the CPU other processes used over ``window_s`` seconds.

    Returns
    -------
    HostLoad
        ``busy_processes`` names those using more than 20 % of a core, busiest first.
    """
    try:
        load: list[float] | None = [float(x) for x in os.getloadavg()]
    except (OSError, AttributeError):
        load = None
    me = os.getpid()
    processes = []
    for proc in psutil.process_iter(["name"]):
        if proc.pid == me:
            continue
        try:
            proc.cpu_percent(None)  # the first call only primes the counter
            processes.append(proc)
        except psutil.Error:
            continue
    time.sleep(window_s)
    usage: list[tuple[float, str]] = []
    for proc in processes:
        try:
            usage.append((proc.cpu_percent(None), f"{proc.info.get('name') or '?'} (pid {proc.pid})"))
        except psutil.Error:
            continue
    usage.sort(reverse=True)
    busy = [f"{label} {percent:.0f} %" for percent, label in usage if percent > 20.0][:5]
    return HostLoad(
        cpu_count=psutil.cpu_count(logical=True),
        load_average=load,
        other_cpu_percent=float(sum(p for p, _ in usage)),
        busy_processes=busy,
    )
