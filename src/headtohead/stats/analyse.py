"""``analyse``: every statistic of one run, from the saved per-example predictions.

See ``docs/statistics.md``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from headtohead.errors import ConfigError, ResultsError, did_you_mean
from headtohead.metrics import CATALOGUE, defaults
from headtohead.results.comparison import (
    Comparison,
    ContingencyTable,
    Estimate,
    MetricDifference,
    ModelStats,
    StatsSettings,
    StatsSummary,
)
from headtohead.results.passes import pass_label
from headtohead.results.predictions import Predictions
from headtohead.stats.bootstrap import CIMethod, Interval, paired_bootstrap
from headtohead.stats.calibration import calibration
from headtohead.stats.fragility import with_fragility
from headtohead.stats.intervals import bootstrap_estimates, estimate_from_interval, proportion_estimate
from headtohead.stats.joint import joint_bootstrap
from headtohead.stats.label_suspects import SUSPECTS_KEPT, label_suspects
from headtohead.stats.mcnemar import RULE, mcnemar_pvalues
from headtohead.stats.multiple import holm_adjust, rank_groups
from headtohead.stats.paired import CLUSTERED_RULE, PairedCorrectness
from headtohead.stats.passes import model_over_passes, pooled_over_passes
from headtohead.stats.picked import extra_metrics, model_metrics, pair_metrics
from headtohead.stats.power import minimum_detectable_effect
from headtohead.stats.where import DISAGREEMENTS_KEPT, ExampleFacts, run_disagreements, run_slices

__all__ = ["analyse", "PER_CLASS_LIMIT", "MDE_POWER"]

#: Per-class recall intervals and differences are reported up to this many classes
#: (beyond, e.g. 1,000 ImageNet classes, they would swamp results and reports).
PER_CLASS_LIMIT = 20
#: Power at which the detectable gap is quoted.
MDE_POWER = 0.8
#: The default metrics with a bootstrap interval of their own in every run (``ModelStats`` fields; accuracy
#: has Wilson's, the calibration metrics come from the joint draw).
_BOOTSTRAP_METRICS = tuple(
    m.name
    for m in defaults()
    if m.compute is not None and not m.needs_proba and m.name in ModelStats.model_fields and m.name != "accuracy"
)
#: Fewest examples per class present (on average) for a bootstrap interval of a class-averaged metric:
#: below it the resampled per-class figures are too coarse and the intervals undercover
#: (``benchmarks/audit_statistics.py``: 85–92 % at 2.5–5 examples per class, ≥ 94 % from 10 on).
MIN_EXAMPLES_PER_CLASS = 10
_CALIBRATION_METRICS = ("brier", "nll")
_CI_METHODS = ("bca", "percentile")
_PLUG_IN_ECE_NOTE = (
    "the plug-in ECE is biased upwards (a calibrated model scores above 0), so no interval is "
    "shown; the debiased ℓ2 calibration error carries one"
)


def _check_settings(alpha: float, n_resamples: int, ci_method: str, ece_bins: int) -> None:
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ConfigError(f"alpha={alpha} must lie between 0 and 1 (exclusive); the usual value is 0.05")
    if not isinstance(n_resamples, int) or n_resamples < 100:
        raise ConfigError(
            f"n_resamples={n_resamples} is too few for a bootstrap interval; use at least 100 (2000 is the default)"
        )
    if ci_method not in _CI_METHODS:
        raise ConfigError(
            f"ci_method='{ci_method}' is unknown{did_you_mean(ci_method, _CI_METHODS)} (choose bca or percentile)"
        )
    if not isinstance(ece_bins, int) or not 1 <= ece_bins <= 1000:
        raise ConfigError(f"ece_bins={ece_bins} must be a whole number from 1 to 1000; 15 is usual")


def _check_predictions(predictions: Predictions, measured: Predictions) -> None:
    """``predictions`` (every pass apart) are consistent, and every model of ``measured`` predicted something.

    A model with no prediction anywhere cannot be judged (its scores or answers need fixing); one pass of a
    model measured several ways can have none (a repeat that only rambled): its examples count as wrong.
    """
    for name, model in measured.models.items():
        if len(measured.y_true) and not model.valid.any():
            raise ResultsError(
                f"model '{name}' has no prediction for any example (NaN or infinite scores, or no "
                f"usable answer, everywhere); check the model's outputs"
            )
    y, k = np.asarray(predictions.y_true), len(predictions.label_names)
    width = len(predictions.all_labels)  # the dataset's classes, then those only models know
    n = len(y)
    if n == 0:
        raise ResultsError("the predictions hold no evaluated examples: nothing to analyse; check the dataset")
    if k == 0 or y.min() < 0 or y.max() >= k:
        raise ResultsError(f"true labels must be class indices 0..{k - 1}; the predictions file is inconsistent")
    for name, model in predictions.models.items():
        pred = np.asarray(model.pred)
        proba = np.asarray(model.proba) if model.proba is not None else np.zeros((n, width))  # None: not available
        if pred.shape != (n,) or proba.shape != (n, width):
            raise ResultsError(
                f"model '{name}': predictions have shapes {pred.shape}/{proba.shape}, expected "
                f"{(n,)}/{(n, width)}; re-run the evaluation"
            )
        scored = model.scored
        if model.valid.any() and (pred[model.valid].min() < 0 or pred[model.valid].max() >= width):
            raise ResultsError(f"model '{name}': predicted classes outside 0..{width - 1}; re-run the evaluation")
        if not np.all(np.isfinite(proba[scored])) or np.any(proba[scored] < 0):
            raise ResultsError(
                f"model '{name}': probabilities contain NaN, infinite or negative values; check the model's outputs"
            )


def _check_groups(groups: np.ndarray | None) -> None:
    if groups is not None and len(np.unique(groups)) < 2:
        raise ConfigError(
            "data.group_column: every evaluated example is in one group, so nothing can be said "
            "beyond it; name a column that tells several users, documents or conversations apart"
        )


def _too_few_per_class(y: np.ndarray) -> str | None:
    """Why the class-averaged metrics get no bootstrap interval on these rows, or ``None`` when they do."""
    present = len(np.unique(y))
    if len(y) >= MIN_EXAMPLES_PER_CLASS * present:
        return None
    return (
        f"{len(y) / present:.1f} examples per class on average (fewer than {MIN_EXAMPLES_PER_CLASS}): too few for "
        f"a bootstrap interval of a class-averaged metric to cover, so none is shown"
    )


def _without_interval(estimate: Estimate, note: str) -> Estimate:
    return estimate.model_copy(update={"low": None, "high": None, "method": "none", "note": note})


def _class_masks(predictions: Predictions) -> dict[str, np.ndarray]:
    """Each class present among the rows (up to :data:`PER_CLASS_LIMIT` classes): its rows."""
    if len(predictions.label_names) > PER_CLASS_LIMIT:
        return {}
    y = predictions.y_true
    return {str(name): y == k for k, name in enumerate(predictions.label_names) if np.any(y == k)}


Calibrated = tuple[dict[str, dict[str, Interval]], dict[tuple[str, str], dict[str, Interval]]]


def _calibration_intervals(
    predictions: Predictions,
    names: Sequence[str],
    rows: np.ndarray | None,
    *,
    confidence: float,
    n_resamples: int,
    ci_method: CIMethod,
    ece_bins: int,
    seed: int,
    groups: np.ndarray | None,
) -> Calibrated:
    """Brier and NLL of ``names`` and of their pairs from one set of resamples of ``rows`` (:mod:`~headtohead.stats.joint`)."""
    sub = predictions if rows is None else predictions.restricted(rows, names)
    return joint_bootstrap(
        sub.y_true,
        {m: (sub[m].pred, _probabilities(sub, m)) for m in names},
        metrics=_CALIBRATION_METRICS,
        pairs=list(itertools.combinations(names, 2)),
        label_names=predictions.label_names,
        n_resamples=n_resamples,
        confidence=confidence,
        method=ci_method,
        n_bins=ece_bins,
        seed=np.random.default_rng(np.random.SeedSequence([seed, 2])),
        groups=None if groups is None else groups if rows is None else groups[rows],
    )


def _probabilities(predictions: Predictions, name: str) -> np.ndarray:
    proba = predictions[name].proba
    assert proba is not None  # only models with probabilities are asked for
    return proba


class _Calibration:
    """Calibration intervals on the answered rows: one draw for the models that answered everything, own draws
    for each model with failures and for each pair with one (its rows both answered)."""

    def __init__(self, predictions: Predictions, groups: np.ndarray | None, options: dict[str, Any], seed: int) -> None:
        self.predictions, self.groups, self.options, self.seed = predictions, groups, options, seed
        self.names = [m for m in predictions.models if predictions[m].proba is not None]
        clean = [m for m in self.names if predictions[m].scored.all()]
        self.models, self.pairs = self._draw(clean, None) if clean else ({}, {})

    def _draw(self, names: Sequence[str], rows: np.ndarray | None) -> Calibrated:
        return _calibration_intervals(self.predictions, names, rows, seed=self.seed, groups=self.groups, **self.options)

    def of_model(self, name: str) -> dict[str, Interval]:
        if name not in self.names:
            return {}
        if name not in self.models:
            self.models.update(self._draw([name], self.predictions[name].scored)[0])
        return self.models[name]

    def of_pair(self, a: str, b: str) -> dict[str, Interval]:
        if a not in self.names or b not in self.names:
            return {}
        if (a, b) not in self.pairs:
            both = self.predictions[a].scored & self.predictions[b].scored
            self.pairs.update(self._draw([a, b], both)[1])
        return self.pairs[(a, b)]


def _model_stats(
    name: str,
    predictions: Predictions,
    calibrated: dict[str, Interval],
    *,
    confidence: float,
    n_resamples: int,
    ci_method: CIMethod,
    ece_bins: int,
    seed: np.random.SeedSequence,
    groups: np.ndarray | None,
) -> ModelStats:
    model, y = predictions[name], predictions.y_true
    correct, answered = model.correct(y), model.valid
    estimates = bootstrap_estimates(
        y,
        model.pred,
        None,
        list(_BOOTSTRAP_METRICS),
        label_names=predictions.label_names,
        n_resamples=n_resamples,
        confidence=confidence,
        method=ci_method,
        n_bins=ece_bins,
        seed=np.random.default_rng(seed),
        groups=groups,
    )
    if (sparse := _too_few_per_class(y)) is not None:
        estimates = {metric: _without_interval(estimate, sparse) for metric, estimate in estimates.items()}
    recalls = {
        label: proportion_estimate(correct, confidence, groups, rows)
        for label, rows in _class_masks(predictions).items()
    }
    failed = int((~answered).sum())
    stats: dict[str, Any] = dict(
        name=name,
        n_examples=len(y),
        n_failed=failed,
        accuracy=proportion_estimate(correct, confidence, groups),
        # none answered: the accuracy of the answers is unknown, not 0
        accuracy_answered=proportion_estimate(correct, confidence, groups, answered) if 0 < failed < len(y) else None,
        balanced_accuracy=estimates["balanced_accuracy"],
        f1_macro=estimates["f1_macro"],
        f1_weighted=estimates["f1_weighted"],
        recall_per_class=recalls,
    )
    if model.proba is not None:
        scored = model.scored  # an LLM's answers may have a label without probabilities
        record = calibration(
            y[scored],
            model.pred[scored],
            model.proba[scored],
            n_bins=ece_bins,
            level=confidence,
            n_classes=len(predictions.label_names),
        )
        stats.update(
            calibration=record,
            calibration_examples=int(scored.sum()),
            ece=Estimate(
                value=record.ece, low=None, high=None, method="none", confidence=confidence, note=_PLUG_IN_ECE_NOTE
            ),
            **{metric: estimate_from_interval(interval) for metric, interval in calibrated.items()},
        )
    return ModelStats(**stats)


def _accuracy_difference(paired: PairedCorrectness, confidence: float) -> tuple[float, float, float, str]:
    """``(estimate, low, high, method)`` of accuracy(a) − accuracy(b): Tango's score interval (+ clusters)."""
    low, high = paired.interval(confidence)
    return float(paired.estimate), float(low), float(high), paired.method


