"""An anytime-valid confidence sequence for a speed ratio, and the rule that stops the rounds on it.

The speed engine times interleaved rounds until every ratio it reports is known (see
``docs/statistics.md`` §3, "Speed measured until it is decided"). Stopping when the data say so
breaks a fixed-sample interval: a t interval looked at after every round and stopped the first
time it is narrow enough, or excludes 1, misses far more often than its level says. A
*confidence sequence* holds at every round at once — ``P(∃ n: μ ∉ CS_n) ≤ α`` — so it covers
at whatever round the run stopped, for whatever reason.

The one used here is the scale-invariant normal mixture of Lai (1976), as Wang and Ramdas
(2023, "Anytime-valid t-tests and confidence sequences for Gaussian means with unknown
variance") write it: the per-round log ratios ``x_i`` are taken as independent normal with an
unknown mean ``μ`` (the log of the true ratio) and an unknown spread ``σ``. Against ``μ = μ0``,
with ``y_i = x_i − μ0``, ``S = Σ y_i``, ``Q = Σ y_i²``, a normal mixture ``N(0, τ²)`` over the
standardised effect ``(μ − μ0)/σ`` and the right-Haar mixture over ``σ`` give the likelihood ratio
of the scale-invariant data

    M_n(μ0) = (1 + nτ²)^(−1/2) · (1 − τ² S² / ((1 + nτ²) Q))^(−n/2),

a non-negative martingale with mean 1 at the true ``μ0`` (Howard et al. 2021's normal mixture,
made free of ``σ``). By Ville's inequality ``{μ0 : M_n(μ0) < 1/α}`` is a ``1 − α`` confidence
sequence; it is the interval ``x̄ ± h_n`` with

    K = ((1 + nτ²)^(1/2) / α)^(2/n),   B = (1 + nτ²)(1 − 1/K) / τ²,   h_n = (B · SS / (n (n − B)))^(1/2)

(``SS = Σ (x_i − x̄)²``; unbounded while ``B ≥ n``, i.e. ``(n − 1) log(1 + nτ²) ≤ 2 log(1/α)``).
``τ² = 1`` keeps ``h_n`` within 1.6–1.8 times the fixed-sample t interval's half-width from 8
rounds to 100: the price of stopping on the data. ``1 / M_n(0)`` is the matching anytime-valid
p-value of "no difference" (``≤ α`` exactly when the sequence excludes a ratio of 1); Holm over a
run's comparisons reads it like any other p-value.

The stopping rule (:func:`settlement`): a ratio is settled when the decision the verdict reports
is made — its sequence at ``1 − α/m`` (:func:`margin_confidence`; ``m`` the run's speed
comparisons, the family Holm adjusts over) excludes a ratio of 1 (one model faster: the verdict's
"faster", and the speed half of "A dominates B"), or, with ``speed.margin``, lies wholly beyond
``1 ± margin`` (one model faster by more than the margin) or wholly within it (the two within the
margin) — or when its interval — the one the report shows, at ``confidence`` — is within
``±precision`` (``speed.precision``). Known to the precision is a width, no claim, so it reads the
interval shown; a decision is a claim, so it reads the level Holm's first step needs: its anytime
p-value is then ≤ α/m, so Holm's adjusted p is ≤ α and the verdict names the faster model of
every ratio the rule decided faster or beyond the margin — the stop and the verdict are one
decision (since issue 42 the "faster" decision stops the rounds too: a ratio of 1.06× decided
faster needs no ±5 % on top of it). How the sequence behaves where the
rounds are not exactly normal (spikes, drift, a machine that wanders) is counted by simulation
through these functions: ``benchmarks/audit/speed_stopping.py``, ``docs/audit.md``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "MIXTURE_TAU2",
    "OPEN",
    "PRECISION",
    "BEYOND_MARGIN",
    "WITHIN_MARGIN",
    "FASTER",
    "SETTLED_NAMES",
    "confidence_sequence",
    "first_bounded_round",
    "margin_confidence",
    "relative_halfwidth",
    "settled",
    "settlement",
]

#: τ² of the normal mixture over the standardised effect: the sequence is tightest from ~8 to ~100 rounds.
MIXTURE_TAU2 = 1.0

#: How :func:`settlement` finds a ratio: not settled yet, known to the precision, decided beyond the
#: margin (one model faster by more than it), decided within it (the two within it), decided faster
#: (one model faster: the sequence at 1 − α/m excludes 1).
OPEN, PRECISION, BEYOND_MARGIN, WITHIN_MARGIN, FASTER = 0, 1, 2, 3, 4
#: The names a record keeps (``SpeedComparison.settled``), by code; ``OPEN`` is ``None``.
SETTLED_NAMES = {
    PRECISION: "precision",
    BEYOND_MARGIN: "beyond_margin",
    WITHIN_MARGIN: "within_margin",
    FASTER: "faster",
}


def confidence_sequence(
    log_ratios: np.ndarray, confidence: float = 0.95, tau2: float = MIXTURE_TAU2
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The anytime-valid interval and p-value of the mean per-round log ratio, for one benchmark or many.

    Parameters
    ----------
    log_ratios : ndarray of shape (..., n_rounds)
        ``log(time_a / time_b)`` per round; the last axis holds the rounds.
    confidence : float
        ``1 − α``: the sequence covers the true mean at every round at once with this probability.
    tau2 : float
        The mixture's τ² (see the module docstring).

    Returns
    -------
    centre, half, p_value : ndarray of shape (...)
        The mean log ratio, the half-width of the sequence at this round (the interval is
        ``centre ± half`` on the log scale; ``inf`` while too few rounds bound it) and the
        anytime-valid p-value ``min(1, 1 / M_n(0))`` of a mean of 0. They agree: ``p_value ≤ 1 −
        confidence`` exactly when ``|centre| ≥ half``. Rounds that are all equal give ``half = 0``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> centre, half, p = confidence_sequence(rng.normal(0.3, 0.05, 20))
    >>> bool(abs(centre - 0.3) < half), bool(p < 0.05)
    (True, True)
    >>> float(confidence_sequence(np.array([0.1, -0.1, 0.2]))[1])  # three rounds bound nothing at 95 %
    inf
    """
    x = np.asarray(log_ratios, dtype=np.float64)
    n = x.shape[-1]
    if n < 1:
        raise ValueError("a confidence sequence needs at least one round")
    alpha = 1.0 - confidence
    centre = x.mean(axis=-1)
    ss = np.sum((x - centre[..., None]) ** 2, axis=-1)
    grow = 1.0 + n * tau2
    log_k = (math.log(grow) / 2 - math.log(alpha)) * 2 / n
    b = grow * -math.expm1(-log_k) / tau2
    with np.errstate(divide="ignore", invalid="ignore"):
        half = np.sqrt(b * ss / (n * (n - b))) if b < n else np.full(centre.shape, np.inf)
        q = ss + n * centre**2
        share = np.where(q > 0, tau2 * (n * centre) ** 2 / (grow * np.where(q > 0, q, 1.0)), 0.0)
        log_m = -0.5 * math.log(grow) - 0.5 * n * np.log1p(-np.minimum(share, tau2 * n / grow))
    p = np.minimum(1.0, np.exp(-log_m))
    return centre, np.asarray(half, dtype=np.float64), p


