"""Typed records of what a model asked over an OpenAI-compatible endpoint (``kind: openai``) sent: the HTTP part.

Its answers, as every LLM family's, are in :class:`~headtohead.results.answers.AnswersRecord`, which
holds this part as its ``endpoint``. See ``docs/llm.md``, "Speed and cost beside local models".
"""

from __future__ import annotations

from functools import cached_property

from pydantic import Field, computed_field

from headtohead.results.base import DerivedRecord, Record
from headtohead.results.latency import latency_summary

__all__ = ["RequestTiming", "EndpointRequests", "TokenPrice"]


class TokenPrice(Record):
    """The endpoint's price per million tokens."""

    input_per_1m: float
    output_per_1m: float


class RequestTiming(DerivedRecord):
    """The requests sent in this run: their latencies at ``concurrency`` in flight, and the pass's wall time.

    ``concurrency`` held for the model as a whole: shards run side by side (``processes``,
    ``ray``) each had a share of it (``shard_concurrency``, summing to it); shards run one after
    another (``local``) each had all of it.
    """

    concurrency: int = Field(description="max_concurrency: requests in flight at most, over all the model's shards")
    shard_concurrency: list[int] = Field(
        default_factory=list,
        description="each shard's bound, in shard order: a share of concurrency when the shards ran side by "
        "side (they sum to it), all of it when they ran one after another (empty in version-4 files)",
    )
    peak_in_flight: list[int] = Field(
        default_factory=list, description="the most requests each shard had in flight at once, counted by its client"
    )
    latencies_s: list[float] = Field(description="each successful request's own time, seconds, in completion order")
    wall_s: float = Field(description="from the first request sent to the last answer received")
    tokens: int = Field(
        default=0, description="prompt and completion tokens of these requests (as the server reported them)"
    )

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def latency(self) -> dict[str, float] | None:
        """Mean, standard deviation and percentiles of the latencies (seconds)."""
        return latency_summary(self.latencies_s) if self.latencies_s else None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def requests_per_s(self) -> float | None:
        """Answers received per second of wall time at this concurrency."""
        return len(self.latencies_s) / self.wall_s if self.wall_s > 0 and self.latencies_s else None

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def tokens_per_s(self) -> float | None:
        return self.tokens / self.wall_s if self.wall_s > 0 and self.tokens else None


class EndpointRequests(DerivedRecord):
    """The HTTP part of an endpoint model's answers: where it asked, its requests, what they got, tokens sent, price."""

    base_url: str = Field(description="the API root asked (without credentials or query)")
    requests: int = Field(default=0, description="HTTP requests sent in this run, retries included")
    retries: int = 0
    statuses: dict[str, int] = Field(
        default_factory=dict,
        description="what the requests got: HTTP status codes, timeouts, refused or reset connections",
    )
    prompt_tokens_sent: int = Field(default=0, description="over the answers received in this run")
    completion_tokens_sent: int = 0
    price: TokenPrice | None = None
    timing: RequestTiming | None = Field(
        default=None,
        description="the requests sent in this run (no latencies: "
        "none was answered now, e.g. every answer came from the cache)",
    )
    server: str | None = Field(
        default=None,
        description="the LLM backend that answered, as it says: its Server header and the responses' "
        "system_fingerprint (uvicorn for vLLM, a llama.cpp build …); None: unknown (it said neither, every "
        "answer came from the cache, or a file written before version 8)",
    )

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def cost_sent(self) -> float | None:
        """What the requests of this run cost (the answers that came from the cache cost nothing now)."""
        if self.price is None:
            return None
        return (
            self.prompt_tokens_sent * self.price.input_per_1m + self.completion_tokens_sent * self.price.output_per_1m
        ) / 1e6
