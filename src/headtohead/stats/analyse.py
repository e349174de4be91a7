"""``analyse``: every statistic of one run, from the saved per-example predictions.

For each model: accuracy with its Wilson interval, the other metrics with bootstrap
intervals, and calibration. For every pair: McNemar on paired correctness, paired bootstrap
intervals on the difference of every metric, Holm's adjustment over all pairs, the
minimum detectable effect, and the verdict in words. Then a ranking in groups.

Randomness is seeded per model and per pair from ``seed`` and the model positions, so a
result does not change when an unrelated model is added to the run. The calibration
metrics (ECE, Brier, NLL) of all models and pairs share one set of resamples
(:mod:`headtohead.stats.joint`): they cost work in proportion to the examples, and
resampling them once instead of once per model and per pair keeps a million examples
fast; that draw depends only on ``seed`` and the number of examples.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from headtohead.errors import ConfigError, ResultsError, did_you_mean
from headtohead.results.comparison import (
    Comparison,
    ContingencyTable,
    MetricDifference,
    ModelStats,
    StatsSettings,
    StatsSummary,
)
from headtohead.results.predictions import Predictions
from headtohead.stats.bootstrap import Interval, paired_bootstrap
from headtohead.stats.calibration import calibration
from headtohead.stats.exclusions import scored_rows
from headtohead.stats.intervals import accuracy_estimate, bootstrap_estimates, estimate_from_interval
from headtohead.stats.joint import joint_bootstrap
from headtohead.stats.mcnemar import EXACT_BELOW, McNemarResult, mcnemar_test
from headtohead.stats.bootstrap_metrics import METRICS
from headtohead.stats.multiple import holm_adjust, rank_groups
from headtohead.stats.power import minimum_detectable_effect
from headtohead.stats.where import DISAGREEMENTS_KEPT, ExampleFacts, run_disagreements, run_slices

__all__ = ["analyse", "PER_CLASS_LIMIT", "MDE_POWER"]

#: Per-class recall intervals and differences are reported up to this many classes
#: (beyond, e.g. 1,000 ImageNet classes, they would swamp results and reports).
PER_CLASS_LIMIT = 20
#: Power at which the minimum detectable effect is quoted.
MDE_POWER = 0.8
_BOOTSTRAP_METRICS = ("balanced_accuracy", "f1_macro", "f1_weighted")
_CALIBRATION_METRICS = ("ece", "brier", "nll")
_CI_METHODS = ("bca", "percentile")


def _check_settings(alpha: float, n_resamples: int, ci_method: str, ece_bins: int) -> None:
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ConfigError(f"alpha={alpha} must lie between 0 and 1 (exclusive); the usual value is 0.05")
    if not isinstance(n_resamples, int) or n_resamples < 100:
        raise ConfigError(f"n_resamples={n_resamples} is too few for a bootstrap interval; use at least 100 "
                          f"(2000 is the default)")
    if ci_method not in _CI_METHODS:
        raise ConfigError(f"ci_method='{ci_method}' is unknown{did_you_mean(ci_method, _CI_METHODS)} "
                          f"(choose bca or percentile)")
    if not isinstance(ece_bins, int) or not 1 <= ece_bins <= 1000:
        raise ConfigError(f"ece_bins={ece_bins} must be a whole number from 1 to 1000; 15 is usual")


def _check_predictions(predictions: Predictions) -> None:
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
            raise ResultsError(f"model '{name}': predictions have shapes {pred.shape}/{proba.shape}, expected "
                               f"{(n,)}/{(n, width)}; re-run the evaluation")
        scored = model.valid
        if not scored.any():
            raise ResultsError(f"model '{name}' has no prediction for any example (NaN or infinite scores "
                               f"everywhere); check the model's outputs")
        if pred[scored].min() < 0 or pred[scored].max() >= width:
            raise ResultsError(f"model '{name}': predicted classes outside 0..{width - 1}; re-run the evaluation")
        if not np.all(np.isfinite(proba[scored])) or np.any(proba[scored] < 0):
            raise ResultsError(f"model '{name}': probabilities contain NaN, infinite or negative values; "
                               f"check the model's outputs")


def _metric_names(label_names: Sequence[str]) -> list[str]:
    return _class_metric_names(label_names) + list(_CALIBRATION_METRICS)


def _class_metric_names(label_names: Sequence[str]) -> list[str]:
    per_class = [f"recall:{name}" for name in label_names] if len(label_names) <= PER_CLASS_LIMIT else []
    return list(_BOOTSTRAP_METRICS) + per_class


Calibration = tuple[dict[str, dict[str, Interval]], dict[tuple[str, str], dict[str, Interval]]]


def _calibration_intervals(predictions: Predictions, *, confidence: float, n_resamples: int, ci_method: str,
                           ece_bins: int, seed: int) -> Calibration:
    """ECE, Brier and NLL of every model and every pair from one set of resamples (:mod:`~headtohead.stats.joint`).

    Models without probabilities (stored predictions) and their pairs get none: their
    calibration is not available, never computed from one-hot vectors.
    """
    names = [m for m in predictions.models if predictions[m].proba is not None]
    if not names:
        return {}, {}
    return joint_bootstrap(predictions.y_true, {m: (predictions[m].pred, predictions[m].proba) for m in names},
                           metrics=_CALIBRATION_METRICS, pairs=list(itertools.combinations(names, 2)),
                           label_names=predictions.label_names, n_resamples=n_resamples, confidence=confidence,
                           method=ci_method, n_bins=ece_bins,  # type: ignore[arg-type]
                           seed=np.random.default_rng(np.random.SeedSequence([seed, 2])))


def _model_stats(name: str, predictions: Predictions, calibrated: dict[str, Interval], *, confidence: float,
                 n_resamples: int, ci_method: str, ece_bins: int, seed: np.random.SeedSequence) -> ModelStats:
    model, y = predictions[name], predictions.y_true
    estimates = bootstrap_estimates(y, model.pred, None, _class_metric_names(predictions.label_names),
                                    label_names=predictions.label_names, n_resamples=n_resamples,
                                    confidence=confidence, method=ci_method, n_bins=ece_bins,
                                    seed=np.random.default_rng(seed))
    estimates.update({metric: estimate_from_interval(interval) for metric, interval in calibrated.items()})
    recalls = {m.split(":", 1)[1]: e for m, e in estimates.items() if m.startswith("recall:")}
    return ModelStats(name=name, n_examples=len(y), accuracy=accuracy_estimate(model.correct(y), confidence),
                      balanced_accuracy=estimates["balanced_accuracy"], f1_macro=estimates["f1_macro"],
                      f1_weighted=estimates["f1_weighted"], recall_per_class=recalls, ece=estimates.get("ece"),
                      brier=estimates.get("brier"), nll=estimates.get("nll"),
                      calibration=calibration(y, model.pred, model.proba, n_bins=ece_bins, level=confidence)
                      if model.proba is not None else None)


def _differences(a: ModelStats, b: ModelStats, predictions: Predictions, calibrated: dict[str, Interval], *,
                 confidence: float, n_resamples: int, ci_method: str, ece_bins: int,
                 seed: np.random.SeedSequence) -> list[MetricDifference]:
    """Paired bootstrap intervals on ``metric(a) − metric(b)`` for every reported metric."""
    ma, mb, y = predictions[a.name], predictions[b.name], predictions.y_true
    names = ["accuracy"] + _metric_names(predictions.label_names)
    intervals = paired_bootstrap(y, ma.pred, mb.pred, metrics=["accuracy"] + _class_metric_names(
                                 predictions.label_names), label_names=predictions.label_names,
                                 n_resamples=n_resamples, confidence=confidence, method=ci_method, n_bins=ece_bins,
                                 seed=np.random.default_rng(seed))
    intervals.update(calibrated)
    names = [name for name in names if name in intervals]  # calibration only when both models have probabilities
    return [MetricDifference(metric=name, value_a=a.estimate(name).value, value_b=b.estimate(name).value,
                             difference=intervals[name].estimate, ci_low=intervals[name].low,
                             ci_high=intervals[name].high, method=intervals[name].method, confidence=confidence,
                             higher_is_better=METRICS.get(name, METRICS["accuracy"]).higher_is_better,
                             note=intervals[name].note)
            for name in names]


def _scored_model_stats(name: str, predictions: Predictions, calibrated: dict[str, dict[str, Interval]], *,
                        seed: np.random.SeedSequence, options: dict, joint_seed: int) -> ModelStats:
    """One model's statistics on the examples it scored (all of them, unless some outputs were NaN or infinite)."""
    sub, left_out = scored_rows(predictions, [name])
    if not left_out:
        return _model_stats(name, predictions, calibrated.get(name, {}), seed=seed, **options)
    own = _calibration_intervals(sub, seed=joint_seed, **options)[0].get(name, {})
    return _model_stats(name, sub, own, seed=seed, **options).model_copy(update={"n_excluded": left_out})


