"""Typed records of an LLM's answers, for every LLM family (``kind: openai``, ``kind: causal-lm``).

One :class:`AnswersRecord` per model that answers in words: how many answers could not be read as a
label (with their raw text, input and gold label), which examples got no answer and why, tokens in
and out, where the class probabilities came from and how many examples kept them. A model asked
over HTTP adds its requests, price and latencies (:class:`~headtohead.results.endpoint.EndpointRequests`);
a model run in this process says where it ran. Every answer as read (:class:`AnswerRead`) is carried
by the record and written to ``answers/<model>.jsonl``, never into ``results.json``.
See ``docs/llm.md``, "Every answer, kept".
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal

from pydantic import Field, computed_field

from headtohead.results.base import DerivedRecord, Record
from headtohead.results.endpoint import EndpointRequests

__all__ = [
    "AnswersRecord",
    "UnparseableAnswer",
    "AnswerRead",
    "FailedAnswer",
    "KEPT_ANSWERS",
    "RAW_ANSWER_CHARS",
    "answers_of_version_6",
]

#: How many unparseable answers (and failed ones) a record keeps by example; all are counted.
KEPT_ANSWERS = 1000
#: Characters of a raw answer kept.
RAW_ANSWER_CHARS = 2000


class UnparseableAnswer(Record):
    """An answer that names no label (or several): the example has no prediction."""

    index: int = Field(description="dataset index of the example")
    id: str | None = Field(default=None, description="the example's id, where the data has ids")
    answer: str = Field(description="the raw answer, as received (cut at 2000 characters)")
    input: str | None = Field(default=None, description="the example's input (cut at 2000 characters)")
    gold: str | None = Field(default=None, description="the example's true label")


class FailedAnswer(Record):
    """An example that got no answer: a request that failed (after every retry), or NaN scores."""

    index: int = Field(description="dataset index of the example")
    reason: str = Field(description="why: the last try's failure (timeout, HTTP 503 …), NaN label scores …")


class AnswerRead(Record):
    """Every answer, as it was read: kept in the run's ``answers/<model>.jsonl``, not in ``results.json``."""

    index: int = Field(description="dataset index of the example")
    answer: str | None = Field(description="the raw answer (None: no answer came; see error)")
    label: int | None = Field(description="the label read (index into the dataset's labels), None: unparseable")
    rule: str = Field(description="the rule that read it: exact, label first, label as the answer … or unparseable")
    label_mass: float | None = Field(
        default=None,
        description="the share of the probability on the labels: of the answer's first tokens (logprobs), or "
        "of what follows the prompt (each label scored); None: not known",
    )
    no_probabilities: str | None = Field(
        default=None,
        description="why the example has a label but no class probabilities (None: it has them, or has no label)",
    )
    probabilities: list[float] | None = Field(
        default=None, description="the class probabilities kept, in the dataset's label order (None: none kept)"
    )
    prompt: str | list[dict[str, str]] | None = Field(
        default=None,
        description="what the model was asked, rendered: the text it read (its chat template applied), or the "
        "messages sent to a chat endpoint (its server applies its own template)",
    )
    tokens_in: int | None = Field(default=None, description="tokens of the prompt (None: unknown)")
    tokens_out: int | None = Field(default=None, description="tokens of the answer (None: unknown)")
    latency_s: float | None = Field(default=None, description="the answer's own time (None: not timed per answer)")
    from_cache: bool = Field(default=False, description="read from the response cache, not asked in this run")
    error: str | None = Field(default=None, description="why no answer came (None: one came)")


