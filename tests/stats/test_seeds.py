"""Several seeds per model: aggregates, the paired test over seeds, and the records."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from headtohead.errors import ResultsError
from headtohead.results.comparison import MultiSeedSummary, SeedResult
from headtohead.stats.seeds import aggregate_metric, compare_across_seeds, summarise_seeds


def test_aggregate_mean_and_sample_std() -> None:
    agg = aggregate_metric("f1_macro", [3, 1, 2], [0.8, 0.9, 0.85])
    assert agg.mean == pytest.approx(0.85) and agg.std == pytest.approx(np.std([0.8, 0.9, 0.85], ddof=1))
    assert agg.n_seeds == 3 and agg.seeds == [3, 1, 2]
    single = aggregate_metric("accuracy", [0], [0.9])
    assert single.std is None and single.n_seeds == 1
    with pytest.raises(ValueError):
        aggregate_metric("accuracy", [0], [float("nan")])


def test_paired_t_over_seeds_equals_scipy_and_wilcoxon_from_six() -> None:
    a = [0.91, 0.92, 0.90, 0.93, 0.915]
    b = [0.90, 0.90, 0.89, 0.92, 0.910]
    result = compare_across_seeds(a, b, model_a="x", model_b="y")
    ref = stats.ttest_rel(a, b)
    assert result.test == "paired-t" and result.p_value == pytest.approx(ref.pvalue, abs=1e-12)
    assert result.statistic == pytest.approx(ref.statistic)
    assert result.wilcoxon_p is None  # five seeds: Wilcoxon cannot reach 0.05, not reported
    six = compare_across_seeds(a + [0.92], b + [0.905])
    assert six.wilcoxon_p == pytest.approx(stats.wilcoxon(a + [0.92], b + [0.905]).pvalue)
    assert result.mean_difference == pytest.approx(np.mean(np.subtract(a, b)))


def test_one_seed_and_zero_variance_are_said_not_tested() -> None:
    one = compare_across_seeds([0.9], [0.8])
    assert one.test == "none" and one.p_value is None and not one.significant and "one seed" in one.note
    same = compare_across_seeds([0.9, 0.8], [0.9, 0.8])
    assert same.p_value == 1.0 and not same.significant
    constant = compare_across_seeds([0.9, 0.8, 0.7], [0.8, 0.7, 0.6])
    assert constant.p_value is None and "zero variance" in constant.note
    with pytest.raises(ValueError):
        compare_across_seeds([0.9, 0.8], [0.9])


def _results() -> list[SeedResult]:
    rng = np.random.default_rng(0)
    out = []
    for model, mean in (("big", 0.92), ("small", 0.85), ("small2", 0.852)):
        for seed in range(4):
            acc = mean + rng.normal(0, 0.003)
            out.append(SeedResult(model=model, seed=seed, metrics={"accuracy": acc, "f1_macro": acc - 0.01}))
    return out


def test_summary_aggregates_every_model_and_holm_adjusts_pairs() -> None:
    summary = summarise_seeds(_results())
    assert [m.model for m in summary.models] == ["big", "small", "small2"]
    assert summary.models[0].metric("accuracy").n_seeds == 4
    assert {m.metric for m in summary.models[0].metrics} == {"accuracy", "f1_macro"}
    pairs = {(c.model_a, c.model_b): c for c in summary.comparisons}
    assert pairs[("big", "small")].significant and pairs[("big", "small")].p_adjusted >= pairs[("big", "small")].p_value
    assert not pairs[("small", "small2")].significant
    assert MultiSeedSummary.model_validate_json(summary.model_dump_json()) == summary


def test_summary_refuses_inconsistent_results() -> None:
    results = _results()
    with pytest.raises(ResultsError, match="two results for seed 0"):
        summarise_seeds(results + [results[0]])
    with pytest.raises(ResultsError, match="share no seed"):
        summarise_seeds(
            [
                SeedResult(model="a", seed=1, metrics={"accuracy": 0.9}),
                SeedResult(model="b", seed=2, metrics={"accuracy": 0.8}),
            ]
        )
    with pytest.raises(ResultsError, match="missing"):
        summarise_seeds([SeedResult(model="a", seed=1, metrics={"f1_macro": 0.9})], metrics=["f1_macro"])
    with pytest.raises(ResultsError):
        summarise_seeds([])
