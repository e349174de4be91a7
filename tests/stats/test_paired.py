"""The paired score statistic: Tango's interval, McNemar's score test and the non-inferiority decision.

Checked against independent computations (the constrained likelihood maximised numerically,
statsmodels' McNemar, exact enumeration of every paired table) and by simulation.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import expit, gammaln
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from headtohead.stats.gate import accuracy_noninferiority
from headtohead.stats.paired import (
    clustered_counts,
    clustered_difference_interval,
    clustered_difference_pvalue,
    difference_interval,
    difference_pvalue,
    examples_to_decide,
    proportion_interval,
    score_z,
)

Z = stats.norm.isf(0.025)


def _brute_z(b: int, c: int, n: int, delta0: float) -> float:
    """Tango's statistic with the constrained maximum likelihood found numerically (no closed form)."""
    lo, hi = max(0.0, -delta0) + 1e-12, (1.0 - delta0) / 2.0 - 1e-12

    def minus_loglik(p01: float) -> float:
        p10 = p01 + delta0
        return -(b * np.log(p10) + c * np.log(p01) + (n - b - c) * np.log(1.0 - p10 - p01))

    p01 = optimize.minimize_scalar(minus_loglik, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}).x
    return (b - c - n * delta0) / np.sqrt(n * (2 * p01 + delta0 * (1 - delta0)))


