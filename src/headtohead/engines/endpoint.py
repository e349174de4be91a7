"""Records of a model asked over an endpoint (``kind: openai``): what its requests took, said and cost.

An LLM family's adapter hands over what became of every example it asked and of each pass of
requests (:meth:`~headtohead.adapters.base.ModelAdapter.answer_record`, an
:class:`~headtohead.adapters.prompting.AnswerLog`); :func:`endpoint_record` turns it into the model's
:class:`~headtohead.results.endpoint.EndpointRecord`. Its speed and cost join the run's speed
summary beside the models timed here (:func:`with_endpoints`): a :class:`ModelSpeed` with the
latency per request at the configured concurrency and a cost per million predictions in the
``endpoint`` scenario, so the speed and cost tables and the trade-off chart show both kinds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from headtohead.adapters.prompting import AnswerLog, Reading
from headtohead.config.speed import SpeedConfig
from headtohead.engines.telemetry import host_load
from headtohead.results.cost import ModelCost, ScenarioCost
from headtohead.results.endpoint import (
    KEPT_ANSWERS,
    RAW_ANSWER_CHARS,
    AnswerRead,
    EndpointRecord,
    FailedRequest,
    RequestTiming,
    TokenPrice,
    UnparseableAnswer,
)
from headtohead.results.records import ModelRecord
from headtohead.results.speed import ModelSpeed, SpeedSummary

__all__ = ["endpoint_record", "endpoint_speed", "with_endpoints", "merge_endpoint_records"]


def endpoint_record(answers: AnswerLog | None) -> EndpointRecord | None:
    """The record of an LLM's answers (a model's :meth:`~headtohead.adapters.base.ModelAdapter.answer_record`).

    ``None`` for a model that does not answer in words."""
    if answers is None:
        return None
    ordered = sorted(answers.readings.items())
    unparseable = [(i, r) for i, r in ordered if r.unparseable]
    failed = [(i, r) for i, r in ordered if r.exchange.body is None]
    missing = [i for i, r in failed if _in_transport(r.exchange)]
    usages = [r.exchange.body["usage"] for _, r in ordered if r.exchange.body is not None]
    known = all(u.get("prompt_tokens") is not None and u.get("completion_tokens") is not None for u in usages)
    sent = [r.exchange for _, r in ordered if r.exchange.body is not None and not r.exchange.from_cache]
    sent_prompt = sum(e.body["usage"].get("prompt_tokens") or 0 for e in sent)
    sent_completion = sum(e.body["usage"].get("completion_tokens") or 0 for e in sent)
    masses = [r.mass.outside for _, r in ordered if r.pred is not None and r.mass is not None]
    stats = answers.passes
    requests = sum(p.requests for p in stats)
    statuses = _added([p.statuses for p in stats])
    timing = RequestTiming(
        concurrency=answers.concurrency,  # no latency when nothing was answered now
        shard_concurrency=[answers.concurrency],
        peak_in_flight=[max((p.peak_in_flight for p in stats), default=0)],
        latencies_s=[float(e.latency_s) for e in sent if e.latency_s is not None],
        wall_s=sum(p.wall_s for p in stats),
        tokens=sent_prompt + sent_completion,
    )
    return EndpointRecord(
        base_url=answers.base_url or "",  # "": a family asked in this process, no URL
        model=answers.model,
        examples=len(ordered),
        from_cache=[i for i, r in ordered if r.exchange.from_cache],
        n_unparseable=len(unparseable),
        unparseable=[
            UnparseableAnswer(index=i, answer=r.exchange.body["content"][:RAW_ANSWER_CHARS])
            for i, r in unparseable[:KEPT_ANSWERS]
        ],
        n_failed_requests=len(failed),
        failed_requests=[
            FailedRequest(index=i, reason=r.exchange.error or "no answer") for i, r in failed[:KEPT_ANSWERS]
        ],
        missing=missing,
        requests=requests,
        retries=sum(p.retries for p in stats),
        statuses=statuses,
        prompt_tokens=sum(u["prompt_tokens"] for u in usages) if known else None,
        completion_tokens=sum(u["completion_tokens"] for u in usages) if known else None,
        prompt_tokens_sent=sent_prompt,
        completion_tokens_sent=sent_completion,
        price=TokenPrice(**answers.price.model_dump()) if answers.price is not None else None,
        probabilities=_probabilities(answers),
        outside_mass_mean=float(np.mean(masses)) if masses and answers.probabilities else None,
        timing=timing,
        **_probability_counts(answers),
        answers=[_answer_read(i, r) for i, r in ordered],
    )


def _probabilities(answers: AnswerLog) -> Literal["label log-likelihood", "logprobs", "label only"]:
    """Where the class probabilities came from: each label scored, the answers' log-probabilities, or nowhere."""
    if not answers.probabilities:
        return "label only"
    return "label log-likelihood" if answers.scored else "logprobs"


def _probability_counts(answers: AnswerLog) -> dict[str, Any]:
    """How many answered examples kept class probabilities, and why the others did not."""
    read = [r for r in answers.readings.values() if r.pred is not None]
    return {
        "min_label_mass": answers.min_label_mass,
        "n_with_probabilities": sum(r.proba is not None for r in read),
        "n_label_mass_low": sum(r.no_proba is not None and r.no_proba.startswith("label mass") for r in read),
        "n_probabilities_disagree": sum(r.disagrees for r in read),
    }


