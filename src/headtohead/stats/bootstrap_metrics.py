"""Quality metrics written as functions of *summed per-example statistics*.

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from headtohead.errors import ConfigError, did_you_mean, listing
from headtohead.metrics import CATALOGUE, PROBA_STATS, Compute, Examples, Metric, f1_per_class, register, safe_ratio

__all__ = [
    "Examples",
    "Stat",
    "MetricSpec",
    "METRICS",
    "PER_CLASS_METRICS",
    "register_metric",
    "metric_spec",
    "example_stats",
    "bin_index",
    "as_probabilities",
    "per_example_brier",
    "per_example_nll",
]

#: A metric as the bootstrap reads it: a catalogue entry (:class:`headtohead.metrics.Metric`).
MetricSpec = Metric
#: The catalogue (:data:`headtohead.metrics.CATALOGUE`): the bootstrap computes the entries with a formula.
METRICS = CATALOGUE


@dataclass(frozen=True)
class Stat:
    """One per-example statistic: a code in ``[0, size)`` per example, optionally weighted.

    Summed over (resampled) examples it gives a histogram of length ``size``.
    """

    codes: np.ndarray
    size: int
    weights: np.ndarray | None = None


def register_metric(name: str, *, needs: Sequence[str], higher_is_better: bool = True) -> Callable[[Compute], Compute]:
    """Register ``compute(sums, n) -> (R,)`` under ``name`` in the catalogue (a decorator).

    The entry is a plain number (``scale="plain"``), picked per experiment (``stats.metrics``);
    its value on all rows is the formula's. For a label and a scale, register a
    :class:`headtohead.metrics.Metric` with :func:`headtohead.metrics.register`.

    Parameters
    ----------
    name : str
        Metric name; must be new.
    needs : sequence of str
        Statistics from :data:`headtohead.metrics.STAT_NAMES` the function reads.
    higher_is_better : bool
        Direction of the metric (reports use it to say which model is better).
    """

    def decorate(compute: Compute) -> Compute:
        register(Metric(name, name, "plain", higher_is_better, needs=tuple(needs), compute=compute))
        return compute

    return decorate


def _per_class(kind: str, k: int) -> Compute:
    def compute(s: Mapping[str, np.ndarray], n: Examples) -> np.ndarray:
        if kind == "recall":
            return safe_ratio(s["tp"][:, k], s["true"][:, k])
        if kind == "precision":
            return safe_ratio(s["tp"][:, k], s["pred"][:, k])
        return f1_per_class(s)[:, k]

    return compute


#: Per-class families, named ``<family>:<label name>`` (``recall:positive``).
PER_CLASS_METRICS = {"recall": ("tp", "true"), "precision": ("tp", "pred"), "f1": ("tp", "true", "pred")}


def metric_spec(name: str, label_names: Sequence[str]) -> MetricSpec:
    """Look up a metric by name, resolving per-class names against ``label_names``.

    Parameters
    ----------
    name : str
        A key of :data:`METRICS`, or ``recall:<label>`` / ``precision:<label>`` / ``f1:<label>``.
    label_names : sequence of str
        The dataset's classes in label order.

    Raises
    ------
    ConfigError
        Unknown metric or class name (with the valid choices).

    Examples
    --------
    >>> metric_spec("recall:pos", ["neg", "pos"]).needs
    ('tp', 'true')
    """
    if name in METRICS and METRICS[name].bootstrapped:
        return METRICS[name]
    family, _, label = name.partition(":")
    if family in PER_CLASS_METRICS and label:
        labels = [str(x) for x in label_names]
        if label not in labels:
            raise ConfigError(
                f"metric '{name}': no class '{label}'{did_you_mean(label, labels)} (classes: {listing(labels)})"
            )
        needs = PER_CLASS_METRICS[family]
        return MetricSpec(name, name, "share", True, needs=needs, compute=_per_class(family, labels.index(label)))
    choices = [m for m, spec in METRICS.items() if spec.bootstrapped] + [f"{f}:<class>" for f in PER_CLASS_METRICS]
    raise ConfigError(f"unknown metric '{name}'{did_you_mean(name, METRICS)} (choose one of: {', '.join(choices)})")


def bin_index(confidence: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width confidence bin of each example: bin ``b`` holds ``(b/n_bins, (b+1)/n_bins]``.

    A confidence of exactly 0 falls in the first bin (Guo et al. 2017 use the same edges).

    Examples
    --------
    >>> bin_index(np.array([0.0, 0.1, 0.1001, 1.0]), 10)
    array([0, 0, 1, 9])
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    # right=True: conf == upper edge belongs to the lower bin, as (lo, hi] requires
    return cast(np.ndarray, np.clip(np.digitize(confidence, edges[1:-1], right=True), 0, n_bins - 1).astype(np.int64))


def as_probabilities(proba: np.ndarray) -> np.ndarray:
    """``proba`` as float64 rows that sum to 1.

    Stored probabilities are float32, whose rows sum to 1 only within ~1e-7; renormalising
    in float64 keeps every calibration number consistent with scikit-learn, which warns
    about rows off by more than ~1e-8.
    """
    p = np.asarray(proba, dtype=np.float64)
    total = p.sum(axis=1, keepdims=True)
    return cast(np.ndarray, np.divide(p, total, out=np.zeros_like(p), where=total > 0))


def per_example_brier(y_true: np.ndarray, proba: np.ndarray, *, binary: bool | None = None) -> np.ndarray:
    """Each example's Brier score, ``Σ_k (p_k − 1[y = k])²``, halved when the data has two classes.

    The halving follows :func:`sklearn.metrics.brier_score_loss` for binary data (its
    ``scale_by_half="auto"``), so binary scores lie in [0, 1] as usual and multi-class ones in
    [0, 2]. It is decided by the *data's* classes (``binary``; default: two probability
    columns), not by a model's columns: a model that knows a third class the data lacks keeps
    the binary scale (its extra column enters the sum, and is 0 where it gives that class nothing).
    """
    p = as_probabilities(proba)
    rows = np.arange(len(p))
    score = (p**2).sum(axis=1) - 2.0 * p[rows, y_true] + 1.0
    return cast(np.ndarray, score * (0.5 if (p.shape[1] == 2 if binary is None else binary) else 1.0))


def per_example_nll(y_true: np.ndarray, proba: np.ndarray) -> np.ndarray:
    """Each example's ``−log p_true``; probabilities clipped to ``[eps, 1 − eps]`` as scikit-learn does."""
    p = as_probabilities(proba)
    eps = np.finfo(np.float64).eps
    return cast(np.ndarray, -np.log(np.clip(p[np.arange(len(p)), y_true], eps, 1.0 - eps)))


