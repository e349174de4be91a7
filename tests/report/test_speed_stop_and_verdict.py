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
from headtohead.report.words.warnings import instability_warnings
from headtohead.results.speed import HostLoad, SpeedSummary
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
