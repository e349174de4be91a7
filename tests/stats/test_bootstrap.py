"""The vectorised bootstrap: metric definitions equal scikit-learn, intervals equal SciPy's."""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

from headtohead.errors import ConfigError
from headtohead.stats.bootstrap import (
    _Design,
    _evaluate,
    _jackknife,
    _resample_counts,
    bootstrap_metrics,
    interval_from_distribution,
    paired_bootstrap,
)
from headtohead.stats.bootstrap_intervals import acceleration as _acceleration
from headtohead.stats.bootstrap_metrics import METRICS, example_stats, metric_spec

K = 4
LABELS = ("ant", "bee", "cat", "dog")


def _data(n: int = 300, seed: int = 0, k: int = K) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    pa = np.where(rng.random(n) < 0.8, y, rng.integers(0, k, n))
    pb = np.where(rng.random(n) < 0.7, y, rng.integers(0, k, n))
    qa = rng.dirichlet(np.ones(k), n) * 0.5 + np.eye(k)[pa] * 0.5
    qb = rng.dirichlet(np.ones(k), n) * 0.5 + np.eye(k)[pb] * 0.5
    return y, pa, pb, qa, qb


def _sklearn(name: str, y: np.ndarray, p: np.ndarray) -> float:
    labels = np.arange(K)
    kw = dict(labels=labels, zero_division=0)
    if name == "accuracy":
        return skm.accuracy_score(y, p)
    if name == "balanced_accuracy":
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return skm.balanced_accuracy_score(y, p)
    if name.startswith(("recall:", "precision:", "f1:")):
        family, label = name.split(":")
        fn = {"recall": skm.recall_score, "precision": skm.precision_score, "f1": skm.f1_score}[family]
        return fn(y, p, average=None, **kw)[LABELS.index(label)]
    fn = {"f1": skm.f1_score, "precision": skm.precision_score, "recall": skm.recall_score}[name.split("_")[0]]
    # averages over the classes present among the examples (a class without examples has no recall to average)
    return fn(y, p, average=name.split("_")[1], **{**kw, "labels": np.unique(y)})


CLASS_METRICS = [
    "accuracy",
    "balanced_accuracy",
    "f1_macro",
    "f1_weighted",
    "precision_macro",
    "recall_macro",
    "recall:bee",
    "precision:cat",
    "f1:dog",
]


def test_point_estimates_equal_sklearn_even_with_a_missing_class() -> None:
    """A class without examples (still predicted sometimes) is left out of the macro averages."""
    y, pa, _, qa, _ = _data()
    y, pa = y[y != 2], pa[y != 2]  # class "cat" has no examples, still predicted sometimes
    qa = qa[: len(y)]
    got = bootstrap_metrics(y, pa, qa, metrics=CLASS_METRICS + ["brier", "nll"], label_names=LABELS, n_resamples=100)
    for name in CLASS_METRICS:
        assert got[name].estimate == pytest.approx(_sklearn(name, y, pa), abs=1e-12), name
    assert got["brier"].estimate == pytest.approx(
        skm.brier_score_loss(y, qa / qa.sum(1, keepdims=True), labels=np.arange(K)), abs=1e-12
    )
    assert got["nll"].estimate == pytest.approx(
        skm.log_loss(y, qa / qa.sum(1, keepdims=True), labels=np.arange(K)), abs=1e-12
    )


@pytest.mark.parametrize("compress", [True, False])
def test_resampled_sums_give_sklearn_metrics_on_the_resampled_rows(compress: bool) -> None:
    y, pa, pb, _, _ = _data(n=200, seed=1)
    specs = [metric_spec(m, LABELS) for m in CLASS_METRICS]
    needs = sorted({s for spec in specs for s in spec.needs})
    design = _Design(
        [example_stats(needs, y, p, None, n_classes=K, n_bins=10) for p in (pa, pb)], len(y), compress=compress
    )
    rng = np.random.default_rng(7)
    for _ in range(5):
        idx = rng.integers(0, len(y), len(y))
        counts = (
            np.bincount(idx, minlength=len(y))
            if not compress
            else np.bincount(design.cell_of_example[idx], minlength=design.m)
        )
        values = _evaluate(design, specs, design.sums(counts[None, :]), len(y))[:, 0]
        for spec, value in zip(specs, values):
            want = _sklearn(spec.name, y[idx], pa[idx]) - _sklearn(spec.name, y[idx], pb[idx])
            assert value == pytest.approx(want, abs=1e-12), spec.name


