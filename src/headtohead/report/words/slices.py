"""The slice sentences: where one model of a pair is significantly better (after Holm over every slice test).

The slices table is :mod:`headtohead.report.rows.where`; the statistics :mod:`headtohead.stats.slices`.
"""

from __future__ import annotations

from headtohead.report.words.numbers import format_level, format_p, format_pp, format_range, interval_pp
from headtohead.results.slices import SlicePair, SliceResult, SliceSummary

__all__ = ["slice_phrase", "slice_sentence", "slice_clause", "slices_line", "SLICES_NAMED", "SEQUENTIAL_NOMINAL"]

#: Before every slice line of an ``--until-decided`` run, whether it stopped early or used every example: its
#: slice tests are fixed-sample tests read after the run's interim looks, so their p-values are nominal.
SEQUENTIAL_NOMINAL = (
    "Nominal only (an --until-decided run: these fixed-sample slice tests come after its interim looks "
    "and are not valid as decisions): "
)


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
            else f"in {_bin(r)}"
        )
        return f"where {r.column} {what}"
    bounds = [s.lower for s in (summary.slices if summary else []) if s.kind == "size" and s.lower is not None]
    lowest, highest = (min(bounds), max(bounds)) if bounds else (None, None)
    if r.lower == r.upper:
        return f"on inputs of {_bin(r)} {r.unit}"
    if r.lower == highest and len(bounds) > 1:
        return f"on inputs of {format_range(r.lower or 0.0, r.lower or 0.0)} {r.unit} or more"
    if r.lower == lowest and len(bounds) > 1:
        return f"on inputs of up to {format_range(r.upper or 0.0, r.upper or 0.0)} {r.unit}"
    return f"on inputs of {_bin(r)} {r.unit}"


def _bin(result: SliceResult) -> str:
    """A bin's range written by the formatter from its bounds (the stored label is the slice's name in the record)."""
    if result.lower is None or result.upper is None:
        return result.label
    return format_range(result.lower, result.upper)


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
        f"({format_level(pair.confidence)} CI {interval_pp(low, high)}, {result.n_examples} examples), "
        f"Holm p {format_p(pair.p_adjusted)}{tests}"
    )
