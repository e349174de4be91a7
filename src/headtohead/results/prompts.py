"""Typed records of a model asked with several prompts: each prompt's accuracy, and the comparison pooled over prompts.

:func:`headtohead.stats.prompt_pool.prompt_pools` fills them; they land in ``results.json``
(``stats.prompts``) and the reports read them. Differences are ``model_a − model_b``.
"""

from __future__ import annotations

from pydantic import Field

from headtohead.results.base import Record

__all__ = ["PromptScore", "PromptFamily", "PromptGap", "PromptPool", "PromptSummary"]


class PromptScore(Record):
    """One prompt's pass: the variant model it ran as, its prompt in words, its accuracy (exact)."""

    model: str = Field(description="The pass's name in the run (e.g. 'llm@p2').")
    prompt: str = Field(description="What this prompt varies, in words.")
    correct: int
    n: int
    accuracy: float = Field(description="correct / n, every example counted (a failure is a wrong answer).")


class PromptFamily(Record):
    """A model asked with several prompts: one pass per prompt over the same examples."""

    name: str = Field(description="The model as written in the experiment.")
    prompts: list[PromptScore]
    mean_accuracy: float = Field(description="Accuracy averaged over the prompts (the pooled score).")
    best: str = Field(description="The pass whose prompt scored best: chosen after seeing these examples.")
    worst: str


class PromptGap(Record):
    """One cell of a pooled comparison: a prompt of A (and of B) compared on its own, by the run's paired test."""

    model_a: str
    model_b: str
    estimate: float
    low: float
    high: float
    p_value: float
    better: str | None = Field(default=None, description="The pass the paired test found better at α, if any.")


class PromptPool(Record):
    """A and B compared over all their prompts: the prompt a random effect, the examples clustered."""

    model_a: str
    model_b: str
    n_prompts_a: int
    n_prompts_b: int
    n_examples: int
    estimate: float = Field(description="Accuracy of A averaged over its prompts minus B's.")
    low: float
    high: float
    p_value: float
    p_adjusted: float = Field(
        description="Holm over the run's comparisons of models: the pooled ones and the pairs of models asked with "
        "one prompt (a pass is never compared as a model)."
    )
    df: float = Field(description="Degrees of freedom of the t reference (Satterthwaite).")
    se_examples: float = Field(description="Standard error from the examples (clustered by example or group).")
    se_prompts: float = Field(description="Standard error from the choice of prompts (their spread).")
    significant: bool
    winner: str | None = None
    cells: list[PromptGap] = Field(description="Every prompt of A against every prompt of B.")
    ahead_a: int = Field(description="Cells where A's accuracy is higher.")
    ahead_b: int
    better_a: int = Field(description="Cells where the paired test found A better.")
    better_b: int


class PromptSummary(Record):
    """Every prompted model of a run and every pooled comparison involving one."""

    families: list[PromptFamily]
    pools: list[PromptPool] = Field(default_factory=list)
    alpha: float
    family_size: int = Field(
        default=0,
        description="Comparisons in the run's Holm family: one per pair of models, a prompted model counted once "
        "(0: written before this field, when the family was the pooled comparisons).",
    )
    sentences: list[str] = Field(default_factory=list, description="The verdicts in words (report.words.prompts).")
