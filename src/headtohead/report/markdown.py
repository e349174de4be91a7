"""The Markdown report, for a pull-request comment or a wiki page: the verdict, tables, and PNG charts beside it.

User strings are escaped for Markdown and HTML (GitHub renders inline HTML), so a label
such as ``<script>`` or ``*bold*`` shows literally.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from headtohead.report.endpoint import endpoint_blocks
from headtohead.report.figures import FigureSpec, overview_figures, report_styles, run_figures
from headtohead.report.html import dataset_line, report_title
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
from headtohead.report.words.sequential import sequential_lines
from headtohead.report.words.verdict import build_verdict
from headtohead.report.words.warnings import speed_warnings
from headtohead.results.files import DISAGREEMENTS_FILE
from headtohead.results.predictions import Predictions
from headtohead.results.records import RunResult
from headtohead.runtime.files import write_bytes_atomic, write_text_atomic

__all__ = ["md_escape", "render_markdown", "write_markdown"]

# Characters that start emphasis, code, links or table cells anywhere in a line.
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# What makes a line a heading, list, quote or rule when it comes first.
_LINE_START = re.compile(r"^(?:([#+\-=>])(?=\s|$|\1)|(\d+)(?=[.)](?:\s|$)))")
# What Markdown reads as inline HTML or an autolink (a tag, a comment): ``<`` right before a name, ``/``, ``!`` or ``?``,
# up to its ``>``.
_TAG = re.compile(r"<[A-Za-z/!?][^<>]*>?")
# What Markdown reads as a character reference (``&amp;``, ``&#60;``).
_ENTITY = re.compile(r"&(?=#?\w+;)")


def md_escape(text: object) -> str:
    """Make ``text`` show literally in Markdown (CommonMark / GitHub), on one line.

    Only what Markdown would interpret is escaped, so the source stays readable: what would be
    read as an HTML tag (GitHub renders inline HTML) has its ``<`` and ``>`` written as
    entities, and ``&`` only where it would start a character reference; a comparison such as
    ``p < 0.001`` stays as written (an entity there shows as ``&lt;`` wherever Markdown is read
    as text).

    Examples
    --------
    >>> md_escape("<script>a|b</script>")
    '&lt;script&gt;a\\\\|b&lt;/script&gt;'
    >>> md_escape("- 1.5 pp (95 % CI)")
    '\\\\- 1.5 pp (95 % CI)'
    >>> md_escape("p < 0.001 & a -> b; &amp;")
    'p < 0.001 & a -> b; &amp;amp;'
    """
    value = _ENTITY.sub("&amp;", " ".join(str(text).split()))
    value = _TAG.sub(lambda tag: tag.group(0).replace("<", "&lt;").replace(">", "&gt;"), value)
    value = _SPECIAL.sub(r"\\\1", value)
    return _LINE_START.sub(lambda m: "\\" + m.group(1) if m.group(1) else m.group(2) + "\\", value)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], align_first_left: bool = True) -> list[str]:
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join(":---" if i == 0 and align_first_left else "---:" for i in range(len(headers))) + "|",
    ]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines + [""]


def _figure_lines(specs: Sequence[FigureSpec], folder: str, files: dict[str, bytes]) -> list[str]:
    lines = []
    for spec in specs:
        png = spec.png()
        if png is None:
            continue
        name = f"{spec.key}.png"
        files[name] = png
        lines += [f"![{md_escape(spec.title)}]({folder}/{name})", "", f"*{md_escape(spec.caption)}*", ""]
    return lines


def _verdict_lines(run: RunEntry) -> list[str]:
    verdict = build_verdict(run.result, run.training)
    lines = [
        f"- **{md_escape(line.subject)}**: {md_escape(line.text)}" if line.subject else f"- {md_escape(line.text)}"
        for line in verdict.headline
    ]
    if verdict.details:
        lines += ["", "<details><summary>Every comparison in full</summary>", ""]
        lines += [f"- {md_escape(d)}" for d in verdict.details]
        lines += ["", "</details>"]
    return lines + [""]


def _summary_lines(result: RunResult) -> list[str]:
    columns = summary_columns(result)
    rows = summary_rows(result)
    models = list(rows)
    if not models:
        return ["No model finished evaluating in this run.", ""]
    body = []
    for column in columns:
        best = best_models(rows, column)
        arrow = {True: " ↑", False: " ↓", None: ""}[column.higher_is_better]
        cells = []
        for model in models:
            text = md_escape(format_cell(rows[model].get(column.key), column))
            cells.append(f"**{text}**" if model in best else text)
        body.append([md_escape(column.label) + arrow] + cells)
    notes = prompted_summary_notes(result.stats.prompts if result.stats is not None else None)
    return (
        _table(["metric"] + [md_escape(m) for m in models], body)
        + [md_escape(n) for n in notes]
        + ([""] if notes else [])
    )


def _details_lines(
    run: RunEntry, index: int, styles: Mapping[str, ModelStyle], folder: str, files: dict[str, bytes]
) -> list[str]:
    result = run.result
    lines: list[str] = []
    comparisons = comparison_rows(result)
    if comparisons:
        lines += ["#### Paired comparisons", ""]
        lines += _table(list(comparisons[0]), [[md_escape(v) for v in row.values()] for row in comparisons])
        lines += [md_escape(comparison_note(result)), ""]
    lines += _where_lines(result, index, folder, files)
    lines += _prompt_lines(result)
    if sequential_lines(result):
        lines += ["#### Sequential evaluation", ""] + [f"{md_escape(line)}\n" for line in sequential_lines(result)]
        lines += _figure_lines(sequential_figures(result, f"run{index}", styles), folder, files)
    speed = speed_rows(result)
    if speed and result.speed is not None:
        lines += ["#### Speed and memory", ""]
        lines += _table(list(speed[0]), [[md_escape(v) for v in row.values()] for row in speed])
        lines += [md_escape(speed_note(result.speed)), ""]
        warnings = speed_warnings(result.speed)
        lines += [f"> ⚠ {md_escape(w)}" for w in warnings] + ([""] if warnings else [])
    lines += _endpoint_lines(result)
    if run.training is not None:
        training = training_rows(run.training)
        lines += ["#### Training", ""]
        lines += _table(list(training[0]), [[md_escape(v) for v in row.values()] for row in training])
    figures = run_figures(run, index, styles)
    lines += _figure_lines([f for f in figures if f.section != "summary"], folder, files)
    if len(result.dataset.label_names) >= 3:
        lines += ["#### Most confused classes", ""]
        rows = [
            [md_escape(m.name), md_escape(c.true), md_escape(c.predicted), str(c.count), f"{c.share:.0%}"]
            for m in result.models
            if m.quality is not None
            for c in top_confusions(
                m.quality.confusion_matrix, m.quality.confusion_labels or result.dataset.label_names, limit=5
            )
        ]
        lines += _table(["model", "true", "predicted as", "examples", "of the class"], rows)
    return lines


def _prompt_lines(result: RunResult) -> list[str]:
    """A model asked with several prompts: the sentences, each prompt's accuracy, the pooled comparisons."""
    rows = prompt_rows(result)
    if not rows:
        return []
    lines = [f"#### {PROMPTS_TITLE}", ""] + [f"{md_escape(line)}\n" for line in prompt_lines(result)]
    lines += _table(list(rows[0]), [[md_escape(v) for v in row.values()] for row in rows])
    pools = pool_rows(result)
    if pools:
        lines += _table(list(pools[0]), [[md_escape(v) for v in row.values()] for row in pools])
        lines += [md_escape(prompt_note(result)), ""]
    return lines


