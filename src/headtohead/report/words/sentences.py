"""The sentences of a verdict: numbers for reading, speed pairs, slices, the plan (quality pairs: ``quality_sentences``).

Sign convention, stated in every sentence: a difference is written ``X − Y = …`` with the
model names, so no reader has to guess which way round it is. A pair is called better
only when McNemar's test is significant after Holm's adjustment; its interval (Tango's score
interval, the same statistic) then excludes 0. Otherwise the sentence says "no significant
difference", says so when the interval alone excludes 0 but Holm's adjustment over several
pairs does not, and gives the gap this many examples would detect with 80 % probability.
Failures are counted as wrong answers, and the sentence says how many there were. A speed
ratio names the faster model only when its t test survives Holm's adjustment over every speed
comparison of the run (pairs × scenarios), and says so when its interval alone excludes 1.

Every sentence is worded from the numbers of a record; the pipeline stores the sentences
beside the numbers (``Comparison.verdict``, ``SpeedComparison.verdict``) with
:func:`headtohead.report.words.quality.with_quality_sentences` and :func:`with_speed_sentences`. The headline of a report is
:mod:`headtohead.report.words.verdict`; the gate's paragraph :mod:`headtohead.report.words.gate`.
"""

from __future__ import annotations

from headtohead.report.words.numbers import format_p
from headtohead.report.words.server import server_lines, with_server_sentences
from headtohead.report.words.speed import (
    format_duration,
    format_percent,
    format_rate,
    format_ratios,
    holm_clause,
    speed_tests_phrase,
)
from headtohead.report.words.warnings import speed_warnings
from headtohead.results.slices import SlicePair, SliceResult, SliceSummary
from headtohead.results.speed import ScenarioRun, SpeedComparison, SpeedSummary
from headtohead.stats.power import SamplePlan

__all__ = [
    "format_pp",
    "format_p",
    "TEST_NAMES",
    "speed_sentence",
    "speed_verdict_lines",
    "with_speed_sentences",
    "plan_sentence",
    "interval_pp",
    "slice_phrase",
    "slice_sentence",
    "slice_clause",
    "slices_line",
    "SLICES_NAMED",
]

_MINUS = "\u2212"
#: How each McNemar variant is named in a sentence.
TEST_NAMES = {
    "mcnemar-score": "McNemar",
    "mcnemar-clustered": "clustered McNemar",
    "mcnemar-exact": "McNemar exact",
    "mcnemar-chi2": "McNemar χ²",
    "mcnemar-midp": "McNemar mid-p",
}


def format_pp(fraction: float, *, signed: bool = True) -> str:
    """A fraction as percentage points with one decimal (two below 0.1 pp): ``+1.2``, ``−0.3``.

    Examples
    --------
    >>> format_pp(0.012), format_pp(-0.003), format_pp(0.0), format_pp(0.024, signed=False)
    ('+1.2', '−0.3', '0.0', '2.4')
    """
    pp = 100.0 * fraction
    digits = 2 if 0 < abs(pp) < 0.1 else 1
    text = f"{abs(pp):.{digits}f}"
    if not signed or float(text) == 0.0:
        return text
    return ("+" if pp > 0 else _MINUS) + text


def interval_pp(low: float | None, high: float | None) -> str:
    """``+0.4…+2.0``, or ``no interval``."""
    return f"{format_pp(low)}…{format_pp(high)}" if low is not None and high is not None else "no interval"


def slice_phrase(result: SliceResult, summary: SliceSummary | None = None) -> str:
    """Which examples a slice holds, as words after "better": ``on class negative``, ``on inputs of 27 words or more``.

    Examples
    --------
    >>> from headtohead.results.slices import SliceResult
    >>> slice_phrase(SliceResult(kind="column", column="source", label="web", value="web", n_examples=3,
    ...                          accuracies=[]))
    'where source = web'
    """
    r = result
    if r.kind == "class":
        return f"on class {r.label}"
    if r.kind == "column":  # a value, a bin of a numeric column ("3–7"), "(missing)" or "(other: 12 values)"
        what = (
            f"= {r.value}"
            if r.value is not None
            else f"is {r.label.strip('()')}"
            if r.label.startswith("(")
            else f"in {r.label}"
        )
        return f"where {r.column} {what}"
    bounds = [s.lower for s in (summary.slices if summary else []) if s.kind == "size" and s.lower is not None]
    lowest, highest = (min(bounds), max(bounds)) if bounds else (None, None)
    if r.lower == r.upper:
        return f"on inputs of {r.label}"
    if r.lower == highest and len(bounds) > 1:
        return f"on inputs of {r.lower:g} {r.unit} or more"
    if r.lower == lowest and len(bounds) > 1:
        return f"on inputs of up to {r.upper:g} {r.unit}"
    return f"on inputs of {r.label}"


def slice_sentence(result: SliceResult, pair: SlicePair, summary: SliceSummary | None = None) -> str:
    """A significant slice in one sentence, or ``""`` when the pair is not significant on it.

    Examples
    --------
    ``roberta is better on inputs of 27 words or more: +4.1 pp over bert (95 % CI +1.2…+7.0, 212 examples),
    Holm p = 0.002 over 12 slice tests.``
    """
    clause = slice_clause(result, pair, summary)
    return f"{pair.winner} is {clause}." if clause else ""


#: Significant slices named in a pair's line of slices; the rest are counted (all are in the slices table).
SLICES_NAMED = 3


