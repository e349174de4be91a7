"""The HTML report: one self-contained file, verdict first, opens offline in any browser.

Charts are SVG embedded as ``data:`` images (an SVG shown through ``<img>`` cannot run
scripts); the page carries no script at all and a Content-Security-Policy that forbids
scripts and every network request, so even a mistake in escaping could not run code.
Every user string goes through Jinja2's autoescaping.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from headtohead.report.endpoint import endpoint_blocks
from headtohead.report.figures import FigureSpec, overview_figures, report_styles, run_figures
from headtohead.report.merge import MergedRuns, RunEntry, as_merged
from headtohead.report.plots import ModelStyle
from headtohead.report.plots_sequential import sequential_figures
from headtohead.report.rows.pairs import comparison_note, comparison_rows
from headtohead.report.rows.prompts import (
    PROMPTS_TITLE,
    pool_rows,
    prompt_lines,
    prompt_note,
    prompt_rows,
    prompted_summary_notes,
)
from headtohead.report.rows.speed import speed_note, speed_rows
from headtohead.report.rows.summary import (
    across_runs_rows,
    best_models,
    environment_rows,
    format_cell,
    summary_columns,
    summary_rows,
    top_confusions,
    training_rows,
)
from headtohead.report.rows.where import disagreement_blocks, slice_rows, slices_note
from headtohead.report.words.numbers import format_count
from headtohead.report.words.sequential import sequential_lines
from headtohead.report.words.speed import stop_text
from headtohead.report.words.verdict import build_verdict
from headtohead.report.words.warnings import model_warnings, speed_warnings
from headtohead.results.files import DISAGREEMENTS_FILE
from headtohead.results.predictions import Predictions
from headtohead.results.records import RunResult
from headtohead.runtime.files import write_text_atomic
from headtohead.version import __version__

if TYPE_CHECKING:
    import jinja2

__all__ = [
    "render_html",
    "write_html",
    "report_title",
    "dataset_line",
    "summary_context",
    "summary_notes",
    "template_environment",
]

_CONFUSION_MIN_CLASSES = 3  # with two classes the matrix already says everything


def template_environment() -> jinja2.Environment:
    """The report's templates, autoescaped: every user string is shown as text, never as markup."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("headtohead.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def report_title(merged: MergedRuns) -> str:
    """``"sst2-bert-vs-roberta"``, or the run names joined when several differ."""
    names = list(dict.fromkeys(run.result.name for run in merged.runs))
    return names[0] if len(names) == 1 else " + ".join(names)


def dataset_line(result: RunResult) -> str:
    """``"sst2/dev.tsv — 872 examples, 2 classes (text)"``, plus skipped examples when any."""
    data = result.dataset
    text = f"{data.source} — {data.n_examples:,} examples, {len(data.label_names)} classes ({data.modality})"
    if data.skipped:
        text += "; skipped: " + ", ".join(f"{count} {reason}" for reason, count in data.skipped.items())
    return text


def _data_uri(svg: bytes) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def _figures(specs: Sequence[FigureSpec]) -> list[dict[str, str]]:
    out = []
    for spec in specs:
        svg = spec.svg()
        if svg is not None:
            out.append({"key": spec.key, "title": spec.title, "caption": spec.caption, "src": _data_uri(svg)})
    return out


def summary_context(result: RunResult, styles: dict[str, ModelStyle]) -> dict[str, Any]:
    """The summary table, one row per metric and one column per model (head to head)."""
    columns = summary_columns(result)
    rows = summary_rows(result)
    metrics = []
    for column in columns:
        best = best_models(rows, column)
        direction = {True: "↑", False: "↓", None: ""}[column.higher_is_better]
        metrics.append(
            {
                "label": column.label,
                "direction": direction,
                "cells": [
                    {"text": format_cell(cells.get(column.key), column), "best": model in best}
                    for model, cells in rows.items()
                ],
            }
        )
    # a prompted model's row is named by the model, whose passes have the styles
    colour = {m: styles[m].colour if m in styles else "inherit" for m in rows}
    return {"models": [{"name": m, "colour": colour[m]} for m in rows], "metrics": metrics}


