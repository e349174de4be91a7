"""The recommendation: the fastest variant and batch size within a budget, by the run's dominance rule.

A variant qualifies only when it dominates its parent at the same batch size (``stats.dominance``'s rule):
not worse in accuracy beyond the margin (its score interval's lower bound above −margin) **and** decided
faster than the parent (its speed ratio's ``faster``, at α after Holm) — and so cheaper, since both run on one
machine at one price per hour, where the cost ratio is the time ratio. Each part is read at its own level and
the two together as an intersection–union test, with no further correction.

See ``docs/sweeps.md``, "The recommendation".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from headtohead.results.sweep import ModelSweep, Recommendation, SpeedPoint, SweepCell

__all__ = ["recommend", "exclusion_reason"]


def exclusion_reason(
    cell: SweepCell,
    point: SpeedPoint,
    *,
    max_latency_ms: float | None,
    max_memory_mb: float | None,
) -> str | None:
    """Why ``point`` of ``cell`` does not qualify, or ``None`` when it does.

    Examples
    --------
    ``"p95 latency over the budget"``, ``"not shown non-inferior to the parent"``, ``"not shown faster than the
    parent"`` (a variant dominates its parent, or is not recommended).
    """
    quality = cell.quality
    if not cell.parent:
        if quality is None:
            return "quality not measured"
        if not quality.non_inferior:
            return "not shown non-inferior to the parent"
        ratio = point.vs_parent
        if ratio is None or ratio.faster is None or ratio.faster != ratio.model_b:
            return "not shown faster than the parent"
    if max_latency_ms is not None and (point.p95_ms is None or point.p95_ms > max_latency_ms):
        return "p95 latency over the budget"
    if max_memory_mb is not None:
        if point.memory_mb is None:
            return "memory not measured"
        if point.memory_mb > max_memory_mb:
            return "memory over the budget"
    return None


def recommend(
    models: Sequence[ModelSweep],
    *,
    max_latency_ms: float | None = None,
    max_memory_mb: float | None = None,
    margin: float | None = None,
) -> Recommendation:
    """Pick the highest-throughput measured point that meets the budget.

    Parameters
    ----------
    models : sequence of ModelSweep
        The swept models with their measured cells.
    max_latency_ms, max_memory_mb : float, optional
        The budget (see the module docstring).
    margin : float, optional
        The sweep's non-inferiority margin (a share), recorded with the budget: the cells'
        ``quality.non_inferior`` was decided at it.

    Returns
    -------
    Recommendation
        ``met=False`` with the count of each reason that excluded a point when nothing qualifies.
    """
    constraints = {
        "max_latency_ms": max_latency_ms,
        "max_memory_mb": max_memory_mb,
        "max_accuracy_drop": margin,  # the key of sweep.json (the sweep: section's name)
    }
    excluded: Counter[str] = Counter()
    best: tuple[ModelSweep, SweepCell, SpeedPoint] | None = None
    candidates = 0
    for model in models:
        for cell in model.cells:
            if cell.status != "measured":
                continue
            for point in cell.points:
                if point.status != "measured" or point.throughput is None:
                    continue
                candidates += 1
                reason = exclusion_reason(
                    cell,
                    point,
                    max_latency_ms=max_latency_ms,
                    max_memory_mb=max_memory_mb,
                )
                if reason is not None:
                    excluded[reason] += 1
                elif best is None or point.throughput > (best[2].throughput or 0.0):
                    best = (model, cell, point)
    if best is None:
        return Recommendation(
            met=False, constraints=constraints, candidates=candidates, excluded=dict(excluded.most_common())
        )
    model, cell, point = best
    ratio = point.vs_parent
    return Recommendation(
        met=True,
        cell=cell.name,
        model=model.model,
        batch_size=point.batch_size,
        throughput=point.throughput,
        speedup_vs_parent=ratio.ratio if ratio is not None else None,
        speedup_ci=(ratio.ci_low, ratio.ci_high) if ratio is not None else None,
        p95_ms=point.p95_ms,
        memory_mb=point.memory_mb,
        accuracy_difference=cell.quality.difference if cell.quality else 0.0,
        best_batch_size=point.batch_size,
        constraints=constraints,
        candidates=candidates,
        excluded=dict(excluded.most_common()),
    )
