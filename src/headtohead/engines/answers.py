"""Records of an LLM's answers, of any family: what it answered, what could not be read, tokens, probabilities.

An LLM family's adapter hands over what became of every example it answered
(:meth:`~headtohead.adapters.base.ModelAdapter.answer_record`, an
:class:`~headtohead.adapters.prompting.AnswerLog` of transport-neutral
:class:`~headtohead.adapters.prompting.Answer` readings); :func:`answers_record` turns it into the
model's :class:`~headtohead.results.answers.AnswersRecord`, with the HTTP part of a model asked over
an endpoint built by :mod:`headtohead.engines.endpoint`. See ``docs/llm.md``, "Every answer, kept".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from headtohead.adapters.prompting import DEFAULT_MIN_LABEL_MASS, AnswerLog, Reading
from headtohead.engines.endpoint import endpoint_requests, merge_endpoint_requests
from headtohead.results.answers import (
    KEPT_ANSWERS,
    RAW_ANSWER_CHARS,
    AnswerRead,
    AnswersRecord,
    FailedAnswer,
    UnparseableAnswer,
)

__all__ = ["answers_record", "merge_answers_records"]


def answers_record(log: AnswerLog | None) -> AnswersRecord | None:
    """The record of an LLM's answers (a model's :meth:`~headtohead.adapters.base.ModelAdapter.answer_record`).

    ``None`` for a model that does not answer in words. Tokens are totals over every answer, or
    ``None`` when any answer's count is unknown (never a sum that silently took an unknown as 0).
    """
    if log is None:
        return None
    ordered = sorted(log.readings.items())
    unparseable = [(i, r) for i, r in ordered if r.unparseable]
    failed = [(i, r) for i, r in ordered if r.answer.text is None]
    answered = [r.answer for _, r in ordered if r.answer.text is not None]
    masses = [r.mass.outside for _, r in ordered if r.pred is not None and r.mass is not None]
    return AnswersRecord(
        model=log.model,
        device=log.device,
        examples=len(ordered),
        from_cache=[i for i, r in ordered if r.answer.from_cache],
        n_unparseable=len(unparseable),
        unparseable=[
            UnparseableAnswer(index=i, answer=str(r.answer.text)[:RAW_ANSWER_CHARS])
            for i, r in unparseable[:KEPT_ANSWERS]
        ],
        n_failed=len(failed),
        failed=[FailedAnswer(index=i, reason=r.answer.error or "no answer") for i, r in failed[:KEPT_ANSWERS]],
        missing=[i for i, r in failed if r.answer.missing],
        prompt_tokens=_total([a.tokens_in for a in answered]),
        completion_tokens=_total([a.tokens_out for a in answered]),
        probabilities=_probabilities(log),
        outside_mass_mean=float(np.mean(masses)) if masses and log.probabilities else None,
        **_probability_counts(log),
        **_label_mass_facts([r.label_mass for _, r in ordered if r.pred is not None], _threshold(log)),
        answers=[_answer_read(i, r) for i, r in ordered],
        endpoint=None if log.requests is None else endpoint_requests(log.requests, answered),
    )


def _total(counts: Sequence[int | None]) -> int | None:
    """The sum of ``counts``; ``None`` when any is unknown."""
    return None if any(c is None for c in counts) else sum(c for c in counts if c is not None)


def _probabilities(log: AnswerLog) -> Literal["label log-likelihood", "logprobs", "label only"]:
    """Where the class probabilities came from: each label scored, the answers' log-probabilities, or nowhere."""
    if not log.probabilities:
        return "label only"
    return "label log-likelihood" if log.scored else "logprobs"


def _threshold(log: AnswerLog) -> float | None:
    """The label mass below which an example is counted as below (``None``: none applies).

    The model's own ``min_label_mass`` where it has one; for labels scored by a family that has none
    (``kind: causal-lm``), :data:`~headtohead.adapters.prompting.DEFAULT_MIN_LABEL_MASS`.
    """
    if log.min_label_mass is not None:
        return log.min_label_mass
    return DEFAULT_MIN_LABEL_MASS if log.scored else None


