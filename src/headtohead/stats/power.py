"""Power and sample size of the McNemar rule headtohead runs, computed exactly.

A is the better model, B the baseline with accuracy ``p_b``; ``delta`` is the accuracy gap
``p_a − p_b`` and ``discordance`` ψ the share of examples exactly one of the two gets right.
Power is summed exactly over the discordant counts (:mod:`headtohead.stats.exact_power`), at
Holm's first step α/m for several models; the sample size is the smallest ``n`` from which
power stays at or above the target (power saw-tooths in ``n``). How and why:
``docs/statistics.md``, section 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from headtohead.errors import ConfigError
from headtohead.stats.exact_power import exact_power, smallest_sustained_n
from headtohead.stats.mcnemar import mcnemar_pvalues

__all__ = [
    "SamplePlan",
    "plan_sample_size",
    "default_discordance",
    "holm_first_step_alpha",
    "mcnemar_power",
    "mcnemar_sample_size",
    "minimum_detectable_effect",
    "normal_approx_power",
    "normal_approx_sample_size",
    "simulated_power",
]


def _check_fraction(name: str, value: float, example: str) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0.0 < value < 1.0):
        raise ConfigError(f"{name}={value} is not a fraction between 0 and 1 (exclusive); give e.g. {name}={example}")


def _check_common(delta: float, power: float, alpha: float) -> None:
    if not (isinstance(delta, (int, float)) and math.isfinite(delta) and 0.0 < delta < 1.0):
        raise ConfigError(
            f"delta={delta} must be a positive accuracy gap below 1, as a fraction (0.005 for half a percentage point)"
        )
    _check_fraction("power", power, "0.8")
    _check_fraction("alpha", alpha, "0.05")


def holm_first_step_alpha(alpha: float, n_comparisons: int = 1) -> float:
    """The level of Holm's first step, ``alpha / m``, used for power with ``m`` pairs.

    Examples
    --------
    >>> round(holm_first_step_alpha(0.05, 3), 4)
    0.0167
    """
    if not isinstance(n_comparisons, int) or n_comparisons < 1:
        raise ConfigError(f"n_comparisons={n_comparisons} must be a whole number of model pairs, at least 1")
    return alpha / n_comparisons


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
        raise ConfigError(
            f"discordance={discordance} must be the share of examples exactly one model gets right, "
            f"a fraction in (0, 1], e.g. 0.06"
        )
    if discordance < delta:
        raise ConfigError(
            f"discordance={discordance} is smaller than delta={delta}: a gap of delta needs the models "
            f"to disagree on at least that share of examples; raise discordance or lower delta"
        )
    if accuracy is not None:
        p_a, p_b = accuracy + delta, accuracy
        # p10 = (ψ + δ)/2 ≤ min(p_a, 1 − p_b) and p01 = (ψ − δ)/2 ≤ min(1 − p_a, p_b)
        largest = min(2 * min(p_a, 1 - p_b) - delta, 2 * min(1 - p_a, p_b) + delta)
        if discordance > largest + 1e-12:
            raise ConfigError(
                f"discordance={discordance} is impossible with accuracies {p_b:g} and {p_a:g} "
                f"(at most {largest:.4g}); lower discordance"
            )


def _resolve_discordance(accuracy: float | None, delta: float, discordance: float | None) -> float:
    if accuracy is None and discordance is None:
        raise ConfigError("give the baseline accuracy or the expected discordance (or both)")
    if accuracy is not None:
        _check_fraction("accuracy", accuracy, "0.90")
        if accuracy + delta > 1.0:
            raise ConfigError(f"accuracy={accuracy} plus delta={delta} exceeds 1; lower delta")
    psi = default_discordance(accuracy, delta) if discordance is None else discordance  # type: ignore[arg-type]
    _check_discordance(psi, delta, accuracy)
    return psi


def mcnemar_power(n: int, delta: float, discordance: float, alpha: float = 0.05, *, n_comparisons: int = 1) -> float:
    """Exact power of headtohead's McNemar rule: the chance it finds A significantly better.

    Parameters
    ----------
    n : int
        Evaluation examples.
    delta : float
        True accuracy gap ``p_a − p_b`` (> 0).
    discordance : float
        True share of examples exactly one model gets right (``≥ delta``).
    alpha : float
        Family-wise significance level.
    n_comparisons : int
        Model pairs tested together (``k(k−1)/2``); the test is taken at Holm's first step
        ``alpha / n_comparisons`` (a lower bound on the power under Holm).

    Returns
    -------
    float
        ``P(p ≤ α/m and b > c)``, computed exactly (see the module docstring).

    Examples
    --------
    >>> round(mcnemar_power(291, 0.05, 0.10), 3), round(mcnemar_power(312, 0.05, 0.10), 3)
    (0.801, 0.826)
    """
    if n <= 0 or not 0.0 < discordance <= 1.0 or not 0.0 < delta <= discordance:
        raise ValueError(
            f"need n > 0 and 0 < delta <= discordance <= 1, got n={n}, delta={delta}, discordance={discordance}"
        )
    return exact_power(int(n), float(delta), float(discordance), holm_first_step_alpha(alpha, n_comparisons))


def mcnemar_sample_size(
    accuracy: float | None,
    delta: float,
    discordance: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    *,
    n_comparisons: int = 1,
) -> int:
    """Examples the McNemar rule headtohead runs needs to find a gap with the given power.

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
        Probability of finding the better model significantly better.
    alpha : float
        Family-wise two-sided significance level.
    n_comparisons : int
        Model pairs tested together; power at Holm's first step ``alpha / n_comparisons``.

    Returns
    -------
    int
        The smallest ``n`` from which the exact power stays ≥ ``power`` (module docstring).

    Raises
    ------
    ConfigError
        An input is out of range or the combination is impossible.

    Examples
    --------
    >>> mcnemar_sample_size(0.90, 0.05, discordance=0.10)
    291
    """
    _check_common(delta, power, alpha)
    psi = _resolve_discordance(accuracy, delta, discordance)
    level = holm_first_step_alpha(alpha, n_comparisons)
    start = normal_approx_sample_size(None, delta, psi, power=power, alpha=level) if psi < 1.0 else 2
    return smallest_sustained_n(delta, psi, power, level, start)


@dataclass(frozen=True)
class SamplePlan:
    """The answer of ``h2h plan``.

    Attributes
    ----------
    n : int
        Examples needed (:func:`mcnemar_sample_size`).
    power : float
        Exact power of the McNemar rule at ``n`` (≥ the target).
    target_power : float
    alpha : float
        Family-wise level asked for.
    test_alpha : float
        Level the power is computed at: Holm's first step ``alpha / n_comparisons``.
    n_comparisons : int
    discordance : float
        Discordance used (given, or :func:`default_discordance`).
    discordance_assumed : bool
        Whether ``discordance`` was assumed (independent errors) rather than given.
    normal_approx_n : int
        The large-sample formula's answer, for reference (it understates ``n``).
    """

    n: int
    power: float
    target_power: float
    alpha: float
    test_alpha: float
    n_comparisons: int
    discordance: float
    discordance_assumed: bool
    normal_approx_n: int


def plan_sample_size(
    accuracy: float,
    delta: float,
    discordance: float | None = None,
    power: float = 0.8,
    alpha: float = 0.05,
    n_models: int = 2,
) -> SamplePlan:
    """Everything ``h2h plan`` reports: the examples needed and the power they give.

    Parameters
    ----------
    accuracy, delta, discordance, power, alpha
        As for :func:`mcnemar_sample_size`.
    n_models : int
        Models compared in one run; ``k(k−1)/2`` pairs share ``alpha`` through Holm.

    Returns
    -------
    SamplePlan

    Examples
    --------
    >>> p = plan_sample_size(0.90, 0.05, 0.10)
    >>> p.n, round(p.power, 3), p.normal_approx_n
    (291, 0.801, 312)
    """
    if not isinstance(n_models, int) or n_models < 2:
        raise ConfigError(
            f"n_models={n_models} (h2h plan --models) must be a whole number of models compared, at least 2"
        )
    pairs = n_models * (n_models - 1) // 2
    n = mcnemar_sample_size(accuracy, delta, discordance, power=power, alpha=alpha, n_comparisons=pairs)
    psi = _resolve_discordance(accuracy, delta, discordance)
    level = holm_first_step_alpha(alpha, pairs)
    return SamplePlan(
        n=n,
        power=exact_power(n, delta, psi, level),
        target_power=power,
        alpha=alpha,
        test_alpha=level,
        n_comparisons=pairs,
        discordance=psi,
        discordance_assumed=discordance is None,
        normal_approx_n=normal_approx_sample_size(None, delta, psi, power=power, alpha=level),
    )


def minimum_detectable_effect(
    n: int, discordance: float, power: float = 0.8, alpha: float = 0.05, *, n_comparisons: int = 1
) -> float | None:
    """The accuracy gap the McNemar rule finds with probability ``power`` at ``n`` examples.

    Smaller gaps can still be found, less often; this is the gap found in ``power`` of runs
    (the sentence says exactly that, not "cannot show a gap below").

    Exact power (:func:`mcnemar_power`) at Holm's first step ``alpha / n_comparisons``. A
    gap ``δ`` forces the models to disagree on at least a share ``δ`` of the examples, so
    the discordance used at ``δ`` is ``max(discordance, δ)``; two models that agree on
    every example (observed discordance 0) thus still get a finite answer.

    Parameters
    ----------
    n : int
        Evaluation examples.
    discordance : float
        Share of examples exactly one model gets right (observed or expected), in [0, 1].
    power, alpha : float
    n_comparisons : int
        Model pairs tested together in the run.

    Returns
    -------
    float or None
        The gap as a fraction (0.028 = 2.8 pp); ``None`` when even a total gap is not
        detectable (a handful of examples).

    Examples
    --------
    >>> round(minimum_detectable_effect(872, 0.08), 4), round(minimum_detectable_effect(872, 0.08, n_comparisons=3), 4)
    (0.0265, 0.0307)
    """
    from scipy import optimize  # on first use: a run imports this module before it has checked its inputs

    if not 0.0 <= discordance <= 1.0:
        raise ValueError(f"discordance must lie in [0, 1], not {discordance}")
    if n < 1:
        return None
    level = holm_first_step_alpha(alpha, n_comparisons)

    def shortfall(delta: float) -> float:
        return exact_power(int(n), delta, max(discordance, delta), level) - power

    high = 1.0 - 1e-9
    if shortfall(high) < 0:
        return None
    return float(optimize.brentq(shortfall, 1e-9, high, xtol=1e-7))


def normal_approx_sample_size(
    accuracy: float | None, delta: float, discordance: float | None = None, power: float = 0.8, alpha: float = 0.05
) -> int:
    """The large-sample formula (Connor 1987, *Biometrics* 43:207–211), kept for reference.

    ``n = (z_{1−α/2}·√ψ + z_{power}·√(ψ − δ²))² / δ²``. It ignores the discreteness of
    the test run with few discordant pairs (see the module docstring); plans use
    :func:`mcnemar_sample_size`.

    Examples
    --------
    >>> normal_approx_sample_size(0.90, 0.005, discordance=0.06)
    18835
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    _check_common(delta, power, alpha)
    psi = _resolve_discordance(accuracy, delta, discordance)
    z_a, z_b = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    n = (z_a * math.sqrt(psi) + z_b * math.sqrt(max(psi - delta**2, 0.0))) ** 2 / delta**2
    return max(1, int(math.ceil(n - 1e-9)))


