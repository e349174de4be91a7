"""Sample size and minimum detectable effect for McNemar, cross-checked by simulation."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from headtohead.errors import ConfigError
from headtohead.stats.power import (
    default_discordance,
    mcnemar_power,
    mcnemar_sample_size,
    minimum_detectable_effect,
    simulated_power,
)


def test_sample_size_is_connors_formula() -> None:
    za, zb = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    psi, delta = 0.06, 0.005
    expected = math.ceil((za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2)
    assert mcnemar_sample_size(0.90, 0.005, 0.06) == expected == 18835
    # more power, stricter alpha, smaller gap or more disagreement all need more examples
    assert mcnemar_sample_size(0.90, 0.005, 0.06, power=0.9) > expected
    assert mcnemar_sample_size(0.90, 0.005, 0.06, alpha=0.01) > expected
    assert mcnemar_sample_size(0.90, 0.0025, 0.06) > expected
    assert mcnemar_sample_size(0.90, 0.005, 0.12) > expected


def test_default_discordance_assumes_independent_errors() -> None:
    assert default_discordance(0.90, 0.005) == pytest.approx(0.905 * 0.10 + 0.90 * 0.095)
    assert mcnemar_sample_size(0.90, 0.005) == mcnemar_sample_size(0.90, 0.005, default_discordance(0.90, 0.005))
    assert mcnemar_sample_size(None, 0.02, 0.1) == mcnemar_sample_size(0.8, 0.02, 0.1)


@pytest.mark.parametrize("accuracy, delta, discordance", [
    (0.90, 0.02, 0.06),     # ~70 discordant pairs: χ² with continuity correction
    (0.85, 0.03, None),     # independent errors
    (0.95, 0.02, 0.03),     # ~18 discordant pairs: exact binomial test
])
def test_simulated_power_at_the_planned_size_is_about_the_target(accuracy: float, delta: float,
                                                                 discordance: float | None) -> None:
    n = mcnemar_sample_size(accuracy, delta, discordance)
    psi = discordance if discordance is not None else default_discordance(accuracy, delta)
    assert abs(simulated_power(n, delta, psi, n_sims=6000, seed=1) - 0.8) <= 0.05
    # and the plan is not wasteful: at half the size the power is clearly lower
    assert simulated_power(n // 2, delta, psi, n_sims=6000, seed=2) < 0.65


def test_minimum_detectable_effect_inverts_the_power() -> None:
    mde = minimum_detectable_effect(872, 0.08)
    assert mde is not None and 0.02 < mde < 0.03
    assert mcnemar_power(872, mde, 0.08) == pytest.approx(0.8, abs=1e-9)
    assert minimum_detectable_effect(4 * 872, 0.08) == pytest.approx(mde / 2, rel=0.05)
    n = mcnemar_sample_size(None, mde, 0.08)
    assert n in (872, 873)


def test_minimum_detectable_effect_edge_cases() -> None:
    agree = minimum_detectable_effect(872, 0.0)  # models that never disagree
    assert agree is not None and 0 < agree < minimum_detectable_effect(872, 0.08)  # type: ignore[operator]
    assert minimum_detectable_effect(3, 0.5) is None
    assert minimum_detectable_effect(0, 0.5) is None


@pytest.mark.parametrize("kwargs, match", [
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
])
def test_invalid_inputs_raise_one_line_config_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        mcnemar_sample_size(**kwargs)
    assert "\n" not in str(info.value)
