"""A suite's files: ``suite.html`` (the CD diagram, ranks, the per-data-set grid, pairs, seeds), ``suite.md``, ``suite.csv``,
``suite.tex`` and the CD diagram as ``cd.svg`` and ``cd.pdf``.

``suite.html`` is one self-contained page like a run's report (no script, nothing loaded from
the network, every user string escaped), whose tables fit the page's width and print whole;
each data set's name links to its own ``report.html``. ``suite.md`` carries the same tables
with the diagram as a PNG beside it (``suite_files/``); ``suite.csv`` one row per data set and
model, numbers unrounded; ``suite.tex`` the tables for a paper (:mod:`headtohead.report.suite_latex`)
and ``cd.svg`` / ``cd.pdf`` the diagram for it.
"""

from __future__ import annotations

import base64
import csv
import io
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from headtohead.report.csv_export import safe_cell
from headtohead.report.html import template_environment
from headtohead.report.markdown import md_escape
from headtohead.report.plots import model_styles, to_pdf, to_png, to_svg
from headtohead.report.plots_suite import critical_difference_figure
from headtohead.report.suite import (
    control_rows,
    direction,
    grid_rows,
    pair_cells,
    pair_headers,
    pair_sentence,
    rank_rows,
    rope_text,
    seed_rows,
    seed_sentences,
)
from headtohead.report.suite_latex import render_suite_latex
from headtohead.results.files import (
    SUITE_CD_PDF,
    SUITE_CD_SVG,
    SUITE_CSV,
    SUITE_FIGURES_DIR,
    SUITE_LATEX,
    SUITE_MARKDOWN,
    SUITE_REPORT,
)
from headtohead.results.suite import SuiteResult
from headtohead.runtime.files import write_bytes_atomic, write_text_atomic
from headtohead.version import __version__

__all__ = [
    "CD_TITLE",
    "cd_caption",
    "render_suite_html",
    "render_suite_markdown",
    "render_suite_csv",
    "write_suite_reports",
    "CSV_COLUMNS",
]

CD_TITLE = "Critical-difference diagram"


def cd_caption(result: SuiteResult) -> str:
    """How to read the diagram."""
    if result.nemenyi_cd is None:
        return (
            f"Average rank of each model over {result.n_datasets} data sets (1 = best). With two models there is "
            f"no critical difference: the Wilcoxon signed-rank test of the pair decides."
        )
    return (
        f"Average rank of each model over {result.n_datasets} data sets (1 = best). Models joined by a bar are "
        f"within Nemenyi's critical difference ({result.nemenyi_cd:.2f} ranks, α = {result.alpha:g}) of each "
        f"other: the diagram does not show them to differ. Pairwise Wilcoxon tests with Holm (the table below) "
        f"do not depend on the other models and decide the verdict."
    )


def _figure(result: SuiteResult, size: tuple[float | None, float | None] | None = None) -> Any:
    return critical_difference_figure(
        result.average_ranks,
        result.nemenyi_cd,
        result.cliques,
        model_styles(result.models),
        alpha=result.alpha,
        size=size,
    )


def _subtitle(result: SuiteResult) -> str:
    source = {"suite": "runs of this suite", "results": "finished runs", "scores": "a table of scores"}[result.input]
    return (
        f"{len(result.models)} models ({', '.join(result.models)}) on {len(result.datasets)} data sets · "
        f"{result.metric}, {direction(result)} · from {source}"
    )


def render_suite_html(result: SuiteResult) -> str:
    """The suite's report as one self-contained HTML page (links to each data set's report are relative)."""
    figures = []
    if result.average_ranks:
        figures.append(
            {
                "key": "critical-difference",
                "title": CD_TITLE,
                "caption": cd_caption(result),
                "src": "data:image/svg+xml;base64," + base64.b64encode(to_svg(_figure(result))).decode(),
            }
        )
    styles = model_styles(result.models)
    context = {
        "title": result.name,
        "subtitle": _subtitle(result),
        "version": __version__,
        "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "result": result,
        "verdict": result.verdict,
        "warnings": result.warnings,
        "figures": figures,
        "rank_rows": rank_rows(result),
        "grid": grid_rows(result),
        "colours": {m: styles[m].colour for m in result.models},
        "pair_headers": pair_headers(result),
        "pair_cells": pair_cells(result),
        "pair_sentences": [pair_sentence(p, result) for p in result.pairs],
        "control_rows": control_rows(result),
        "seed_rows": seed_rows(result),
        "seed_sentences": seed_sentences(result),
        "rope": rope_text(result),
        "two": len(result.models) == 2,
    }
    return str(template_environment().get_template("suite.html.j2").render(**context))


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = [
        "| " + " | ".join(md_escape(h) for h in headers) + " |",
        "|" + "|".join(":---" if i == 0 else "---:" for i in range(len(headers))) + "|",
    ]
    lines += ["| " + " | ".join(md_escape(c) for c in row) + " |" for row in rows]
    return lines + [""]


