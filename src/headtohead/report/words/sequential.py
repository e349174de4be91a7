"""The words of a sequential run (``h2h run --until-decided``).

Every pair's verdict sentence says how many of the examples were used and what the anytime-valid
test decided (:func:`with_sequential`, stored in ``results.json``), in place of the fixed-sample
verdict: the sequential test decides the pair whether the run stopped early or the data ran out;
the reports add a short section (:func:`sequential_lines`) and a chart of each pair's
confidence sequence and e-values narrowing to the decision
(:func:`headtohead.report.plots_sequential.sequential_figures`).
Records are :class:`~headtohead.results.sequential.SequentialRecord`; the test is
:mod:`headtohead.stats.sequential`.
"""

from __future__ import annotations

from collections.abc import Sequence

from headtohead.report.words.numbers import format_level, format_pp
from headtohead.report.words.slices import SEQUENTIAL_NOMINAL
from headtohead.results.comparison import StatsSummary
from headtohead.results.records import RunResult
from headtohead.results.sequential import SequentialRecord

__all__ = [
    "decision_phrase",
    "sequential_sentence",
    "sequential_headline",
    "with_sequential",
    "sequential_lines",
    "decision_at",
    "level_words",
]


def decision_phrase(record: SequentialRecord) -> str:
    """What the test decided, in words.

    Examples
    --------
    ``logreg-20k is better than logreg-300``; ``a and b are equivalent within ±2.0 pp``.
    """
    a, b = record.model_a, record.model_b
    if record.decision == "a_better":
        return f"{a} is better than {b}"
    if record.decision == "b_better":
        return f"{b} is better than {a}"
    if record.decision == "equivalent":
        return f"{a} and {b} are equivalent within ±{format_pp(record.margin or 0.0, signed=False)} pp"
    if record.decision == "undecided":
        return f"no decision between {a} and {b}"
    return f"no decision yet between {a} and {b}"


def level_words(alpha: float) -> str:
    """A confidence level in words: ``alpha=0.05`` → ``95 %``."""
    return format_level(1 - alpha)


def sequential_sentence(record: SequentialRecord, *, family_alpha: float, n_pairs: int) -> str:
    """The sentence of a sequential pair.

    Parameters
    ----------
    record : SequentialRecord
    family_alpha : float
        ``stats.alpha`` of the run (split over the pairs).
    n_pairs : int
        Pairs tested at once (Bonferroni).

    Examples
    --------
    ``Stopped early after 100 of 872 examples (seeded random order, a look every 50): logreg-20k is
    better than logreg-300, decided at 100 (anytime-valid test, α = 0.05; 95 % confidence sequence of
    logreg-20k − logreg-300: +2.1…+31.9 pp). The gap on these 100 examples, +14.0 pp, is biased away
    from 0 by the early stop, and fixed-sample tests and intervals of a stopped sample are not valid:
    the sequential decision and confidence sequence carry the error guarantee.``
    """
    used, available = record.examples_used, record.examples_available
    split = f" = {family_alpha:g} over {n_pairs} pairs, Bonferroni" if n_pairs > 1 else ""
    final = record.final
    interval = ""
    if final is not None:
        interval = (
            f"; {level_words(record.alpha)} confidence sequence of {record.model_a} − {record.model_b}: "
            f"{format_pp(final.low)}…{format_pp(final.high)} pp"
        )
    decided = f", decided at {final.decided_at:,}" if final is not None and final.decided_at is not None else ""
    tested = f"(anytime-valid test, α = {record.alpha:.3g}{split}{interval})"
    if used < available:
        head = (
            f"Stopped early after {used:,} of {available:,} examples (seeded random order, a look every "
            f"{record.chunk_size:,})"
        )
        gap = f", {format_pp(final.gap)} pp," if final is not None else ""
        tail = (
            f" The gap on these {used:,} examples{gap} is biased away from 0 by the early stop, and fixed-sample "
            f"tests and intervals of a stopped sample are not valid: the sequential decision and confidence "
            f"sequence carry the error guarantee."
        )
    else:
        head = f"Sequential evaluation used all {available:,} examples (a look every {record.chunk_size:,})"
        gap = f" is {format_pp(final.gap)} pp" if final is not None else ""
        tail = (
            f" The gap on all {available:,} examples{gap}; a fixed-sample test of them is not valid after "
            f"{_interim_looks(record)} interim looks, so the sequential decision stands for the run."
        )
    return f"{head}: {decision_phrase(record)}{decided} {tested}.{tail}"


def _interim_looks(record: SequentialRecord) -> str:
    """The looks before the last one, as a count: ``"17"``, ``"1"``."""
    return f"{max(len(record.steps) - 1, 0):,}"