def _scored_pair(name_a: str, name_b: str, predictions: Predictions, models: dict[str, ModelStats],
                 calibrated_pairs: dict[tuple[str, str], dict[str, Interval]], *, seed: int,
                 model_seeds: tuple[np.random.SeedSequence, np.random.SeedSequence], options: dict
                 ) -> tuple[Predictions, ModelStats, ModelStats, dict[str, Interval], int]:
    """A pair on the rows both models scored: those predictions, both models' statistics there, the pair's
    calibration intervals, and how many rows were left out."""
    sub, left_out = scored_rows(predictions, [name_a, name_b])
    if not left_out:
        return predictions, models[name_a], models[name_b], calibrated_pairs.get((name_a, name_b), {}), 0
    own, own_pairs = _calibration_intervals(sub, seed=seed, **options)
    a, b = (_model_stats(name, sub, own.get(name, {}), seed=s, **options).model_copy(update={"n_excluded": left_out})
            for name, s in zip((name_a, name_b), model_seeds))
    return sub, a, b, own_pairs.get((name_a, name_b), {}), left_out


def _comparison(a: ModelStats, b: ModelStats, test: McNemarResult, p_adjusted: float, n_pairs: int,
                differences: list[MetricDifference], alpha: float) -> Comparison:
    """Assemble one pair's record (significance on the Holm-adjusted p-value)."""
    n = a.n_examples
    table = ContingencyTable(both_correct=test.table[0], only_a_correct=test.table[1],
                             only_b_correct=test.table[2], both_wrong=test.table[3])
    b_count, c_count = test.table[1], test.table[2]
    significant = bool(p_adjusted <= alpha)
    winner = (a.name if b_count > c_count else b.name) if significant else None
    discordance = table.discordant / n
    mde = minimum_detectable_effect(n, discordance, power=MDE_POWER, alpha=alpha, n_comparisons=n_pairs)
    return Comparison(model_a=a.name, model_b=b.name, n_examples=n, table=table,
                      test=test.test,  # type: ignore[arg-type]
                      statistic=test.statistic, p_value=test.p_value, p_value_midp=test.p_value_midp,
                      p_adjusted=float(p_adjusted), alpha=alpha, significant=significant,
                      effect=(b_count - c_count) / n, odds_ratio=b_count / c_count if c_count else None,
                      discordance=discordance, differences=differences, minimum_detectable_effect=mde,
                      mde_power=MDE_POWER, winner=winner)