def summary_notes(result: RunResult) -> list[str]:
    """The lines under the summary table: what the brackets and the bold mean."""
    stats = result.stats
    level = f"{stats.settings.confidence if stats is not None else 0.95:.0%}"
    how = (
        (
            ' (Wilson for accuracy, bootstrap for the others; "no interval" where none can be given honestly; a '
            "failure counts as a wrong answer)"
        )
        if stats is not None
        else ""
    )
    return [
        f"Brackets: {level} confidence intervals{how}.",
        "Bold: the best value of a row; ↑ higher is better, ↓ lower is better.",
    ] + prompted_summary_notes(stats.prompts if stats is not None else None)


def _per_class(result: RunResult) -> list[dict[str, Any]]:
    rated = [q for m in result.models if (q := m.quality) is not None]
    if not rated:
        return []
    rows = []
    for i, label in enumerate(result.dataset.label_names):
        values: list[str] = []
        for quality in rated:
            cq = quality.per_class[i]
            values.extend(f"{v:.3f}" for v in (cq.precision, cq.recall, cq.f1))
        support = rated[0].per_class[i].support
        rows.append({"label": label, "support": support, "cells": values})
    return rows


def _speed_note(result: RunResult) -> str:
    speed = result.speed
    if speed is None:
        return ""
    threads = f"{speed.torch_threads} torch threads" if speed.torch_threads else "torch threads not recorded"
    rounds = ", ".join(f"{r.scenario.replace('_', ' ')}: {r.rounds} rounds ({stop_text(r)})" for r in speed.scenarios)
    return (
        f"Models measured in interleaved rounds so drift hits all alike; {rounds}; {threads}; "
        f"{speed.elapsed_s:.0f} s in all. {speed_note(speed)}"
    )


def _training_note(run: RunEntry) -> str:
    training = run.training
    if training is None:
        return ""
    order = (
        "every model saw the same examples in the same order, seed by seed"
        if training.identical_order()
        else "the models did NOT all see the same example order"
    )
    return (
        f"Trained on {training.train_source} ({training.n_train:,} examples) with seeds "
        f"{', '.join(str(s) for s in training.seeds)}; {order}. Speed and cost columns are the first seed's."
    )


def _run_context(run: RunEntry, index: int, styles: dict[str, ModelStyle], machine: str) -> dict[str, Any]:
    result = run.result
    verdict = build_verdict(result, run.training)
    rated = [m for m in result.models if m.quality is not None]
    training = training_rows(run.training) if run.training is not None else []
    figures = run_figures(run, index, styles)
    comparisons = comparison_rows(result)
    speed = speed_rows(result)
    k = len(result.dataset.label_names)
    confusions = []
    if k >= _CONFUSION_MIN_CLASSES:
        confusions = [
            {
                "model": m.name,
                "colour": styles[m.name].colour,
                "pairs": top_confusions(q.confusion_matrix, q.confusion_labels or result.dataset.label_names),
            }
            for m in rated
            if (q := m.quality) is not None
        ]
    measured_warnings = speed_warnings(result.speed) if result.speed is not None else []
    return {
        "label": run.label,
        "anchor": f"run{index}",
        "machine": machine,
        "source": str(run.source) if run.source is not None else None,
        "created_at": result.created_at,
        "dataset_line": dataset_line(result),
        "verdict": {
            "headline": [
                {
                    "subject": line.subject,
                    "text": line.text,
                    "kind": line.kind,
                    "colour": styles[line.subject].colour if line.subject in styles else "inherit",
                }
                for line in verdict.headline
            ],
            "details": verdict.details,
        },
        "summary": summary_context(result, styles),
        "summary_notes": summary_notes(result),
        "comparisons": comparisons,
        "comparison_headers": list(comparisons[0]) if comparisons else [],
        "stats_note": comparison_note(result),
        "slices": (slices := slice_rows(result)),
        "slice_headers": list(slices[0]) if slices else [],
        "slices_note": slices_note(result),
        "disagreements": disagreement_blocks(result),
        "disagreements_file": DISAGREEMENTS_FILE,
        "prompts": {
            "title": PROMPTS_TITLE,
            "lines": prompt_lines(result),
            "rows": (prompts := prompt_rows(result)),
            "headers": list(prompts[0]) if prompts else [],
            "pools": (pools := pool_rows(result)),
            "pool_headers": list(pools[0]) if pools else [],
            "note": prompt_note(result),
        },
        "sequential": {
            "lines": sequential_lines(result),
            "figures": _figures(sequential_figures(result, f"run{index}", styles)),
        },
        "speed": speed,
        "speed_headers": list(speed[0]) if speed else [],
        "speed_note": _speed_note(result),
        "speed_warnings": measured_warnings,
        "endpoints": endpoint_blocks(result),
        "summary_figures": _figures([f for f in figures if f.section == "summary"]),
        "figures": _figures([f for f in figures if f.section != "summary"]),
        "confusions": confusions,
        "per_class_rows": _per_class(result),
        "model_names": [m.name for m in rated],
        "training": training,
        "training_headers": list(training[0]) if training else [],
        "training_note": _training_note(run),
        "models": [
            {
                "name": m.name,
                "colour": styles[m.name].colour,
                "kind": m.kind,
                "source": m.source,
                "parameters": format_count(m.num_parameters) if m.outputs == "computed" else "—",
                "alignment": m.label_alignment or "—",
                "batch_size": m.batch_size,
                "device": m.device,
                "load": f"{m.load_time_s:.3g}",
                "eval": f"{m.eval_time_s:.3g}" if m.eval_time_s is not None else "—",
            }
            for m in result.models
        ],
        "model_warnings": [f"{m.name}: {w}" for m in result.models for w in model_warnings(m)],
        "experiment": json.dumps(result.experiment, indent=2, ensure_ascii=False),
    }


