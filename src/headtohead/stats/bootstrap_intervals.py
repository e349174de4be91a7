"""From a bootstrap distribution to an interval that contains its estimate, or to none (and why).

See ``docs/statistics.md`` §11.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

__all__ = ["Interval", "interval_from_distribution", "acceleration"]

# Values closer than this (relative) count as ties with the estimate, so that float noise in
# continuous sums cannot move BCa's bias correction; integer-valued sums are exact anyway.
_TIE = 1e-12
# |z0| beyond this (over 93 % of resamples on one side of the estimate): BCa's correction is not trusted.
_EXTREME_BIAS = 1.5


@dataclass(frozen=True)
class Interval:
    """A bootstrap confidence interval.

    Attributes
    ----------
    metric : str
    estimate : float
        The metric (or difference) on the original data.
    low, high : float or None
        Interval bounds; ``None`` when no interval is shown (see ``note``).
    method : {"bca", "percentile", "none"}
        The method actually used (BCa falls back to percentile; see ``note``), prefixed
        ``cluster-`` for the cluster bootstrap.
    confidence : float
        E.g. 0.95.
    std_error : float
        Standard deviation of the bootstrap distribution.
    note : str or None
        Why the method differs from the one asked for, or that the distribution was degenerate.
    """

    metric: str
    estimate: float
    low: float | None
    high: float | None
    method: str
    confidence: float
    std_error: float
    note: str | None = None


def acceleration(jack: np.ndarray, weights: np.ndarray) -> float:
    """BCa acceleration from jackknife values weighted by cell size (Efron & Tibshirani eq. 14.15)."""
    d = np.average(jack, weights=weights) - jack
    den = (weights * d**2).sum()
    return 0.0 if den <= 0 else float((weights * d**3).sum() / (6.0 * den**1.5))


def interval_from_distribution(
    metric: str,
    estimate: float,
    theta_b: np.ndarray,
    *,
    confidence: float,
    method: str,
    acceleration: float | None = None,
) -> Interval:
    """Turn a bootstrap distribution into an interval that contains the estimate, or into none.

    Parameters
    ----------
    metric : str
    estimate : float
        The statistic on the original data.
    theta_b : ndarray of shape (B,)
        The statistic on each resample.
    confidence : float
        Coverage, e.g. 0.95.
    method : {"bca", "percentile"}
    acceleration : float, optional
        BCa's acceleration (required for ``"bca"``).

    Returns
    -------
    Interval
        Quantiles use linear interpolation, as :func:`scipy.stats.bootstrap` does. BCa falls
        back to the percentile interval when its bias correction is infinite (the estimate
        outside every resample) or extreme (``|z0| > 1.5``), or when its bounds exclude the
        estimate. No interval (``low = high = None``) when every resample gives the same value,
        or when even the percentile interval excludes the estimate. ``note`` says why.

    Examples
    --------
    >>> interval_from_distribution("recall", 1.0, np.ones(100), confidence=0.95, method="bca").low is None
    True
    """
    if not np.all(np.isfinite(theta_b)) or not np.isfinite(estimate):
        raise FloatingPointError(f"bootstrap of '{metric}' produced non-finite values; check the predictions")
    if method not in ("bca", "percentile"):
        raise ValueError(f"method must be 'bca' or 'percentile', not {method!r}")
    std = float(theta_b.std(ddof=1)) if len(theta_b) > 1 else 0.0
    tol = _TIE * max(1.0, abs(estimate))
    if np.ptp(theta_b) <= tol:
        return Interval(
            metric,
            estimate,
            None,
            None,
            "none",
            confidence,
            std,
            f"every resample gives {float(theta_b[0]):.4g}: too few examples (or errors) to measure "
            f"its spread, so no interval",
        )
    tail = (1.0 - confidence) / 2.0
    if method == "bca":
        below = np.count_nonzero(theta_b < estimate - tol)
        at_or_below = np.count_nonzero(theta_b <= estimate + tol)
        z0 = ndtri((below + at_or_below) / (2.0 * len(theta_b)))  # scipy's 'mean' percentile of the estimate
        if not np.isfinite(z0):
            note = "BCa undefined (estimate outside all resamples); percentile interval used"
        elif abs(z0) > _EXTREME_BIAS:
            note = f"BCa's bias correction is extreme (z0 = {z0:.2f}); percentile interval used"
        else:
            a = 0.0 if acceleration is None else acceleration
            z = ndtri(np.array([tail, 1.0 - tail]))
            low, high = np.quantile(theta_b, ndtr(z0 + (z0 + z) / (1.0 - a * (z0 + z))))
            if low <= estimate + tol and high >= estimate - tol:
                return Interval(metric, estimate, float(low), float(high), "bca", confidence, std)
            note = "the BCa interval excluded the estimate; percentile interval used"
    else:
        note = None
    low, high = np.quantile(theta_b, [tail, 1.0 - tail])
    if low <= estimate + tol and high >= estimate - tol:
        return Interval(metric, estimate, float(low), float(high), "percentile", confidence, std, note)
    side = "above" if low > estimate else "below"
    return Interval(
        metric,
        estimate,
        None,
        None,
        "none",
        confidence,
        std,
        f"the bootstrap distribution lies {side} the estimate (the statistic is biased at this sample "
        f"size), so no interval",
    )
