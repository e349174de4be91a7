"""Holm–Bonferroni adjustment and the grouped ranking."""

from __future__ import annotations

import numpy as np
import pytest

from headtohead.stats.multiple import holm_adjust, rank_groups


def test_holm_by_hand() -> None:
    p = [0.01, 0.04, 0.03, 0.20]
    # sorted: 0.01·4, max(0.03·3, ·), max(0.04·2, ·), max(0.20·1, ·)
    assert holm_adjust(p).tolist() == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert holm_adjust([0.5, 0.9]).tolist() == pytest.approx([1.0, 1.0])
    assert holm_adjust([0.02]).tolist() == pytest.approx([0.02])
    assert holm_adjust([]).size == 0


def test_holm_refuses_invalid_p_values() -> None:
    with pytest.raises(ValueError):
        holm_adjust([0.1, float("nan")])
    with pytest.raises(ValueError):
        holm_adjust([1.2])


def test_holm_is_between_raw_and_bonferroni_and_keeps_the_order() -> None:
    p = np.random.default_rng(0).random(15) * 0.1
    adjusted = holm_adjust(p)
    assert np.all(adjusted >= p - 1e-15)
    assert np.all(adjusted <= np.minimum(1.0, p * len(p)) + 1e-15)
    order = np.argsort(p)
    assert np.all(np.diff(adjusted[order]) >= 0)


def test_ranking_groups_models_not_told_apart() -> None:
    accs = {"c": 0.80, "a": 0.90, "b": 0.89, "d": 0.79}
    different = {frozenset(p) for p in [("a", "c"), ("a", "d"), ("b", "c"), ("b", "d")]}
    groups = rank_groups(accs, different)
    assert [(g.rank, g.models) for g in groups] == [(1, ["a", "b"]), (2, ["c", "d"])]
    assert groups[0].accuracies == [0.90, 0.89]


def test_ranking_without_any_difference_is_one_group_and_chain_splits() -> None:
    assert [g.models for g in rank_groups({"x": 0.7, "y": 0.9}, set())] == [["y", "x"]]
    # a ~ b, b ~ c, but a ≠ c: c cannot join a's group
    groups = rank_groups({"a": 0.9, "b": 0.85, "c": 0.8}, {frozenset({"a", "c"})})
    assert [g.models for g in groups] == [["a", "b"], ["c"]]
    assert [g.models for g in rank_groups({"solo": 0.5}, set())] == [["solo"]]