def _endpoint_lines(result: RunResult) -> list[str]:
    """Per LLM: its answers and tokens (an endpoint's requests, cost and latency); its first unparseable answers."""
    lines: list[str] = []
    for e in endpoint_blocks(result):
        lines += [f"#### Answers of {md_escape(e.title)}", ""] + [f"- {md_escape(line)}" for line in e.lines]
        lines.append("")
        if e.unparseable:
            lines += [f"Unparseable answers of {md_escape(e.model)} (each counts as a wrong answer):", ""]
            lines += _table(
                ["dataset row", "input", "gold label", "raw answer"],
                [
                    [md_escape(r[k]) for k in ("dataset row", "input", "gold label", "raw answer")]
                    for r in e.unparseable
                ],
            )
            lines += [md_escape(e.more), ""] if e.more else []
    return lines


def _where_lines(result: RunResult, index: int, folder: str, files: dict[str, bytes]) -> list[str]:
    """The slices table and the disagreeing examples (image thumbnails written beside the Markdown)."""
    lines: list[str] = []
    slices = slice_rows(result)
    if slices:
        lines += ["#### Where the models differ: slices", ""]
        lines += _table([md_escape(h) for h in slices[0]], [[md_escape(v) for v in row.values()] for row in slices])
        lines += [md_escape(slices_note(result)), ""]
    blocks = disagreement_blocks(result)
    if blocks:
        lines += [
            "#### Where the models differ: examples",
            "",
            md_escape(
                f"Examples exactly one of two models got right; every one of them is in "
                f"{DISAGREEMENTS_FILE} beside the results."
            ),
            "",
        ]
    for b, block in enumerate(blocks):
        lines += [f"**{md_escape(block.title)}**", ""]
        if not block.rows:
            continue
        body = []
        for row in block.rows:
            shown = md_escape(row.input) if row.input else "—"
            if row.thumbnail:
                name = f"run{index}-disagree-{b}-{row.rank}.jpg"
                files[name] = base64.b64decode(row.thumbnail.split(",", 1)[1])
                shown = f"![{md_escape(row.example)}]({folder}/{name})"
            body.append(
                [
                    str(row.rank),
                    shown,
                    md_escape(row.true_label),
                    md_escape(row.prediction_a),
                    md_escape(row.prediction_b),
                    md_escape(row.gap),
                    md_escape(row.example),
                ]
            )
        lines += _table(
            ["#", "input", "true", md_escape(block.model_a), md_escape(block.model_b), "gap", "example"], body
        )
    return lines


