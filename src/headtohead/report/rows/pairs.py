"""The table of pairs every report shows: accuracy and macro-F1 differences with their intervals, the test, p-values."""

from __future__ import annotations

from headtohead.metrics import CATALOGUE
from headtohead.report.words.numbers import format_p, format_pp
from headtohead.results.comparison import MetricDifference
from headtohead.results.records import RunResult

__all__ = ["comparison_rows", "comparison_note"]


def comparison_rows(result: RunResult) -> list[dict[str, str]]:
    """One row per pair of models: accuracy difference with its interval, the test and its p-values."""
    if result.stats is None:
        return []
    rows = []
    for c in result.stats.comparisons:
        diffs = {d.metric: d for d in c.differences}
        acc = diffs.get("accuracy")
        f1 = diffs.get("f1_macro")
        rows.append(
            {
                "pair": f"{c.model_a} − {c.model_b}",
                "accuracy Δ (pp)": format_pp(c.effect) + _pp_interval(acc),
                "macro-F1 Δ (pp)": format_pp(f1.difference) + _pp_interval(f1) if f1 else "—",
                **{_picked_header(m): _picked_cell(m, diffs.get(m)) for m in result.stats.settings.metrics},
                "test": c.test,
                "p": format_p(c.p_value).replace("= ", ""),
                "Holm p": format_p(c.p_adjusted).replace("= ", ""),
                "discordant": f"{c.table.discordant} of {c.table.n}",
                "detectable gap": (
                    f"{format_pp(c.minimum_detectable_effect, signed=False)} pp"
                    if c.minimum_detectable_effect is not None
                    else "—"
                ),
                "significant": f"yes: {c.winner}" if c.significant and c.winner else "yes" if c.significant else "no",
            }
        )
    return rows


def _picked_header(name: str) -> str:
    metric = CATALOGUE[name]
    return f"{metric.label} Δ" + (" (pp)" if metric.scale == "share" else "")


def _picked_cell(name: str, diff: MetricDifference | None) -> str:
    """A picked metric's difference with its interval; "not available" without probabilities."""
    if diff is None:
        return "not available"
    if CATALOGUE[name].scale == "share":
        return format_pp(diff.difference) + _pp_interval(diff)
    interval = (
        f" ({diff.ci_low:+.3f}…{diff.ci_high:+.3f})"
        if diff.ci_low is not None and diff.ci_high is not None
        else " (no interval)"
    )
    answered = " on answered rows" if diff.on_answered_rows else ""
    return f"{diff.difference:+.3f}{interval}{answered}"


def _pp_interval(diff: MetricDifference | None) -> str:
    if diff is None:
        return ""
    if diff.ci_low is None or diff.ci_high is None:
        return " (no interval)"
    return f" ({format_pp(diff.ci_low)}…{format_pp(diff.ci_high)})"


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
        f"difference this many examples find with {s.power:.0%} probability (smaller ones less often).{groups}{looked}"
    )
