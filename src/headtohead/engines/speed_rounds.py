"""The interleaved rounds of one speed scenario: warm-up, balanced orders, paired ratios, stop when decided.

Each round every model runs one block of forward calls (whole passes over the scenario's
timed inputs) in an order from a Williams design (:func:`headtohead.stats.design.round_order`:
every model runs before every other in half the rounds) or shuffled, so drift of the machine
and order effects hit every model alike. A round's ratio of two models is paired by input
(:func:`headtohead.stats.speed.round_log_ratios`: the median over the timed inputs of each
input's time ratio). GPU telemetry is sampled while the scenario runs and kept per model and
scenario.

With ``speed.precision`` (the default) the rounds go on, after ``speed.rounds`` and only at the
end of a whole cycle of balanced orders, until every ratio is decided — faster, or against
``speed.margin``, each decision read on the anytime-valid sequence
(:mod:`headtohead.stats.speed_sequence`) at ``1 − α/m`` over the run's ``m`` speed comparisons,
so that every ratio the rule decides is one Holm's verdict names faster
(:func:`headtohead.stats.speed_sequence.settlement`) — or known to ``±precision``, or the budget
is spent (:func:`scenario_budget`: ``speed.budget`` × the quality pass, at least
``speed.budget_floor_seconds``, at most ``speed.max_seconds``); without it, exactly ``speed.rounds``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Literal

import numpy as np

from headtohead.config.speed import SpeedConfig
from headtohead.engines.energy import EnergyLedger
from headtohead.engines.speed_model import StagedModel
from headtohead.engines.telemetry import TelemetrySampler
from headtohead.engines.timing import Clock, make_timer, run_timed
from headtohead.results.speed import (
    ScenarioRun,
    ScenarioTiming,
    SpeedComparison,
    StopReason,
    TelemetryStats,
    TimedScenario,
)
from headtohead.runtime.devices import is_cuda
from headtohead.stats.design import round_order, williams_design
from headtohead.stats.speed import SpeedRatio, paired_speed_ratio, round_log_ratios
from headtohead.stats.speed_sequence import (
    OPEN,
    PRECISION,
    SETTLED_NAMES,
    first_bounded_round,
    margin_confidence,
    settlement,
)

__all__ = ["run_scenario", "minimum_rounds", "scenario_budget", "SpeedProgress"]

#: ``progress(stage, done, total)``, e.g. ``("speed offline", 3, 10)``; ``total`` grows with adaptive rounds.
SpeedProgress = Callable[[str, int, int], None]


def _order(models: list[StagedModel], index: int, how: str, rng: np.random.Generator, seed: int) -> list[StagedModel]:
    if how == "random":
        return [models[i] for i in rng.permutation(len(models))]
    return [models[i] for i in round_order(len(models), index, seed=seed)]


#: One pair's comparison as the rounds stand: its ratio, its record, and its per-round log ratios.
_Pair = tuple[SpeedRatio, SpeedComparison, np.ndarray]


def _compare(
    models: list[StagedModel], rounds: Mapping[str, list[list[int]]], scenario: TimedScenario, config: SpeedConfig
) -> list[_Pair]:
    out = []
    inputs = len(models[0].staged[scenario])  # every model runs whole passes over the same timed inputs
    method: Literal["t", "anytime"] = "t" if config.precision is None else "anytime"
    for i, a in enumerate(models):
        for b in models[i + 1 :]:
            logs = round_log_ratios(rounds[a.name], rounds[b.name], inputs)  # paired by input within each round
            ratio = paired_speed_ratio(logs, confidence=config.confidence, method=method)
            # unadjusted here; measure_speed adjusts every comparison of the run together (Holm)
            faster = {"a": a.name, "b": b.name, None: None}[ratio.faster]
            out.append(
                (
                    ratio,
                    SpeedComparison(
                        scenario=scenario,
                        model_a=a.name,
                        model_b=b.name,
                        ratio=ratio.ratio,
                        ci_low=ratio.low,
                        ci_high=ratio.high,
                        confidence=ratio.confidence,
                        n_rounds=ratio.n_rounds,
                        interval=method,
                        faster=faster,
                        p_value=ratio.p_value,
                    ),
                    logs,
                )
            )
    return out


def _reached(comparisons: list[_Pair]) -> float:
    """The widest ratio interval's relative half-width."""
    return max(r.halfwidth for r, _, _ in comparisons)


def _samplers(models: list[StagedModel], config: SpeedConfig, clock: Clock) -> dict[str, TelemetrySampler]:
    return {d: TelemetrySampler(d, clock=clock) for d in {m.device for m in models} if config.telemetry and is_cuda(d)}


