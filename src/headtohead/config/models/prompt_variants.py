"""Several prompts for one LLM: what ``prompts:`` says to vary (a list of templates, or seeded variations of one).

``prompts:`` on a ``kind: openai`` or ``kind: causal-lm`` entry makes the model one model with a pass
per prompt over the same examples (:meth:`~headtohead.config.models.base.ModelConfig.pass_specs`);
the statistics pool its passes (:mod:`headtohead.stats.passes`). Only what varies is said here;
how each variation is made — the separators between the template's parts and between the labels,
the casing of its words, the order of the labels and of the few-shot turns (Sclar et al. 2024) —
is the family's (:mod:`headtohead.adapters.prompt_variants`). Pass 1 is always the template as
written. See ``docs/llm.md``, "Prompts as a source of noise".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError

from headtohead.config.base import Section

__all__ = ["PromptVariations", "VARIED", "Varied"]

#: What a seeded variation may change.
Varied = Literal["label_order", "separators", "casing", "few_shot_order"]
VARIED: tuple[Varied, ...] = ("label_order", "separators", "casing", "few_shot_order")


class PromptVariations(Section):
    """``prompts: {count, seed, vary}``: seeded variations of the model's ``prompt``."""

    count: int = Field(ge=2, le=50, description="Prompts in all, the template as written first.")
    seed: int = Field(default=0, description="Seed of the variations (the same seed gives the same prompts).")
    vary: list[Varied] = Field(
        default_factory=lambda: list(VARIED), min_length=1, description="What the variations change."
    )

    @classmethod
    def from_mapping(cls, keys: Mapping[str, Any]) -> PromptVariations:
        """``prompts: {count, seed, vary}`` validated, its first error as one ``ValueError`` naming the key.

        Raises
        ------
        ValueError
            ``"prompts.count: Input should be greater than or equal to 2"``.
        """
        try:
            return cls.model_validate(keys)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"prompts.{where}: {first['msg']}") from None
