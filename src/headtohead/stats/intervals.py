"""Confidence intervals on one model's own numbers: Wilson for accuracy and recall, bootstrap for the rest."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from headtohead.results.comparison import Estimate
from headtohead.stats.bootstrap import CIMethod, Interval, bootstrap_metrics
from headtohead.stats.paired import clustered_counts, proportion_interval

__all__ = [
    "wilson_interval",
    "proportion_estimate",
    "bootstrap_estimates",
    "estimate_from_interval",
]


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion (:func:`statsmodels.stats.proportion.proportion_confint`).

    Wilson keeps close to nominal coverage near 0 and 1 and for small ``n``, where the
    textbook normal ("Wald") interval collapses (Brown, Cai & DasGupta 2001).

    Parameters
    ----------
    successes, n : int
        Correct predictions and examples (``n >= 1``).
    confidence : float

    Returns
    -------
    (low, high) : tuple of float

    Examples
    --------
    >>> [round(x, 4) for x in wilson_interval(90, 100)]
    [0.8256, 0.9448]
    >>> wilson_interval(10, 10)[1], wilson_interval(0, 10)[0]  # the interval contains its estimate, always
    (1.0, 0.0)
    """
    from statsmodels.stats.proportion import proportion_confint

    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got successes={successes}, n={n}")
    low, high = proportion_confint(successes, n, alpha=1.0 - confidence, method="wilson")
    share = successes / n  # the bounds at 0 of n and n of n are 0 and 1 exactly; rounding put 1 - 2**-53 below 1.0
    return min(float(low), share), max(float(high), share)


def proportion_estimate(
    correct: np.ndarray,
    confidence: float = 0.95,
    groups: np.ndarray | None = None,
    rows: np.ndarray | None = None,
) -> Estimate:
    """A share of correct answers (accuracy, a class's recall) with Wilson's interval, clustered with ``groups``.

    With groups the interval is the union of Wilson's and the cluster-robust score interval
    (:func:`headtohead.stats.paired.proportion_interval`): examples of one group are not
    independent evidence. ``rows`` (a mask or indices) restricts both to some examples.

    Examples
    --------
    >>> e = proportion_estimate(np.array([True] * 90 + [False] * 10))
    >>> e.value, round(e.low, 4), e.method
    (0.9, 0.8256, 'wilson')
    """
    correct = np.asarray(correct, dtype=bool) if rows is None else np.asarray(correct, dtype=bool)[rows]
    k, n = int(correct.sum()), len(correct)
    if groups is None:
        low, high = wilson_interval(k, n, confidence)
        return Estimate(value=k / n, low=low, high=high, method="wilson", confidence=confidence)
    members = np.asarray(groups) if rows is None else np.asarray(groups)[rows]
    low, high = proportion_interval(k, n, confidence, clustered_counts(correct.astype(np.float64), members))
    return Estimate(value=float(correct.mean()), low=low, high=high, method="wilson+clusters", confidence=confidence)


def estimate_from_interval(interval: Interval) -> Estimate:
    """The record form of a bootstrap :class:`~headtohead.stats.bootstrap.Interval`."""
    return Estimate(
        value=interval.estimate,
        low=interval.low,
        high=interval.high,
        method=interval.method,
        confidence=interval.confidence,
        note=interval.note,
    )


def bootstrap_estimates(
    y_true: np.ndarray,
    pred: np.ndarray,
    proba: np.ndarray | None,
    metrics: Sequence[str],
    *,
    label_names: Sequence[str],
    n_resamples: int,
    confidence: float,
    method: CIMethod,
    n_bins: int,
    seed: int | np.random.Generator,
    groups: np.ndarray | None = None,
) -> dict[str, Estimate]:
    """Bootstrap estimates (value and interval) of several metrics of one model.

    Parameters are those of :func:`headtohead.stats.bootstrap.bootstrap_metrics`.

    Returns
    -------
    dict of str to Estimate
    """
    intervals = bootstrap_metrics(
        y_true,
        pred,
        proba,
        metrics=metrics,
        label_names=label_names,
        n_resamples=n_resamples,
        confidence=confidence,
        method=method,
        n_bins=n_bins,
        seed=seed,
        groups=groups,
    )
    return {name: estimate_from_interval(interval) for name, interval in intervals.items()}
