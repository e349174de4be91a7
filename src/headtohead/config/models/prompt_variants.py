"""Several prompts for one LLM: a list of templates, or seeded variations of one, each run as a pass of its own.

``prompts:`` on a ``kind: openai`` or ``kind: causal-lm`` entry turns the model into one pass per
prompt (``name@p1`` … ``name@pK``), each an ordinary model of the run over the same examples; the
statistics pool them again (:mod:`headtohead.stats.prompt_pool`). Variations follow Sclar et al.
(2024): the separators between the template's parts and between the labels, the casing of its
words, the order of the labels and of the few-shot turns. Pass 1 is always the template as written.
See ``docs/llm.md``, "Prompts as a source of noise".
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from pydantic import Field, ValidationError

from headtohead.config.base import Section
from headtohead.config.models.base import ModelConfig

__all__ = ["PromptVariations", "PromptVariant", "VARIED", "prompt_passes", "restyled"]

#: What a seeded variation may change.
Varied = Literal["label_order", "separators", "casing", "few_shot_order"]
VARIED: tuple[Varied, ...] = ("label_order", "separators", "casing", "few_shot_order")
#: Between the template's lines (a run of newlines is one break).
_BREAKS = ("\n\n", "\n", " ", "\n---\n")
#: Between the labels of ``{labels}``.
_LABEL_SEPARATORS = (", ", " | ", " / ", "; ", " or ")
_CASINGS: tuple[Literal["as written", "lower", "upper"], ...] = ("as written", "lower", "upper")


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


class PromptVariant(Section):
    """One pass of a model asked with several prompts (set by the expansion, not written by hand)."""

    of: str = Field(description="The model as written in the experiment.")
    index: int = Field(ge=1, description="This prompt's number, from 1.")
    count: int = Field(ge=2, description="The model's prompts in all.")
    line_break: str | None = Field(
        default=None, description="What replaced the template's line breaks (None: as written)."
    )
    labels_separator: str = Field(default=", ", description="Between the labels of {labels}.")
    casing: Literal["as written", "lower", "upper"] = "as written"
    label_order_seed: int | None = Field(
        default=None, description="Seed of the labels' order in {labels} (None: the data's)."
    )
    few_shot_seed: int | None = Field(default=None, description="Seed of the few-shot turns' order (None: the run's).")

    def label_order(self, n: int) -> list[int]:
        """The order this prompt shows ``n`` labels in (``{labels}``, ``{label_descriptions}``)."""
        if self.label_order_seed is None:
            return list(range(n))
        return [int(i) for i in np.random.default_rng(self.label_order_seed).permutation(n)]

    def few_shot_order(self, default: np.random.Generator) -> np.random.Generator:
        """The generator that orders the few-shot turns: this prompt's own, or ``default``."""
        return default if self.few_shot_seed is None else np.random.default_rng(self.few_shot_seed)


def restyled(template: str, line_break: str | None, casing: str) -> str:
    """``template`` with its line breaks replaced and its own words re-cased; the fields are untouched.

    Examples
    --------
    >>> restyled("Text: {text}\\n\\nAnswer {{one}} of {labels}.", " ", "upper")
    'TEXT: {text} ANSWER {{ONE}} OF {labels}.'
    """
    parts = []
    for literal, field, spec, conversion in string.Formatter().parse(template):
        if line_break is not None:
            literal = re.sub(r"\n+", line_break, literal)
        literal = literal.lower() if casing == "lower" else literal.upper() if casing == "upper" else literal
        parts.append(literal.replace("{", "{{").replace("}", "}}"))
        if field is not None:
            parts.append("{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}")
    return "".join(parts)


def _varied(template: str, variations: PromptVariations, index: int) -> tuple[str, dict[str, Any]]:
    """Prompt ``index`` (from 2) of the variations: its template and the variant's keys."""
    rng, vary = np.random.default_rng([variations.seed, index]), set(variations.vary)
    line_break = str(rng.choice(_BREAKS)) if "separators" in vary else None
    casing = _CASINGS[int(rng.integers(len(_CASINGS)))] if "casing" in vary else "as written"
    keys: dict[str, Any] = {
        "line_break": line_break,
        "labels_separator": str(rng.choice(_LABEL_SEPARATORS)) if "separators" in vary else ", ",
        "casing": casing,
        "label_order_seed": int(rng.integers(2**31)) if "label_order" in vary else None,
        "few_shot_seed": int(rng.integers(2**31)) if "few_shot_order" in vary else None,
    }
    return restyled(template, line_break, casing), keys


def prompt_passes(model: ModelConfig) -> list[ModelConfig]:
    """``model`` as its passes: one per prompt when it has ``prompts``, else itself.

    Examples
    --------
    >>> from headtohead.config.models import model_settings
    >>> m = model_settings(name="llm", kind="openai", source="m", base_url="http://127.0.0.1:1/v1",
    ...                    prompts=["A {text}", "B {text}"])
    >>> [(p.name, p.prompt, p.variant.index) for p in prompt_passes(m)]
    [('llm@p1', 'A {text}', 1), ('llm@p2', 'B {text}', 2)]
    """
    prompts = getattr(model, "prompts", None)
    if not prompts:
        return [model]
    variants: list[tuple[str, dict[str, Any]]]
    if isinstance(prompts, PromptVariations):
        template = str(getattr(model, "prompt"))  # noqa: B009 (a key of the LLM families only)
        variants = [(template, {})] + [_varied(template, prompts, k) for k in range(2, prompts.count + 1)]
    else:
        variants = [(listed, {}) for listed in prompts]
    passes = []
    for k, (template, keys) in enumerate(variants, start=1):
        variant = PromptVariant(of=model.name, index=k, count=len(variants), **keys)
        update = {"name": f"{model.name}@p{k}", "prompts": None, "variant": variant, "prompt": template}
        passes.append(model.model_copy(update=update))
    return passes
