"""Sequential comparison of two models: stop evaluating once the answer is known.

See ``docs/statistics.md`` §6.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from headtohead.errors import ConfigError
from headtohead.results.sequential import SequentialRecord, SequentialStep

__all__ = [
    "SequentialState",
    "SequentialTest",
    "replay",
    "log_e_values",
    "confidence_bounds",
    "path_e_values",
    "first_decisions",
    "to_record",
    "DECISIONS",
    "N_BETS",
]

#: Constant-fraction bets averaged by every gambler.
N_BETS = 1000
#: Decision codes of :func:`first_decisions`, in code order.
DECISIONS: tuple[str, ...] = ("continue", "a_better", "b_better", "equivalent")

Decision = Literal["continue", "a_better", "b_better", "equivalent"]
_FRACTIONS = (np.arange(N_BETS) + 0.5) / N_BETS
_LOG_N_BETS = math.log(N_BETS)
_BLOCK = 4096  # rows per block of the (rows × N_BETS) work array: bounds the memory to ~32 MB
_BISECTIONS = 40  # bound within 2 / 2**40 ≈ 2e-12
_FEW = 16  # rows below which _log_up computes every row rather than the distinct ones


def _log_up(b: np.ndarray, c: np.ndarray, n: np.ndarray, gap: np.ndarray) -> np.ndarray:
    """Log wealth of the gambler betting that Δ > ``gap`` (1-D float arrays of equal length)."""
    # simulations ask for the same (b, c, n, gap) many times over: compute each distinct one once
    # (a run's own look asks for a handful, where finding the distinct ones costs more than it saves)
    ties = np.where(gap == 0.0, 0.0, n - b - c)  # ties do not move a bet on Δ = 0
    stacked = np.stack([b, c, ties, gap], axis=1)
    if len(stacked) <= _FEW:
        rows, inverse = stacked, np.arange(len(stacked))
    else:
        rows, inverse = np.unique(stacked, axis=0, return_inverse=True)
    out = np.empty(len(rows), dtype=np.float64)
    for start in range(0, len(rows), _BLOCK):
        block = rows[start : start + _BLOCK]
        g = block[:, 3:4]
        # log factor per bet of each outcome: D = +1 (only A right), D = −1 (only B right), D = 0 (tie)
        if np.all(g == g[0]):  # one null value: the log wealth of every bet is a matrix product
            factors = np.stack(
                [
                    np.log1p(_FRACTIONS * (1.0 - g[0]) / (1.0 + g[0])),
                    np.log1p(-_FRACTIONS),
                    np.log1p(-_FRACTIONS * g[0] / (1.0 + g[0])),
                ]
            )
            terms = block[:, :3] @ factors
        else:
            terms = (
                block[:, 0:1] * np.log1p(_FRACTIONS * (1.0 - g) / (1.0 + g))
                + block[:, 1:2] * np.log1p(-_FRACTIONS)
                + block[:, 2:3] * np.log1p(-_FRACTIONS * g / (1.0 + g))
            )
        top = terms.max(axis=1, keepdims=True)
        terms -= top
        np.exp(terms, out=terms)
        out[start : start + _BLOCK] = np.log(terms.sum(axis=1)) + top[:, 0] - _LOG_N_BETS
    return out[inverse.reshape(-1)]


def log_e_values(
    only_a: np.ndarray | int, only_b: np.ndarray | int, n: np.ndarray | int, gap: np.ndarray | float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Log wealth of the two gamblers against ``Δ = gap``, after ``n`` examples.

    Parameters
    ----------
    only_a, only_b, n : array_like of int
        Examples only A got right (McNemar's b), only B got right (c), and all examples.
    gap : array_like of float, in (−1, 1)
        The null value δ of ``accuracy(A) − accuracy(B)``.

    Returns
    -------
    log_up, log_down : ndarray of float
        Log e-values against δ betting on ``Δ > δ`` and on ``Δ < δ`` (broadcast shape).

    Examples
    --------
    >>> up, down = log_e_values(30, 8, 100)
    >>> bool(up > np.log(2 / 0.05)), bool(down < 0)
    (True, True)
    """
    b, c, n_, g = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (only_a, only_b, n, gap)))
    if np.any(b < 0) or np.any(c < 0) or np.any(b + c > n_):
        raise ValueError("counts must satisfy 0 ≤ only_a, only_b and only_a + only_b ≤ n")
    if np.any(np.abs(g) >= 1.0):
        raise ValueError("gap must lie strictly between −1 and 1")
    shape = b.shape
    b, c, n_, g = (v.ravel() for v in (b, c, n_, g))
    up = _log_up(b, c, n_, g)
    down = _log_up(c, b, n_, -g)  # betting Δ < δ on (b, c) is betting Δ > −δ with the roles swapped
    return up.reshape(shape), down.reshape(shape)


