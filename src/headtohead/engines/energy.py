"""Energy counters read around timed work: NVML's total-energy counter on GPUs, RAPL on CPUs.

See ``docs/performance.md``, "Cost and energy".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from headtohead.engines.telemetry import _nvml_handle, open_nvml
from headtohead.results.cost import ModelCost, RunCost, ScenarioCost
from headtohead.results.server import LoadGenSummary
from headtohead.results.speed import ModelSpeed

__all__ = [
    "EnergyCounter",
    "EnergyProbe",
    "NvmlEnergyCounter",
    "RaplEnergyCounter",
    "open_energy_counter",
    "EnergyLedger",
    "JobEnergy",
    "model_cost",
    "use_energy_counters",
    "RAPL_ROOT",
]

RAPL_ROOT = Path("/sys/class/powercap")


class EnergyCounter(Protocol):
    """A cumulative energy counter: :meth:`read_j` only ever grows (wrap-arounds handled inside)."""

    source: str

    def read_j(self) -> float: ...


@dataclass
class EnergyProbe:
    """The counter of one device, or ``None`` and the reason there is none."""

    counter: EnergyCounter | None
    note: str | None = None


class NvmlEnergyCounter:
    """NVML's total-energy counter of one GPU (millijoules → joules)."""

    def __init__(self, nvml: Any, handle: Any, name: str) -> None:
        self._nvml, self._handle = nvml, handle
        self.source = f"NVML total energy, {name} (whole GPU)"

    def read_j(self) -> float:
        return float(self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)) / 1e3


class RaplEnergyCounter:
    """The RAPL package counters of every CPU socket, summed; wrap-arounds are unwrapped."""

    def __init__(self, domains: Sequence[Path]) -> None:
        self._files = [d / "energy_uj" for d in domains]
        self._ranges = [_read_int(d / "max_energy_range_uj") or 2**32 for d in domains]
        self._last = [_read_int(f) for f in self._files]
        self._total_uj = 0
        names = " + ".join(_read_text(d / "name") or d.name for d in domains)
        self.source = f"RAPL {names} (whole CPU package)"

    def read_j(self) -> float:
        for i, path in enumerate(self._files):
            now = _read_int(path)
            step = now - self._last[i]
            self._total_uj += step if step >= 0 else step + self._ranges[i]  # the counter wrapped once
            self._last[i] = now
        return self._total_uj / 1e6


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _read_int(path: Path) -> int:
    return int(path.read_text().strip())


def _nvml_probe(device: str, nvml: Any | None) -> EnergyProbe:
    nvml = nvml if nvml is not None else open_nvml()
    if nvml is None:
        return EnergyProbe(None, "NVML not available (no NVIDIA driver), so no GPU energy counter")
    try:
        handle = _nvml_handle(nvml, device)  # CUDA index → NVML's physical index
        name = nvml.nvmlDeviceGetName(handle)
        name = name.decode() if isinstance(name, bytes) else str(name)
    except Exception as exc:  # NVMLError: the GPU cannot be found
        return EnergyProbe(None, f"NVML could not open {device} ({exc})")
    counter = NvmlEnergyCounter(nvml, handle, name)
    try:
        counter.read_j()
    except Exception:  # NVMLError_NotSupported before Volta
        return EnergyProbe(None, f"NVML total-energy counter not supported on {name} (needs Volta or newer)")
    return EnergyProbe(counter)


def _rapl_probe(root: Path) -> EnergyProbe:
    # Top-level domains (intel-rapl:0, intel-rapl:1) are the packages; intel-rapl:0:0 … are parts of them.
    domains = sorted(p for p in root.glob("intel-rapl:*") if p.name.count(":") == 1)
    if not domains:
        return EnergyProbe(None, f"no RAPL counters ({root} has no intel-rapl domains)")
    try:
        return EnergyProbe(RaplEnergyCounter(domains))
    except PermissionError:
        return EnergyProbe(
            None,
            f"RAPL counters not readable (permission): {domains[0] / 'energy_uj'} is "
            f"root-only; run as root or make it readable (chmod o+r)",
        )
    except (OSError, ValueError) as exc:
        return EnergyProbe(None, f"RAPL counters not readable ({exc})")


def open_energy_counter(device: str, *, nvml: Any | None = None, rapl_root: Path = RAPL_ROOT) -> EnergyProbe:
    """The energy counter of ``device``: NVML for ``cuda[:i]``, RAPL for ``cpu``.

    Parameters
    ----------
    device : str
        ``cpu``, ``cuda``, ``cuda:1`` … (``mps`` and others have no counter).
    nvml : module, optional
        A ``pynvml``-like module, initialised (tests pass a fake); default: :func:`open_nvml`.
    rapl_root : Path
        The powercap folder (tests pass a folder of fake counter files).

    Returns
    -------
    EnergyProbe
        The counter, or ``None`` with one line saying why it cannot be read.
    """
    if device.startswith("cuda"):
        return _nvml_probe(device, nvml)
    if device == "cpu":
        return _rapl_probe(rapl_root)
    return EnergyProbe(None, f"no energy counter for device {device}")


