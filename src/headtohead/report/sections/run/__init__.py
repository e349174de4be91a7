"""A run's report document (one run, or several merged): verdict, summary, trade-off, details, environment.

The details of each run are the sections of :mod:`headtohead.report.sections.run.details`: one
module per section, each with its place (``ORDER``) and a ``build(view)`` returning its blocks;
the package finds them, so a new section is its module (and its rows and words), nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from types import ModuleType

from headtohead.report.document import Block, Document, Facts, Fold, Line, Lines, Paragraph, Section
from headtohead.report.figures import overview_figures, report_styles
from headtohead.report.merge import MergedRuns, as_merged
from headtohead.report.rows.summary import environment_rows
from headtohead.report.sections.run import details as _details_package
from headtohead.report.sections.run.summary import across_runs_table, summary_blocks, summary_table
from headtohead.report.sections.run.view import RunView, as_figures, dataset_line, report_title
from headtohead.report.words.decision import decision_lines
from headtohead.report.words.missing import missing_sentence
from headtohead.report.words.quality import verdict_lines as quality_sentences
from headtohead.report.words.speed import speed_verdict_lines
from headtohead.report.words.verdict import Verdict, build_verdict
from headtohead.results.predictions import Predictions
from headtohead.results.records import RunResult
from headtohead.results.training import TrainingSummary

__all__ = ["run_document", "run_brief", "terminal_document", "detail_sections", "verdict_lines", "run_views"]


def verdict_lines(verdict: Verdict) -> Lines:
    """A verdict's headline as a list of sentences."""
    return Lines(tuple(Line(v.text, v.subject, v.kind) for v in verdict.headline), style="headline")


def _verdict_blocks(view: RunView) -> list[Block]:
    verdict = build_verdict(view.result, view.run.training)
    blocks: list[Block] = [verdict_lines(verdict)]
    if verdict.details:
        blocks.append(Fold("Every comparison in full", (Lines(tuple(Line(d) for d in verdict.details)),)))
    return blocks


def _per_run(views: Sequence[RunView], key: str, build: Callable[[RunView], list[Block]]) -> list[Block]:
    """The blocks of every run, each under its own heading when the report holds several."""
    if len(views) == 1:
        return build(views[0])
    return [Section(f"{v.anchor}-{key}", v.run.label, tuple(build(v)), subtitle=v.machine) for v in views]


def _modules() -> list[ModuleType]:
    names = [m.name for m in pkgutil.iter_modules(_details_package.__path__)]
    found = [importlib.import_module(f"{_details_package.__name__}.{name}") for name in names]
    return sorted(found, key=lambda module: int(module.ORDER))


def detail_sections(view: RunView) -> list[Block]:
    """Every detail section of one run, in their order."""
    blocks: list[Block] = []
    for module in _modules():
        blocks += module.build(view)
    return blocks


def _details(view: RunView) -> Section:
    result = view.result
    facts = [("data", dataset_line(result))]
    if view.run.source is not None:
        facts.append(("results", str(view.run.source)))
    facts.append(("created", result.created_at))
    title = f"Details: {view.run.label}" if view.several else "Details"
    return Section(view.anchor, title, (Facts(tuple(facts)), *detail_sections(view)))


def _environment(merged: MergedRuns) -> Section:
    blocks: list[Block] = []
    for i, group in enumerate(merged.groups, start=1):
        runs = Paragraph("Runs: " + ", ".join(r.label for r in group.runs), "muted")
        blocks.append(Section(f"machine{i}", group.title, (runs, Facts(tuple(environment_rows(group.environment))))))
    return Section("environment", "Environment", tuple(blocks))


def _subtitle(merged: MergedRuns) -> str:
    runs = merged.runs
    if len(runs) == 1:
        result = runs[0].result
        names = ", ".join(m.name for m in result.models)
        return f"{len(result.models)} model(s): {names} · {dataset_line(result)}"
    return f"{len(runs)} runs on {len(merged.groups)} machine(s): " + ", ".join(r.label for r in runs)


def run_views(merged: MergedRuns) -> list[RunView]:
    """Every run of a report as its sections see it, numbered from 1, group after group."""
    styles = report_styles(merged)
    several = len(merged.runs) > 1
    views, index = [], 0
    for group in merged.groups:
        for run in group.runs:
            index += 1
            views.append(RunView(run, index, styles, several, group.title))
    return views