def confidence_bounds(
    only_a: np.ndarray | int, only_b: np.ndarray | int, n: np.ndarray | int, alpha: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray]:
    """The (1 − alpha) interval of Δ at one look: each side rejects where a wealth reaches ``2/alpha``.

    Not the running intersection (:class:`SequentialTest` keeps that). Each bound is rounded
    outwards, so the interval contains the exact set. All arguments broadcast.

    Examples
    --------
    >>> low, high = confidence_bounds(30, 8, 100, 0.05)
    >>> bool(0 < low < 0.22 < high)
    True
    """
    b, c, n_, level = (
        v.ravel() for v in np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (only_a, only_b, n, alpha)))
    )
    shape = np.broadcast_shapes(*(np.shape(v) for v in (only_a, only_b, n, alpha)))
    threshold = np.log(2.0 / level)
    # the upper bound is minus the lower bound of the mirrored table: one bisection for both
    both = _bisect(np.r_[b, c], np.r_[c, b], np.r_[n_, n_], np.r_[threshold, threshold])
    return both[: b.size].reshape(shape), -both[b.size :].reshape(shape)


def _bisect(b: np.ndarray, c: np.ndarray, n: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """inf{δ : up wealth < e^threshold}; the up wealth is nonincreasing in δ, so bisect."""
    lo, hi = np.full(b.shape, -1.0), np.full(b.shape, 1.0)  # invariant: lo rejected (or −1), hi kept
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        rejected = _log_up(b, c, n, mid) >= threshold
        lo, hi = np.where(rejected, mid, lo), np.where(rejected, hi, mid)
    return lo


def path_e_values(only_a: np.ndarray, only_b: np.ndarray, n: np.ndarray, margin: float | None = None) -> np.ndarray:
    """The four log e-values the decisions read, at every look of many runs: shape (runs, looks, 4).

    ``only_a``, ``only_b``, ``n`` are cumulative counts of shape (runs, looks). The four are
    "A better" and "B better" against Δ = 0, "Δ < margin" and "Δ > −margin" (−inf without a margin).
    """
    b, c, n_ = (np.atleast_2d(np.asarray(v)) for v in (only_a, only_b, n))
    up, down = log_e_values(b, c, n_, 0.0)
    if margin is None:
        below = above = np.full(b.shape, -np.inf)
    else:
        _, below = log_e_values(b, c, n_, margin)
        above, _ = log_e_values(b, c, n_, -margin)
    return np.stack([up, down, below, above], axis=-1)


def first_decisions(log_e: np.ndarray, *, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The first decision of many runs at once (the rule :class:`SequentialTest` applies, vectorised).

    Parameters
    ----------
    log_e : ndarray of float, shape (runs, looks, 4)
        From :func:`path_e_values` (whose margin, if any, is the one used); a subset of its
        looks gives a coarser rule (larger chunks).
    alpha : float

    Returns
    -------
    code : ndarray of int, shape (runs,)
        Index into :data:`DECISIONS` (0 = no decision by the last look).
    look : ndarray of int, shape (runs,)
        Index of the look that decided; ``looks`` when none did.

    Examples
    --------
    >>> log_e = path_e_values(np.array([[5, 20, 40]]), np.array([[2, 4, 5]]), np.array([[20, 60, 100]]))
    >>> code, look = first_decisions(log_e, alpha=0.05)
    >>> DECISIONS[int(code[0])], int(look[0])
    ('a_better', 1)
    """
    _check_settings(alpha, None)
    runs, looks = log_e.shape[:2]
    better = log_e[..., :2] >= math.log(2.0 / alpha)
    # each one-sided equivalence bound may be reached at a different look; both must have been reached
    equivalent = np.asarray(np.maximum.accumulate(log_e[..., 2:] >= math.log(1.0 / alpha), axis=1).all(axis=-1))
    fired = np.concatenate([better, equivalent[..., None]], axis=-1)  # (runs, looks, 3)
    any_fired = np.asarray(fired.any(axis=-1))
    look = np.where(any_fired.any(axis=1), any_fired.argmax(axis=1), looks)
    at = fired[np.arange(runs), np.minimum(look, looks - 1)]
    code = np.where(look < looks, np.argmax(at, axis=1) + 1, 0)  # argmax: better before equivalent
    return code, look


def _check_settings(alpha: float, margin: float | None) -> None:
    if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and 0.0 < alpha < 0.5):
        raise ConfigError(f"alpha={alpha} must lie between 0 and 0.5 for sequential evaluation, e.g. 0.05")
    if margin is not None and not (isinstance(margin, (int, float)) and math.isfinite(margin) and 0.0 < margin < 1.0):
        raise ConfigError(
            f"margin={margin} must be an accuracy gap as a fraction in (0, 1), e.g. 0.02 "
            f"for 2 percentage points; leave it out to never declare equivalence"
        )


@dataclass(frozen=True)
class SequentialState:
    """Where a sequential comparison stands after a look (fields: those of
    :class:`~headtohead.results.sequential.SequentialStep`, which documents them)."""

    n: int
    only_a_correct: int
    only_b_correct: int
    log_e_a_better: float
    log_e_b_better: float
    low: float
    high: float
    equivalence_low: float
    equivalence_high: float
    decision: Decision
    decided_at: int | None

    @property
    def gap(self) -> float:
        """Observed ``accuracy(A) − accuracy(B)`` (0 before any example)."""
        return (self.only_a_correct - self.only_b_correct) / self.n if self.n else 0.0


_START = SequentialState(0, 0, 0, 0.0, 0.0, -1.0, 1.0, -1.0, 1.0, "continue", None)


class SequentialTest:
    """Feed paired correctness chunk by chunk; after each chunk, the decision so far.

    Parameters
    ----------
    alpha : float
        Error level (see the module docstring for what it bounds).
    margin : float or None
        Equivalence margin on the accuracy gap (0.02 = 2 points); None: no equivalence decision.

    Examples
    --------
    >>> test = SequentialTest(alpha=0.05)
    >>> a = np.array([True] * 37 + [False] * 13)                # per chunk: 7 only A right,
    >>> b = np.array([False] * 7 + [True] * 31 + [False] * 12)  # 1 only B right, 42 ties
    >>> test.update(a, b).decision, test.update(a, b).decision
    ('continue', 'a_better')
    >>> test.state.decided_at
    100
    """

    def __init__(self, alpha: float = 0.05, margin: float | None = None) -> None:
        _check_settings(alpha, margin)
        self.alpha, self.margin = float(alpha), (None if margin is None else float(margin))
        self._path: list[SequentialState] = []

    @classmethod
    def resume(
        cls, path: Sequence[SequentialState], alpha: float = 0.05, margin: float | None = None
    ) -> SequentialTest:
        """A test that goes on from the looks already made (e.g. after an interrupted run)."""
        test = cls(alpha, margin)
        if any(later.n <= earlier.n for earlier, later in zip(path, path[1:], strict=False)):
            raise ValueError("the looks of a sequential path must have increasing example counts")
        test._path = list(path)
        return test

    @classmethod
    def from_record(cls, record: SequentialRecord) -> SequentialTest:
        """Resume from the ``stats.sequential`` record a run saved."""
        states = [SequentialState(**step.model_dump()) for step in record.steps]
        return cls.resume(states, record.alpha, record.margin)

    @property
    def path(self) -> tuple[SequentialState, ...]:
        return tuple(self._path)

    @property
    def groups_used(self) -> int | None:
        return None  # examples are the units (a grouped test counts its groups)

    @property
    def state(self) -> SequentialState:
        """The last look (n = 0 and "continue" before the first)."""
        return self._path[-1] if self._path else _START

    def update(self, a_correct: np.ndarray, b_correct: np.ndarray) -> SequentialState:
        """Add one chunk of paired outcomes (same examples, same order) and look.

        Parameters
        ----------
        a_correct, b_correct : ndarray of bool, shape (k,)
            Whether model A / model B got each example of the chunk right; k ≥ 1.

        Returns
        -------
        SequentialState
        """
        a, b = np.asarray(a_correct), np.asarray(b_correct)
        if a.shape != b.shape or a.ndim != 1 or a.size == 0:
            raise ValueError(
                f"a chunk needs two non-empty 1-D correctness arrays of equal length, got shapes "
                f"{a.shape} and {b.shape}"
            )
        if a.dtype != np.bool_ or b.dtype != np.bool_:
            raise ValueError(f"correctness must be boolean arrays, got {a.dtype} and {b.dtype}")
        return self._count_and_look(a, b)

    def _count_and_look(self, a: np.ndarray, b: np.ndarray) -> SequentialState:
        """Add a chunk's discordant counts and take the look (shared with the grouped test)."""
        last = self.state
        n = last.n + a.size
        only_a = last.only_a_correct + int(np.count_nonzero(a & ~b))
        only_b = last.only_b_correct + int(np.count_nonzero(~a & b))
        self._path.append(self._look(last, n, only_a, only_b))
        return self._path[-1]

    def _look(self, last: SequentialState, n: int, only_a: int, only_b: int) -> SequentialState:
        up, down = (float(v) for v in log_e_values(only_a, only_b, n, 0.0))
        lows, highs = confidence_bounds(only_a, only_b, n, np.array([self.alpha, 2.0 * self.alpha]))
        (low, eq_low), (high, eq_high) = lows.tolist(), highs.tolist()
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
        return replace(state, decision=decision, decided_at=n) if decision != "continue" else state

    def _decide(self, state: SequentialState) -> Decision:
        threshold = math.log(2.0 / self.alpha)
        if state.log_e_a_better >= threshold:
            return "a_better"
        if state.log_e_b_better >= threshold:
            return "b_better"
        # the running bounds are rounded outwards, so this is never more liberal than the exact e-values;
        # each side may have been reached at a different look
        if self.margin is not None and -self.margin < state.equivalence_low and state.equivalence_high < self.margin:
            return "equivalent"
        return "continue"


def replay(
    a_correct: np.ndarray,
    b_correct: np.ndarray,
    chunk_size: int,
    *,
    alpha: float = 0.05,
    margin: float | None = None,
    stop: bool = True,
) -> tuple[SequentialState, ...]:
    """Run a sequential comparison over whole correctness arrays, chunk by chunk, in the given order.

    Parameters
    ----------
    a_correct, b_correct : ndarray of bool, shape (n,)
        Paired correctness, already in the (seeded random) order to evaluate.
    chunk_size : int
        Examples per look; the last chunk may be shorter.
    alpha, margin
        As for :class:`SequentialTest`.
    stop : bool
        Stop after the first deciding chunk (True) or go on to the end.

    Returns
    -------
    tuple of SequentialState, one per look

    Examples
    --------
    >>> a = np.tile([True, True, True, False], 200)
    >>> b = np.tile([True, False, False, False], 200)
    >>> path = replay(a, b, 50)
    >>> path[-1].decision, path[-1].n
    ('a_better', 50)
    """
    if not (isinstance(chunk_size, (int, np.integer)) and chunk_size >= 1):
        raise ConfigError(f"chunk_size={chunk_size} must be a positive whole number of examples, e.g. 50")
    a, b = np.asarray(a_correct), np.asarray(b_correct)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired correctness arrays must be 1-D and equal in length, got {a.shape} and {b.shape}")
    test = SequentialTest(alpha, margin)
    for start in range(0, a.size, chunk_size):
        state = test.update(a[start : start + chunk_size], b[start : start + chunk_size])
        if stop and state.decision != "continue":
            break
    return test.path


def to_record(
    test: SequentialTest,
    *,
    model_a: str,
    model_b: str,
    chunk_size: int,
    examples_available: int,
    order_seed: int | None = None,
) -> SequentialRecord:
    """The ``stats.sequential`` record of a run; "undecided" when every example was used without a decision."""
    state = test.state
    if state.n > examples_available:
        raise ValueError(f"{state.n} examples used but only {examples_available} available")
    decision: Literal["a_better", "b_better", "equivalent", "undecided", "continue"] = state.decision
    if decision == "continue" and state.n == examples_available:
        decision = "undecided"
    steps = [SequentialStep(**vars(s)) for s in test.path]
    grouped: dict[str, Any] = (
        {}
        if test.groups_used is None
        else {"groups_used": test.groups_used, "method": "betting confidence sequence over whole groups, constant bets"}
    )
    return SequentialRecord(
        model_a=model_a,
        model_b=model_b,
        alpha=test.alpha,
        margin=test.margin,
        chunk_size=chunk_size,
        order_seed=order_seed,
        examples_used=state.n,
        examples_available=examples_available,
        decision=decision,
        steps=steps,
        **grouped,
    )
