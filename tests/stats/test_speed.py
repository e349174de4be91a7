"""Speed statistics: latency summaries, Tukey outliers, the paired ratio and its verdict."""

from __future__ import annotations

import numpy as np
import pytest

from headtohead.stats.speed import (
    SpeedRatio,
    count_outliers,
    iqr_over_median,
    latency_summary,
    round_medians,
    speed_ratio,
    tukey_fences,
)


def test_latency_summary_matches_numpy():
    x = np.random.default_rng(0).lognormal(0, 0.3, 500)
    s = latency_summary(x)
    assert s["mean"] == pytest.approx(x.mean())
    assert s["std"] == pytest.approx(x.std(ddof=1))
    assert s["min"] == x.min() and s["max"] == x.max()
    for q in (50, 90, 95, 99):
        assert s[f"p{q}"] == pytest.approx(np.percentile(x, q))
    assert latency_summary([3.0])["std"] == 0.0
    with pytest.raises(ValueError):
        latency_summary([])


def test_tukey_outliers_and_spread():
    x = [10, 11, 10, 12, 11, 10, 11, 50, 1]
    low, high = tukey_fences(x)
    assert low < 10 and 12 < high < 50
    assert count_outliers(x) == 2
    assert count_outliers([5, 5, 5, 5]) == 0
    assert iqr_over_median([100, 100, 100, 100]) == 0.0
    assert iqr_over_median([90, 100, 110, 120]) == pytest.approx((112.5 - 97.5) / 105)


def test_round_medians_ignore_single_spikes():
    assert round_medians([[1, 1, 100], [2, 2, 2]]).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError):
        round_medians([[1], []])


def test_two_times_slower_is_detected_with_a_tight_interval():
    rng = np.random.default_rng(1)
    a = 2.0 * rng.lognormal(0, 0.03, 20)
    b = rng.lognormal(0, 0.03, 20)
    r = speed_ratio(a, b, seed=3)
    assert 1.9 < r.low < r.ratio < r.high < 2.1
    assert r.faster == "b" and r.n_rounds == 20
    flipped = speed_ratio(b, a, seed=3)
    assert flipped.ratio == pytest.approx(1 / r.ratio)
    assert flipped.faster == "a"


def test_identical_models_give_an_interval_containing_one_most_of_the_time():
    # A/A over many simulated benchmarks: the false "significant" rate stays near 5 %.
    rng = np.random.default_rng(7)
    false_positives = sum(
        speed_ratio(rng.lognormal(0, 0.05, 15), rng.lognormal(0, 0.05, 15), seed=i).faster is not None
        for i in range(300)
    )
    assert false_positives / 300 < 0.09


def test_pairing_removes_shared_drift():
    # Both models slow down 3x over the run; each round compares like with like.
    drift = np.linspace(1, 3, 12)
    noise = np.random.default_rng(2).lognormal(0, 0.01, (2, 12))
    r = speed_ratio(1.5 * drift * noise[0], drift * noise[1])
    assert r.low < 1.5 < r.high and r.halfwidth < 0.03


def test_identical_rounds_give_a_point_interval_and_the_interval_is_seeded():
    r = speed_ratio([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
    assert (r.ratio, r.low, r.high) == (2.0, 2.0, 2.0)
    x, y = [1.0, 1.2, 0.9, 1.1, 1.05], [1.0, 1.0, 1.1, 0.95, 1.0]
    assert speed_ratio(x, y, seed=5) == speed_ratio(x, y, seed=5)


@pytest.mark.parametrize(
    "a,b", [([1.0], [1.0]), ([1.0, 2.0], [1.0]), ([1.0, -1.0], [1.0, 1.0]), ([1.0, np.nan], [1.0, 1.0])]
)
def test_bad_inputs_raise(a, b):
    with pytest.raises(ValueError):
        speed_ratio(a, b)


def test_halfwidth_is_relative():
    assert SpeedRatio(2.0, 1.9, 2.04, 0.95, 10, 0.001).halfwidth == pytest.approx(0.05)


def test_stats_module_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, headtohead.stats.speed; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_t_interval_equals_scipy_t_confidence_interval():
    from scipy import stats

    a = np.array([2.0, 2.3, 1.9, 2.1, 2.05, 1.97])
    b = np.array([1.0, 1.1, 1.02, 0.98, 1.0, 1.01])
    log_ratio = np.log(a / b)
    low, high = stats.t.interval(0.9, len(a) - 1, loc=log_ratio.mean(), scale=stats.sem(log_ratio))
    r = speed_ratio(a, b, confidence=0.9)
    assert (r.low, r.high) == pytest.approx((np.exp(low), np.exp(high)), rel=1e-12)
    assert r.ratio == pytest.approx(np.exp(log_ratio.mean()))
    assert r.p_value == pytest.approx(stats.ttest_1samp(log_ratio, 0.0).pvalue, rel=1e-10)
    with pytest.raises(ValueError, match="method"):
        speed_ratio(a, b, method="z")  # type: ignore[arg-type]


@pytest.mark.parametrize("n_rounds", [2, 5, 10, 20])
def test_the_p_value_rejects_exactly_when_the_interval_excludes_one(n_rounds):
    """The t test and the t interval are one statistic: p ≤ 1 − confidence ⇔ 1 outside the interval."""
    from headtohead.stats.speed import log_ratio_t_test

    rng = np.random.default_rng(n_rounds)
    log_ratios = rng.normal(rng.normal(0.0, 0.05, (4000, 1)), 0.05, (4000, n_rounds))
    for confidence in (0.9, 0.95, 0.99):
        centre, half, p = log_ratio_t_test(log_ratios, confidence)
        excludes = np.abs(centre) > half
        assert 0.005 < excludes.mean() < 0.95  # both outcomes are exercised
        assert np.array_equal(p <= 1 - confidence, excludes)
    one = speed_ratio(np.exp(log_ratios[0]), np.ones(n_rounds))
    assert one.p_value == pytest.approx(float(log_ratio_t_test(log_ratios[0])[2]))
    assert (one.faster is not None) == (one.p_value <= 0.05)


def test_equal_rounds_have_a_p_value_of_zero_or_one():
    assert speed_ratio([2.0, 2.0, 2.0], [1.0, 1.0, 1.0]).p_value == 0.0
    assert speed_ratio([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]).p_value == 1.0


def test_trend_test_equals_statsmodels_ols_with_and_without_the_order():
    import statsmodels.api as sm

    from headtohead.stats.speed import trend_test

    rng = np.random.default_rng(3)
    for n in (5, 8, 20):
        y = rng.normal(0.0, 0.05, (3, n)) + 0.004 * np.arange(n)
        order = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        both, plain = trend_test(y, order), trend_test(y)
        for i in range(3):
            fit = sm.OLS(y[i], sm.add_constant(np.column_stack([np.arange(n), order]))).fit()
            fit0 = sm.OLS(y[i], sm.add_constant(np.arange(n))).fit()
            assert both.p_value[i] == pytest.approx(fit.pvalues[1], rel=1e-9)
            assert plain.p_value[i] == pytest.approx(fit0.pvalues[1], rel=1e-9)
            assert both.change[i] == pytest.approx(np.expm1(fit.params[1] * (n - 1)), rel=1e-9)
    constant = trend_test(y[0], np.ones(20))  # a constant covariate is dropped, not a singular fit
    assert constant.p_value == pytest.approx(trend_test(y[0]).p_value)
    assert np.isnan(trend_test([0.1, 0.2]).p_value)  # two rounds: no residual degree of freedom
