"""A model run several times (``repeats:``): what its runs show, and its comparisons over every run.

A run of a stochastic model (an LLM sampled at temperature 0.7, dropout left on, a seeded
tie-break) is one draw of the runs it could have made: its accuracy moves from run to run, and
an example it got right once may be wrong the next time. Each run is one pass over the same
examples (``ModelPredictions.passes``, factor ``repeat``).

**The comparison with both sources of noise** (examples, then runs within examples). For every
example ``i`` the gap of the two models' mean correctness over their runs,
``d_i = mean_r c_A,i,r − mean_r c_B,i,r``; the gap is ``d̄``, A's accuracy averaged over its runs
minus B's. Its variance has two parts that add:

* **examples** — ``var(d_i)/n`` (clustered by the data's group when it has one). The run-to-run
  noise within an example is in ``d_i`` (its mean over k runs), so this is the paired t-test on
  the per-example mean correctness: valid however large that noise is, where pooling the runs as
  if they were k·n independent examples is not (it counts one example's k runs as k pieces of
  evidence, and calls a gap made of a few examples "better" far too often);
* **runs** — whole runs that move together (a run on another GPU, a server's batch): the
  spread of each model's per-run accuracies, ``s²/k`` per model (none with one run) — as the
  prompts' spread enters a comparison pooled over prompts (:mod:`headtohead.stats.prompt_pool`). It
  holds the per-example noise once more, so the interval errs on the wide side (level 3–5 % at
  α = 5 % by simulation, where subtracting that noise out was 7.5 % with 2 runs).

**The noise floor.** Each repeated model has two: how far the accuracies of two of its single runs differ,
``t_{1−α/2, k−1}·√2·s`` (a prediction bound from its k runs, ``RepeatModel.two_runs_differ``), and how far two
means of k of its runs differ, that over ``√k`` (``RepeatModel.means_differ``). The gap compared is between means
over runs, so it is held against the second: a pair whose gap lies within the larger of its two models' mean
floors (each with its own k) is never called better, whatever its p. The rule only withholds "better", so the
level stays at most the test's (``docs/statistics.md``, section 15). On each slice of the data the same
comparison runs on the slice's examples against the slice's mean floors (:func:`with_repeat_slices`).

The t reference takes Satterthwaite's degrees of freedom (examples: n − 1 or groups − 1; runs:
k − 1). A model with one run is compared as it is: against another model with one run, the run's
ordinary paired test (:func:`headtohead.stats.analyse`) decides, unchanged. The level and the
coverage, shown by simulation: ``docs/statistics.md``, "Repeated runs".
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from headtohead.metrics import CATALOGUE
from headtohead.results.comparison import ModelStats, StatsSummary
from headtohead.results.predictions import Predictions
from headtohead.results.repeats import ChangedExample, MetricSpread, RepeatModel, RepeatPool, RepeatSummary
from headtohead.results.slices import SliceSummary
from headtohead.stats.multiple import holm_adjust, rank_groups
from headtohead.stats.prompt_pool import _decided as _prompt_decided
from headtohead.stats.prompt_pool import _prompt_variance, _readjusted, _satterthwaite

__all__ = [
    "RepeatGap",
    "two_level_gap",
    "pair_floor",
    "run_spread",
    "repeat_model",
    "repeat_pools",
    "with_repeat_family",
    "with_repeat_slices",
    "MOST_CHANGED_KEPT",
]

#: Examples kept per model in ``RepeatModel.most_changed``.
MOST_CHANGED_KEPT = 10


@dataclass(frozen=True)
class RepeatGap:
    """The gap of A's and B's accuracies averaged over their runs (see the module docstring)."""

    estimate: float
    low: float
    high: float
    p_value: float
    df: float
    se_examples: float
    se_runs: float


def _run_variance(correct: np.ndarray) -> tuple[float, float]:
    """The variance whole runs add to a model's mean accuracy, ``s²/k`` of its runs' accuracies, and its degrees of
    freedom ``k − 1`` (0, ∞ with one run): the prompts' rule (:func:`~headtohead.stats.prompt_pool.pooled_gap`),
    runs in place of prompts.

    The runs' spread holds the whole-run effect (``σ²_run``) and, once more, the per-example noise
    (``σ²_ε/n``) already in the examples' part: the sum errs on the wide side. The unbiased
    ``max(0, MS_runs − MS_residual)/(n·k)`` of the two-way layout was tried and rejected: with 2 or 3
    runs its estimate is often cut to 0, and the test then says "better" 7.5 % of the time at α = 5 %
    (``docs/statistics.md``, section 15).
    """
    return _prompt_variance(correct)


def _examples_variance(d: np.ndarray, groups: np.ndarray | None) -> tuple[float, float]:
    """The variance of the mean of ``d`` over examples (clustered by group when given), and its degrees of freedom."""
    n = len(d)
    centred = d - d.mean()
    if groups is None:
        return float(np.var(d, ddof=1) / n), float(n - 1)
    _, members = np.unique(np.asarray(groups), return_inverse=True)
    sums = np.bincount(members, weights=centred)
    g = len(sums)
    if g < 2:
        return 0.0, np.inf
    return float(g / (g - 1) * (sums**2).sum() / n**2), float(g - 1)


def two_level_gap(
    correct_a: np.ndarray, correct_b: np.ndarray, groups: np.ndarray | None = None, confidence: float = 0.95
) -> RepeatGap:
    """The gap ``mean accuracy(A) − mean accuracy(B)`` over the runs, with its interval and two-sided p.

    Parameters
    ----------
    correct_a, correct_b : ndarray of bool, shape (runs, n)
        Per run, which examples each model got right (a model run once: one row).
    groups : ndarray, optional
        The examples' groups of related examples (``data.group_column``); default: each its own.
    confidence : float

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = rng.choice([0.55, 0.95], size=300)            # opposite strengths, equal on average
    >>> a = rng.random((5, 300)) < p
    >>> b = rng.random((5, 300)) < 1.5 - p
    >>> gap = two_level_gap(a, b)
    >>> gap.low < 0 < gap.high
    True
    """
    from scipy import stats  # on first use: a run imports this module before it has checked its inputs

    a, b = np.atleast_2d(correct_a).astype(np.float64), np.atleast_2d(correct_b).astype(np.float64)
    d = a.mean(axis=0) - b.mean(axis=0)
    estimate = float(d.mean())
    if len(d) < 2:  # one example (a slice of one): no spread to test against, so no decision and no interval
        return RepeatGap(estimate, -1.0, 1.0, 1.0, 0.0, 0.0, 0.0)
    parts = [_examples_variance(d, groups), _run_variance(a), _run_variance(b)]
    variance = sum(v for v, _ in parts)
    df = _satterthwaite(parts)
    se_examples, se_runs = float(np.sqrt(parts[0][0])), float(np.sqrt(parts[1][0] + parts[2][0]))
    if variance <= 0.0:
        return RepeatGap(estimate, estimate, estimate, 1.0 if estimate == 0 else 0.0, df, se_examples, se_runs)
    se = float(np.sqrt(variance))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, df)) * se
    p_value = float(min(1.0, 2.0 * stats.t.sf(abs(estimate) / se, df)))
    return RepeatGap(estimate, max(-1.0, estimate - half), min(1.0, estimate + half), p_value, df, se_examples, se_runs)


def run_spread(metric: str, values: Sequence[float], confidence: float = 0.95) -> MetricSpread:
    """A metric over a model's runs: the mean, the run-to-run standard deviation and its chi-square interval.

    Examples
    --------
    >>> s = run_spread("accuracy", [0.80, 0.82, 0.78, 0.81, 0.79])
    >>> round(s.sd, 4), round(s.sd_low, 4), round(s.sd_high, 4)
    (0.0158, 0.0095, 0.0454)
    """
    from scipy import stats

    x = np.asarray(values, dtype=np.float64)
    k = len(x)
    sd = float(np.std(x, ddof=1)) if k > 1 else 0.0
    tail = (1.0 - confidence) / 2.0
    sd_low = sd * float(np.sqrt((k - 1) / stats.chi2.ppf(1.0 - tail, k - 1))) if k > 1 else 0.0
    upper = float(stats.chi2.ppf(tail, k - 1)) if k > 1 else 0.0
    sd_high = sd * float(np.sqrt((k - 1) / upper)) if upper > 0 else None
    if sd_high is not None and metric in CATALOGUE and CATALOGUE[metric].scale == "share":
        sd_high = min(sd_high, _largest_share_sd(k))  # the true SD of shares lies below it: the cap keeps coverage
    return MetricSpread(
        metric=metric,
        values=[float(v) for v in x],
        mean=float(x.mean()),
        sd=sd,
        sd_low=sd_low,
        sd_high=sd_high,
        low=float(x.min()),
        high=float(x.max()),
    )


def _largest_share_sd(k: int) -> float:
    """The largest standard deviation (``ddof=1``) that ``k`` values in [0, 1] can have: half of them at 0, half at 1.

    Examples
    --------
    >>> round(_largest_share_sd(3), 4), round(float(np.std([0, 0, 1], ddof=1)), 4)
    (0.5774, 0.5774)
    """
    low = k // 2
    return float(np.sqrt(low * (k - low) / (k * (k - 1))))


def _spreads(passes: Sequence[ModelStats], confidence: float) -> list[MetricSpread]:
    """Every metric each run has (accuracy first), over the runs."""
    fields = ("accuracy", "balanced_accuracy", "f1_macro", "f1_weighted", "ece", "brier", "nll")
    found: dict[str, list[float]] = {}
    for field in fields:
        values = [getattr(p, field) for p in passes]
        if all(v is not None for v in values):
            found[field] = [v.value for v in values]
    for name in passes[0].metrics:
        values = [p.metrics.get(name) for p in passes]
        if all(v is not None for v in values):
            found[name] = [v.value for v in values if v is not None]
    return [run_spread(metric, values, confidence) for metric, values in found.items()]


def _two_runs_differ(accuracy: np.ndarray, confidence: float = 0.95) -> float | None:
    """How far two single runs differ: a ``confidence`` bound on ``|accuracy of a run − accuracy of another|``,
    ``t_{(1+confidence)/2, k−1}·√2·s`` (95 %: ``t_{0.975, k−1}·√2·s``).

    Two new runs differ by ``X₁ − X₂`` of variance ``2σ²``; with ``s`` from the k runs at hand,
    ``(X₁ − X₂)/(s√2)`` follows Student's t with ``k − 1`` degrees of freedom: a prediction bound.

    Examples
    --------
    >>> round(_two_runs_differ(np.array([0.80, 0.82, 0.78, 0.81, 0.79])), 4)
    0.0621
    """
    bound = _gap_bound(accuracy, confidence)
    # two accuracies differ by at most 100 pp: a larger bound would still cover, and say nothing
    return None if bound is None else min(1.0, bound)


def _gap_bound(accuracy: np.ndarray, confidence: float) -> float | None:
    """``t_{(1+confidence)/2, k−1}·√2·s`` of ``k`` runs' accuracies, uncapped (``None`` with fewer than 2 runs)."""
    from scipy import stats

    k = len(accuracy)
    if k < 2:
        return None
    return float(stats.t.ppf(0.5 + confidence / 2.0, k - 1) * np.sqrt(2.0) * np.std(accuracy, ddof=1))


