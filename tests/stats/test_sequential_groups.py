"""The grouped sequential test: the per-example test exactly when every group is one example, and α kept
when examples of a group are correlated (where the per-example test is not)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from headtohead.stats.sequential import SequentialTest, first_decisions, path_e_values
from headtohead.stats.sequential_groups import GroupedSequentialTest, grouped_path_e_values


def test_one_example_per_group_is_the_per_example_test() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random(400) < 0.8, rng.random(400) < 0.7
    plain, grouped = SequentialTest(0.05, 0.05), GroupedSequentialTest(0.05, 0.05, max_group_size=1)
    for start in range(0, 400, 50):
        x = plain.update(a[start : start + 50], b[start : start + 50])
        y = grouped.update(a[start : start + 50], b[start : start + 50], np.arange(start, start + 50))
        assert (x.log_e_a_better, x.log_e_b_better) == pytest.approx((y.log_e_a_better, y.log_e_b_better), abs=1e-9)
        assert (x.low, x.high) == pytest.approx((y.low, y.high), abs=1e-9) and x.decision == y.decision


def test_a_group_must_be_evaluated_whole() -> None:
    test = GroupedSequentialTest(0.05, max_group_size=3)
    test.update(np.ones(3, bool), np.zeros(3, bool), np.array(["u", "u", "v"]))
    with pytest.raises(ValueError, match="already evaluated"):
        test.update(np.ones(2, bool), np.zeros(2, bool), np.array(["v", "w"]))
    assert test.groups_used == 2


def test_the_simulation_shortcut_is_the_test() -> None:
    rng = np.random.default_rng(8)
    groups = np.repeat(np.arange(30), 5)
    a, b = rng.random(150) < 0.75, rng.random(150) < 0.7
    test = GroupedSequentialTest(0.05, max_group_size=5)
    states = [test.update(a[s : s + 25], b[s : s + 25], groups[s : s + 25]) for s in range(0, 150, 25)]
    sums = np.bincount(groups, weights=a.astype(int) - b.astype(int))
    up, down = grouped_path_e_values(sums, np.full(30, 5), 5, np.arange(5, 31, 5))
    assert up == pytest.approx([s.log_e_a_better for s in states], abs=1e-9)
    assert down == pytest.approx([s.log_e_b_better for s in states], abs=1e-9)


def _false_better(runs: int, seed: int) -> tuple[float, float]:
    """Models equal on average, each better for some of 60 groups of 15; a look after every 6 groups."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(60), 15)
    threshold = np.log(2 / 0.05)
    plain_hits = grouped_hits = 0
    for _ in range(runs):
        effect = rng.normal(0.0, 1.0, 60)[groups]
        a = rng.random(900) < expit(1.4 + effect)
        b = rng.random(900) < expit(1.4 - effect)
        rows = rng.permutation(900)  # the per-example test sees the examples in a random order
        d = a[rows].astype(int) - b[rows].astype(int)
        looks = np.arange(90, 901, 90)
        only_a, only_b = np.cumsum(d == 1)[looks - 1], np.cumsum(d == -1)[looks - 1]
        code, _ = first_decisions(path_e_values(only_a[None], only_b[None], looks[None]), alpha=0.05)
        plain_hits += int(code[0]) in (1, 2)
        up, down = grouped_path_e_values(
            np.bincount(groups, weights=a.astype(int) - b.astype(int)), np.full(60, 15), 15, np.arange(6, 61, 6)
        )
        grouped_hits += bool(np.any(up >= threshold) or np.any(down >= threshold))
    return plain_hits / runs, grouped_hits / runs


def test_groups_keep_the_sequential_error_rate() -> None:
    plain, grouped = _false_better(400, seed=3)
    assert plain > 0.1  # examples treated as independent: a winner declared far too often
    assert grouped <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 400)