def _answer_read(index: int, reading: Reading) -> AnswerRead:
    """One example's answer as the answers file keeps it (the raw text, cut at ``RAW_ANSWER_CHARS``)."""
    body = reading.exchange.body
    return AnswerRead(
        index=index,
        answer=None if body is None else str(body["content"])[:RAW_ANSWER_CHARS],
        label=reading.pred,
        rule=reading.rule,
        label_mass=reading.label_mass,
        no_probabilities=reading.no_proba,
    )


def _in_transport(exchange: Any) -> bool:
    """The exchange failed on the way, not at the model (a family whose exchanges never do: ``False``)."""
    return bool(getattr(exchange, "missing", False))


def _added(counts: Sequence[dict[str, int]]) -> dict[str, int]:
    """Counts by status, added over passes or shards."""
    return dict(sum((Counter(c) for c in counts), Counter()))


def merge_endpoint_records(
    parts: Sequence[EndpointRecord | None], *, concurrency: int | None = None
) -> EndpointRecord | None:
    """One record of a model's shards (in plan order): counts and tokens added, lists joined, wall times added.

    Shards of one model run one after another in this process or side by side in workers; the
    wall time is their sum either way, so the throughput of shards run side by side is understated.
    ``concurrency`` is the model's own ``max_concurrency``, the bound over all its shards (default:
    the first shard's); each shard's record holds its own (``RequestTiming.shard_concurrency``).
    """
    records = [p for p in parts if p is not None]
    if len(records) <= 1:
        return records[0] if records else None
    first = records[0]

    def total(field: str) -> int | None:
        values = [getattr(r, field) for r in records]
        return None if any(v is None for v in values) else sum(values)

    timings = [r.timing for r in records if r.timing is not None]
    masses = [(r.outside_mass_mean, r.examples) for r in records if r.outside_mass_mean is not None]
    statuses = _added([r.statuses for r in records])
    return first.model_copy(
        update={
            "examples": total("examples"),
            "from_cache": [i for r in records for i in r.from_cache],
            "n_unparseable": total("n_unparseable"),
            "unparseable": [a for r in records for a in r.unparseable][:KEPT_ANSWERS],
            "n_failed_requests": total("n_failed_requests"),
            "failed_requests": [f for r in records for f in r.failed_requests][:KEPT_ANSWERS],
            "missing": sorted(i for r in records for i in r.missing),
            "requests": total("requests"),
            "retries": total("retries"),
            "statuses": statuses,
            "prompt_tokens": total("prompt_tokens"),
            "completion_tokens": total("completion_tokens"),
            "prompt_tokens_sent": total("prompt_tokens_sent"),
            "completion_tokens_sent": total("completion_tokens_sent"),
            "probabilities": next((r.probabilities for r in records if r.probabilities != "label only"), "label only"),
            "n_with_probabilities": sum(r.n_with_probabilities for r in records),
            "n_label_mass_low": sum(r.n_label_mass_low for r in records),
            "n_probabilities_disagree": sum(r.n_probabilities_disagree for r in records),
            "answers": [a for r in records for a in r.answers],
            "outside_mass_mean": sum(m * n for m, n in masses) / sum(n for _, n in masses)
            if masses and len(masses) == len(records)
            else None,
            "timing": RequestTiming(
                concurrency=timings[0].concurrency if concurrency is None else concurrency,
                shard_concurrency=[k for t in timings for k in t.shard_concurrency],
                peak_in_flight=[k for t in timings for k in t.peak_in_flight],
                latencies_s=[x for t in timings for x in t.latencies_s],
                wall_s=sum(t.wall_s for t in timings),
                tokens=sum(t.tokens for t in timings),
            )
            if timings
            else None,
        }
    )


def endpoint_speed(record: ModelRecord) -> ModelSpeed | None:
    """The speed-summary entry of an endpoint model: latency per request, throughput, cost per prediction."""
    endpoint = record.endpoint
    if endpoint is None:
        return None
    timing = endpoint.timing
    per_prediction = endpoint.cost / endpoint.examples if endpoint.cost is not None and endpoint.examples else None
    cost = (
        ModelCost(
            scenarios=[
                ScenarioCost(
                    scenario="endpoint",
                    throughput_per_s=timing.requests_per_s if timing is not None else None,
                    price_per_prediction=per_prediction,
                )
            ]
        )
        if endpoint.price is not None
        else None
    )
    return ModelSpeed(
        name=record.name,
        device=record.device,
        num_parameters=None,
        parameter_bytes=None,
        load_time_s=record.load_time_s,
        endpoint=timing,
        cost=cost,
    )


def with_endpoints(
    summary: SpeedSummary | None, records: Sequence[ModelRecord], config: SpeedConfig, *, batch_size: int, seed: int
) -> SpeedSummary | None:
    """``summary`` with an entry per endpoint model (a summary of them alone when nothing was timed here)."""
    entries = [e for e in (endpoint_speed(r) for r in records) if e is not None]
    if not entries:
        return summary
    if summary is None:
        load = host_load()
        return SpeedSummary(
            settings=config.model_dump(mode="json"),
            batch_size=batch_size,
            seed=seed,
            torch_threads=None,
            torch_interop_threads=None,
            host_before=load,
            host_after=load,
            elapsed_s=0.0,
            scenarios=[],
            models=entries,
        )
    return summary.model_copy(update={"models": [*summary.models, *entries]})
