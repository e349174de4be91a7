"""The Bayesian signed-rank test against baycomp's SignedRankTest, within Monte-Carlo error."""

from __future__ import annotations

import numpy as np
import pytest

from headtohead.stats.bayes_signed_rank import bayesian_signed_rank

# Demšar (2006) Table 6 columns: C4.5, C4.5+m, C4.5+cf.
C45 = np.array([0.763, 0.599, 0.954, 0.628, 0.882, 0.936, 0.661, 0.583, 0.775, 1, 0.940, 0.619, 0.972, 0.957])
C45M = np.array([0.768, 0.591, 0.971, 0.661, 0.888, 0.931, 0.668, 0.583, 0.838, 1, 0.962, 0.666, 0.981, 0.978])
C45CF = np.array([0.771, 0.590, 0.968, 0.654, 0.886, 0.916, 0.609, 0.563, 0.866, 1, 0.965, 0.614, 0.9751, 0.946])

# baycomp 1.0.3, SignedRankTest.probs(x, y, rope, random_state=1), 50,000 draws: (P(x better), P(rope), P(y better)).
BAYCOMP_1_0_3 = [
    (C45M, C45, 0.01, (0.66916, 0.33084, 0.0)),
    (C45M, C45, 0.005, (0.96136, 0.03856, 0.00008)),
    (C45M, C45CF, 0.01, (0.48366, 0.50956, 0.00678)),
    (C45, C45CF, 0.01, (0.11574, 0.69666, 0.1876)),
]


def _close(ours, reference, n=50_000):
    for p, q in zip(ours, reference, strict=True):
        se = np.sqrt(max(p * (1 - p), q * (1 - q), 1e-6) / n) * np.sqrt(2)  # two independent Monte-Carlo runs
        assert abs(p - q) <= 4.5 * se + 1e-4, (ours, reference)


@pytest.mark.parametrize(("a", "b", "rope", "reference"), BAYCOMP_1_0_3)
def test_matches_recorded_baycomp_numbers(a, b, rope, reference):
    result = bayesian_signed_rank(a, b, rope=rope, n_samples=50_000, seed=7)
    _close((result.p_a_better, result.p_equivalent, result.p_b_better), reference)
    assert result.mc_se < 0.003


def test_matches_baycomp_run_now_in_both_orders_and_without_a_rope():
    baycomp = pytest.importorskip("baycomp")
    rng = np.random.default_rng(5)
    for n, rope in [(6, 0.01), (10, 0.02), (25, 0.005)]:
        a = rng.uniform(0.7, 0.95, n)
        b = a - 0.01 + rng.normal(0, 0.015, n)
        reference = baycomp.SignedRankTest.probs(a, b, rope=rope, random_state=3)
        ours = bayesian_signed_rank(a, b, rope=rope, seed=11)
        _close((ours.p_a_better, ours.p_equivalent, ours.p_b_better), reference)
        swapped = bayesian_signed_rank(b, a, rope=rope, seed=12)
        _close((swapped.p_b_better, swapped.p_equivalent, swapped.p_a_better), reference)
    left, right = baycomp.SignedRankTest.probs(C45M, C45, rope=0, random_state=3)
    ours = bayesian_signed_rank(C45M, C45, rope=0.0, seed=4)
    assert ours.p_equivalent == 0.0
    _close((ours.p_a_better, ours.p_b_better), (left, right))


def test_identical_models_are_equivalent_and_the_seed_reproduces():
    a = np.array([0.8, 0.7, 0.9, 0.85])
    result = bayesian_signed_rank(a, a, rope=0.01, n_samples=5000)
    assert result.p_equivalent == 1.0
    again = bayesian_signed_rank(C45M, C45, rope=0.01, n_samples=5000, seed=3)
    assert again == bayesian_signed_rank(C45M, C45, rope=0.01, n_samples=5000, seed=3)


def test_refuses_mismatched_input():
    with pytest.raises(ValueError, match="equally long"):
        bayesian_signed_rank(np.ones(3), np.ones(4), rope=0.01)
    with pytest.raises(ValueError, match="rope"):
        bayesian_signed_rank(np.ones(3), np.ones(3), rope=-0.1)


def test_below_four_data_sets_the_posterior_counts_signs_and_does_not_weigh_gaps():
    """With every gap beyond twice the ROPE the posterior is the prior's weight alone, whatever the gaps; a verdict at
    0.95 that survives one data set at no difference needs 4 data sets (baycomp's prior 0.5)."""
    from scipy import stats

    from headtohead.stats.bayes_signed_rank import min_datasets_for_verdict, unanimous_posterior

    for n, gaps in ((2, [0.021, 0.30]), (2, [0.05, 0.06]), (3, [0.03, 0.2, 0.9])):
        drawn = bayesian_signed_rank(np.array(gaps), np.zeros(n), rope=0.01, n_samples=200_000, seed=n)
        _close([drawn.p_a_better], [unanimous_posterior(n)], n=200_000)
    assert (
        unanimous_posterior(2) == pytest.approx(stats.beta.cdf(np.sqrt(0.5), 0.5, 2)) and unanimous_posterior(2) > 0.95
    )
    assert min_datasets_for_verdict(0.95) == 4
    for n, reaches in ((3, False), (4, True)):  # n − 1 gaps far beyond the ROPE, one of exactly 0
        one_at_zero = bayesian_signed_rank(np.r_[np.full(n - 1, 0.2), 0.0], np.zeros(n), rope=0.01, n_samples=200_000)
        assert (one_at_zero.p_a_better >= 0.95) is reaches, (n, one_at_zero)
    with pytest.raises(ValueError, match="level"):
        min_datasets_for_verdict(1.0)
