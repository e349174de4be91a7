"""``h2h validate`` and ``h2h show``: check an experiment file; print the table of a saved run."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from headtohead.cli.console import console, print_result
from headtohead.cli.options import SetOption

__all__ = ["validate", "show"]


def validate(
    experiment: Path = typer.Argument(..., help="The experiment YAML file."),
    set_: Optional[list[str]] = SetOption,
) -> None:
    """Check an experiment file without running it."""
    from headtohead.config import load_experiment

    exp = load_experiment(experiment, set_ or [])
    console.print(
        f"{experiment}: valid — {len(exp.models)} model(s): {', '.join(m.name for m in exp.models)}", highlight=False
    )


def show(results: Path = typer.Argument(..., help="A results.json written by h2h run, or its folder.")) -> None:
    """Print the table of a saved run."""
    from headtohead.results import load_result

    print_result(load_result(results))
