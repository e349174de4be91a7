"""Honesty checks: the tests reject as often as they claim, the intervals cover as often as they claim.

(a) Equally good models (A/A): McNemar at α = 0.05 must reject 3–7 % of the time.
(b) The 95 % interval of the accuracy gap (Tango's score interval) and the paired bootstrap
    interval of the other metrics must contain the true difference in 93–97 % of samples.
The full grid of these checks is ``benchmarks/audit_statistics.py``.
Seeds are fixed, so the outcome is deterministic; the sizes keep the Monte-Carlo error
(≈ 0.005) well inside the bands.
"""

from __future__ import annotations

import numpy as np
import pytest

from headtohead.stats.bootstrap import paired_bootstrap
from headtohead.stats.mcnemar import mcnemar_pvalues, mcnemar_test

ALPHA = 0.05


def _aa_correctness(n_pairs: int, n: int, accuracy: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-example correctness of two equally accurate models with independent errors."""
    rng = np.random.default_rng(seed)
    return rng.random((n_pairs, n)) < accuracy, rng.random((n_pairs, n)) < accuracy


def test_mcnemar_rejects_about_five_percent_of_aa_pairs() -> None:
    correct_a, correct_b = _aa_correctness(2000, 2000, 0.90, seed=0)  # ~360 discordant pairs each
    b = (correct_a & ~correct_b).sum(axis=1)
    c = (~correct_a & correct_b).sum(axis=1)
    _, p, _ = mcnemar_pvalues(b, c)
    rate = float(np.mean(p <= ALPHA))
    assert 0.03 <= rate <= 0.07, rate
    # the vectorised core is the very function a run uses
    for i in range(0, 2000, 250):
        assert mcnemar_test(correct_a[i], correct_b[i]).p_value == p[i]


@pytest.mark.parametrize("n, accuracy", [(872, 0.96), (300, 0.9), (100, 0.95)])
def test_mcnemar_stays_near_nominal_with_few_discordant_pairs(n: int, accuracy: float) -> None:
    # fewer discordant pairs (down to a handful): the score test stays near α, mid-p too, and the
    # rule of version 3 (exact below 25 discordant pairs) stays below both: it is conservative
    correct_a, correct_b = _aa_correctness(2000, n, accuracy, seed=n)
    b = (correct_a & ~correct_b).sum(axis=1)
    c = (~correct_a & correct_b).sum(axis=1)
    _, p_default, _ = mcnemar_pvalues(b, c)
    _, p_midp, _ = mcnemar_pvalues(b, c, "midp")
    _, p_old, _ = mcnemar_pvalues(b, c, "auto")
    assert float(np.mean(p_default <= ALPHA)) <= 0.06
    assert float(np.mean(p_midp <= ALPHA)) <= 0.06
    assert float(np.mean(p_old <= ALPHA)) <= min(float(np.mean(p_default <= ALPHA)), float(np.mean(p_midp <= ALPHA)))


# joint correctness (both, only a, only b, neither): accuracies 0.86 vs 0.80, true gap 0.06
_CELLS = np.array([0.74, 0.12, 0.06, 0.08])
_TRUE_GAP = _CELLS[1] - _CELLS[2]


def _coverage(metric: str, n_sims: int, n: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n_sims):
        # balanced classes, errors independent of the class: per-class precision = recall =
        # accuracy, so the population macro-F1 gap equals the accuracy gap
        y = rng.integers(0, 2, n)
        cell = rng.choice(4, size=n, p=_CELLS)
        pred_a = np.where(cell <= 1, y, 1 - y)
        pred_b = np.where((cell == 0) | (cell == 2), y, 1 - y)
        ci = paired_bootstrap(y, pred_a, pred_b, metrics=[metric], n_resamples=1000, method="bca", seed=rng)[metric]
        hits += ci.low <= _TRUE_GAP <= ci.high
    return hits / n_sims


def test_bootstrap_interval_covers_the_true_accuracy_gap_95_percent() -> None:
    coverage = _coverage("accuracy", n_sims=2000, n=1000, seed=2)
    assert 0.93 <= coverage <= 0.97, coverage


def test_score_interval_covers_the_true_accuracy_gap_95_percent() -> None:
    from headtohead.stats.paired import difference_interval

    tables = np.random.default_rng(4).multinomial(1000, _CELLS, size=4000)
    low, high = difference_interval(tables[:, 1], tables[:, 2], 1000)
    coverage = float(np.mean((low <= _TRUE_GAP) & (_TRUE_GAP <= high)))
    assert 0.93 <= coverage <= 0.97, coverage


def test_bootstrap_interval_covers_the_true_macro_f1_gap_95_percent() -> None:
    coverage = _coverage("f1_macro", n_sims=1000, n=1000, seed=3)
    assert 0.93 <= coverage <= 0.97, coverage
