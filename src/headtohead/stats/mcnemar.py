"""McNemar's test on paired correctness: did two models, scored on the same examples, differ?

See ``docs/statistics.md``, the section of this title.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["McNemarResult", "mcnemar_test", "mcnemar_pvalues", "contingency", "EXACT_BELOW", "RULE"]

#: Discordant pairs below which the exact binomial test is used (``method="auto"``, the rule before version 4).
EXACT_BELOW = 25
#: The rule headtohead runs, in words (stored with the statistics).
RULE = "McNemar's score test: (b − c)²/(b + c) on χ²₁ without continuity correction (Tango's score statistic at 0)"

Method = Literal["score", "auto", "exact", "chi2", "midp"]


@dataclass(frozen=True)
class McNemarResult:
    """The outcome of one McNemar test.

    Attributes
    ----------
    table : tuple of int
        ``(both_correct, only_a_correct, only_b_correct, both_wrong)``.
    test : str
        ``"mcnemar-score"``, ``"mcnemar-exact"``, ``"mcnemar-chi2"`` or ``"mcnemar-midp"``.
    statistic : float
        ``(b − c)²/(b + c)`` for the score test, ``min(b, c)`` for the exact/mid-p tests,
        the corrected χ² for ``chi2``.
    p_value : float
        Two-sided p-value of ``test``.
    p_value_midp : float
        The mid-p value, for reference, whatever ``test`` is.
    """

    table: tuple[int, int, int, int]
    test: str
    statistic: float
    p_value: float
    p_value_midp: float

    @property
    def discordant(self) -> int:
        return self.table[1] + self.table[2]


def contingency(correct_a: np.ndarray, correct_b: np.ndarray) -> tuple[int, int, int, int]:
    """The paired 2×2 table ``(both correct, only A correct, only B correct, both wrong)``.

    Examples
    --------
    >>> contingency(np.array([1, 1, 0, 0], bool), np.array([1, 0, 1, 0], bool))
    (1, 1, 1, 1)
    """
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired correctness vectors must be 1-D and equal in length, got {a.shape} and {b.shape}")
    return (
        int(np.count_nonzero(a & b)),
        int(np.count_nonzero(a & ~b)),
        int(np.count_nonzero(~a & b)),
        int(np.count_nonzero(~a & ~b)),
    )


def _exact(b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    k, n = np.minimum(b, c), b + c
    # two-sided binomial test at p = 1/2: twice the smaller tail, capped at 1
    return k.astype(np.float64), np.minimum(1.0, 2.0 * stats.binom.cdf(k, n, 0.5))


def _midp(b: np.ndarray, c: np.ndarray) -> np.ndarray:
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    k, n = np.minimum(b, c), b + c
    midp = np.minimum(1.0, 2.0 * (stats.binom.cdf(k, n, 0.5) - 0.5 * stats.binom.pmf(k, n, 0.5)))
    return np.where(b == c, 1.0, midp)  # exactly 1 by symmetry; the sum above rounds to 1 − ε


def _chi2(b: np.ndarray, c: np.ndarray, correction: int = 1) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    n = b + c
    statistic = np.zeros(np.shape(n))
    np.divide(np.maximum(np.abs(b - c) - correction, 0).astype(np.float64) ** 2, n, out=statistic, where=n > 0)
    return statistic, np.array(stats.chi2.sf(statistic, df=1), dtype=np.float64)


def mcnemar_pvalues(
    b: np.ndarray, c: np.ndarray, method: Method = "score"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised McNemar over many tables (what :func:`mcnemar_test` and the simulations use).

    Parameters
    ----------
    b, c : array_like of int
        Discordant counts: A right & B wrong, A wrong & B right.
    method : {"score", "auto", "exact", "chi2", "midp"}
        ``score`` (headtohead's rule): ``(b − c)²/(b + c)`` on χ²₁. ``auto``: exact when
        ``b + c <`` :data:`EXACT_BELOW`, χ² with continuity correction otherwise.

    Returns
    -------
    statistic, p_value : ndarray of float
    exact_used : ndarray of bool
        Whether the binomial (exact or mid-p) form was used for each table.

    Examples
    --------
    >>> stat, p, exact = mcnemar_pvalues(np.array([10, 0]), np.array([2, 0]))
    >>> np.round(p, 4).tolist(), exact.tolist()
    ([0.0209, 1.0], [False, False])
    >>> np.round(mcnemar_pvalues(np.array([10]), np.array([2]), "exact")[1], 4).tolist()
    [0.0386]
    """
    b = np.asarray(b, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if np.any(b < 0) or np.any(c < 0):
        raise ValueError("discordant counts must be non-negative")
    if method == "midp":
        return np.minimum(b, c).astype(np.float64), _midp(b, c), np.ones(b.shape, dtype=bool)
    if method == "score":
        statistic, p = _chi2(b, c, correction=0)
        return statistic, p, np.zeros(b.shape, dtype=bool)
    if method == "exact":
        use_exact = np.ones(b.shape, dtype=bool)
    elif method == "chi2":
        use_exact = np.zeros(b.shape, dtype=bool)
    elif method == "auto":
        use_exact = (b + c) < EXACT_BELOW
    else:
        raise ValueError(f"method must be 'score', 'auto', 'exact', 'chi2' or 'midp', not {method!r}")
    statistic, p = _chi2(b, c)
    if np.any(use_exact):  # the binomial tail only where it is used (power sums call this on huge counts)
        statistic[use_exact], p[use_exact] = _exact(b[use_exact], c[use_exact])
    return statistic, p, use_exact


def mcnemar_test(correct_a: np.ndarray, correct_b: np.ndarray, method: Method = "score") -> McNemarResult:
    """McNemar's test of "A and B are equally accurate" on the same examples.

    Parameters
    ----------
    correct_a, correct_b : ndarray of bool, shape (n,)
        Whether each model got each example right, in the same example order.
    method : {"score", "auto", "exact", "chi2", "midp"}
        See the module docstring.

    Returns
    -------
    McNemarResult

    Examples
    --------
    >>> a = np.array([True] * 90 + [False] * 10)
    >>> b = np.array([True] * 80 + [False] * 20)
    >>> r = mcnemar_test(a, b)
    >>> r.table, r.test, round(r.p_value, 4)
    ((80, 10, 0, 10), 'mcnemar-score', 0.0016)
    """
    table = contingency(correct_a, correct_b)
    statistic, p, exact = mcnemar_pvalues(np.array(table[1]), np.array(table[2]), method)
    name = {"midp": "mcnemar-midp", "score": "mcnemar-score"}.get(
        method, "mcnemar-exact" if bool(exact) else "mcnemar-chi2"
    )
    midp = float(_midp(np.array(table[1]), np.array(table[2])))
    return McNemarResult(table, name, float(statistic), float(p), midp)
