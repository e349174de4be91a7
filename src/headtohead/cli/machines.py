"""``h2h machines``: training speed across machines (registered in :mod:`headtohead.cli.main`).

Its first name, ``h2h compare``, stays as a hidden alias that says it is deprecated: in Python,
:func:`headtohead.compare` compares models held in memory, so one name meant two things.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Optional

import typer

__all__ = ["machines", "compare_deprecated", "DEPRECATED_COMPARE"]

DEPRECATED_COMPARE = "'h2h compare' is deprecated and will be removed: it is now 'h2h machines' (same arguments)"


def machines(
    results: list[Path] = typer.Argument(
        ..., help="results.json / training.json files (or run folders) written by h2h train, one per machine."
    ),
    baseline: Optional[str] = typer.Option(
        None,
        "--baseline",
        "-b",
        help="Machine to normalise to: its label, position (1, 2 …) or file. Default: the first.",
    ),
    label: Optional[list[str]] = typer.Option(
        None, "--label", "-l", help="Name each machine, in file order (repeat once per file)."
    ),
    price: Optional[list[str]] = typer.Option(
        None,
        "--price",
        "-p",
        help="A machine's price per hour: "
        "LABEL=PRICE or POSITION=PRICE (repeatable); adds cost per epoch and "
        "to target.",
    ),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the comparison as JSON."),
) -> None:
    """Compare training speed (and, with --price, cost) of the same models across machines."""
    from headtohead.cli.console import console, err_console, print_document
    from headtohead.pipeline.machines import compare_machines, parse_prices
    from headtohead.report.sections.machines import machines_document
    from headtohead.runtime.files import write_text_atomic

    comparison = compare_machines(results, baseline=baseline, labels=label or None, prices=parse_prices(price or []))
    print_document(machines_document(comparison))
    for warning in comparison.warnings:
        err_console.print(f"warning: {warning}", style="yellow", highlight=False, markup=False, soft_wrap=True)
    if json_out is not None:
        write_text_atomic(json_out, comparison.model_dump_json(indent=2) + "\n")
        console.print(f"Comparison: {json_out}", highlight=False)


@functools.wraps(machines)  # the same parameters: typer reads them from the wrapped function
def compare_deprecated(*args: Any, **kwargs: Any) -> None:
    """The old name of ``h2h machines``: says it is deprecated, then does the same."""
    from headtohead.cli.console import err_console

    err_console.print(f"warning: {DEPRECATED_COMPARE}", style="yellow", highlight=False, markup=False, soft_wrap=True)
    machines(*args, **kwargs)
