"""The keys of a language model asked to classify in words: the prompt, few-shot turns, sampling.

Every LLM family shares them (``openai`` extends :class:`PromptSettings` with its HTTP keys); the
prompt is a template with ``{text}`` (required), ``{labels}`` and ``{label_descriptions}``, or a
Jinja template (``{{ text }}``, and the example's other columns), checked where it is written; the
columns it uses are checked against the data when the two meet.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any, Literal

from jinja2 import StrictUndefined, TemplateSyntaxError, meta
from jinja2.sandbox import SandboxedEnvironment
from pydantic import Field, field_validator, model_validator

from headtohead.config.base import Section
from headtohead.config.models.base import ModelConfig
from headtohead.config.models.passes import PassSpec, pass_specs
from headtohead.config.models.prompt_variants import PromptVariations

__all__ = [
    "PromptSettings",
    "LabelShown",
    "DEFAULT_PROMPT",
    "DEFAULT_SYSTEM",
    "DEFAULT_MIN_LABEL_MASS",
    "prompt_fields",
    "is_jinja",
    "jinja_environment",
    "PROMPT_FIELDS",
]

#: The prompt when none is given: the text, the labels, and the one-word answer wanted.
DEFAULT_PROMPT = (
    "Classify the text into exactly one of these labels: {labels}.\n\nText: {text}\n\nAnswer with the label only."
)
#: The system message when none is given.
DEFAULT_SYSTEM = "You are a careful classifier. You answer with one label and nothing else."
#: Least share of an answer's first-token probability on the labels for its class probabilities to be kept.
DEFAULT_MIN_LABEL_MASS = 0.9
#: The fields every prompt template may use (a Jinja template also ``texts`` and the example's other columns).
PROMPT_FIELDS = ("text", "labels", "label_descriptions")


class LabelShown(Section):
    """How a prompt shows one of the data's labels: the name the model reads (and answers with), and what it means."""

    name: str | None = Field(default=None, min_length=1, description="The name shown (none: the data's).")
    description: str | None = Field(
        default=None, min_length=1, description="What the label means, listed by {label_descriptions}."
    )


