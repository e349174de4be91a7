"""The words about examples a model never answered because of the transport (missing data, not wrong answers).

One sentence says what is missing and what the statistics did about it (:func:`missing_sentence`):
the headline of every report and the one line ``h2h run`` ends with (exit code 4) read it; a
clause (:func:`answered_rows_clause`) labels every pair's verdict judged on the answered rows only.
"""

from __future__ import annotations

import re
from collections import Counter

from headtohead.errors import listing
from headtohead.results.comparison import StatsSummary
from headtohead.results.records import MissingAnswers, ModelRecord, RunResult

__all__ = ["missing_sentence", "answered_rows_clause", "with_answered_rows", "why_missing"]


_AFTER_TRIES = re.compile(r" \(after \d+ tries\)$")  # said once for all: "after every retry"


def why_missing(record: ModelRecord) -> str:
    """``connection refused ×20, HTTP 503 ×2``: the last try's failure of each missing example."""
    answers = record.answers
    if answers is None:
        return "no answer"
    missing = set(answers.missing)
    reasons = Counter(_AFTER_TRIES.sub("", f.reason) for f in answers.failed if f.index in missing)
    return ", ".join(f"{why} ×{n}" for why, n in reasons.most_common()) or "no answer"


def missing_sentence(result: RunResult) -> str | None:
    """What is missing and what the run did about it, in one line (``None``: nothing is missing).

    Examples
    --------
    Without ``--allow-missing``: ``No verdict involves llm: it never answered 38 of 60 examples
    (connection refused ×38) …; run again with --resume to ask exactly those 38 …``.
    """
    missing = result.missing
    if missing is None:
        return None
    total = result.dataset.n_examples
    parts = [_model_part(result.model(name), n, total) for name, n in missing.models.items()]
    named = listing(missing.models)
    asked = sum(missing.models.values())
    if missing.allowed:
        return (
            f"Judged on the {missing.rows_used:,} examples every model answered (--allow-missing): "
            f"{'; '.join(parts)}; every verdict holds for those examples only."
        )
    return (
        f"No verdict involves {named}: {'; '.join(parts)} — missing data, not wrong answers, so the pass is "
        f"incomplete. The answers received are kept: run again with --resume to ask exactly the {asked:,} "
        f"missing, or pass --allow-missing to judge on the examples every model answered."
    )


def _model_part(record: ModelRecord, n: int, total: int) -> str:
    return f"{record.name} never answered {n:,} of {total:,} examples ({why_missing(record)}, after every retry)"


def answered_rows_clause(missing: MissingAnswers) -> str:
    """`` Judged on the 22 examples every model answered (--allow-missing).``, after a verdict judged on them."""
    return f" Judged on the {missing.rows_used:,} examples every model answered (--allow-missing)."


def with_answered_rows(stats: StatsSummary, missing: MissingAnswers | None) -> StatsSummary:
    """``stats`` whose pair verdicts say they were judged on the answered rows only, when they were."""
    if missing is None or not missing.allowed:
        return stats
    clause = answered_rows_clause(missing)
    comparisons = [c.model_copy(update={"verdict": c.verdict + clause}) for c in stats.comparisons]
    return stats.model_copy(update={"comparisons": comparisons})
