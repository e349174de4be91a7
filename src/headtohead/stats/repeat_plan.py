"""``h2h plan --repeats K --run-sd S``: examples × runs needed to see a gap between models run several times.

The comparison over every run (:func:`headtohead.stats.repeat_pool.two_level_gap`) has two parts of
variance: the examples' (the per-example gap of mean correctness, at most ``ψ − δ²`` per example
with discordance ``ψ`` — averaging a model's runs only lowers it) and the runs' (``s²/k`` per model,
``s`` the run-to-run SD of a model's accuracy). The second does not shrink with more examples: a gap
``δ`` is out of reach, at any number of examples, unless ``2s²/k < (δ/(z_{1−α'/2} + z_{power}))²``.
A normal approximation (the test's t reference has Satterthwaite's degrees of freedom: with few runs
it asks for somewhat more); the Holm first step ``α' = α/m`` with ``m`` pairs, as :mod:`.power`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from headtohead.errors import ConfigError
from headtohead.stats.power import _resolve_discordance, holm_first_step_alpha

__all__ = ["RunsPlan", "plan_runs"]


@dataclass(frozen=True)
class RunsPlan:
    """The answer of ``h2h plan`` with ``--repeats``.

    Attributes
    ----------
    n : int or None
        Examples needed at ``repeats`` runs of each model (``None``: no number suffices).
    repeats : int
        Runs of each model planned for.
    min_repeats : int
        The fewest runs of each model with which some number of examples reaches the power.
    run_sd : float
        Run-to-run SD of a model's accuracy (a share).
    target_power, alpha, test_alpha : float
    n_comparisons : int
    discordance : float
    discordance_assumed : bool
    """

    n: int | None
    repeats: int
    min_repeats: int
    run_sd: float
    target_power: float
    alpha: float
    test_alpha: float
    n_comparisons: int
    discordance: float
    discordance_assumed: bool


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
    """Examples needed at ``repeats`` runs of each model, and the fewest runs that can see ``delta`` at all.

    Examples
    --------
    >>> p = plan_runs(0.90, 0.03, 0.10, repeats=5, run_sd=0.01)
    >>> p.n, p.min_repeats
    (1328, 2)
    >>> p = plan_runs(0.90, 0.03, 0.10, repeats=2, run_sd=0.03)
    >>> p.n, p.min_repeats
    (None, 16)
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
    z = float(stats.norm.ppf(1.0 - level / 2.0) + stats.norm.ppf(power))
    allowed = (delta / z) ** 2  # the variance of the gap that gives the power
    runs_part = 2.0 * run_sd**2 / repeats if repeats > 1 else 2.0 * run_sd**2
    room = allowed - runs_part
    n = math.ceil((psi - delta**2) / room) if room > 0 else None
    min_repeats = max(1, math.floor(2.0 * run_sd**2 / allowed) + 1)
    return RunsPlan(
        n=n,
        repeats=repeats,
        min_repeats=min_repeats,
        run_sd=run_sd,
        target_power=power,
        alpha=alpha,
        test_alpha=level,
        n_comparisons=pairs,
        discordance=psi,
        discordance_assumed=discordance is None,
    )
