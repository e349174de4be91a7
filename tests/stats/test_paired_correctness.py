"""``PairedCorrectness``: one pair's counts, counted once, give the same numbers as the statistics it wraps.

The value is where grouped and independent examples part ways; every statistic it gives is
checked here against the functions of :mod:`headtohead.stats.paired` called directly, and
against independent computations (statsmodels' McNemar, the design effect from its definition).
"""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from headtohead.stats.mcnemar import RULE
from headtohead.stats.paired import (
    CLUSTERED_RULE,
    PairedCorrectness,
    clustered_counts,
    clustered_difference_interval,
    clustered_difference_pvalue,
    difference_interval,
    difference_pvalue,
    examples_to_decide,
)


def _pair(n: int, seed: int, failures: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two models' correctness (failed answers count as wrong) and a group per example."""
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, max(2, n // 7), n).astype(str)
    a = rng.random(n) < 0.8
    b = np.where(rng.random(n) < 0.7, a, rng.random(n) < 0.75)
    failed = rng.random(n) < failures  # no prediction: a wrong answer
    return a & ~failed, b, groups


@pytest.mark.parametrize(("n", "seed", "failures"), [(6, 0, 0.0), (40, 1, 0.2), (5000, 2, 0.0), (20_000, 3, 0.05)])
def test_ungrouped_value_is_the_score_statistics_of_its_counts(n: int, seed: int, failures: float) -> None:
    a, b, _ = _pair(n, seed, failures)
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    paired = PairedCorrectness.of(a, b)
    assert (int(paired.b), int(paired.c), int(paired.n)) == (only_a, only_b, n)
    assert paired.clusters is None and paired.n_groups is None and paired.design_effect == 1.0
    assert (paired.test, paired.method, paired.rule) == ("mcnemar-score", "tango-score", RULE)
    assert float(paired.estimate) == (only_a - only_b) / n
    assert tuple(map(float, paired.interval(0.9))) == tuple(map(float, difference_interval(only_a, only_b, n, 0.9)))
    assert float(paired.p_value) == float(difference_pvalue(only_a, only_b))
    if only_a + only_b:
        reference = sm_mcnemar([[0, only_a], [only_b, 0]], exact=False, correction=False)
        assert paired.statistic == pytest.approx(reference.statistic, rel=1e-12)
        assert float(paired.p_value) == pytest.approx(reference.pvalue, rel=1e-10)
    for margin in (0.001, 0.02):
        assert paired.examples_to_decide(margin) == examples_to_decide(only_a, only_b, n, margin)


@pytest.mark.parametrize(("n", "seed", "failures"), [(6, 4, 0.0), (40, 5, 0.2), (5000, 6, 0.0), (20_000, 7, 0.05)])
def test_grouped_value_is_the_clustered_statistics_of_its_counts(n: int, seed: int, failures: float) -> None:
    a, b, groups = _pair(n, seed, failures)
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    d = a.astype(np.int64) - b.astype(np.int64)
    counts = clustered_counts(d, groups)
    paired = PairedCorrectness.of(a, b, groups)
    assert (int(paired.b), int(paired.c), int(paired.n)) == (only_a, only_b, n)
    assert paired.n_groups == len(np.unique(groups))
    joined = "+exact" if (only_a == 0) != (only_b == 0) else ""  # one model never right alone: Tango's ∪ exact
    assert (paired.test, paired.method, paired.rule) == (
        "mcnemar-clustered",
        f"tango-score+clusters{joined}",
        CLUSTERED_RULE,
    )
    assert tuple(map(float, paired.interval())) == clustered_difference_interval(counts, only_a, only_b, n)
    assert float(paired.p_value) == clustered_difference_pvalue(counts, only_a, only_b)
    sums = np.array([d[groups == g].sum() for g in np.unique(groups)], dtype=np.float64)
    sizes = np.array([(groups == g).sum() for g in np.unique(groups)], dtype=np.float64)
    squares = float(np.sum(sums**2))
    assert paired.statistic == pytest.approx(sums.sum() ** 2 / squares if squares else 0.0, rel=1e-12)
    gap = (only_a - only_b) / n
    independent = n * ((only_a + only_b) / n - gap**2)
    deff = max(1.0, float(np.sum((sums - gap * sizes) ** 2)) / independent) if independent > 0 else 1.0
    assert paired.design_effect == pytest.approx(deff, rel=1e-12) and paired.design_effect >= 1.0
    needed = paired.examples_to_decide(0.01)
    assert needed == examples_to_decide(only_a, only_b, n, 0.01, design_effect=paired.design_effect)


def test_rows_restrict_the_counts_and_the_groups_alike() -> None:
    a, b, groups = _pair(300, 8, 0.1)
    rows = np.arange(300) % 3 == 0
    restricted = PairedCorrectness.of(a, b, groups, rows)
    direct = PairedCorrectness.of(a[rows], b[rows], groups[rows])
    assert (int(restricted.b), int(restricted.c), int(restricted.n)) == (int(direct.b), int(direct.c), 100)
    assert restricted.interval() == direct.interval() and float(restricted.p_value) == float(direct.p_value)
    assert PairedCorrectness.of(a, b, None, rows).interval() == PairedCorrectness.of(a[rows], b[rows]).interval()


@pytest.mark.parametrize("grouped", [False, True])
def test_an_array_of_comparisons_gives_each_cell_what_one_comparison_gives(grouped: bool) -> None:
    a, b, groups = _pair(400, 9, 0.05)
    masks = [np.arange(400) < 150, np.arange(400) % 2 == 0, np.ones(400, bool)]
    cells = [
        PairedCorrectness.of(x, y, groups if grouped else None, mask) for mask in masks for x, y in ((a, b), (b, a))
    ]
    stacked = PairedCorrectness(
        np.array([c.b for c in cells]).reshape(3, 2),
        np.array([c.c for c in cells]).reshape(3, 2),
        np.array([c.n for c in cells]).reshape(3, 2),
        tuple(c.clusters[0] for c in cells) if grouped else None,  # type: ignore[index]
    )
    low, high = stacked.interval(0.95)
    assert low.shape == high.shape == stacked.p_value.shape == (3, 2)
    for k, cell in enumerate(cells):
        assert (low.flat[k], high.flat[k]) == tuple(map(float, cell.interval(0.95)))
        assert stacked.p_value.flat[k] == float(cell.p_value)


def test_no_comparisons_and_mismatched_clusters() -> None:
    empty = PairedCorrectness(np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((2, 0)), ())
    assert empty.interval()[0].shape == empty.p_value.shape == (2, 0)
    with pytest.raises(ValueError, match="2 clustered counts for 1 comparisons"):
        PairedCorrectness(1, 0, 5, (clustered_counts(np.ones(5), np.arange(5)),) * 2)
