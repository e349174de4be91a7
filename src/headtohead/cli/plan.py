"""``h2h plan``: how many evaluation examples does a comparison need?

Registered in :mod:`headtohead.cli.main` with ``app.command("plan")(plan)``. The numbers
come from :func:`headtohead.stats.power.plan_sample_size` (exact power of the McNemar rule
headtohead runs), worded by :func:`headtohead.report.words.plan.plan_sentence`; this module parses and prints.
"""

from __future__ import annotations

from typing import Optional

import typer

from headtohead.cli.options import level, margin, renamed

__all__ = ["plan"]


def plan(
    accuracy: float = typer.Option(..., "--accuracy", help="Accuracy of the baseline model, e.g. 0.90."),
    delta: float = typer.Option(
        ...,
        "--delta",
        parser=margin("accuracy", "--delta"),
        metavar="MARGIN",
        help="Accuracy gap to detect: 0.5pp (percentage points) or 0.005.",
    ),
    discordance: Optional[float] = typer.Option(
        None,
        "--discordance",
        help="Share of examples exactly one model gets right (default: assume independent errors).",
    ),
    power: float = typer.Option(0.8, "--power", help="Chance of detecting the gap when it is real."),
    alpha: float = typer.Option(
        "0.05", "--alpha", parser=level(), metavar="ALPHA", help="Two-sided significance level (family-wise), 0–0.5."
    ),
    n_models: Optional[int] = typer.Option(
        None, "--n-models", help="Models compared in one run (Holm over all pairs; 2)."
    ),
    models: Optional[int] = typer.Option(None, "--models", hidden=True, help="Deprecated: --n-models."),
    repeats: Optional[int] = typer.Option(
        None, "--repeats", help="Runs of each model (repeats:): plan examples × runs, with --run-sd."
    ),
    run_sd: Optional[float] = typer.Option(
        None,
        "--run-sd",
        parser=margin("accuracy", "--run-sd"),
        metavar="SD",
        help="Run-to-run SD of a model's accuracy (a repeated run's report shows it): 1.5pp or 0.015.",
    ),
) -> None:
    """How many evaluation examples a McNemar comparison needs to detect an accuracy gap (with --repeats and
    --run-sd: examples × runs for models run several times)."""
    from headtohead.report.words.plan import plan_sentence, runs_plan_sentence
    from headtohead.stats.power import plan_sample_size

    count = renamed(n_models, models, was="--models (a count in h2h plan)", now="--n-models") or 2
    if repeats is not None or run_sd is not None:
        from headtohead.errors import ConfigError
        from headtohead.stats.repeat_plan import plan_runs

        if repeats is None or run_sd is None:
            raise ConfigError("h2h plan: --repeats and --run-sd go together (runs of each model, their accuracy's SD)")
        runs = plan_runs(
            accuracy, delta, discordance, repeats=repeats, run_sd=run_sd, power=power, alpha=alpha, n_models=count
        )
        typer.echo(runs_plan_sentence(runs, accuracy=accuracy, delta=delta))
        return
    plan_ = plan_sample_size(accuracy, delta, discordance, power=power, alpha=alpha, n_models=count)
    typer.echo(plan_sentence(plan_, accuracy=accuracy, delta=delta))
