"""More than two models: Holm–Bonferroni over all pairs, and a ranking in groups.

With ``k`` models there are ``k(k−1)/2`` pairwise tests; at α = 0.05 each, five models
would show a "significant" pair by chance about 40 % of the time. Holm's step-down
adjustment keeps the chance of *any* false "better" at α (family-wise), and is uniformly
more powerful than plain Bonferroni.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from headtohead.results.comparison import RankGroup

__all__ = ["holm_adjust", "holm_rows", "rank_groups"]


def holm_adjust(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (:func:`statsmodels.stats.multitest.multipletests`).

    Parameters
    ----------
    p_values : sequence of float
        Unadjusted p-values of all the pairs of one run.

    Returns
    -------
    ndarray of float
        Adjusted p-values in the same order; a pair is significant when its adjusted p ≤ α.

    Examples
    --------
    >>> holm_adjust([0.01, 0.04, 0.03]).round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.size == 0:
        return p
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"p-values must lie in [0, 1], got {p.tolist()}")
    from statsmodels.stats.multitest import multipletests

    return np.asarray(multipletests(p, method="holm")[1], dtype=np.float64)


def holm_rows(p_values: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values of each row (one family per row); NaN entries are not tested and stay NaN.

    The numbers of :func:`holm_adjust` (statsmodels' ``multipletests``,
    checked in ``tests/stats/test_speed_family.py``), for many families at once and without
    its cost per call (it collects garbage every time: ~60 ms in a process holding a run),
    since every display of a speed record runs the warning checks again.

    Examples
    --------
    >>> holm_rows(np.array([[0.01, 0.04, 0.03], [0.2, np.nan, 0.01]])).round(3).tolist()
    [[0.03, 0.06, 0.06], [0.2, nan, 0.02]]
    """
    p = np.atleast_2d(np.asarray(p_values, dtype=np.float64))
    tested = np.isfinite(p)
    m = tested.sum(axis=1, keepdims=True)
    filled = np.where(tested, p, np.inf)
    order = np.argsort(filled, axis=1, kind="stable")
    ranked = np.take_along_axis(filled, order, axis=1)
    # untested entries sort last and do not raise the running maximum
    finite = np.isfinite(ranked)
    stepped = np.where(finite, np.where(finite, ranked, 0.0) * (m - np.arange(p.shape[1])), -np.inf)
    adjusted = np.minimum(np.maximum.accumulate(stepped, axis=1), 1.0)
    out = np.empty_like(adjusted)
    np.put_along_axis(out, order, adjusted, axis=1)
    return np.where(tested, out, np.nan)


def rank_groups(accuracies: Mapping[str, float], different: Collection[frozenset[str]]) -> list[RankGroup]:
    """Group models that no test told apart, best first.

    Models are sorted by accuracy (ties keep the given order). Walking down that list, a
    model joins the current group when it is *not* significantly different from every
    model already in the group; otherwise it opens the next group. So every pair inside a
    group is "no significant difference", and the first model of each group is
    significantly worse than at least one model of the group above. Non-significance is not
    transitive, so a model may also be indistinguishable from a member of a neighbouring
    group; the pairwise verdicts have the detail.

    Parameters
    ----------
    accuracies : mapping of str to float
        Model name → accuracy.
    different : collection of frozenset of str
        The pairs found significantly different (after adjustment).

    Returns
    -------
    list of RankGroup

    Examples
    --------
    >>> groups = rank_groups({"a": .9, "b": .89, "c": .8}, {frozenset({"a", "c"}), frozenset({"b", "c"})})
    >>> [(g.rank, g.models) for g in groups]
    [(1, ['a', 'b']), (2, ['c'])]
    """
    order = sorted(accuracies, key=lambda name: -accuracies[name])  # sorted() is stable
    groups: list[list[str]] = []
    for name in order:
        if groups and all(frozenset({name, other}) not in different for other in groups[-1]):
            groups[-1].append(name)
        else:
            groups.append([name])
    return [RankGroup(rank=i + 1, models=g, accuracies=[float(accuracies[m]) for m in g]) for i, g in enumerate(groups)]