def first_bounded_round(confidence: float = 0.95, tau2: float = MIXTURE_TAU2) -> int:
    """The first round at which the sequence is a bounded interval: ``(n − 1) log(1 + nτ²) > 2 log(1/α)``.

    Examples
    --------
    >>> first_bounded_round(0.95), first_bounded_round(0.99)
    (5, 6)
    """
    n = 2
    while (n - 1) * math.log1p(n * tau2) <= -2 * math.log(1.0 - confidence):
        n += 1
    return n


def relative_halfwidth(half: np.ndarray | float) -> np.ndarray | float:
    """A log-scale half-width as a share of the ratio (``0.05``: ±5 %; the wider side, ``exp(h) − 1``)."""
    return np.expm1(half)


def settled(
    centre: np.ndarray | float, half: np.ndarray | float, precision: float | None, margin: float | None = None
) -> np.ndarray | bool:
    """Whether a ratio needs no more rounds: known to ``±precision``, or decided against ``margin``.

    Parameters
    ----------
    centre, half : ndarray or float
        The sequence's centre and half-width on the log scale (:func:`confidence_sequence`).
    precision : float or None
        ``speed.precision``: the interval within ``±precision`` (``0.05``: ±5 %) settles it.
    margin : float or None
        ``speed.margin``: the interval wholly beyond ``1 ± margin`` (one model faster by more than
        it) or wholly within (the two within it) also settles it.

    Returns
    -------
    ndarray of bool, or bool

    Examples
    --------
    >>> bool(settled(0.0, 0.04, precision=0.05)), bool(settled(0.0, 0.06, precision=0.05))
    (True, False)
    >>> bool(settled(0.7, 0.3, precision=0.05, margin=0.1))  # 1.5–2.7× faster: more than 10 % either way
    True
    """
    c, h = np.asarray(centre, dtype=np.float64), np.asarray(half, dtype=np.float64)
    done = np.zeros(np.broadcast(c, h).shape, dtype=bool)
    if precision is not None:
        done |= np.expm1(h) <= precision
    if margin is not None:
        bound = math.log1p(margin)
        low, high = c - h, c + h
        done |= (low > bound) | (high < -bound) | ((low >= -bound) & (high <= bound))
    return done if done.ndim else bool(done)


