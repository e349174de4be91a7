"""The speed sentences: each pair's speed verdict, stored as ``SpeedComparison.verdict``, and the terminal lines.

A speed ratio names the faster model only when its t test survives Holm's adjustment over every
speed comparison of the run (pairs × scenarios), and says so when its interval alone excludes 1.
The pipeline stores the sentences beside the numbers with :func:`with_speed_sentences`; the
Server scenario's sentences are :mod:`headtohead.report.words.server`.
"""

from __future__ import annotations

from headtohead.report.words.numbers import (
    format_duration,
    format_percent,
    format_rate,
    format_ratios,
    holm_clause,
    speed_tests_phrase,
)
from headtohead.report.words.server import capacity_lines, server_lines, with_server_sentences
from headtohead.report.words.warnings import speed_warnings
from headtohead.results.speed import ScenarioRun, SpeedComparison, SpeedSummary

__all__ = ["speed_sentence", "speed_verdict_lines", "stop_text", "with_speed_sentences"]


def speed_sentence(comparison: SpeedComparison) -> str:
    """One sentence for a pair: who is faster and by how much, or that the difference is not significant.

    ``comparison.ratio`` is time(a)/time(b): above 1 model b is faster. A model is called
    faster only when the record names it (Holm-adjusted p ≤ α over every speed comparison of
    the run); a ratio whose interval excludes 1 without surviving the adjustment is "not
    significant after Holm over N speed comparisons".

    Examples
    --------
    ``distil is 1.43× faster than bert (95 % CI 1.39–1.47, p < 0.001, Holm p < 0.001 over 6 speed comparisons)``;
    ``no significant difference between a and b after Holm over 6 speed comparisons (time ratio a/b 1.04,
    95 % CI 1.01–1.07, p = 0.02, Holm p = 0.12)``;
    ``no significant difference between a and b (time ratio a/b 1.01, 95 % CI 0.98–1.04, p = 0.45)``.
    """
    c = comparison
    name_a, name_b = c.model_a, c.model_b
    # an interval where the rounds stopped on the data is the anytime-valid sequence: say so
    level = f"{c.confidence * 100:g} %" + (" anytime-valid" if c.interval == "anytime" else "")
    tested = holm_clause(c.p_value, c.p_adjusted, c.n_speed_tests)
    tested = f", {tested}" if tested else ""
    if c.faster is not None and c.faster == name_b:
        ratio, low, high = format_ratios(c.ratio, c.ci_low, c.ci_high)
        return f"{name_b} is {ratio}× faster than {name_a} ({level} CI {low}–{high}{tested})"
    if c.faster is not None and c.faster == name_a:
        ratio, low, high = format_ratios(1 / c.ratio, 1 / c.ci_high, 1 / c.ci_low)
        return f"{name_a} is {ratio}× faster than {name_b} ({level} CI {low}–{high}{tested})"
    after = (
        f" after {speed_tests_phrase(c.n_speed_tests)}"
        if c.n_speed_tests and c.n_speed_tests > 1 and (c.ci_low > 1.0 or c.ci_high < 1.0)
        else ""
    )
    ratio, low, high = format_ratios(c.ratio, c.ci_low, c.ci_high)
    return (
        f"no significant difference between {name_a} and {name_b}{after} (time ratio {name_a}/{name_b} "
        f"{ratio}, {level} CI {low}–{high}{tested})"
    )


def with_speed_sentences(summary: SpeedSummary) -> SpeedSummary:
    """``summary`` with every speed comparison's ``verdict`` sentence written."""
    scenarios = [_scenario_with_sentences(run) for run in summary.scenarios]
    return with_server_sentences(summary.model_copy(update={"scenarios": scenarios}))


def _scenario_with_sentences(run: ScenarioRun) -> ScenarioRun:
    comparisons = [c.model_copy(update={"verdict": speed_sentence(c)}) for c in run.comparisons]
    return run.model_copy(update={"comparisons": comparisons})


_STOP_TEXT = {
    "minimums_met": "minimum rounds, iterations and seconds reached",
    "target_ci_reached": "every ratio CI within the target",
    "decided": "every ratio decided or within the target",
    "margin_decided": "every ratio CI within the target or decided against the margin",
    "time_budget": "time budget ran out before every ratio CI reached the target",
}


def stop_text(run: ScenarioRun) -> str:
    """Why a scenario's rounds stopped, with the precision asked for and reached when it stopped on the data.

    A stop on the decisions (``decided``; ``margin_decided`` in results of version 8 and older)
    names how each ratio was settled: the width reached is that of the ratios known to the
    precision only (a ratio decided faster or against the margin may be wider), and the level
    the decisions were read at, α split over the run's speed comparisons — so a ratio decided
    faster is one the verdict names faster, never "undecided". A budget spent says what the
    undecided ratios reached, and the budget (since version 9: what the quality pass took).

    Examples
    --------
    ``every ratio known to ±5 % (reached ±3.9 %)``; ``time budget ran out at ±7.2 % (±5 % asked for)``;
    ``every ratio settled: 1 faster; 1 known to ±5 % (widest ±3.9 %) — each decision read at 97.5 %, α split
    over the run's 2 speed comparisons``;
    ``undecided at ±7.2 % at 95 % (±5 % asked for): budget of 1.0 s spent (the quality pass took 0.1 s)``
    """
    if run.precision is None or run.precision_reached is None:
        return _STOP_TEXT[run.stop_reason]
    asked, reached = format_percent(run.precision), format_percent(run.precision_reached)
    if run.stop_reason == "time_budget":
        if run.budget_s is not None:
            return _budget_text(run, asked)
        return f"time budget ran out at ±{reached} (±{asked} asked for)"
    if run.stop_reason in ("margin_decided", "decided"):
        return _settled_text(run, asked)
    return f"every ratio known to ±{asked} (reached ±{reached})"


