"""The comparison pooled over prompts (stats.prompt_pool): its parts checked against scipy/statsmodels, its error rate by simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sim.prompts import FIXED_OFFSETS, prompt_correctness, prompted_predictions
from statsmodels.stats.multitest import multipletests

from headtohead.stats.across_seeds import standard_error
from headtohead.stats.paired import PairedCorrectness
from headtohead.stats.prompt_pool import pooled_gap, prompt_pools


def test_the_pooled_gap_adds_the_prompts_spread_to_the_examples_clustered_and_refers_to_t():
    rng = np.random.default_rng(3)
    a, b = prompt_correctness(rng, 400, np.array(FIXED_OFFSETS))
    gap = pooled_gap(a, b)
    assert gap.estimate == pytest.approx(a.mean() - b.mean(), abs=1e-15)
    # examples: the stacked rows clustered by example, read as a standard error
    stacked = PairedCorrectness.of(a.ravel(), np.tile(b, (5, 1)).ravel(), groups=np.tile(np.arange(400), 5))
    assert gap.se_examples == pytest.approx(standard_error(*(float(x) for x in stacked.interval())))
    # prompts: the sample variance of the five accuracies over five
    assert gap.se_prompts == pytest.approx(np.sqrt(stats.tvar(a.mean(axis=1)) / 5))
    se = np.hypot(gap.se_examples, gap.se_prompts)
    parts = [(gap.se_examples**2, 399.0), (gap.se_prompts**2, 4.0)]
    df = se**4 / sum(v * v / d for v, d in parts)
    assert gap.df == pytest.approx(df)
    assert gap.p_value == pytest.approx(2 * stats.t.sf(abs(gap.estimate) / se, df))
    half = stats.t.ppf(0.975, df) * se
    assert (gap.low, gap.high) == pytest.approx((gap.estimate - half, gap.estimate + half))


def test_one_pass_each_reduces_to_the_examples_part():
    rng = np.random.default_rng(4)
    a, b = prompt_correctness(rng, 300, np.array([0.05]))
    gap = pooled_gap(a, b)
    assert gap.se_prompts == 0.0 and gap.df == pytest.approx(299.0)


def test_per_prompt_accuracies_are_exact_and_the_best_is_named_as_chosen():
    n = 200
    a = np.zeros((5, n), dtype=bool)
    for k, right in enumerate((100, 120, 140, 160, 180)):
        a[k, :right] = True
    b = np.zeros((1, n), dtype=bool)
    b[0, 60:200] = True  # 140 right, on other examples than the prompts' first ones
    predictions = prompted_predictions(a, b)
    summary = prompt_pools(predictions)
    (family,) = summary.families
    assert [p.accuracy for p in family.prompts] == [0.5, 0.6, 0.7, 0.8, 0.9]
    assert [(p.correct, p.n) for p in family.prompts] == [(100, n), (120, n), (140, n), (160, n), (180, n)]
    assert family.mean_accuracy == pytest.approx(0.7) and family.best == "llm@p5" and family.worst == "llm@p1"
    (pool,) = summary.pools
    assert pool.estimate == pytest.approx(0.0) and pool.winner is None and not pool.significant
    assert (pool.ahead_a, pool.ahead_b) == (2, 2) and len(pool.cells) == 5
    cell = pool.cells[4]  # p5 against the encoder: the run's own paired test
    paired = PairedCorrectness.of(a[4], b[0])
    assert cell.p_value == pytest.approx(float(paired.p_value)) and cell.estimate == pytest.approx(0.2)


def test_several_pooled_comparisons_are_holm_adjusted():
    rng = np.random.default_rng(5)
    a, b = prompt_correctness(rng, 300, np.array(FIXED_OFFSETS), gap=0.1)
    predictions = prompted_predictions(a, b)
    predictions.add("other", b[0].astype(np.int64), None)
    summary = prompt_pools(predictions)
    assert [(p.model_a, p.model_b) for p in summary.pools] == [("llm", "encoder"), ("llm", "other")]
    raw = [p.p_value for p in summary.pools]
    assert [p.p_adjusted for p in summary.pools] == pytest.approx(list(multipletests(raw, method="holm")[1]))


def test_an_equal_model_is_rarely_called_worse_or_better_pooled_where_one_prompt_often_is():
    """Issue 31's criterion on a small scale (the full one: benchmarks/prompt_noise.py, the audit's 'prompts' rows)."""
    rng = np.random.default_rng(6)
    runs, pooled, single = 200, 0, 0
    for _ in range(runs):
        a, b = prompt_correctness(rng, 300, np.array(FIXED_OFFSETS))
        pooled += pooled_gap(a, b).p_value < 0.05
        single += PairedCorrectness.of(a[rng.integers(5)], b[0]).p_value < 0.05
    assert pooled / runs <= 0.06 and single / runs > 0.25