def _means_differ(accuracy: np.ndarray, confidence: float = 0.95) -> float | None:
    """The noise floor a gap over runs is held against: a ``confidence`` bound on how far the mean accuracies of
    two sets of k runs of the model differ, ``t_{(1+confidence)/2, k−1}·√2·s/√k`` (:func:`_two_runs_differ`'s bound
    over ``√k``), at most 100 pp.

    Two new means of k runs differ by ``M₁ − M₂`` of variance ``2σ²/k``; with ``s`` from the k runs at hand,
    ``(M₁ − M₂)/(s·√(2/k))`` follows Student's t with ``k − 1`` degrees of freedom. For a model listed twice,
    each listing run k times, it is the gap the two listings show by the runs' noise alone.

    Examples
    --------
    >>> round(_means_differ(np.array([0.80, 0.82, 0.78, 0.81, 0.79])), 4)
    0.0278
    """
    bound = _gap_bound(accuracy, confidence)
    return None if bound is None else min(1.0, bound / float(np.sqrt(len(accuracy))))  # at most 100 pp apart


def _answer_name(k: int, labels: Sequence[str]) -> str:
    return labels[k] if 0 <= k < len(labels) else "(no answer)"


def repeat_model(
    name: str,
    pred: np.ndarray,
    y_true: np.ndarray,
    labels: Sequence[str],
    passes: Sequence[ModelStats],
    order: np.ndarray,
    confidence: float = 0.95,
) -> RepeatModel:
    """What a model's runs show: each metric's run-to-run spread, and how steady each example's answer is.

    Parameters
    ----------
    name : str
    pred : ndarray of int, shape (runs, n)
        Each run's answer per example (an index into ``labels``; outside it: no answer).
    y_true : ndarray of int, shape (n,)
    labels : sequence of str
        Every class a prediction may name (the data's, then any outside it).
    passes : sequence of ModelStats
        Each run's own statistics (its metrics).
    order : ndarray of int, shape (n,)
        The dataset row of each example (``ChangedExample.index``).
    confidence : float

    Examples
    --------
    >>> from headtohead.results.estimates import Estimate
    >>> e = lambda v: Estimate(value=v, low=v, high=v, method="exact")
    >>> runs = [ModelStats(name=f"m@r{k}", n_examples=4, accuracy=e(a), balanced_accuracy=e(a), f1_macro=e(a),
    ...                    f1_weighted=e(a)) for k, a in ((1, 0.75), (2, 0.5), (3, 0.75))]
    >>> pred = np.array([[0, 1, 1, 0], [0, 1, 0, 1], [0, 1, 1, 1]])
    >>> m = repeat_model("m", pred, np.array([0, 1, 1, 1]), ("a", "b"), runs, np.arange(4))
    >>> m.changed, m.pass_all, m.pass_any, round(m.agreement, 4), m.most_changed[0].answers
    (2, 0.5, 1.0, 0.8333, {'b': 2, 'a': 1})
    """
    pred = np.atleast_2d(np.asarray(pred, dtype=np.int64))
    k, n = pred.shape
    correct = pred == np.asarray(y_true)[None, :]
    top = np.array([np.unique(pred[:, i], return_counts=True)[1].max() for i in range(n)], dtype=np.int64)
    agreement = top / k
    changed = ~(pred == pred[0:1, :]).all(axis=0)
    right = correct.sum(axis=0)
    ranked = sorted(np.flatnonzero(changed), key=lambda i: (agreement[i], -len(np.unique(pred[:, i])), order[i]))
    most = []
    for i in ranked[:MOST_CHANGED_KEPT]:
        values, times = np.unique(pred[:, i], return_counts=True)
        given = sorted(zip(values.tolist(), times.tolist(), strict=True), key=lambda vt: (-vt[1], vt[0]))
        most.append(
            ChangedExample(
                index=int(order[i]),
                gold=_answer_name(int(y_true[i]), labels),
                answers={_answer_name(v, labels): t for v, t in given},
                right=int(right[i]),
                agreement=float(agreement[i]),
            )
        )
    spreads = _spreads(passes, confidence)
    return RepeatModel(
        name=name,
        n_repeats=k,
        n_examples=n,
        spreads=spreads,
        two_runs_differ=_two_runs_differ(correct.mean(axis=1), confidence),
        means_differ=_means_differ(correct.mean(axis=1), confidence),
        agreement=float(agreement.mean()) if n else 0.0,
        pass_all=float(correct.all(axis=0).mean()) if n else 0.0,
        pass_any=float(correct.any(axis=0).mean()) if n else 0.0,
        changed=int(changed.sum()),
        changed_share=float(changed.mean()) if n else 0.0,
        most_changed=most,
    )


