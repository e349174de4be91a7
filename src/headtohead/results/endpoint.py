"""Typed records of a model asked over an OpenAI-compatible endpoint (``kind: openai``).

See ``docs/llm.md``, "Speed and cost beside local models".
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from pydantic import Field, computed_field

from headtohead.results.base import DerivedRecord, Record
from headtohead.results.latency import latency_summary

__all__ = [
    "RequestTiming",
    "EndpointRecord",
    "UnparseableAnswer",
    "AnswerRead",
    "FailedRequest",
    "TokenPrice",
    "KEPT_ANSWERS",
    "RAW_ANSWER_CHARS",
]

#: How many unparseable answers (and failed requests) a record keeps by example; all are counted.
KEPT_ANSWERS = 1000
#: Characters of a raw answer kept.
RAW_ANSWER_CHARS = 2000


class UnparseableAnswer(Record):
    """An answer that names no label (or several): the example has no prediction."""

    index: int = Field(description="dataset index of the example")
    answer: str = Field(description="the raw answer, as received (cut at 2000 characters)")
    input: str | None = Field(default=None, description="the example's input (cut at 2000 characters)")
    gold: str | None = Field(default=None, description="the example's true label")


class AnswerRead(Record):
    """Every answer, as it was read: kept in the run's ``answers/<model>.jsonl``, not in ``results.json``."""

    index: int = Field(description="dataset index of the example")
    answer: str | None = Field(description="the raw answer (None: no answer came; see the failed requests)")
    label: int | None = Field(description="the label read (index into the dataset's labels), None: unparseable")
    rule: str = Field(description="the rule that read it: exact, label first, label as the answer … or unparseable")
    label_mass: float | None = Field(
        default=None, description="the share of the first tokens' probability on the labels (None: no logprobs)"
    )
    no_probabilities: str | None = Field(
        default=None,
        description="why the example has a label but no class probabilities (None: it has them, or has no label)",
    )


class FailedRequest(Record):
    """An example the endpoint never answered (after every retry)."""

    index: int = Field(description="dataset index of the example")
    reason: str = Field(description="the last try's failure: timeout, HTTP 503, connection reset …")


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


class EndpointRecord(DerivedRecord):
    """One endpoint model's pass: cache, answers, failures, tokens and cost."""

    base_url: str
    model: str = Field(description="the model name sent to the server (source)")
    examples: int = Field(description="examples asked (from the cache or the server)")
    from_cache: list[int] = Field(
        default_factory=list, description="dataset indices answered from the response cache (no request sent)"
    )
    n_unparseable: int = 0
    unparseable: list[UnparseableAnswer] = Field(default_factory=list, description="the first 1000, with raw text")
    n_failed_requests: int = 0
    failed_requests: list[FailedRequest] = Field(default_factory=list, description="the first 1000, with why")
    missing: list[int] = Field(
        default_factory=list,
        description="dataset indices of the failed requests that failed in transport (timeouts, refused or reset "
        "connections, 5xx after every retry, malformed bodies; all of them, sorted): missing data, not wrong "
        "answers; the model's pass is incomplete until they are asked again (--resume)",
    )
    requests: int = Field(default=0, description="HTTP requests sent in this run, retries included")
    retries: int = 0
    statuses: dict[str, int] = Field(
        default_factory=dict,
        description="what the requests got: HTTP status codes, timeouts, refused or reset connections",
    )
    prompt_tokens: int | None = Field(
        default=None,
        description="over every answer, cached ones included (None: the server did not report usage for some)",
    )
    completion_tokens: int | None = None
    prompt_tokens_sent: int = Field(default=0, description="over the answers received in this run")
    completion_tokens_sent: int = 0
    price: TokenPrice | None = None
    probabilities: Literal["label log-likelihood", "logprobs", "label only"] = Field(
        default="label only",
        description="where class probabilities came from: each label's log-likelihood (answer: score), the "
        "answers' log-probabilities, or none",
    )
    outside_mass_mean: float | None = Field(
        default=None, description="mean probability the answers' first tokens gave to no label (logprobs only)"
    )
    min_label_mass: float | None = Field(
        default=None, description="the least label mass at which an answer's class probabilities were kept"
    )
    n_with_probabilities: int = Field(default=0, description="answered examples with class probabilities kept")
    n_label_mass_low: int = Field(
        default=0, description="answered examples whose labels held less than min_label_mass: no probabilities"
    )
    n_probabilities_disagree: int = Field(
        default=0,
        description="answered examples whose log-probabilities favoured another label than the one read: flagged, "
        "no probabilities",
    )
    answers: list[AnswerRead] = Field(
        default_factory=list,
        exclude=True,
        description="every answer as read (written to answers/<model>.jsonl beside predictions.npz, not here)",
    )
    timing: RequestTiming | None = Field(
        default=None,
        description="the requests sent in this run (no latencies: "
        "none was answered now, e.g. every answer came from the cache)",
    )

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def n_missing(self) -> int:
        """Examples without an answer because of the transport (see ``missing``)."""
        return len(self.missing)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def cost(self) -> float | None:
        """What every answer of the run costs at ``price`` (cached ones priced as when they were asked)."""
        if self.price is None or self.prompt_tokens is None or self.completion_tokens is None:
            return None
        return (self.prompt_tokens * self.price.input_per_1m + self.completion_tokens * self.price.output_per_1m) / 1e6

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def cost_sent(self) -> float | None:
        """What the requests of this run cost (the answers that came from the cache cost nothing now)."""
        if self.price is None:
            return None
        return (
            self.prompt_tokens_sent * self.price.input_per_1m + self.completion_tokens_sent * self.price.output_per_1m
        ) / 1e6

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def cost_per_million(self) -> float | None:
        """Cost of a million predictions: the mean cost of an example asked, times a million."""
        return self.cost / self.examples * 1e6 if self.cost is not None and self.examples else None
