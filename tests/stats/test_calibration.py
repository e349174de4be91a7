"""Calibration: ECE/MCE from reliability bins, Brier and NLL equal to scikit-learn, the debiased ℓ2 error covers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

from headtohead.stats.bootstrap import bootstrap_metrics
from headtohead.stats.bootstrap_metrics import bin_index
from headtohead.stats.calibration import (
    calibration,
    debiased_squared_calibration_error,
    ece_l2_debiased,
    reliability_bins,
    top_label,
)


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


# --- the debiased ℓ2 calibration error (Kumar, Liang & Ma 2019) ---------------------------------------


def _brute_force_squared_error(conf: np.ndarray, correct: np.ndarray, n_bins: int) -> float:
    """Σ_b (m_b/n) · mean over ordered pairs i ≠ j of d_i·d_j, bins of equal mass by sorted confidence."""
    order = np.argsort(conf, kind="stable")
    d = (correct.astype(float) - conf)[order]
    total = 0.0
    for part in np.array_split(d, n_bins):
        m = len(part)
        pairs = np.outer(part, part)
        total += m / len(d) * (pairs.sum() - np.trace(pairs)) / (m * (m - 1))
    return total


def test_debiased_estimate_is_the_pairwise_u_statistic() -> None:
    rng = np.random.default_rng(4)
    conf = rng.uniform(0.3, 1.0, 301)
    correct = rng.random(301) < conf**1.5
    for n_bins in (1, 7, 15):
        got = debiased_squared_calibration_error(conf, correct, n_bins)
        assert got is not None and got.n_bins == n_bins
        assert got.estimate == pytest.approx(_brute_force_squared_error(conf, correct, n_bins), abs=1e-14)
    assert debiased_squared_calibration_error(conf[:3], correct[:3]) is None
    assert debiased_squared_calibration_error(conf[:9], correct[:9], 15).n_bins == 4  # two or more per bin


def _simulate(n_sims: int, shift: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """n = 872, confidence uniform on (0.5, 1), right with probability confidence − shift.

    Returns the plug-in ECE (15 equal-width bins), the debiased squared ℓ2 error and the
    bounds of the ℓ2 error's interval.
    """
    rng = np.random.default_rng(seed)
    plug_in, estimate, low, high = (np.empty(n_sims) for _ in range(4))
    for i in range(n_sims):
        conf = rng.uniform(0.5, 1.0, 872)
        correct = rng.random(872) < conf - shift
        bins = [b for b in reliability_bins(conf, correct, 15) if b.count]
        plug_in[i] = sum(b.count * abs(b.accuracy - b.confidence) for b in bins) / 872  # type: ignore[operator]
        squared = debiased_squared_calibration_error(conf, correct)
        e = squared.interval()  # type: ignore[union-attr]
        estimate[i], low[i], high[i] = squared.estimate, e.low, e.high  # type: ignore[union-attr]
    return plug_in, estimate, low, high


def test_calibrated_model_interval_contains_zero_where_the_plug_in_is_biased() -> None:
    plug_in, _, low, high = _simulate(1000, 0.0, seed=11)
    assert np.mean(plug_in) > 0.025  # the plug-in ECE of a perfectly calibrated model
    coverage = float(np.mean(low <= 0.0))
    assert coverage >= 0.95, coverage
    assert np.all(high > 0)


@pytest.mark.parametrize("shift, seed", [(0.05, 12), (0.03, 13)])
def test_miscalibrated_model_interval_covers_the_true_error_about_95_percent(shift: float, seed: int) -> None:
    # right with probability confidence − shift: the true error is `shift` in every bin
    _, estimate, low, high = _simulate(1500, shift, seed=seed)
    coverage = float(np.mean((low <= shift) & (shift <= high)))
    assert 0.93 <= coverage <= 0.995, coverage  # conservative close to 0 (docs/statistics.md)
    # unbiased on the squared scale (the square root of an average is not an average of roots);
    # the plug-in's bias here, ≈ 0.17 / 58 per bin, is ~20 of these standard errors
    assert abs(np.mean(estimate) - shift**2) < 4 * np.std(estimate) / np.sqrt(len(estimate))


def test_calibration_record_carries_the_debiased_error() -> None:
    y, pred, proba = _model(2000, 3, seed=0)  # labels drawn from the model's probabilities: calibrated
    cal = calibration(y, pred, proba, n_bins=10, level=0.9)
    e = cal.ece_l2_debiased
    assert e is not None and e.method == "debiased-normal" and e.confidence == 0.9
    assert e.low <= e.value <= e.high and e.low == 0.0 < cal.ece
    conf, correct = top_label(y, pred, proba)
    again = ece_l2_debiased(conf, correct, 10, 0.9)
    assert again is not None and (again.value, again.low, again.high) == pytest.approx((e.value, e.low, e.high))