def _subtitle(merged: MergedRuns) -> str:
    runs = merged.runs
    if len(runs) == 1:
        result = runs[0].result
        names = ", ".join(m.name for m in result.models)
        return f"{len(result.models)} model(s): {names} · {dataset_line(result)}"
    return f"{len(runs)} runs on {len(merged.groups)} machine(s): " + ", ".join(r.label for r in runs)


def render_html(
    results: RunResult | Sequence[RunResult] | MergedRuns,
    *,
    predictions: Predictions | Sequence[Predictions | None] | None = None,
    title: str | None = None,
) -> str:
    """The whole report as one HTML page.

    Parameters
    ----------
    results : RunResult, sequence of RunResult, or MergedRuns
        One run, several (grouped by machine), or runs already loaded with :func:`~headtohead.report.merge.load_runs`.
    predictions : Predictions or sequence, optional
        Per-example predictions (used for reliability diagrams when a result has no statistics).
    title : str, optional
        Defaults to the run name(s).

    Returns
    -------
    str
        A complete, self-contained HTML document.

    Examples
    --------
    >>> html = render_html(headtohead.load_result("runs/sst2/results.json"))   # doctest: +SKIP
    """
    merged = as_merged(results, predictions=predictions)
    styles = report_styles(merged)
    runs, index = [], 0
    for group in merged.groups:
        for run in group.runs:
            index += 1
            runs.append(_run_context(run, index, styles, group.title))
    context = {
        "title": title or report_title(merged),
        "subtitle": _subtitle(merged),
        "version": __version__,
        "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "warnings": merged.warnings,
        "runs": runs,
        "overview": _figures(overview_figures(merged, styles)),
        "across": across_runs_rows([(r.label, g.title, r.result) for g in merged.groups for r in g.runs])
        if len(merged.runs) > 1
        else [],
        "groups": [
            {"title": g.title, "runs": [r.label for r in g.runs], "rows": environment_rows(g.environment)}
            for g in merged.groups
        ],
    }
    return template_environment().get_template("report.html.j2").render(**context)


def write_html(
    results: RunResult | Sequence[RunResult] | MergedRuns,
    path: str | Path,
    *,
    predictions: Predictions | Sequence[Predictions | None] | None = None,
    title: str | None = None,
) -> Path:
    """Render the report and write it to ``path`` atomically; returns the path."""
    path = Path(path)
    write_text_atomic(path, render_html(results, predictions=predictions, title=title))
    return path
