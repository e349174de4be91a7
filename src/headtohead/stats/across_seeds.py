"""Models trained with several seeds on one data set: Almost Stochastic Order beside the paired t, and where the spread comes from.

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np

from headtohead.results.suite import DatasetSeeds, SeedPair, SeedSpread
from headtohead.stats.aso import aso_min_epsilon
from headtohead.stats.seeds import compare_across_seeds

__all__ = ["standard_error", "variance_share", "seed_analysis"]


def standard_error(low: float | None, high: float | None, confidence: float = 0.95) -> float | None:
    """The standard error a two-sided normal interval implies: ``(high − low) / (2·z)``; ``None`` without one.

    Examples
    --------
    >>> round(standard_error(0.80, 0.84), 4)
    0.0102
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    if low is None or high is None:
        return None
    return float((high - low) / (2.0 * stats.norm.ppf(0.5 + confidence / 2.0)))


def variance_share(seed_sd: float | None, test_se: float | None) -> float | None:
    """``seed_sd² / (seed_sd² + test_se²)``; ``None`` when either is unknown or both are 0.

    Examples
    --------
    >>> variance_share(0.01, 0.01), variance_share(0.0, 0.02), variance_share(None, 0.02)
    (0.5, 0.0, None)
    """
    if seed_sd is None or test_se is None or (seed_sd == 0 and test_se == 0):
        return None
    return float(seed_sd**2 / (seed_sd**2 + test_se**2))


def _sd(values: np.ndarray) -> float | None:
    return float(np.std(values, ddof=1)) if values.size > 1 else None


def seed_analysis(
    values: Mapping[str, Mapping[int, float]],
    *,
    metric: str = "accuracy",
    higher_is_better: bool = True,
    test_se: Mapping[str, float | None] | None = None,
    test_se_difference: Mapping[tuple[str, str], float | None] | None = None,
    aso_alpha: float = 0.05,
    n_bootstrap: int = 1000,
    seed: int = 0,
) -> DatasetSeeds | None:
    """Every model's spread over seeds and every pair over their shared seeds.

    Parameters
    ----------
    values : mapping
        model → seed → metric.
    metric : str
    higher_is_better : bool
        Direction of the metric (ASO compares oriented scores).
    test_se : mapping, optional
        model → the test set's sampling standard error of its metric.
    test_se_difference : mapping, optional
        (model a, model b) → the test set's sampling standard error of ``a − b``.
    aso_alpha : float
        One-sided level of each ε_min (already divided by the number of comparisons).
    n_bootstrap, seed : int
        Of ASO's bootstrap.

    Returns
    -------
    DatasetSeeds or None
        ``None`` when no model has two seeds.
    """
    test_se, test_se_difference = test_se or {}, test_se_difference or {}
    if not any(len(v) > 1 for v in values.values()):
        return None
    spreads = []
    for model, by_seed in values.items():
        array = np.array([by_seed[s] for s in sorted(by_seed)], dtype=np.float64)
        sd = _sd(array)
        spreads.append(
            SeedSpread(
                model=model,
                n_seeds=int(array.size),
                mean=float(array.mean()),
                seed_sd=sd,
                test_set_se=test_se.get(model),
                seed_share=variance_share(sd, test_se.get(model)),
            )
        )
    sign = 1.0 if higher_is_better else -1.0
    pairs = []
    for index, (a, b) in enumerate(itertools.combinations(values, 2)):
        shared = sorted(set(values[a]) & set(values[b]))
        if len(shared) < 2:
            continue
        x = np.array([values[a][s] for s in shared], dtype=np.float64)
        y = np.array([values[b][s] for s in shared], dtype=np.float64)
        t = compare_across_seeds(x.tolist(), y.tolist(), model_a=a, model_b=b, metric=metric)
        sd = _sd(x - y)
        se = test_se_difference.get((a, b))
        pairs.append(
            SeedPair(
                model_a=a,
                model_b=b,
                n_seeds=len(shared),
                mean_difference=float((x - y).mean()),
                t_statistic=t.statistic,
                t_p_value=t.p_value,
                aso_a_over_b=aso_min_epsilon(
                    sign * x, sign * y, alpha=aso_alpha, n_bootstrap=n_bootstrap, seed=seed + index
                ),
                aso_b_over_a=aso_min_epsilon(
                    sign * y, sign * x, alpha=aso_alpha, n_bootstrap=n_bootstrap, seed=seed + index
                ),
                aso_confidence=1.0 - aso_alpha,
                seed_sd_difference=sd,
                test_set_se_difference=se,
                seed_share=variance_share(sd, se),
                note=t.note,
            )
        )
    seeds = sorted({s for by_seed in values.values() for s in by_seed})
    return DatasetSeeds(metric=metric, seeds=seeds, models=spreads, pairs=pairs)
