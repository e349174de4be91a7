"""How each pass of a model asked with several prompts is made: its template, its labels' order, its separators.

The config says what varies (``prompts:``, :mod:`headtohead.config.models.prompt_variants`); here a
pass's prompt is made from it, the same way wherever the pass runs (this process, a worker):
a listed template as written, or pass ``k`` of ``{count, seed, vary}`` seeded variations —
the separators between the template's parts and between the labels, the casing of its words,
the order of the labels and of the few-shot turns (Sclar et al. 2024). Pass 1 is always the
template as written. See ``docs/llm.md``, "Prompts as a source of noise".
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from headtohead.config.models.prompt_variants import PromptVariations
from headtohead.config.models.prompting import PromptSettings

__all__ = ["PromptVariant", "pass_prompt", "restyled"]

#: Between the template's lines (a run of newlines is one break).
_BREAKS = ("\n\n", "\n", " ", "\n---\n")
#: Between the labels of ``{labels}``.
_LABEL_SEPARATORS = (", ", " | ", " / ", "; ", " or ")
Casing = Literal["as written", "lower", "upper"]
_CASINGS: tuple[Casing, ...] = ("as written", "lower", "upper")


@dataclass(frozen=True)
class PromptVariant:
    """One pass of a model asked with several prompts: which one, and how it shows its labels and few-shot turns."""

    #: This prompt's number, from 1.
    index: int
    #: The model's prompts in all.
    count: int
    #: What replaced the template's line breaks (``None``: as written).
    line_break: str | None = None
    #: Between the labels of ``{labels}``.
    labels_separator: str = ", "
    casing: Casing = "as written"
    #: Seed of the labels' order in ``{labels}`` (``None``: the data's).
    label_order_seed: int | None = None
    #: Seed of the few-shot turns' order (``None``: the run's).
    few_shot_seed: int | None = None

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


def pass_prompt(settings: PromptSettings, index: int | None) -> tuple[PromptSettings, PromptVariant | None]:
    """The settings pass ``index`` (from 0) asks with — its template as ``prompt`` — and how it shows the labels.

    ``index`` ``None`` (a model measured once, or loaded for the speed pass) is the first prompt.
    A model without ``prompts:`` is returned as it is, with no variant.

    Examples
    --------
    >>> from headtohead.config.models import model_settings
    >>> m = model_settings(name="llm", kind="openai", source="m", base_url="http://127.0.0.1:1/v1",
    ...                 prompts=["A {text}", "B {text}"])
    >>> [(s.name, s.prompt, v.index) for s, v in (pass_prompt(m, k) for k in (0, 1))]
    [('llm', 'A {text}', 1), ('llm', 'B {text}', 2)]
    """
    prompts = settings.prompts
    if not prompts:
        return settings, None
    k = 0 if index is None else index
    if isinstance(prompts, PromptVariations):
        template, keys = (settings.prompt, {}) if k == 0 else _varied(settings.prompt, prompts, k + 1)
        count = prompts.count
    else:
        template, keys, count = prompts[k], {}, len(prompts)
    variant = PromptVariant(index=k + 1, count=count, **keys)
    return settings.model_copy(update={"prompt": template, "prompts": None}), variant
