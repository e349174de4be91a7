"""The terminal table: one row per model, quality first. Returns rich renderables; only the CLI prints."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from headtohead.results.records import RunResult

__all__ = ["quality_table", "format_count"]


def format_count(n: int) -> str:
    """``22713856`` → ``22.7M``."""
    for unit, size in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def quality_table(result: RunResult) -> Table:
    """A rich table of every model's quality on the run's evaluation set.

    Parameters
    ----------
    result : RunResult

    Returns
    -------
    rich.table.Table
    """
    data = result.dataset
    table = Table(title=f"{escape(result.name)} — {data.n_examples} examples, {len(data.label_names)} classes",
                  title_justify="left")
    table.add_column("model", style="bold")
    for column in ("accuracy", "macro-F1", "weighted-F1", "bal. acc.", "confidence", "params", "eval s"):
        table.add_column(column, justify="right")
    best = max((m.quality.accuracy for m in result.models), default=None)
    for model in result.models:
        q = model.quality
        accuracy = f"{q.accuracy:.2%}"
        if best is not None and q.accuracy == best and len(result.models) > 1:
            accuracy = f"[bold green]{accuracy}[/]"
        table.add_row(
            escape(model.name),
            accuracy,
            f"{q.f1_macro:.4f}",
            f"{q.f1_weighted:.4f}",
            f"{q.balanced_accuracy:.2%}",
            f"{q.confidence_mean:.3f}±{q.confidence_std:.3f}",
            format_count(model.num_parameters),
            f"{model.eval_time_s:.2f}",
        )
    return table
