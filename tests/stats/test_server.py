"""Intervals on max_qps: Student-t over searches (checked against SciPy), floored by the search's resolution."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from headtohead.stats.server import (
    bracket_estimate,
    capacity_interval,
    capacity_ratio,
    resolution_factor,
)


def test_interval_is_scipys_t_interval_on_the_log_scale_when_wider_than_the_resolution():
    values = [812.0, 760.0, 845.0, 790.0]
    got = capacity_interval(values, 0.9, resolution=1.01)
    logs = np.log(values)
    low, high = stats.t.interval(0.9, 3, loc=logs.mean(), scale=stats.sem(logs))
    assert (got.mean, got.low, got.high, got.n) == pytest.approx((stats.gmean(values), np.exp(low), np.exp(high), 4))
    wild = capacity_interval([1258.0, 300.0, 2200.0])  # a noisy machine: wide, but never below zero
    assert 0 < wild.low < wild.mean < wild.high


def test_interval_never_claims_more_precision_than_the_bracket():
    got = capacity_interval([800.0, 801.0], 0.95, resolution=resolution_factor(760.0, 840.0))
    factor, centre = np.sqrt(840.0 / 760.0), stats.gmean([800.0, 801.0])
    assert got.low == pytest.approx(centre / factor) and got.high == pytest.approx(centre * factor)
    single = capacity_interval([800.0])
    assert single.low is None and single.high is None and single.mean == 800.0


def test_ratio_is_paired_on_the_log_scale():
    a, b = [400.0, 420.0, 410.0], [800.0, 860.0, 800.0]
    got = capacity_ratio(a, b, 0.95)
    logs = np.log(b) - np.log(a)
    low, high = stats.t.interval(0.95, 2, loc=logs.mean(), scale=stats.sem(logs))
    assert got.ratio == pytest.approx(np.exp(logs.mean()))
    assert (got.low, got.high) == pytest.approx((np.exp(low), np.exp(high)))
    assert got.more == "b"
    assert capacity_ratio(b, a).more == "a"
    tied = capacity_ratio([100.0, 100.0, 100.0], [100.0, 100.0, 100.0], resolution=1.05)
    assert tied.more is None and tied.low == pytest.approx(1 / 1.05) and tied.high == pytest.approx(1.05)


def test_bracket_estimates_and_resolution():
    assert bracket_estimate(100.0, 144.0) == pytest.approx(120.0)
    assert bracket_estimate(300.0, None) == 300.0 and bracket_estimate(None, 10.0) is None
    assert resolution_factor(100.0, 121.0) == pytest.approx(1.1) and resolution_factor(100.0, None) == 1.0


def test_t_interval_covers_the_true_capacity_at_its_level():
    """Searches whose estimates scatter around the capacity: the 90 % interval covers it ~90 % of the time."""
    rng = np.random.default_rng(0)
    covered = [
        (lambda e: e.low <= 500.0 <= e.high)(capacity_interval(500.0 * rng.lognormal(0, 0.05, 3), 0.9))
        for _ in range(4000)
    ]
    assert np.mean(covered) == pytest.approx(0.9, abs=0.02)
