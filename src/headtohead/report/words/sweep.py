"""A sweep in words: each variant's quality against its parent, the recommendation, the intervals' level.

The sentences are stored in ``sweep.json`` (``QualityVsParent.verdict``, ``Recommendation.sentence``);
the table is :mod:`headtohead.report.rows.sweep`, the document :mod:`headtohead.report.sections.sweep`.
"""

from __future__ import annotations

from collections.abc import Sequence

from headtohead.report.words.numbers import format_mib, format_ms, format_p, format_pp, format_rate, format_ratios
from headtohead.results.sweep import ModelSweep, QualityVsParent, Recommendation, SpeedPoint, SweepCell, SweepResult

__all__ = ["sweep_level", "pp", "variant_verdict", "recommendation_sentence"]


def pp(fraction: float, *, sign: bool = True) -> str:
    """An accuracy difference in percentage points (the one rule of :func:`~headtohead.report.words.numbers.format_pp`).

    Examples
    --------
    >>> pp(-0.003), pp(0.012), pp(0.0)
    ('−0.3', '+1.2', '0.0')
    """
    return format_pp(fraction, signed=sign)


def variant_verdict(name: str, parent: str, q: QualityVsParent) -> str:
    """One sentence on a variant's quality against its parent (stored as ``QualityVsParent.verdict``).

    Examples
    --------
    ``m[int8]: −0.3 pp accuracy vs m (95 % CI −0.9 to +0.2), McNemar p = 0.31, not significant; 3 of 872
    predictions changed; non-inferior at a 1.0 pp margin``
    """
    diff, low, high, p, p_adj = q.difference, q.ci_low, q.ci_high, q.p_value, q.p_adjusted
    significant, n, margin, non_inferior = q.significant, q.n_examples, q.margin, q.non_inferior
    changed = round((1.0 - q.agreement) * n)
    level = f"{q.confidence * 100:g} %"
    adjusted = f", Holm p {format_p(p_adj)}" if p_adj != p else ""
    text = (
        f"{name}: {pp(diff)} pp accuracy vs {parent} ({level} CI {pp(low)} to {pp(high)}), McNemar p {format_p(p)}"
        f"{adjusted}, {'significant' if significant else 'not significant'}; {changed} of {n} predictions changed"
    )
    if margin is not None:
        if non_inferior:
            text += f"; non-inferior at a {pp(margin, sign=False)} pp margin"
        else:
            text += f"; not shown non-inferior at a {pp(margin, sign=False)} pp margin (lower bound {pp(low)} pp)"
    return text


def _budget_text(max_latency_ms: float | None, max_memory_mb: float | None, margin: float | None) -> str:
    parts = []
    if max_latency_ms is not None:
        parts.append(f"p95 ≤ {max_latency_ms:g} ms/batch")
    if max_memory_mb is not None:
        parts.append(f"memory ≤ {max_memory_mb:g} MiB")
    parts.append(
        f"non-inferior at a {pp(margin, sign=False)} pp margin"
        if margin is not None
        else "non-inferior to the parent at the sweep's margin"
    )
    return ", ".join(parts)


def recommendation_sentence(recommendation: Recommendation, models: Sequence[ModelSweep]) -> str:
    """The recommendation in one sentence (stored as ``Recommendation.sentence``): what, at which batch size,
    how fast against the parent, at what quality — or what stood in the way."""
    c = recommendation.constraints
    budget = _budget_text(c.get("max_latency_ms"), c.get("max_memory_mb"), c.get("max_accuracy_drop"))
    if not recommendation.met:
        if recommendation.candidates == 0:
            return "Nothing was measured: every cell failed or was skipped (see the reasons in the table)."
        why = ", ".join(f"{n} {reason}" for reason, n in recommendation.excluded.items())
        return f"No variant meets the budget ({budget}): of {recommendation.candidates} measured points, {why}."
    model = next(m for m in models if m.model == recommendation.model)
    cell = next(c for c in model.cells if c.name == recommendation.cell)
    point = next(p for p in cell.points if p.batch_size == recommendation.batch_size and p.status == "measured")
    return _sentence(cell, point, budget, model.best_batch_size(cell.name))


def _ratio_clause(ratio: float, low: float, high: float, confidence: float) -> str:
    shown, lower, upper = format_ratios(ratio, low, high)
    return f"{shown}× the parent's speed at that batch ({confidence * 100:g} % CI {lower}–{upper})"


def _sentence(cell: SweepCell, point: SpeedPoint, budget: str, unconstrained: int | None) -> str:
    assert point.throughput is not None and point.p95_ms is not None
    if cell.parent:
        head = f"Recommended: {cell.name} as it is (the fp32 eager parent) at batch {point.batch_size}"
        speed = "no variant was faster within the budget"
    else:
        head = f"Recommended: {cell.name} at batch {point.batch_size}"
        ratio = point.vs_parent
        speed = (
            _ratio_clause(ratio.ratio, ratio.ci_low, ratio.ci_high, ratio.confidence)
            if ratio is not None
            else "no paired speed-up (the parent did not run at that batch size)"
        )
    memory = f", {format_mib(point.memory_mb)} MiB" if point.memory_mb is not None else ""
    quality = ""
    if cell.quality is not None:
        q = cell.quality
        quality = (
            f", accuracy {pp(q.difference)} pp vs the parent ({q.confidence * 100:g} % CI {pp(q.ci_low)} to "
            f"{pp(q.ci_high)}, McNemar p {format_p(q.p_value)})"
        )
    peak = ""
    if unconstrained is not None and unconstrained != point.batch_size:
        peak = f"; without the budget its throughput would peak at batch {unconstrained}"
    return (
        f"{head} — {format_rate(point.throughput)} samples/s, {speed}, p95 {format_ms(point.p95_ms / 1e3)} ms/batch{memory}"
        f"{quality}; throughput-optimal batch size within the budget ({budget}): {point.batch_size}{peak}."
    )


def sweep_level(result: SweepResult) -> str:
    """The intervals' level, from the records (``1 − stats.alpha``), e.g. ``95 %``."""
    found = [c.quality.confidence for c in result.cells() if c.quality is not None]
    return f"{100 * (found[0] if found else 1 - result.experiment.get('stats', {}).get('alpha', 0.05)):g} %"
