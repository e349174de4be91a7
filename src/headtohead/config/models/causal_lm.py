"""The keys ``kind: causal-lm`` adds: how an in-process causal language model answers.

See ``docs/llm.md``, "A causal LM in this process (`kind: causal-lm`)".
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from headtohead.config.models.keys import HubModel
from headtohead.config.models.prompting import PROMPT_FIELDS, PromptSettings, prompt_fields

__all__ = ["CausalLMSettings"]


class CausalLMSettings(PromptSettings, HubModel):
    """A causal language model run in this process: the prompting keys, the hub's, and how it answers."""

    kind: Literal["causal-lm"]

    length_norm: Literal["none", "chars"] = Field(
        default="none",
        description="score: 'none' ranks labels by their total log-likelihood (lm-evaluation-harness's acc: "
        "the softmax is the model's probability of each label); 'chars' divides it by the label's length in "
        "characters first (its acc_norm: favours no label for being short, but the softmax is then a score).",
    )

    chat_template: bool = Field(
        default=True,
        description="true: the conversation is rendered with the tokenizer's chat template (a tokenizer without one: "
        "plain turns, each answer after 'Answer:'); false: never — the prompt is plain text the model continues, "
        "as lm-evaluation-harness writes a task's context (the system prompt, when given, and a blank line; each "
        "few-shot example as its prompt, a space, its label and a blank line; then the example's prompt, nothing "
        "added), and each label follows it after a space, scored as lm-evaluation-harness scores a choice. The "
        "default system prompt is not used unless system_prompt is given.",
    )

    @model_validator(mode="before")
    @classmethod
    def _scored_unless_said(cls, values: Any) -> Any:
        """``answer: score`` is this family's default (every LLM family's key, whose own default is generate);
        a plain-text prompt (``chat_template: false``) has no system prompt unless one is given (the default one
        is written for a chat model's system turn)."""
        if not isinstance(values, dict):
            return values
        if values.get("answer") is None:
            values = {**values, "answer": "score"}
        if values.get("chat_template") is False and "system_prompt" not in values:
            values = {**values, "system_prompt": None}
        return values

    @field_validator("chat_template", mode="before")
    @classmethod
    def _true_or_false(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return value
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "…"
        raise ValueError(
            f"chat_template is {shown}; it is true or false (whether the tokenizer's own chat template is "
            f"applied); a template of your own is not read: write the text into prompt and set chat_template: false"
        )

    @model_validator(mode="after")
    def _no_columns(self) -> CausalLMSettings:
        read = sorted({f for t in self.templates() for f in prompt_fields(t) if f not in (*PROMPT_FIELDS, "texts")})
        if read:
            raise ValueError(
                f"the prompt reads {', '.join(read)}; kind: causal-lm's prompts read the example's text only "
                f"({{{{ text }}}}, {{{{ texts }}}}, {{{{ labels }}}}, {{{{ label_descriptions }}}}); the example's "
                f"other columns reach kind: openai's prompts"
            )
        return self

    @field_validator("temperature")
    @classmethod
    def _greedy(cls, temperature: float, info: ValidationInfo) -> float:
        # one sampled run would read as the model: sampling is for a model run several times, each seeded its own
        repeats = info.data.get("repeats")
        if temperature != 0.0 and (repeats is None or repeats < 2):
            raise ValueError(
                "kind: causal-lm answers greedily (temperature 0) when run once: one sampled run would read as the "
                "model; sample with repeats: 2 or more (each run seeded its own), or set temperature 0"
            )
        return temperature
