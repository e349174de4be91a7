"""The terminal table: one row per model, every number with its confidence interval when the
run has statistics. Returns rich renderables; only the CLI prints."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from headtohead.results.records import ModelRecord, RunResult

__all__ = ["quality_table", "verdict_block", "format_count"]


def format_count(n: int) -> str:
    """``22713856`` → ``22.7M``."""
    for unit, size in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _with_ci(value: float, estimate, percent: bool) -> str:  # noqa: ANN001 - Estimate | None
    def fmt(x: float) -> str:
        return f"{x:.1%}" if percent else f"{x:.3f}"

    if estimate is None:
        return fmt(value)
    low, high = (f"{estimate.low * 100:.1f}", f"{estimate.high * 100:.1f}") if percent else (
        f"{estimate.low:.3f}", f"{estimate.high:.3f}")
    return f"{fmt(value)} [dim]({low}–{high})[/]"


def quality_table(result: RunResult) -> Table:
    """A rich table of every model's quality on the run's evaluation set.

    Parameters
    ----------
    result : RunResult

    Returns
    -------
    rich.table.Table
        Accuracy, macro-/weighted-F1 and balanced accuracy with their 95 % intervals (when
        ``result.stats`` is present), calibration error, parameters and evaluation time.
    """
    data = result.dataset
    stats = result.stats
    level = f"{stats.settings.confidence:.0%} CI" if stats else ""
    table = Table(title=f"{escape(result.name)} — {data.n_examples} examples, {len(data.label_names)} classes"
                  + (f"; ({level}) in brackets" if stats else ""), title_justify="left")
    table.add_column("model", style="bold", no_wrap=True)
    for column in ("accuracy", "macro-F1", "weighted-F1", "bal. acc.", "ECE", "params", "eval s"):
        table.add_column(column, justify="right")
    best = max((m.quality.accuracy for m in result.models), default=None)
    for model in result.models:
        table.add_row(*_row(model, stats.model(model.name) if stats else None,
                            best=best if len(result.models) > 1 else None))
    return table


def _row(model: ModelRecord, ms, *, best: float | None) -> list[str]:  # noqa: ANN001 - ModelStats | None
    q = model.quality
    accuracy = _with_ci(q.accuracy, ms.accuracy if ms else None, percent=True)
    if best is not None and q.accuracy == best:
        accuracy = f"[bold green]{accuracy}[/]"
    ece = f"{ms.calibration.ece:.3f}" if ms is not None and ms.calibration is not None else "–"
    return [
        escape(model.name),
        accuracy,
        _with_ci(q.f1_macro, ms.f1_macro if ms else None, percent=False),
        _with_ci(q.f1_weighted, ms.f1_weighted if ms else None, percent=False),
        _with_ci(q.balanced_accuracy, ms.balanced_accuracy if ms else None, percent=True),
        ece,
        format_count(model.num_parameters),
        f"{model.eval_time_s:.2f}",
    ]


def verdict_block(result: RunResult) -> list[str]:
    """The verdict sentences of a run (quality, then speed when measured), plain text."""
    lines: list[str] = []
    if result.stats is not None:
        from headtohead.stats import verdict_lines

        lines += verdict_lines(result.stats)
    return lines