def _differences(
    a: ModelStats,
    b: ModelStats,
    predictions: Predictions,
    calibrated: dict[str, Interval],
    *,
    confidence: float,
    n_resamples: int,
    ci_method: CIMethod,
    ece_bins: int,
    seed: np.random.SeedSequence,
    groups: np.ndarray | None,
    paired: PairedCorrectness,
) -> list[MetricDifference]:
    """``metric(a) − metric(b)`` for every reported metric, each with its interval (accuracy's: ``paired``)."""
    ma, mb, y = predictions[a.name], predictions[b.name], predictions.y_true
    correct_a, correct_b = ma.correct(y), mb.correct(y)

    def record(
        metric: str,
        difference: float,
        low: float | None,
        high: float | None,
        method: str,
        note: str | None = None,
        answered: bool = False,
    ) -> MetricDifference:
        return MetricDifference(
            metric=metric,
            value_a=a.estimate(metric).value,
            value_b=b.estimate(metric).value,
            difference=difference,
            ci_low=low,
            ci_high=high,
            method=method,
            confidence=confidence,
            higher_is_better=CATALOGUE[metric].higher_is_better if metric in CATALOGUE else True,
            note=note,
            on_answered_rows=answered,
        )

    out = [record("accuracy", *_accuracy_difference(paired, confidence))]
    for label, rows in _class_masks(predictions).items():
        recall = PairedCorrectness.of(correct_a, correct_b, groups, rows)
        out.append(record(f"recall:{label}", *_accuracy_difference(recall, confidence)))
    boots = paired_bootstrap(
        y,
        ma.pred,
        mb.pred,
        metrics=list(_BOOTSTRAP_METRICS),
        label_names=predictions.label_names,
        n_resamples=n_resamples,
        confidence=confidence,
        method=ci_method,
        n_bins=ece_bins,
        seed=np.random.default_rng(seed),
        groups=groups,
    )
    failures, sparse = not (ma.scored.all() and mb.scored.all()), _too_few_per_class(y)
    for metric, interval in list(boots.items()) + list(calibrated.items()):
        if sparse is not None and metric in _BOOTSTRAP_METRICS:
            out.append(record(metric, interval.estimate, None, None, "none", sparse))
            continue
        out.append(
            record(
                metric,
                interval.estimate,
                interval.low,
                interval.high,
                interval.method,
                interval.note,
                answered=metric in _CALIBRATION_METRICS and failures,
            )
        )
    return out


