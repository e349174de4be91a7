"""Calibration metrics of every model and pair from one set of resamples; resampling by example blocks."""

from __future__ import annotations

import numpy as np
import pytest

from headtohead.stats.bootstrap import _Design, bootstrap_metrics, paired_bootstrap
from headtohead.stats.bootstrap_metrics import example_stats, per_example_brier, per_example_nll
from headtohead.stats.example_blocks import resampled_sums
from headtohead.stats.joint import joint_bootstrap

LABELS = ("a", "b", "c")


def _models(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    out = {}
    for name, accuracy in (("m1", 0.8), ("m2", 0.7), ("m3", 0.6)):
        pred = np.where(rng.random(n) < accuracy, y, rng.integers(0, 3, n))
        out[name] = (pred, rng.dirichlet(np.ones(3), n) * 0.5 + np.eye(3)[pred] * 0.5)
    return y, out


def test_block_resampling_draws_n_examples_each_time_across_blocks():
    y, models = _models(5000)
    stats = example_stats(["bin_count", "brier"], y, *models["m1"], n_classes=3, n_bins=10)
    design = _Design([stats], len(y), compress=False)
    sums = resampled_sums(design.features_t, 4000, np.random.default_rng(1))  # 19 blocks of 256, one of 136
    assert sums.shape == (4000, design.width)
    np.testing.assert_array_equal(sums[:, design.blocks[0]["bin_count"]].sum(axis=1), 5000)


def test_every_example_is_drawn_as_often_as_resampling_rows_draws_it():
    # Identity features: the sums are each example's count. Resampling n rows with replacement
    # gives every example a Binomial(n, 1/n) count (mean 1, variance 1 - 1/n), in the full blocks
    # (one random byte per draw) and in the short last one (rng.integers) alike.
    n, resamples = 600, 6000  # blocks: 256, 256, 88
    counts = resampled_sums(np.eye(n), resamples, np.random.default_rng(5))
    np.testing.assert_array_equal(counts.sum(axis=1), n)
    mean, variance = counts.mean(axis=0), counts.var(axis=0)
    assert np.abs(mean - 1).max() < 5 * np.sqrt(1 / resamples)  # no position of a block favoured or missed
    for block in (slice(0, 256), slice(256, 512), slice(512, n)):
        assert mean[block].mean() == pytest.approx(1, abs=0.01)
        assert variance[block].mean() == pytest.approx(1 - 1 / n, rel=0.03)


def test_draws_reach_every_group_of_blocks_as_often_as_resampling_rows(monkeypatch):
    # Past 65,536 examples the draws are split twice (groups of 256 blocks, then blocks): the
    # examples of the first group are drawn Binomial(n, 65,536 / n) times in all, exactly as
    # resampling rows draws them; resamples taken a few at a time still draw n each.
    import headtohead.stats.example_blocks as example_blocks

    monkeypatch.setattr(example_blocks, "_RESAMPLES_AT_ONCE", 300)
    n, resamples, first = 70_000, 1_000, 65_536
    features = np.vstack([np.ones(n), np.arange(n) < first])
    sums = resampled_sums(features, resamples, np.random.default_rng(6))
    np.testing.assert_array_equal(sums[:, 0], n)
    p = first / n
    assert sums[:, 1].mean() == pytest.approx(n * p, abs=4 * np.sqrt(n * p * (1 - p) / resamples))
    assert sums[:, 1].var() == pytest.approx(n * p * (1 - p), rel=0.15)
    assert len(np.unique(sums[:, 1])) > 100  # every chunk of 300 resamples drew afresh


def test_bootstrap_standard_error_of_a_mean_is_the_textbook_one():
    # Brier is a mean of per-example values: its bootstrap SE is their population sd / sqrt(n).
    y, models = _models(5000, seed=2)
    pred, proba = models["m1"]
    interval = bootstrap_metrics(y, pred, proba, metrics=["brier"], n_resamples=4000, seed=3)["brier"]
    values = per_example_brier(y, proba)
    assert interval.estimate == pytest.approx(values.mean(), abs=1e-12)
    assert interval.std_error == pytest.approx(values.std() / np.sqrt(len(y)), rel=0.04)


def test_one_draw_gives_every_model_and_pair_what_separate_draws_give():
    y, models = _models(3000, seed=4)
    metrics = ["ece", "brier", "nll"]
    one, two = joint_bootstrap(
        y, models, metrics=metrics, pairs=[("m1", "m2"), ("m3", "m1")], label_names=LABELS, n_resamples=3000, seed=5
    )
    assert set(two) == {("m1", "m2"), ("m3", "m1")}
    for name, (pred, proba) in models.items():
        alone = bootstrap_metrics(y, pred, proba, metrics=metrics, label_names=LABELS, n_resamples=3000, seed=6)
        for metric in metrics:
            assert one[name][metric].estimate == pytest.approx(alone[metric].estimate, abs=1e-12)
            assert one[name][metric].std_error == pytest.approx(alone[metric].std_error, rel=0.1)
    for a, b in two:
        paired = paired_bootstrap(
            y,
            models[a][0],
            models[b][0],
            models[a][1],
            models[b][1],
            metrics=metrics,
            label_names=LABELS,
            n_resamples=3000,
            seed=7,
        )
        for metric in metrics:
            ours = two[(a, b)][metric]
            assert ours.estimate == pytest.approx(paired[metric].estimate, abs=1e-12)
            assert ours.std_error == pytest.approx(paired[metric].std_error, rel=0.1)
            assert ours.low == pytest.approx(paired[metric].low, abs=0.3 * ours.std_error)
            assert ours.high == pytest.approx(paired[metric].high, abs=0.3 * ours.std_error)


def test_a_pairs_difference_is_paired_not_two_separate_intervals():
    y, models = _models(4000, seed=8)
    pred, proba = models["m1"]
    nearly = 0.9 * proba + 0.1 * models["m2"][1]  # errs on much the same examples
    one, two = joint_bootstrap(
        y, {"a": (pred, proba), "b": (pred, nearly)}, metrics=["nll"], pairs=[("a", "b")], n_resamples=4000, seed=0
    )
    a, b = per_example_nll(y, proba), per_example_nll(y, nearly)
    # NLL is a mean: the paired SE is that of the per-example differences, not of two separate means
    assert two[("a", "b")]["nll"].std_error == pytest.approx((a - b).std() / np.sqrt(len(y)), rel=0.05)
    assert one["a"]["nll"].std_error == pytest.approx(a.std() / np.sqrt(len(y)), rel=0.05)
    assert two[("a", "b")]["nll"].std_error < 0.5 * np.hypot(one["a"]["nll"].std_error, one["b"]["nll"].std_error)
