"""Learn-then-Test for a cascade's threshold, and a cascade's latency and cost from its parts' (known answers)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from headtohead.results.cost import ModelCost, ScenarioCost, one_cost_per_million
from headtohead.stats.cascade import (
    THRESHOLD_GRID,
    cascade_latency,
    choose_threshold,
    deferral_scores,
    deferred,
    harm_pvalue,
)


def test_the_harm_pvalue_is_valid_at_the_edge_of_the_null():
    """At a harm rate of exactly the margin, P(p ≤ δ) ≤ δ, computed exactly over every count of harms."""
    for n, margin in [(100, 0.05), (600, 0.005), (2000, 0.01)]:
        counts = np.arange(n + 1)
        pvalues = np.array([harm_pvalue(int(k), n, margin) for k in counts])
        for delta in (0.01, 0.05, 0.1):
            assert binom.pmf(counts, n, margin)[pvalues <= delta].sum() <= delta + 1e-12
    assert harm_pvalue(0, 598, 0.005) <= 0.05 < harm_pvalue(0, 597, 0.005)  # the fewest examples for 0.5 pp


def test_the_walk_stops_at_the_first_null_not_rejected():
    """Fixed-sequence testing: a less deferring threshold that would pass after a failing one is never reached."""
    grid = np.array([0.9, 0.8, 0.7, 0.6])
    scores = np.r_[np.full(500, 0.95), np.full(10, 0.85), np.full(500, 0.75), np.full(10, 0.65)]
    cheap = np.r_[np.ones(500), np.zeros(10), np.ones(500), np.ones(10)].astype(bool)  # wrong at 0.85 only
    expensive = np.ones(len(scores), bool)
    choice = choose_threshold(scores, cheap, expensive, max_drop=0.005, delta=0.05, grid=grid)
    assert (choice.threshold, choice.tested, choice.harms) == (0.9, 2, 0)  # 0.8 answers the 10 harms: stop
    assert choice.p_value == pytest.approx(binom.cdf(0, len(scores), 0.005))
    none = choose_threshold(scores[:100], cheap[:100], expensive[:100], max_drop=0.005, delta=0.05, grid=grid)
    assert (none.threshold, none.p_value, none.tested) == (None, None, 1)  # 100 examples are too few for 0.5 pp
    assert deferred(scores, None).all() and not deferred(scores, 0.6).any()


def test_the_grid_is_fixed_before_the_data_most_deferring_first():
    assert THRESHOLD_GRID[0] == 1.0 and THRESHOLD_GRID[-1] == 0.0 and (np.diff(THRESHOLD_GRID) < 0).all()
    assert 1 - 1e-6 in THRESHOLD_GRID and 0.5 in THRESHOLD_GRID


def test_deferral_scores_top_and_margin():
    proba = np.array([[0.7, 0.2, 0.1], [0.4, 0.35, 0.25], [np.nan] * 3])
    assert deferral_scores(proba, "top")[:2] == pytest.approx([0.7, 0.4])
    assert deferral_scores(proba, "margin")[:2] == pytest.approx([0.5, 0.05])
    assert deferral_scores(proba, "top")[2] == -np.inf  # no probabilities: always deferred
    assert deferred(deferral_scores(proba, "margin"), 0.0).tolist() == [False, False, True]


def test_latency_of_the_mixture():
    """Cheap always (1 ms), expensive on the deferred share (100 ms): mean and p99 known exactly."""
    cheap, expensive = np.full(50, 0.001), np.full(30, 0.1)
    assert cascade_latency(cheap, expensive, 0.25) == pytest.approx((0.026, 0.101))
    assert cascade_latency(cheap, expensive, 0.005) == pytest.approx((0.0015, 0.001))  # 99.5 % never deferred
    assert cascade_latency(cheap, None, 0.3) is None  # a part not timed: not measured
    # spread latencies: the p99 of C + D·E against a large simulation of the same mixture
    rng = np.random.default_rng(3)
    c, e = rng.exponential(0.002, 4000), rng.lognormal(np.log(0.05), 0.3, 4000)
    mean, p99 = cascade_latency(c, e, 0.2)
    draw = rng.choice(c, 400_000) + (rng.random(400_000) < 0.2) * rng.choice(e, 400_000)
    assert mean == pytest.approx(draw.mean(), rel=0.01) and p99 == pytest.approx(np.quantile(draw, 0.99), rel=0.03)


def test_one_cost_per_million_reads_a_price_per_token_a_given_one_or_a_cascades_before_offline():
    def cost(*scenarios):
        return ModelCost(scenarios=[ScenarioCost(scenario=s, throughput_per_s=100.0, **k) for s, k in scenarios])

    offline = ("offline", {"price_per_hour": 3.6})  # 1e6 predictions at 100/s: 10,000 s = 10 € at 3.6 €/h
    assert one_cost_per_million(cost(offline)) == pytest.approx(10.0)
    assert one_cost_per_million(cost(offline, ("priced", {"price_per_prediction": 2e-6}))) == pytest.approx(2.0)
    assert one_cost_per_million(cost(("cascade", {"price_per_prediction": 5e-6}), offline)) == pytest.approx(5.0)
    assert one_cost_per_million(None) is None and one_cost_per_million(cost(("offline", {}))) is None