def _label_mass_facts(masses: Sequence[float | None], threshold: float | None) -> dict[str, Any]:
    """The median label mass of the answered examples whose mass is known, how many, and how many below ``threshold``.

    Examples
    --------
    >>> _label_mass_facts([0.05, 0.04, None, 0.95], 0.9)
    {'label_mass_median': 0.05, 'n_label_mass': 3, 'n_label_mass_below': 2}
    """
    known = [float(m) for m in masses if m is not None]
    below = 0 if threshold is None else sum(m < threshold - 1e-9 for m in known)  # sums of exp: rounding is not below
    return {
        "label_mass_median": float(np.median(known)) if known else None,
        "n_label_mass": len(known),
        "n_label_mass_below": below,
    }


def _probability_counts(log: AnswerLog) -> dict[str, Any]:
    """How many answered examples kept class probabilities, and why the others did not."""
    read = [r for r in log.readings.values() if r.pred is not None]
    return {
        "min_label_mass": _threshold(log),
        "n_with_probabilities": sum(r.proba is not None for r in read),
        "n_label_mass_low": sum(r.no_proba is not None and r.no_proba.startswith("label mass") for r in read),
        "n_probabilities_disagree": sum(r.disagrees for r in read),
    }


def _answer_read(index: int, reading: Reading) -> AnswerRead:
    """One example's answer as the answers file keeps it (the raw text, cut at ``RAW_ANSWER_CHARS``)."""
    answer = reading.answer
    return AnswerRead(
        index=index,
        answer=None if answer.text is None else answer.text[:RAW_ANSWER_CHARS],
        label=reading.pred,
        rule=reading.rule,
        label_mass=reading.label_mass,
        no_probabilities=reading.no_proba,
        probabilities=None if reading.proba is None else [float(p) for p in reading.proba],
        prompt=answer.prompt,
        tokens_in=answer.tokens_in,
        tokens_out=answer.tokens_out,
        latency_s=answer.latency_s,
        from_cache=answer.from_cache,
        error=answer.error,
    )


def merge_answers_records(
    parts: Sequence[AnswersRecord | None], *, concurrency: int | None = None
) -> AnswersRecord | None:
    """One record of a model's shards (in plan order): counts and tokens added, lists joined.

    ``concurrency``: an endpoint model's own ``max_concurrency``, the bound over all its shards
    (see :func:`~headtohead.engines.endpoint.merge_endpoint_requests`).
    """
    records = [p for p in parts if p is not None]
    if len(records) <= 1:
        return records[0] if records else None
    first = records[0]

    def total(field: str) -> int | None:
        return _total([getattr(r, field) for r in records])

    masses = [(r.outside_mass_mean, r.examples) for r in records if r.outside_mass_mean is not None]
    endpoints = [r.endpoint for r in records if r.endpoint is not None]
    return first.model_copy(
        update={
            "device": ", ".join(dict.fromkeys(r.device for r in records if r.device)) or None,
            "examples": total("examples"),
            "from_cache": [i for r in records for i in r.from_cache],
            "n_unparseable": total("n_unparseable"),
            "unparseable": [a for r in records for a in r.unparseable][:KEPT_ANSWERS],
            "n_failed": total("n_failed"),
            "failed": [f for r in records for f in r.failed][:KEPT_ANSWERS],
            "missing": sorted(i for r in records for i in r.missing),
            "prompt_tokens": total("prompt_tokens"),
            "completion_tokens": total("completion_tokens"),
            "probabilities": next((r.probabilities for r in records if r.probabilities != "label only"), "label only"),
            "n_with_probabilities": sum(r.n_with_probabilities for r in records),
            "n_label_mass_low": sum(r.n_label_mass_low for r in records),
            "n_probabilities_disagree": sum(r.n_probabilities_disagree for r in records),
            "answers": [a for r in records for a in r.answers],
            "outside_mass_mean": sum(m * n for m, n in masses) / sum(n for _, n in masses)
            if masses and len(masses) == len(records)
            else None,
            "endpoint": merge_endpoint_requests(endpoints, concurrency=concurrency) if endpoints else None,
            **_merged_label_mass(records),
        }
    )


def _merged_label_mass(records: Sequence[AnswersRecord]) -> dict[str, Any]:
    """The label-mass facts of several records: counted from every answer when each record carries all of its
    answers (the median of the parts' medians is no median), else the counts added and the median unknown."""
    if all(len(r.answers) == r.examples for r in records):
        masses = [a.label_mass for r in records for a in r.answers if a.label is not None]
        return _label_mass_facts(masses, records[0].min_label_mass)
    return {
        "label_mass_median": None,
        "n_label_mass": sum(r.n_label_mass for r in records),
        "n_label_mass_below": sum(r.n_label_mass_below for r in records),
    }