def render_suite_markdown(result: SuiteResult, *, figure: str | None = None) -> str:
    """The suite's report in Markdown; ``figure`` is the relative path of the CD diagram's PNG, when written."""
    lines = [f"# {md_escape(result.name)}", "", md_escape(_subtitle(result)), "", "## Verdict", ""]
    lines += [f"- {md_escape(line)}" for line in result.verdict] + [""]
    if result.warnings:
        lines += ["**Read with care**", ""] + [f"- {md_escape(w)}" for w in result.warnings] + [""]
    if figure is not None:
        lines += [f"![{CD_TITLE}]({figure})", "", f"*{md_escape(cd_caption(result))}*", ""]
    ranks = rank_rows(result)
    if ranks:
        lines += ["## Ranks", ""] + _md_table(list(ranks[0]), [list(r.values()) for r in ranks])
    grid = grid_rows(result)
    lines += ["## Per data set", ""]
    lines += _md_table(
        ["data set", "examples", *result.models, "its own test"],
        [[g["dataset"], g["examples"], *g["cells"].values(), g["own"]] for g in grid],
    )
    if result.pairs:
        lines += ["## Pairs across data sets", ""] + _md_table(pair_headers(result), pair_cells(result))
        lines += [f"- {md_escape(s)}" for s in (pair_sentence(p, result) for p in result.pairs)] + [""]
    control = control_rows(result)
    if control:
        lines += [f"## Against the baseline {md_escape(result.baseline or '')}", ""]
        lines += _md_table(list(control[0]), [list(r.values()) for r in control])
    seeds = seed_rows(result)
    if seeds:
        lines += ["## Seeds", ""] + _md_table(list(seeds[0]), [list(r.values()) for r in seeds])
        lines += [f"- {md_escape(s)}" for s in seed_sentences(result)] + [""]
    return "\n".join(lines)


#: Columns of suite.csv.
CSV_COLUMNS = (
    "dataset",
    "status",
    "model",
    "metric",
    "score",
    "rank",
    "average_rank",
    "own_test_wins",
    "own_test_losses",
    "results",
    "error",
)


def render_suite_csv(result: SuiteResult) -> str:
    """One row per data set and model (a failed data set: one row with its error); numbers unrounded."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for entry in result.datasets:
        if entry.status != "finished":
            writer.writerow(
                {
                    k: safe_cell(v)
                    for k, v in {"dataset": entry.name, "status": entry.status, "error": entry.error}.items()
                }
            )
            continue
        for model in result.models:
            wins = [v for v in entry.verdicts if v.significant and v.winner == model]
            losses = [
                v
                for v in entry.verdicts
                if v.significant and v.winner not in (None, model) and model in (v.model_a, v.model_b)
            ]
            writer.writerow(
                {
                    k: safe_cell(v)
                    for k, v in {
                        "dataset": entry.name,
                        "status": entry.status,
                        "model": model,
                        "metric": result.metric,
                        "score": entry.scores.get(model),
                        "rank": entry.ranks.get(model),
                        "average_rank": result.average_ranks.get(model),
                        "own_test_wins": len(wins),
                        "own_test_losses": len(losses),
                        "results": entry.results,
                    }.items()
                }
            )
    return buffer.getvalue()


def write_suite_reports(
    result: SuiteResult, out_dir: str | Path, *, figure_size: tuple[float | None, float | None] | None = None
) -> list[Path]:
    """Write ``suite.html``, ``suite.md`` (its diagram in ``suite_files/``), ``suite.csv`` and ``suite.tex`` into
    ``out_dir``, and the CD diagram as ``cd.svg`` and ``cd.pdf`` when there are statistics, ``figure_size``
    inches large (``across.figure``, ``--figure-size``; the pages' own diagram keeps the screen size)."""
    out = Path(out_dir)
    written = [out / SUITE_REPORT, out / SUITE_MARKDOWN, out / SUITE_CSV, out / SUITE_LATEX]
    write_text_atomic(written[0], render_suite_html(result))
    figure = None
    if result.average_ranks:
        figure = f"{SUITE_FIGURES_DIR}/critical-difference.png"
        for path, render, size in (
            (figure, to_png, None),
            (SUITE_CD_SVG, to_svg, figure_size),
            (SUITE_CD_PDF, to_pdf, figure_size),
        ):
            write_bytes_atomic(out / path, render(_figure(result, size)))
            written.append(out / path)
    write_text_atomic(written[1], render_suite_markdown(result, figure=figure))
    write_text_atomic(written[2], render_suite_csv(result))
    write_text_atomic(written[3], render_suite_latex(result))
    return written
