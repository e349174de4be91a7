"""The keys of a language model asked to classify in words: the prompt, few-shot turns, sampling.

Every LLM family shares them (``openai`` extends :class:`PromptSettings` with its HTTP keys); the
prompt is a template with ``{text}`` (required) and ``{labels}``, checked where it is written.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from headtohead.config.models.base import ModelConfig
from headtohead.config.models.prompt_variants import PromptVariant, PromptVariations

__all__ = ["PromptSettings", "DEFAULT_PROMPT", "DEFAULT_SYSTEM", "DEFAULT_MIN_LABEL_MASS", "prompt_fields"]

#: The prompt when none is given: the text, the labels, and the one-word answer wanted.
DEFAULT_PROMPT = (
    "Classify the text into exactly one of these labels: {labels}.\n\nText: {text}\n\nAnswer with the label only."
)
#: The system message when none is given.
DEFAULT_SYSTEM = "You are a careful classifier. You answer with one label and nothing else."
#: Least share of an answer's first-token probability on the labels for its class probabilities to be kept.
DEFAULT_MIN_LABEL_MASS = 0.9
#: The fields a prompt template may use.
_PROMPT_FIELDS = ("text", "labels")


class PromptSettings(ModelConfig):
    """What an LLM family is asked and how it answers: prompt, system prompt, few-shot examples, sampling."""

    prompt: str = Field(default=DEFAULT_PROMPT, description="The user message: {text} (required) and {labels}.")
    system_prompt: str | None = Field(default=DEFAULT_SYSTEM, description="The system message ('' or null: none).")
    few_shot: int = Field(
        default=0,
        ge=0,
        le=32,
        description="Examples per class from data.train shown first as "
        "user/assistant turns (drawn with the experiment's seed).",
    )
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(default=16, gt=0, description="Tokens an answer may have at most.")
    answer: Literal["generate", "score"] = Field(
        default="generate",
        description="generate: the model's answer read as a label (an unparseable answer is a wrong answer; "
        "label-only, or probabilities from the answer's log-probabilities); score: each label's log-likelihood "
        "after the prompt, softmaxed into class probabilities (the prediction is their argmax; nothing is "
        "parsed), as lm-evaluation-harness scores choices — causal-lm through the forward pass (its default), "
        "openai through …/completions with echo and logprobs (a server that returns the prompt's "
        "log-probabilities: vLLM; one request per example and label).",
    )

    prompts: list[str] | PromptVariations | None = Field(
        default=None,
        description="Several prompts, one pass each over the same examples, compared pooled: a list of "
        "templates (replacing prompt), or {count, seed, vary} seeded variations of prompt.",
    )
    variant: PromptVariant | None = Field(
        default=None, description="Which of its model's prompts this pass asks (set from prompts:, not by hand)."
    )

    @field_validator("prompts", mode="before")
    @classmethod
    def _variations(cls, prompts: Any) -> Any:
        # {count, seed, vary}: its own errors, not the union's "should be a valid list"
        return PromptVariations.from_mapping(prompts) if isinstance(prompts, Mapping) else prompts

    @field_validator("prompts")
    @classmethod
    def _templates(cls, prompts: list[str] | PromptVariations | None) -> list[str] | PromptVariations | None:
        if isinstance(prompts, list):
            if len(prompts) < 2:
                raise ValueError("prompts lists one template; give two or more, or write it as prompt:")
            for template in prompts:
                cls._template(template)
        return prompts

    @model_validator(mode="after")
    def _prompt_or_list(self) -> PromptSettings:
        if isinstance(self.prompts, list) and "prompt" in self.model_fields_set:
            raise ValueError(
                "both prompt and a list of prompts are given; put the template into the list and remove prompt "
                "(prompt is what prompts: {count, seed} varies)"
            )
        return self

    @field_validator("prompt")
    @classmethod
    def _template(cls, template: str) -> str:
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
        return template


def prompt_fields(template: str) -> list[str]:
    """The ``{field}`` names a prompt template uses (``ValueError`` when its braces do not parse)."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
