"""``h2h plan --repeats K --run-sd S``: examples × runs needed to see a gap between models run several times.

The comparison over every run (:func:`headtohead.stats.repeat_pool.two_level_gap`) has two parts of
variance: the examples' (the per-example gap of mean correctness, at most ``ψ − δ²`` per example
with discordance ``ψ`` — averaging a model's runs only lowers it) and the runs' (``s²/k`` per model,
``s`` the run-to-run SD of a model's accuracy). The second does not shrink with more examples: a gap
``δ`` is out of reach, at any number of examples, unless ``2s²/k < (δ/(z_{1−α'/2} + z_{power}))²``.
A normal approximation (the test's t reference has Satterthwaite's degrees of freedom: with few runs
it asks for somewhat more); the Holm first step ``α' = α/m`` with ``m`` pairs, as :mod:`.power`.

**The noise floor.** A gap within the larger of the two models' floors, ``t_{1−α/2, k−1}·√2·ŝ/√k`` from
each model's k runs (how far two means of k runs differ: the gap compared is between means over runs), is
never called better (:mod:`headtohead.stats.repeat_pool`). The plan's power is the chance of both: the gap
found by the test and larger than that floor, ``ŝ`` drawn as the larger of two runs' SDs from
``s·√(χ²_{k−1}/(k−1))``, integrated over its quantiles. The floor shrinks as ``1/√k`` like the runs' part
of the variance, so any gap is within reach with enough runs and examples; ``min_repeats`` is the fewest
runs with which some number of examples reaches the power.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from headtohead.errors import ConfigError
from headtohead.stats.power import _resolve_discordance, holm_first_step_alpha

__all__ = ["RunsPlan", "plan_runs", "MOST_RUNS"]


@dataclass(frozen=True)
class RunsPlan:
    """The answer of ``h2h plan`` with ``--repeats``.

    Attributes
    ----------
    n : int or None
        Examples needed at ``repeats`` runs of each model (``None``: no number suffices).
    repeats : int
        Runs of each model planned for.
    min_repeats : int or None
        The fewest runs of each model with which some number of examples reaches the power (``None``: not
        even :data:`MOST_RUNS` runs do).
    run_sd : float
        Run-to-run SD of a model's accuracy (a share).
    two_runs_differ : float or None
        How far two single runs differ at this SD, ``t_{1−α/2, k−1}·√2·s`` (``None`` with one run).
    floor : float or None
        The noise floor a gap is held against at ``repeats`` runs and this SD, how far two means of ``repeats``
        runs differ: ``two_runs_differ/√k`` (``None`` with one run).
    target_power, alpha, test_alpha : float
    n_comparisons : int
    discordance : float
    discordance_assumed : bool
    """

    n: int | None
    repeats: int
    min_repeats: int | None
    run_sd: float
    two_runs_differ: float | None
    floor: float | None
    target_power: float
    alpha: float
    test_alpha: float
    n_comparisons: int
    discordance: float
    discordance_assumed: bool


#: Quantiles of the larger of two runs' SDs the power integrates over.
_QUANTILES = 200
#: The most runs searched for ``min_repeats``.
MOST_RUNS = 1000
#: The most examples searched.
_MOST_EXAMPLES = 10**9


def _power(n: float, k: int, delta: float, psi: float, s: float, level: float, alpha: float) -> float:
    """The chance that the test over runs finds ``delta`` at level ``level`` and it lies outside the noise floor of
    the means of k runs."""
    from scipy import stats

    examples = (psi - delta**2) / n if math.isfinite(n) else 0.0
    se = math.sqrt(examples + (2.0 * s**2 / k if k > 1 else 2.0 * s**2))
    if se == 0.0:
        return 1.0
    crit = float(stats.norm.ppf(1.0 - level / 2.0)) * se
    if k < 2 or s == 0.0:
        return float(stats.norm.sf((crit - delta) / se))
    # the larger of two models' SDs from k runs each: its quantile p is the SD's quantile √p
    u = np.sqrt((np.arange(_QUANTILES) + 0.5) / _QUANTILES)
    s_hat = s * np.sqrt(stats.chi2.ppf(u, k - 1) / (k - 1))
    floor = float(stats.t.ppf(1.0 - alpha / 2.0, k - 1)) * math.sqrt(2.0 / k) * s_hat
    return float(np.mean(stats.norm.sf((np.maximum(crit, floor) - delta) / se)))


def _examples_needed(
    k: int, delta: float, psi: float, s: float, level: float, alpha: float, power: float
) -> int | None:
    """The fewest examples at ``k`` runs that reach ``power`` (``None``: none does), by bisection on n."""
    if _power(math.inf, k, delta, psi, s, level, alpha) < power:
        return None
    low, high = 1, 2
    while _power(high, k, delta, psi, s, level, alpha) < power:
        low, high = high, high * 2
        if high > _MOST_EXAMPLES:
            return None
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if _power(middle, k, delta, psi, s, level, alpha) < power else (low, middle)
    return high


def plan_runs(
    accuracy: float,
    delta: float,
    discordance: float | None,
    *,
    repeats: int,
    run_sd: float,
    power: float = 0.8,
    alpha: float = 0.05,
    n_models: int = 2,
) -> RunsPlan:
    """Examples needed at ``repeats`` runs of each model, and the fewest runs that can see ``delta`` at all (the
    noise floor of the means shrinks with the runs: ``None`` only past :data:`MOST_RUNS`).

    Examples
    --------
    >>> p = plan_runs(0.90, 0.03, 0.10, repeats=5, run_sd=0.005)
    >>> p.n, p.min_repeats, round(p.two_runs_differ, 4), round(p.floor, 4)
    (947, 3, 0.0196, 0.0088)
    >>> p = plan_runs(0.90, 0.03, 0.10, repeats=2, run_sd=0.03)
    >>> p.n, p.min_repeats
    (None, 20)
    """
    from scipy import stats

    if not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(f"--repeats {repeats}: give the runs of each model, 1 or more")
    if not (math.isfinite(run_sd) and 0.0 <= run_sd < 1.0):
        raise ConfigError(f"--run-sd {run_sd}: give the run-to-run SD of a model's accuracy, e.g. 1.5pp or 0.015")
    if not (0.0 < power < 1.0):
        raise ConfigError(f"--power {power} must lie between 0 and 1, e.g. 0.8")
    if not isinstance(n_models, int) or n_models < 2:
        raise ConfigError(f"--n-models {n_models} must be a whole number of models compared, at least 2")
    psi = _resolve_discordance(accuracy, delta, discordance)
    pairs = n_models * (n_models - 1) // 2
    level = holm_first_step_alpha(alpha, pairs)
    n = _examples_needed(repeats, delta, psi, run_sd, level, alpha, power)
    first = 1 if run_sd == 0.0 else 2  # with run noise, a plan over runs: each model has a floor
    min_repeats = next(
        (k for k in range(first, MOST_RUNS + 1) if _power(math.inf, k, delta, psi, run_sd, level, alpha) >= power),
        None,
    )
    single = float(stats.t.ppf(1.0 - alpha / 2.0, repeats - 1)) * math.sqrt(2.0) * run_sd if repeats > 1 else None
    return RunsPlan(
        n=n,
        repeats=repeats,
        min_repeats=min_repeats,
        run_sd=run_sd,
        two_runs_differ=single,
        floor=single / math.sqrt(repeats) if single is not None else None,
        target_power=power,
        alpha=alpha,
        test_alpha=level,
        n_comparisons=pairs,
        discordance=psi,
        discordance_assumed=discordance is None,
    )
