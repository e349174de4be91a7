"""``h2h plan``: how many evaluation examples does a comparison need?

Registered in :mod:`headtohead.cli.main` with ``app.command("plan")(plan)``. The numbers
come from :mod:`headtohead.stats.power` (Connor 1987); this module only parses and prints.
"""

from __future__ import annotations

from typing import Optional

import typer

from headtohead.stats.power import default_discordance, mcnemar_sample_size

__all__ = ["plan", "plan_sentence"]


def _percent(fraction: float) -> str:
    """``0.9`` → ``90``, ``0.905`` → ``90.5``: as many decimals as the value needs (up to 3)."""
    return f"{100 * fraction:.3f}".rstrip("0").rstrip(".")


def plan_sentence(accuracy: float, delta: float, discordance: Optional[float] = None, power: float = 0.8,
                  alpha: float = 0.05) -> str:
    """The answer of ``h2h plan`` as one sentence.

    Parameters are those of :func:`headtohead.stats.power.mcnemar_sample_size`.

    Raises
    ------
    ConfigError
        An input is out of range (one line naming it).

    Examples
    --------
    >>> plan_sentence(0.90, 0.005, 0.06)  # doctest: +NORMALIZE_WHITESPACE
    'To detect a 0.5 pp accuracy difference at 90 % accuracy with 80 % power (α = 0.05, two-sided McNemar;
     assumed discordance 6 %) you need about 18,835 examples.'
    """
    n = mcnemar_sample_size(accuracy, delta, discordance, power=power, alpha=alpha)
    if discordance is None:
        assumed = (f"assumed discordance {_percent(default_discordance(accuracy, delta))} %, i.e. independent "
                   f"errors — models that err on the same examples need fewer; set --discordance")
    else:
        assumed = f"assumed discordance {_percent(discordance)} %"
    return (f"To detect a {_percent(delta)} pp accuracy difference at {_percent(accuracy)} % accuracy with "
            f"{_percent(power)} % power (α = {alpha:g}, two-sided McNemar; {assumed}) you need about {n:,} examples.")


def plan(
    accuracy: float = typer.Option(..., "--accuracy", help="Accuracy of the baseline model, e.g. 0.90."),
    delta: float = typer.Option(..., "--delta", help="Accuracy gap to detect, as a fraction (0.005 = 0.5 pp)."),
    discordance: Optional[float] = typer.Option(
        None, "--discordance",
        help="Share of examples exactly one model gets right (default: assume independent errors)."),
    power: float = typer.Option(0.8, "--power", help="Chance of detecting the gap when it is real."),
    alpha: float = typer.Option(0.05, "--alpha", help="Two-sided significance level."),
) -> None:
    """How many evaluation examples a McNemar comparison needs to detect an accuracy gap."""
    typer.echo(plan_sentence(accuracy, delta, discordance, power=power, alpha=alpha))
