"""Intervals on the Server scenario's capacity (``max_qps``) from repeated seeded searches.

See ``docs/performance.md``, "What `max_qps` and its interval mean".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from headtohead.results.server import ServerComparison, ServerSearch

__all__ = [
    "CapacityEstimate",
    "CapacityRatio",
    "capacity_interval",
    "capacity_ratio",
    "bracket_estimate",
    "resolution_factor",
    "requests_for_percentile",
    "compare_searches",
]


@dataclass(frozen=True)
class CapacityEstimate:
    """Geometric-mean capacity over ``n`` searches and its t interval (``None`` bounds with one search)."""

    mean: float
    low: float | None
    high: float | None
    n: int
    confidence: float


@dataclass(frozen=True)
class CapacityRatio:
    """Geometric mean of per-search ratios b/a and its t interval on the log scale.

    ``p_value`` is the test that interval inverts (``None`` with one search): 1 when the mean
    log ratio is within the searches' resolution of 0 (the widened interval always holds 1
    then), else the two-sided t test's; so ``p_value ≤ 1 − confidence`` exactly when the
    interval excludes 1, and Holm's adjustment over a run's speed comparisons can use it.
    """

    ratio: float
    low: float | None
    high: float | None
    n: int
    confidence: float
    p_value: float | None = None

    @property
    def more(self) -> str | None:
        """``"b"`` when b holds significantly more load, ``"a"`` when a does, else ``None``."""
        if self.low is not None and self.low > 1.0:
            return "b"
        if self.high is not None and self.high < 1.0:
            return "a"
        return None


def bracket_estimate(held: float | None, failed: float | None) -> float | None:
    """One search's figure: the geometric midpoint of [held, failed]; ``held`` when nothing failed.

    Examples
    --------
    >>> bracket_estimate(100.0, 121.0)
    110.0
    >>> bracket_estimate(100.0, None), bracket_estimate(None, 5.0)
    (100.0, None)
    """
    if held is None:
        return None
    return float(np.sqrt(held * failed)) if failed is not None else float(held)


def _t_interval(values: np.ndarray, confidence: float) -> tuple[float, float] | tuple[None, None]:
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    if len(values) < 2:
        return None, None
    sem = float(np.std(values, ddof=1)) / np.sqrt(len(values))
    if sem == 0.0:
        return float(values.mean()), float(values.mean())
    low, high = stats.t.interval(confidence, len(values) - 1, loc=float(values.mean()), scale=sem)
    return float(low), float(high)


def capacity_interval(
    estimates: Sequence[float], confidence: float = 0.95, *, resolution: float = 1.0
) -> CapacityEstimate:
    """Geometric mean of the searches' estimates with a Student-t interval on the log scale.

    A capacity is positive and its errors multiplicative (a search lands a factor off, not a
    fixed number of QPS off), so the interval is ``exp`` of a t interval (``scipy.stats.t``) of
    the mean log estimate: never below zero, and as wide in ratio above as below.

    Parameters
    ----------
    estimates : sequence of float
        One figure per search (queries per second, > 0), at least one.
    confidence : float
        Level of the interval.
    resolution : float
        The searches' bracket half-width factor (mean ``sqrt(failed / held)``); the interval
        is at least ``[mean / resolution, mean * resolution]``.

    Returns
    -------
    CapacityEstimate

    Examples
    --------
    >>> e = capacity_interval([100.0, 110.0, 105.0])
    >>> round(e.mean, 1), round(e.low, 1), round(e.high, 1)
    (104.9, 93.2, 118.1)
    >>> e = capacity_interval([100.0, 100.0], resolution=1.05)   # equal estimates: the resolution remains
    >>> round(e.low, 1), round(e.high, 1)
    (95.2, 105.0)
    """
    values = np.asarray(estimates, dtype=float)
    if values.size == 0:
        raise ValueError("capacity_interval needs at least one estimate")
    logs = np.log(values)
    # equal estimates (one search, a capped rate) stay exactly that rate, not exp(log(x)) ≈ x
    mean = float(values[0]) if np.all(values == values[0]) else float(np.exp(logs.mean()))
    low, high = _log_interval(logs, confidence, resolution)
    return CapacityEstimate(mean, low, high, int(values.size), confidence)


def _log_interval(logs: np.ndarray, confidence: float, resolution: float) -> tuple[float | None, float | None]:
    """``exp`` of the t interval of the mean log, widened to at least ``centre ± log(resolution)``."""
    low, high = _t_interval(logs, confidence)
    if low is None or high is None:
        return None, None
    centre, half = float(logs.mean()), float(np.log(max(resolution, 1.0)))
    return float(np.exp(min(low, centre - half))), float(np.exp(max(high, centre + half)))


def capacity_ratio(
    a: Sequence[float], b: Sequence[float], confidence: float = 0.95, *, resolution: float = 1.0
) -> CapacityRatio:
    """How much more load b holds than a: per-search ratios b/a, paired by search (same seeds).

    The interval is a t interval of the mean log ratio, exponentiated (a ratio's natural scale),
    at least as wide as ``resolution`` (for two brackets of factors ``r_a``, ``r_b``:
    ``exp(sqrt(log(r_a)² + log(r_b)²))``).

    Examples
    --------
    >>> r = capacity_ratio([100.0, 100.0, 100.0], [140.0, 150.0, 145.0])
    >>> round(r.ratio, 2), r.more
    (1.45, 'b')
    """
    if len(a) != len(b) or not len(a):
        raise ValueError(f"capacity_ratio needs paired estimates, got {len(a)} and {len(b)}")
    logs = np.log(np.asarray(b, dtype=float)) - np.log(np.asarray(a, dtype=float))
    low, high = _log_interval(logs, confidence, resolution)
    return CapacityRatio(
        float(np.exp(logs.mean())), low, high, int(logs.size), confidence, _log_p_value(logs, resolution)
    )


def _log_p_value(logs: np.ndarray, resolution: float) -> float | None:
    """The p-value :func:`_log_interval` inverts: 1 inside the resolution, else the t test of mean 0."""
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    if len(logs) < 2:
        return None
    centre = abs(float(logs.mean()))
    if centre <= float(np.log(max(resolution, 1.0))):
        return 1.0
    sem = float(np.std(logs, ddof=1)) / np.sqrt(len(logs))
    if sem == 0.0:
        return 0.0
    return float(2.0 * stats.t.sf(centre / sem, len(logs) - 1))


def resolution_factor(held: float | None, failed: float | None) -> float:
    """A bracket's half-width factor ``sqrt(failed / held)`` (1 when it is open on one side)."""
    return float(np.sqrt(failed / held)) if held is not None and failed is not None else 1.0


def requests_for_percentile(quantile: float, confidence: float) -> int:
    """The fewest requests whose every latency within a bound shows the ``quantile`` is within it.

    LoadGen's early-stopping bound with no request over the bound: ``n`` such that a tail share of
    ``1 − quantile`` would leave all ``n`` requests within the bound with probability at most
    ``1 − confidence`` (``quantileⁿ ≤ 1 − confidence``).

    Examples
    --------
    >>> requests_for_percentile(0.99, 0.95), requests_for_percentile(0.9, 0.95)
    (299, 29)
    """
    return int(np.ceil(np.log(1.0 - confidence) / np.log(quantile) - 1e-9))


def compare_searches(models: Sequence[tuple[str, Sequence[ServerSearch]]], confidence: float) -> list[ServerComparison]:
    """Every pair's capacity ratio b/a over the searches both finished, paired by search (same seeds).

    The Server scenario's and the capacity scenario's one rule: ``more`` names the model whose
    interval says it holds more (before any Holm adjustment of the caller's family).
    """
    out = []
    for i, (name_a, a) in enumerate(models):
        for name_b, b in models[i + 1 :]:
            both = [
                (sa, sb, qa, qb)
                for sa, sb in zip(a, b, strict=True)
                if (qa := sa.estimate_qps) is not None and (qb := sb.estimate_qps) is not None
            ]
            if not both:
                continue
            # the two brackets' resolutions combine like independent errors on the log scale
            logs = [
                np.hypot(
                    np.log(resolution_factor(sa.held_qps, sa.failed_qps)),
                    np.log(resolution_factor(sb.held_qps, sb.failed_qps)),
                )
                for sa, sb, _, _ in both
            ]
            ratio = capacity_ratio(
                [qa for _, _, qa, _ in both],
                [qb for _, _, _, qb in both],
                confidence,
                resolution=float(np.exp(np.mean(logs))),
            )
            out.append(
                ServerComparison(
                    model_a=name_a,
                    model_b=name_b,
                    ratio=ratio.ratio,
                    ci_low=ratio.low,
                    ci_high=ratio.high,
                    confidence=confidence,
                    n_searches=ratio.n,
                    more={"a": name_a, "b": name_b, None: None}[ratio.more],
                    p_value=ratio.p_value,
                )
            )
    return out
