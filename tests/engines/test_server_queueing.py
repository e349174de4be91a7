"""The Server scenario against queueing: a model that sleeps 10 ms per batch of ≤ 8 holds a computable rate."""

from __future__ import annotations

import time

import numpy as np
import pytest
from sim.queueing import expected_max_qps

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.config.schema import model_settings
from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.engines.server import run_server

pytest.importorskip("mlperf_loadgen")


pytestmark = pytest.mark.serial  # timed against the wall clock: run alone (see the Makefile)


class Sleeper(ModelAdapter):
    """10 ms per call, whatever the batch: a full batch of 8 every 10 ms is 800 requests/s at most."""

    kind = "python"
    modalities = ("features",)

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(
            model_settings(name=name, kind="python", source="test"),
            LoadContext(label_names=("a", "b"), modality="features"),
        )
        self.seconds = seconds

    @classmethod
    def load(cls, config, context):  # noqa: ANN001, ANN206
        raise NotImplementedError

    def preprocess(self, examples):  # noqa: ANN001, ANN201
        return np.asarray(examples, dtype=float).reshape(len(examples), -1)

    def forward(self, inputs):  # noqa: ANN001, ANN201
        time.sleep(self.seconds)
        return np.zeros((len(inputs), 2))


@pytest.mark.slow
def test_search_finds_the_rate_queueing_predicts_within_its_interval(tmp_path):
    bound_ms, max_batch, max_wait_ms = 40.0, 8, 2.0
    config = SpeedConfig(
        scenarios=["server"],
        latency_bound_ms=bound_ms,
        server={
            "max_batch": max_batch,
            "max_wait_ms": max_wait_ms,
            "trial_seconds": 1.0,
            "min_queries": 500,
            "repeats": 3,
            "precision": 0.1,
        },
    )
    data = Dataset("x", "features", np.random.default_rng(0).random((128, 4)), np.zeros(128, dtype=int), ("a", "b"))
    summary = run_server([Sleeper("sleeper", 0.010)], data, config, seed=0, log_dir=tmp_path)
    model = summary.model("sleeper")
    # the queue with the service time this machine actually gave (sleep overshoots a little)
    service_s = max_batch / model.capacity_estimate_qps
    assert 0.010 <= service_s < 0.013
    expected = expected_max_qps(
        service_s=service_s,
        max_batch=max_batch,
        max_wait_s=max_wait_ms / 1e3,
        bound_s=bound_ms / 1e3,
        trial_s=1.0,
        min_queries=500,
        reps=100,
    )
    assert model.ci_low <= expected <= model.ci_high, (expected, model.max_qps, model.ci_low, model.ci_high)
    # each search lands near the prediction; the median, because a shared machine can slow one
    # search of three (CI saw 800, 800 and ~350 QPS: an honest interval 4x wide, not a wrong one).
    # The interval's width for given estimates is checked exactly in tests/stats/test_server.py.
    median = float(np.median([s.estimate_qps for s in model.searches]))
    assert abs(np.log(median / expected)) < np.log(1.2), (median, expected)
    held = [t for t in model.trials if t.held]
    assert held and all(t.p99_s <= bound_ms / 1e3 for t in held)  # VALID implies the bound was met
    assert all(t.loadgen.log_dir and (tmp_path / "sleeper").is_dir() for t in model.trials)
