"""The keys ``kind: causal-lm`` adds: how an in-process causal language model answers.

See ``docs/llm.md``, "A causal LM in this process (`kind: causal-lm`)".
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

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

    @model_validator(mode="before")
    @classmethod
    def _scored_unless_said(cls, values: Any) -> Any:
        """``answer: score`` is this family's default (every LLM family's key, whose own default is generate)."""
        if isinstance(values, dict) and values.get("answer") is None:
            return {**values, "answer": "score"}
        return values

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
    def _greedy(cls, temperature: float) -> float:
        if temperature != 0.0:
            raise ValueError("kind: causal-lm answers greedily (temperature 0): sampling would make a run unrepeatable")
        return temperature
