"""A run's one decision across quality, speed and cost: its models' measurements handed to ``stats.dominance``.

Reads each model's per-example correctness (``predictions.npz``), its rounds in the scenario ``decide``
names (or an endpoint's per-request latencies), its cost per million predictions from the one cost record
(``results.cost.cost_record``: price per hour × measured throughput, or tokens × price) and, when asked,
its peak memory; an axis a model was not measured on is left out for every model and said so. The
numbers go into a :class:`~headtohead.results.decision.DecisionSummary`, their sentences from
``report.words.decision``.
"""

from __future__ import annotations

import numpy as np

from headtohead.config.schema import Experiment
from headtohead.report.rows.summary import PASS_WORDS
from headtohead.report.words.decision import with_decision_sentences
from headtohead.results.cost import cost_record
from headtohead.results.decision import AxisComparison, AxisValue, DecisionSummary, ModelFront, PairDominance
from headtohead.results.predictions import Predictions
from headtohead.results.records import ModelRecord, RunResult
from headtohead.results.speed import ModelSpeed, SpeedSummary
from headtohead.stats.dominance import TWO_LEVEL, Decision, Measured, axis_interval, decide, quality_interval

__all__ = ["run_decision", "measurements"]

#: Cost records that carry no measurement of their own, and where their figure comes from.
GIVEN_COSTS = {"priced": "price_per_1m given", "cascade": "its parts' costs by its deferral share"}


def _latency(speed: ModelSpeed, scenario: str | None) -> Measured | None:
    timing = speed.timing(scenario) if scenario in ("offline", "single_stream") else None
    if timing is not None and timing.rounds_ns:
        rounds = tuple(tuple(float(v) for v in r) for r in timing.rounds_ns)
        return Measured(rounds=rounds, inputs=timing.inputs, per_call=timing.batch_size * 1e9)
    if speed.endpoint is not None and speed.endpoint.latencies_s:
        return Measured(sample=np.asarray(speed.endpoint.latencies_s, dtype=np.float64))
    return None


def _cost(speed: ModelSpeed, record: ModelRecord) -> tuple[Measured, str] | None:
    found = cost_record(speed.cost)
    if found is None or found.cost_per_million is None:
        return None
    if found.scenario in GIVEN_COSTS:  # stated, or a cascade's from its parts: no sample to resample
        return Measured(exact=found.cost_per_million), GIVEN_COSTS[found.scenario]
    if found.price_per_prediction is not None:
        answers = record.answers
        price = answers.endpoint.price if answers is not None and answers.endpoint is not None else None
        known = [a for a in answers.answers if a.tokens_in is not None and a.tokens_out is not None] if answers else []
        if price is not None and len(known) > 1:  # per example: its uncertainty is the examples'
            per = [(a.tokens_in or 0) * price.input_per_1m + (a.tokens_out or 0) * price.output_per_1m for a in known]
            return Measured(sample=np.asarray(per, dtype=np.float64)), "tokens × price"
        return Measured(exact=found.cost_per_million), "tokens × price"
    timing = speed.timing(found.scenario) if found.scenario in ("offline", "single_stream") else None
    if timing is None or not timing.rounds_ns or found.price_per_hour is None:
        return Measured(exact=found.cost_per_million), f"price per hour × {found.scenario} throughput"
    rounds = tuple(tuple(float(v) for v in r) for r in timing.rounds_ns)
    scale = found.price_per_hour / 3600.0 * 1e6  # money per million predictions per second of prediction
    measured = Measured(rounds=rounds, inputs=timing.inputs, per_call=timing.batch_size * 1e9, scale=scale)
    return measured, f"price per hour × {found.scenario} throughput"


def _memory(speed: ModelSpeed) -> Measured | None:
    memory = speed.memory
    if memory is None:
        return None
    peak = memory.cuda_model_peak_mb if speed.device.startswith("cuda") else memory.model_peak_mb
    return Measured(exact=peak) if peak is not None and peak > 0 else None


def measurements(
    exp: Experiment, speed: SpeedSummary | None, records: dict[str, ModelRecord]
) -> tuple[dict[str, dict[str, Measured]], dict[str, list[str]], dict[str, str]]:
    """Each asked axis's measurements, the axes not measured for some model (and which), each model's cost source."""
    scenario = exp.decide_scenario
    found: dict[str, dict[str, Measured]] = {}
    missing: dict[str, list[str]] = {}
    cost_from: dict[str, str] = {}
    for axis in exp.decide.axes[1:]:
        per: dict[str, Measured] = {}
        for name, record in records.items():
            one = None
            model_speed = _speed_of(speed, name)
            if model_speed is not None:
                if axis == "latency":
                    one = _latency(model_speed, scenario)
                elif axis == "memory":
                    one = _memory(model_speed)
                else:
                    priced = _cost(model_speed, record)
                    if priced is not None:
                        one, cost_from[name] = priced
            if one is None:
                missing.setdefault(axis, []).append(name)
            else:
                per[name] = one
        if axis not in missing:
            found[axis] = per
    return found, missing, {k: v for k, v in cost_from.items() if "cost" in found}