def repeat_pools(predictions: Predictions, summary: StatsSummary, alpha: float = 0.05) -> RepeatSummary | None:
    """Every repeated model's runs, and its comparison over every run with every other model.

    Parameters
    ----------
    predictions : Predictions
        The run's predictions: a model run several times holds one pass per run (factor ``repeat``).
    summary : StatsSummary
        The run's statistics so far: each repeated model's runs' own (``ModelStats.passes``).
    alpha : float
        Level of the tests (Holm over the comparisons; :func:`with_repeat_family` joins the run's other
        comparisons to that family); intervals at ``1 − alpha``.

    Returns
    -------
    RepeatSummary or None
        ``None`` when no model was run several times.
    """
    repeated = [m for m in predictions.with_passes() if predictions[m].factor == "repeat"]
    if not repeated:
        return None
    y, confidence = predictions.y_true, 1.0 - alpha
    labels = predictions.all_labels
    stats = {m.name: m for m in summary.models}
    models = [
        repeat_model(m, predictions[m].pred, y, labels, stats[m].passes, predictions.order, confidence)
        for m in repeated
    ]
    floors = {m.name: m.means_differ for m in models}
    pools = [_pool(predictions, a, b, floors, None, confidence) for a, b in _repeat_pairs(predictions)]
    adjusted = holm_adjust([p.p_value for p in pools]) if len(pools) > 1 else [p.p_value for p in pools]
    pools = [_decided(pool, float(p), alpha) for pool, p in zip(pools, adjusted, strict=True)]
    return RepeatSummary(models=models, pools=pools, alpha=alpha, family_size=len(pools))


