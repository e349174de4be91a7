"""A model asked with several prompts, compared with another over all of them: the prompt a random effect.

One prompt is one sample of the prompts a model could be asked with (wording and format move an
LLM's accuracy by many points), so a verdict on one prompt may not survive another. Every
prompt is one pass over the same examples; the pooled gap is A's accuracy averaged over its
prompts minus B's (B's prompts likewise, or its one pass). Its variance has two parts:

* **examples** — the rows (prompt of A × prompt of B × example) stacked and clustered by
  example (by the data's group when it has one): :class:`~headtohead.stats.paired.PairedCorrectness`
  with groups, its interval read as a standard error;
* **prompts** — the spread of each model's per-prompt accuracies, ``s²_A/P_A + s²_B/P_B``
  (a model with one pass adds nothing).

They add; the t reference takes Satterthwaite's degrees of freedom (examples: groups − 1,
prompts: P − 1), so five prompts that disagree by several points leave a wide interval. The
example-by-prompt noise enters both parts: the interval errs on the wide side.
See ``docs/llm.md``, "Prompts as a source of noise".
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from headtohead.results.comparison import Comparison, StatsSummary
from headtohead.results.passes import pass_label
from headtohead.results.predictions import Predictions
from headtohead.results.prompts import PromptFamily, PromptGap, PromptPool, PromptScore, PromptSummary
from headtohead.stats.across_seeds import standard_error
from headtohead.stats.multiple import holm_adjust, rank_groups
from headtohead.stats.paired import PairedCorrectness

__all__ = ["PooledGap", "pooled_gap", "prompt_family", "prompt_pools", "with_pooled_family"]


@dataclass(frozen=True)
class PooledGap:
    """The pooled accuracy gap of A and B over their prompts (see the module docstring)."""

    estimate: float
    low: float
    high: float
    p_value: float
    df: float
    se_examples: float
    se_prompts: float


def _stacked(correct_a: np.ndarray, correct_b: np.ndarray, groups: np.ndarray | None) -> PairedCorrectness:
    """Every prompt of A against every prompt of B on every example, as rows clustered by example (or group)."""
    n_a, n_b, n = correct_a.shape[0], correct_b.shape[0], correct_a.shape[1]
    rows_a = np.repeat(correct_a, n_b, axis=0).ravel()
    rows_b = np.tile(correct_b, (n_a, 1)).ravel()
    members = np.tile(np.arange(n) if groups is None else np.asarray(groups), n_a * n_b)
    return PairedCorrectness.of(rows_a, rows_b, groups=members)


def _prompt_variance(correct: np.ndarray) -> tuple[float, float]:
    """The variance the choice of prompts adds to a model's mean accuracy, ``s²/P``, and its degrees of freedom."""
    accuracy = correct.mean(axis=1)
    if len(accuracy) < 2:
        return 0.0, np.inf
    return float(np.var(accuracy, ddof=1) / len(accuracy)), float(len(accuracy) - 1)


def _satterthwaite(parts: Sequence[tuple[float, float]]) -> float:
    """Welch–Satterthwaite degrees of freedom of a sum of variances ``(v, df)``."""
    total = sum(v for v, _ in parts)
    spread = sum(v * v / df for v, df in parts if v > 0 and np.isfinite(df))
    return float(total * total / spread) if spread > 0 else np.inf