def example_stats(
    needs: Sequence[str], y_true: np.ndarray, pred: np.ndarray, proba: np.ndarray | None, *, n_classes: int, n_bins: int
) -> dict[str, Stat]:
    """Build the per-example statistics ``needs`` for one model.

    Parameters
    ----------
    needs : sequence of str
        Names from :data:`STAT_NAMES`.
    y_true, pred : ndarray of shape (n,)
        True and predicted class indices (``pred`` may name classes from ``n_classes`` on:
        classes the data does not hold, which only count as errors).
    proba : ndarray of shape (n, n_classes) or None
        Class probabilities; required by the calibration statistics only.
    n_classes, n_bins : int

    Returns
    -------
    dict of str to Stat
    """
    if PROBA_STATS.intersection(needs) and proba is None:
        raise ValueError("calibration metrics need the class probabilities (proba)")
    correct = (pred == y_true).astype(np.float64)
    zeros = np.zeros(len(y_true), dtype=np.int64)
    scores: np.ndarray = proba if proba is not None else np.zeros((len(y_true), n_classes))  # used only with proba
    out: dict[str, Stat] = {}
    if {"bin_count", "bin_confidence", "bin_correct"}.intersection(needs):
        # top-label calibration: the probability the model gave to the class it predicted
        confidence = as_probabilities(scores)[np.arange(len(pred)), pred]
        bins = bin_index(confidence, n_bins)
    for name in needs:
        if name == "true":
            out[name] = Stat(y_true, n_classes)
        elif name == "pred":
            # A predicted class outside the dataset's (a model that knows more classes), or no
            # prediction at all (-1, a failure), is nobody's predicted count: precision and F1 run over
            # the dataset's classes, as scikit-learn's ``labels=`` does; the example still counts
            # against its true class's recall.
            inside = (pred >= 0) & (pred < n_classes)
            out[name] = (
                Stat(pred, n_classes)
                if inside.all()
                else Stat(np.where(inside, pred, 0), n_classes, inside.astype(np.float64))
            )
        elif name == "pred_all":  # every distinct prediction its own class (failures, outside classes): MCC
            distinct, codes = np.unique(pred, return_inverse=True)
            out[name] = Stat(codes.reshape(-1), len(distinct))
        elif name == "tp":
            out[name] = Stat(y_true, n_classes, correct)
        elif name == "bin_count":
            out[name] = Stat(bins, n_bins)
        elif name == "bin_confidence":
            out[name] = Stat(bins, n_bins, confidence)
        elif name == "bin_correct":
            out[name] = Stat(bins, n_bins, correct)
        elif name == "brier":
            out[name] = Stat(zeros, 1, per_example_brier(y_true, scores, binary=n_classes == 2))
        elif name == "nll":
            out[name] = Stat(zeros, 1, per_example_nll(y_true, scores))
        else:
            raise ValueError(f"unknown statistic '{name}'")
    return out