def _pair_test(paired: PairedCorrectness) -> tuple[str, float, float, float]:
    """``(test, statistic, p, mid-p)`` of "equal accuracy": McNemar's score test, or its clustered form."""
    midp = float(mcnemar_pvalues(paired.b, paired.c, "midp")[1])
    return paired.test, paired.statistic, float(paired.p_value), midp


def _comparison(
    a: ModelStats,
    b: ModelStats,
    predictions: Predictions,
    test: tuple[str, float, float, float],
    p_adjusted: float,
    n_pairs: int,
    differences: list[MetricDifference],
    alpha: float,
    paired: PairedCorrectness,
) -> Comparison:
    """Assemble one pair's record (significance on the Holm-adjusted p-value)."""
    y = predictions.y_true
    correct_a, correct_b = predictions[a.name].correct(y), predictions[b.name].correct(y)
    n, b_count, c_count = len(y), int(paired.b), int(paired.c)
    both = int(np.sum(correct_a & correct_b))
    table = ContingencyTable(
        both_correct=both, only_a_correct=b_count, only_b_correct=c_count, both_wrong=n - both - b_count - c_count
    )
    significant = bool(p_adjusted <= alpha)
    winner = (a.name if b_count > c_count else b.name) if significant else None
    discordance = table.discordant / n
    # with groups, power as for the examples' effective number (n over the design effect of the gap)
    effective = max(1, int(n / paired.design_effect))
    mde = minimum_detectable_effect(effective, discordance, power=MDE_POWER, alpha=alpha, n_comparisons=n_pairs)
    name, statistic, p_value, midp = test
    return Comparison(
        model_a=a.name,
        model_b=b.name,
        n_examples=n,
        table=table,
        test=name,  # type: ignore[arg-type]
        statistic=statistic,
        p_value=p_value,
        p_value_midp=midp,
        p_adjusted=float(p_adjusted),
        alpha=alpha,
        significant=significant,
        effect=(b_count - c_count) / n,
        odds_ratio=b_count / c_count if c_count else None,
        discordance=discordance,
        differences=differences,
        minimum_detectable_effect=mde,
        mde_power=MDE_POWER,
        winner=winner,
    )


