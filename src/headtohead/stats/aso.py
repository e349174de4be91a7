"""Almost Stochastic Order (del Barrio, Cuesta-Albertos & Matrán 2018; Dror, Shlomov & Reichart, ACL 2019).

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

import numpy as np

__all__ = ["violation_ratio", "aso_min_epsilon"]


def _steps(n: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The intervals on which both quantile functions are constant: their lengths and the order statistics used."""
    edges = np.union1d(np.arange(n + 1) / n, np.arange(m + 1) / m)
    lengths = np.diff(edges)
    middle = (edges[:-1] + edges[1:]) / 2
    index_a = np.minimum(np.ceil(middle * n).astype(np.int64) - 1, n - 1)
    index_b = np.minimum(np.ceil(middle * m).astype(np.int64) - 1, m - 1)
    return lengths, index_a, index_b


def _ratios(sorted_a: np.ndarray, sorted_b: np.ndarray, steps: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """ε_W2 of each row pair (rows: samples, columns: sorted scores)."""
    lengths, index_a, index_b = steps
    gap = sorted_b[..., index_b] - sorted_a[..., index_a]  # > 0 where B is ahead: the violation
    squared = lengths * gap**2
    total = squared.sum(axis=-1)
    violated = np.where(gap > 0, squared, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, violated / np.where(total > 0, total, 1.0), 0.5)


def violation_ratio(a: np.ndarray, b: np.ndarray) -> float:
    """ε_W2(A, B): the share of the squared quantile distance where B's quantile is above A's.

    Examples
    --------
    >>> violation_ratio(np.array([0.9, 0.8]), np.array([0.7, 0.6])), violation_ratio(np.array([0.7]), np.array([0.9]))
    (0.0, 1.0)
    """
    a, b = np.sort(np.asarray(a, dtype=np.float64)), np.sort(np.asarray(b, dtype=np.float64))
    return float(_ratios(a, b, _steps(a.size, b.size)))


def aso_min_epsilon(
    a: np.ndarray, b: np.ndarray, *, alpha: float = 0.05, n_bootstrap: int = 1000, seed: int = 0
) -> float:
    """ε_min of "A is almost stochastically better than B" at level ``alpha`` (higher scores are better).

    Parameters
    ----------
    a, b : array of float
        Scores of the two models, e.g. one per training seed (their sizes may differ).
    alpha : float
        One-sided level of the bound (divide it by the number of comparisons for Bonferroni).
    n_bootstrap : int
        Bootstrap resamples behind σ̂.
    seed : int

    Returns
    -------
    float
        In [0, 1]: 0 — A stochastically dominates B; below 0.5 — A is almost stochastically
        better; the smaller, the more confident.

    Examples
    --------
    >>> aso_min_epsilon(np.array([0.91, 0.92, 0.93, 0.90, 0.92]), np.array([0.85, 0.86, 0.84, 0.87, 0.85]))
    0.0
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1 or a.size == 0 or b.size == 0:
        raise ValueError("need two non-empty one-dimensional score vectors")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    n, m = a.size, b.size
    steps = _steps(n, m)
    observed = float(_ratios(np.sort(a), np.sort(b), steps))
    rng = np.random.default_rng(seed)
    resampled_a = np.sort(a[rng.integers(0, n, size=(n_bootstrap, n))], axis=1)
    resampled_b = np.sort(b[rng.integers(0, m, size=(n_bootstrap, m))], axis=1)
    scale = np.sqrt(n * m / (n + m))
    sigma = float(np.std(scale * (_ratios(resampled_a, resampled_b, steps) - observed)))
    return float(np.clip(observed + stats.norm.ppf(1.0 - alpha) * sigma / scale, 0.0, 1.0))
