"""The tables of a model asked with several prompts: each prompt's accuracy, and each comparison pooled over prompts."""

from __future__ import annotations

from headtohead.report.words.numbers import format_p, format_percent, format_pp, interval_pp
from headtohead.report.words.prompts import PROMPT_RULE, summary_note
from headtohead.results.passes import pass_label
from headtohead.results.prompts import PromptSummary
from headtohead.results.records import RunResult

__all__ = ["PROMPTS_TITLE", "prompt_rows", "pool_rows", "prompt_lines", "prompt_note", "prompted_summary_notes"]

#: The section's title in every report.
PROMPTS_TITLE = "Prompts as a source of noise"


def _summary(result: RunResult) -> PromptSummary | None:
    return result.stats.prompts if result.stats is not None else None


def prompt_rows(result: RunResult) -> list[dict[str, str]]:
    """One row per prompt of each prompted model: what it varies, its template as rendered (from the model's record:
    ``PassRecord.template``), its exact accuracy; the best marked as chosen."""
    summary = _summary(result)
    if summary is None:
        return []
    templates = {pass_label(m.name, p.key): p.template or p.source for m in result.models for p in m.passes}
    return [
        {
            "model": family.name,
            "pass": p.model,
            "prompt": p.prompt,
            "template": templates.get(p.model) or "—",
            "accuracy": format_percent(p.accuracy),
            "correct": f"{p.correct} of {p.n}",
            "note": "best: chosen after seeing these examples" if p.model == family.best else "",
        }
        for family in summary.families
        for p in family.prompts
    ]


def pool_rows(result: RunResult) -> list[dict[str, str]]:
    """One row per comparison pooled over prompts: the gap, its interval, p, how many prompts agree."""
    summary = _summary(result)
    if summary is None:
        return []
    return [
        {
            "pair": f"{p.model_a} − {p.model_b}",
            "prompts": f"{p.n_prompts_a} × {p.n_prompts_b}",
            "pooled accuracy Δ (pp)": f"{format_pp(p.estimate)} [{interval_pp(p.low, p.high)}]",
            "p": format_p(p.p_value).replace("= ", ""),
            "Holm p": format_p(p.p_adjusted).replace("= ", ""),
            "ahead (A / B)": f"{p.ahead_a} / {p.ahead_b} of {len(p.cells)}",
            "better by the paired test (A / B)": f"{p.better_a} / {p.better_b}",
            "significant": f"yes: {p.winner}" if p.winner else "no",
        }
        for p in summary.pools
    ]


def prompt_lines(result: RunResult) -> list[str]:
    """The section's sentences (stored with the numbers, :mod:`headtohead.report.words.prompts`)."""
    summary = _summary(result)
    return list(summary.sentences) if summary is not None else []


def prompt_note(result: RunResult) -> str:
    """How the pooled comparison is made (under its table)."""
    return PROMPT_RULE + "."


def prompted_summary_notes(summary: PromptSummary | None) -> list[str]:
    """Under the summary table: what a prompted model's column is (its mean over prompts, no pass)."""
    return [summary_note(family) for family in summary.families] if summary is not None else []