def render_markdown(
    results: RunResult | Sequence[RunResult] | MergedRuns,
    *,
    image_folder: str = "report_files",
    predictions: Predictions | Sequence[Predictions | None] | None = None,
    title: str | None = None,
) -> tuple[str, dict[str, bytes]]:
    """The Markdown text and the PNG charts it links to.

    Parameters
    ----------
    results : RunResult, sequence of RunResult, or MergedRuns
    image_folder : str
        Folder (relative to the Markdown file) the images are linked from.
    predictions : Predictions or sequence, optional
    title : str, optional

    Returns
    -------
    text : str
    images : dict of str to bytes
        File name inside ``image_folder`` → PNG bytes.
    """
    merged = as_merged(results, predictions=predictions)
    styles = report_styles(merged)
    files: dict[str, bytes] = {}
    several = len(merged.runs) > 1
    lines = [f"# {md_escape(title or report_title(merged))}", ""]
    for warning in merged.warnings:
        lines += [f"> ⚠ {md_escape(warning)}", ""]
    lines += ["## Verdict", ""]
    for run in merged.runs:
        if several:
            lines += [f"### {md_escape(run.label)}", ""]
        lines += _verdict_lines(run)
    lines += ["## Summary", ""]
    if several:
        across = across_runs_rows([(r.label, g.title, r.result) for g in merged.groups for r in g.runs])
        lines += ["### Across runs", ""]
        lines += _table(list(across[0]), [[md_escape(v) for v in row.values()] for row in across])
    for index, run in enumerate(merged.runs, start=1):
        if several:
            lines += [f"### {md_escape(run.label)}", ""]
        lines += [md_escape(dataset_line(run.result)), ""] + _summary_lines(run.result)
        lines += _figure_lines(
            [f for f in run_figures(run, index, styles) if f.section == "summary"], image_folder, files
        )
    overview = _figure_lines(overview_figures(merged, styles), image_folder, files)
    if overview:
        lines += ["## Trade-off", ""] + overview
    lines += ["## Details", ""]
    for index, run in enumerate(merged.runs, start=1):
        lines += [f"### {md_escape(run.label)}", ""] + _details_lines(run, index, styles, image_folder, files)
    lines += ["## Environment", ""]
    for group in merged.groups:
        lines += [f"### {md_escape(group.title)}", "", "Runs: " + ", ".join(md_escape(r.label) for r in group.runs), ""]
        lines += _table(["", "value"], [[md_escape(k), md_escape(v)] for k, v in environment_rows(group.environment)])
    return "\n".join(lines).rstrip() + "\n", files


def write_markdown(
    results: RunResult | Sequence[RunResult] | MergedRuns,
    path: str | Path,
    *,
    predictions: Predictions | Sequence[Predictions | None] | None = None,
    title: str | None = None,
) -> Path:
    """Write ``path`` and its charts into ``<name>_files/`` beside it; returns the path.

    Examples
    --------
    >>> write_markdown(result, "runs/sst2/report.md")   # doctest: +SKIP
    PosixPath('runs/sst2/report.md')
    """
    path = Path(path)
    folder = f"{path.stem}_files"
    text, files = render_markdown(results, image_folder=folder, predictions=predictions, title=title)
    for name, data in files.items():
        write_bytes_atomic(path.parent / folder / name, data)
    write_text_atomic(path, text)
    return path