def _telemetry(
    model: StagedModel, config: SpeedConfig, samplers: Mapping[str, TelemetrySampler], intervals: list[tuple[int, int]]
) -> TelemetryStats | None:
    if not config.telemetry:
        return None
    sampler = samplers.get(model.device)  # all-null without a GPU: "not measurable here", unlike None
    return sampler.summarise(intervals) if sampler is not None else TelemetryStats()


def minimum_rounds(n_models: int, config: SpeedConfig) -> tuple[int, int]:
    """The rounds before the stopping rule is first read, and every how many rounds it is read after.

    The rule is read only where the orders are balanced (a whole Williams cycle), and only once
    the confidence sequence bounds the ratio at all.

    Examples
    --------
    >>> minimum_rounds(2, SpeedConfig()), minimum_rounds(3, SpeedConfig()), minimum_rounds(2, SpeedConfig(precision=None))
    ((6, 2), (6, 6), (6, 2))
    """
    period = len(williams_design(n_models)) if config.order == "balanced" and n_models > 1 else 1
    minimum = config.rounds if config.precision is None else max(config.rounds, first_bounded_round(config.confidence))
    return period * math.ceil(minimum / period) if config.precision is not None else minimum, period


def scenario_budget(config: SpeedConfig, quality_s: float | None, scenarios: int) -> float:
    """Seconds one timed scenario's rounds may spend before the stop says what it reached (the minimum always runs).

    ``speed.budget`` × the quality pass's seconds, shared equally by the ``scenarios`` timed, at
    least ``speed.budget_floor_seconds`` (shared the same way) and at most ``speed.max_seconds``;
    ``speed.max_seconds`` where no quality pass was timed (``quality_s`` None: ``h2h bench``) or
    ``speed.budget`` is null.

    Examples
    --------
    >>> scenario_budget(SpeedConfig(), 9.3, 2), scenario_budget(SpeedConfig(), 0.1, 2)
    (2.325, 1.0)
    >>> scenario_budget(SpeedConfig(), None, 2), scenario_budget(SpeedConfig(budget=None), 9.3, 2)
    (120.0, 120.0)
    >>> scenario_budget(SpeedConfig(budget=100.0), 9.3, 1)  # at most max_seconds
    120.0
    """
    if config.budget is None or quality_s is None:
        return config.max_seconds
    share = max(config.budget * quality_s, config.budget_floor_seconds) / max(1, scenarios)
    return min(share, config.max_seconds)


def _settlement(comparisons: list[_Pair], config: SpeedConfig, tests: int) -> list[int]:
    """How the rule finds each ratio now (:func:`~headtohead.stats.speed_sequence.settlement`)."""
    return [
        int(settlement(logs, config.confidence, config.precision, config.margin, tests)) for _, _, logs in comparisons
    ]


def _stop(
    comparisons: list[_Pair], config: SpeedConfig, spent_ns: int, tests: int, budget_s: float
) -> StopReason | None:
    """Why the rounds stop now, or ``None`` to go on (the rule of the module docstring)."""
    if config.precision is None or not comparisons:
        return "minimums_met"
    found = _settlement(comparisons, config, tests)
    if all(code == PRECISION for code in found):
        return "target_ci_reached"
    if all(code != OPEN for code in found):
        return "decided"
    return "time_budget" if spent_ns >= budget_s * 1e9 else None


def _settled(comparisons: list[_Pair], config: SpeedConfig, tests: int) -> list[SpeedComparison]:
    """The comparisons as recorded: each says how the rule had settled it when the rounds stopped."""
    if config.precision is None:
        return [c for _, c, _ in comparisons]
    found = _settlement(comparisons, config, tests)
    return [
        c.model_copy(update={"settled": SETTLED_NAMES.get(code)})
        for (_, c, _), code in zip(comparisons, found, strict=True)
    ]


