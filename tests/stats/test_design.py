"""Balanced run orders: Williams designs balance position, neighbours and precedence."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from headtohead.stats.design import balanced_orders, precedence_counts, round_order, williams_design


@pytest.mark.parametrize("k", range(2, 8))
def test_one_cycle_balances_positions_neighbours_and_precedence(k: int) -> None:
    design = williams_design(k)
    cycle = k if k % 2 == 0 else 2 * k
    assert design.shape == (cycle, k)
    assert all(sorted(row) == list(range(k)) for row in design.tolist())  # every round runs every model once
    per_position = cycle // k
    for position in range(k):  # Latin: each model equally often in each position
        assert np.bincount(design[:, position], minlength=k).tolist() == [per_position] * k
    neighbours = np.zeros((k, k), dtype=int)  # Williams: each model directly followed by each other equally often
    for row in design:
        for first, second in zip(row[:-1], row[1:]):
            neighbours[first, second] += 1
    assert np.all(neighbours[~np.eye(k, dtype=bool)] == cycle // k)
    counts = precedence_counts(design.tolist(), k)  # and precedence: i before j in half the rounds
    assert np.all(counts[~np.eye(k, dtype=bool)] == cycle // 2)


@pytest.mark.parametrize("k", range(2, 8))
def test_every_even_number_of_rounds_is_balanced_in_precedence(k: int) -> None:
    for n_rounds in range(2, 3 * k + 1, 2):
        counts = precedence_counts(balanced_orders(k, n_rounds), k)
        assert np.array_equal(counts, counts.T), (k, n_rounds)


def test_rotation_is_not_balanced_but_the_design_is() -> None:
    rotation = [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    assert precedence_counts(rotation, 3)[0, 1] == 2  # A before B in 2 rounds of 3 (the issue)
    counts = precedence_counts(balanced_orders(3, 6), 3)
    assert counts[0, 1] == counts[1, 0] == 3


@pytest.mark.parametrize("k", [3, 4, 5])
def test_seeded_relabelling_keeps_the_balance_and_is_reproducible(k: int) -> None:
    orders = balanced_orders(k, 2 * k, seed=7)
    assert orders == balanced_orders(k, 2 * k, seed=7)
    assert any(balanced_orders(k, 2 * k, seed=s)[0] != orders[0] for s in range(8))  # the labels do move
    counts = precedence_counts(orders, k)
    assert np.array_equal(counts, counts.T)
    assert [round_order(k, r, seed=7) for r in range(2 * k)] == orders


def test_rounds_cycle_and_bad_inputs() -> None:
    assert round_order(2, 0) == [0, 1] and round_order(2, 1) == [1, 0] and round_order(2, 2) == [0, 1]
    assert round_order(1, 5) == [0]
    assert round_order(5, 10) == round_order(5, 0)
    for bad in (lambda: williams_design(0), lambda: round_order(3, -1), lambda: balanced_orders(3, -1)):
        with pytest.raises(ValueError):
            bad()


def test_larger_designs_keep_the_properties() -> None:
    for k in range(8, 13):
        design = williams_design(k)
        counts = precedence_counts(design.tolist(), k)
        assert np.all(counts + counts.T == len(design) * (1 - np.eye(k, dtype=int)))
        assert np.array_equal(counts, counts.T)
        pairs = {(int(a), int(b)) for row in design for a, b in zip(row[:-1], row[1:])}
        assert pairs == set(itertools.permutations(range(k), 2))


def test_design_module_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = "import sys, headtohead.stats.design, headtohead.stats.exact_power; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
