"""``kind: openai``: a model behind an OpenAI-compatible chat-completions endpoint (``docs/llm.md`` has an example).

The prompting keys are every LLM family's (:class:`~headtohead.config.models.prompting.PromptSettings`);
the keys here are the HTTP transport's.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator

from headtohead.config.base import Section
from headtohead.config.models.prompting import DEFAULT_MIN_LABEL_MASS, PromptSettings

#: The request fields headtohead writes: extra_body may not replace them.
_SET_BY_H2H = frozenset(
    {"model", "messages", "prompt", "stream", "n", "temperature", "max_tokens", "stop", "logprobs", "top_logprobs"}
)

__all__ = ["OpenAISettings", "Price", "public_url"]


class Price(Section):
    """What the endpoint charges, per million tokens (any currency, the same for both)."""

    input_per_1m: float = Field(ge=0.0, description="price of a million prompt tokens")
    output_per_1m: float = Field(ge=0.0, description="price of a million completion tokens")


class OpenAISettings(PromptSettings):
    """A chat model behind an OpenAI-compatible endpoint: the prompting keys and the HTTP transport's."""

    serves_requests: ClassVar[bool] = True  # an endpoint: the capacity scenario probes it under load

    kind: Literal["openai"]

    base_url: str = Field(description="The API root, e.g. http://127.0.0.1:8000/v1 (…/chat/completions is added).")
    api_key_env: str | None = Field(
        default=None,
        min_length=1,
        description="Name of the environment variable holding the API key "
        "(none: no key is sent, as local servers expect; the key is never written anywhere).",
    )
    max_concurrency: int = Field(default=8, gt=0, le=1024, description="Requests in flight at most.")
    timeout_s: float = Field(default=60.0, gt=0.0, description="Seconds a request may take before it is tried again.")
    max_retries: int = Field(
        default=5,
        ge=0,
        le=20,
        description="Tries after the first for 429, 5xx, timeouts and "
        "refused or reset connections (exponential backoff, Retry-After honoured).",
    )
    logprobs: bool = Field(
        default=True,
        description="Ask for the answer's log-probabilities (class probabilities "
        "when the server returns them; label-only otherwise).",
    )
    top_logprobs: int = Field(default=20, ge=1, le=20, description="Alternatives per answer token asked for.")
    api: Literal["chat", "completions"] = Field(
        default="chat",
        description="chat: …/chat/completions with the conversation as messages (the server applies the chat "
        "template); completions: …/completions with the conversation as plain text ending 'Answer:' (a base "
        "model without a chat template; stop: ['\\n'] ends its answer).",
    )
    min_label_mass: float = Field(
        default=DEFAULT_MIN_LABEL_MASS,
        gt=0.0,
        le=1.0,
        description="Least share of an answer's first-token probability on the labels for its class "
        "probabilities to be kept (below it, or when their argmax is not the label read, the example has "
        "a label and no probabilities).",
    )
    stop: list[str] | None = Field(
        default=None,
        max_length=4,
        description="Stop sequences sent with every request (lm-evaluation-harness's until), "
        'e.g. ["\\n"]: the answer ends where one begins (none: not sent).',
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description="More fields of the request body, sent as given (constrained decoding: vLLM's "
        "guided_choice, llama.cpp's grammar or json_schema, response_format); part of the cache key.",
    )
    price: Price | None = Field(
        default=None, description="Price per million tokens: cost per run and per million predictions."
    )

    @model_validator(mode="before")
    @classmethod
    def _base_url(cls, values: Any) -> Any:
        url = values.get("base_url") if isinstance(values, dict) else None
        if isinstance(values, dict) and not url:
            raise ValueError("kind: openai needs base_url, the server's API root (e.g. http://127.0.0.1:8000/v1)")
        if not isinstance(url, str):
            return values
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"base_url '{public_url(url)}' is not an http:// or https:// address; give the API root, "
                f"e.g. http://127.0.0.1:8000/v1"
            )
        if parts.username or parts.password or parts.query:
            raise ValueError(
                "base_url must not carry credentials or a query string (they would be written into the "
                "results); put the key in the variable named by api_key_env"
            )
        return values

    @field_validator("extra_body")
    @classmethod
    def _extra_body(cls, body: dict[str, Any]) -> dict[str, Any]:
        taken = sorted(set(body) & _SET_BY_H2H)
        if taken:
            raise ValueError(
                f"extra_body sets {', '.join(taken)}, which headtohead sets itself; use the model entry's "
                f"keys (source, prompt, temperature, max_tokens, stop, logprobs) instead"
            )
        return body

    @property
    def request_bound(self) -> int | None:
        """``max_concurrency``: the requests in flight for the model over all its shards."""
        return self.max_concurrency

    def with_request_share(self, bound: int) -> OpenAISettings:
        """The model as one shard loads it: ``max_concurrency`` is the shard's share of the model's."""
        return self.model_copy(update={"max_concurrency": bound})


def public_url(url: str) -> str:
    """A URL as an error or a record may show it: without user, password or query (never a secret)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url.split("?")[0].split("@")[-1]
