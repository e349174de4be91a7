"""The rate search and the Server engine's bookkeeping, with a fake LoadGen (fast, no threads)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from headtohead.adapters.base import LoadContext, ModelAdapter
from headtohead.config.schema import model_settings
from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.engines.server import run_server
from headtohead.engines.server_search import RateSearch, start_rate
from headtohead.errors import ConfigError
from headtohead.results.server import LoadGenRun


def _run_to_end(search: RateSearch, capacity: float) -> list[float]:
    tried = []
    while not search.done:
        rate = search.next_qps
        tried.append(rate)
        search.record(rate, rate <= capacity)
    return tried


@pytest.mark.parametrize("start", [10.0, 37.0, 790.0, 5000.0])
def test_search_brackets_the_capacity_within_the_precision(start):
    search = RateSearch(start, growth=2.0, precision=0.1, min_qps=1.0)
    tried = _run_to_end(search, capacity=800.0)
    assert search.held <= 800.0 < search.failed
    assert search.failed / search.held <= 1.1
    assert search.held * 0.9 < search.estimate < search.failed * 1.1
    assert len(tried) <= math.ceil(math.log2(max(start, 800) / min(start, 800))) + 1 + 4


def test_search_stops_at_the_cap_and_at_the_floor():
    capped = RateSearch(100.0, growth=2.0, precision=0.1, min_qps=1.0, max_qps=300.0)
    assert _run_to_end(capped, capacity=1e9) == [100.0, 200.0, 300.0]
    assert capped.at_cap and capped.estimate == 300.0
    floor = RateSearch(100.0, growth=2.0, precision=0.1, min_qps=20.0)
    assert _run_to_end(floor, capacity=0.0) == [100.0, 50.0, 25.0]
    assert floor.floor and floor.held is None and floor.estimate is None
    light = RateSearch(100.0, growth=2.0, precision=0.1, min_qps=1.0)
    light.record(100.0, False, light_load_miss=True)  # even at light load the bound is missed: stop going down
    assert light.done and light.floor


def test_start_points_spread_over_one_growth_step():
    starts = [start_rate(100.0, 2.0, u) for u in np.linspace(0, 0.999, 5)]
    assert starts[0] == 100.0 and all(50.0 < s <= 100.0 for s in starts)


class _Named(ModelAdapter):
    kind = "python"
    modalities = ("features",)

    def __init__(self, name: str) -> None:
        super().__init__(
            model_settings(name=name, kind="python", source="test"),
            LoadContext(label_names=("a", "b"), modality="features"),
        )

    @classmethod
    def load(cls, config, context):  # noqa: ANN001, ANN206
        raise NotImplementedError

    def preprocess(self, examples):  # noqa: ANN001, ANN201
        return np.asarray(examples, dtype=float).reshape(len(examples), -1)

    def forward(self, inputs):  # noqa: ANN001, ANN201
        return np.zeros((len(inputs), 2))


@dataclass
class _Queue:
    batches: int = 10
    requests: int = 80
    busy_s: float = 0.0


class FakeLoadGen:
    """Holds a rate iff it is at most the model's capacity; remembers every test it was given."""

    def __init__(self, capacity: dict[str, float]) -> None:
        self.capacity, self.calls = capacity, []

    def __call__(self, model, test, *, batcher, log_dir):  # noqa: ANN001, ANN204
        self.calls.append((model.name, test, batcher, list(model.examples)))
        held = test.target_qps <= self.capacity[model.name]
        p99 = 0.02 if held else 0.2
        run = LoadGenRun(
            scenario="Server",
            valid=held,
            perf_constraints_met=held,
            min_duration_met=True,
            min_queries_met=True,
            early_stopping_met=held,
            query_count=500,
            percentiles_ns={"50.00": p99 / 2 * 1e9, "99.00": p99 * 1e9},
        )
        return run, _Queue(busy_s=1.0)


def _data(n: int = 50) -> Dataset:
    return Dataset("x", "features", np.arange(n * 2, dtype=float).reshape(n, 2), np.zeros(n, dtype=int), ("a", "b"))


def _config(**server) -> SpeedConfig:
    return SpeedConfig(scenarios=["server"], latency_bound_ms=50, server={"repeats": 3, "start_qps": 100, **server})


