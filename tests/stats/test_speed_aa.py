"""Speed verdicts keep their level: identical models are called different ≤ 5 % of the time at every round count."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim.latency import simulate_round_medians

from headtohead.config.speed import SpeedConfig
from headtohead.stats.speed import speed_ratio

N_SIMS = 4000
ROUNDS = (5, 6, 8, 10, 20)


def _faster_share(n_rounds: int, ratio: float, n_sims: int, seed: int, calls: int = 20) -> tuple[float, float]:
    """Shares of simulated benchmarks whose verdict names A / B faster."""
    a, b = simulate_round_medians(n_rounds, n_sims=n_sims, ratio=ratio, calls_per_block=calls, seed=seed)
    verdicts = [speed_ratio(a[i], b[i]).faster for i in range(n_sims)]
    return verdicts.count("a") / n_sims, verdicts.count("b") / n_sims


def test_the_smallest_allowed_number_of_rounds_is_simulated() -> None:
    assert SpeedConfig.model_fields["rounds"].metadata[0].ge == min(ROUNDS)


def test_aa_false_faster_rate_stays_at_five_percent_for_every_number_of_rounds() -> None:
    rates = {}
    for n_rounds in ROUNDS:
        a_faster, b_faster = _faster_share(n_rounds, 1.0, N_SIMS, seed=n_rounds)
        rates[n_rounds] = a_faster + b_faster
        assert abs(a_faster - b_faster) < 0.02  # no side is favoured (the order alternates)
    error = math.sqrt(0.05 * 0.95 / N_SIMS)  # Monte-Carlo standard error of one rate, 0.34 pp
    assert all(rate <= 0.05 + 2.5 * error for rate in rates.values()), rates
    pooled = float(np.mean(list(rates.values())))
    assert pooled <= 0.05 + 2.5 * error / math.sqrt(len(ROUNDS)), rates
    # the test can fail: a normal (z) interval on 5 rounds, or the bootstrap used before, exceeds 7 %


@pytest.mark.parametrize("n_rounds, calls, least", [(5, 20, 0.85), (10, 4, 0.8), (20, 4, 0.97)])
def test_power_against_a_true_ten_percent_difference_does_not_collapse(n_rounds: int, calls: int, least: float) -> None:
    a_faster, b_faster = _faster_share(n_rounds, 1.10, 1000, seed=100 + n_rounds, calls=calls)
    assert b_faster >= least and a_faster == 0.0


def test_old_bootstrap_interval_is_still_there_for_comparison_and_over_rejects_at_five_rounds() -> None:
    a, b = simulate_round_medians(5, n_sims=800, seed=5)
    rate = np.mean(
        [speed_ratio(a[i], b[i], method="bootstrap", n_resamples=1000, seed=i).faster is not None for i in range(800)]
    )
    assert rate > 0.06  # ≈ 8 % (benchmarks/speed_aa.py); the t interval above keeps 5 %
