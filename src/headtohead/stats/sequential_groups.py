"""Sequential comparison when examples come in groups (one user's, one document's): bet on whole groups.

See ``docs/statistics.md`` §9.
"""

from __future__ import annotations

from collections import Counter
from typing import cast

import numpy as np

from headtohead.stats.sequential import N_BETS, SequentialState, SequentialTest

__all__ = ["GroupedSequentialTest", "grouped_path_e_values"]

_FRACTIONS = (np.arange(N_BETS) + 0.5) / N_BETS
_BISECTIONS = 40


class GroupedSequentialTest(SequentialTest):
    """Feed whole groups of paired correctness chunk by chunk; after each chunk, the decision so far.

    Parameters
    ----------
    alpha, margin
        As for :class:`~headtohead.stats.sequential.SequentialTest`.
    max_group_size : int
        The largest group of the data (bounds each bet; known before the first look).

    Examples
    --------
    >>> test = GroupedSequentialTest(alpha=0.05, max_group_size=3)
    >>> a = np.array([True, True, True, True, False, True] * 10)
    >>> b = np.array([False, False, True, True, False, False] * 10)
    >>> groups = np.repeat(np.arange(20), 3)
    >>> test.update(a, b, groups).decision
    'a_better'
    """

    def __init__(self, alpha: float = 0.05, margin: float | None = None, *, max_group_size: int) -> None:
        super().__init__(alpha, margin)
        if max_group_size < 1:
            raise ValueError(f"max_group_size must be at least 1, not {max_group_size}")
        self.max_group_size = int(max_group_size)
        self._cells: Counter[tuple[int, int]] = Counter()  # (S_g, n_g) → groups
        self._seen: set[str] = set()

    @property
    def groups_used(self) -> int:
        """Groups evaluated so far."""
        return len(self._seen)

    def update(self, a_correct: np.ndarray, b_correct: np.ndarray, groups: np.ndarray | None = None) -> SequentialState:
        """Add one chunk of whole groups (same examples, same order, each example's group) and look.

        Raises
        ------
        ValueError
            A group of this chunk appeared in an earlier one (groups must be evaluated whole),
            or one is larger than ``max_group_size``.
        """
        a, b = np.asarray(a_correct), np.asarray(b_correct)
        if groups is None or np.shape(groups) != a.shape:
            raise ValueError("a grouped sequential test needs the group of every example of the chunk")
        if a.shape != b.shape or a.ndim != 1 or a.size == 0 or a.dtype != np.bool_ or b.dtype != np.bool_:
            raise ValueError("a chunk needs two non-empty 1-D boolean correctness arrays of equal length")
        names, codes = np.unique(np.asarray(groups).astype(str), return_inverse=True)
        repeated = self._seen.intersection(names.tolist())
        if repeated:
            raise ValueError(
                f"group(s) {sorted(repeated)[:3]} were already evaluated in an earlier chunk; a chunk "
                f"must hold whole groups"
            )
        sums = np.bincount(codes, weights=a.astype(np.int64) - b.astype(np.int64), minlength=len(names))
        sizes = np.bincount(codes, minlength=len(names))
        if sizes.max() > self.max_group_size:
            raise ValueError(f"a group of {sizes.max()} examples is larger than max_group_size={self.max_group_size}")
        self._cells.update(zip(sums.astype(int).tolist(), sizes.tolist(), strict=True))
        self._seen.update(names.tolist())
        return self._count_and_look(a, b)

    def _look(self, last: SequentialState, n: int, only_a: int, only_b: int) -> SequentialState:
        sums = np.array([k[0] for k in self._cells], dtype=np.float64)
        sizes = np.array([k[1] for k in self._cells], dtype=np.float64)
        weights = np.array(list(self._cells.values()), dtype=np.float64)
        up, down = (float(v[0]) for v in self._log_wealth(sums, sizes, weights, np.zeros(1)))
        thresholds = np.log(2.0 / np.array([self.alpha, 2.0 * self.alpha]))
        (low, eq_low), (high, eq_high) = self._bounds(sums, sizes, weights, thresholds)
        state = SequentialState(
            n,
            only_a,
            only_b,
            up,
            down,
            max(low, last.low),
            min(high, last.high),
            max(eq_low, last.equivalence_low),
            min(eq_high, last.equivalence_high),
            last.decision,
            last.decided_at,
        )
        if state.decision != "continue":
            return state
        decision = self._decide(state)
        return (
            SequentialState(**{**vars(state), "decision": decision, "decided_at": n})
            if decision != "continue"
            else state
        )

    def _log_wealth(
        self, sums: np.ndarray, sizes: np.ndarray, weights: np.ndarray, gaps: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Log wealth of the up and the down gambler against each ``Δ = gap`` (arrays over ``gaps``)."""
        m, g = float(self.max_group_size), gaps[None, :]
        up = (sums[:, None] - g * sizes[:, None]) / (m * (1.0 + g))
        down = (g * sizes[:, None] - sums[:, None]) / (m * (1.0 - g))
        return _mixture(up, weights), _mixture(down, weights)

    def _bounds(
        self, sums: np.ndarray, sizes: np.ndarray, weights: np.ndarray, thresholds: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per threshold, the gaps not rejected: the up wealth falls in δ, the down wealth rises (bisection,
        every bound at once, rounded outwards so the interval contains the exact set)."""
        k = len(thresholds)
        lo, hi = np.full(2 * k, -1.0 + 1e-12), np.full(2 * k, 1.0 - 1e-12)  # lower bounds, then upper bounds
        for _ in range(_BISECTIONS):
            mid = 0.5 * (lo + hi)
            up, down = self._log_wealth(sums, sizes, weights, mid)
            rejected = np.r_[up[:k] >= thresholds, down[k:] >= thresholds]
            below = np.r_[np.ones(k, bool), np.zeros(k, bool)]  # a lower bound's rejected side is below it
            lo = np.where(rejected == below, mid, lo)
            hi = np.where(rejected == below, hi, mid)
        return lo[:k], hi[k:]


def grouped_path_e_values(
    sums: np.ndarray, sizes: np.ndarray, max_group_size: int, looks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Log e-values of "A better" and "B better" (against Δ = 0) after each look, for simulations.

    Parameters
    ----------
    sums, sizes : ndarray of shape (groups,)
        Each group's ``S_g`` and ``n_g``, in the order the groups are evaluated.
    max_group_size : int
    looks : ndarray of int
        Groups evaluated at each look (increasing).

    Returns
    -------
    up, down : ndarray of shape (len(looks),)
        What :class:`GroupedSequentialTest` reports as ``log_e_a_better``/``log_e_b_better``.
    """
    factors = np.log1p(np.outer(np.asarray(sums, np.float64) / max_group_size, _FRACTIONS))  # (groups, bets)
    cumulative = np.cumsum(np.r_[[np.zeros(len(_FRACTIONS))], factors], axis=0)[np.asarray(looks)]
    mirrored = np.cumsum(
        np.r_[
            [np.zeros(len(_FRACTIONS))], np.log1p(np.outer(-np.asarray(sums, np.float64) / max_group_size, _FRACTIONS))
        ],
        axis=0,
    )[np.asarray(looks)]

    def mean_exp(terms: np.ndarray) -> np.ndarray:
        top = terms.max(axis=1, keepdims=True)
        return cast(np.ndarray, top[:, 0] + np.log(np.mean(np.exp(terms - top), axis=1)))

    del sizes  # at Δ = 0 a group's size does not enter its bet
    return mean_exp(cumulative), mean_exp(mirrored)


def _mixture(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``log mean_f Π_g (1 + f x_g)^{w_g}`` over the constant bets ``f``, for each column of ``values`` (cells × gaps)."""
    terms = np.einsum("cgf,c->gf", np.log1p(values[:, :, None] * _FRACTIONS), weights)  # (gaps, bets)
    top = terms.max(axis=1, keepdims=True)
    return cast(np.ndarray, top[:, 0] + np.log(np.mean(np.exp(terms - top), axis=1)))