def sequential_headline(record: SequentialRecord, *, family_alpha: float, n_pairs: int) -> tuple[str | None, str]:
    """A stopped pair's headline: ``(subject, text)`` from the anytime-valid decision and confidence sequence.

    Examples
    --------
    ``("logreg-20k", "better than logreg-300, decided after 100 of 872 examples by an anytime-valid test
    (α = 0.05; 95 % confidence sequence +2.1…+31.9 pp; the stopped estimate, +14.0 pp, is biased away from 0)")``
    """
    final = record.final
    split = f" = {family_alpha:g} over {n_pairs} pairs" if n_pairs > 1 else ""
    estimate = (
        f"the stopped estimate, {format_pp(final.gap)} pp, is biased away from 0"
        if final is not None and record.examples_used < record.examples_available
        else f"observed gap on all {record.examples_available:,} examples {format_pp(final.gap)} pp"
        if final is not None
        else ""
    )
    sequence = (
        f"; {level_words(record.alpha)} confidence sequence {format_pp(final.low)}…{format_pp(final.high)} pp; "
        f"{estimate}"
        if final is not None
        else ""
    )
    when = (
        f"after {final.decided_at:,} of {record.examples_available:,} examples"
        if final is not None and final.decided_at is not None
        else f"after {record.examples_used:,} of {record.examples_available:,} examples"
    )
    how = f"by an anytime-valid test (α = {record.alpha:.3g}{split}{sequence})"
    a, b = record.model_a, record.model_b
    if record.decision in ("a_better", "b_better"):
        winner, loser = (a, b) if record.decision == "a_better" else (b, a)
        return winner, f"better than {loser}, decided {when} {how}"
    return None, f"{decision_phrase(record)}, {when} {how}"


def with_sequential(summary: StatsSummary, records: Sequence[SequentialRecord]) -> StatsSummary:
    """``summary`` with each sequential pair's sentence in place of the fixed-sample verdict.

    Whether the run stopped early or used every example, the sequential test decided the pair
    (:func:`headtohead.stats.stopped.decided_by_sequential_tests`): a fixed-sample p-value after
    interim looks is not valid, so no verdict quotes one beside the sequential decision, and every
    significant slice's sentence starts with :data:`~headtohead.report.words.slices.SEQUENTIAL_NOMINAL`.
    """
    by_pair = {frozenset((r.model_a, r.model_b)): r for r in records}
    comparisons = []
    for comparison in summary.comparisons:
        record = by_pair.get(frozenset((comparison.model_a, comparison.model_b)))
        if record is not None:
            sentence = sequential_sentence(record, family_alpha=summary.settings.alpha, n_pairs=len(records))
            text = f"{comparison.model_a} vs {comparison.model_b}: {sentence}"
            comparison = comparison.model_copy(update={"verdict": text.strip()})
        comparisons.append(comparison)
    update: dict[str, object] = {"comparisons": comparisons, "sequential": list(records)}
    if summary.slices is not None and records:  # every slice test came after the interim looks: nominal
        update["slices"] = summary.slices.model_copy(
            update={
                "slices": [
                    r.model_copy(
                        update={
                            "pairs": [
                                p.model_copy(update={"verdict": SEQUENTIAL_NOMINAL + p.verdict}) if p.verdict else p
                                for p in r.pairs
                            ]
                        }
                    )
                    for r in summary.slices.slices
                ]
            }
        )
    return summary.model_copy(update=update)


def sequential_lines(result: RunResult) -> list[str]:
    """The paragraph of a report's sequential section; empty when every example was evaluated as usual."""
    records = result.stats.sequential if result.stats is not None else None
    if not records:
        return []
    first = records[0]
    used, available = first.examples_used, first.examples_available
    stop = (
        "every pair was decided"
        if all(r.decision in ("a_better", "b_better", "equivalent") for r in records)
        else "the data ran out"
        if used == available
        else "the run stopped"
    )
    margin = f", or shown equivalent within ±{format_pp(first.margin, signed=False)} pp" if first.margin else ""
    lines = [
        (
            f"Evaluated with --until-decided: examples in a seeded random order (seed {first.order_seed}), "
            f"a look every {first.chunk_size:,}; each pair stops once an anytime-valid betting test calls "
            f"one model better{margin}. The run used {used:,} of {available:,} examples ({stop})."
        )
    ]
    lines += [f"{r.model_a} vs {r.model_b}: {decision_phrase(r)}" + _decided_after(r) for r in records]
    return lines


def _decided_after(record: SequentialRecord) -> str:
    decided = decision_at(record)
    return f" after {decided:,} examples." if decided is not None else "."


def decision_at(record: SequentialRecord) -> int | None:
    """The number of examples at which the pair was decided, or ``None``."""
    return record.final.decided_at if record.final is not None else None