def run_scenario(
    models: list[StagedModel],
    scenario: TimedScenario,
    batch_size: int,
    config: SpeedConfig,
    *,
    clock: Clock,
    rng: np.random.Generator,
    seed: int,
    progress: SpeedProgress | None,
    ledger: EnergyLedger | None = None,
    tests: int = 1,
    quality_s: float | None = None,
    scenarios: int = 1,
) -> ScenarioRun:
    """Warm up, then time interleaved rounds of forward calls; fill ``model.timings[scenario]``.

    ``tests`` is the run's number of speed comparisons, the family Holm adjusts the verdict over
    (:func:`headtohead.stats.speed_family.family_size`): the decisions of the stopping rule
    (faster, margin) are read at ``1 − α/tests``, so the rule stops on decisions the verdict makes.
    ``quality_s`` (the quality pass's seconds, ``None`` when none ran here) and ``scenarios`` (the
    timed scenarios sharing it) set the budget (:func:`scenario_budget`).
    """
    pool = len(models[0].staged[scenario])
    per_block = max(1, math.ceil(config.min_iterations / config.rounds))
    block_ns = config.min_seconds * 1e9 / config.rounds
    timers = {m.name: make_timer(m.device, clock=clock, sync_each=scenario == "single_stream") for m in models}
    warmup: dict[str, tuple[int, float]] = {}
    for m in models:
        began = clock()
        done = 0
        # A warm model ran the offline shape through its whole quality pass in this process: no
        # warm-up there; other shapes get warmup_iterations calls, not warmup_seconds of them (its
        # weights, allocator and thread pool are warm already).
        if (config.warmup_iterations or config.warmup_seconds) and not (m.warm and scenario == "offline"):
            done = len(
                run_timed(
                    timers[m.name],
                    m.adapter.forward,
                    m.staged[scenario],
                    min_iterations=config.warmup_iterations,
                    min_ns=0 if m.warm else config.warmup_seconds * 1e9,
                    clock=clock,
                )
            )
        warmup[m.name] = (done, (clock() - began) / 1e9)
    rounds: dict[str, list[list[int]]] = {m.name: [] for m in models}
    intervals: dict[str, list[tuple[int, int]]] = {m.name: [] for m in models}
    orders: list[list[str]] = []
    comparisons: list[_Pair] = []
    stop_reason: StopReason = "minimums_met"
    minimum, period = minimum_rounds(len(models), config)
    budget_s = scenario_budget(config, quality_s, scenarios)
    samplers = _samplers(models, config, clock)
    for sampler in samplers.values():
        sampler.start()
    started = clock()
    try:
        while True:
            order = _order(models, len(orders), config.order, rng, seed)
            for m in order:
                began, energy = clock(), ledger.begin(m.device) if ledger is not None else None
                rounds[m.name].append(
                    run_timed(
                        timers[m.name],
                        m.adapter.forward,
                        m.staged[scenario],
                        min_iterations=per_block,
                        min_ns=block_ns,
                        multiple_of=pool,
                        clock=clock,
                    )
                )
                if ledger is not None:
                    ledger.end(energy, m.device, m.name, scenario, len(rounds[m.name][-1]) * batch_size)
                intervals[m.name].append((began, clock()))
            orders.append([m.name for m in order])
            if progress is not None:
                progress(f"speed {scenario}", len(orders), max(minimum, len(orders)))
            if len(orders) < minimum or (len(orders) - minimum) % period:
                continue
            if len(models) > 1:
                comparisons = _compare(models, rounds, scenario, config)
            stop = _stop(comparisons, config, clock() - started, tests, budget_s)
            if stop is None:
                continue
            stop_reason = stop  # a budget spent is worded from the record (report.words.warnings)
            break
    finally:
        for sampler in samplers.values():
            sampler.stop()
    elapsed_s = (clock() - started) / 1e9
    adaptive = config.precision is not None  # decisions, a margin and a budget only stop rounds with a precision
    margin = config.margin if adaptive else None
    for m in models:
        m.timings[scenario] = ScenarioTiming(
            scenario=scenario,
            batch_size=batch_size,
            sequence_length=m.seq_len if m.seq_len_applied else None,
            timer=timers[m.name].name,
            warmup_iterations=warmup[m.name][0],
            warmup_s=warmup[m.name][1],
            rounds_ns=rounds[m.name],
            inputs=pool,
            telemetry=_telemetry(m, config, samplers, intervals[m.name]),
        )
    return ScenarioRun(
        scenario=scenario,
        batch_size=batch_size,
        rounds=len(orders),
        iterations_per_block=math.ceil(per_block / pool) * pool,
        stop_reason=stop_reason,
        precision=config.precision,
        precision_reached=_reached(comparisons) if comparisons else None,
        margin=margin,
        margin_tests=tests if adaptive else None,
        margin_confidence=margin_confidence(config.confidence, tests) if adaptive else None,
        budget_s=budget_s if adaptive else None,
        quality_s=quality_s if adaptive and config.budget is not None else None,
        elapsed_s=elapsed_s,
        round_orders=orders,
        comparisons=_settled(comparisons, config, tests),
    )
