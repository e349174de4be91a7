"""How a speed record summarises its own raw latencies: percentiles, spread, outliers.

A speed record keeps every per-iteration latency; like pyperf's records it describes its
own samples (mean, percentiles, Tukey outliers, IQR / median) from them whenever it is built
or read, so a stored summary can never disagree with the samples. Anything that compares
two records (ratios, intervals, tests) is in :mod:`headtohead.stats.speed`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["latency_summary", "tukey_fences", "count_outliers", "iqr_over_median", "repeat_noise", "per_input"]


def latency_summary(samples: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Mean, sample standard deviation, min, percentiles (50/90/95/99) and max of ``samples``.

    Percentiles use NumPy's default linear interpolation.

    Examples
    --------
    >>> latency_summary([1.0, 2.0, 3.0, 4.0])["p50"]
    2.5
    """
    x = _nonempty(samples)
    p50, p90, p95, p99 = np.percentile(x, [50, 90, 95, 99])
    return {
        "mean": float(x.mean()),
        "std": float(x.std(ddof=1)) if len(x) > 1 else 0.0,
        "min": float(x.min()),
        "p50": float(p50),
        "p90": float(p90),
        "p95": float(p95),
        "p99": float(p99),
        "max": float(x.max()),
    }


def tukey_fences(samples: Sequence[float] | np.ndarray, k: float = 1.5) -> tuple[float, float]:
    """Tukey's fences ``(Q1 - k·IQR, Q3 + k·IQR)``; values outside are outliers."""
    q1, q3 = np.percentile(_nonempty(samples), [25, 75])
    iqr = q3 - q1
    return float(q1 - k * iqr), float(q3 + k * iqr)


def count_outliers(samples: Sequence[float] | np.ndarray, k: float = 1.5) -> int:
    """Number of values outside Tukey's fences.

    Examples
    --------
    >>> count_outliers([10, 11, 10, 12, 11, 50])
    1
    """
    x = _nonempty(samples)
    low, high = tukey_fences(x, k)
    return int(np.count_nonzero((x < low) | (x > high)))


def iqr_over_median(samples: Sequence[float] | np.ndarray) -> float:
    """Interquartile range relative to the median: a robust coefficient of variation."""
    q1, q2, q3 = np.percentile(_nonempty(samples), [25, 50, 75])
    return float((q3 - q1) / q2) if q2 > 0 else float("inf")


def per_input(samples: Sequence[float] | np.ndarray, n_inputs: int) -> list[np.ndarray]:
    """The latencies of each input when ``n_inputs`` inputs were cycled: call ``i`` ran input ``i % n_inputs``.

    Examples
    --------
    >>> [x.tolist() for x in per_input([1, 5, 2, 6], 2)]
    [[1.0, 2.0], [5.0, 6.0]]
    """
    if n_inputs < 1:
        raise ValueError(f"n_inputs must be at least 1, not {n_inputs}")
    x = _nonempty(samples)
    return [x[j::n_inputs] for j in range(min(n_inputs, x.size))]


def repeat_noise(samples: Sequence[float] | np.ndarray, n_inputs: int = 1) -> float:
    """IQR / median of the latencies, each divided by the median of its own input's calls.

    When inputs of different sizes are cycled, the spread of all latencies mixes the inputs'
    true differences with noise; dividing each call by its input's median leaves the spread
    of repeated calls on the same input, which is what a noisy machine inflates. With one
    input it equals :func:`iqr_over_median`.

    Examples
    --------
    >>> round(repeat_noise([10, 100, 10, 100, 10, 100], 2), 3)  # two inputs, no repeat noise
    0.0
    >>> iqr_over_median([10, 100, 10, 100, 10, 100]) > 1
    True
    """
    groups = per_input(samples, n_inputs)
    normalised = np.concatenate([g / np.median(g) if np.median(g) > 0 else g for g in groups])
    return iqr_over_median(normalised)


def _nonempty(samples: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray(samples, dtype=np.float64).ravel()
    if x.size == 0:
        raise ValueError("no latencies to summarise")
    return x