def _halfwidth(c: SpeedComparison) -> float:
    """A comparison's relative half-width as shown (the wider side of its interval around the ratio)."""
    return max(c.ci_high / c.ratio - 1.0, 1.0 - c.ci_low / c.ratio)


def _budget_text(run: ScenarioRun, asked: str) -> str:
    """A budget spent (version 9 on): what the undecided ratios reached, the decided ones, and the budget."""
    spent = f"budget of {format_duration(run.budget_s or 0.0)} spent"
    if run.quality_s is not None:
        spent += f" (the quality pass took {format_duration(run.quality_s)})"
    open_ = [c for c in run.comparisons if c.settled is None]
    widths = [_halfwidth(c) for c in open_]
    if not open_ or not all(w == w and w < float("inf") for w in widths):
        undecided = "undecided"
    else:
        level = format_percent(open_[0].confidence)
        undecided = f"undecided at ±{format_percent(max(widths))} at {level} (±{asked} asked for)"
    if len(open_) < len(run.comparisons):
        undecided = f"{len(open_)} {undecided}; {_settled_parts(run, asked)}"
    return f"{undecided}: {spent}"


def _settled_parts(run: ScenarioRun, asked: str) -> str:
    """How the settled ratios were settled: faster, known to the precision, against the margin."""
    parts = []
    faster = sum(c.settled == "faster" for c in run.comparisons)
    if faster:
        parts.append(f"{faster} faster")
    known = [c for c in run.comparisons if c.settled == "precision"]
    if known:
        parts.append(f"{len(known)} known to ±{asked} (widest ±{format_percent(max(map(_halfwidth, known)))})")
    margin = format_percent(run.margin) if run.margin is not None else ""
    beyond = sum(c.settled == "beyond_margin" for c in run.comparisons)
    if beyond:
        parts.append(f"{beyond} beyond the {margin} margin (a model faster by more than it)")
    within = sum(c.settled == "within_margin" for c in run.comparisons)
    if within:
        parts.append(f"{within} within the {margin} margin")
    return "; ".join(parts)


def _settled_text(run: ScenarioRun, asked: str) -> str:
    """A stop on the decisions: how each ratio was settled, and the level the decisions were read at."""
    if run.margin_confidence is None or run.margin_tests is None:
        # results of version 6 and older: the rule read each ratio's own interval, before Holm
        levels = sorted({format_percent(c.confidence) for c in run.comparisons})  # a stop on the margin has some
        return (
            f"every ratio known to ±{asked} or decided against the margin by its own {' / '.join(levels)} interval, "
            f"before Holm's adjustment (a rule of results of version 6 and older)"
        )
    split = f", α split over the run's {run.margin_tests} speed comparisons" if run.margin_tests > 1 else ""
    which = "decision" if run.stop_reason == "decided" else "margin decision"
    return (
        f"every ratio settled: {_settled_parts(run, asked)} — each {which} read at "
        f"{format_percent(run.margin_confidence)}{split}"
    )


def speed_verdict_lines(summary: SpeedSummary) -> list[str]:
    """Short lines for the terminal: per scenario, why it stopped and each pair's verdict; then warnings.

    Examples
    --------
    ``offline (batch 32, 12 rounds; every ratio CI within the target):``
    ``  bert: median 2.1 s/batch, 15.2 samples/s, repeat noise 4 %``
    ``  roberta is 1.43× faster than bert (95 % CI 1.39–1.47, p < 0.001)``
    """
    lines: list[str] = []
    for run in summary.scenarios:
        lines.append(f"{run.scenario} (batch {run.batch_size}, {run.rounds} rounds; {stop_text(run)}):")
        call = "batch" if run.batch_size > 1 else "call"
        for model in summary.models:
            timing = model.timing(run.scenario)
            if timing is not None:
                lines.append(
                    f"  {model.name}: median {format_duration(timing.per_batch.p50_s)}/{call}, "
                    f"{format_rate(timing.throughput_per_s)} samples/s, "
                    f"repeat noise {format_percent(timing.repeat_noise)}"
                )
        lines.extend(f"  {c.verdict}" for c in run.comparisons)
    for model in summary.models:
        if model.time_window is not None:
            tw = model.time_window
            lines.append(
                f"time window: {model.name} processed {tw.samples:,} samples in "
                f"{format_duration(tw.elapsed_s)} "
                f"({format_rate(tw.samples_per_s)}/s end to end)"
            )
    lines.extend(server_lines(summary))
    lines.extend(capacity_lines(summary.capacity) if summary.capacity is not None else [])
    lines.extend(f"warning: {w}" for w in speed_warnings(summary))
    return lines
