"""The metrics an experiment picks from the catalogue (``stats.metrics``): per model, per pair, per slice.

See ``docs/statistics.md`` §14.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from headtohead.errors import ConfigError
from headtohead.metrics import CATALOGUE, check_names
from headtohead.results.comparison import Estimate, MetricDifference, ModelStats
from headtohead.results.predictions import Predictions
from headtohead.results.slices import SliceSummary
from headtohead.stats.bootstrap import Interval, bootstrap_metrics, paired_bootstrap
from headtohead.stats.delong import delong_ovr, delong_paired
from headtohead.stats.intervals import estimate_from_interval

__all__ = ["extra_metrics", "model_metrics", "pair_metrics", "slice_metrics"]


def extra_metrics(picked: Sequence[str]) -> list[str]:
    """The picked names that are not reported anyway (the default metrics), in order.

    Raises
    ------
    ConfigError
        A name the catalogue lacks (one line, with the choices).
    """
    try:
        names = check_names(list(picked))
    except ValueError as error:
        raise ConfigError(f"metrics: {error}") from None
    return [m for m in names if not CATALOGUE[m].default]


def _split(picked: Sequence[str]) -> tuple[list[str], list[str]]:
    return [m for m in picked if not CATALOGUE[m].needs_proba], [m for m in picked if CATALOGUE[m].needs_proba]


def _safely(run: Any, *args: Any, **kwargs: Any) -> dict[str, Interval]:
    """The intervals, or none where the rows cannot define the metric (ROC AUC on rows of one class)."""
    try:
        return dict(run(*args, **kwargs))
    except ValueError:
        return {}


def model_metrics(
    name: str, predictions: Predictions, picked: Sequence[str], *, options: dict[str, Any], seed: Any
) -> dict[str, Estimate]:
    """``{metric: estimate}`` of one model (a metric of probabilities absent without them).

    ``options``: ``confidence``, ``n_resamples``, ``method``, ``n_bins``, ``groups``, ``label_names``.
    """
    labels, probas = _split(picked)
    model, y, groups = predictions[name], predictions.y_true, options["groups"]
    rng = np.random.default_rng(seed)
    out = bootstrap_metrics(y, model.pred, None, metrics=labels, seed=rng, **options) if labels else {}
    if probas and model.proba is not None:
        rows = model.scored
        out |= _safely(
            bootstrap_metrics,
            y[rows],
            model.pred[rows],
            model.proba[rows],
            metrics=probas,
            seed=rng,
            **{**options, "groups": None if groups is None else groups[rows]},
        )
    return {m: estimate_from_interval(out[m]) for m in picked if m in out}


def _delong(
    y: np.ndarray, proba_a: np.ndarray, proba_b: np.ndarray, options: dict[str, Any]
) -> tuple[Interval, float] | None:
    """DeLong's interval and p-value of the ROC AUC difference where they hold (``docs/statistics.md``): independent
    examples, two of each class present and a variance above 0; ``None`` elsewhere (the bootstrap's interval then).
    Two classes: ``delong`` (the AUC of class 1's probability); more: ``delong-ovr`` (the one-vs-rest macro AUC).
    """
    if options["groups"] is not None:
        return None  # DeLong's covariance takes examples as independent: the cluster bootstrap
    binary, confidence = len(options["label_names"]) == 2, options["confidence"]
    try:
        if binary:
            found = delong_paired(y == 1, proba_a[:, 1], proba_b[:, 1], confidence=confidence)
        else:
            found = delong_ovr(y, proba_a, proba_b, confidence=confidence)
    except ValueError:  # fewer than two examples of a class (or one class)
        return None
    if found.p_value is None:
        return None  # no variance (the models rank every pair alike): the bootstrap says what it can
    method = "delong" if binary else "delong-ovr"
    interval = Interval("roc_auc", found.difference, found.low, found.high, method, found.confidence, found.std_error)
    return interval, found.p_value


def pair_metrics(
    a: ModelStats, b: ModelStats, predictions: Predictions, picked: Sequence[str], *, options: dict[str, Any], seed: Any
) -> list[MetricDifference]:
    """``metric(a) − metric(b)`` of every picked metric both models have, with its paired interval.

    The interval is the paired bootstrap's, but ROC AUC's on independent examples: DeLong's interval and p-value
    (``method`` ``delong``, or ``delong-ovr`` for the one-vs-rest macro AUC of more classes;
    :mod:`headtohead.stats.delong`).
    """
    labels, probas = _split(picked)
    ma, mb, y, groups = predictions[a.name], predictions[b.name], predictions.y_true, options["groups"]
    rng = np.random.default_rng(seed)
    out = paired_bootstrap(y, ma.pred, mb.pred, metrics=labels, seed=rng, **options) if labels else {}
    both = ma.scored & mb.scored
    delong, p_values = None, {}
    if "roc_auc" in probas and ma.proba is not None and mb.proba is not None:
        delong = _delong(y[both], ma.proba[both], mb.proba[both], options)
        probas = [m for m in probas if m != "roc_auc"] if delong is not None else probas
    if probas and ma.proba is not None and mb.proba is not None:
        out |= _safely(
            paired_bootstrap,
            y[both],
            ma.pred[both],
            mb.pred[both],
            ma.proba[both],
            mb.proba[both],
            metrics=probas,
            seed=rng,
            **{**options, "groups": None if groups is None else groups[both]},
        )
    if delong is not None:
        out["roc_auc"], p_values["roc_auc"] = delong
    return [
        MetricDifference(
            metric=m,
            value_a=a.metrics[m].value,
            value_b=b.metrics[m].value,
            difference=out[m].estimate,
            ci_low=out[m].low,
            ci_high=out[m].high,
            method=out[m].method,
            confidence=out[m].confidence,
            higher_is_better=CATALOGUE[m].higher_is_better,
            note=out[m].note,
            p_value=p_values.get(m),
            on_answered_rows=CATALOGUE[m].needs_proba and not both.all(),
        )
        for m in picked
        if m in out and m in a.metrics and m in b.metrics
    ]


def slice_metrics(
    summary: SliceSummary, masks: Sequence[np.ndarray], predictions: Predictions, picked: Sequence[str]
) -> SliceSummary:
    """``summary`` with each model's point value of every picked metric on each slice (no interval).

    ``masks[i]`` holds the rows (plan order) of ``summary.slices[i]``. On a slice whose rows hold
    one class (every class slice) a picked metric is left out: MCC would read 0 and ROC AUC is
    undefined there; so is a metric of probabilities for a model without them.
    """
    y, k = predictions.y_true, len(predictions.label_names)
    slices = []
    for result, mask in zip(summary.slices, masks, strict=True):
        accuracies = []
        for entry in result.accuracies:
            model = predictions[entry.model]
            values = {}
            for name in picked:
                metric = CATALOGUE[name]
                if metric.needs_proba and model.proba is None:
                    continue
                rows = mask & model.scored if metric.needs_proba else mask
                if len(np.unique(y[rows])) < 2:  # a slice of one class: no correlation, no ranking to measure
                    continue
                proba = None if model.proba is None else model.proba[rows]
                value = metric.point(y[rows], model.pred[rows], proba, k) if metric.point and rows.any() else None
                if value is not None and np.isfinite(value):
                    values[name] = value
            accuracies.append(entry.model_copy(update={"metrics": values}))
        slices.append(result.model_copy(update={"accuracies": accuracies}))
    return summary.model_copy(update={"slices": slices})
