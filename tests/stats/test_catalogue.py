"""The metric catalogue: every entry's point value is scikit-learn's, its bootstrap formula agrees, its interval holds it."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

from headtohead.config.schema import StatsConfig
from headtohead.config.suite import RUN_METRICS
from headtohead.config.train import TARGET_METRICS
from headtohead.metrics import CATALOGUE, Metric, names, register
from headtohead.stats.bootstrap import bootstrap_metrics, paired_bootstrap
from headtohead.stats.bootstrap_metrics import register_metric


def _predictions(n: int, k: int, seed: int, *, failures: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.7, y, rng.integers(0, k, n))
    proba = rng.dirichlet(np.ones(k), n) * 0.5 + np.eye(k)[pred] * 0.5
    pred[:failures] = -1  # no prediction: a wrong answer for every label metric
    return y, pred, proba


@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("failures", [0, 9])
def test_mcc_is_scikit_learns(k, failures):
    y, pred, _ = _predictions(400, k, seed=k + failures, failures=failures)
    expected = skm.matthews_corrcoef(y, pred)
    assert CATALOGUE["mcc"].point(y, pred, None, k) == pytest.approx(expected, abs=1e-12)
    interval = bootstrap_metrics(y, pred, metrics=["mcc"], n_resamples=200)["mcc"]
    assert interval.estimate == pytest.approx(expected, abs=1e-12)  # the bootstrap's formula on all rows


@pytest.mark.parametrize("k", [2, 4])
def test_roc_auc_is_scikit_learns_one_vs_rest_macro(k):
    y, pred, proba = _predictions(400, k, seed=k)
    expected = (
        skm.roc_auc_score(y, proba[:, 1]) if k == 2 else skm.roc_auc_score(y, proba, multi_class="ovr", average="macro")
    )
    assert CATALOGUE["roc_auc"].point(y, pred, proba, k) == pytest.approx(expected, abs=1e-12)
    interval = bootstrap_metrics(y, pred, proba, metrics=["roc_auc"], n_resamples=200)["roc_auc"]
    assert interval.estimate == pytest.approx(expected, abs=1e-12)
    tied = np.round(proba, 1)  # ties count a half, as scikit-learn's trapezoids do
    assert bootstrap_metrics(y, pred, tied, metrics=["roc_auc"], n_resamples=100)["roc_auc"].estimate == pytest.approx(
        CATALOGUE["roc_auc"].point(y, pred, tied, k), abs=1e-12
    )


def test_roc_auc_needs_probabilities_and_two_classes():
    y, pred, proba = _predictions(50, 3, seed=1)
    assert CATALOGUE["roc_auc"].point(y, pred, None, 3) is None  # not available, never 0
    assert CATALOGUE["roc_auc"].point(np.zeros(50, int), pred, proba, 3) is None


def test_a_weighted_resample_is_scikit_learns_on_the_repeated_rows():
    y, pred, proba = _predictions(60, 3, seed=5)
    counts = np.random.default_rng(0).multinomial(60, np.full(60, 1 / 60))
    rows = np.repeat(np.arange(60), counts)
    got = CATALOGUE["roc_auc"].weighted(counts[None, :].astype(float), y, proba, 3)[0]
    present = np.unique(y[rows])
    expected = np.mean([skm.roc_auc_score(y[rows] == c, proba[rows, c]) for c in present])
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("name", list(CATALOGUE))
def test_every_catalogue_metric_point_bootstrap_and_interval_agree(name):
    """The contract of an entry: its point value on a tiny prediction set is its scikit-learn function's (the
    bootstrap's own formula where scikit-learn has none), and its interval, per model and per pair, holds the
    estimate."""
    entry = CATALOGUE[name]
    y, pred, proba = _predictions(120, 3, seed=11)
    other = np.where(np.arange(120) % 4 == 0, (pred + 1) % 3, pred)
    q = proba if entry.needs_proba else None
    if entry.point is not None:
        assert entry.point(y, pred, q, 3) is not None
    if not entry.bootstrapped:
        return
    one = bootstrap_metrics(y, pred, q, metrics=[name], n_resamples=300, seed=1)[name]
    if entry.point is not None:
        assert one.estimate == pytest.approx(entry.point(y, pred, q, 3), abs=1e-12)
    pair = paired_bootstrap(y, pred, other, q, q, metrics=[name], n_resamples=300, seed=2)[name]
    for interval in (one, pair):
        assert interval.low is None or interval.low <= interval.estimate <= interval.high


def test_scikit_learn_points_of_the_default_metrics():
    y, pred, proba = _predictions(200, 3, seed=4, failures=5)
    present = np.unique(y)
    assert CATALOGUE["f1_macro"].point(y, pred, None, 3) == pytest.approx(
        skm.f1_score(y, pred, labels=present, average="macro", zero_division=0), abs=1e-12
    )
    assert CATALOGUE["brier"].point(y, pred, proba, 3) == pytest.approx(
        skm.brier_score_loss(y, proba, labels=[0, 1, 2]), abs=1e-12
    )
    assert CATALOGUE["nll"].point(y, pred, proba, 3) == pytest.approx(skm.log_loss(y, proba), abs=1e-12)


def test_the_lists_are_derived_from_the_catalogue():
    assert list(RUN_METRICS) == list(CATALOGUE)
    assert RUN_METRICS["brier"] is False and RUN_METRICS["mcc"] is True
    assert TARGET_METRICS == ("accuracy", "balanced_accuracy", "f1_macro", "loss")
    assert set(names(default=False)) >= {"mcc", "roc_auc"}


def test_stats_metrics_are_validated_in_one_line():
    assert StatsConfig(metrics=["mcc", "roc_auc", "mcc"]).metrics == ["mcc", "roc_auc"]
    with pytest.raises(ValueError, match=r"unknown metric 'roc_uac' — did you mean roc_auc\?"):
        StatsConfig(metrics=["roc_uac"])


def test_a_misspelt_catalogue_name_is_told_from_a_metric_of_its_own():
    """What h2h suite --scores refuses as a typo: near a catalogue name, long enough, no other qualifier."""
    from headtohead.metrics import misspelling_of

    for typo, meant in (
        ("acuracy", "accuracy"),
        ("accuarcy", "accuracy"),
        ("breir", "brier"),
        ("F1-Macro", "f1_macro"),
    ):
        assert misspelling_of(typo) == meant, typo
    assert misspelling_of("recall_macor") == "recall_macro" and misspelling_of("roc_uac") == "roc_auc"
    # a table's own metrics: catalogue names, short abbreviations one edit from mcc/ece by chance, other qualifiers
    for own in ("accuracy", "brier", "acc", "auc", "map", "em", "f1_micro", "recall_micro", "bleu", "rank", "score"):
        assert misspelling_of(own) is None, own


def test_a_registered_metric_is_one_entry(monkeypatch):
    monkeypatch.setattr("headtohead.metrics.CATALOGUE", dict(CATALOGUE))
    import headtohead.metrics as catalogue

    register(
        Metric("error_rate", "error rate", "share", False, needs=("tp",), compute=lambda s, n: 1 - s["tp"].sum(1) / n)
    )
    assert catalogue.CATALOGUE["error_rate"].label == "error rate" and "error_rate" not in CATALOGUE
    with pytest.raises(ValueError, match="name taken"):
        register(catalogue.CATALOGUE["error_rate"])


def test_register_metric_reaches_the_catalogue():
    @register_metric("wrong_share", needs=("tp",), higher_is_better=False)
    def _wrong(s, n):
        return 1.0 - s["tp"].sum(axis=1) / n

    try:
        y, pred, _ = _predictions(100, 2, seed=3)
        got = bootstrap_metrics(y, pred, metrics=["wrong_share"], n_resamples=100)["wrong_share"]
        assert got.estimate == pytest.approx(1 - np.mean(pred == y))
    finally:
        CATALOGUE.pop("wrong_share")


@pytest.mark.parametrize("grouped", [False, True])
def test_analyse_counts_failures_as_wrong_for_mcc_and_leaves_them_out_of_auc(grouped):
    from headtohead.results.predictions import Predictions
    from headtohead.stats.analyse import analyse

    y, pred, proba = _predictions(300, 3, seed=8, failures=12)
    other = np.where(np.arange(300) % 5 == 0, (y + 1) % 3, y)
    p = Predictions(np.arange(300), y, ("a", "b", "c"), groups=np.arange(300) // 3 if grouped else None)
    p.add("failing", pred, np.where(pred[:, None] < 0, np.nan, proba))
    p.add("other", other, np.eye(3)[other] * 0.7 + 0.1)
    summary = analyse(p, n_resamples=300, metrics=["mcc", "roc_auc", "f1_macro"])
    assert summary.settings.metrics == ["mcc", "roc_auc"]  # a default metric is reported anyway
    failing = summary.model("failing")
    assert failing.metrics["mcc"].value == pytest.approx(skm.matthews_corrcoef(y, pred), abs=1e-12)
    answered = pred >= 0
    stored = p["failing"].proba[answered]
    expected = skm.roc_auc_score(y[answered], stored, multi_class="ovr", average="macro")
    assert failing.metrics["roc_auc"].value == pytest.approx(expected, abs=1e-12)
    difference = summary.comparisons[0].difference("roc_auc")
    assert difference.on_answered_rows and not summary.comparisons[0].difference("mcc").on_answered_rows
    assert failing.metrics["mcc"].method == ("cluster-bca" if grouped else "bca")