def analyse(
    predictions: Predictions,
    *,
    alpha: float = 0.05,
    n_resamples: int = 2000,
    ci_method: CIMethod = "bca",
    ece_bins: int = 15,
    seed: int = 0,
    examples: ExampleFacts | None = None,
    disagreements_kept: int | None = DISAGREEMENTS_KEPT,
    metrics: Sequence[str] = (),
    suspects_kept: int | None = SUSPECTS_KEPT,
) -> StatsSummary:
    """Every statistic of a run: per-model intervals, every pair compared, a ranking, where models differ.

    Parameters
    ----------
    predictions : Predictions
        All models' predictions on one evaluation set (same examples, same order). A model measured
        several ways (asked with several prompts: ``ModelPredictions.passes``) has each pass's own
        intervals (``ModelStats.passes``) and its figures as a model by its factor's rule; no pass is
        compared or ranked as a model — the model is compared pooled over its passes, in one Holm
        family and one ranking with the ordinary pairs, counted once (:mod:`headtohead.stats.passes`).
        The detectable gap of each pair is quoted for that family.
    alpha : float
        Significance level of the pairwise tests (family-wise, via Holm); intervals are at
        ``1 − alpha`` confidence.
    n_resamples : int
        Bootstrap resamples per model and per pair.
    ci_method : {"bca", "percentile"}
        Bootstrap interval method (the metrics without a closed form: balanced accuracy,
        F1, Brier, NLL).
    ece_bins : int
        Confidence bins of the calibration errors and the reliability diagram.
    seed : int
        Seed of the bootstrap; the same seed gives the same intervals.
    examples : ExampleFacts, optional
        Sizes, extra columns and ids of the examples (dataset order): slices by input size and
        by column, ids on the disagreements. Slices by class are made without them. Groups of
        related examples come with the predictions (``predictions.groups``): every test and
        interval then accounts for them.
    disagreements_kept : int, optional
        Rows of each direction of disagreement kept per pair (``None``: all).
    metrics : sequence of str
        Metrics of the catalogue (:mod:`headtohead.metrics`) reported beside the default ones
        (``stats.metrics``): per model with a bootstrap interval (``ModelStats.metrics``), on every
        pair's difference and per slice (:mod:`~headtohead.stats.picked`).
    suspects_kept : int, optional
        Examples every model got wrong with the same answer kept (``None``: all;
        :mod:`~headtohead.stats.label_suspects`).

    Returns
    -------
    StatsSummary
        With one model: its intervals and calibration, no comparisons. ``slices`` and
        ``disagreements``: :mod:`headtohead.stats.where`.

    Raises
    ------
    ConfigError
        A setting is out of range, or every example is in one group.
    ResultsError
        The predictions are inconsistent (shapes, classes, non-finite probabilities).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 500)
    >>> p = Predictions(np.arange(500), y, ("neg", "pos"))
    >>> for name, acc in (("good", 0.9), ("bad", 0.7)):
    ...     pred = np.where(rng.random(500) < acc, y, 1 - y)
    ...     p.add(name, pred, np.eye(2)[pred] * 0.8 + 0.1)
    >>> summary = analyse(p, n_resamples=200)
    >>> summary.comparisons[0].winner
    'good'
    """
    _check_settings(alpha, n_resamples, ci_method, ece_bins)
    # each pass's own figures are computed as a model's are (seeded by its place among them), never paired
    measured, predictions = predictions, predictions.per_pass()
    prompted = {pass_label(m, k): m for m in measured.with_passes() for k in measured[m].passes}
    _check_predictions(predictions, measured)
    groups = predictions.groups
    _check_groups(groups)
    confidence = 1.0 - alpha
    names = list(predictions.models)
    options: dict[str, Any] = dict(
        confidence=confidence, n_resamples=n_resamples, ci_method=ci_method, ece_bins=ece_bins
    )
    calibrated = _Calibration(predictions, groups, options, seed)
    picked = extra_metrics(metrics)
    boot: dict[str, Any] = dict(confidence=confidence, n_resamples=n_resamples, method=ci_method, n_bins=ece_bins)
    boot.update(groups=groups, label_names=predictions.label_names)
    models = {
        name: _model_stats(
            name,
            predictions,
            calibrated.of_model(name),
            seed=np.random.SeedSequence([seed, 0, i]),
            groups=groups,
            **options,
        )
        for i, name in enumerate(names)
    }
    for i, name in enumerate(names) if picked else ():  # own seed streams: no other number moves
        found = model_metrics(name, predictions, picked, options=boot, seed=np.random.SeedSequence([seed, 3, i]))
        models[name] = models[name].model_copy(update={"metrics": found})
    pairs = [
        (i, j) for i, j in itertools.combinations(range(len(names)), 2) if not {names[i], names[j]} & set(prompted)
    ]
    n_models = len({prompted.get(name, name) for name in names})  # a prompted model once
    n_family = max(len(pairs), n_models * (n_models - 1) // 2)
    y = predictions.y_true
    counted = [
        PairedCorrectness.of(predictions[names[i]].correct(y), predictions[names[j]].correct(y), groups)
        for i, j in pairs
    ]
    tests = [_pair_test(paired) for paired in counted]
    adjusted = holm_adjust([t[2] for t in tests])
    comparisons = []
    for (i, j), paired, test, p_adj in zip(pairs, counted, tests, adjusted, strict=True):
        a, b = models[names[i]], models[names[j]]
        diffs = _differences(
            a,
            b,
            predictions,
            calibrated.of_pair(a.name, b.name),
            seed=np.random.SeedSequence([seed, 1, i, j]),
            groups=groups,
            paired=paired,
            **options,
        )
        if picked:
            seeded = np.random.SeedSequence([seed, 4, i, j])
            diffs += pair_metrics(a, b, predictions, picked, options=boot, seed=seeded)
        comparisons.append(_comparison(a, b, predictions, test, float(p_adj), n_family, diffs, alpha, paired))
    different = {frozenset({c.model_a, c.model_b}) for c in comparisons if c.significant}
    ranking = rank_groups({name: models[name].accuracy.value for name in names if name not in prompted}, different)
    rule = RULE if groups is None else CLUSTERED_RULE
    settings = StatsSettings(
        alpha=alpha,
        confidence=confidence,
        n_resamples=n_resamples,
        ci_method=ci_method,
        ece_bins=ece_bins,
        seed=seed,
        power=MDE_POWER,
        mcnemar_rule=rule,
        failures="counted as wrong",
        group_column=predictions.group_column if groups is not None else None,
        n_groups=int(len(np.unique(groups))) if groups is not None else None,
        metrics=picked,
    )
    summary = StatsSummary(
        settings=settings,
        models=[
            model_over_passes(measured, m, [models[pass_label(m, k)] for k in measured[m].passes])
            if measured[m].passes
            else models[m]
            for m in measured.models
        ],
        comparisons=comparisons,
        ranking=ranking,
        slices=run_slices(measured, examples, alpha=alpha, metrics=picked),
        disagreements=run_disagreements(measured, examples.ids if examples else None, kept=disagreements_kept),
        label_suspects=label_suspects(measured, examples.ids if examples else None, kept=suspects_kept),
    )
    # fragility last: the Holm family is final only once the pooled comparisons have joined it
    return with_fragility(pooled_over_passes(measured, summary, alpha), predictions)