_opener: Callable[[str], EnergyProbe] = open_energy_counter


@contextmanager
def use_energy_counters(opener: Callable[[str], EnergyProbe]) -> Iterator[None]:
    """Within the block every :class:`EnergyLedger` opens counters with ``opener`` (tests: a fake)."""
    global _opener
    previous, _opener = _opener, opener
    try:
        yield
    finally:
        _opener = previous


@dataclass
class _Tally:
    joules: float = 0.0
    predictions: int = 0
    seconds: float = 0.0


@dataclass
class EnergyLedger:
    """Counter differences summed per (model, scenario), one counter per device.

    Parameters
    ----------
    enabled : bool
        ``False``: nothing is read and no record carries energy.
    open_counter : callable, optional
        ``device -> EnergyProbe``; default: :func:`open_energy_counter`, or the opener set by
        :func:`use_energy_counters`.
    clock : callable
        Seconds, for the mean power.
    """

    enabled: bool = True
    open_counter: Callable[[str], EnergyProbe] | None = None
    clock: Callable[[], float] = time.perf_counter
    _probes: dict[str, EnergyProbe] = field(default_factory=dict)
    _tallies: dict[tuple[str, str], _Tally] = field(default_factory=dict)

    def probe(self, device: str) -> EnergyProbe:
        """The device's counter, opened on first use."""
        if device not in self._probes:
            opener = self.open_counter or _opener
            self._probes[device] = opener(device) if self.enabled else EnergyProbe(None, None)
        return self._probes[device]

    def begin(self, device: str) -> tuple[float, float] | None:
        """Read the device's counter before a block; ``None`` when it has none."""
        counter = self.probe(device).counter
        return (counter.read_j(), self.clock()) if counter is not None else None

    def end(
        self, token: tuple[float, float] | None, device: str, model: str, scenario: str, predictions: int
    ) -> float | None:
        """Read it again after the block; add the difference and the predictions; return the joules."""
        if token is None:
            return None
        counter = self.probe(device).counter
        assert counter is not None, "begin() returned a token, so the device has a counter"
        joules = counter.read_j() - token[0]
        tally = self._tallies.setdefault((model, scenario), _Tally())
        tally.joules += joules
        tally.predictions += predictions
        tally.seconds += self.clock() - token[1]
        return joules

    def record(
        self, model: str, device: str, throughputs: dict[str, float | None], price_per_hour: float | None
    ) -> ModelCost | None:
        """The :class:`ModelCost` of ``model``: one entry per scenario in ``throughputs``.

        ``None`` when there is neither a price nor energy to report.
        """
        if not self.enabled and price_per_hour is None:
            return None
        probe = self.probe(device)
        scenarios = []
        for scenario, throughput in throughputs.items():
            tally = self._tallies.get((model, scenario))
            scenarios.append(
                ScenarioCost(
                    scenario=scenario,
                    throughput_per_s=throughput,
                    price_per_hour=price_per_hour,
                    predictions=tally.predictions if tally else 0,
                    seconds=tally.seconds if tally else 0.0,
                    energy_j=tally.joules if tally and probe.counter is not None else None,
                )
            )
        return ModelCost(
            energy_source=probe.counter.source if probe.counter is not None else None,
            energy_note=probe.note,
            scenarios=scenarios,
        )


def model_cost(
    ledger: EnergyLedger, speed: ModelSpeed, loadgen: LoadGenSummary | None, price_per_hour: float | None
) -> ModelCost | None:
    """Cost and energy of one model in every scenario it was measured in (server: at its max_qps)."""
    throughputs: dict[str, float | None] = {}
    for scenario in ("offline", "single_stream"):
        timing = speed.timing(scenario)
        if timing is not None:
            throughputs[scenario] = timing.throughput_per_s
    if speed.time_window is not None:
        throughputs["time_window"] = speed.time_window.samples_per_s
    served = next((m for m in loadgen.models if m.name == speed.name), None) if loadgen is not None else None
    if served is not None:
        throughputs["server"] = served.max_qps
    return ledger.record(speed.name, speed.device, throughputs, price_per_hour)


class JobEnergy:
    """The energy of one whole job (a fine-tune) on one device: counter read at start and at finish.

    Parameters
    ----------
    device : str
        The device the job runs on (its counter: NVML for a GPU, RAPL for the CPU).
    """

    def __init__(self, device: str) -> None:
        self.device = device
        self.probe = _opener(device)
        self._start = self.probe.counter.read_j() if self.probe.counter is not None else None

    def finish(self, seconds: float, *, resumed: bool = False, world_size: int = 1) -> RunCost:
        """The :class:`RunCost` of the job (no price yet: the pipeline adds the machine's)."""
        counter, note = self.probe.counter, self.probe.note
        joules = counter.read_j() - self._start if counter is not None and self._start is not None else None
        if joules is not None and resumed:
            note = "energy of this session only (the run resumed from a checkpoint)"
        if joules is not None and world_size > 1:
            note = f"energy of this process's device only ({world_size} processes trained together)"
        return RunCost(
            seconds=seconds, energy_j=joules, energy_source=counter.source if counter else None, energy_note=note
        )
