"""The exact power of headtohead's McNemar rule, and the sample-size search over it.

The computation behind :mod:`headtohead.stats.power` (read its module docstring for the
method). Of ``n`` examples ``d ~ Binomial(n, ψ)`` are discordant and ``b | d ~ Binomial(d, q)``
favour the better model; for each ``d`` the rule of
:func:`~headtohead.stats.mcnemar.mcnemar_pvalues` rejects exactly when
``min(b, d − b) ≤ k*(d)``, and power is ``Σ_d P(d) · P(b ≥ d − k*(d) | d)``.
"""

from __future__ import annotations

import math

import numpy as np

from headtohead.errors import ConfigError
from headtohead.stats.mcnemar import mcnemar_pvalues

__all__ = ["critical_counts", "exact_power", "exact_power_curve", "smallest_sustained_n"]

#: Probability mass of ``d`` left out at each tail of the exact sum.
_TAIL = 1e-13
#: Largest sample size searched; beyond it the gap is not worth planning for.
_MAX_N = 10**10


def critical_counts(d: np.ndarray, alpha: float) -> np.ndarray:
    """``k*(d)``: the largest ``min(b, c)`` the McNemar rule rejects at ``alpha`` with ``b + c = d``.

    Parameters
    ----------
    d : ndarray of int
        Numbers of discordant pairs.
    alpha : float
        Level of the two-sided test.

    Returns
    -------
    ndarray of int
        ``−1`` where no split of ``d`` pairs is significant.

    Examples
    --------
    >>> critical_counts(np.array([5, 6, 24, 25, 100]), 0.05).tolist()
    [0, 0, 7, 7, 40]
    """
    # starting guess: the solution of (d − 2k)² / d = χ²₁ critical value (the score rule) ...
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    guess = np.floor((d - np.sqrt(stats.chi2.isf(alpha, 1) * d)) / 2)
    # ... settled by the rule itself, so float rounding at the boundary cannot disagree with it
    best = np.full(d.shape, -1, dtype=np.int64)
    for offset in (-2, -1, 0, 1, 2):
        k = guess.astype(np.int64) + offset
        valid = (k >= 0) & (2 * k < d)
        k_safe = np.where(valid, k, 0)
        _, p, _ = mcnemar_pvalues(k_safe, d - k_safe)
        best = np.where(valid & (p <= alpha) & (k > best), k, best)
    return best


def power_given_discordant(d: np.ndarray, q: float, alpha: float) -> np.ndarray:
    """``P(p ≤ alpha and b > c | d)`` for ``b ~ Binomial(d, q)``, one value per entry of ``d``."""
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    k = critical_counts(d, alpha)
    return np.where(k >= 0, stats.binom.sf(d - k - 1, d, q), 0.0)


def _discordant_range(n: int, psi: float) -> np.ndarray:
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    lo = int(stats.binom.ppf(_TAIL, n, psi))
    hi = int(stats.binom.isf(_TAIL, n, psi)) + 1
    return np.arange(max(lo, 0), min(hi, n) + 1, dtype=np.int64)


def exact_power(n: int, delta: float, psi: float, alpha: float) -> float:
    """Power of the McNemar rule at ``n`` examples: ``Σ_d P(d) · P(reject and b > c | d)``.

    Inputs are not checked (:func:`headtohead.stats.power.mcnemar_power` does); ``delta``
    is the true gap, ``psi`` the true discordance, ``alpha`` the level of the test.
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    if psi >= 1.0:  # every example discordant: d = n, no mixture
        d = np.array([n], dtype=np.int64)
        return float(power_given_discordant(d, (1.0 + delta) / 2.0, alpha)[0])
    d = _discordant_range(n, psi)
    q = min(1.0, (psi + delta) / (2.0 * psi))
    return float(np.sum(stats.binom.pmf(d, n, psi) * power_given_discordant(d, q, alpha)))


def exact_power_curve(first: int, count: int, delta: float, psi: float, alpha: float) -> np.ndarray:
    """Power at ``first, first + 1, …, first + count − 1`` examples, from one table of ``P(reject | d)``."""
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    if psi >= 1.0:
        return power_given_discordant(np.arange(first, first + count, dtype=np.int64), (1.0 + delta) / 2.0, alpha)
    d = np.arange(_discordant_range(first, psi)[0], _discordant_range(first + count - 1, psi)[-1] + 1)
    given_d = power_given_discordant(d, min(1.0, (psi + delta) / (2.0 * psi)), alpha)
    pmf = stats.binom.pmf(d, first, psi)
    curve = np.empty(count)
    for j in range(count):
        curve[j] = pmf @ given_d
        # Binomial(n + 1, ψ) from Binomial(n, ψ): one more example, discordant with probability ψ
        pmf[1:] = psi * pmf[:-1] + (1.0 - psi) * pmf[1:]
        pmf[0] *= 1.0 - psi
    return curve


def _window(n: int, psi: float) -> int:
    """Sizes after ``n`` checked for dips: ⌈n/10⌉ within [25, 1000], fewer (to 25) when the sum is wide.

    A wide sum (thousands of plausible discordant counts) is a smooth power curve; capping
    the work at ~10⁶ terms keeps huge plans (the gate asks for them) to a second or two.
    """
    width = 1 if psi >= 1.0 else len(_discordant_range(n, psi))
    return max(25, min(math.ceil(n / 10), 1000, 1_000_000 // width))


def _first_crossing(delta: float, psi: float, power: float, alpha: float, start: int) -> int:
    """An ``n`` with power ≥ target whose predecessor falls short: gallop from ``start``, then bisect."""

    def reaches(n: int) -> bool:
        return n > 0 and exact_power(n, delta, psi, alpha) >= power

    start = max(int(start), 1)
    step = max(1, start // 512)
    if reaches(start):
        low, high = start, start
        while reaches(low):
            high, low, step = low, max(0, low - step), 2 * step
    else:
        low, high = start, start + step
        while not reaches(high):
            if high > _MAX_N:
                raise ConfigError(
                    f"a gap of delta={delta} needs more than {_MAX_N:,} examples at this "
                    f"discordance; plan for a larger gap"
                )
            step *= 2
            low, high = high, high + step
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def smallest_sustained_n(delta: float, psi: float, power: float, alpha: float, start: int) -> int:
    """From the first crossing on, the smallest ``n`` whose power stays ≥ ``power`` for the next sizes.

    Bisection finds an ``n`` that reaches ``power`` while ``n − 1`` does not (searching
    from ``start``, a guess such as the normal approximation); then every size of the next
    :func:`_window` is checked and, past any dip below ``power``, the search moves on.

    Raises
    ------
    ConfigError
        More than 10¹⁰ examples would be needed.
    """
    n = _first_crossing(delta, psi, power, alpha, start)
    while True:
        count = _window(n, psi) + 1
        short = np.flatnonzero(exact_power_curve(n, count, delta, psi, alpha) < power)
        if short.size == 0:
            return n
        n += int(short[-1]) + 1  # past the last dip; the next window checks again