class PromptSettings(ModelConfig):
    """What an LLM family is asked and how it answers: prompt, system prompt, few-shot examples, sampling."""

    prompt: str = Field(
        default=DEFAULT_PROMPT,
        description="The user message: {text} (required), {labels} and {label_descriptions}; or a Jinja template "
        "({{ text }}, {{ labels }} and the example's columns kept with the data).",
    )
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

    label_display: dict[str | int, str | LabelShown] | None = Field(
        default=None,
        description="How the prompt shows the labels, keyed by the data's label name or index: a display name, "
        "or {name, description}; {labels} shows the names, {label_descriptions} lists 'name: description', and "
        "the answer is read against the names and mapped back to the data's labels.",
    )
    prompts: list[str] | PromptVariations | None = Field(
        default=None,
        description="Several prompts, one pass each over the same examples, compared pooled: a list of "
        "templates (replacing prompt), or {count, seed, vary} seeded variations of prompt.",
    )

    def pass_specs(self) -> tuple[PassSpec, ...]:
        """One pass per prompt of ``prompts:`` (none without it: the model is asked with ``prompt`` once).

        Examples
        --------
        >>> from headtohead.config.models import model_settings
        >>> m = model_settings(name="llm", kind="openai", source="m", base_url="http://127.0.0.1:1/v1",
        ...                    prompts={"count": 3})
        >>> [(p.key, p.factor) for p in m.pass_specs()]
        [('p1', 'prompt'), ('p2', 'prompt'), ('p3', 'prompt')]
        """
        if self.prompts is None:
            return super().pass_specs()  # its repeats, if any
        count = len(self.prompts) if isinstance(self.prompts, list) else self.prompts.count
        return pass_specs("prompt", count)

    def templates(self) -> list[str]:
        """The templates as written: each of a list under ``prompts:``, else ``prompt`` (which variations vary)."""
        return list(self.prompts) if isinstance(self.prompts, list) else [self.prompt]

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
    def _prompts_or_repeats(self) -> PromptSettings:
        # prompts × repeats would need a three-level test (examples, prompts, runs): one factor per model
        if self.prompts is not None and self.repeats is not None and self.repeats > 1:
            raise ValueError(
                f"prompts: and repeats: {self.repeats} together are not supported (a model varies one way: its "
                f"prompt or its run); drop repeats, or give each prompt as a model of its own with repeats"
            )
        return self

    @model_validator(mode="after")
    def _prompt_or_list(self) -> PromptSettings:
        # a dumped experiment holds prompt at its default beside the list: that is not given
        if isinstance(self.prompts, list) and "prompt" in self.model_fields_set and self.prompt != DEFAULT_PROMPT:
            raise ValueError(
                "both prompt and a list of prompts are given; put the template into the list and remove prompt "
                "(prompt is what prompts: {count, seed} varies)"
            )
        if isinstance(self.prompts, PromptVariations) and is_jinja(self.prompt):
            raise ValueError(
                "prompts: {count, seed} varies {text}-style templates only, and prompt is a Jinja template; "
                "write the variations out as a list of templates under prompts:"
            )
        return self

    @field_validator("label_display")
    @classmethod
    def _display_names(
        cls, shown: dict[str | int, str | LabelShown] | None
    ) -> dict[str | int, str | LabelShown] | None:
        if not shown:
            return shown
        names = [value if isinstance(value, str) else value.name for value in shown.values()]
        folded = [" ".join(name.split()).casefold() for name in names if name is not None]
        twice = sorted({name for name in folded if folded.count(name) > 1})
        if twice:
            raise ValueError(
                f"label_display shows {', '.join(repr(n) for n in twice)} for more than one label; give each "
                f"label a name of its own (answers are read against them)"
            )
        return shown

    @field_validator("prompt")
    @classmethod
    def _template(cls, template: str) -> str:
        if is_jinja(template):
            return _jinja_template(template)
        try:
            fields = prompt_fields(template)
        except ValueError as exc:
            raise ValueError(f"prompt template does not parse ({exc}); write literal braces as {{{{ and }}}}") from None
        unknown = sorted({f for f in fields if f not in PROMPT_FIELDS})
        if unknown:
            raise ValueError(
                f"prompt template uses {', '.join('{' + f + '}' for f in unknown)}; it may use only "
                f"{{text}}, {{labels}} and {{label_descriptions}} (write literal braces as {{{{ and }}}}; the "
                f"example's other columns: a Jinja template, {{{{ column }}}})"
            )
        if "text" not in fields:
            raise ValueError(
                "prompt template has no {text}: every example would get the same prompt; put {text} "
                "where the example goes"
            )
        return template


def _jinja_template(template: str) -> str:
    """A Jinja prompt template that parses and uses ``text`` (or ``texts``), else one ``ValueError``."""
    fields = prompt_fields(template)
    if not {"text", "texts"} & set(fields):
        raise ValueError(
            "prompt template has no {{ text }}: every example would get the same prompt; put {{ text }} "
            "where the example goes"
        )
    return template


def is_jinja(template: str) -> bool:
    """A Jinja template (``{{ text }}``, ``{% if … %}``), not a ``{text}`` one: ``{{``/``{%`` and no ``{field}``.

    Examples
    --------
    >>> [is_jinja(t) for t in ["{{ text }}", "{% if title %}{{ title }}{% endif %}{{ text }}", "{{x}} {text}", "{text}"]]
    [True, True, False, False]
    """
    if "{%" in template:  # a statement: no str.format template writes one
        return True
    if "{{" not in template:
        return False
    try:
        return not any(name is not None for _, name, _, _ in string.Formatter().parse(template))
    except ValueError:  # "{{ x }" does not parse as str.format either: Jinja's parser names the fault
        return True


def jinja_environment() -> SandboxedEnvironment:
    """The sandbox prompt templates render in: an undefined name is an error, never an empty string."""
    return SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)


def prompt_fields(template: str) -> list[str]:
    """The names a prompt template uses: its ``{field}`` names, or a Jinja template's free variables, sorted.

    Raises
    ------
    ValueError
        The braces do not parse, or the Jinja template has a syntax error (the message says where).
    """
    if is_jinja(template):
        try:
            return sorted(meta.find_undeclared_variables(jinja_environment().parse(template)))
        except TemplateSyntaxError as exc:
            raise ValueError(f"prompt template is not valid Jinja (line {exc.lineno}: {exc.message})") from None
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
