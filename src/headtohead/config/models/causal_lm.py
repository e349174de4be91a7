"""The keys ``kind: causal-lm`` adds: how an in-process causal language model answers.

See ``docs/llm.md``, "A causal LM in this process (`kind: causal-lm`)".
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from headtohead.config.models.prompting import PromptSettings

__all__ = ["CausalLMSettings"]


class CausalLMSettings(PromptSettings):
    """A causal language model run in this process: the prompting keys and how it answers."""

    answer: Literal["score", "generate"] = Field(
        default="score",
        description="score: each label's log-likelihood after the prompt, softmaxed into class probabilities "
        "(the prediction is their argmax; never unparseable); generate: greedy generation read as a label, "
        "as kind: openai does (label-only; an unparseable answer is a wrong answer).",
    )
    length_norm: Literal["none", "chars"] = Field(
        default="none",
        description="score: 'none' ranks labels by their total log-likelihood (lm-evaluation-harness's acc: "
        "the softmax is the model's probability of each label); 'chars' divides it by the label's length in "
        "characters first (its acc_norm: favours no label for being short, but the softmax is then a score).",
    )

    @field_validator("temperature")
    @classmethod
    def _greedy(cls, temperature: float) -> float:
        if temperature != 0.0:
            raise ValueError("kind: causal-lm answers greedily (temperature 0): sampling would make a run unrepeatable")
        return temperature