def normal_approx_power(n: int, delta: float, discordance: float, alpha: float = 0.05) -> float:
    """Large-sample power (Connor 1987), the inverse of :func:`normal_approx_sample_size`; overstates power.

    Examples
    --------
    >>> round(normal_approx_power(18835, 0.005, 0.06), 3)
    0.8
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    if n <= 0 or discordance <= 0 or abs(delta) > discordance:
        raise ValueError(
            f"need n > 0 and 0 < |delta| <= discordance, got n={n}, delta={delta}, discordance={discordance}"
        )
    z_a = stats.norm.ppf(1 - alpha / 2)
    spread = math.sqrt(max(discordance - delta**2, 1e-300))
    return float(stats.norm.cdf((math.sqrt(n) * abs(delta) - z_a * math.sqrt(discordance)) / spread))


def simulated_power(
    n: int,
    delta: float,
    discordance: float,
    *,
    alpha: float = 0.05,
    n_sims: int = 4000,
    seed: int = 0,
    method: str = "score",
) -> float:
    """Monte-Carlo power of the McNemar test headtohead runs (:func:`~headtohead.stats.mcnemar.mcnemar_pvalues`).

    Draws ``n_sims`` paired tables of ``n`` examples with ``p10 = (ψ + δ)/2`` and
    ``p01 = (ψ − δ)/2`` and returns the share with p ≤ ``alpha`` and ``b > c`` (the better
    model found better), the event :func:`mcnemar_power` computes exactly.
    """
    p10, p01 = (discordance + delta) / 2.0, (discordance - delta) / 2.0
    counts = np.random.default_rng(seed).multinomial(n, [p10, p01, max(0.0, 1.0 - p10 - p01)], size=n_sims)
    _, p, _ = mcnemar_pvalues(counts[:, 0], counts[:, 1], method)  # type: ignore[arg-type]
    return float(np.mean((p <= alpha) & (counts[:, 0] > counts[:, 1])))
