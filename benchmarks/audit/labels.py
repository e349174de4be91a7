"""Audit of errors in the gold labels: a pair's fragility never overstates how robust its verdict is.

Each simulated run: true labels, two models right at their own rates (a wrong answer a random other
class), and gold labels of which ``noise`` are wrong (a random other class: Northcutt et al. 2021
found 3.4 % on average). The run sees only the gold labels. Where it decides a pair, its fragility
``f`` (``stats.fragility.pair_fragility``, the code a run calls) promises that the verdict holds unless
``f`` of the examples where the two answers differ are mislabelled. The row is the share of such runs
in which fewer than ``f`` of those examples were mislabelled and yet the true labels do not make the
test name the same winner: 0 by construction when the search is exact. The setting also says how
often the promise was at stake (the mislabelled disagreements reached ``f``) and the median ``f``.
"""

from __future__ import annotations

import numpy as np

from audit.common import Row, grid_seed, row
from headtohead.stats.fragility import pair_fragility
from headtohead.stats.paired import difference_pvalue

__all__ = ["label_rows"]

ALPHA = 0.05
#: (examples, classes, accuracy of a, accuracy of b, share of gold labels wrong)
_GRID = (
    (300, 2, 0.85, 0.80, 0.034),
    (1000, 2, 0.85, 0.82, 0.034),
    (1000, 3, 0.80, 0.76, 0.05),
    (2000, 5, 0.70, 0.66, 0.034),
)


def _winner(gold: np.ndarray, a: np.ndarray, b: np.ndarray) -> str | None:
    only_a, only_b = int(np.sum((a == gold) & (b != gold))), int(np.sum((a != gold) & (b == gold)))
    if only_a == only_b or float(difference_pvalue(only_a, only_b)) > ALPHA:
        return None
    return "a" if only_a > only_b else "b"


def _other(rng: np.random.Generator, labels: np.ndarray, k: int) -> np.ndarray:
    return (labels + rng.integers(1, k, len(labels))) % k


def _simulate(
    n: int, k: int, acc_a: float, acc_b: float, noise: float, runs: int, seed: int
) -> tuple[int, int, int, int, list[int]]:
    """(runs decided, of them with fewer mislabelled disagreements than the fragility, of those overturned, of the
    others overturned, fragilities)."""
    rng = np.random.default_rng(seed)
    decided = promised = broken = overturned = 0
    fragilities = []
    for _ in range(runs):
        truth = rng.integers(0, k, n)
        a = np.where(rng.random(n) < acc_a, truth, _other(rng, truth, k))
        b = np.where(rng.random(n) < acc_b, truth, _other(rng, truth, k))
        gold = np.where(rng.random(n) < noise, _other(rng, truth, k), truth)
        winner = _winner(gold, a, b)
        if winner is None:
            continue
        decided += 1
        win, lose = (a, b) if winner == "a" else (b, a)
        only_w, only_l = int(np.sum((win == gold) & (lose != gold))), int(np.sum((win != gold) & (lose == gold)))
        p = float(difference_pvalue(only_w, only_l))
        found = pair_fragility(gold, win, lose, k, family=[p], index=0, alpha=ALPHA)
        assert found is not None
        fragilities.append(found)
        wrong_where_they_differ = int(np.sum((a != b) & (gold != truth)))
        holds = _winner(truth, a, b) == winner
        if wrong_where_they_differ < found:
            promised += 1
            broken += not holds
        else:
            overturned += not holds
    return decided, promised, broken, overturned, fragilities


def label_rows(*, quick: bool = False, seed: int = 0) -> list[Row]:
    """The fragility's promise, broken: never, where the search is exact."""
    runs = 200 if quick else 2000
    rows = []
    for i, (n, k, acc_a, acc_b, noise) in enumerate(_GRID[:2] if quick else _GRID):
        decided, promised, broken, overturned, fragilities = _simulate(
            n, k, acc_a, acc_b, noise, runs, grid_seed(seed, 61, i)
        )
        at_stake = decided - promised
        setting = (
            f"n = {n}, {k} classes, accuracy {acc_a:.2f} vs {acc_b:.2f}, {100 * noise:.1f} % of gold labels wrong "
            f"({decided} of {runs} runs decided; median fragility {int(np.median(fragilities)) if fragilities else 0}; "
            f"{at_stake} with as many mislabelled disagreements, of which the true labels overturned {overturned})"
        )
        rows.append(
            row(
                "labels",
                "verdict overturned by the true labels though fewer than its fragility of the disagreements "
                "were mislabelled",
                setting,
                "error",
                0.0,
                broken / max(promised, 1),
                max(promised, 1),
                n=n,
            )
        )
    return rows