def slices_line(summary: SliceSummary, model_a: str, model_b: str, *, limit: int = SLICES_NAMED) -> str:
    """One pair's significant slices in one line, smallest Holm p first; ``""`` when there is none.

    Only slices significant after Holm's adjustment over every (slice, pair) test are named.

    Examples
    --------
    ``bert vs roberta by slice: roberta is better on inputs of 27 words or more (+4.1 pp, Holm p = 0.002);
    bert on class negative (+2.0 pp, Holm p = 0.03).``
    """
    found = sorted(
        (
            (r, p)
            for r in summary.slices
            for p in r.pairs
            if p.significant and p.winner is not None and (p.model_a, p.model_b) == (model_a, model_b)
        ),
        key=lambda item: (item[1].p_adjusted, -abs(item[1].difference)),
    )
    if not found:
        return ""
    parts, said = [], set()
    for r, p in found[:limit]:
        gap = p.difference if p.winner == p.model_a else -p.difference
        verb = "" if p.winner in said else " is better"
        parts.append(
            f"{p.winner}{verb} {slice_phrase(r, summary)} ({format_pp(gap)} pp, Holm p {format_p(p.p_adjusted)})"
        )
        said.add(p.winner)
    more = f"; {len(found) - limit} more in the slices table" if len(found) > limit else ""
    return f"{model_a} vs {model_b} by slice: " + "; ".join(parts) + more + "."


def slice_clause(result: SliceResult, pair: SlicePair, summary: SliceSummary | None = None) -> str:
    """:func:`slice_sentence` after "<winner> is" (a report's headline puts the winner first itself)."""
    if not pair.significant or pair.winner is None:
        return ""
    flip = pair.winner == pair.model_b
    loser = pair.model_a if flip else pair.model_b
    gap, low, high = (
        (-pair.difference, -pair.ci_high, -pair.ci_low) if flip else (pair.difference, pair.ci_low, pair.ci_high)
    )
    tests = f" over {summary.n_tests} slice tests" if summary is not None else ""
    return (
        f"better {slice_phrase(result, summary)}: {format_pp(gap)} pp over {loser} "
        f"({100 * pair.confidence:.0f} % CI {interval_pp(low, high)}, {result.n_examples} examples), "
        f"Holm p {format_p(pair.p_adjusted)}{tests}"
    )


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
    level = f"{c.confidence * 100:g} %"
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
    "time_budget": "time budget ran out before every ratio CI reached the target",
}


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
        lines.append(f"{run.scenario} (batch {run.batch_size}, {run.rounds} rounds; {_STOP_TEXT[run.stop_reason]}):")
        call = "batch" if run.batch_size > 1 else "call"
        for model in summary.models:
            timing = model.timing(run.scenario)
            if timing is not None:
                lines.append(
                    f"  {model.name}: median {format_duration(timing.per_batch.p50_s)}/{call}, "
                    f"{_rate(timing.throughput_per_s)} samples/s, "
                    f"repeat noise {format_percent(timing.repeat_noise)}"
                )
        lines.extend(f"  {c.verdict}" for c in run.comparisons)
    for model in summary.models:
        if model.time_window is not None:
            tw = model.time_window
            lines.append(
                f"time window: {model.name} processed {tw.samples:,} samples in "
                f"{format_duration(tw.elapsed_s)} "
                f"({_rate(tw.samples_per_s)}/s end to end)"
            )
    lines.extend(server_lines(summary))
    lines.extend(f"warning: {w}" for w in speed_warnings(summary))
    return lines


def _rate(per_s: float) -> str:
    return format_rate(per_s)


def _percent(fraction: float) -> str:
    """``0.9`` → ``90``, ``0.905`` → ``90.5``: as many decimals as the value needs (up to 3)."""
    return f"{100 * fraction:.3f}".rstrip("0").rstrip(".")


def plan_sentence(plan: SamplePlan, *, accuracy: float, delta: float) -> str:
    """The answer of ``h2h plan`` as one sentence.

    Parameters
    ----------
    plan : SamplePlan
        From :func:`headtohead.stats.power.plan_sample_size`.
    accuracy, delta : float
        The baseline accuracy and the gap it was planned for.

    Examples
    --------
    >>> from headtohead.stats.power import plan_sample_size
    >>> plan_sentence(plan_sample_size(0.90, 0.05, 0.10), accuracy=0.90, delta=0.05)  # doctest: +NORMALIZE_WHITESPACE
    'To detect a 5 pp accuracy difference at 90 % accuracy with 80 % power (α = 0.05, two-sided McNemar;
     assumed discordance 10 %) you need 291 examples; at 291 the McNemar test headtohead runs has
     80.1 % power (exact).'
    """
    p = plan
    if p.discordance_assumed:
        assumed = (
            f"assumed discordance {_percent(p.discordance)} %, i.e. independent "
            f"errors — models that err on the same examples need fewer; set --discordance"
        )
    else:
        assumed = f"assumed discordance {_percent(p.discordance)} %"
    test = f"α = {p.alpha:g}, two-sided McNemar"
    if p.n_comparisons > 1:
        test += (
            f" with Holm over {p.n_comparisons} pairs, power at its first step α/{p.n_comparisons} = {p.test_alpha:.3g}"
        )
    return (
        f"To detect a {_percent(delta)} pp accuracy difference at {_percent(accuracy)} % accuracy with "
        f"{_percent(p.target_power)} % power ({test}; {assumed}) you need {p.n:,} examples; "
        f"at {p.n:,} the McNemar test headtohead runs has {100 * p.power:.1f} % power (exact)."
    )
