"""Exact power of headtohead's McNemar rule: against brute force, against simulation, and the plan it gives."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from headtohead.errors import ConfigError
from headtohead.stats.mcnemar import mcnemar_pvalues
from headtohead.stats.power import (
    default_discordance,
    mcnemar_power,
    mcnemar_sample_size,
    minimum_detectable_effect,
    normal_approx_power,
    normal_approx_sample_size,
    plan_sample_size,
    simulated_power,
)


def _brute_force_power(n: int, delta: float, psi: float, alpha: float) -> float:
    """Every table (b, c, rest) of n examples, weighted by its multinomial probability."""
    p10, p01 = (psi + delta) / 2, (psi - delta) / 2
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    b, c = b[b + c <= n], c[b + c <= n]
    weight = stats.multinomial.pmf(np.stack([b, c, n - b - c], axis=1), n, [p10, p01, 1 - p10 - p01])
    _, p, _ = mcnemar_pvalues(b, c)
    return float(np.sum(weight * ((p <= alpha) & (b > c))))


@pytest.mark.parametrize(
    "n, delta, psi, comparisons",
    [
        (30, 0.2, 0.4, 1),  # ~12 discordant pairs
        (80, 0.1, 0.35, 1),  # ~28 discordant pairs
        (120, 0.15, 0.3, 3),  # Holm's first step with three pairs
        (40, 0.5, 1.0, 1),  # every example discordant
    ],
)
def test_exact_power_equals_the_sum_over_every_table(n: int, delta: float, psi: float, comparisons: int) -> None:
    expected = _brute_force_power(n, delta, psi, 0.05 / comparisons)
    assert mcnemar_power(n, delta, psi, n_comparisons=comparisons) == pytest.approx(expected, abs=1e-10)


def test_planned_size_reaches_80_percent_simulated_power() -> None:
    # h2h plan --accuracy 0.9 --delta 0.05 --discordance 0.1: 291 for the score test run (the large-sample
    # formula says 312, where the rule has 83 % power; version 3's exact/corrected rule needed 337)
    plan = plan_sample_size(0.9, 0.05, 0.1)
    assert plan.n == 291 and plan.normal_approx_n == 312
    assert plan.power >= 0.8 > mcnemar_power(plan.n - 1, 0.05, 0.1)
    n_sims = 40_000
    standard_error = math.sqrt(0.8 * 0.2 / n_sims)
    simulated = simulated_power(plan.n, 0.05, 0.1, n_sims=n_sims, seed=13)
    assert simulated >= 0.8 - 3 * standard_error
    assert abs(simulated - plan.power) <= 4 * standard_error
    assert simulated_power(250, 0.05, 0.1, n_sims=n_sims, seed=14) < 0.8 - 10 * standard_error


@pytest.mark.parametrize(
    "accuracy, delta, discordance, models",
    [
        (0.90, 0.02, 0.06, 2),  # ~60 discordant pairs
        (0.85, 0.03, None, 2),  # independent errors
        (0.95, 0.02, 0.03, 2),  # ~18 discordant pairs
        (0.90, 0.05, 0.10, 4),  # six pairs: power at α/6
    ],
)
def test_simulated_power_at_the_planned_size_reaches_the_target(
    accuracy: float, delta: float, discordance: float | None, models: int
) -> None:
    plan = plan_sample_size(accuracy, delta, discordance, n_models=models)
    n_sims = 20_000
    simulated = simulated_power(plan.n, delta, plan.discordance, alpha=plan.test_alpha, n_sims=n_sims, seed=1)
    assert simulated >= 0.8 - 3 * math.sqrt(0.16 / n_sims)
    # and the plan is not wasteful: at three quarters of the size the power is clearly lower
    assert mcnemar_power(3 * plan.n // 4, delta, plan.discordance, alpha=plan.test_alpha) < 0.72


def test_more_pairs_need_more_examples_at_holms_first_step() -> None:
    two, three = plan_sample_size(0.9, 0.05, 0.1), plan_sample_size(0.9, 0.05, 0.1, n_models=3)
    assert three.n_comparisons == 3 and three.test_alpha == pytest.approx(0.05 / 3)
    assert three.n == mcnemar_sample_size(0.9, 0.05, 0.1, alpha=0.05 / 3) > two.n


def test_sample_size_moves_the_right_way() -> None:
    base = mcnemar_sample_size(0.90, 0.005, 0.06)
    assert abs(base - normal_approx_sample_size(0.90, 0.005, 0.06)) < 100  # many discordant pairs: the formula holds
    assert mcnemar_sample_size(0.90, 0.005, 0.06, power=0.9) > base
    assert mcnemar_sample_size(0.90, 0.005, 0.06, alpha=0.01) > base
    assert mcnemar_sample_size(0.90, 0.0025, 0.06) > base
    assert mcnemar_sample_size(0.90, 0.005, 0.12) > base


def test_sawtooth_power_the_plan_waits_until_it_stays_above_target() -> None:
    # every example discordant: power jumps up and down with n (0.82 at 26, 0.75 at 28)
    powers = {n: mcnemar_power(n, 0.5, 1.0) for n in range(20, 200)}
    assert powers[26] >= 0.8 > powers[28]
    n = mcnemar_sample_size(None, 0.5, 1.0)
    assert n == 29 and powers[n - 1] < 0.8
    assert all(powers[m] >= 0.8 for m in range(n, 200))


def test_default_discordance_assumes_independent_errors() -> None:
    assert default_discordance(0.90, 0.005) == pytest.approx(0.905 * 0.10 + 0.90 * 0.095)
    assert mcnemar_sample_size(0.90, 0.01) == mcnemar_sample_size(0.90, 0.01, default_discordance(0.90, 0.01))
    assert mcnemar_sample_size(None, 0.02, 0.1) == mcnemar_sample_size(0.8, 0.02, 0.1)
    assert plan_sample_size(0.9, 0.01).discordance_assumed and not plan_sample_size(0.9, 0.01, 0.1).discordance_assumed


def test_normal_approximation_misjudges_the_power_of_the_rule_run_with_few_discordant_pairs() -> None:
    n = normal_approx_sample_size(None, 0.05, 0.1)  # ~31 discordant pairs
    assert normal_approx_power(n, 0.05, 0.1) == pytest.approx(0.8, abs=0.005)
    assert mcnemar_power(n, 0.05, 0.1) > 0.82  # the exact power of the test run


def test_minimum_detectable_effect_inverts_the_exact_power() -> None:
    mde = minimum_detectable_effect(872, 0.08)
    assert mde is not None and 0.025 < mde < 0.03
    assert mcnemar_power(872, mde, 0.08) == pytest.approx(0.8, abs=1e-6)
    assert minimum_detectable_effect(4 * 872, 0.08) == pytest.approx(mde / 2, rel=0.06)
    # several models: the gap at Holm's first step is larger
    holm = minimum_detectable_effect(872, 0.08, n_comparisons=3)
    assert holm is not None and holm > mde
    assert mcnemar_power(872, holm, 0.08, n_comparisons=3) == pytest.approx(0.8, abs=1e-6)
    assert mcnemar_sample_size(None, mde, 0.08) in range(860, 885)


def test_minimum_detectable_effect_edge_cases() -> None:
    agree = minimum_detectable_effect(872, 0.0)  # models that never disagree
    assert agree is not None and 0 < agree < minimum_detectable_effect(872, 0.08)  # type: ignore[operator]
    assert minimum_detectable_effect(3, 0.5) is None
    assert minimum_detectable_effect(0, 0.5) is None


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(accuracy=1.2, delta=0.01), "accuracy=1.2"),
        (dict(accuracy=0.0, delta=0.01), "accuracy=0.0"),
        (dict(accuracy=0.9, delta=0.0), "delta=0.0"),
        (dict(accuracy=0.9, delta=-0.01), "delta=-0.01"),
        (dict(accuracy=0.95, delta=0.1), "exceeds 1"),
        (dict(accuracy=0.9, delta=0.05, discordance=0.01), "smaller than delta"),
        (dict(accuracy=0.9, delta=0.01, discordance=0.5), "impossible"),
        (dict(accuracy=0.9, delta=0.01, power=1.0), "power=1.0"),
        (dict(accuracy=0.9, delta=0.01, alpha=0), "alpha=0"),
        (dict(accuracy=None, delta=0.01), "baseline accuracy or the expected discordance"),
        (dict(accuracy=0.9, delta=0.01, n_comparisons=0), "n_comparisons=0"),
    ],
)
def test_invalid_inputs_raise_one_line_config_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        mcnemar_sample_size(**kwargs)
    assert "\n" not in str(info.value)


def test_plan_needs_two_models() -> None:
    with pytest.raises(ConfigError, match="n_models=1"):
        plan_sample_size(0.9, 0.05, 0.1, n_models=1)
