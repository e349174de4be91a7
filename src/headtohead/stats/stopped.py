"""A run with ``--until-decided``: every pair's verdict comes from its anytime-valid test, spending α once.

Whether the run stopped early or the data ran out, the decision a pair is shown is its
sequential test's (:mod:`headtohead.stats.sequential`): a fixed-sample test after interim looks
would spend α a second time (quoted when the sequential test had not decided, McNemar at the
end made false "better" verdicts 5.6–5.9 % of the time at α = 5 %). See ``docs/statistics.md`` §10.
"""

from __future__ import annotations

from collections.abc import Sequence

from headtohead.results.comparison import StatsSummary
from headtohead.results.sequential import SequentialRecord
from headtohead.stats.multiple import rank_groups

__all__ = ["decided_by_sequential_tests", "sequential_winner"]


def sequential_winner(record: SequentialRecord) -> str | None:
    """The model a sequential record calls better, or ``None`` (no decision, or equivalent).

    Examples
    --------
    A record of ``a`` against ``b`` with decision ``b_better`` gives ``"b"``; ``undecided`` gives ``None``.
    """
    return {"a_better": record.model_a, "b_better": record.model_b}.get(record.decision)


def decided_by_sequential_tests(summary: StatsSummary, records: Sequence[SequentialRecord]) -> StatsSummary:
    """``summary`` with each sequential pair's significance and winner taken from its sequential decision.

    Every pair with a record is decided by it, whether the run stopped early or used every
    example; ``stopped_early`` is set when it stopped before the data ran out. The ranking
    follows the same decisions.

    Examples
    --------
    A pair stopped at 256 of 872 examples with decision ``a_better`` becomes ``significant``
    with ``model_a`` the winner and ``stopped_early`` set, whatever McNemar's nominal p says;
    a pair that used all 872 undecided is not significant, whatever McNemar's p at 872 says.
    """
    by_pair = {frozenset((r.model_a, r.model_b)): r for r in records}
    comparisons = []
    for comparison in summary.comparisons:
        record = by_pair.get(frozenset((comparison.model_a, comparison.model_b)))
        if record is None:
            comparisons.append(comparison)
            continue
        winner = sequential_winner(record)
        stopped = record.examples_used < record.examples_available
        comparisons.append(
            comparison.model_copy(
                # the sequential test decides: McNemar's fragility is not this verdict's
                update={
                    "significant": winner is not None,
                    "winner": winner,
                    "stopped_early": stopped,
                    "fragility": None,
                }
            )
        )
    different = {frozenset({c.model_a, c.model_b}) for c in comparisons if c.significant}
    ranking = rank_groups({m.name: m.accuracy.value for m in summary.models}, different)
    return summary.model_copy(update={"comparisons": comparisons, "ranking": ranking})