def run_document(
    results: RunResult | Sequence[RunResult] | MergedRuns,
    *,
    predictions: Predictions | Sequence[Predictions | None] | None = None,
    title: str | None = None,
) -> Document:
    """The whole report of one run or several: what every file format draws.

    Parameters
    ----------
    results : RunResult, sequence of RunResult, or MergedRuns
    predictions : Predictions or sequence, optional
        Per-example predictions (reliability diagrams when a result has no statistics).
    title : str, optional
        Defaults to the run name(s).

    Returns
    -------
    Document
        Sections ``warnings`` (when any), ``verdict``, ``summary``, ``overview`` (when speed was
        measured), ``run1`` … (the details of each run) and ``environment``.

    Examples
    --------
    >>> document = run_document(headtohead.load_result("runs/sst2/results.json"))   # doctest: +SKIP
    >>> [s.key for s in document.sections]                                           # doctest: +SKIP
    ['verdict', 'summary', 'overview', 'run1', 'environment']
    """
    merged = as_merged(results, predictions=predictions)
    views = run_views(merged)
    sections: list[Section] = []
    if merged.warnings or merged.notes:
        lines = [Line(w, kind="warning") for w in merged.warnings] + [Line(n) for n in merged.notes]
        warnings = Lines(tuple(lines), style="warnings")
        sections.append(Section("warnings", "Read with care", (warnings,), tone="warnings", nav=False))
    sections.append(Section("verdict", "Verdict", tuple(_per_run(views, "verdict", _verdict_blocks)), tone="verdict"))
    summary: list[Block] = []
    if len(views) > 1:
        note = "Each model's rows together, one per run: the same model measured on different machines or settings."
        summary += [Section("across", "Across runs", (across_runs_table(merged), Paragraph(note, "note")))]
    summary += _per_run(views, "summary", summary_blocks)
    sections.append(Section("summary", "Summary", tuple(summary)))
    overview = as_figures(overview_figures(merged, views[0].styles if views else {}))
    if overview:
        sections.append(Section("overview", "Trade-off", tuple(overview)))
    sections += [_details(v) for v in views]
    sections.append(_environment(merged))
    title = report_title(merged) if title is None else title
    return Document(title, _subtitle(merged), tuple(sections), colours=views[0].colours if views else {})


def run_brief(result: RunResult, *, training: TrainingSummary | None = None, subtitle: str = "") -> Document:
    """A run as a notebook shows it: the verdict's headline, the summary table and its notes, every comparison folded."""
    view = run_views(as_merged(result))[0]
    verdict = build_verdict(result, training)
    blocks: list[Block] = [verdict_lines(verdict)]
    table = summary_table(view)
    if table is not None:
        blocks += [table, *summary_blocks(view, notes_only=True)]
    if verdict.details:
        blocks.append(Fold("Every comparison in full", (Lines(tuple(Line(d) for d in verdict.details)),)))
    return Document(result.name, subtitle, (Section("run", result.name, tuple(blocks)),), colours=view.colours)


def terminal_document(result: RunResult) -> Document:
    """What ``h2h run`` prints: the summary table, the cascades' table, the speed and server tables, each LLM's
    answers, the verdict (with the decision across quality, speed and cost: who dominates whom, the front).

    The verdict is every comparison in full (the terminal has room for the sentences the report folds).
    """
    from headtohead.report.sections.run.details import answers, cascade, speed

    view = run_views(as_merged(result))[0]
    sections: list[Section] = []
    table = summary_table(view)
    if table is not None:
        sections.append(Section("summary", "Summary", (table,)))
    sections += [s for s in cascade.build(view) if isinstance(s, Section)]  # a run without a cascade: none
    sections += [s for s in speed.build(view, terminal=True) if isinstance(s, Section)]
    sections += [s for s in answers.build(view, terminal=True) if isinstance(s, Section)]
    lines = []
    if result.missing is not None and result.missing.allowed:  # not allowed: the run's last line says it
        lines.append(missing_sentence(result) or "")
    if result.stats is not None:
        lines += quality_sentences(result.stats)
    if result.speed is not None:
        lines += speed_verdict_lines(result.speed)
    if result.decision is not None:
        lines += decision_lines(result.decision)
    if lines:
        sections.append(Section("verdict", "Verdict", (Lines(tuple(Line(t) for t in lines), style="headline"),)))
    return Document(result.name, dataset_line(result), tuple(sections), colours=view.colours)