def analyse(predictions: Predictions, *, alpha: float = 0.05, n_resamples: int = 2000, ci_method: str = "bca",
            ece_bins: int = 15, seed: int = 0, examples: ExampleFacts | None = None,
            disagreements_kept: int | None = DISAGREEMENTS_KEPT) -> StatsSummary:
    """Every statistic of a run: per-model intervals, every pair compared, a ranking, where models differ.

    Parameters
    ----------
    predictions : Predictions
        All models' predictions on one evaluation set (same examples, same order).
    alpha : float
        Significance level of the pairwise tests (family-wise, via Holm); intervals are at
        ``1 − alpha`` confidence.
    n_resamples : int
        Bootstrap resamples per model and per pair.
    ci_method : {"bca", "percentile"}
        Bootstrap interval method.
    ece_bins : int
        Equal-width confidence bins for ECE/MCE and the reliability diagram.
    seed : int
        Seed of the bootstrap; the same seed gives the same intervals.
    examples : ExampleFacts, optional
        Sizes, extra columns and ids of the examples (dataset order): slices by input size and
        by column, ids on the disagreements. Slices by class are made without them.
    disagreements_kept : int, optional
        Rows of each direction of disagreement kept per pair (``None``: all).

    Returns
    -------
    StatsSummary
        With one model: its intervals and calibration, no comparisons. ``slices`` and
        ``disagreements``: :mod:`headtohead.stats.where`.

    Raises
    ------
    ConfigError
        A setting is out of range.
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
    _check_predictions(predictions)
    confidence = 1.0 - alpha
    names = list(predictions.models)
    options = dict(confidence=confidence, n_resamples=n_resamples, ci_method=ci_method, ece_bins=ece_bins)
    # Each statistic on the rows its models scored (stats.exclusions); all rows when every output was finite.
    clean = [name for name in names if predictions[name].valid.all()]
    calibrated, calibrated_pairs = _calibration_intervals(predictions.restricted(models=clean), seed=seed,
                                                          **options) if clean else ({}, {})
    models = {name: _scored_model_stats(name, predictions, calibrated, seed=np.random.SeedSequence([seed, 0, i]),
                                        options=options, joint_seed=seed)
              for i, name in enumerate(names)}
    pairs = list(itertools.combinations(range(len(names)), 2))
    scored = [_scored_pair(names[i], names[j], predictions, models, calibrated_pairs, seed=seed,
                           model_seeds=(np.random.SeedSequence([seed, 0, i]), np.random.SeedSequence([seed, 0, j])),
                           options=options) for i, j in pairs]
    tests = [mcnemar_test(sub[a.name].correct(sub.y_true), sub[b.name].correct(sub.y_true))
             for sub, a, b, _, _ in scored]
    adjusted = holm_adjust([t.p_value for t in tests])
    comparisons = []
    for (i, j), (sub, a, b, pair_calibrated, left_out), test, p_adj in zip(pairs, scored, tests, adjusted):
        diffs = _differences(a, b, sub, pair_calibrated, seed=np.random.SeedSequence([seed, 1, i, j]), **options)
        comparison = _comparison(a, b, test, float(p_adj), len(pairs), diffs, alpha)
        comparisons.append(comparison.model_copy(update={"n_excluded": left_out}) if left_out else comparison)
    different = {frozenset({c.model_a, c.model_b}) for c in comparisons if c.significant}
    ranking = rank_groups({name: models[name].accuracy.value for name in names}, different)
    settings = StatsSettings(alpha=alpha, confidence=confidence, n_resamples=n_resamples,
                             ci_method=ci_method, ece_bins=ece_bins, seed=seed,  # type: ignore[arg-type]
                             power=MDE_POWER,
                             mcnemar_rule=f"exact binomial when b + c < {EXACT_BELOW}, "
                                          f"else χ² with continuity correction")
    return StatsSummary(settings=settings, models=list(models.values()), comparisons=comparisons, ranking=ranking,
                        slices=run_slices(predictions, examples, alpha=alpha),
                        disagreements=run_disagreements(predictions, examples.ids if examples else None,
                                                        kept=disagreements_kept))