def _repeat_pairs(predictions: Predictions) -> list[tuple[str, str]]:
    """The pairs compared over runs: every pair of models of which one or both were run several times (a model
    asked with several prompts is compared by its own rule, :mod:`headtohead.stats.prompt_pool`, never here)."""
    repeated = {m for m in predictions.with_passes() if predictions[m].factor == "repeat"}
    units = [m for m in predictions.models if m in repeated or not predictions[m].passes]
    return [(a, b) for a, b in itertools.combinations(units, 2) if a in repeated or b in repeated]


def _pool(
    predictions: Predictions,
    a: str,
    b: str,
    floors: Mapping[str, float | None] | None,
    mask: np.ndarray | None,
    confidence: float,
) -> RepeatPool:
    """A and B compared over every run (on the examples of ``mask``; all by default), not yet Holm-adjusted.

    ``floors``: each model's noise floor (how far two means of its k runs differ); ``None``: each model's on these
    examples, from its runs' accuracies on them (a slice's own floor).
    """
    y = predictions.y_true
    keep = np.ones(len(y), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    correct = {m: np.atleast_2d(predictions[m].correct(y))[:, keep] for m in (a, b)}
    groups = None if predictions.groups is None else np.asarray(predictions.groups)[keep]
    gap = two_level_gap(correct[a], correct[b], groups, confidence)
    if floors is None:
        floors = {m: _means_differ(correct[m].mean(axis=1), confidence) for m in (a, b)}
    floor, floor_of = pair_floor({m: f for m in (a, b) if (f := floors.get(m)) is not None})
    return RepeatPool(
        model_a=a,
        model_b=b,
        n_repeats_a=predictions[a].n_passes,
        n_repeats_b=predictions[b].n_passes,
        n_examples=int(keep.sum()),
        estimate=gap.estimate,
        low=gap.low,
        high=gap.high,
        p_value=gap.p_value,
        p_adjusted=gap.p_value,
        df=gap.df,
        se_examples=gap.se_examples,
        se_runs=gap.se_runs,
        significant=False,
        noise_floor=floor,
        floor_of=floor_of,
        within_floor=floor is not None and abs(gap.estimate) <= floor,
    )


def with_repeat_slices(summary: SliceSummary, predictions: Predictions, masks: Sequence[np.ndarray]) -> SliceSummary:
    """``summary`` with every pair of models compared over runs on every slice, in the slices' one Holm family.

    Per slice (``masks``, in ``summary.slices``' order) the two-level test of :func:`two_level_gap` on its
    examples, and the noise-floor rule with each model's mean floor on the slice (its runs' accuracies there):
    ``SliceResult.repeat_pairs``. Holm's adjustment runs over the ordinary (slice, pair) tests and these
    together. ``summary`` is returned as it is when no model was run several times.
    """
    pairs = _repeat_pairs(predictions)
    if not pairs:
        return summary
    alpha, confidence = summary.alpha, summary.confidence
    pools = [[_pool(predictions, a, b, None, mask, confidence) for a, b in pairs] for mask in masks]
    ordinary = [p.p_value for s in summary.slices for p in s.pairs]
    adjusted = iter(holm_adjust(ordinary + [p.p_value for found in pools for p in found]))
    slices = []
    for result, found in zip(summary.slices, pools, strict=True):
        compared = []
        for pair in result.pairs:
            q = float(next(adjusted))
            winner = (pair.model_a if pair.difference > 0 else pair.model_b) if q <= alpha else None
            compared.append(pair.model_copy(update={"p_adjusted": q, "significant": q <= alpha, "winner": winner}))
        slices.append(result.model_copy(update={"pairs": compared, "repeat_pairs": found}))
    decided = [
        s.model_copy(update={"repeat_pairs": [_decided(p, float(next(adjusted)), alpha) for p in s.repeat_pairs]})
        for s in slices
    ]
    return summary.model_copy(update={"slices": decided, "n_tests": len(ordinary) + len(pairs) * len(masks)})


def pair_floor(floors: Mapping[str, float]) -> tuple[float | None, str | None]:
    """The noise floor a pair's gap is held against: the larger of its models' mean floors, and whose it is.

    A model run once has no floor (``None``: not in ``floors``); a pair with none has none.

    Examples
    --------
    >>> pair_floor({"llm": 0.013, "enc": 0.005})
    (0.013, 'llm')
    >>> pair_floor({})
    (None, None)
    """
    if not floors:
        return None, None
    name = max(floors, key=lambda m: floors[m])
    return floors[name], name


def _decided(pool: RepeatPool, p_adjusted: float, alpha: float) -> RepeatPool:
    """The pool decided at its Holm-adjusted p: "better" only where the test says so and the gap lies outside the
    noise floor of the means compared (``within_floor``) — the floor only withholds "better", never grants it."""
    significant = p_adjusted <= alpha and not pool.within_floor
    winner = (pool.model_a if pool.estimate > 0 else pool.model_b) if significant else None
    return pool.model_copy(update={"p_adjusted": p_adjusted, "significant": significant, "winner": winner})


def with_repeat_family(
    summary: StatsSummary, repeats: RepeatSummary | None
) -> tuple[StatsSummary, RepeatSummary | None]:
    """One Holm family and one ranking of the run's models, a repeated model counted once.

    The family holds the ordinary pairs (models run once), the comparisons pooled over prompts
    (``summary.prompts``, when a model has several) and the comparisons over runs; Holm's adjustment
    runs over all of them, and the ranking places a repeated model once, by its accuracy averaged over
    its runs. (``--until-decided`` with a repeated model is refused by the experiment.)
    """
    if repeats is None:
        return summary, None
    comparisons, pools = list(summary.comparisons), list(repeats.pools)
    prompts = summary.prompts
    prompt_pools = list(prompts.pools) if prompts is not None else []
    if summary.sequential is None:
        adjusted = holm_adjust(
            [c.p_value for c in comparisons] + [p.p_value for p in prompt_pools] + [p.p_value for p in pools]
        )
        ordinary, pooled = (
            adjusted[: len(comparisons)],
            adjusted[len(comparisons) : len(comparisons) + len(prompt_pools)],
        )
        comparisons = [_readjusted(c, float(p)) for c, p in zip(comparisons, ordinary, strict=True)]
        prompt_pools = [_prompt_decided(p, float(q), repeats.alpha) for p, q in zip(prompt_pools, pooled, strict=True)]
        pools = [
            _decided(pool, float(p), repeats.alpha)
            for pool, p in zip(pools, adjusted[len(comparisons) + len(prompt_pools) :], strict=True)
        ]
    family_size = len(comparisons) + len(prompt_pools) + len(pools)
    if prompts is not None:
        prompts = prompts.model_copy(update={"pools": prompt_pools, "family_size": family_size})
    accuracy = {m.name: m.accuracy.value for m in summary.models}  # a model with passes: its mean over them
    different = {frozenset({c.model_a, c.model_b}) for c in comparisons if c.significant}
    different |= {frozenset({p.model_a, p.model_b}) for p in prompt_pools if p.significant}
    different |= {frozenset({p.model_a, p.model_b}) for p in pools if p.significant}
    repeats = repeats.model_copy(update={"pools": pools, "family_size": family_size})
    update = {"comparisons": comparisons, "ranking": rank_groups(accuracy, different), "prompts": prompts}
    return summary.model_copy(update=update), repeats
