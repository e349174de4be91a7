"""Almost Stochastic Order: the violation ratio computed exactly, and deep-significance's documented example."""

from __future__ import annotations

import numpy as np
import pytest

from headtohead.stats.aso import aso_min_epsilon, violation_ratio


def _grid_ratio(a: np.ndarray, b: np.ndarray, dt: float = 1e-5) -> float:
    """ε_W2 by brute force on a fine grid of t (the quantile functions evaluated directly)."""
    t = np.arange(dt / 2, 1, dt)
    qa = np.sort(a)[np.minimum(np.ceil(t * a.size).astype(int) - 1, a.size - 1)]
    qb = np.sort(b)[np.minimum(np.ceil(t * b.size).astype(int) - 1, b.size - 1)]
    gap = qb - qa
    return float(np.sum(np.where(gap > 0, gap**2, 0)) / np.sum(gap**2))


def test_exact_violation_ratio_equals_a_fine_grid():
    rng = np.random.default_rng(0)
    for n, m in [(5, 5), (3, 7), (12, 9)]:
        a, b = rng.normal(0.2, 1, n), rng.normal(0, 1, m)
        assert violation_ratio(a, b) == pytest.approx(_grid_ratio(a, b), abs=2e-4)


def test_violation_ratio_extremes_and_symmetry():
    assert violation_ratio(np.array([0.9, 0.95]), np.array([0.8, 0.85])) == 0.0  # A dominates
    assert violation_ratio(np.array([0.8, 0.85]), np.array([0.9, 0.95])) == 1.0
    assert violation_ratio(np.array([0.8, 0.9]), np.array([0.8, 0.9])) == 0.5  # identical: the convention
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=6), rng.normal(size=4)
    assert violation_ratio(a, b) + violation_ratio(b, a) == pytest.approx(1.0)


def test_deepsig_documented_example():
    """deep-significance's README, scenario 1: np.random.seed(1234); A ~ N(0.9, 0.8), B ~ N(0, 1), five seeds each;
    ``aso(A, B, seed=1234)`` → 0.225 ("so A is better"). ε_min is a bootstrap bound: ours, averaged over 20 bootstrap
    seeds, lies within Monte-Carlo error of it (one run's spread is ≈ 0.018)."""
    legacy = np.random.RandomState(1234)  # the example's legacy global generator, in a local instance
    a = legacy.normal(loc=0.9, scale=0.8, size=5)
    b = legacy.normal(loc=0, scale=1, size=5)
    values = [aso_min_epsilon(a, b, seed=s) for s in range(20)]
    assert np.mean(values) == pytest.approx(0.225, abs=0.015)
    assert all(v < 0.5 for v in values)  # "A is better" from every bootstrap seed
    assert violation_ratio(a, b) == 0.0  # the estimate itself; ε_min is its upper bound
    assert aso_min_epsilon(b, a, seed=0) == 1.0


def test_more_seeds_tighten_the_bound_and_alpha_widens_it():
    rng = np.random.default_rng(3)
    few = aso_min_epsilon(rng.normal(0.3, 1, 5), rng.normal(0, 1, 5), seed=1)
    many = aso_min_epsilon(rng.normal(0.3, 1, 400), rng.normal(0, 1, 400), seed=1)
    assert many < few
    a, b = rng.normal(0.3, 1, 20), rng.normal(0, 1, 20)
    assert aso_min_epsilon(a, b, alpha=0.01, seed=2) >= aso_min_epsilon(a, b, alpha=0.05, seed=2)


def test_refuses_empty_scores_and_bad_alpha():
    with pytest.raises(ValueError, match="non-empty"):
        aso_min_epsilon(np.array([]), np.array([1.0]))
    with pytest.raises(ValueError, match="alpha"):
        aso_min_epsilon(np.array([1.0]), np.array([1.0]), alpha=1.5)
