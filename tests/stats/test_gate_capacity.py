"""The gate's capacity check: "the candidate's capacity is not below the baseline's by more than 5 %".

The capacity records come from the capacity scenario's own search on servers of known capacity,
computed exactly (``sim.queueing.serial_sender``): 50 and 25 requests per second at ``e2e_p99 ≤ 2 s``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sim.queueing import serial_sender

from headtohead.adapters.chat_stream import LoadTarget
from headtohead.config.speed import SpeedConfig
from headtohead.engines.capacity import run_capacity
from headtohead.errors import ConfigError
from headtohead.pipeline.gate import gate
from headtohead.report.words.gate import gate_paragraph
from headtohead.stats.gate import gate_decisions


@pytest.fixture(scope="module")
def result():
    """A run's result holding the capacity of ``fast`` (20 ms a request), ``slow`` (40 ms) and ``twin`` (20 ms)."""
    targets = [
        LoadTarget(name, [{}], [0], lambda text: 0, serial_sender(d, 0.03))
        for name, d in (("fast", 0.02), ("slow", 0.04), ("twin", 0.02))
    ]
    config = SpeedConfig(scenarios=["capacity"], capacity={"slo": {"e2e_p99": "2s"}, "requests": 100, "repeats": 3})
    capacity = run_capacity(targets, config, seed=3)
    return SimpleNamespace(speed=SimpleNamespace(capacity=capacity, loadgen=None))


def _check(result, baseline, candidate, margin=0.05):
    (decision,) = gate_decisions(
        result, None, baseline=baseline, candidate=candidate, accuracy_margin=None, slowdown_margin=None,
        capacity_margin=margin,
    )  # fmt: skip
    return decision


def test_half_the_capacity_fails_and_twice_passes(result):
    halved = _check(result, "fast", "slow")
    assert halved.outcome == "fail" and halved.check == "capacity" and halved.n == 3
    assert halved.high < 0.95 and halved.low <= 0.5 <= halved.high
    assert gate_paragraph([halved], "fast", "slow").endswith("so it sustains less than allowed, with 95 % confidence.")
    doubled = _check(result, "slow", "fast")
    assert doubled.outcome == "pass" and doubled.low >= 0.95 and doubled.estimate == pytest.approx(1 / halved.estimate)


def test_equal_servers_are_never_failed(result):
    assert _check(result, "fast", "twin").outcome in ("pass", "inconclusive")


def test_no_capacity_is_a_skipped_check_and_two_runs_are_refused():
    decision = _check(SimpleNamespace(speed=None), "a", "b")
    assert decision.outcome == "skipped" and decision.reason == "no_capacity"
    assert "the results hold no capacity of both models" in gate_paragraph([decision], "a", "b")
    with pytest.raises(ConfigError, match="--max-capacity-drop: two runs' capacities were not searched side by side"):
        gate("a.json", candidate_results="b.json", baseline="a", candidate="b", max_capacity_drop="5%")


def test_a_local_model_s_capacity_is_the_server_scenario_s_max_qps():
    """No endpoint capacity: the check reads the Server scenario's searches (LoadGen), by the same rule."""
    from headtohead.results.server import ServerSearch

    def searches(qps):
        return [
            ServerSearch(search=k, held_qps=q * 0.97, failed_qps=q * 1.03, estimate_qps=q) for k, q in enumerate(qps)
        ]

    models = [
        SimpleNamespace(name="bert", searches=searches([100, 104, 98])),
        SimpleNamespace(name="int8", searches=searches([99, 103, 99])),
    ]
    result = SimpleNamespace(speed=SimpleNamespace(capacity=None, loadgen=SimpleNamespace(models=models)))
    decision = _check(result, "bert", "int8")
    assert decision.check == "capacity (server)" and decision.outcome == "pass" and decision.low >= 0.95
    assert gate_paragraph([decision], "bert", "int8").startswith("PASS") and "Capacity (server): int8 sustains" in (
        gate_paragraph([decision], "bert", "int8")
    )
