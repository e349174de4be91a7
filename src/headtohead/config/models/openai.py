"""The keys of a model served behind an OpenAI-compatible chat-completions endpoint (``kind: openai``).

::

    - name: llm-zero-shot
      kind: openai
      source: qwen2.5-7b-instruct           # the model name the server expects
      base_url: http://127.0.0.1:8000/v1
      api_key_env: OPENAI_API_KEY           # the variable's NAME; the key itself is never written anywhere
      prompt: "Classify the sentiment of: {text}\\nAnswer with one of: {labels}."
      few_shot: 0                           # k examples per class from data.train, seeded
      max_concurrency: 8
      timeout_s: 60
      max_retries: 5
      price: {input_per_1m: 0.15, output_per_1m: 0.60}

The keys sit on the model's entry beside ``name``/``kind``/``source`` (:class:`~headtohead.config.schema.ModelConfig`
declares them, every one ``None`` when not given, so other kinds' entries are unchanged);
:func:`endpoint_settings` gives them with their defaults, and :func:`check_endpoint_keys`
refuses them on other kinds and checks the prompt template.
"""

from __future__ import annotations

import string
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field

from headtohead.config.base import Section as _Section

__all__ = [
    "EndpointSettings",
    "Price",
    "ENDPOINT_KEYS",
    "DEFAULT_PROMPT",
    "DEFAULT_SYSTEM",
    "endpoint_settings",
    "check_endpoint_keys",
    "prompt_fields",
    "public_url",
]

#: The prompt when none is given: the text, the labels, and the one-word answer wanted.
DEFAULT_PROMPT = (
    "Classify the text into exactly one of these labels: {labels}.\n\nText: {text}\n\nAnswer with the label only."
)
#: The system message when none is given.
DEFAULT_SYSTEM = "You are a careful classifier. You answer with one label and nothing else."
#: The fields a prompt template may use.
_PROMPT_FIELDS = ("text", "labels")


class Price(_Section):
    """What the endpoint charges, per million tokens (any currency, the same for both)."""

    input_per_1m: float = Field(ge=0.0, description="price of a million prompt tokens")
    output_per_1m: float = Field(ge=0.0, description="price of a million completion tokens")


class EndpointSettings(_Section):
    """The ``kind: openai`` keys of one model with their defaults (see the module docstring)."""

    base_url: str = Field(description="The API root, e.g. http://127.0.0.1:8000/v1 (…/chat/completions is added).")
    api_key_env: str | None = Field(
        default=None,
        description="Name of the environment variable holding the API key "
        "(none: no key is sent, as local servers expect).",
    )
    prompt: str = Field(default=DEFAULT_PROMPT, description="The user message: {text} (required) and {labels}.")
    system_prompt: str | None = Field(default=DEFAULT_SYSTEM, description="The system message ('' or null: none).")
    few_shot: int = Field(
        default=0,
        ge=0,
        le=32,
        description="Examples per class from data.train shown first as "
        "user/assistant turns (drawn with the experiment's seed).",
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
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=16, gt=0, description="Tokens an answer may have at most.")
    logprobs: bool = Field(
        default=True,
        description="Ask for the answer's log-probabilities (class probabilities "
        "when the server returns them; label-only otherwise).",
    )
    top_logprobs: int = Field(default=20, ge=1, le=20, description="Alternatives per answer token asked for.")
    price: Price | None = Field(
        default=None, description="Price per million tokens: cost per run and per million predictions."
    )


#: The keys of :class:`EndpointSettings` as they appear on a model entry.
ENDPOINT_KEYS: tuple[str, ...] = tuple(EndpointSettings.model_fields)


def prompt_fields(template: str) -> list[str]:
    """The ``{field}`` names a prompt template uses (``ValueError`` when its braces do not parse)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def check_endpoint_keys(kind: str, values: dict[str, Any]) -> None:
    """Refuse endpoint keys on other kinds; for ``openai``, require ``base_url`` and check the prompt.

    Raises
    ------
    ValueError
        With the one line pydantic shows at the model's entry.
    """
    given = [key for key in ENDPOINT_KEYS if values.get(key) is not None]
    if kind != "openai":
        if given:
            raise ValueError(
                f"{', '.join(given)} {'is a key' if len(given) == 1 else 'are keys'} of kind: openai "
                f"only (this model is kind: {kind}); remove {'it' if len(given) == 1 else 'them'}"
            )
        return
    url = values.get("base_url")
    if not url:
        raise ValueError("kind: openai needs base_url, the server's API root (e.g. http://127.0.0.1:8000/v1)")
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
    template = values.get("prompt")
    if template is not None:
        try:
            fields = prompt_fields(template)
        except ValueError as exc:
            raise ValueError(f"prompt template does not parse ({exc}); write literal braces as {{{{ and }}}}") from None
        unknown = sorted({f for f in fields if f not in _PROMPT_FIELDS})
        if unknown:
            raise ValueError(
                f"prompt template uses {', '.join('{' + f + '}' for f in unknown)}; it may use only "
                f"{{text}} and {{labels}} (write literal braces as {{{{ and }}}})"
            )
        if "text" not in fields:
            raise ValueError(
                "prompt template has no {text}: every example would get the same prompt; put {text} "
                "where the example goes"
            )


def endpoint_settings(values: dict[str, Any]) -> EndpointSettings:
    """The endpoint keys given on a model entry, with the defaults of the others."""
    return EndpointSettings.model_validate({k: values[k] for k in ENDPOINT_KEYS if values.get(k) is not None})


def public_url(url: str) -> str:
    """A URL as an error or a record may show it: without user, password or query (never a secret)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url.split("?")[0].split("@")[-1]
