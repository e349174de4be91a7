"""Terminal output for the CLI: one console, warnings as single lines, progress bars."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:
    from headtohead.results.records import RunResult

__all__ = ["console", "err_console", "setup_logging", "progress_bars", "print_result"]

# Outside a terminal (CI logs, pipes) rich would assume 80 columns and truncate tables.
console = Console(width=None if sys.stdout.isatty() else 150)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 150)


class _OneLineHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        style = "yellow" if record.levelno >= logging.WARNING else "dim"
        label = "warning" if record.levelno >= logging.WARNING else "info"
        err_console.print(f"[{style}]{label}:[/] {escape(record.getMessage())}", highlight=False, soft_wrap=True)


def _show_warning(message: Warning | str, *_unused: object, **_unused_named: object) -> None:  # as warnings.showwarning
    logging.getLogger("headtohead").warning("%s", message)


def setup_logging(debug: bool = False) -> None:
    """Route headtohead's log records and Python warnings to one-line messages on stderr.

    Third-party libraries are quietened unless ``debug``: their progress bars and load
    reports would bury the one line that matters.
    """
    logger = logging.getLogger("headtohead")
    logger.handlers[:] = [_OneLineHandler()]
    logger.setLevel(logging.DEBUG if debug else logging.INFO)
    logger.propagate = False
    warnings.showwarning = _show_warning
    if not debug:
        for name in ("transformers", "timm", "datasets", "huggingface_hub", "torch"):
            logging.getLogger(name).setLevel(logging.ERROR)
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        # transformers reads these when it is imported (only the commands that load models do)
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        if "transformers" in sys.modules:  # already imported (h2h called from Python): tell it directly
            import transformers.utils.logging as tlog

            tlog.set_verbosity_error()
            tlog.disable_progress_bar()


@contextmanager
def progress_bars() -> Iterator[Callable[..., None]]:
    """Yield a ``progress(task, done, total)`` callback drawing one bar per model or stage.

    When the block fails the bars are removed (in a terminal) or their last state is not
    printed (in a log), so what follows a failure is its one error line.
    """
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[rates]}"),
    )
    with Progress(*columns, console=err_console, transient=False) as bars:
        tasks: dict[str, TaskID] = {}

        def update(task: str, done: int, total: int, rates: Mapping[str, float] | None = None) -> None:
            if task not in tasks:
                tasks[task] = bars.add_task(escape(task), total=total, rates="")
            shown = " · ".join(f"{value:,.1f} {unit}" for unit, value in rates.items()) if rates else None
            if shown is None:
                bars.update(tasks[task], completed=done)
            else:
                bars.update(tasks[task], completed=done, rates=shown)

        try:
            yield update
        except BaseException:
            bars.live.transient = True
            raise


def print_result(result: RunResult) -> None:
    """The quality table, the speed table, then the verdict block."""
    from headtohead.report import quality_table, speed_table, verdict_block

    if any(m.has_quality for m in result.models):
        console.print(quality_table(result))
    speed = speed_table(result)
    if speed is not None:
        console.print(speed)
    from headtohead.report.endpoint import endpoint_lines

    for model in result.models:  # kind openai: requests, cache, answers, tokens, cost
        lines = endpoint_lines(model)
        if lines:
            console.print(escape(lines[0]), style="bold")
            for line in lines[1:]:
                console.print("  " + escape(line))
    if result.speed is not None:
        from headtohead.report.words.server import cost_table, server_table

        for table in (server_table(result.speed), cost_table(result.speed)):
            if table is not None:
                console.print(table)
    lines = verdict_block(result)
    if lines:
        console.print("[bold]Verdict[/]")
        for line in lines:
            console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
