"""A model measured several ways (its passes), pooled by one rule per factor — in this one place.

A model asked with several prompts is one model with a pass per prompt (``ModelPredictions.passes``,
factor ``prompt``). A pass is never compared or ranked as a model: each factor has one rule that
says what the model's figures are over its passes and how it is compared with the others.

* **prompt** — the model's figures are the means over its prompts (never its best prompt, chosen
  after seeing the examples); it is compared with every other model by the gap of mean accuracies,
  the prompt a random effect and the examples clustered (:mod:`headtohead.stats.prompt_pool`), those
  comparisons in one Holm family and one ranking with the ordinary pairs, the model counted once.

* **repeat** — the model's figures are the means over its runs, each metric's run-to-run spread
  and each example's steadiness beside them; it is compared with every other model by the gap of
  mean accuracies over every run, examples then runs within examples
  (:mod:`headtohead.stats.repeat_pool`), in the same Holm family and ranking, counted once.

A new factor is one more :class:`PassRule` in :data:`RULES` — its model figures and its
comparisons — and nothing else in ``stats/``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from headtohead.errors import ResultsError
from headtohead.results.base import Record
from headtohead.results.comparison import ModelStats, StatsSummary
from headtohead.results.passes import mean_over_passes
from headtohead.results.predictions import Predictions
from headtohead.stats.prompt_pool import prompt_pools, with_pooled_family
from headtohead.stats.repeat_pool import repeat_pools, with_repeat_family

__all__ = ["PassRule", "RULES", "model_over_passes", "pooled_over_passes"]


@dataclass(frozen=True)
class PassRule:
    """How the passes of one factor are pooled.

    Attributes
    ----------
    factor : str
        What varies between the passes (``prompt``).
    model : callable
        ``model(name, passes)``: the model's statistics from its passes' own (:class:`ModelStats`).
    compared : callable
        ``compared(predictions, summary, alpha)``: the comparisons of the models with passes of this
        factor against every other model, Holm-adjusted among themselves (``None``: no such model).
    joined : callable
        ``joined(summary, compared)``: the run's one Holm family and one ranking, the model counted once.
    field : str
        The :class:`StatsSummary` field the comparisons land in (``prompts``, ``repeats``).
    """

    factor: str
    model: Callable[[str, Sequence[ModelStats]], ModelStats]
    compared: Callable[[Predictions, StatsSummary, float], Any]
    joined: Callable[[StatsSummary, Any], tuple[StatsSummary, Record | None]]
    field: str


def _prompts_compared(predictions: Predictions, summary: StatsSummary, alpha: float) -> Record | None:
    return prompt_pools(predictions, alpha)


#: Factor → its rule (a factor the config does not take has none), in the order they are joined: the
#: last one's join makes the run's one Holm family of every comparison (repeat's takes the prompts' in).
RULES: dict[str, PassRule] = {
    "prompt": PassRule("prompt", mean_over_passes, _prompts_compared, with_pooled_family, "prompts"),
    "repeat": PassRule("repeat", mean_over_passes, repeat_pools, with_repeat_family, "repeats"),
}


def _rule(factor: str | None, model: str) -> PassRule:
    if factor not in RULES:
        raise ResultsError(
            f"model '{model}' has passes of factor {factor!r}, which no rule pools (known: {', '.join(RULES)}); "
            f"read the file with the headtohead that wrote it"
        )
    return RULES[factor]


def model_over_passes(predictions: Predictions, name: str, passes: Sequence[ModelStats]) -> ModelStats:
    """Model ``name``'s statistics from its passes' own, by its factor's rule."""
    return _rule(predictions[name].factor, name).model(name, passes)


def pooled_over_passes(predictions: Predictions, summary: StatsSummary, alpha: float) -> StatsSummary:
    """``summary`` with every model measured several ways compared pooled over its passes, by its factor's rule.

    The ordinary pairs of ``summary`` (models measured once) and the pooled comparisons make one Holm
    family, and the ranking places each model once (:func:`headtohead.stats.prompt_pool.with_pooled_family`).
    ``summary`` is returned as it is when no model has passes.
    """
    present = {predictions[m].factor: m for m in predictions.with_passes()}
    for factor in present:
        _rule(factor, present[factor])
    for factor in [f for f in RULES if f in present]:  # in RULES' order (see there)
        rule = RULES[factor]
        summary, compared = rule.joined(summary, rule.compared(predictions, summary, alpha))
        summary = summary.model_copy(update={rule.field: compared})
    return summary
