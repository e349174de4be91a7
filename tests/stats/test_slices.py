"""Slices with paired tests, and disagreements: checked against statsmodels, published values and simulation."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from headtohead.stats.disagreements import disagreements
from headtohead.stats.paired import difference_interval
from headtohead.stats.slices import (
    MISSING,
    class_slices,
    column_slices,
    compare_slices,
    significant_slices,
    size_slices,
)


def _planted(seed=0, n=400):
    """b is wrong on 40 % of the longest quarter; elsewhere both models make the same 5 % of errors."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    sizes = rng.permutation(np.arange(1, n + 1))
    shared_error = rng.random(n) < 0.05
    a = np.where(shared_error, 1 - y, y)
    long_and_unlucky = (sizes > 0.75 * n) & (rng.random(n) < 0.4) & ~shared_error
    b = np.where(long_and_unlucky, 1 - y, a)
    return y, a, b, sizes


def test_slice_interval_keeps_nominal_coverage_on_small_slices():
    rng = np.random.default_rng(1)
    cells, n, truth = np.array([0.6, 0.15, 0.05, 0.2]), 40, 0.10
    tables = rng.multinomial(n, cells, size=2000)
    low, high = difference_interval(tables[:, 1], tables[:, 2], n)
    assert 0.93 <= np.mean((low <= truth) & (truth <= high)) <= 0.975


def test_each_slice_agrees_with_statsmodels_and_holm_covers_all_tests():
    y, a, b, sizes = _planted()
    c = np.where(np.arange(len(y)) % 7 == 0, 1 - y, y)
    slices = class_slices(y, ["neg", "pos"]) + size_slices(sizes, "words")
    summary = compare_slices(y, {"a": a, "b": b, "c": c}, slices)
    assert summary.n_tests == 6 * 3 and len(summary.slices) == 6
    raw = []
    for spec, result in zip(slices, summary.slices, strict=True):
        assert result.n_examples == int(spec.mask.sum())
        for entry, pred in zip(result.accuracies, (a, b, c), strict=True):
            right = int((pred[spec.mask] == y[spec.mask]).sum())
            low, high = proportion_confint(right, result.n_examples, alpha=0.05, method="wilson")
            assert entry.correct == right
            assert (entry.accuracy.low, entry.accuracy.high) == pytest.approx((low, high), abs=1e-12)
        for pair in result.pairs:
            t = pair.table
            discordant = t.only_a_correct + t.only_b_correct
            if discordant:
                reference = sm_mcnemar(
                    [[t.both_correct, t.only_a_correct], [t.only_b_correct, t.both_wrong]],
                    exact=False,
                    correction=False,
                ).pvalue
                assert pair.p_value == pytest.approx(reference, rel=1e-10)
            joined = "+exact" if (t.only_a_correct == 0) != (t.only_b_correct == 0) else ""  # Tango's ∪ exact
            assert pair.test == "mcnemar-score" and pair.ci_method == f"tango-score{joined}"
            low, high = difference_interval(t.only_a_correct, t.only_b_correct, result.n_examples)
            assert (pair.ci_low, pair.ci_high) == pytest.approx((float(low), float(high)), abs=1e-12)
            assert (pair.ci_low > 0 or pair.ci_high < 0) == (pair.p_value <= 0.05)  # one statistic, one reading
            assert pair.difference == pytest.approx((t.only_a_correct - t.only_b_correct) / result.n_examples)
            raw.append(pair.p_value)
    expected = multipletests(raw, method="holm")[1]
    adjusted = [pair.p_adjusted for result in summary.slices for pair in result.pairs]
    np.testing.assert_allclose(adjusted, expected, rtol=1e-12)


def test_a_planted_difference_is_found_only_where_it_was_planted():
    y, a, b, sizes = _planted()
    summary = compare_slices(y, {"a": a, "b": b}, size_slices(sizes, "words"))
    found = significant_slices(summary)
    assert [(result.label, pair.winner) for result, pair in found] == [("301–400 words", "a")]
    result, pair = found[0]
    assert result.lower == 301 and result.upper == 400 and result.unit == "words"
    assert pair.ci_low > 0 and pair.difference > 0.3
    others = [r for r in summary.slices if r is not result]
    assert all(p.table.only_a_correct == p.table.only_b_correct == 0 for r in others for p in r.pairs)


def test_family_wise_error_stays_at_alpha_when_nothing_differs(monkeypatch):
    # A/A: two models, each independently 80 % right; 8 slices per run, 300 runs.
    # statsmodels' Holm calls gc.collect() (~0.1 s in a test process); it changes no number.
    import gc

    monkeypatch.setattr(gc, "collect", lambda *args: 0)
    rng = np.random.default_rng(7)
    n, false_alarms = 240, 0
    for _ in range(300):
        y = rng.integers(0, 2, n)
        a = np.where(rng.random(n) < 0.8, y, 1 - y)
        b = np.where(rng.random(n) < 0.8, y, 1 - y)
        sizes = rng.integers(1, 60, n)
        summary = compare_slices(y, {"a": a, "b": b}, class_slices(y, ["x", "y"]) + size_slices(sizes, "w", 6))
        false_alarms += bool(significant_slices(summary))
    assert false_alarms / 300 <= 0.06


