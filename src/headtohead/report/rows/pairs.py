"""The pairs of a run as typed rows: accuracy and macro-F1 differences with their intervals, the test, p-values.

Read by the pairs section (:mod:`headtohead.report.sections.run.details.pairs`); the p-value and
MLflow columns keep their keys (``accuracy_difference``, ``mcnemar_p``, ``holm_p``).
"""

from __future__ import annotations

from headtohead.metrics import CATALOGUE
from headtohead.report.document import Cell, Column, Row, text_cell
from headtohead.report.words.numbers import format_p
from headtohead.results.comparison import MetricDifference
from headtohead.results.records import RunResult

__all__ = ["comparison_columns", "comparison_rows", "comparison_note"]


def comparison_columns(result: RunResult) -> list[Column]:
    """The columns of the pairs table (the picked metrics' differences after accuracy and macro-F1)."""
    picked = [
        Column(
            f"{m}_difference",
            f"{CATALOGUE[m].label} Δ" + (" (pp)" if CATALOGUE[m].scale == "share" else ""),
            "pp" if CATALOGUE[m].scale == "share" else "signed",
        )  # fmt: skip
        for m in (result.stats.settings.metrics if result.stats is not None else [])
    ]
    return [
        Column("pair", "pair", "text", priority=0),
        Column("accuracy_difference", "accuracy Δ (pp)", "pp", priority=0),
        Column("f1_macro_difference", "macro-F1 Δ (pp)", "pp"),
        *picked,
        Column("test", "test", "text", priority=3),
        Column("mcnemar_p", "p", "p"),
        Column("holm_p", "Holm p", "p", priority=0),
        Column("discordant", "discordant", "text", priority=2),
        Column("detectable_gap", "detectable gap (pp)", "points", priority=2),
        Column("significant", "significant", "text", priority=0),
    ]


def _difference(diff: MetricDifference | None) -> Cell:
    """A difference with its interval; "not available" without probabilities; "(no interval)" where none.

    A difference tested on its own (ROC AUC's DeLong test) carries its p-value after the interval:
    ``+0.092 (+0.010…+0.174) (DeLong p = 0.027)``.
    """
    if diff is None:
        return Cell(None, note="not available")
    words = ["on answered rows"] if diff.on_answered_rows else []
    if diff.method.startswith("delong") and diff.p_value is not None:
        words.append(f"DeLong p {format_p(diff.p_value)}")
    suffix = "; ".join(words) or None
    if diff.ci_low is None or diff.ci_high is None:
        return Cell(diff.difference, bare="no interval", suffix=suffix)
    return Cell(diff.difference, diff.ci_low, diff.ci_high, suffix=suffix)


def _delong_note(result: RunResult) -> str:
    """How a ROC AUC difference tested by DeLong reads (empty where none is)."""
    stats = result.stats
    if stats is None or not any(d.method.startswith("delong") for c in stats.comparisons for d in c.differences):
        return ""
    return (
        " ROC AUC: DeLong's interval and z-test of the paired difference (Sun & Xu's algorithm; with more than two "
        "classes, of the one-vs-rest macro AUC); its p-value is the difference's own, not adjusted over pairs."
    )


def comparison_rows(result: RunResult) -> list[Row]:
    """One row per pair of models."""
    if result.stats is None:
        return []
    rows = []
    for c in result.stats.comparisons:
        diffs = {d.metric: d for d in c.differences}
        accuracy = diffs.get("accuracy")
        cells = {
            "pair": text_cell(f"{c.model_a} − {c.model_b}"),
            "accuracy_difference": (
                Cell(c.effect, accuracy.ci_low, accuracy.ci_high)
                if accuracy is not None and accuracy.ci_low is not None and accuracy.ci_high is not None
                else Cell(c.effect, bare="no interval")
            ),
            "f1_macro_difference": _difference(diffs.get("f1_macro")) if "f1_macro" in diffs else Cell(),
            **{f"{m}_difference": _difference(diffs.get(m)) for m in result.stats.settings.metrics},
            "test": text_cell(c.test),
            "mcnemar_p": Cell(c.p_value),
            "holm_p": Cell(c.p_adjusted),
            "discordant": Cell(f"{c.table.discordant} of {c.table.n}", raw=c.table.discordant),
            "detectable_gap": Cell(c.minimum_detectable_effect),
            "significant": text_cell(
                f"yes: {c.winner}" if c.significant and c.winner else "yes" if c.significant else "no"
            ),
        }
        rows.append(Row(cells, name=f"{c.model_a}_vs_{c.model_b}"))
    return rows


def comparison_note(result: RunResult) -> str:
    """How to read the table of pairs: the interval and test, failures, groups, the detectable gap."""
    stats = result.stats
    if stats is None:
        return ""
    s = stats.settings
    groups = (
        f" Examples grouped by '{s.group_column}' ({s.n_groups:,} groups): every test and interval treats a "
        f"group as the independent unit."
        if s.group_column
        else ""
    )
    failures = (
        "A failure (no prediction) counts as a wrong answer."
        if s.failures == "counted as wrong"
        else "Examples without a prediction were left out (results of version 3)."
    )
    accuracy = (
        "Accuracy: Tango's score interval, the same statistic as the test (significant exactly when it excludes 0)"
        if s.failures == "counted as wrong"
        else "Accuracy: a paired bootstrap interval"
    )
    looked = (
        " With --until-decided, 'significant' is each pair's anytime-valid sequential decision; the p-values "
        "and intervals of this table are fixed-sample figures of the examples used, nominal only after interim "
        "looks."
        if stats.sequential
        else ""
    )
    family = (
        f"all pairs and the {len(stats.prompts.pools)} comparisons pooled over prompts ({stats.prompts.family_size} "
        f"comparisons of models; a prompted model's passes are in no pair)"
        if stats.prompts is not None and stats.prompts.family_size
        else "all pairs"
    )
    return (
        f"Δ = first model − second, in percentage points. {accuracy}; macro-F1: a paired bootstrap {s.ci_method} "
        f"interval ({s.n_resamples:,} resamples). McNemar: {s.mcnemar_rule}; p-values adjusted with "
        f"{s.multiple_comparisons} over {family}, α = {s.alpha:g}. {failures} Detectable gap: the accuracy "
        f"difference this many examples find with {s.power:.0%} probability (smaller ones less often).{groups}"
        f"{_delong_note(result)}{looked}"
    )
