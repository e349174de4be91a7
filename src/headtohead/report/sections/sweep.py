"""A sweep's document: the recommendation, the table of every variant and batch size, the verdicts, the curves."""

from __future__ import annotations

from headtohead.report.document import Block, Document, Figure, Fold, Line, Lines, Paragraph, Section, Table
from headtohead.report.rows.sweep import sweep_columns, sweep_rows
from headtohead.report.words.sweep import sweep_level
from headtohead.results.sweep import SweepResult

__all__ = ["sweep_document", "sweep_terminal", "sweep_brief", "sweep_table", "sweep_figure_block"]


def sweep_table(result: SweepResult) -> Table:
    """Every variant and batch size (the intervals at the sweep's level)."""
    devices = ", ".join(sorted({m.device for m in result.models}))
    caption = f"Sweep {result.name} — {result.dataset.n_examples} examples, device {devices}"
    return Table("sweep", tuple(sweep_columns(sweep_level(result))), tuple(sweep_rows(result)), caption=caption)


def sweep_figure_block(result: SweepResult) -> Figure:
    """The curves: throughput and latency against batch size, each variant's accuracy against its parent."""
    from headtohead.report.plots_sweep import sweep_figure

    return Figure("sweep", "Sweep curves", "Throughput and p95 latency against batch size for every variant (the "
                  "parent in black); each variant's accuracy difference to its parent with its interval.",
                  lambda: sweep_figure(result))  # fmt: skip


def _verdicts(result: SweepResult) -> list[str]:
    return [c.quality.verdict for c in result.cells() if c.quality is not None]


def _speed(result: SweepResult) -> list[str]:
    return [f"{p.vs_parent.verdict} (batch {p.batch_size})" for c in result.cells() if not c.parent
            for p in c.points if p.vs_parent is not None]  # fmt: skip


def sweep_document(result: SweepResult) -> Document:
    """The sweep's report (``sweep.md``)."""
    env = result.environment
    facts = (
        f"{result.dataset.n_examples} examples of {result.dataset.source}; {env.cpu_model}, torch threads "
        f"{env.torch_threads}; headtohead {result.headtohead_version}, {result.created_at}."
    )
    blocks: list[Block] = [Paragraph(facts, "muted"), Lines((Line(result.recommendation.sentence),), style="headline"),
                           sweep_table(result)]  # fmt: skip
    sections = [Section("sweep", "Recommendation", tuple(blocks))]
    if _verdicts(result):
        sections.append(Section("quality", "Quality against the parent", (Lines(tuple(map(Line, _verdicts(result)))),)))
    if _speed(result):
        sections.append(Section("speed", "Speed against the parent", (Lines(tuple(map(Line, _speed(result)))),)))
    if result.warnings:
        sections.append(Section("notes", "Notes", (Lines(tuple(map(Line, result.warnings))),)))
    sections.append(Section("curves", "Curves", (sweep_figure_block(result),)))
    return Document(f"Sweep: {result.name}", "", tuple(sections))


def sweep_terminal(result: SweepResult) -> Document:
    """What ``h2h sweep`` prints: the table, each variant's verdict, the recommendation."""
    blocks: list[Block] = [sweep_table(result), Lines(tuple(map(Line, _verdicts(result))), style="headline"),
                           Lines((Line(result.recommendation.sentence),), style="headline")]  # fmt: skip
    return Document(result.name, "", (Section("sweep", "", tuple(blocks)),))


def sweep_brief(result: SweepResult, *, subtitle: str) -> Document:
    """A sweep as a notebook shows it: the recommendation, the table, the verdicts folded."""
    blocks: list[Block] = [Lines((Line(result.recommendation.sentence),), style="headline"), sweep_table(result)]
    blocks += [Paragraph(w, "note") for w in result.warnings]
    if _verdicts(result):
        blocks.append(Fold("Quality of each variant against its parent", (Lines(tuple(map(Line, _verdicts(result)))),)))
    return Document(f"sweep {result.name}", subtitle, (Section("sweep", result.name, tuple(blocks)),))
