"""One rule for speed: a scenario's stop, its verdict and its warnings never contradict each other.

``recorded/demo_speed_contradiction.json`` is the speed section ``h2h demo`` wrote on a loaded
2-core machine (schema 6, before issue 39): its single_stream stopped "decided against the margin
(widest ±330.1 %)" on a ratio whose 95 % sequence excluded 1/1.1 (p = 0.031), and the verdict, Holm
over the run's 2 speed comparisons (p = 0.061), then said "no significant difference" and a warning
"undecided … about 5365 rounds". Its recorded rounds are replayed here through the engine as it is
now: the stop reads the margin at 1 − α/2, so it goes on where it stopped, and when it stops the
words agree.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from sim.simulated import SimulatedAdapter

import headtohead.engines.speed as speed_engine
import headtohead.engines.speed_rounds as speed_rounds
from headtohead.config.speed import SpeedConfig
from headtohead.data.base import Dataset
from headtohead.report.words.speed import speed_sentence, speed_verdict_lines, stop_text, with_speed_sentences
from headtohead.report.words.warnings import budget_warning, instability_warnings
from headtohead.results.speed import HostLoad, ScenarioRun, SpeedComparison, SpeedSummary
from headtohead.stats.speed import round_log_ratios
from headtohead.stats.speed_sequence import BEYOND_MARGIN, OPEN, settlement
from headtohead.testing.fake_device import FakeClock

RECORDED = Path(__file__).parent / "recorded" / "demo_speed_contradiction.json"


@pytest.fixture(scope="module")
def recorded() -> SpeedSummary:
    return SpeedSummary.model_validate(json.loads(RECORDED.read_text(encoding="utf-8"))["speed"])


def _logs(summary: SpeedSummary, scenario: str) -> np.ndarray:
    a, b = (m.timing(scenario) for m in summary.models)
    return round_log_ratios(a.rounds_ns, b.rounds_ns, a.inputs)


def test_the_recorded_demo_stopped_on_a_decision_its_verdict_did_not_make(recorded):
    """What happened, read off the record: the old rule read the margin at 95 % each; the new one at 97.5 %."""
    run = recorded.scenario("single_stream")
    (c,) = run.comparisons
    assert run.rounds == 6 and run.stop_reason == "margin_decided" and c.faster is None
    assert c.ci_high < 1 / 1.1 and c.p_value == pytest.approx(0.0306, abs=1e-4) and c.p_adjusted > 0.05
    logs = _logs(recorded, "single_stream")
    settings = recorded.settings
    assert int(settlement(logs, 0.95, settings["precision"], settings["margin"], tests=1)) == BEYOND_MARGIN
    assert int(settlement(logs, 0.95, settings["precision"], settings["margin"], tests=2)) == OPEN  # goes on
    # an old record's words say which rule it stopped by, rather than claim a decision the verdict did not make
    assert stop_text(run) == (
        "every ratio known to ±5 % or decided against the margin by its own 95 % interval, before Holm's "
        "adjustment (a rule of results of version 6 and older)"
    )
    assert "widest" not in stop_text(run)


class Replay(SimulatedAdapter):
    """A demo model: ``a`` takes 1 ms a call; ``b`` (given the logs) a's time over the round's recorded ratio a/b.

    The recording is cycled once it runs out: the machine goes on as it was recorded.
    """

    def __init__(self, name: str, clock: FakeClock, logs: dict[str, np.ndarray] | None, where: dict[str, object]):
        super().__init__(name, cost_ns=0, clock=clock)
        self.logs, self.where = logs, where

    def forward(self, inputs):
        ns = 1_000_000.0
        if self.logs is not None and self.where.get("scenario") in self.logs:
            recorded = self.logs[str(self.where["scenario"])]
            ns *= math.exp(-recorded[int(self.where.get("round", 0)) % len(recorded)])
        self.clock.advance(round(ns))
        return np.zeros((len(inputs), 2))


@pytest.fixture(scope="module")
def replayed(recorded):
    """The recorded rounds through ``measure_speed`` with the demo's settings: the engine's own stop and verdict."""
    logs = {s: _logs(recorded, s) for s in ("offline", "single_stream")}
    where: dict[str, object] = {}
    clock = FakeClock()
    order, scenario = speed_rounds._order, speed_engine.run_scenario

    def in_order(models, index, how, rng, seed):  # the round being timed, for the replay
        where["round"] = index
        return order(models, index, how, rng, seed)

    def in_scenario(models, name, *args, **kwargs):
        where["scenario"] = name
        return scenario(models, name, *args, **kwargs)

    settings = {k: recorded.settings[k] for k in ("precision", "margin", "confidence", "rounds", "max_seconds")}
    config = SpeedConfig(
        **settings,
        scenarios=["offline", "single_stream"],
        warmup_iterations=0,
        warmup_seconds=0.0,
        min_iterations=1,
        min_seconds=0.0,
        pipeline_iterations=0,
        memory=False,
        telemetry=False,
        energy=False,
    )
    data = Dataset("digits", "features", np.zeros((64, 4), np.float32), np.zeros(64, np.int64), ("a", "b"))
    quiet = HostLoad(cpu_count=2, load_average=[0.0, 0.0, 0.0], other_cpu_percent=0.0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(speed_rounds, "_order", in_order)
        patch.setattr(speed_engine, "run_scenario", in_scenario)
        patch.setattr(speed_engine, "host_load", lambda: quiet)
        # the recording's model_a takes 1 ms; model_b a's time over the recorded ratio a/b of the round
        models = [Replay("resnet-slim", clock, None, where), Replay("mobilenetv3", clock, logs, where)]
        summary = speed_engine.measure_speed(models, data, config, batch_size=8, seed=1, clock=clock)
    return logs, with_speed_sentences(summary)


def test_the_replayed_rounds_are_the_recorded_ones(replayed, recorded):
    logs, summary = replayed
    for scenario, recorded_logs in logs.items():
        again = _logs(summary, scenario)
        n = min(len(again), len(recorded_logs))
        assert np.allclose(again[:n], recorded_logs[:n], atol=1e-5), scenario


def test_the_stop_and_the_verdict_of_each_scenario_agree(replayed):
    _, summary = replayed
    warnings = instability_warnings(summary)
    assert summary.scenario("single_stream").rounds > 6  # the new rule did not stop where the demo did
    for run in summary.scenarios:
        (c,) = run.comparisons
        said = stop_text(run)
        assert run.margin == 0.1 and run.margin_tests == 2 and run.margin_confidence == pytest.approx(0.975)
        assert run.stop_reason == "decided" and c.settled in ("beyond_margin", "faster"), (run.scenario, said)
        # the stop decided a model faster (since issue 42 "faster" alone is a decision), or faster by more than the
        # margin: the verdict names it, no warning says undecided
        how = "faster" if c.settled == "faster" else "beyond the 10 % margin (a model faster by more than it)"
        assert said == (
            f"every ratio settled: 1 {how} — each decision read at 97.5 %, α split over the run's 2 speed comparisons"
        )
        assert c.ratio < 1 / 1.1 and c.faster == "resnet-slim" and c.p_adjusted <= 0.05  # a: its time is the smaller
        assert c.verdict == speed_sentence(c) and c.verdict.startswith("resnet-slim is ")
        assert " faster than mobilenetv3 " in c.verdict and "no significant difference" not in c.verdict
        assert not [w for w in warnings if w.startswith(f"{run.scenario}:") and "undecided" in w]
        assert "widest" not in said and "±5 %" not in said  # no width beside a ratio that was not measured to it
    lines = speed_verdict_lines(summary)
    assert sum("every ratio settled: 1 " in line for line in lines) == 2


def _budget_run(*comparisons: SpeedComparison, quality_s: float | None = 0.305) -> ScenarioRun:
    return ScenarioRun(
        scenario="offline",
        batch_size=256,
        rounds=6,
        iterations_per_block=1,
        stop_reason="time_budget",
        precision=0.05,
        precision_reached=max(max(c.ci_high / c.ratio - 1, 1 - c.ci_low / c.ratio) for c in comparisons),
        margin_tests=2,
        margin_confidence=0.975,
        budget_s=1.0,
        quality_s=quality_s,
        elapsed_s=1.1,
        round_orders=[["a", "b"]] * 6,
        comparisons=list(comparisons),
    )


def _pair(b: str, ratio: float, low: float, high: float, settled: str | None) -> SpeedComparison:
    return SpeedComparison(
        scenario="offline", model_a="a", model_b=b, ratio=ratio, ci_low=low, ci_high=high, confidence=0.95,
        n_rounds=6, interval="anytime", settled=settled, faster="a" if settled else None, p_value=None,
    )  # fmt: skip


def test_a_spent_budget_says_what_the_undecided_ratios_reached_and_the_budget():
    """Issue 42: '±x % at 95 %' of the open ratios (the widest side of each interval around its ratio), the
    decided ones named, the budget and the quality pass it scaled with; 'undecided' while nothing is bounded."""
    open_ = _pair("b", 1.0, 0.8, 1.2, None)  # ±20 %
    assert stop_text(_budget_run(open_)) == (
        "undecided at ±20 % at 95 % (±5 % asked for): budget of 1 s spent (the quality pass took 305 ms)"
    )
    decided = _pair("c", 0.5, 0.4, 0.6, "faster")
    assert stop_text(_budget_run(open_, decided, quality_s=None)) == (
        "1 undecided at ±20 % at 95 % (±5 % asked for); 1 faster: budget of 1 s spent"
    )
    unbounded = _pair("b", 1.0, 0.0, float("inf"), None)
    assert stop_text(_budget_run(unbounded)) == "undecided: budget of 1 s spent (the quality pass took 305 ms)"
    (warning,) = [w for w in [budget_warning(_budget_run(open_, decided))] if w is not None]
    assert warning.startswith("offline: the speed budget of 1 s (the quality pass took 305 ms) was spent before")
    assert "— 1 of 2 undecided; raise speed.budget" in warning
    # a run of version 8 stored its own warning: none is derived again
    old = _budget_run(open_).model_copy(update={"budget_s": None, "quality_s": None})
    assert budget_warning(old) is None and stop_text(old) == "time budget ran out at ±20 % (±5 % asked for)"
