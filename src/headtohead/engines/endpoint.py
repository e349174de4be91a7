"""The HTTP part of a model asked over an endpoint (``kind: openai``): its requests, and its speed and cost.

The model's answers are recorded as any LLM family's (:mod:`headtohead.engines.answers`); what its
requests did, what they cost and how long they took is its
:class:`~headtohead.results.endpoint.EndpointRequests` (:func:`endpoint_requests`, from the family's
:class:`~headtohead.adapters.chat_client.RequestLog`). Its speed and cost join the run's speed
summary beside the models timed here (:func:`with_endpoints`): a :class:`ModelSpeed` with the
latency per request at the configured concurrency and a cost per million predictions in the
``endpoint`` scenario, so the speed and cost tables and the trade-off chart show both kinds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from headtohead.adapters.prompting import Answer
from headtohead.config.speed import SpeedConfig
from headtohead.engines.priced import with_speed_entries
from headtohead.engines.telemetry import host_load
from headtohead.results.cost import ModelCost, ScenarioCost
from headtohead.results.endpoint import EndpointRequests, RequestTiming, TokenPrice
from headtohead.results.records import ModelRecord
from headtohead.results.speed import ModelSpeed, SpeedSummary

if TYPE_CHECKING:  # the HTTP family's own module, imported by it alone at run time (it brings httpx)
    from headtohead.adapters.chat_client import RequestLog

__all__ = ["endpoint_requests", "merge_endpoint_requests", "endpoint_speed", "with_endpoints"]


def endpoint_requests(requests: RequestLog, answered: Sequence[Answer]) -> EndpointRequests:
    """The HTTP part of an endpoint model's record: its passes of requests and the answers received now.

    ``answered``: every answer that came (cached ones too); those asked in this run give the
    latencies and the tokens sent.
    """
    sent = [a for a in answered if not a.from_cache]
    sent_prompt = sum(a.tokens_in or 0 for a in sent)
    sent_completion = sum(a.tokens_out or 0 for a in sent)
    passes = requests.passes
    timing = RequestTiming(
        concurrency=requests.concurrency,  # no latency when nothing was answered now
        shard_concurrency=[requests.concurrency],
        peak_in_flight=[max((p.peak_in_flight for p in passes), default=0)],
        latencies_s=[float(a.latency_s) for a in sent if a.latency_s is not None],
        wall_s=sum(p.wall_s for p in passes),
        tokens=sent_prompt + sent_completion,
    )
    return EndpointRequests(
        base_url=requests.base_url,
        requests=sum(p.requests for p in passes),
        retries=sum(p.retries for p in passes),
        statuses=_added([p.statuses for p in passes]),
        prompt_tokens_sent=sent_prompt,
        completion_tokens_sent=sent_completion,
        price=TokenPrice(**requests.price.model_dump()) if requests.price is not None else None,
        timing=timing,
        server=next((p.server for p in passes if p.server is not None), None),
    )


def _added(counts: Sequence[dict[str, int]]) -> dict[str, int]:
    """Counts by status, added over passes or shards."""
    return dict(sum((Counter(c) for c in counts), Counter()))


def merge_endpoint_requests(parts: Sequence[EndpointRequests], *, concurrency: int | None = None) -> EndpointRequests:
    """The HTTP part of a model's shards (in plan order): counts and tokens added, wall times added.

    Shards of one model run one after another in this process or side by side in workers; the
    wall time is their sum either way, so the throughput of shards run side by side is understated.
    ``concurrency`` is the model's own ``max_concurrency``, the bound over all its shards (default:
    the first shard's); each shard's record holds its own (``RequestTiming.shard_concurrency``).
    """
    first = parts[0]
    timings = [p.timing for p in parts if p.timing is not None]
    return first.model_copy(
        update={
            "requests": sum(p.requests for p in parts),
            "retries": sum(p.retries for p in parts),
            "statuses": _added([p.statuses for p in parts]),
            "prompt_tokens_sent": sum(p.prompt_tokens_sent for p in parts),
            "completion_tokens_sent": sum(p.completion_tokens_sent for p in parts),
            "server": next((p.server for p in parts if p.server is not None), None),
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
    answers = record.answers
    endpoint = answers.endpoint if answers is not None else None
    if answers is None or endpoint is None:
        return None
    timing = endpoint.timing
    per_prediction = answers.cost / answers.examples if answers.cost is not None and answers.examples else None
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
    load = host_load() if entries and summary is None else None  # the machine the endpoints were asked from
    return with_speed_entries(summary, entries, config, batch_size=batch_size, seed=seed, load=load)