class AnswersRecord(DerivedRecord):
    """One LLM's answers in a run, of any family: unparseable ones, failures, tokens, class probabilities.

    A model read from another harness's log that keeps its answers (``kind: inspect``) has one too:
    its answers as the log's scorer read them (neither ``device`` nor ``endpoint``).
    """

    model: str = Field(description="the model asked (source; a harness's log: the model its log names)")
    device: str | None = Field(
        default=None,
        description="where a model run in this process ran (cpu, cuda:0 …); None: asked over an endpoint",
    )
    examples: int = Field(description="examples answered (from the cache, a server or the model here)")
    from_cache: list[int] = Field(
        default_factory=list, description="dataset indices answered from the response cache (nothing asked)"
    )
    n_unparseable: int = 0
    unparseable: list[UnparseableAnswer] = Field(default_factory=list, description="the first 1000, with raw text")
    n_failed: int = Field(default=0, description="examples that got no answer (failed requests, NaN scores)")
    failed: list[FailedAnswer] = Field(default_factory=list, description="the first 1000, with why")
    missing: list[int] = Field(
        default_factory=list,
        description="dataset indices of the failed examples that failed in transport (timeouts, refused or reset "
        "connections, 5xx after every retry, malformed bodies; all of them, sorted): missing data, not wrong "
        "answers; the model's pass is incomplete until they are asked again (--resume)",
    )
    prompt_tokens: int | None = Field(
        default=None,
        description="over every answer, cached ones included (None: unknown for some, e.g. a server that did "
        "not report usage)",
    )
    completion_tokens: int | None = None
    probabilities: Literal["label log-likelihood", "logprobs", "label only"] = Field(
        default="label only",
        description="where class probabilities came from: each label's log-likelihood (answer: score), the "
        "answers' log-probabilities, or none",
    )
    outside_mass_mean: float | None = Field(
        default=None,
        description="mean probability on no label: of the answers' first tokens (logprobs), or after the prompt "
        "(each label scored, not length-normalised); None: not known",
    )
    min_label_mass: float | None = Field(
        default=None,
        description="the least label mass: below it an answer's class probabilities from log-probabilities are "
        "not kept; each label scored keeps them, and the examples below it are counted (n_label_mass_below)",
    )
    label_mass_median: float | None = Field(
        default=None,
        description="the median label mass over the answered examples whose label mass is known (n_label_mass): "
        "the share of the probability on the labels, of the answers' first tokens (logprobs) or after the prompt "
        "(each label scored, not length-normalised); each example's is in answers/<model>.jsonl; None: none known",
    )
    n_label_mass: int = Field(default=0, description="answered examples whose label mass is known")
    n_label_mass_below: int = Field(
        default=0,
        description="of those, the examples whose labels held less than min_label_mass of the probability: the "
        "prompt did not make the model answer with a label",
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
    endpoint: EndpointRequests | None = Field(
        default=None, description="asked over HTTP (kind openai): its requests, statuses, price and latencies"
    )

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def n_missing(self) -> int:
        """Examples without an answer because of the transport (see ``missing``)."""
        return len(self.missing)

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def cost(self) -> float | None:
        """What every answer of the run costs at the endpoint's price (cached ones priced as when they were asked)."""
        price = self.endpoint.price if self.endpoint is not None else None
        if price is None or self.prompt_tokens is None or self.completion_tokens is None:
            return None
        return (self.prompt_tokens * price.input_per_1m + self.completion_tokens * price.output_per_1m) / 1e6

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def cost_per_million(self) -> float | None:
        """Cost of a million predictions: the mean cost of an example asked, times a million."""
        return self.cost / self.examples * 1e6 if self.cost is not None and self.examples else None


#: The fields of a version-6 ``EndpointRecord`` that are the HTTP part (``AnswersRecord.endpoint``) since version 7.
_HTTP_FIELDS = (
    "base_url",
    "requests",
    "retries",
    "statuses",
    "prompt_tokens_sent",
    "completion_tokens_sent",
    "price",
    "timing",
)


def answers_of_version_6(endpoint: dict[str, Any]) -> dict[str, Any]:
    """A ``ModelRecord.endpoint`` of a file written before version 7 as its ``answers`` record.

    Its HTTP fields become the ``endpoint`` part, ``n_failed_requests`` / ``failed_requests`` become
    ``n_failed`` / ``failed``; the fields derived on read (``n_missing``, ``cost`` …) are dropped.
    """
    derived = {"n_missing", "cost", "cost_sent", "cost_per_million"}
    rest = {k: v for k, v in endpoint.items() if k not in _HTTP_FIELDS and k not in derived}
    rest["n_failed"] = rest.pop("n_failed_requests", 0)
    rest["failed"] = rest.pop("failed_requests", [])
    http = {k: endpoint[k] for k in _HTTP_FIELDS if k in endpoint}
    return {**rest, "endpoint": http}
