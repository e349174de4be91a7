"""``h2h demo``: the first thing a newcomer runs — two small image models trained and compared, offline."""

from __future__ import annotations

from pathlib import Path

import typer

from headtohead.cli.console import console, err_console, print_result, progress_bars

__all__ = ["demo"]


def demo(
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Output folder."),
    epochs: int = typer.Option(3, min=1, help="Training epochs per model."),
) -> None:
    """Train two small image models on scikit-learn's digits (offline) and compare them."""
    from headtohead.pipeline.demo import run_demo
    from headtohead.report.write import write_reports
    from headtohead.results.files import EXPERIMENT_FILE, RESULTS_FILE

    def on_event(message: str) -> None:
        err_console.print(message, highlight=False)

    with progress_bars() as progress:
        outcome = run_demo(out, epochs=epochs, on_event=on_event, progress=progress)
    print_result(outcome.result)
    html = write_reports(outcome.result, out, predictions=outcome.predictions)
    console.print(
        f"Results: {out / RESULTS_FILE}; report: {html}; re-run with: h2h run {out / EXPERIMENT_FILE}", highlight=False
    )
