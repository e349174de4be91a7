"""``h2h plan``: how many evaluation examples does a comparison need?

Registered in :mod:`headtohead.cli.main` with ``app.command("plan")(plan)``. The numbers
come from :func:`headtohead.stats.power.plan_sample_size` (exact power of the McNemar rule
headtohead runs); this module only parses and prints.
"""

from __future__ import annotations

from typing import Optional

import typer

from headtohead.stats.power import plan_sample_size

__all__ = ["plan", "plan_sentence"]


def _percent(fraction: float) -> str:
    """``0.9`` → ``90``, ``0.905`` → ``90.5``: as many decimals as the value needs (up to 3)."""
    return f"{100 * fraction:.3f}".rstrip("0").rstrip(".")


def plan_sentence(accuracy: float, delta: float, discordance: Optional[float] = None, power: float = 0.8,
                  alpha: float = 0.05, models: int = 2) -> str:
    """The answer of ``h2h plan`` as one sentence.

    Parameters are those of :func:`headtohead.stats.power.plan_sample_size` (``models`` is
    its ``n_models``).

    Raises
    ------
    ConfigError
        An input is out of range (one line naming it).

    Examples
    --------
    >>> plan_sentence(0.90, 0.05, 0.10)  # doctest: +NORMALIZE_WHITESPACE
    'To detect a 5 pp accuracy difference at 90 % accuracy with 80 % power (α = 0.05, two-sided McNemar;
     assumed discordance 10 %) you need 337 examples; at 337 the McNemar test headtohead runs has
     80.0 % power (exact).'
    """
    p = plan_sample_size(accuracy, delta, discordance, power=power, alpha=alpha, n_models=models)
    if p.discordance_assumed:
        assumed = (f"assumed discordance {_percent(p.discordance)} %, i.e. independent "
                   f"errors — models that err on the same examples need fewer; set --discordance")
    else:
        assumed = f"assumed discordance {_percent(p.discordance)} %"
    test = f"α = {alpha:g}, two-sided McNemar"
    if p.n_comparisons > 1:
        test += (f" with Holm over {p.n_comparisons} pairs, power at its first step "
                 f"α/{p.n_comparisons} = {p.test_alpha:.3g}")
    return (f"To detect a {_percent(delta)} pp accuracy difference at {_percent(accuracy)} % accuracy with "
            f"{_percent(power)} % power ({test}; {assumed}) you need {p.n:,} examples; "
            f"at {p.n:,} the McNemar test headtohead runs has {100 * p.power:.1f} % power (exact).")


def plan(
    accuracy: float = typer.Option(..., "--accuracy", help="Accuracy of the baseline model, e.g. 0.90."),
    delta: float = typer.Option(..., "--delta", help="Accuracy gap to detect, as a fraction (0.005 = 0.5 pp)."),
    discordance: Optional[float] = typer.Option(
        None, "--discordance",
        help="Share of examples exactly one model gets right (default: assume independent errors)."),
    power: float = typer.Option(0.8, "--power", help="Chance of detecting the gap when it is real."),
    alpha: float = typer.Option(0.05, "--alpha", help="Two-sided significance level (family-wise)."),
    models: int = typer.Option(2, "--models", help="Models compared in one run (Holm over all pairs)."),
) -> None:
    """How many evaluation examples a McNemar comparison needs to detect an accuracy gap."""
    typer.echo(plan_sentence(accuracy, delta, discordance, power=power, alpha=alpha, models=models))
