"""How many wrong gold labels would overturn a pair's verdict: its fragility.

A verdict "A is better than B" rests on the examples only one of them got right. If some gold
labels are wrong, the counts move: an example A got right and B wrong, relabelled to B's answer,
becomes one B got right and A wrong (``b − 1``, ``c + 1``); relabelled to a third class, both
are wrong (``b − 1``); an example both got wrong with different answers, relabelled to B's,
becomes one only B got right (``c + 1``). Examples where both gave the same answer move
neither count. The fragility of a decided pair is the fewest such relabellings, among the
examples where the two models' answers differ, after which the test the run ran — McNemar's
score test at the pair's place in the Holm family — no longer names the same winner.

The first move lowers the score statistic ``(b − c)/√(b + c)`` further than either other move
from any state (``docs/statistics.md``, "Fragility: wrong gold labels"), so the fewest
relabellings use it while it is available; the statistic falls monotonically in their number,
so a bisection over that count finds the smallest, and the other moves are searched only where
the loser gave no answer a gold label could take (a failure, a class the data lacks).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from headtohead.results.comparison import Comparison, StatsSummary
from headtohead.results.predictions import Predictions
from headtohead.stats.multiple import holm_rows
from headtohead.stats.paired import difference_pvalue

__all__ = ["fewest_relabelled", "pair_fragility", "with_fragility"]

Decided = Callable[[int, int], bool]


def _first_false(predicate: Callable[[int], bool], low: int, high: int) -> int | None:
    """The smallest ``k`` in ``[low, high]`` with ``predicate(k)`` False, for a predicate True then False; else None."""
    if predicate(high):
        return None
    while low < high:
        mid = (low + high) // 2
        if predicate(mid):
            low = mid + 1
        else:
            high = mid
    return low


def _first_gain(still_decided: Decided, b: int, c: int, gainable: int) -> int | None:
    """The fewest of ``gainable`` moves ``c + 1`` after which ``still_decided`` is False, or None."""
    if not gainable:
        return None
    return _first_false(lambda k: still_decided(b, c + k), 1, gainable)


def fewest_relabelled(b: int, c: int, switchable: int, gainable: int, still_decided: Decided) -> int:
    """The fewest relabellings after which ``still_decided(b', c')`` is False.

    Parameters
    ----------
    b, c : int
        Examples only the winner got right, only the loser got right.
    switchable : int
        Of the ``b``, those whose loser's answer is a class of the data (relabelled to it: ``b − 1, c + 1``);
        the others can only be relabelled so that both are wrong (``b − 1``).
    gainable : int
        Examples both got wrong with different answers, the loser's a class of the data (``c + 1``).
    still_decided : callable
        ``(b', c') → bool``: does the test still name the winner? Monotone: True at ``(b, c)``, and
        False whenever ``b' ≤ c'``.

    Returns
    -------
    int
        At most ``b`` (relabelling all of them leaves the winner right on none alone).

    Examples
    --------
    McNemar's score test at α = 0.05 on b = 30, c = 12 (p = 0.0055): three relabellings leave p = 0.064.

    >>> from headtohead.stats.paired import difference_pvalue
    >>> fewest_relabelled(30, 12, 30, 0, lambda b, c: b > c and float(difference_pvalue(b, c)) <= 0.05)
    3
    """
    if not 0 <= switchable <= b:
        raise ValueError(f"switchable={switchable} must lie in 0..b={b}")
    found = _first_false(lambda k: still_decided(b - k, c + k), 1, switchable) if switchable else None
    if found is not None:
        return found
    # every switchable example switched; the rest need the weaker moves: both wrong (M2) or the loser right (M3)
    base_b, base_c, others = b - switchable, c + switchable, b - switchable
    best: int | None = 0 if not still_decided(base_b, base_c) else None
    for both_wrong in range(others + 1):
        if best is not None and both_wrong >= best:
            break
        if not still_decided(base_b - both_wrong, base_c):
            best = both_wrong
            break
        gained = _first_gain(still_decided, base_b - both_wrong, base_c, gainable)
        if gained is not None and (best is None or both_wrong + gained < best):
            best = both_wrong + gained
    assert best is not None  # all b relabelled: b' = 0 ≤ c', never decided
    return switchable + best


def pair_fragility(
    y_true: np.ndarray,
    pred_winner: np.ndarray,
    pred_loser: np.ndarray,
    n_classes: int,
    *,
    family: Sequence[float],
    index: int,
    alpha: float,
) -> int | None:
    """The fewest gold labels that, relabelled, stop McNemar's score test + Holm naming the winner.

    Parameters
    ----------
    y_true, pred_winner, pred_loser : ndarray of int
        Gold labels and the two models' answers (``-1``: no answer; ``≥ n_classes``: a class the data
        lacks, which no gold label can take).
    n_classes : int
        Classes of the data.
    family : sequence of float
        The raw p-values of the run's Holm family (this pair's at ``index``); the others are held as measured.
    index : int
    alpha : float

    Returns
    -------
    int or None
        ``None`` when the counts given do not make the winner significant (nothing to overturn).

    Examples
    --------
    >>> y = np.zeros(300, int)
    >>> a = np.r_[np.zeros(30, int), np.ones(12, int), np.zeros(258, int)]  # right on 30 that b gets wrong
    >>> b = np.r_[np.ones(30, int), np.zeros(12, int), np.zeros(258, int)]
    >>> pair_fragility(y, a, b, 2, family=[0.0055], index=0, alpha=0.05)
    3
    """
    y, win, lose = (np.asarray(x, dtype=np.int64) for x in (y_true, pred_winner, pred_loser))
    win_right, lose_right = win == y, lose == y
    answerable = (lose >= 0) & (lose < n_classes)  # a gold label can take the loser's answer
    only_winner, only_loser = win_right & ~lose_right, ~win_right & lose_right
    b, c = int(only_winner.sum()), int(only_loser.sum())
    switchable = int((only_winner & answerable).sum())
    gainable = int((~win_right & ~lose_right & answerable & (win != lose)).sum())
    p = np.asarray(family, dtype=np.float64).copy()

    def still_decided(b_now: int, c_now: int) -> bool:
        if b_now <= c_now:
            return False
        p[index] = float(difference_pvalue(b_now, c_now))
        return bool(holm_rows(p)[0, index] <= alpha)

    if not still_decided(b, c):
        return None
    return fewest_relabelled(b, c, switchable, gainable, still_decided)


def _fragility(comparison: Comparison, predictions: Predictions, family: Sequence[float], index: int) -> Comparison:
    if not comparison.significant or comparison.winner is None or predictions.groups is not None:
        return comparison
    loser = comparison.model_b if comparison.winner == comparison.model_a else comparison.model_a
    win, lose = predictions[comparison.winner].pred, predictions[loser].pred
    found = pair_fragility(
        predictions.y_true,
        win,
        lose,
        len(predictions.label_names),
        family=family,
        index=index,
        alpha=comparison.alpha,
    )
    if found is None:
        return comparison
    differ = int(np.sum(np.asarray(win) != np.asarray(lose)))
    return comparison.model_copy(update={"fragility": found, "answers_differ": differ})


def with_fragility(summary: StatsSummary, predictions: Predictions) -> StatsSummary:
    """``summary`` with the fragility of every pair decided by McNemar's score test (:func:`pair_fragility`).

    The Holm family is the run's: every comparison's p-value, then those of the comparisons pooled
    over prompts. Left ``None``: undecided pairs, and pairs with groups of related examples (their
    clustered test depends on which examples are relabelled, not only on how many).
    """
    pools = [p.p_value for p in summary.prompts.pools] if summary.prompts is not None else []
    family = [c.p_value for c in summary.comparisons] + pools
    comparisons = [_fragility(c, predictions, family, i) for i, c in enumerate(summary.comparisons)]
    return summary.model_copy(update={"comparisons": comparisons})