def pooled_gap(
    correct_a: np.ndarray, correct_b: np.ndarray, groups: np.ndarray | None = None, confidence: float = 0.95
) -> PooledGap:
    """The gap ``mean accuracy(A) − mean accuracy(B)`` over the prompts, with its interval and two-sided p.

    Parameters
    ----------
    correct_a, correct_b : ndarray of bool, shape (prompts, n)
        Per prompt, which examples each model got right (a model with one pass: one row).
    groups : ndarray, optional
        The examples' groups of related examples (``data.group_column``); default: each its own.
    confidence : float

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.random((5, 400)) < np.array([[0.70], [0.75], [0.80], [0.85], [0.90]])
    >>> b = rng.random((1, 400)) < 0.8
    >>> gap = pooled_gap(a, b)
    >>> gap.low < 0 < gap.high, gap.se_prompts > gap.se_examples
    (True, True)
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    correct_a, correct_b = np.atleast_2d(correct_a).astype(bool), np.atleast_2d(correct_b).astype(bool)
    estimate = float(correct_a.mean() - correct_b.mean())
    paired = _stacked(correct_a, correct_b, groups)
    low, high = (float(x) for x in paired.interval(confidence))
    se_examples = standard_error(low, high, confidence) or 0.0
    n_groups = paired.n_groups or correct_a.shape[1]
    parts = [(se_examples**2, float(max(n_groups - 1, 1))), _prompt_variance(correct_a), _prompt_variance(correct_b)]
    variance = sum(v for v, _ in parts)
    df = _satterthwaite(parts)
    if variance <= 0.0:
        return PooledGap(estimate, estimate, estimate, 1.0 if estimate == 0 else 0.0, df, 0.0, 0.0)
    se = float(np.sqrt(variance))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, df)) * se
    p_value = float(2.0 * stats.t.sf(abs(estimate) / se, df))
    se_prompts = float(np.sqrt(parts[1][0] + parts[2][0]))
    return PooledGap(
        estimate, max(-1.0, estimate - half), min(1.0, estimate + half), p_value, df, se_examples, se_prompts
    )


def prompt_family(name: str, passes: Sequence[tuple[str, str]], correct: Mapping[str, np.ndarray]) -> PromptFamily:
    """A prompted model's passes ``(pass name, prompt in words)``, each with its exact accuracy."""
    scores = [
        PromptScore(
            model=model,
            prompt=prompt,
            correct=int(correct[model].sum()),
            n=len(correct[model]),
            accuracy=float(correct[model].mean()),
        )
        for model, prompt in passes
    ]
    ranked = sorted(scores, key=lambda s: s.accuracy)
    return PromptFamily(
        name=name,
        prompts=scores,
        mean_accuracy=float(np.mean([s.accuracy for s in scores])),
        best=ranked[-1].model,
        worst=ranked[0].model,
    )


def _cells(
    names_a: Sequence[str],
    names_b: Sequence[str],
    correct: Mapping[str, np.ndarray],
    groups: np.ndarray | None,
    alpha: float,
) -> list[PromptGap]:
    """Each prompt of A against each prompt of B, by the run's paired test (unadjusted, at α)."""
    cells = []
    for a, b in itertools.product(names_a, names_b):
        paired = PairedCorrectness.of(correct[a], correct[b], groups=groups)
        low, high = (float(x) for x in paired.interval(1.0 - alpha))
        p_value = float(paired.p_value)
        better = None if p_value > alpha else (a if paired.estimate > 0 else b)
        cells.append(
            PromptGap(
                model_a=a,
                model_b=b,
                estimate=float(paired.estimate),
                low=low,
                high=high,
                p_value=p_value,
                better=better,
            )
        )
    return cells


def _pool(
    a: str,
    b: str,
    units: Mapping[str, Sequence[str]],
    correct: Mapping[str, np.ndarray],
    groups: np.ndarray | None,
    alpha: float,
) -> PromptPool:
    """The pooled comparison of units ``a`` and ``b`` (Holm's adjustment filled in by the caller)."""
    names_a, names_b = units[a], units[b]
    gap = pooled_gap(
        np.array([correct[m] for m in names_a]), np.array([correct[m] for m in names_b]), groups, 1.0 - alpha
    )
    cells = _cells(names_a, names_b, correct, groups, alpha)
    return PromptPool(
        model_a=a,
        model_b=b,
        n_prompts_a=len(names_a),
        n_prompts_b=len(names_b),
        n_examples=len(correct[names_a[0]]),
        estimate=gap.estimate,
        low=gap.low,
        high=gap.high,
        p_value=gap.p_value,
        p_adjusted=gap.p_value,
        df=gap.df,
        se_examples=gap.se_examples,
        se_prompts=gap.se_prompts,
        significant=False,
        cells=cells,
        ahead_a=sum(c.estimate > 0 for c in cells),
        ahead_b=sum(c.estimate < 0 for c in cells),
        better_a=sum(c.better in names_a for c in cells),
        better_b=sum(c.better in names_b for c in cells),
    )


