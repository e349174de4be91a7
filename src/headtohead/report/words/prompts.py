"""The words of a model asked with several prompts: what each prompt varies, per-prompt scores, pooled verdicts.

A prompted model's score is its accuracy averaged over its prompts; the best prompt is named
only as chosen after seeing the examples (its accuracy is biased upwards as a score of the
model). A pooled verdict says how many prompts agree with it and gives the pooled interval.
"""

from __future__ import annotations

from typing import Any

from headtohead.report.words.numbers import format_p, format_percent, format_pp, interval_pp
from headtohead.results.prompts import PromptFamily, PromptPool, PromptSummary

__all__ = [
    "prompt_description",
    "family_sentence",
    "summary_note",
    "pool_sentence",
    "with_prompt_sentences",
    "PROMPT_RULE",
]

#: How the pooled comparison is made, in one line (the reports' note under the table).
PROMPT_RULE = (
    "pooled over prompts: the gap of the mean accuracies over each model's prompts; its interval adds the "
    "examples' variance (clustered by example) and the prompts' spread, a t reference with Satterthwaite's "
    "degrees of freedom; Holm over the run's comparisons of models (one per pair of models, a prompted model counted once)"
)


def prompt_description(variant: Any, few_shot: int = 0, source: str | None = None) -> str:
    """What one pass's prompt is, in words: as written, a listed template, what its variation changes, or the file
    its answers were stored in.

    Parameters
    ----------
    variant : PromptVariant or None
        The pass's prompt (``index``, ``casing``, ``line_break``, ``labels_separator``, ``label_order_seed``,
        ``few_shot_seed``: :class:`headtohead.adapters.prompt_variants.PromptVariant`); ``None``: the model's one
        prompt, or a stored pass.
    few_shot : int
        The model's few-shot turns per class (their order is a change only when there are some).
    source : str, optional
        The prediction file a stored pass read.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> prompt_description(SimpleNamespace(index=2, casing="upper", line_break=None, labels_separator=" | ",
    ...                                    label_order_seed=None, few_shot_seed=None))
    "upper case, labels separated by ' | '"
    >>> prompt_description(None, source="p2.csv")
    'the answers stored in p2.csv'
    """
    if source is not None:
        return f"the answers stored in {source}"
    if variant is None:
        return "the prompt as written"
    changes = []
    if variant.casing != "as written":
        changes.append(f"{variant.casing} case")
    if variant.line_break is not None:
        changes.append(f"lines joined by {variant.line_break!r}")
    if variant.labels_separator != ", ":
        changes.append(f"labels separated by {variant.labels_separator!r}")
    if variant.label_order_seed is not None:
        changes.append("labels in a shuffled order")
    if variant.few_shot_seed is not None and few_shot > 0:
        changes.append("few-shot turns reordered")
    if changes:
        return ", ".join(changes)
    return "the prompt as written" if variant.index == 1 else f"listed template {variant.index}"


def family_sentence(family: PromptFamily) -> str:
    """A prompted model's score over its prompts; its best prompt named as chosen, never as its score."""
    scores = [p.accuracy for p in family.prompts]
    best = next(p for p in family.prompts if p.model == family.best)
    return (
        f"{family.name}: accuracy {format_percent(family.mean_accuracy)} averaged over {len(scores)} prompts "
        f"(from {format_percent(min(scores))} to {format_percent(max(scores))}); the best prompt, {best.model} "
        f"({format_percent(best.accuracy)}), was chosen after seeing these examples, so its accuracy overstates "
        f"what the model would score on new ones."
    )


def summary_note(family: PromptFamily) -> str:
    """What a prompted model's column of the summary table is: the mean of its passes (a count their sum), never its
    best prompt."""
    return (
        f"{family.name}: the mean of its {len(family.prompts)} prompts' passes ({family.prompts[0].model} …), "
        f"without an interval (its comparisons pooled over prompts carry one), and its examples without a "
        f"prediction summed over them; each prompt's accuracy is under "
        f'"Prompts as a source of noise", the best, {family.best}, named as chosen after seeing these examples.'
    )


def _where(pool: PromptPool) -> str:
    """``prompts`` (one side has one pass) or ``pairs of prompts``."""
    return "prompts" if min(pool.n_prompts_a, pool.n_prompts_b) == 1 else "pairs of prompts"


def _prompts(pool: PromptPool) -> str:
    """``5 prompts of llm``, or ``5 × 3 prompts`` when both models have several."""
    if pool.n_prompts_b == 1 or pool.n_prompts_a == 1:
        many, name = (pool.n_prompts_a, pool.model_a) if pool.n_prompts_a > 1 else (pool.n_prompts_b, pool.model_b)
        return f"{many} prompts of {name}"
    return f"{pool.n_prompts_a} × {pool.n_prompts_b} prompts"


def _agreement(pool: PromptPool) -> str:
    """How many prompts agree: the winner's ``ahead on 4 of 5 prompts``, or both sides' counts."""
    cells, where = len(pool.cells), _where(pool)
    if pool.winner is not None:
        mine = pool.winner == pool.model_a
        ahead, better = (pool.ahead_a, pool.better_a) if mine else (pool.ahead_b, pool.better_b)
        return f"{pool.winner} is better on {ahead} of {cells} {where} (significantly, alone, on {better})"
    return (
        f"{pool.model_a} is ahead on {pool.ahead_a} of {cells} {where}, {pool.model_b} on {pool.ahead_b} "
        f"(significantly, alone: {pool.better_a} and {pool.better_b})"
    )


def pool_sentence(pool: PromptPool, n_pools: int) -> str:
    """One pooled comparison: the verdict, the pooled gap and interval, and how many prompts agree.

    Examples
    --------
    >>> pool = PromptPool(model_a="llm", model_b="enc", n_prompts_a=5, n_prompts_b=1, n_examples=500,
    ...     estimate=0.04, low=0.01, high=0.07, p_value=0.01, p_adjusted=0.01, df=30.0, se_examples=0.01,
    ...     se_prompts=0.01, significant=True, winner="llm", cells=[], ahead_a=4, ahead_b=1, better_a=2, better_b=0)
    >>> pool_sentence(pool.model_copy(update={"cells": [None] * 5}), 1)
    'llm is better than enc pooled over 5 prompts of llm: llm − enc = +4.0 pp (interval +1.0…+7.0 pp, p = 0.010); llm is better on 4 of 5 prompts (significantly, alone, on 2).'
    """
    gap = f"{pool.model_a} − {pool.model_b} = {format_pp(pool.estimate)} pp"
    holm = f", Holm over {n_pools} comparisons of models p {format_p(pool.p_adjusted)}" if n_pools > 1 else ""
    numbers = f"(interval {interval_pp(pool.low, pool.high)} pp, p {format_p(pool.p_value)}{holm})"
    if pool.winner is not None:
        loser = pool.model_b if pool.winner == pool.model_a else pool.model_a
        return (
            f"{pool.winner} is better than {loser} pooled over {_prompts(pool)}: {gap} {numbers}; {_agreement(pool)}."
        )
    return f"No significant difference pooled over {_prompts(pool)}: {gap} {numbers}; {_agreement(pool)}."


def with_prompt_sentences(summary: PromptSummary | None) -> PromptSummary | None:
    """``summary`` with its sentences: each prompted model's scores, then each pooled verdict."""
    if summary is None:
        return None
    sentences = [family_sentence(f) for f in summary.families]
    sentences += [pool_sentence(p, summary.family_size or len(summary.pools)) for p in summary.pools]
    return summary.model_copy(update={"sentences": sentences})
