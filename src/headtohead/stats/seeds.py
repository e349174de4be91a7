"""Models trained with several seeds: mean ± std per metric, and comparisons across seeds.

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from headtohead.errors import ResultsError
from headtohead.results.comparison import (
    ModelSeedStats,
    MultiSeedSummary,
    SeedAggregate,
    SeedComparison,
    SeedResult,
)
from headtohead.stats.multiple import holm_adjust

__all__ = ["WILCOXON_MIN_SEEDS", "aggregate_metric", "compare_across_seeds", "summarise_seeds"]

#: Seeds from which the Wilcoxon signed-rank test is also reported.
WILCOXON_MIN_SEEDS = 6


def aggregate_metric(metric: str, seeds: Sequence[int], values: Sequence[float]) -> SeedAggregate:
    """Mean and sample standard deviation (ddof=1) of one metric over seeds.

    Examples
    --------
    >>> agg = aggregate_metric("accuracy", [1, 2, 3], [0.90, 0.92, 0.91])
    >>> round(agg.mean, 3), round(agg.std, 3), agg.n_seeds
    (0.91, 0.01, 3)
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError(f"metric '{metric}' needs at least one finite value per seed, got {list(values)}")
    return SeedAggregate(
        metric=metric,
        seeds=[int(s) for s in seeds],
        values=arr.tolist(),
        mean=float(arr.mean()),
        std=float(arr.std(ddof=1)) if arr.size > 1 else None,
        n_seeds=int(arr.size),
    )


def compare_across_seeds(
    a_values: Sequence[float],
    b_values: Sequence[float],
    *,
    model_a: str = "a",
    model_b: str = "b",
    metric: str = "accuracy",
    alpha: float = 0.05,
) -> SeedComparison:
    """Paired comparison of two models over seeds (value ``i`` of each model from seed ``i``).

    Parameters
    ----------
    a_values, b_values : sequence of float
        The metric of each model, aligned by seed.
    model_a, model_b, metric : str
        Names for the record.
    alpha : float
        Level for ``significant`` (on the t-test; adjusted later when there are several pairs).

    Returns
    -------
    SeedComparison
        ``test="none"`` with a note for a single seed; when the differences do not vary
        (zero variance) the t-test is undefined and the note says so (p = 1 if they are
        all zero).

    Examples
    --------
    >>> c = compare_across_seeds([.91, .92, .90, .93], [.88, .90, .87, .90])
    >>> c.test, round(c.mean_difference, 3), c.p_value < 0.05
    ('paired-t', 0.028, True)
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    a = np.asarray(a_values, dtype=np.float64)
    b = np.asarray(b_values, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"need equally many values per model (one per seed), got {a.size} and {b.size}")
    diff = a - b
    base: dict[str, Any] = dict(
        model_a=model_a,
        model_b=model_b,
        metric=metric,
        n_seeds=int(diff.size),
        mean_difference=float(diff.mean()),
        std_difference=float(diff.std(ddof=1)) if diff.size > 1 else None,
    )
    if diff.size == 1:
        return SeedComparison(
            **base,
            test="none",
            statistic=None,
            p_value=None,
            note="one seed per model: no test across seeds is possible; train with more seeds",
        )
    scale = max(1.0, float(np.abs(diff).max()))
    if np.ptp(diff) <= 1e-12 * scale:  # float noise: 0.9 − 0.8 and 0.8 − 0.7 differ in the last bit
        if np.all(np.abs(diff) <= 1e-12 * scale):
            return SeedComparison(**base, test="paired-t", statistic=0.0, p_value=1.0, note="identical on every seed")
        return SeedComparison(
            **base,
            test="paired-t",
            statistic=None,
            p_value=None,
            note="the difference is the same on every seed (zero variance): the t-test is "
            "undefined; check that the seeds really changed the training",
        )
    t = stats.ttest_rel(a, b)
    out: dict[str, Any] = dict(
        base,
        test="paired-t",
        statistic=float(t.statistic),
        p_value=float(t.pvalue),
        significant=bool(t.pvalue <= alpha),
    )
    if diff.size >= WILCOXON_MIN_SEEDS:
        w = stats.wilcoxon(a, b)
        out.update(wilcoxon_statistic=float(w.statistic), wilcoxon_p=float(w.pvalue))
    return SeedComparison(**out)


def _aligned(results: Sequence[SeedResult]) -> dict[str, dict[int, dict[str, float]]]:
    table: dict[str, dict[int, dict[str, float]]] = {}
    for result in results:
        seeds = table.setdefault(result.model, {})
        if result.seed in seeds:
            raise ResultsError(f"model '{result.model}' has two results for seed {result.seed}; keep one per seed")
        seeds[result.seed] = dict(result.metrics)
    return table


def summarise_seeds(
    results: Sequence[SeedResult],
    *,
    metrics: Sequence[str] | None = None,
    compare_metric: str = "accuracy",
    alpha: float = 0.05,
) -> MultiSeedSummary:
    """Aggregate every model over its seeds and compare every pair over their shared seeds.

    Parameters
    ----------
    results : sequence of SeedResult
        One per (model, seed).
    metrics : sequence of str, optional
        Metrics to aggregate (default: every metric present in all results).
    compare_metric : str
        The metric the pairwise tests use; their p-values are Holm-adjusted over pairs.
    alpha : float

    Returns
    -------
    MultiSeedSummary

    Raises
    ------
    ResultsError
        No results, a duplicated (model, seed), a metric missing from some result, or two
        models without a common seed.
    """
    if not results:
        raise ResultsError("no seed results to summarise")
    table = _aligned(results)
    if metrics is None:
        common = set.intersection(*(set(r.metrics) for r in results))
        metrics = [m for m in results[0].metrics if m in common]
    for model, seeds in table.items():
        for seed, values in seeds.items():
            missing = [m for m in list(metrics) + [compare_metric] if m not in values]
            if missing:
                raise ResultsError(f"model '{model}' seed {seed}: metrics {missing} missing from its results")
    models = []
    for model, seeds in table.items():
        order = sorted(seeds)
        models.append(
            ModelSeedStats(
                model=model, metrics=[aggregate_metric(m, order, [seeds[s][m] for s in order]) for m in metrics]
            )
        )
    comparisons = []
    for name_a, name_b in itertools.combinations(table, 2):
        shared = sorted(set(table[name_a]) & set(table[name_b]))
        if not shared:
            raise ResultsError(f"models '{name_a}' and '{name_b}' share no seed; train both with the same seeds")
        comparisons.append(
            compare_across_seeds(
                [table[name_a][s][compare_metric] for s in shared],
                [table[name_b][s][compare_metric] for s in shared],
                model_a=name_a,
                model_b=name_b,
                metric=compare_metric,
                alpha=alpha,
            )
        )
    return MultiSeedSummary(alpha=alpha, models=models, comparisons=_holm(comparisons, alpha))


def _holm(comparisons: list[SeedComparison], alpha: float) -> list[SeedComparison]:
    tested = [i for i, c in enumerate(comparisons) if c.p_value is not None]
    adjusted = holm_adjust([comparisons[i].p_value for i in tested])  # type: ignore[misc]
    out = list(comparisons)
    for i, p in zip(tested, adjusted, strict=True):
        out[i] = comparisons[i].model_copy(update={"p_adjusted": float(p), "significant": bool(p <= alpha)})
    return out