def prompt_pools(predictions: Predictions, alpha: float = 0.05) -> PromptSummary | None:
    """Every prompted model's per-prompt accuracies and its pooled comparison with every other model.

    Parameters
    ----------
    predictions : Predictions
        The run's predictions: a model asked with several prompts holds one pass per prompt
        (``ModelPredictions.passes``, factor ``prompt``); the others are compared as one pass.
    alpha : float
        Level of the tests (Holm over the pooled comparisons; :func:`with_pooled_family` joins the run's
        ordinary pairs to that family); intervals at ``1 − alpha``.

    Returns
    -------
    PromptSummary or None
        ``None`` when no model has several prompts. Each prompt is named ``model@key`` and described
        as ``prompt k`` (a run's records say what each varies: the pipeline puts their words in).
    """
    prompted = [m for m in predictions.with_passes() if predictions[m].factor == "prompt"]
    if not prompted:
        return None
    flat = predictions.per_pass()
    y = flat.y_true
    correct = {name: flat[name].correct(y) for name in flat.models}
    families = {
        m: [(pass_label(m, key), f"prompt {i + 1}") for i, key in enumerate(predictions[m].passes)] for m in prompted
    }
    units: dict[str, list[str]] = {name: [label for label, _ in passes] for name, passes in families.items()}
    units.update({name: [name] for name in predictions.models if not predictions[name].passes})
    pairs = [(a, b) for a, b in itertools.combinations(units, 2) if a in families or b in families]
    pools = [_pool(a, b, units, correct, predictions.groups, alpha) for a, b in pairs]
    adjusted = holm_adjust([p.p_value for p in pools]) if len(pools) > 1 else np.array([p.p_value for p in pools])
    pools = [_decided(pool, float(p), alpha) for pool, p in zip(pools, adjusted, strict=True)]
    kept = [prompt_family(name, passes, correct) for name, passes in families.items()]
    return PromptSummary(families=kept, pools=pools, alpha=alpha)


def _decided(pool: PromptPool, p_adjusted: float, alpha: float) -> PromptPool:
    significant = p_adjusted <= alpha
    winner = (pool.model_a if pool.estimate > 0 else pool.model_b) if significant else None
    return pool.model_copy(update={"p_adjusted": p_adjusted, "significant": significant, "winner": winner})


def _readjusted(comparison: Comparison, p_adjusted: float) -> Comparison:
    """``comparison`` decided on ``p_adjusted`` (the winner as :func:`headtohead.stats.analyse` names it)."""
    significant = bool(p_adjusted <= comparison.alpha)
    table = comparison.table
    winner = (
        (comparison.model_a if table.only_a_correct > table.only_b_correct else comparison.model_b)
        if significant
        else None
    )
    return comparison.model_copy(update={"p_adjusted": p_adjusted, "significant": significant, "winner": winner})


def with_pooled_family(
    summary: StatsSummary, prompts: PromptSummary | None
) -> tuple[StatsSummary, PromptSummary | None]:
    """One Holm family and one ranking of the run's models, a prompted model counted once.

    The comparisons of models are the ordinary pairs of models asked with one prompt
    (:func:`headtohead.stats.analyse` compares no pass: a pass is not a model) and
    the pooled comparisons involving a prompted model: one per pair of models, so the family is
    as large as it would be with one prompt each. Holm's adjustment runs over all of them; the
    ranking places a prompted model once, by its accuracy averaged over its prompts, told apart
    by its pooled comparisons. (``--until-decided`` with a prompted model is refused
    by the experiment; a summary decided by sequential tests keeps those decisions, and the pooled
    comparisons their own family.)

    Parameters
    ----------
    summary : StatsSummary
        The ordinary statistics, without the passes' pairs.
    prompts : PromptSummary or None
        :func:`prompt_pools`'s result; ``None`` (no model has several prompts) leaves ``summary`` as it is.

    Returns
    -------
    (StatsSummary, PromptSummary or None)
    """
    if prompts is None:
        return summary, None
    comparisons, pools = list(summary.comparisons), list(prompts.pools)
    if summary.sequential is None:
        adjusted = holm_adjust([c.p_value for c in comparisons] + [p.p_value for p in pools])
        comparisons = [_readjusted(c, float(p)) for c, p in zip(comparisons, adjusted, strict=False)]
        pools = [
            _decided(pool, float(p), prompts.alpha) for pool, p in zip(pools, adjusted[len(comparisons) :], strict=True)
        ]
    prompted = {family.name for family in prompts.families}
    accuracy = {m.name: m.accuracy.value for m in summary.models if m.name not in prompted and not m.passes}
    accuracy.update({family.name: family.mean_accuracy for family in prompts.families})
    different = {frozenset({c.model_a, c.model_b}) for c in comparisons if c.significant}
    different |= {frozenset({p.model_a, p.model_b}) for p in pools if p.significant}
    family_size = len(pools) + (len(comparisons) if summary.sequential is None else 0)
    prompts = prompts.model_copy(update={"pools": pools, "family_size": family_size})
    ranking = rank_groups(accuracy, different)
    return summary.model_copy(update={"comparisons": comparisons, "ranking": ranking}), prompts
