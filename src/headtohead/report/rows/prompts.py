"""The tables of a model asked with several prompts, as typed rows: each prompt's accuracy, each pooled comparison."""

from __future__ import annotations

from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.words.prompts import PROMPT_RULE, summary_note
from headtohead.results.passes import pass_label
from headtohead.results.prompts import PromptSummary
from headtohead.results.records import RunResult

__all__ = [
    "PROMPTS_TITLE",
    "PROMPT_COLUMNS",
    "POOL_COLUMNS",
    "prompt_rows",
    "pool_rows",
    "prompt_lines",
    "prompt_note",
    "prompted_summary_notes",
]

#: The section's title in every report.
PROMPTS_TITLE = "Prompts as a source of noise"

PROMPT_COLUMNS = (
    Column("model", "model", "text", priority=0),
    Column("pass", "pass", "text"),
    Column("prompt", "prompt", "text", wrap=True),
    Column("template", "template", "text", wrap=True, priority=3),
    Column("accuracy", "accuracy", "percent", priority=0),
    Column("correct", "correct", "text"),
    Column("note", "note", "text", wrap=True),
)
POOL_COLUMNS = (
    Column("pair", "pair", "text", priority=0),
    Column("prompts", "prompts", "text"),
    Column("pooled_difference", "pooled accuracy Δ (pp)", "pp", priority=0),
    Column("p", "p", "p"),
    Column("p_adjusted", "Holm p", "p", priority=0),
    Column("ahead", "ahead (A / B)", "text"),
    Column("better", "better by the paired test (A / B)", "text"),
    Column("significant", "significant", "text", priority=0),
)


def _summary(result: RunResult) -> PromptSummary | None:
    return result.stats.prompts if result.stats is not None else None


def prompt_rows(result: RunResult) -> list[Row]:
    """One row per prompt of each prompted model: what it varies, its template as rendered (from the model's record:
    ``PassRecord.template``), its exact accuracy; the best marked as chosen."""
    summary = _summary(result)
    if summary is None:
        return []
    templates = {pass_label(m.name, p.key): p.template or p.source for m in result.models for p in m.passes}
    return [
        Row(
            {
                "model": text_cell(family.name),
                "pass": text_cell(p.model),
                "prompt": text_cell(p.prompt),
                "template": text_cell(templates.get(p.model) or None),
                "accuracy": Cell(p.accuracy),
                "correct": Cell(f"{p.correct} of {p.n}", raw=p.correct),
                "note": text_cell("best: chosen after seeing these examples" if p.model == family.best else ""),
            },
            subject=family.name,
        )
        for family in summary.families
        for p in family.prompts
    ]


def pool_rows(result: RunResult) -> list[Row]:
    """One row per comparison pooled over prompts: the gap, its interval, p, how many prompts agree."""
    summary = _summary(result)
    if summary is None:
        return []
    return [
        Row(
            {
                "pair": text_cell(f"{p.model_a} − {p.model_b}"),
                "prompts": text_cell(f"{p.n_prompts_a} × {p.n_prompts_b}"),
                "pooled_difference": Cell(p.estimate, p.low, p.high),
                "p": Cell(p.p_value),
                "p_adjusted": Cell(p.p_adjusted),
                "ahead": text_cell(f"{p.ahead_a} / {p.ahead_b} of {len(p.cells)}"),
                "better": text_cell(f"{p.better_a} / {p.better_b}"),
                "significant": text_cell(f"yes: {p.winner}" if p.winner else "no"),
            },
            name=f"{p.model_a}_vs_{p.model_b}",
        )
        for p in summary.pools
    ]


def prompt_lines(result: RunResult) -> list[str]:
    """The section's sentences (stored with the numbers, :mod:`headtohead.report.words.prompts`)."""
    summary = _summary(result)
    return list(summary.sentences) if summary is not None else []


def prompt_note(result: RunResult) -> str:
    """How the pooled comparison is made (under its table)."""
    return PROMPT_RULE[0].upper() + PROMPT_RULE[1:] + "."


def prompted_summary_notes(summary: PromptSummary | None) -> list[str]:
    """Under the summary table: what a prompted model's column is (its mean over prompts, no pass)."""
    return [summary_note(family) for family in summary.families] if summary is not None else []
