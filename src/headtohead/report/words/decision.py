"""The words of one decision across quality, speed and cost: a sentence per pair, the front in sentences.

``"minilm dominates bert-base: as accurate (−0.4 pp, within 1 pp), 4.5× faster, 4.5× cheaper"``, or which
axis keeps it open. The numbers are ``results.decision``'s (``stats.dominance`` decided them).
"""

from __future__ import annotations

from headtohead.report.words.numbers import format_level, format_pp, format_probability, format_ratios, interval_pp
from headtohead.results.decision import AxisComparison, DecisionSummary, ModelFront, PairDominance

__all__ = [
    "pair_sentence",
    "front_sentences",
    "with_decision_sentences",
    "place_text",
    "decision_lines",
    "AXIS_WORDS",
    "NOT_MEASURED",
    "FRONT_TITLE",
    "FRONT_CAPTION",
]

#: Each lower-is-better axis: (what "lower" is called, the ratio's name).
AXIS_WORDS = {
    "latency": ("faster", "time ratio"),
    "cost": ("cheaper", "cost ratio"),
    "memory": ("lighter in memory", "memory ratio"),
}
#: What an axis reads when it was not measured.
NOT_MEASURED = "not measured"
#: The section's title.
FRONT_TITLE = "Quality, speed and cost together"
#: How to read the front's charts.
FRONT_CAPTION = (
    "Each model with both intervals (accuracy: Wilson, or over examples and runs for a model measured several ways; "
    "the other axis: over rounds, requests or examples); the models on the front joined, dominated models grey, "
    "each labelled with its P(on the front)."
)


def place_text(model: ModelFront) -> str:
    """``on the front``, ``dominated by a, b`` or ``undecided``."""
    if model.front == "dominated":
        return f"dominated by {', '.join(model.dominated_by)}"
    return "on the front" if model.front == "front" else "undecided"


def _times(ratio: float) -> str:
    """``0.222`` (a / b) → ``4.50×`` (how many times lower a is)."""
    return f"{format_ratios(1.0 / ratio)[0]}×"


def _pooled(part: AxisComparison) -> str:
    """``, mean over runs`` where a model of the pair was measured several ways (its gap is of means), else ``""``."""
    return f", mean over {part.method.split(' over ', 1)[1]}" if part.method.startswith("two-level") else ""


def _quality_part(part: AxisComparison, margin: float) -> str:
    gap = format_pp(part.estimate)
    if part.ci_low > 0:
        return f"more accurate ({gap} pp{_pooled(part)})"
    return f"as accurate ({gap} pp, within {format_pp(margin, signed=False)} pp{_pooled(part)})"


def _open_part(part: AxisComparison, margin: float, level: str) -> str:
    if part.axis == "quality":
        return (
            f"accuracy keeps it open ({format_pp(part.estimate)} pp{_pooled(part)}, {level} CI "
            f"{interval_pp(part.ci_low, part.ci_high)}, not shown within {format_pp(margin, signed=False)} pp)"
        )
    lower, name = AXIS_WORDS[part.axis]
    ratio, low, high = format_ratios(part.estimate, part.ci_low, part.ci_high)
    return f"{part.axis} keeps it open (not shown {lower}: {name} {ratio}, {level} CI {low}–{high})"


def pair_sentence(pair: PairDominance, margin: float, confidence: float) -> str:
    """Whether ``pair.model_a`` dominates ``pair.model_b``, in one sentence.

    Examples
    --------
    >>> from headtohead.results.decision import AxisComparison as A
    >>> p = PairDominance(model_a="minilm", model_b="bert-base", dominates=True, axes=[
    ...     A(axis="quality", estimate=-0.004, ci_low=-0.009, ci_high=0.001, method="tango-score", holds=True),
    ...     A(axis="latency", estimate=1 / 4.5, ci_low=0.2, ci_high=0.24, method="t", holds=True)])
    >>> pair_sentence(p, 0.01, 0.95)
    'minilm dominates bert-base: as accurate (−0.4 pp, within 1.0 pp), 4.50× faster'
    """
    level = format_level(confidence)
    if pair.dominates:
        parts = [
            _quality_part(a, margin) if a.axis == "quality" else f"{_times(a.estimate)} {AXIS_WORDS[a.axis][0]}"
            for a in pair.axes
        ]
        return f"{pair.model_a} dominates {pair.model_b}: {', '.join(parts)}"
    held = [a for a in pair.axes if not a.holds]
    return f"{pair.model_a} does not dominate {pair.model_b}: " + "; ".join(_open_part(a, margin, level) for a in held)


def front_sentences(summary: DecisionSummary) -> list[str]:
    """The front, the dominated and the undecided models, and the axes not measured, in sentences."""
    axes = ", ".join(summary.axes)
    where = f" ({summary.scenario})" if summary.scenario else ""
    level = format_level(1.0 - summary.alpha)
    lines = [f"Decided on {axes}{where}, each part on its {level} interval, read together (no further correction)."]
    front = [m for m in summary.models if m.front == "front"]
    dominated = [m for m in summary.models if m.front == "dominated"]
    undecided = [m for m in summary.models if m.front == "undecided"]
    if front:
        lines.append(
            "On the front: " + ", ".join(f"{m.name} (P(on the front) {format_probability(m.p_front)})" for m in front)
        )
    if dominated:
        lines.append(
            "Dominated: "
            + ", ".join(
                f"{m.name} (by {', '.join(m.dominated_by)}; P(on the front) {format_probability(m.p_front)})"
                for m in dominated
            )
        )
    if undecided:
        lines.append(
            "Undecided: " + ", ".join(f"{m.name} (P(on the front) {format_probability(m.p_front)})" for m in undecided)
        )
    for axis, models in summary.not_measured.items():
        lines.append(f"{axis.capitalize()}: {NOT_MEASURED} for {', '.join(models)}; the front stands on {axes}.")
    for name, why in summary.left_out.items():
        lines.append(f"{name}: not in the decision ({why}).")
    return lines


def with_decision_sentences(summary: DecisionSummary) -> DecisionSummary:
    """``summary`` with each pair's sentence and the front's sentences."""
    confidence = 1.0 - summary.alpha
    pairs = [
        p.model_copy(update={"sentence": pair_sentence(p, summary.quality_margin, confidence)}) for p in summary.pairs
    ]
    done = summary.model_copy(update={"pairs": pairs})
    return done.model_copy(update={"sentences": front_sentences(done)})


def decision_lines(summary: DecisionSummary) -> list[str]:
    """The verdict's lines of the decision: who dominates whom, and the front with P(on the front)."""
    front = [line for line in summary.sentences if line.startswith(("On the front:", "Undecided:"))]
    return [p.sentence for p in summary.pairs if p.dominates] + front
