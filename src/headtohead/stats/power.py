"""Power and sample size for McNemar's test: how many examples a comparison needs.

Notation: A is the better model, B the baseline with accuracy ``p_b``; ``delta`` is the
accuracy gap ``p_a − p_b`` and ``discordance`` ψ the share of examples exactly one of the
two models gets right (``ψ = p10 + p01``, ``delta = p10 − p01``).

Formula (Connor 1987, "Sample size for testing differences in proportions for the
paired-sample design", *Biometrics* 43:207–211), for a two-sided test at level α::

    n = ( z_{1−α/2} · √ψ  +  z_{power} · √(ψ − δ²) )²  /  δ²

and, inverted, the power at a given ``n``::

    power ≈ Φ( (√n · |δ| − z_{1−α/2} · √ψ) / √(ψ − δ²) )

The discordance matters as much as the gap: two models that err on the same examples
(low ψ) need far fewer examples. When it is unknown, :func:`default_discordance` assumes
the two models' errors are **independent**, ``ψ = p_a(1 − p_b) + p_b(1 − p_a)``; real
models of one task err together more often than that, so this is the cautious side (it
overestimates ``n``). The formula is for the large-sample test; :func:`simulated_power`
checks it against the test headtohead actually runs (the tests keep them within 0.05).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

from headtohead.errors import ConfigError

__all__ = ["default_discordance", "mcnemar_sample_size", "mcnemar_power", "minimum_detectable_effect",
           "simulated_power"]


def _check_fraction(name: str, value: float, example: str) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0.0 < value < 1.0):
        raise ConfigError(f"{name}={value} is not a fraction between 0 and 1 (exclusive); give e.g. {name}={example}")


def _check_common(delta: float, power: float, alpha: float) -> None:
    if not (isinstance(delta, (int, float)) and math.isfinite(delta) and 0.0 < delta < 1.0):
        raise ConfigError(f"delta={delta} must be a positive accuracy gap below 1, as a fraction "
                          f"(0.005 for half a percentage point)")
    _check_fraction("power", power, "0.8")
    _check_fraction("alpha", alpha, "0.05")


def default_discordance(accuracy: float, delta: float) -> float:
    """Discordance assumed when none is given: the models' errors independent.

    Parameters
    ----------
    accuracy : float
        Baseline accuracy ``p_b``; the other model has ``p_b + delta``.
    delta : float

    Returns
    -------
    float
        ``p_a(1 − p_b) + p_b(1 − p_a)``.

    Examples
    --------
    >>> round(default_discordance(0.90, 0.005), 4)
    0.176
    """
    _check_fraction("accuracy", accuracy, "0.90")
    p_a, p_b = accuracy + delta, accuracy
    return p_a * (1.0 - p_b) + p_b * (1.0 - p_a)


def _check_discordance(discordance: float, delta: float, accuracy: float | None) -> None:
    if not (isinstance(discordance, (int, float)) and math.isfinite(discordance) and 0.0 < discordance <= 1.0):
        raise ConfigError(f"discordance={discordance} must be the share of examples exactly one model gets right, "
                          f"a fraction in (0, 1], e.g. 0.06")
    if discordance < delta:
        raise ConfigError(f"discordance={discordance} is smaller than delta={delta}: a gap of delta needs the models "
                          f"to disagree on at least that share of examples; raise discordance or lower delta")
    if accuracy is not None:
        p_a, p_b = accuracy + delta, accuracy
        # p10 = (ψ + δ)/2 ≤ min(p_a, 1 − p_b) and p01 = (ψ − δ)/2 ≤ min(1 − p_a, p_b)
        largest = min(2 * min(p_a, 1 - p_b) - delta, 2 * min(1 - p_a, p_b) + delta)
        if discordance > largest + 1e-12:
            raise ConfigError(f"discordance={discordance} is impossible with accuracies {p_b:g} and {p_a:g} "
                              f"(at most {largest:.4g}); lower discordance")


def mcnemar_sample_size(accuracy: float | None, delta: float, discordance: float | None = None,
                        power: float = 0.8, alpha: float = 0.05) -> int:
    """Examples needed for McNemar's test to detect an accuracy gap (Connor 1987).

    Parameters
    ----------
    accuracy : float or None
        Baseline accuracy; the other model is ``accuracy + delta``. May be ``None`` only
        when ``discordance`` is given.
    delta : float
        The accuracy gap to detect, as a fraction (0.005 = 0.5 pp).
    discordance : float, optional
        Expected share of examples exactly one model gets right. Default:
        :func:`default_discordance` (independent errors; conservative).
    power : float
        Probability of detecting the gap when it is real.
    alpha : float
        Two-sided significance level.

    Returns
    -------
    int
        Number of evaluation examples (rounded up).

    Raises
    ------
    ConfigError
        An input is out of range or the combination is impossible.

    Examples
    --------
    >>> mcnemar_sample_size(0.90, 0.005, discordance=0.06)
    18835
    """
    _check_common(delta, power, alpha)
    if accuracy is None and discordance is None:
        raise ConfigError("give the baseline accuracy or the expected discordance (or both)")
    if accuracy is not None:
        _check_fraction("accuracy", accuracy, "0.90")
        if accuracy + delta > 1.0:
            raise ConfigError(f"accuracy={accuracy} plus delta={delta} exceeds 1; lower delta")
    psi = default_discordance(accuracy, delta) if discordance is None else discordance
    _check_discordance(psi, delta, accuracy)
    z_a, z_b = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    n = (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - delta**2)) ** 2 / delta**2
    return int(math.ceil(n - 1e-9))


def mcnemar_power(n: int, delta: float, discordance: float, alpha: float = 0.05) -> float:
    """Approximate power of McNemar's test with ``n`` examples (Connor 1987).

    Examples
    --------
    >>> round(mcnemar_power(18835, 0.005, 0.06), 3)
    0.8
    """
    if n <= 0 or discordance <= 0 or abs(delta) > discordance:
        raise ValueError(f"need n > 0 and 0 < |delta| <= discordance, got n={n}, delta={delta}, "
                         f"discordance={discordance}")
    z_a = stats.norm.ppf(1 - alpha / 2)
    spread = math.sqrt(max(discordance - delta**2, 1e-300))
    return float(stats.norm.cdf((math.sqrt(n) * abs(delta) - z_a * math.sqrt(discordance)) / spread))


def minimum_detectable_effect(n: int, discordance: float, power: float = 0.8, alpha: float = 0.05) -> float | None:
    """Smallest accuracy gap McNemar's test detects with probability ``power`` at ``n`` examples.

    A gap ``δ`` forces the models to disagree on at least a share ``δ`` of the examples, so
    the discordance used at ``δ`` is ``max(discordance, δ)``. Two models that agree on
    every example (observed discordance 0) thus still get a finite answer.

    Parameters
    ----------
    n : int
        Evaluation examples.
    discordance : float
        Share of examples exactly one model gets right (observed or expected), in [0, 1].
    power, alpha : float

    Returns
    -------
    float or None
        The gap as a fraction (0.024 = 2.4 pp); ``None`` when even a total gap is not
        detectable (a handful of examples).

    Examples
    --------
    >>> round(minimum_detectable_effect(872, 0.08), 4)
    0.0268
    """
    if not 0.0 <= discordance <= 1.0:
        raise ValueError(f"discordance must lie in [0, 1], not {discordance}")
    if n < 1:
        return None

    def shortfall(delta: float) -> float:
        return mcnemar_power(n, delta, max(discordance, delta), alpha) - power

    high = 1.0 - 1e-9
    if shortfall(high) < 0:
        return None
    return float(optimize.brentq(shortfall, 1e-12, high, xtol=1e-12))


def simulated_power(n: int, delta: float, discordance: float, *, alpha: float = 0.05, n_sims: int = 4000,
                    seed: int = 0, method: str = "auto") -> float:
    """Monte-Carlo power of the McNemar test headtohead runs (:func:`~headtohead.stats.mcnemar.mcnemar_pvalues`).

    Draws ``n_sims`` paired tables of ``n`` examples with ``p10 = (ψ + δ)/2`` and
    ``p01 = (ψ − δ)/2`` and returns the share with p ≤ ``alpha``.
    """
    from headtohead.stats.mcnemar import mcnemar_pvalues

    p10, p01 = (discordance + delta) / 2.0, (discordance - delta) / 2.0
    counts = np.random.default_rng(seed).multinomial(n, [p10, p01, 1.0 - p10 - p01], size=n_sims)
    _, p, _ = mcnemar_pvalues(counts[:, 0], counts[:, 1], method)  # type: ignore[arg-type]
    return float(np.mean(p <= alpha))
