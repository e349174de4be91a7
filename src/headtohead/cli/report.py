"""``h2h report``: turn one or more ``results.json`` into an HTML, Markdown and/or CSV report.

Registered in :mod:`headtohead.cli.main` with ``app.command("report")(report)``. The
library does the work (:mod:`headtohead.report`); this module parses and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

__all__ = ["report"]


def _default_html(results: list[Path]) -> Path:
    first = results[0]
    from headtohead.results.files import REPORT_FILE

    return (first if first.is_dir() else first.parent) / REPORT_FILE


def report(
    results: list[Path] = typer.Argument(
        ...,
        help="results.json files written by h2h run (or their folders); "
        "several are merged into one report, grouped by machine.",
    ),
    html: Optional[Path] = typer.Option(
        None,
        "--html",
        help="Write the HTML report here (default, when no "
        "format is given: report.html beside the first results file).",
    ),
    md: Optional[Path] = typer.Option(
        None, "--md", help="Write a Markdown report here (charts as PNG files in <name>_files/ beside it)."
    ),
    csv: Optional[Path] = typer.Option(
        None, "--csv", help="Write the table here: one row per model and run, one column per metric."
    ),
    mlflow: Optional[str] = typer.Option(
        None,
        "--mlflow",
        metavar="URI",
        help="Also log parameters, metrics "
        "and the report files to MLflow: a server (http://host:5000), a local "
        "store (sqlite:///mlflow.db), or 'default' ($MLFLOW_TRACKING_URI, else "
        "sqlite:///mlflow.db here). Needs the mlflow extra.",
    ),
    title: Optional[str] = typer.Option(None, "--title", help="Report title (default: the run names)."),
) -> None:
    """Build a report (verdict, tables, charts) from saved results."""
    from headtohead.cli.console import console, err_console
    from headtohead.report.merge import load_runs, merge_runs
    from headtohead.report.write import write_outputs

    merged = merge_runs(load_runs(results))
    if html is None and md is None and csv is None:
        html = _default_html(results)
    for warning in merged.warnings:
        err_console.print(f"warning: {warning}", style="yellow", highlight=False, markup=False, soft_wrap=True)
    for note in merged.notes:
        err_console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
    written = write_outputs(merged, html=html, markdown=md, csv=csv, title=title)
    for path in written.files:
        console.print(f"wrote {path}", highlight=False, markup=False, soft_wrap=True)
    if mlflow is not None:
        from headtohead.report.formats.mlflow import resolve_tracking_uri
        from headtohead.report.write import log_runs_to_mlflow

        uri = resolve_tracking_uri(mlflow)
        run_ids = log_runs_to_mlflow(merged, tracking_uri=uri, artifacts=written.files)
        console.print(
            f"logged {len(run_ids)} run(s) to MLflow at {uri}: {', '.join(run_ids)}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