def margin_confidence(confidence: float, tests: int) -> float:
    """The level a decision (faster, margin) is read at: ``1 − α/tests`` (Bonferroni over the run's speed comparisons).

    Examples
    --------
    >>> margin_confidence(0.95, 1), round(margin_confidence(0.95, 2), 6), round(margin_confidence(0.95, 20), 6)
    (0.95, 0.975, 0.9975)
    """
    return 1.0 - (1.0 - confidence) / max(1, int(tests))


def settlement(
    log_ratios: np.ndarray,
    confidence: float,
    precision: float | None,
    margin: float | None = None,
    tests: int = 1,
    *,
    faster: bool = True,
) -> np.ndarray:
    """How the stopping rule finds each ratio after these rounds: the one rule of the engine and the audit.

    Parameters
    ----------
    log_ratios : ndarray of shape (..., n_rounds)
        Each benchmark's per-round log ratios so far.
    confidence : float
        The level of the interval shown (``speed.confidence``).
    precision : float or None
        ``speed.precision``: the interval shown within ``±precision`` settles a ratio (:data:`PRECISION`).
    margin : float or None
        ``speed.margin``: the sequence at :func:`margin_confidence` wholly beyond ``1 ± margin``
        (:data:`BEYOND_MARGIN`) or wholly within it (:data:`WITHIN_MARGIN`) settles it too.
    tests : int
        The run's speed comparisons, the family Holm adjusts over: α is split over them for the
        decisions (faster, margin), so each one the rule makes is one the verdict makes.
    faster : bool
        A ratio decided faster (:data:`FASTER`: the sequence at ``1 − α/tests`` excludes 1)
        settles it; ``False`` is the rule of before issue 42, which went on to the precision.

    Returns
    -------
    ndarray of int, shape (...)
        :data:`OPEN`, :data:`PRECISION`, :data:`BEYOND_MARGIN`, :data:`WITHIN_MARGIN` or
        :data:`FASTER` (the precision first: a ratio known to it is reported as known; then the
        margin's decisions, which say more than "faster").

    Examples
    --------
    >>> x = np.log([2.0, 2.2, 1.9, 2.1, 2.0, 1.8, 2.2, 2.0])  # about 2× every round
    >>> int(settlement(x, 0.95, precision=0.01)), int(settlement(x, 0.95, precision=0.01, margin=0.1, tests=2))
    (4, 2)
    >>> int(settlement(x, 0.95, precision=0.01, faster=False))  # before issue 42: on to ±1 %
    0
    """
    x = np.asarray(log_ratios, dtype=np.float64)
    centre, half, _ = confidence_sequence(x, confidence)
    code = np.full(centre.shape, OPEN, dtype=np.int64)
    if faster or margin is not None:
        c, h, _ = confidence_sequence(x, margin_confidence(confidence, tests))
    if faster:
        code = np.where((c - h > 0.0) | (c + h < 0.0), FASTER, code)
    if margin is not None:
        bound = math.log1p(margin)
        code = np.where((c - h > bound) | (c + h < -bound), BEYOND_MARGIN, code)
        code = np.where((c - h >= -bound) & (c + h <= bound), WITHIN_MARGIN, code)
    if precision is not None:
        code = np.where(np.expm1(half) <= precision, PRECISION, code)
    return code