def test_every_model_gets_the_same_arrivals_and_samples_interleaved():
    fake = FakeLoadGen({"a": 400.0, "b": 900.0})
    summary = run_server([_Named("a"), _Named("b")], _data(), _config(), seed=7, runner=fake)
    by_model = {name: [(c[1].target_qps, c[1].seeds) for c in fake.calls if c[0] == name] for name in "ab"}
    # while both climb the same ladder, each rate is offered to both with identical LoadGen seeds
    shared = set(by_model["a"]) & set(by_model["b"])
    assert len(shared) >= 3 * 2
    assert {c[1].seeds[:2] for c in fake.calls} == {(7, 8)}  # one sample choice for everyone
    assert len({c[1].seeds[2] for c in fake.calls}) == 3  # one arrival schedule per search
    assert all(np.array_equal(c[3], fake.calls[0][3]) for c in fake.calls)  # the same library of examples
    assert ["a", "b"] in summary.order and ["b", "a"] in summary.order  # rotated from step to step
    a, b = summary.model("a"), summary.model("b")
    assert a.ci_low <= 400.0 <= a.ci_high and b.ci_low <= 900.0 <= b.ci_high
    (pair,) = summary.comparisons
    assert pair.more == "b" and 1.8 < pair.ratio < 2.7
    curve = a.curve()
    assert [t.target_qps for t in curve] == sorted(t.target_qps for t in curve)


def test_a_bound_no_model_meets_is_one_clear_error():
    fake = FakeLoadGen({"a": 0.0, "b": 0.0})
    with pytest.raises(ConfigError) as info:
        run_server([_Named("a"), _Named("b")], _data(), _config(min_qps=20), runner=fake)
    message = str(info.value)
    lowest = min(c[1].target_qps for c in fake.calls)
    assert 20.0 <= lowest < 40.0  # the random start (in [50, 100]) halved until below min_qps × 2
    assert "\n" not in message and "speed.latency_bound_ms = 50 cannot be met by any model" in message
    assert f"lowest rate tried, {lowest:.3g} QPS" in message and "p99 was 200.0 ms" in message
    assert len({c[1].seeds[2] for c in fake.calls}) == 1  # stopped after the first search


class _TooFewQueries(FakeLoadGen):
    """p99 well within the bound, but LoadGen refuses every trial: too few queries for its early stopping."""

    def __call__(self, model, test, *, batcher, log_dir):  # noqa: ANN001, ANN204
        self.calls.append((model.name, test, batcher, list(model.examples)))
        run = LoadGenRun(
            scenario="Server",
            valid=False,
            perf_constraints_met=True,
            min_duration_met=True,
            min_queries_met=True,
            early_stopping_met=False,
            query_count=64,
            invalid_reason="Early stopping not met: too few queries for the 99th percentile.",
            percentiles_ns={"50.00": 0.005e9, "99.00": 0.01e9},
        )
        return run, _Queue(busy_s=1.0)


def test_a_trial_refused_for_another_reason_than_latency_says_that_reason():
    fake = _TooFewQueries({"a": 0.0, "b": 0.0})
    with pytest.raises(ConfigError) as info:
        run_server([_Named("a"), _Named("b")], _data(), _config(min_qps=20), runner=fake)
    message = str(info.value)
    assert "\n" not in message and "cannot be met" not in message  # the bound was met: not the latency's fault
    assert "p99 was 10.0 ms, within speed.latency_bound_ms = 50" in message
    assert "Early stopping not met: too few queries for the 99th percentile" in message
    assert "speed.server.min_queries" in message


def test_one_model_that_holds_nothing_is_reported_not_fatal():
    fake = FakeLoadGen({"a": 0.0, "b": 300.0})
    summary = run_server([_Named("a"), _Named("b")], _data(), _config(min_qps=20, repeats=2), runner=fake)
    tried = [c[1].target_qps for c in fake.calls if c[0] == "a"]
    assert summary.model("a").max_qps is None and summary.model("a").lowest_tried.target_qps == min(tried)
    assert summary.comparisons == [] and any("'a' held no rate" in w for w in summary.warnings)


def test_one_search_gives_no_interval_and_the_cap_is_a_lower_bound():
    fake = FakeLoadGen({"a": 1e9})
    summary = run_server([_Named("a")], _data(), _config(repeats=1, max_qps=400), runner=fake)
    model = summary.model("a")
    assert model.max_qps == 400.0 and model.at_cap and model.ci_low is None
    assert any("lower bound" in w for w in summary.warnings)
