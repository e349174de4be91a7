"""Statistics of speed measurements: the paired A/B speed ratio (latency summaries: :mod:`headtohead.results.latency`).

Pure functions over NumPy arrays (SciPy for the bootstrap); nothing here imports torch or
knows about models. The speed engine measures, this module judges, reports render.

The A/B ratio works on *rounds*: in every round each model ran one block of iterations,
in an order rotated or shuffled from round to round, so slow drift of the machine
(throttling, a background job) hits both models of a round alike. Each round gives one
paired observation ``log(time_a / time_b)`` (of the round medians); the ratio is the
exponential of their mean (a geometric mean of per-round speed-ups) and its confidence
interval a **Student t interval** on that mean.

Why t: a round's log ratio of two medians of many calls is close to normal (sample
medians are asymptotically normal) and the drift shared within a round cancels in it, so
the t interval is exact for any number of rounds, while heavier tails (a disturbed block)
only make it conservative. The bootstrap it replaced under-covers with the 5–10 rounds a
benchmark has — it ignores the ``(n−1)/n`` shrinkage of the resampled spread and, at 5
rounds, has only 126 distinct resamples: identical models were called different 7–8 % of
the time at 5 rounds instead of 5 %. An A/A simulation with log-normal calls, spikes and
drift keeps t at ≈ 5 % from 5 rounds on and its power against a 1.10× difference close to
the bootstrap's (``benchmarks/speed_aa.py``, ``docs/statistics.md``). ``method="bootstrap"``
keeps the old interval for comparison.
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
                confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0,
                method: Literal["t", "bootstrap"] = "t") -> SpeedRatio:
    """The paired speed ratio ``time_a / time_b`` over rounds, with a confidence interval.

    Parameters
    ----------
    time_a, time_b : array-like of shape (n_rounds,)
        One representative latency per round for each model (e.g. :func:`round_medians`),
        paired by round.
    confidence : float
        Level of the interval.
    n_resamples, seed : int
        Resamples and seed of ``method="bootstrap"``; the t interval uses neither.
    method : {"t", "bootstrap"}
        ``t`` (default): Student t interval on the mean per-round log ratio, which keeps
        its level from 2 rounds on (see the module docstring). ``bootstrap``: the expanded
        percentile bootstrap used before, anti-conservative below ~10 rounds.

    Returns
    -------
    SpeedRatio

    Raises
    ------
    ValueError
        Fewer than two rounds, unequal lengths, non-positive times, or an unknown method.

    Examples
    --------
    >>> r = speed_ratio([2.0, 2.1, 1.9, 2.0], [1.0, 1.0, 1.0, 1.0])
    >>> round(r.ratio, 2), r.faster, round(r.low, 2), round(r.high, 2)
    (2.0, 'b', 1.87, 2.13)
    """
    a = np.asarray(time_a, dtype=np.float64)
    b = np.asarray(time_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired rounds needed: got shapes {a.shape} and {b.shape}")
    if len(a) < 2:
        raise ValueError(f"a speed ratio needs at least 2 rounds, got {len(a)}")
    if not (np.all(a > 0) and np.all(b > 0) and np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("latencies must be positive and finite")
    if method not in ("t", "bootstrap"):
        raise ValueError(f"method must be 't' or 'bootstrap', not {method!r}")
    log_ratio = np.log(a) - np.log(b)
    centre = float(np.mean(log_ratio))
    if np.ptp(log_ratio) == 0.0:  # identical rounds: no spread to estimate, a point interval
        low = high = centre
    elif method == "t":
        low, high = _t_mean_ci(log_ratio, confidence)
    else:
        low, high = _bootstrap_mean_ci(log_ratio, confidence, n_resamples, seed)
    return SpeedRatio(float(np.exp(centre)), float(np.exp(low)), float(np.exp(high)), confidence, len(a))


def _t_mean_ci(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """Student t interval of the mean: ``mean ± t_{n−1} · s / √n``."""
    from scipy import special  # here, so reading result records does not import SciPy

    n = len(values)
    # stdtrit is the t quantile (scipy.stats.t.ppf) without the distribution-object overhead
    half = float(special.stdtrit(n - 1, 0.5 + confidence / 2) * np.std(values, ddof=1) / np.sqrt(n))
    centre = float(np.mean(values))
    return centre - half, centre + half


def _bootstrap_mean_ci(values: np.ndarray, confidence: float, n_resamples: int, seed: int) -> tuple[float, float]:
    # The expanded percentile interval (Hesterberg 2015) widens the level by the t/normal
    # small-sample factor; it still calls identical models different ~7-8 % of the time at
    # 5 rounds (benchmarks/speed_aa.py), hence no longer the default.
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
