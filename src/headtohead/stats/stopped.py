"""A run that ``--until-decided`` stopped early: its verdicts come from the anytime-valid tests.

See ``docs/statistics.md`` §10.
"""

from __future__ import annotations

from collections.abc import Sequence

from headtohead.results.comparison import StatsSummary
from headtohead.results.sequential import SequentialRecord
from headtohead.stats.multiple import rank_groups

__all__ = ["decided_by_sequential_tests"]


def decided_by_sequential_tests(summary: StatsSummary, records: Sequence[SequentialRecord]) -> StatsSummary:
    """``summary`` with each early-stopped pair's significance and winner taken from its sequential decision.

    Examples
    --------
    A pair stopped at 256 of 872 examples with decision ``a_better`` becomes ``significant``
    with ``model_a`` the winner and ``stopped_early`` set, whatever McNemar's nominal p says.
    """
    by_pair = {frozenset((r.model_a, r.model_b)): r for r in records}
    comparisons = []
    for comparison in summary.comparisons:
        record = by_pair.get(frozenset((comparison.model_a, comparison.model_b)))
        if record is None or record.examples_used >= record.examples_available:
            comparisons.append(comparison)
            continue
        winner = {"a_better": record.model_a, "b_better": record.model_b}.get(record.decision)
        comparisons.append(
            comparison.model_copy(update={"significant": winner is not None, "winner": winner, "stopped_early": True})
        )
    different = {frozenset({c.model_a, c.model_b}) for c in comparisons if c.significant}
    ranking = rank_groups({m.name: m.accuracy.value for m in summary.models}, different)
    return summary.model_copy(update={"comparisons": comparisons, "ranking": ranking})
