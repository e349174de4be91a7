"""A cascade's threshold by Learn-then-Test, and what its deferral share makes of its parts' cost and latency.

A cascade answers with the cheap model where the cheap model's deferral score is at least the
threshold ``t`` and defers the rest to the expensive model. On ``n`` calibration examples the
per-example loss against the expensive model is ``L = 1[expensive right] − 1[cascade right]`` in
{−1, 0, 1} (0 on a deferred example); its mean ``R(t)`` is the accuracy the cascade loses.

Learn-then-Test (Angelopoulos, Bates, Candès, Jordan & Lei, 2021) turns the choice of ``t`` into
multiple testing: for every ``t`` of a grid fixed before the data is seen, the null ``H_t: R(t) >
max_drop`` is tested with a valid p-value; the grid is walked from the most deferring threshold to
the least (fixed-sequence testing, which controls the family-wise error at ``delta`` without a
correction) and stops at the first null not rejected; the cascade takes the least deferring
threshold rejected. Then with probability at least ``1 − delta`` over the calibration draw,
``R(t̂) ≤ max_drop``.

The p-value. An exact binomial on ``L`` itself is not valid (``L`` is not a Bernoulli variable), and
Hoeffding's or Hoeffding–Bentkus's bound on ``(L + 1) / 2`` is valid but knows only the range, not
that most losses are 0: with a margin of 0.5 pp it never rejects. What is used: ``R(t) = a(t) − b(t)``
with ``a`` the chance of a *harm* (the cheap model answers and is wrong where the expensive one is
right) and ``b`` of a *win* (the reverse), so ``R(t) > ε`` implies ``a(t) > ε``, and the exact
binomial tail ``P(Binomial(n, ε) ≤ harms)`` is a valid p-value for ``H_t`` (exact for ``a``,
conservative for ``R``: it credits none of the cheap model's wins). With no harm at all it needs
``n ≥ log(δ) / log(1 − ε)`` calibration examples to pass any threshold (599 for 0.5 pp at δ = 0.05).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "THRESHOLD_GRID",
    "ThresholdChoice",
    "deferral_scores",
    "deferred",
    "harm_pvalue",
    "choose_threshold",
    "cascade_latency",
]


def _grid() -> np.ndarray:
    """Thresholds fixed before any data: every 0.01 of [0, 1], finer towards 1 (confident models' top
    probabilities crowd there), highest first: the most deferring threshold is tested first."""
    near_one = 1.0 - np.logspace(-2, -6, 17)
    grid: np.ndarray = np.unique(np.concatenate([np.linspace(0.0, 1.0, 101), near_one, [1.0]]))[::-1].copy()
    return grid


#: The candidate thresholds, most deferring first (a score below the threshold is deferred).
THRESHOLD_GRID: np.ndarray = _grid()


@dataclass(frozen=True)
class ThresholdChoice:
    """The threshold Learn-then-Test chose, and the test that chose it."""

    #: Examples scoring below it are deferred; ``None``: no threshold passed, every example is deferred.
    threshold: float | None
    #: The chosen threshold's p-value (``None`` when none passed).
    p_value: float | None
    #: Thresholds tested, the first not rejected included.
    tested: int
    #: Harms (the cheap model answers wrong where the expensive one is right) on the calibration examples.
    harms: int


def deferral_scores(proba: np.ndarray, score: Literal["top", "margin"]) -> np.ndarray:
    """Each example's deferral score from the cheap model's class probabilities: its top probability, or the gap
    between its two highest; a row without probabilities (a failure, a NaN row) scores ``-inf``: always deferred.

    Examples
    --------
    >>> deferral_scores(np.array([[0.9, 0.1], [0.6, 0.4], [np.nan, np.nan]]), "margin").round(2).tolist()
    [0.8, 0.2, -inf]
    """
    proba = np.asarray(proba, dtype=float)
    ordered = np.sort(np.where(np.isnan(proba), -np.inf, proba), axis=1)
    top = ordered[:, -1]
    if score == "top" or proba.shape[1] < 2:
        return top
    second = np.where(np.isfinite(top), ordered[:, -2], 0.0)  # a row without probabilities stays -inf
    return np.where(np.isfinite(top), top - second, -np.inf)


def deferred(scores: np.ndarray, threshold: float | None) -> np.ndarray:
    """Which examples the cascade defers at ``threshold`` (``None``: all of them)."""
    if threshold is None:
        return np.ones(len(scores), dtype=bool)
    return np.asarray(scores < threshold)


def harm_pvalue(harms: int, n: int, max_drop: float) -> float:
    """``P(Binomial(n, max_drop) ≤ harms)``: a valid p-value for "the cascade loses more than ``max_drop``".

    Examples
    --------
    >>> round(harm_pvalue(0, 599, 0.005), 4)   # no harm in 599 examples: just below 0.05
    0.0497
    """
    from scipy.stats import binom

    if n == 0:
        return 1.0
    return float(min(1.0, binom.cdf(harms, n, max_drop)))


def choose_threshold(
    scores: np.ndarray,
    cheap_correct: np.ndarray,
    expensive_correct: np.ndarray,
    *,
    max_drop: float,
    delta: float,
    grid: np.ndarray = THRESHOLD_GRID,
) -> ThresholdChoice:
    """Learn-then-Test on the calibration examples: the least deferring threshold whose null is rejected.

    Parameters
    ----------
    scores : ndarray of float
        The cheap model's deferral score per calibration example (:func:`deferral_scores`).
    cheap_correct, expensive_correct : ndarray of bool
        Whether each model is right on each calibration example (a failure is wrong).
    max_drop : float
        The accuracy the cascade may lose against the expensive model (a share: 0.005 for 0.5 pp).
    delta : float
        The chance the guarantee may fail.
    grid : ndarray of float
        The thresholds, most deferring first, fixed before the data (:data:`THRESHOLD_GRID`).

    Returns
    -------
    ThresholdChoice

    Examples
    --------
    >>> scores = np.linspace(0.5, 1.0, 1000)
    >>> cheap = scores > 0.6           # the cheap model is wrong on its least sure examples
    >>> choice = choose_threshold(scores, cheap, np.ones(1000, bool), max_drop=0.02, delta=0.05)
    >>> round(choice.threshold, 2), choice.harms
    (0.6, 0)
    """
    n = len(scores)
    harmful = ~np.asarray(cheap_correct, dtype=bool) & np.asarray(expensive_correct, dtype=bool)
    chosen: float | None = None
    p_chosen: float | None = None
    harms_chosen = 0
    tested = 0
    for threshold in grid:
        tested += 1
        harms = int((harmful & ~deferred(scores, float(threshold))).sum())
        p = harm_pvalue(harms, n, max_drop)
        if p > delta:  # fixed sequence: the first null not rejected ends the walk
            break
        chosen, p_chosen, harms_chosen = float(threshold), p, harms
    return ThresholdChoice(chosen, p_chosen, tested, harms_chosen)


def cascade_latency(
    cheap_s: np.ndarray | None, expensive_s: np.ndarray | None, share: float, *, points: int = 200
) -> tuple[float, float] | None:
    """Mean and p99 latency (seconds) of one example through the cascade, or ``None`` when a part was not timed.

    Every example pays the cheap model's latency and a deferred one the expensive model's too: the
    latency is ``C + D·E`` with ``D`` deferred with probability ``share``, each part's latency drawn from
    its measured per-request latencies independently of deferral. The p99 is that mixture's, exactly on
    ``points`` quantiles of each part (a deferred example: every sum of a cheap and an expensive quantile).

    Examples
    --------
    >>> mean, p99 = cascade_latency(np.full(10, 0.001), np.full(10, 0.1), 0.25)
    >>> round(mean, 4), round(p99, 4)
    (0.026, 0.101)
    """
    if cheap_s is None or expensive_s is None or len(cheap_s) == 0 or len(expensive_s) == 0:
        return None
    levels = (np.arange(points) + 0.5) / points
    c = np.quantile(np.asarray(cheap_s, dtype=float), levels)
    e = np.quantile(np.asarray(expensive_s, dtype=float), levels)
    mean = float(np.mean(cheap_s) + share * np.mean(expensive_s))
    values = np.concatenate([c, (c[:, None] + e[None, :]).ravel()])
    weights = np.concatenate([np.full(points, (1 - share) / points), np.full(points * points, share / points**2)])
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    p99 = float(values[order][min(int(np.searchsorted(cumulative, 0.99 - 1e-12)), len(values) - 1)])
    return mean, p99