def test_size_bins_never_split_ties_and_are_labelled_by_their_range():
    assert [s.label for s in size_slices(np.arange(1, 9), "words")] == [
        "1–2 words",
        "3–4 words",
        "5–6 words",
        "7–8 words",
    ]
    tied = size_slices(np.array([1, 1, 1, 1, 1, 2, 3, 4]), "words")
    assert [(s.label, int(s.mask.sum())) for s in tied] == [("1 words", 5), ("2 words", 1), ("3–4 words", 2)]
    assert len(size_slices(np.full(10, 7), "pixels")) == 1


def test_column_slices_categories_missing_pooling_and_numeric_bins():
    values = ["web"] * 5 + ["news"] * 3 + [None, "blog"]
    specs = column_slices("source", values)
    assert [(s.label, int(s.mask.sum())) for s in specs] == [("web", 5), ("news", 3), ("blog", 1), (MISSING, 1)]
    assert all(s.kind == "column" and s.column == "source" for s in specs)
    many = [f"v{i % 30}" for i in range(300)]
    pooled = column_slices("tag", many, max_categories=5)
    assert len(pooled) == 6 and pooled[-1].label == "(other: 25 values)" and int(pooled[-1].mask.sum()) == 250
    numeric = column_slices("year", [str(1990 + i) for i in range(40)] + [None], max_categories=10)
    assert [s.label for s in numeric] == ["1990–1999", "2000–2009", "2010–2019", "2020–2029", MISSING]
    assert sum(int(s.mask.sum()) for s in numeric) == 41
    few_numbers = column_slices("stars", [1, 2, 2, 5])
    assert [s.label for s in few_numbers] == ["2", "1", "5"]


def test_empty_slices_are_left_out_and_bad_input_refused():
    y = np.array([0, 0, 1])
    summary = compare_slices(y, {"a": y, "b": y}, class_slices(y, ["x", "y", "z"]))
    assert [s.label for s in summary.slices] == ["x", "y"]
    with pytest.raises(ValueError, match="predictions of 'b' have shape"):
        compare_slices(y, {"a": y, "b": y[:2]}, class_slices(y, ["x", "y"]))


def _brute_force(y, a, b, pa, pb):
    rows = {"a": [], "b": []}
    for i in range(len(y)):
        if (a[i] == y[i]) != (b[i] == y[i]):
            right, sign = ("a", 1) if a[i] == y[i] else ("b", -1)
            rows[right].append((-(sign * (pa[i, y[i]] - pb[i, y[i]])), i))
    return [i for _, i in sorted(rows["a"])], [i for _, i in sorted(rows["b"])]


def test_disagreements_both_directions_sorted_by_confidence_gap():
    rng = np.random.default_rng(3)
    n, k = 300, 3
    y = rng.integers(0, k, n)
    pa, pb = rng.dirichlet(np.ones(k), n), rng.dirichlet(np.ones(k), n)
    a, b = pa.argmax(axis=1), pb.argmax(axis=1)
    result = disagreements(
        y, a, b, pa, pb, label_names=["x", "y", "z"], model_a="lr", model_b="nb", ids=[f"id{i}" for i in range(n)]
    )
    expected_a, expected_b = _brute_force(y, a, b, pa, pb)
    assert [r.index for r in result.only_a_right] == expected_a
    assert [r.index for r in result.only_b_right] == expected_b
    first = result.only_b_right[0]
    i = first.index
    assert first.example_id == f"id{i}" and first.true_label == "xyz"[y[i]] and first.prediction_a == "xyz"[a[i]]
    assert first.confidence_gap == pytest.approx(pb[i, y[i]] - pa[i, y[i]])
    assert first.p_pred_b == pytest.approx(pb[i, b[i]]) and result.sorted_by == "confidence_gap"
    assert len(expected_a) + len(expected_b) == int(((a == y) != (b == y)).sum())


def test_disagreements_without_probabilities_keep_data_order():
    y = np.array([0, 1, 1, 0, 1])
    a, b = np.array([0, 0, 1, 1, 1]), np.array([1, 1, 0, 0, 1])
    result = disagreements(y, a, b, None, np.eye(2)[b], label_names=["n", "p"])
    assert [r.index for r in result.only_a_right] == [0, 2]
    assert [r.index for r in result.only_b_right] == [1, 3]
    assert result.sorted_by == "index" and result.only_a_right[0].confidence_gap is None
    assert result.only_a_right[0].p_true_a is None and result.only_a_right[0].p_true_b == 0.0


def test_inputs_of_one_size_make_no_size_slice_in_a_run():
    """A size slice holding every example repeated the whole verdict as 'B is better on inputs of 1 words'."""
    from headtohead.results.predictions import Predictions
    from headtohead.stats.where import ExampleFacts, run_slices

    y = np.array([0, 1] * 50)
    p = Predictions(np.arange(100), y, ("neg", "pos"))
    p.add("a", y, None)
    p.add("b", np.where(y == 0, 1, y), None)
    slices = run_slices(p, ExampleFacts(sizes=np.ones(100), size_unit="words")).slices
    assert [s.kind for s in slices] == ["class", "class"]
    varied = run_slices(p, ExampleFacts(sizes=np.arange(100) % 8 + 1, size_unit="words")).slices
    assert [s.kind for s in varied].count("size") == 4