def _trinomial(n: int, p10: float, p01: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (b, c) of ``n`` paired examples with its probability."""
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = b + c <= n
    b, c = b[ok], c[ok]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = (
            gammaln(n + 1)
            - gammaln(b + 1)
            - gammaln(c + 1)
            - gammaln(n - b - c + 1)
            + np.where(b > 0, b * np.log(max(p10, 1e-300)), 0.0)
            + np.where(c > 0, c * np.log(max(p01, 1e-300)), 0.0)
            + (n - b - c) * np.log(1 - p10 - p01)
        )
    p = np.exp(log_p)
    keep = p > 1e-14
    return b[keep], c[keep], p[keep]


def test_the_score_statistic_at_zero_is_mcnemar_without_correction() -> None:
    for b, c in [(10, 3), (3, 10), (40, 22), (1, 0), (0, 5)]:
        reference = sm_mcnemar([[50, b], [c, 50]], exact=False, correction=False)
        assert float(score_z(b, c, 100 + b + c)) ** 2 == pytest.approx(reference.statistic, rel=1e-12)
        assert float(difference_pvalue(b, c)) == pytest.approx(reference.pvalue, rel=1e-10)
    assert float(difference_pvalue(0, 0)) == 1.0


@pytest.mark.parametrize("b, c, n", [(6, 16, 161), (1, 7, 21), (0, 0, 60), (30, 2, 200), (12, 12, 50)])
def test_closed_form_matches_the_likelihood_maximised_numerically(b: int, c: int, n: int) -> None:
    for delta0 in (-0.2, -0.05, -0.01, 0.0, 0.01, 0.07, 0.3):
        assert float(score_z(b, c, n, delta0)) == pytest.approx(_brute_z(b, c, n, delta0), rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("b, c, n", [(6, 16, 161), (1, 7, 21), (0, 0, 60), (30, 2, 200)])
def test_interval_bounds_are_where_the_brute_force_statistic_crosses_z(b: int, c: int, n: int) -> None:
    low, high = (float(x) for x in difference_interval(b, c, n))
    estimate = (b - c) / n
    assert low <= estimate <= high
    lo_ref = optimize.brentq(lambda d: _brute_z(b, c, n, d) - Z, -1 + 1e-9, estimate) if estimate > -1 else -1
    hi_ref = optimize.brentq(lambda d: _brute_z(b, c, n, d) + Z, estimate, 1 - 1e-9) if estimate < 1 else 1
    assert (low, high) == pytest.approx((lo_ref, hi_ref), abs=1e-6)


def test_identical_models_get_an_interval_not_a_point() -> None:
    low, high = difference_interval(0, 0, 60)
    assert float(high) == pytest.approx(Z**2 / (60 + Z**2), rel=1e-9) and float(low) == pytest.approx(-float(high))


def test_significant_exactly_when_the_interval_excludes_zero() -> None:
    for n in (30, 100, 1000):
        b, c = (a.ravel() for a in np.meshgrid(np.arange(41), np.arange(41)))
        keep = b + c <= n
        b, c = b[keep], c[keep]
        low, high = difference_interval(b, c, n)
        significant = difference_pvalue(b, c) <= 0.05
        assert np.array_equal(significant, (low > 0) | (high < 0))
        estimate = (b - c) / n
        assert np.all((low <= estimate) & (estimate <= high))


@pytest.mark.parametrize("n, p10, p01", [(50, 0.05, 0.05), (100, 0.1, 0.02), (200, 0.02, 0.01), (500, 0.2, 0.15)])
def test_interval_covers_by_exact_enumeration(n: int, p10: float, p01: float) -> None:
    b, c, p = _trinomial(n, p10, p01)
    low, high = difference_interval(b, c, n)
    truth = p10 - p01
    coverage = p[(low <= truth + 1e-12) & (high >= truth - 1e-12)].sum() / p.sum()
    assert coverage >= 0.93


@pytest.mark.parametrize("n", [100, 500])
@pytest.mark.parametrize("discordance", [0.01, 0.02, 0.03])
def test_the_gate_passes_a_drop_on_the_margin_at_most_at_its_level(n: int, discordance: float) -> None:
    """The issue's case: a candidate worse by exactly the margin (1 pp), few examples disagreeing.

    The probability of a false pass, summed exactly over every table, stays at or below the
    one-sided 2.5 % (the paired bootstrap gave 11.3 % at 100 examples, 2 % / 1 % discordance).
    """
    margin = 0.005 if discordance == 0.01 else 0.01
    p10, p01 = (discordance - margin) / 2, (discordance + margin) / 2  # b: candidate right only
    b, c, p = _trinomial(n, p10, p01)
    low, _ = difference_interval(b, c, n)
    assert p[low >= -margin].sum() <= 0.025


def test_identical_predictions_on_60_examples_are_inconclusive_and_say_what_would_decide() -> None:
    y = np.zeros(60, dtype=int)
    decision = accuracy_noninferiority(y, y, y, margin=0.001)
    assert decision.outcome == "inconclusive" and decision.low < -0.001 < decision.high
    assert decision.needed == int(np.ceil(Z**2 * (1 - 0.001) / 0.001))  # that many agreeing examples would pass
    assert (
        accuracy_noninferiority(np.zeros(4000, int), np.zeros(4000, int), np.zeros(4000, int), margin=0.001).outcome
        == "pass"
    )


def test_examples_to_decide_reach_the_promised_power() -> None:
    """With the observed rates taken as true, the suggested n passes about 80 % of the time (exact sum)."""
    for b, c, n, margin in [(8, 6, 400, 0.02), (10, 16, 800, 0.02), (3, 3, 300, 0.02)]:
        needed = examples_to_decide(b, c, n, margin)
        bb, cc, p = _trinomial(needed, b / n, c / n)
        low, _ = difference_interval(bb, cc, needed)
        assert 0.72 <= p[low >= -margin].sum() <= 0.9


def test_wilson_and_clustered_proportion_intervals() -> None:
    assert proportion_interval(17, 40) == pytest.approx(proportion_confint(17, 40, method="wilson"), abs=1e-12)
    groups = np.repeat(np.arange(10), 10)
    correct = np.repeat([1, 1, 1, 1, 1, 0, 0, 1, 1, 1], 10).astype(bool)  # all-or-nothing groups
    plain = proportion_interval(80, 100)
    clustered = proportion_interval(80, 100, counts=clustered_counts(correct, groups))
    assert clustered[0] < plain[0] and clustered[1] >= plain[1]  # ten groups, not a hundred examples


def test_clustered_test_is_durkalskis_and_agrees_with_its_interval() -> None:
    rng = np.random.default_rng(5)
    for _ in range(200):
        k = int(rng.integers(8, 40))
        groups = np.repeat(np.arange(k), rng.integers(1, 12, k))
        d = rng.choice([-1, 0, 1], size=len(groups), p=[0.1, 0.75, 0.15])
        counts = clustered_counts(d, groups)
        b, c, n = int((d == 1).sum()), int((d == -1).sum()), len(d)
        s = np.bincount(groups, weights=d)
        durkalski = stats.chi2.sf(s.sum() ** 2 / (s**2).sum(), 1) if (s**2).sum() else 1.0
        p = clustered_difference_pvalue(counts, b, c)
        assert p == pytest.approx(max(durkalski, float(difference_pvalue(b, c))), rel=1e-10)
        low, high = clustered_difference_interval(counts, b, c, n)
        assert low <= (b - c) / n <= high
        assert (low > 0 or high < 0) == (p <= 0.05)


def _clustered_null_runs(runs: int, seed: int) -> tuple[float, float]:
    """The issue's simulation: 60 groups of 15 examples, models equal on average, each better for some groups."""
    rng = np.random.default_rng(seed)
    plain = grouped = 0
    groups = np.repeat(np.arange(60), 15)
    for _ in range(runs):
        effect = rng.normal(0.0, 1.0, 60)[groups]
        a = rng.random(len(groups)) < expit(1.4 + effect)
        b = rng.random(len(groups)) < expit(1.4 - effect)
        d = a.astype(int) - b.astype(int)
        bb, cc = int((d == 1).sum()), int((d == -1).sum())
        plain += difference_pvalue(bb, cc) <= 0.05
        grouped += clustered_difference_pvalue(clustered_counts(d, groups), bb, cc) <= 0.05
    return plain / runs, grouped / runs


def test_groups_bring_the_false_better_rate_back_to_alpha() -> None:
    plain, grouped = _clustered_null_runs(400, seed=11)
    assert plain > 0.25  # the examples-as-independent test: a winner in about a third of the runs
    assert grouped <= 0.05 + 2.5 * np.sqrt(0.05 * 0.95 / 400)  # ≤ 6 %, the bound, with room for MC error


@pytest.mark.parametrize("n", [20, 50, 100, 500, 2000])
def test_interval_covers_where_one_model_is_never_right_alone(n: int) -> None:
    """c = 0 on every run: the gap is b/n's share. Tango's far bound alone covered 92.7 % at n = 100 (p = 0.055)."""
    b, shares = np.arange(n + 1), np.linspace(0.001, 0.999, 400)
    low, high = difference_interval(b, np.zeros_like(b), n)
    coverage = np.array([stats.binom.pmf(b, n, p)[(low <= p) & (p <= high)].sum() for p in shares])
    assert coverage.min() >= 0.95 - 1e-9  # the exact interval inside it covers at least its level
    # mirrored: only B is ever right alone
    low_b, high_b = difference_interval(np.zeros_like(b), b, n)
    np.testing.assert_allclose((low_b, high_b), (-high, -low), rtol=0, atol=1e-12)


def test_where_one_count_is_zero_the_interval_holds_tangos_and_the_exact_one() -> None:
    """Tango's interval (brute force) joined with statsmodels' Clopper–Pearson interval of b/n; significance as before."""
    for n in (40, 100, 1000):
        b = np.arange(1, min(60, n // 2) + 1)
        low, high = difference_interval(b, np.zeros_like(b), n)
        exact = np.array([proportion_confint(int(k), n, alpha=0.05, method="beta") for k in b])
        score = np.array([_brute_bounds(int(k), 0, n) for k in b])  # Tango's own bounds
        np.testing.assert_allclose(low, np.minimum(score[:, 0], exact[:, 0]), rtol=0, atol=1e-6)
        np.testing.assert_allclose(high, np.maximum(score[:, 1], exact[:, 1]), rtol=0, atol=1e-6)
        assert np.any(exact[:, 0] < score[:, 0] - 1e-5)  # the exact bound is taken somewhere …
        assert np.array_equal(low > 0, difference_pvalue(b, 0) <= 0.05)  # … and significance is unchanged
    # with both counts above 0 nothing changes
    assert tuple(map(float, difference_interval(6, 1, 40))) == pytest.approx(_brute_bounds(6, 1, 40), abs=1e-6)


def _brute_bounds(b: int, c: int, n: int) -> tuple[float, float]:
    estimate = (b - c) / n
    low = optimize.brentq(lambda d: _brute_z(b, c, n, d) - Z, -1 + 1e-9, estimate) if estimate > -1 else -1.0
    high = optimize.brentq(lambda d: _brute_z(b, c, n, d) + Z, estimate, 1 - 1e-9) if estimate < 1 else 1.0
    return low, high
