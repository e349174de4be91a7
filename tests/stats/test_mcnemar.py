"""McNemar's test: equal to statsmodels, the exact/χ² rule, mid-p, and the edge cases."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from headtohead.stats.mcnemar import EXACT_BELOW, contingency, mcnemar_pvalues, mcnemar_test


def _tables() -> list[tuple[int, int]]:
    grid = [(b, c) for b in range(0, 41) for c in range(0, 41) if b != c]
    return grid + [(300, 250), (1000, 1100), (5, 400), (12, 13), (60, 0)]


@pytest.mark.parametrize("exact", [True, False])
def test_equals_statsmodels_to_1e12(exact: bool) -> None:
    for b, c in _tables():
        ours_stat, ours_p, _ = mcnemar_pvalues(np.array(b), np.array(c), "exact" if exact else "chi2")
        ref = sm_mcnemar([[7, b], [c, 3]], exact=exact, correction=True)
        assert abs(float(ours_p) - ref.pvalue) <= 1e-12, (b, c)
        assert abs(float(ours_stat) - ref.statistic) <= 1e-12, (b, c)


def test_auto_rule_switches_at_25_discordant_pairs() -> None:
    below = mcnemar_test(
        np.array([True] * 20 + [False] * 4 + [True] * 10), np.array([False] * 20 + [True] * 4 + [True] * 10), "auto"
    )
    assert below.discordant == EXACT_BELOW - 1 and below.test == "mcnemar-exact"
    at = mcnemar_test(np.array([True] * 20 + [False] * 5), np.array([False] * 20 + [True] * 5), "auto")
    assert at.discordant == EXACT_BELOW and at.test == "mcnemar-chi2"
    ref = sm_mcnemar([[0, 20], [5, 0]], exact=False, correction=True)
    assert at.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_the_default_is_the_score_test_without_continuity_correction() -> None:
    result = mcnemar_test(np.array([True] * 20 + [False] * 5), np.array([False] * 20 + [True] * 5))
    ref = sm_mcnemar([[0, 20], [5, 0]], exact=False, correction=False)
    assert result.test == "mcnemar-score" and result.p_value == pytest.approx(ref.pvalue, abs=1e-12)
    assert result.statistic == pytest.approx(ref.statistic, abs=1e-12)


def test_no_discordant_pairs_gives_p_one_without_warnings() -> None:
    same = np.array([True, False, True, True])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in ("score", "auto", "exact", "chi2", "midp"):
            result = mcnemar_test(same, same, method)  # type: ignore[arg-type]
            assert result.p_value == 1.0 and result.statistic == 0.0
            assert result.p_value_midp == 1.0


@pytest.mark.parametrize("method", ["score", "auto", "exact", "chi2", "midp"])
def test_balanced_discordance_gives_p_one(method: str) -> None:
    _, p, _ = mcnemar_pvalues(np.array([1, 7, 30]), np.array([1, 7, 30]), method)  # type: ignore[arg-type]
    assert np.all(p == 1.0)


def test_midp_is_exact_minus_half_point_probability() -> None:
    for b, c in [(3, 11), (20, 8), (0, 6), (15, 40)]:
        _, exact, _ = mcnemar_pvalues(np.array(b), np.array(c), "exact")
        _, midp, _ = mcnemar_pvalues(np.array(b), np.array(c), "midp")
        k, n = min(b, c), b + c
        assert float(midp) == pytest.approx(float(exact) - stats.binom.pmf(k, n, 0.5), abs=1e-12)
        assert float(midp) < float(exact)


def test_contingency_table_and_direction() -> None:
    a = np.array([1, 1, 1, 0, 0, 1], dtype=bool)
    b = np.array([1, 0, 0, 1, 0, 1], dtype=bool)
    assert contingency(a, b) == (2, 2, 1, 1)
    result = mcnemar_test(a, b)
    assert result.table == (2, 2, 1, 1)
    assert mcnemar_test(b, a).table == (2, 1, 2, 1)


def test_vectorised_equals_scalar() -> None:
    rng = np.random.default_rng(3)
    b, c = rng.integers(0, 80, 200), rng.integers(0, 80, 200)
    _, p, exact = mcnemar_pvalues(b, c)
    for i in range(0, 200, 17):
        single = mcnemar_test(
            np.r_[np.ones(b[i], bool), np.zeros(c[i], bool)], np.r_[np.zeros(b[i], bool), np.ones(c[i], bool)]
        )
        assert single.p_value == p[i]
        assert (single.test == "mcnemar-exact") == exact[i]


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError):
        mcnemar_pvalues(np.array([-1]), np.array([3]))
    with pytest.raises(ValueError):
        mcnemar_pvalues(np.array([1]), np.array([3]), "fisher")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        contingency(np.ones(3, bool), np.ones(4, bool))
