"""Cascades (``kind: cascade``) built from their parts' predictions, and the split that keeps them honest.

A cascade asks nothing: once its two parts finished, :func:`build_cascades` reads their stored
predictions (the cheap model's class probabilities give the deferral score), chooses the threshold on
the calibration examples by Learn-then-Test (:func:`headtohead.stats.cascade.choose_threshold`) and
makes the cascade's predictions on every example: the cheap model's answer where it is sure, the
expensive model's elsewhere. The calibration examples are a seeded share of the data drawn once per run
(:func:`calibration_draw`; whole groups with ``data.group_column``); a run holding a cascade judges
**every** model on the other examples only (:func:`evaluation_only`), so the cascade is paired with its
parts and the other models on the same examples, none of which chose its threshold. Its cost and
latency follow from its deferral share once the speed pass measured its parts (:func:`with_cascade_costs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, cast

import numpy as np

from headtohead.config.schema import Experiment
from headtohead.engines.priced import priced_speed
from headtohead.errors import ModelError
from headtohead.pipeline.model_pass import ModelOutcome
from headtohead.pipeline.setup import RunSetup
from headtohead.results.cascade import CascadeRecord
from headtohead.results.cost import one_cost_per_million
from headtohead.results.predictions import ModelPredictions, Predictions
from headtohead.results.records import ModelRecord, RunResult
from headtohead.results.speed import ModelSpeed
from headtohead.stats.cascade import cascade_latency, choose_threshold, deferral_scores, deferred
from headtohead.stats.quality import compute_quality

__all__ = [
    "cascades",
    "calibration_draw",
    "calibration_examples",
    "build_cascades",
    "evaluation_only",
    "with_cascade_costs",
]


class CascadeSettings(Protocol):
    """What a model built from two others (``ModelConfig.parts``: a cascade) says of itself (the family's keys,
    read here without importing the family's module, as no module but its own three does)."""

    name: str
    kind: str
    source: str
    cheap: str
    expensive: str
    score: Literal["top", "margin"]
    max_drop: float
    delta: float
    calibration: float

    def parts(self) -> tuple[str, ...]: ...


#: Mixed into the run's seed, so the calibration draw is its own stream (not the plan's, not a model's).
_STREAM = 4242


def cascades(exp: Experiment) -> list[CascadeSettings]:
    """The run's cascades, in the experiment's order."""
    return [cast(CascadeSettings, m) for m in exp.models if m.parts()]


def calibration_draw(n_examples: int, seed: int, groups: np.ndarray | None = None) -> np.ndarray:
    """One uniform number per dataset example (in dataset order), the same for every example of a group.

    A cascade whose ``calibration`` share is ``s`` chooses its threshold on the examples drawn below
    ``s``; the run's statistics read the examples drawn at or above the largest share of its cascades.

    Examples
    --------
    >>> calibration_draw(4, 0, np.array(["a", "b", "a", "c"]))[[0, 2]].tolist() == [calibration_draw(
    ...     4, 0, np.array(["a", "b", "a", "c"]))[0]] * 2
    True
    """
    rng = np.random.default_rng([seed, _STREAM])
    if groups is None:
        return rng.random(n_examples)
    names, which = np.unique(np.asarray([str(g) for g in groups]), return_inverse=True)
    return rng.random(len(names))[which]


def calibration_examples(exp: Experiment, n_examples: int, groups: np.ndarray | None) -> list[int]:
    """Dataset indices no statistic of the run may read: those some cascade chose its threshold on."""
    found = cascades(exp)
    if not found:
        return []
    share = max(c.calibration for c in found)
    return [int(i) for i in np.flatnonzero(calibration_draw(n_examples, exp.seed, groups) < share)]


def evaluation_only(
    predictions: Predictions | None, held_out: Sequence[int], exp: Experiment | None = None
) -> Predictions | None:
    """The predictions the statistics read: every model on the examples no cascade calibrated on.

    ``predictions`` are those the statistics may read (``pipeline.missing.judged_predictions``); a cascade
    one of whose parts is not among them (its answers went missing) is left out with it (with ``exp``).
    """
    if predictions is None:
        return None
    if exp is not None:
        judged = set(predictions.models)
        orphans = [c.name for c in cascades(exp) if c.name in judged and not set(c.parts()) <= judged]
        if orphans:
            predictions = predictions.restricted(models=[m for m in predictions.models if m not in orphans])
    if not held_out:
        return predictions
    rows = ~np.isin(predictions.order, np.asarray(held_out, dtype=np.int64))
    return predictions.restricted(rows=rows) if rows.any() else None


def build_cascades(setup: RunSetup, predictions: Predictions, records: Sequence[ModelRecord]) -> list[ModelOutcome]:
    """Each cascade of the run built from its parts' predictions (which must all be held)."""
    exp = setup.experiment
    draw = calibration_draw(len(setup.dataset), exp.seed, setup.dataset.groups)
    held_out = calibration_examples(exp, len(setup.dataset), setup.dataset.groups)
    evaluation = ~np.isin(predictions.order, np.asarray(held_out, dtype=np.int64))
    by_name = {r.name: r for r in records}
    return [
        _build(setup, cfg, predictions, draw[predictions.order] < cfg.calibration, evaluation, by_name)
        for cfg in cascades(exp)
    ]


def _build(
    setup: RunSetup,
    cfg: CascadeSettings,
    predictions: Predictions,
    calibration: np.ndarray,
    evaluation: np.ndarray,
    records: dict[str, ModelRecord],
) -> ModelOutcome:
    """One cascade: its threshold on ``calibration`` rows, its answers on every row, its figures on ``evaluation``."""
    cheap, expensive = predictions[cfg.cheap], predictions[cfg.expensive]
    if cheap.proba is None:
        raise ModelError(
            f"model '{cfg.name}' (kind cascade): its cheap model '{cfg.cheap}' gave no class probabilities, so it "
            f"has no deferral score; give a cheap model with probabilities (a prediction file with proba_ columns, "
            f"outputs: probabilities)"
        )
    y = predictions.y_true
    scores = deferral_scores(cheap.proba, cfg.score)
    cheap_right, expensive_right = np.asarray(cheap.pred == y), np.asarray(expensive.pred == y)
    choice = choose_threshold(
        scores[calibration],
        cheap_right[calibration],
        expensive_right[calibration],
        max_drop=cfg.max_drop,
        delta=cfg.delta,
    )
    defer = deferred(scores, choice.threshold)
    pred = np.where(defer, expensive.pred, cheap.pred)
    proba = None if expensive.proba is None else np.where(defer[:, None], expensive.proba, cheap.proba)
    right = np.asarray(pred == y)
    figures = CascadeRecord(
        cheap=cfg.cheap,
        expensive=cfg.expensive,
        score=cfg.score,
        max_drop=cfg.max_drop,
        delta=cfg.delta,
        calibration_examples=sorted(int(i) for i in predictions.order[calibration]),
        threshold=choice.threshold,
        p_value=choice.p_value,
        thresholds_tested=choice.tested,
        calibration_harms=choice.harms,
        n_evaluation=int(evaluation.sum()),
        deferred=int(defer[evaluation].sum()),
        correct=int(right[evaluation].sum()),
        expensive_correct=int(expensive_right[evaluation].sum()),
        cheap_correct=int(cheap_right[evaluation].sum()),
    )
    return ModelOutcome(_record(setup, cfg, predictions, pred, proba, figures, records), ModelPredictions(pred, proba))


def _record(
    setup: RunSetup,
    cfg: CascadeSettings,
    predictions: Predictions,
    pred: np.ndarray,
    proba: np.ndarray | None,
    figures: CascadeRecord,
    records: dict[str, ModelRecord],
) -> ModelRecord:
    """The cascade's record: its quality over every example, as every model's record holds it."""
    plan, dataset = setup.plan, setup.dataset
    quality = compute_quality(
        predictions.y_true, pred, proba, dataset.label_names, predictions.outside_labels, example_index=plan.order
    )
    devices = dict.fromkeys(records[p].device for p in cfg.parts())
    return ModelRecord(
        name=cfg.name,
        kind=cfg.kind,
        source=cfg.source,
        outputs="stored",
        num_parameters=None,
        parameter_bytes=None,
        label_alignment=None,
        label_columns=None,
        labels_outside_data=list(predictions.outside_labels),
        index_order_hash=plan.hash(),
        batch_size=plan.batch_size,
        device=" + ".join(devices),
        n_batches=len(plan),
        load_time_s=0.0,
        eval_time_s=0.0,
        quality=quality,
        cascade=figures,
    )


def _latencies_s(speed: ModelSpeed | None) -> np.ndarray | None:
    """A part's measured latency per example: its batch-1 calls, else an endpoint's requests; ``None``: not timed."""
    if speed is None:
        return None
    if speed.single_stream is not None and speed.single_stream.batch_size == 1:
        return np.asarray(speed.single_stream.samples_ns, dtype=float) / 1e9
    if speed.endpoint is not None and speed.endpoint.latencies_s:
        return np.asarray(speed.endpoint.latencies_s, dtype=float)
    return None


def with_cascade_costs(result: RunResult) -> tuple[RunResult, list[ModelSpeed]]:
    """Each cascade's cost and latency from its parts' (cheap always, expensive on its deferral share), and the
    speed-summary entries of those with a cost or a latency."""
    speeds = {m.name: m for m in result.speed.models} if result.speed is not None else {}
    models, entries = [], []
    for record in result.models:
        figures = record.cascade
        if figures is None or figures.deferral_share is None:
            models.append(record)
            continue
        share = figures.deferral_share
        cheap, expensive = speeds.get(figures.cheap), speeds.get(figures.expensive)
        costs = [one_cost_per_million(s.cost) if s is not None else None for s in (cheap, expensive)]
        cost = costs[0] + share * costs[1] if costs[0] is not None and costs[1] is not None else None
        latency = cascade_latency(_latencies_s(cheap), _latencies_s(expensive), share)
        figures = figures.model_copy(
            update={
                "cost_per_million": cost,
                "latency_mean_s": latency[0] if latency else None,
                "latency_p99_s": latency[1] if latency else None,
            }
        )
        models.append(record.model_copy(update={"cascade": figures}))
        if cost is not None:
            entries.append(priced_speed(record, cost, scenario="cascade"))
    return result.model_copy(update={"models": models}), entries