def test_jackknife_equals_leaving_each_example_out() -> None:
    y, pa, pb, qa, qb = _data(n=60, seed=2)
    for names, probas, compress in ((["f1_macro", "accuracy"], (None, None), True), (["nll"], (qa, qb), False)):
        specs = [METRICS[m] for m in names]
        needs = sorted({s for spec in specs for s in spec.needs})
        design = _Design(
            [example_stats(needs, y, p, q, n_classes=K, n_bins=10) for p, q in zip((pa, pb), probas)],
            len(y),
            compress=compress,
        )
        jack = _jackknife(design, specs)
        cells = design.cell_of_example if compress else np.arange(len(y))
        for i in range(len(y)):
            keep = np.arange(len(y)) != i
            for row, name in enumerate(names):
                if name == "nll":
                    want = skm.log_loss(
                        y[keep], qa[keep] / qa[keep].sum(1, keepdims=True), labels=np.arange(K)
                    ) - skm.log_loss(y[keep], qb[keep] / qb[keep].sum(1, keepdims=True), labels=np.arange(K))
                else:
                    want = _sklearn(name, y[keep], pa[keep]) - _sklearn(name, y[keep], pb[keep])
                assert jack[row, cells[i]] == pytest.approx(want, abs=1e-12)


def _f1_diff(y: np.ndarray, a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    def f1(p: np.ndarray) -> np.ndarray:
        scores = []
        for k in range(K):
            tp = ((y == k) & (p == k)).sum(axis)
            den = (y == k).sum(axis) + (p == k).sum(axis)
            scores.append(np.where(den > 0, 2 * tp / np.maximum(den, 1), 0.0))
        return np.mean(scores, axis=0)

    return f1(a) - f1(b)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_interval_equals_scipy_on_the_same_bootstrap_distribution(method: str) -> None:
    y, pa, pb, _, _ = _data(n=150, seed=5)
    ref = stats.bootstrap(
        (y, pa, pb),
        _f1_diff,
        paired=True,
        vectorized=True,
        n_resamples=3000,
        method=method,
        rng=np.random.default_rng(2),
    )
    jack = np.array([_f1_diff(np.delete(y, i), np.delete(pa, i), np.delete(pb, i)) for i in range(len(y))])
    ours = interval_from_distribution(
        "f1_macro",
        float(_f1_diff(y, pa, pb)),
        ref.bootstrap_distribution,
        confidence=0.95,
        method=method.lower(),
        acceleration=_acceleration(jack, np.ones(len(y))),
    )
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_paired_intervals_match_scipy_within_monte_carlo_error(method: str) -> None:
    y, pa, pb, _, _ = _data(n=300, seed=3)

    def acc_diff(y: np.ndarray, a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return (a == y).mean(axis) - (b == y).mean(axis)

    ours = paired_bootstrap(
        y, pa, pb, metrics=["accuracy", "f1_macro"], label_names=LABELS, n_resamples=20000, method=method, seed=1
    )  # type: ignore[arg-type]
    for name, fn in (("accuracy", acc_diff), ("f1_macro", _f1_diff)):
        ref = stats.bootstrap(
            (y, pa, pb),
            fn,
            paired=True,
            vectorized=True,
            n_resamples=20000,
            method="BCa" if method == "bca" else method,
            rng=np.random.default_rng(4),
        )
        se = ref.standard_error
        assert ours[name].std_error == pytest.approx(se, rel=0.03)
        # quantile Monte-Carlo error at 20,000 resamples is ~0.03 SE; allow one grid step beyond
        assert abs(ours[name].low - ref.confidence_interval.low) < 0.15 * se + 1 / len(y)
        assert abs(ours[name].high - ref.confidence_interval.high) < 0.15 * se + 1 / len(y)


def test_both_samplers_give_the_same_distribution() -> None:
    y, pa, pb, _, _ = _data(n=400, seed=6)
    multi = paired_bootstrap(
        y, pa, pb, metrics=["accuracy", "f1_weighted"], n_resamples=8000, seed=0, sampler="multinomial"
    )
    index = paired_bootstrap(y, pa, pb, metrics=["accuracy", "f1_weighted"], n_resamples=8000, seed=0, sampler="index")
    for name in multi:
        assert multi[name].estimate == index[name].estimate
        assert multi[name].std_error == pytest.approx(index[name].std_error, rel=0.05)
        assert multi[name].low == pytest.approx(index[name].low, abs=0.2 * multi[name].std_error + 1 / 400)


def test_calibration_differences_and_single_model_intervals() -> None:
    y, pa, pb, qa, qb = _data(n=500, seed=8)
    diff = paired_bootstrap(y, pa, pb, qa, qb, metrics=["ece", "mce", "brier", "nll"], n_resamples=500, n_bins=10)
    one_a = bootstrap_metrics(y, pa, qa, metrics=["ece", "brier"], n_resamples=500, n_bins=10)
    one_b = bootstrap_metrics(y, pb, qb, metrics=["ece", "brier"], n_resamples=500, n_bins=10)
    for name in ("ece", "brier"):
        assert diff[name].estimate == pytest.approx(one_a[name].estimate - one_b[name].estimate, abs=1e-12)
        assert diff[name].low < diff[name].estimate < diff[name].high
        assert one_a[name].low < one_a[name].estimate < one_a[name].high
    for name in ("brier", "nll"):  # model a is more accurate and sharper: lower losses
        assert diff[name].high < 0


def test_same_seed_same_interval_and_identical_models_degenerate() -> None:
    y, pa, pb, _, _ = _data(n=200, seed=9)
    first = paired_bootstrap(y, pa, pb, metrics=["f1_macro"], n_resamples=300, seed=11)
    assert first == paired_bootstrap(y, pa, pb, metrics=["f1_macro"], n_resamples=300, seed=11)
    assert first != paired_bootstrap(y, pa, pb, metrics=["f1_macro"], n_resamples=300, seed=12)
    same = paired_bootstrap(y, pa, pa, metrics=["accuracy", "f1_macro"], n_resamples=300)
    for interval in same.values():  # a zero-width interval would read as perfect precision: none is shown
        assert (interval.estimate, interval.low, interval.high, interval.method) == (0.0, None, None, "none")
        assert interval.note and "every resample gives 0" in interval.note


@pytest.mark.serial
def test_ten_thousand_resamples_of_100k_examples_take_seconds() -> None:
    y, pa, pb, _, _ = _data(n=100_000, seed=10, k=3)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # one thread: its CPU seconds are the work, which a loaded machine does not add to
        start = time.process_time()
        out = paired_bootstrap(y, pa, pb, metrics=["accuracy", "f1_macro"], n_resamples=10_000, seed=0)
        assert time.process_time() - start < 10.0
    assert out["accuracy"].low < out["accuracy"].estimate < out["accuracy"].high


def test_failures_raise_instead_of_becoming_intervals() -> None:
    with pytest.raises(FloatingPointError):
        interval_from_distribution("x", 0.1, np.array([0.1, np.nan, 0.2]), confidence=0.95, method="bca")
    y, pa, pb, _, _ = _data(n=50)
    with pytest.raises(ConfigError, match="did you mean f1_macro"):
        paired_bootstrap(y, pa, pb, metrics=["f1_makro"])
    with pytest.raises(ConfigError, match="no class 'cow'"):
        bootstrap_metrics(y, pa, metrics=["recall:cow"], label_names=LABELS)
    with pytest.raises(ValueError, match="probabilities"):
        bootstrap_metrics(y, pa, metrics=["ece"])
    with pytest.raises(ValueError, match="equal lengths"):
        paired_bootstrap(y, pa[:-1], pb, metrics=["accuracy"])


def test_resample_counts_sum_to_n() -> None:
    y, pa, pb, _, _ = _data(n=100)
    needs = ["tp"]
    design = _Design([example_stats(needs, y, p, None, n_classes=K, n_bins=5) for p in (pa, pb)], 100, compress=True)
    for sampler in ("multinomial", "index"):
        counts = _resample_counts(design, np.random.default_rng(0), 50, sampler)
        assert counts.shape == (50, design.m) and np.all(counts.sum(axis=1) == 100)


def test_an_interval_shown_always_contains_its_estimate() -> None:
    """BCa falls back to percentile, then to no interval, rather than exclude the estimate."""
    rng = np.random.default_rng(3)
    # a kinked statistic: its replicates sit above the estimate (as the plug-in ECE's do)
    theta = np.abs(rng.normal(0.0, 1.0, 2000)) + 0.5
    none = interval_from_distribution("ece", 0.1, theta, confidence=0.95, method="bca", acceleration=0.0)
    assert none.low is None and none.high is None and "above the estimate" in none.note
    # replicates mostly above the estimate, the percentile interval still reaching it: BCa would move below
    skewed = np.r_[np.full(60, 0.99), rng.uniform(1.0, 2.0, 1940)]
    interval = interval_from_distribution("m", 1.0, skewed, confidence=0.95, method="bca", acceleration=0.3)
    assert interval.low is not None and interval.low <= 1.0 <= interval.high
    assert interval.method == "percentile" and interval.note
    for seed in range(50):  # and whatever the data, a shown interval contains the estimate
        y, pa, pb, _, _ = _data(n=40, seed=seed, k=3)
        for ci in list(
            bootstrap_metrics(y, pa, metrics=["f1_macro", "balanced_accuracy"], n_resamples=200, seed=seed).values()
        ) + list(paired_bootstrap(y, pa, pb, metrics=["f1_macro"], n_resamples=200, seed=seed).values()):
            assert ci.low is None or ci.low <= ci.estimate <= ci.high


def test_cluster_bootstrap_resamples_whole_groups() -> None:
    """With groups, resamples draw whole groups: a metric that is constant within groups varies only by group."""
    y, pa, _, _, _ = _data(n=600, seed=4, k=2)
    groups = np.repeat(np.arange(20), 30)
    # one group is wrong everywhere, the others right everywhere: 95 % accuracy
    pred = np.where(groups == 0, 1 - y, y)
    grouped = bootstrap_metrics(y, pred, metrics=["accuracy"], n_resamples=2000, groups=groups, seed=0)["accuracy"]
    plain = bootstrap_metrics(y, pred, metrics=["accuracy"], n_resamples=2000, seed=0)["accuracy"]
    assert grouped.method.startswith("cluster-") and grouped.estimate == pytest.approx(0.95)
    # a resampled accuracy is (groups drawn that are not group 0) / 20: its spread is that of a
    # Binomial(20, 1/20) share, far wider than 600 independent examples would give
    assert grouped.std_error == pytest.approx(np.sqrt(0.05 * 0.95 / 20), rel=0.15)
    assert plain.std_error < grouped.std_error / 2
