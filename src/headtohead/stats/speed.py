"""Statistics of speed measurements: the paired A/B speed ratio (latency summaries: :mod:`headtohead.results.latency`).

Pure functions over NumPy arrays (SciPy for the bootstrap); nothing here imports torch or
knows about models. The speed engine measures, this module judges, reports render.

The A/B ratio works on *rounds*: in every round each model ran one block of iterations,
in an order rotated or shuffled from round to round, so slow drift of the machine
(throttling, a background job) hits both models of a round alike. Each round gives one
paired observation ``log(time_a / time_b)``; the ratio is the exponential of their mean
(a geometric mean of per-round speed-ups) and its confidence interval an *expanded
percentile* bootstrap over rounds (:func:`scipy.stats.bootstrap`), which keeps close to
its nominal coverage with the few rounds a benchmark has.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "SpeedRatio",
    "speed_ratio",
    "round_medians",
    "latency_summary",
    "tukey_fences",
    "count_outliers",
    "iqr_over_median",
    "INSTABILITY_THRESHOLD",
]

# A record summarises its own raw latencies (results.latency); re-exported here beside the ratios.
from headtohead.results.latency import (  # noqa: E402
    INSTABILITY_THRESHOLD,
    count_outliers,
    iqr_over_median,
    latency_summary,
    tukey_fences,
)


@dataclass(frozen=True)
class SpeedRatio:
    """How much faster model B ran than model A, with a confidence interval.

    Attributes
    ----------
    ratio : float
        ``time_a / time_b``: above 1 B is faster, below 1 A is faster.
    low, high : float
        The confidence interval of ``ratio``.
    confidence : float
        Its level (``0.95``).
    n_rounds : int
        Number of paired rounds it rests on.
    """

    ratio: float
    low: float
    high: float
    confidence: float
    n_rounds: int

    @property
    def faster(self) -> Literal["a", "b"] | None:
        """``"b"`` when the whole interval lies above 1, ``"a"`` below 1, else ``None``."""
        if self.low > 1.0:
            return "b"
        if self.high < 1.0:
            return "a"
        return None

    @property
    def halfwidth(self) -> float:
        """The interval's larger relative distance from ``ratio`` (``0.02`` means ±2 %)."""
        return float(max(self.high / self.ratio - 1.0, 1.0 - self.low / self.ratio))


def round_medians(rounds: Sequence[Sequence[float]]) -> np.ndarray:
    """The median latency of each round (robust to a single interrupted iteration).

    Examples
    --------
    >>> round_medians([[1, 2, 30], [2, 2, 3]])
    array([2., 2.])
    """
    if any(len(r) == 0 for r in rounds):
        raise ValueError("every round needs at least one latency")
    return np.array([np.median(np.asarray(r, dtype=np.float64)) for r in rounds])


def speed_ratio(time_a: Sequence[float] | np.ndarray, time_b: Sequence[float] | np.ndarray, *,
                confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> SpeedRatio:
    """The paired speed ratio ``time_a / time_b`` over rounds, with a bootstrap CI.

    Parameters
    ----------
    time_a, time_b : array-like of shape (n_rounds,)
        One representative latency per round for each model (e.g. :func:`round_medians`),
        paired by round.
    confidence : float
        Level of the interval.
    n_resamples : int
        Bootstrap resamples.
    seed : int
        Seed of the resampling, so the same measurements give the same interval.

    Returns
    -------
    SpeedRatio

    Raises
    ------
    ValueError
        Fewer than two rounds, unequal lengths, or non-positive times.

    Examples
    --------
    >>> r = speed_ratio([2.0, 2.1, 1.9, 2.0], [1.0, 1.0, 1.0, 1.0])
    >>> round(r.ratio, 2), r.faster
    (2.0, 'b')
    """
    a = np.asarray(time_a, dtype=np.float64)
    b = np.asarray(time_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired rounds needed: got shapes {a.shape} and {b.shape}")
    if len(a) < 2:
        raise ValueError(f"a speed ratio needs at least 2 rounds, got {len(a)}")
    if not (np.all(a > 0) and np.all(b > 0) and np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("latencies must be positive and finite")
    log_ratio = np.log(a) - np.log(b)
    centre = float(np.mean(log_ratio))
    if np.ptp(log_ratio) == 0.0:  # identical rounds: the bootstrap distribution is a point
        low = high = centre
    else:
        low, high = _bootstrap_mean_ci(log_ratio, confidence, n_resamples, seed)
    return SpeedRatio(float(np.exp(centre)), float(np.exp(low)), float(np.exp(high)), confidence, len(a))


def _bootstrap_mean_ci(values: np.ndarray, confidence: float, n_resamples: int, seed: int) -> tuple[float, float]:
    # Plain percentile and BCa intervals cover too rarely with the 5-20 rounds a benchmark
    # has (an A/A run at n=10 is "significant" ~10 % of the time at 95 %). The expanded
    # percentile interval (Hesterberg 2015) widens the level by the t/normal small-sample
    # factor and keeps close to nominal coverage from n=5 on.
    from scipy import stats as _scipy_stats  # here, so reading result records does not import SciPy

    n = len(values)
    t_quantile = _scipy_stats.t.ppf(0.5 + confidence / 2, n - 1)
    expanded = float(1.0 - 2.0 * _scipy_stats.norm.sf(np.sqrt(n / (n - 1)) * t_quantile))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning: handled by the finiteness check below
        result = _scipy_stats.bootstrap((values,), np.mean, confidence_level=min(expanded, 1.0 - 1e-12),
                                        n_resamples=n_resamples, method="percentile", vectorized=True,
                                        rng=np.random.default_rng(seed))
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError("the bootstrap interval of the speed ratio could not be computed")
    return low, high