def _speed_of(speed: SpeedSummary | None, name: str) -> ModelSpeed | None:
    if speed is None:
        return None
    try:
        return speed.model(name)
    except KeyError:
        return None


def run_decision(exp: Experiment, result: RunResult, predictions: Predictions) -> DecisionSummary | None:
    """The decision of a finished run, or ``None`` when fewer than two models can be decided or no axis beyond
    quality was measured for every model (the ranking of the statistics already says that much)."""
    left_out: dict[str, str] = {}
    records: dict[str, ModelRecord] = {}
    for record in result.models:  # a model measured several ways is decided on its mean over its passes
        if record.missing_examples or record.name not in predictions.models or not record.has_quality:
            left_out[record.name] = "no quality on every example"
        else:
            records[record.name] = record
    if len(records) < 2:
        return None
    measured, missing, cost_from = measurements(exp, result.speed, records)
    if not measured:
        return None
    correct = {name: predictions[name].correct(predictions.y_true) for name in records}
    alpha = exp.stats.alpha
    anytime = {axis: _stopped_on_data(result.speed, exp.decide_scenario) for axis in ("latency", "cost")}
    decision = decide(
        correct,
        measured,
        alpha=alpha,
        margin=exp.decide.quality_margin,
        groups=predictions.groups,
        anytime=anytime,
        resamples=exp.decide.resamples,
        seed=exp.seed,
    )
    summary = DecisionSummary(
        axes=list(decision.axes),
        not_measured=missing,
        scenario=exp.decide_scenario if "latency" in measured else None,
        cost_from=cost_from,
        alpha=alpha,
        quality_margin=exp.decide.quality_margin,
        resamples=exp.decide.resamples,
        seed=exp.seed,
        left_out=left_out,
        models=_fronts(decision, correct, measured, alpha, predictions.groups),
        pairs=_pairs(decision, records),
    )
    return with_decision_sentences(summary)


def _stopped_on_data(speed: SpeedSummary | None, scenario: str | None) -> bool:
    """Whether the scenario's ratios were read on the confidence sequence (the rounds stopped on the data)."""
    if speed is None or scenario is None:
        return False
    run = next((s for s in speed.scenarios if s.scenario == scenario), None)
    return run is not None and any(c.interval == "anytime" for c in run.comparisons)


def _fronts(
    decision: Decision,
    correct: dict[str, np.ndarray],
    measured: dict[str, dict[str, Measured]],
    alpha: float,
    groups: np.ndarray | None,
) -> list[ModelFront]:
    fronts = []
    for name, right in correct.items():
        value, low, high = quality_interval(right, 1.0 - alpha, groups)
        values = [AxisValue(axis="quality", value=value, ci_low=low, ci_high=high)]
        for axis, per in measured.items():
            value, lo, hi = axis_interval(per[name], 1.0 - alpha)
            values.append(AxisValue(axis=axis, value=value, ci_low=lo, ci_high=hi))  # type: ignore[arg-type]
        fronts.append(
            ModelFront(
                name=name,
                front=decision.labels[name],
                dominated_by=list(decision.dominated_by[name]),
                p_front=decision.p_front[name],
                values=values,
            )
        )
    return fronts


def _over(a: ModelRecord, b: ModelRecord) -> str:
    """What a two-level quality gap pools over, in the pair's words: ``runs``, ``prompts`` or both."""
    return " and ".join(dict.fromkeys(PASS_WORDS.get(r.passes[0].factor, "passes") for r in (a, b) if r.passes))


def _pairs(decision: Decision, records: dict[str, ModelRecord]) -> list[PairDominance]:
    pairs = []
    for p in decision.pairs:
        gap, low, high = p.quality_gap
        method = p.quality_method
        if method == TWO_LEVEL:  # the statistics pool "passes"; the words name what varied
            method = f"two-level t over {_over(records[p.a], records[p.b])}"
        axes = [
            AxisComparison(
                axis="quality",
                estimate=gap,
                ci_low=low,
                ci_high=high,
                method=method,
                holds=p.holds["quality"],
            )
        ]
        axes += [
            AxisComparison(
                axis=axis,  # type: ignore[arg-type]
                estimate=r.ratio,
                ci_low=r.low,
                ci_high=r.high,
                method=r.method,
                holds=p.holds[axis],
            )
            for axis, r in p.ratios.items()
        ]
        pairs.append(PairDominance(model_a=p.a, model_b=p.b, dominates=p.dominates, axes=axes))
    return pairs
