"""Energy counters (NVML through a fake module, RAPL through fake powercap files) and cost per prediction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from headtohead.config.speed import SpeedConfig
from headtohead.engines.energy import (
    EnergyLedger,
    EnergyProbe,
    model_cost,
    open_energy_counter,
    use_energy_counters,
)
from headtohead.results.cost import ModelCost, RunCost, ScenarioCost, cost_per_million


class FakeNvml:
    """A pynvml-like module whose total-energy counter advances a known amount per read."""

    class NVMLError(Exception):
        pass

    def __init__(self, step_mj: int = 0, supported: bool = True) -> None:
        self.energy_mj, self.step_mj, self.supported = 1_000_000, step_mj, supported

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:  # noqa: N802 - pynvml's names
        return f"gpu{index}"

    def nvmlDeviceGetName(self, handle: str) -> str:  # noqa: N802
        return "NVIDIA Fake100"

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: str) -> int:  # noqa: N802
        if not self.supported:
            raise self.NVMLError("Not Supported")
        self.energy_mj += self.step_mj
        return self.energy_mj


def test_nvml_counter_reads_millijoules_as_joules():
    nvml = FakeNvml()
    probe = open_energy_counter("cuda:0", nvml=nvml)
    assert probe.note is None and "NVML total energy, NVIDIA Fake100" in probe.counter.source
    before = probe.counter.read_j()
    nvml.energy_mj += 2500  # the GPU drew 2.5 J meanwhile
    assert probe.counter.read_j() - before == pytest.approx(2.5)


def test_nvml_without_the_counter_says_why():
    probe = open_energy_counter("cuda", nvml=FakeNvml(supported=False))
    assert probe.counter is None and "not supported on NVIDIA Fake100 (needs Volta or newer)" in probe.note


def _package(root: Path, index: int, energy_uj: int, max_uj: int = 1000_000_000) -> Path:
    folder = root / f"intel-rapl:{index}"
    folder.mkdir(parents=True)
    (folder / "name").write_text(f"package-{index}\n")
    (folder / "energy_uj").write_text(f"{energy_uj}\n")
    (folder / "max_energy_range_uj").write_text(f"{max_uj}\n")
    (root / f"intel-rapl:{index}:0").mkdir()  # a sub-domain (core), which must not be counted twice
    return folder


def test_rapl_sums_packages_and_unwraps_the_counter(tmp_path):
    first = _package(tmp_path, 0, 999_000_000)
    second = _package(tmp_path, 1, 5_000_000)
    probe = open_energy_counter("cpu", rapl_root=tmp_path)
    assert probe.counter.source == "RAPL package-0 + package-1 (whole CPU package)"
    assert probe.counter.read_j() == 0.0
    (first / "energy_uj").write_text("2000000\n")  # wrapped: 999 J → 1000 J (range) → 2 J, i.e. +3 J
    (second / "energy_uj").write_text("6500000\n")  # +1.5 J
    assert probe.counter.read_j() == pytest.approx(4.5)


def test_rapl_absent_or_unreadable_is_said(tmp_path, monkeypatch):
    assert "no RAPL counters" in open_energy_counter("cpu", rapl_root=tmp_path / "none").note
    _package(tmp_path, 0, 10)
    original = Path.read_text

    def refuse(path: Path, *args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - as the kernel does for non-root
        if path.name == "energy_uj":
            raise PermissionError(13, "Permission denied")
        return original(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", refuse)
    note = open_energy_counter("cpu", rapl_root=tmp_path).note
    assert note.startswith("RAPL counters not readable (permission)")
    assert open_energy_counter("mps").note == "no energy counter for device mps"


class StepCounter:
    """A counter the test advances by hand (joules)."""

    source = "fake counter"

    def __init__(self) -> None:
        self.joules = 0.0

    def read_j(self) -> float:
        return self.joules


def test_ledger_gives_known_joules_per_prediction_and_cost():
    counter = StepCounter()
    ticks = iter(np.arange(0.0, 100.0, 1.0))
    ledger = EnergyLedger(open_counter=lambda device: EnergyProbe(counter), clock=lambda: float(next(ticks)))
    for _ in range(4):  # four blocks of 50 predictions, 30 J each
        token = ledger.begin("cuda:0")
        counter.joules += 30.0
        ledger.end(token, "cuda:0", "bert", "offline", 50)
    record = ledger.record("bert", "cuda:0", {"offline": 1000.0, "server": None}, price_per_hour=3.6)
    offline = record.scenario("offline")
    assert offline.energy_j == pytest.approx(120.0) and offline.predictions == 200
    assert offline.energy_per_prediction_j == pytest.approx(0.6)
    assert offline.mean_power_w == pytest.approx(30.0)  # 30 J over each 1 s block
    assert offline.cost_per_million == pytest.approx(1.0)  # 1e6 predictions at 1000/s = 1000 s = 1/3.6 h
    assert record.scenario("server").cost_per_million is None  # no throughput, no cost
    assert record.energy_source == "fake counter"


def test_derived_figures_are_recomputed_on_read():
    cost = ScenarioCost(scenario="offline", throughput_per_s=500.0, price_per_hour=2.0, predictions=10, energy_j=5.0)
    stored = cost.model_dump(mode="json")
    stored["cost_per_million"] = 999.0  # a tampered file
    again = ScenarioCost.model_validate(stored)
    assert again.cost_per_million == pytest.approx(cost_per_million(2.0, 500.0)) == pytest.approx(1.1111, rel=1e-3)
    assert again.energy_per_prediction_j == 0.5
    assert RunCost(seconds=7200.0, price_per_hour=1.5).cost == pytest.approx(3.0)
    assert ModelCost.model_validate(ModelCost(scenarios=[cost]).model_dump(mode="json")).scenario("offline") == cost


def test_measure_speed_reports_energy_and_cost_through_the_fake_layer():
    from sim.simulated import SimulatedAdapter

    from headtohead.data.base import Dataset
    from headtohead.engines.speed import measure_speed
    from headtohead.testing.fake_device import FakeClock

    clock = FakeClock()
    counter = StepCounter()
    data = Dataset("x", "features", np.zeros((32, 2)), np.zeros(32, dtype=int), ("a", "b"))
    adapter = SimulatedAdapter("m", cost_ns=1_000_000, clock=clock)

    def opener(device: str) -> EnergyProbe:
        return EnergyProbe(counter)

    real_forward = adapter.forward

    def forward(inputs):  # noqa: ANN001, ANN202 - every call draws 0.25 J
        counter.joules += 0.25
        return real_forward(inputs)

    adapter.forward = forward
    config = SpeedConfig(
        scenarios=["offline"],
        rounds=5,
        precision=None,  # a fixed number of rounds
        min_iterations=5,
        min_seconds=0.0,
        warmup_iterations=0,
        warmup_seconds=0.0,
        memory=False,
        telemetry=False,
        pipeline_iterations=0,
        price_per_hour=3.6,
    )
    with use_energy_counters(opener):
        summary = measure_speed([adapter], data, config, batch_size=8, clock=clock)
    offline = summary.models[0].cost.scenario("offline")
    assert offline.energy_per_prediction_j == pytest.approx(0.25 / 8)  # 0.25 J per batch of 8
    timing = summary.models[0].offline
    assert offline.cost_per_million == pytest.approx(cost_per_million(3.6, timing.throughput_per_s))


def test_model_cost_prices_each_scenario_at_its_throughput_and_server_at_max_qps():
    from headtohead.results.server import LoadGenSummary, ServerModelResult
    from headtohead.results.speed import ModelSpeed, TimeWindowResult

    speed = ModelSpeed(
        name="bert",
        device="cpu",
        num_parameters=1,
        parameter_bytes=4,
        first_preprocess_s=0.0,
        first_call_s=0.0,
        time_window=TimeWindowResult(window_s=1.0, elapsed_s=2.0, batch_size=8, batches=250, samples=2000),
    )
    served = ServerModelResult(
        name="bert",
        device="cpu",
        capacity_estimate_qps=900.0,
        max_qps=720.0,
        confidence=0.95,
        searches=[],
        trials=[],
        preprocessed_ahead=True,
    )
    loadgen = LoadGenSummary(
        loadgen_version="x", latency_bound_ms=50.0, settings={}, log_dir=None, seed=0, models=[served]
    )
    ledger = EnergyLedger(open_counter=lambda device: EnergyProbe(None, "no RAPL counters (test)"))
    cost = model_cost(ledger, speed, loadgen, price_per_hour=7.2)
    assert cost.scenario("time_window").cost_per_million == pytest.approx(cost_per_million(7.2, 1000.0)) == 2.0
    assert cost.scenario("server").cost_per_million == pytest.approx(cost_per_million(7.2, 720.0))
    assert cost.energy_note == "no RAPL counters (test)" and cost.scenario("server").energy_j is None
    assert model_cost(EnergyLedger(enabled=False), speed, None, None) is None


def test_a_whole_job_is_metered_and_priced():
    from headtohead.engines.energy import JobEnergy

    counter = StepCounter()
    counter.joules = 5000.0  # what the counter read before the job
    with use_energy_counters(lambda device: EnergyProbe(counter)):
        job = JobEnergy("cuda:0")
    counter.joules += 1234.0
    cost = job.finish(1800.0)
    assert cost.energy_j == pytest.approx(1234.0) and cost.energy_note is None and cost.cost is None
    assert cost.priced(3.0).cost == pytest.approx(1.5)  # half an hour at 3/h
    assert "session only" in job.finish(1800.0, resumed=True).energy_note
    assert "2 processes" in job.finish(1800.0, world_size=2).energy_note
    with use_energy_counters(lambda device: EnergyProbe(None, "no RAPL counters (test)")):
        missing = JobEnergy("cpu").finish(10.0)
    assert missing.energy_j is None and missing.energy_note == "no RAPL counters (test)"
