"""Calibration: ECE/MCE from reliability bins, Brier and NLL equal to scikit-learn."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

from headtohead.stats.bootstrap import bootstrap_metrics
from headtohead.stats.calibration import calibration, reliability_bins, top_label
from headtohead.stats.bootstrap_metrics import bin_index


def _model(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(k) * 0.5, n).astype(np.float32)
    y = np.array([rng.choice(k, p=row / row.sum()) for row in proba.astype(np.float64)])
    return y, proba.argmax(axis=1), proba


def test_bins_follow_half_open_intervals() -> None:
    assert bin_index(np.array([0.0, 0.2, 0.2000001, 0.5, 1.0, 1.0000001]), 5).tolist() == [0, 0, 1, 2, 4, 4]
    bins = reliability_bins(np.array([0.1, 0.15, 0.95]), np.array([True, False, True]), n_bins=10)
    assert [b.count for b in bins] == [1, 1, 0, 0, 0, 0, 0, 0, 0, 1]
    assert bins[0].lower == 0.0 and bins[-1].upper == 1.0
    assert bins[1].confidence == pytest.approx(0.15) and bins[1].accuracy == 0.0
    assert bins[2].confidence is None and bins[2].accuracy is None


def test_ece_and_mce_from_their_definitions() -> None:
    y, pred, proba = _model(2000, 3, seed=0)
    cal = calibration(y, pred, proba, n_bins=10)
    conf, correct = top_label(y, pred, proba)
    edges = np.linspace(0, 1, 11)
    ece, mce = 0.0, 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (conf > lo) & (conf <= hi) if lo > 0 else (conf <= hi)
        if inside.any():
            gap = abs(correct[inside].mean() - conf[inside].mean())
            ece += inside.mean() * gap
            mce = max(mce, gap)
    assert cal.ece == pytest.approx(ece, abs=1e-12)
    assert cal.mce == pytest.approx(mce, abs=1e-12)
    assert sum(b.count for b in cal.bins) == 2000 and cal.n_bins == 10
    # labels drawn from the model's own probabilities: it is calibrated, so ECE is small
    assert cal.ece < 0.05  # finite-sample ECE is biased upwards (≈ 0.03 here)


@pytest.mark.parametrize("k", [2, 5])
def test_brier_and_nll_equal_sklearn_and_float32_rows_do_not_warn(k: int) -> None:
    y, pred, proba = _model(500, k, seed=k)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cal = calibration(y, pred, proba)
    p64 = proba.astype(np.float64) / proba.astype(np.float64).sum(axis=1, keepdims=True)
    assert cal.brier == pytest.approx(skm.brier_score_loss(y, p64, labels=np.arange(k)), abs=1e-12)
    assert cal.nll == pytest.approx(skm.log_loss(y, p64, labels=np.arange(k)), abs=1e-12)


def test_bootstrap_calibration_estimates_equal_the_point_values() -> None:
    y, pred, proba = _model(800, 4, seed=3)
    cal = calibration(y, pred, proba, n_bins=12)
    got = bootstrap_metrics(y, pred, proba, metrics=["ece", "mce", "brier", "nll"], n_bins=12, n_resamples=200)
    for name in ("ece", "mce", "brier", "nll"):
        assert got[name].estimate == pytest.approx(getattr(cal, name), abs=1e-12)


def test_overconfident_model_has_large_ece() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 1000)
    pred = np.where(rng.random(1000) < 0.7, y, 1 - y)  # 70 % right but always 99 % sure
    proba = np.where(np.eye(2)[pred] == 1, 0.99, 0.01)
    cal = calibration(y, pred, proba)
    assert cal.ece == pytest.approx(0.99 - (pred == y).mean(), abs=1e-9)
    assert [b.count for b in cal.bins if b.count] == [1000]
