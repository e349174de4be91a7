"""Several seeds on one data set: the spread's sources, the paired t and ASO side by side."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from headtohead.stats.across_seeds import seed_analysis, standard_error, variance_share


def test_standard_error_from_a_normal_interval():
    assert standard_error(0.5 - 1.959964 * 0.02, 0.5 + 1.959964 * 0.02) == pytest.approx(0.02, rel=1e-6)
    assert standard_error(0.0, 0.2, confidence=0.9) == pytest.approx(0.1 / stats.norm.ppf(0.95))
    assert standard_error(None, 0.3) is None


def test_variance_share():
    assert variance_share(0.03, 0.04) == pytest.approx(0.09 / 0.25)
    assert variance_share(0.0, 0.0) is None and variance_share(0.01, None) is None


def test_seed_analysis_on_known_values():
    a = {0: 0.90, 1: 0.92, 2: 0.91, 3: 0.93, 4: 0.92}
    b = {0: 0.85, 1: 0.86, 2: 0.84, 3: 0.87, 4: 0.85}
    result = seed_analysis(
        {"a": a, "b": b},
        test_se={"a": 0.01, "b": 0.012},
        test_se_difference={("a", "b"): 0.008},
        aso_alpha=0.05,
        seed=1,
    )
    spread = {s.model: s for s in result.models}
    assert spread["a"].seed_sd == pytest.approx(np.std(list(a.values()), ddof=1))
    assert spread["a"].seed_share == pytest.approx(spread["a"].seed_sd ** 2 / (spread["a"].seed_sd ** 2 + 1e-4))
    (pair,) = result.pairs
    x, y = np.array(list(a.values())), np.array(list(b.values()))
    assert pair.t_p_value == pytest.approx(stats.ttest_rel(x, y).pvalue)
    assert pair.aso_a_over_b == 0.0 and pair.aso_b_over_a == 1.0  # a dominates on every seed
    assert pair.seed_share == pytest.approx(np.var(x - y, ddof=1) / (np.var(x - y, ddof=1) + 0.008**2))
    assert result.seeds == [0, 1, 2, 3, 4]


def test_lower_is_better_turns_aso_around_and_one_seed_gives_nothing():
    loss_a = {0: 0.30, 1: 0.31, 2: 0.29}
    loss_b = {0: 0.40, 1: 0.42, 2: 0.41}
    result = seed_analysis({"a": loss_a, "b": loss_b}, metric="nll", higher_is_better=False, seed=2)
    assert result.pairs[0].aso_a_over_b == 0.0 and result.models[0].test_set_se is None
    assert seed_analysis({"a": {0: 0.9}, "b": {0: 0.8}}) is None
