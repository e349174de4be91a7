"""The speed engine on real clocks: a sleep-based 2× model, an A/A run of a real torch model, threads."""

from __future__ import annotations

import time

import numpy as np
import pytest

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.config.schema import model_settings
from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset

torch = pytest.importorskip("torch")

from headtohead.engines.speed import measure_speed  # noqa: E402

pytestmark = pytest.mark.serial  # timed against the wall clock: run alone (see the Makefile)


class _Adapter(ModelAdapter):
    kind = "python"
    modalities = ("features",)

    def __init__(self, name: str) -> None:
        super().__init__(
            model_settings(name=name, kind="python", source="test"),
            LoadContext(label_names=("negative", "positive"), modality="features"),
        )

    @classmethod
    def load(cls, config, context):  # noqa: ANN001, ANN206
        raise NotImplementedError

    def preprocess(self, examples):  # noqa: ANN001, ANN201
        return torch.as_tensor(np.asarray(examples), dtype=torch.float32)


class Sleeper(_Adapter):
    """A model whose forward pass sleeps a fixed time."""

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(name)
        self.seconds = seconds

    def forward(self, inputs):  # noqa: ANN001, ANN201
        time.sleep(self.seconds)
        return torch.zeros(len(inputs), 2)


class MLP(_Adapter):
    """A small real torch model."""

    def __init__(self, name: str, module) -> None:  # noqa: ANN001
        super().__init__(name)
        self.module = module

    def forward(self, inputs):  # noqa: ANN001, ANN201
        with torch.inference_mode():
            return self.module(inputs)


def dataset(n=64, dim=64):
    x = np.random.default_rng(0).normal(size=(n, dim)).astype(np.float32)
    return Dataset("synthetic", "features", x, np.zeros(n, dtype=np.int64), ("negative", "positive"))


def test_a_sleep_twice_as_long_is_measured_twice_as_slow():
    config = SpeedConfig(
        scenarios=["offline"],
        warmup_iterations=1,
        warmup_seconds=0.0,
        min_iterations=24,
        min_seconds=0.0,
        rounds=8,
        precision=None,  # a fixed number of rounds
        num_batches=1,
        pipeline_iterations=2,
        memory=False,
    )
    summary = measure_speed([Sleeper("slow", 0.020), Sleeper("fast", 0.010)], dataset(), config, batch_size=8)
    (comparison,) = summary.scenario("offline").comparisons
    # Wake-up delays add the same few hundred microseconds to both, pulling the ratio a bit below 2.
    assert comparison.faster == "fast", comparison.verdict
    assert 1.6 < comparison.ratio < 2.3 and comparison.ci_low > 1.3, comparison.verdict
    assert summary.model("slow").offline.per_batch.min_s >= 0.020
    assert summary.model("slow").pipeline.forward.min_s >= 0.020


def _a_a_intervals_contain_one(summary) -> bool:  # noqa: ANN001
    return all(c.ci_low <= 1.0 <= c.ci_high for run in summary.scenarios for c in run.comparisons)


def test_a_a_run_of_a_real_model_gives_a_ratio_interval_containing_one():
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 2)).eval()
    threads_before = torch.get_num_threads()
    # One thread: with other processes busy, multi-threaded kernels wait on descheduled workers.
    config = SpeedConfig(
        scenarios=["offline", "single_stream"],
        warmup_iterations=5,
        warmup_seconds=0.05,
        min_iterations=100,
        min_seconds=0.2,
        rounds=20,
        precision=None,  # a fixed number of rounds
        num_batches=2,
        num_threads=1,
        confidence=0.99,
        memory=True,
        memory_iterations=2,
    )
    summary = measure_speed([MLP("a", module), MLP("b", module)], dataset(), config, batch_size=16)
    if not _a_a_intervals_contain_one(summary):
        # A 99 % interval misses 1 % of the time by design; a biased engine fails both runs.
        summary = measure_speed([MLP("a", module), MLP("b", module)], dataset(), config, batch_size=16, seed=1)
    assert _a_a_intervals_contain_one(summary), [c.verdict for r in summary.scenarios for c in r.comparisons]
    assert summary.torch_threads == 1 and torch.get_num_threads() == threads_before
    record = summary.model("a")
    assert record.num_parameters == 64 * 256 + 256 + 256 * 2 + 2
    assert record.parameter_bytes == 4 * record.num_parameters
    assert record.memory.weights_mb == pytest.approx(record.parameter_bytes / 2**20)
    assert record.memory.inference_rss_mb < 16  # batches of 16 × 64 floats through a 256-wide layer: kilobytes
    assert summary.host_before.cpu_count >= 1 and record.offline.timer == "perf_counter_ns"
