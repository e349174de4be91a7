"""Typed records of the statistics: intervals, calibration, pairwise comparisons, ranking, seeds.

:func:`headtohead.stats.analyse` fills a :class:`StatsSummary`; it lands in ``results.json``
and every report reads it. Numbers are stored unrounded; undefined values are ``None``
(never NaN, which JSON cannot carry). Differences are always ``model_a − model_b``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from headtohead.results.base import Record
from headtohead.results.disagreements import Disagreements
from headtohead.results.estimates import ContingencyTable, Estimate
from headtohead.results.label_suspects import LabelSuspects
from headtohead.results.prompts import PromptSummary
from headtohead.results.repeats import RepeatSummary
from headtohead.results.sequential import SequentialRecord
from headtohead.results.slices import SliceSummary

__all__ = [
    "Estimate",
    "ReliabilityBin",
    "Calibration",
    "ModelStats",
    "ContingencyTable",
    "MetricDifference",
    "Comparison",
    "RankGroup",
    "StatsSettings",
    "StatsSummary",
    "SeedResult",
    "SeedAggregate",
    "ModelSeedStats",
    "SeedComparison",
    "MultiSeedSummary",
]


class ReliabilityBin(Record):
    """One bar of a reliability diagram: examples whose confidence fell in ``(lower, upper]``."""

    lower: float
    upper: float
    confidence: float | None = Field(description="mean confidence in the bin; None when empty")
    accuracy: float | None = Field(description="share predicted correctly in the bin; None when empty")
    count: int


class Calibration(Record):
    """How well the stored probabilities match how often the model is right (top-label)."""

    n_bins: int
    ece: float = Field(description="expected calibration error: Σ_b (n_b/n)·|accuracy_b − confidence_b|")
    ece_l2_debiased: Estimate | None = Field(
        default=None,
        description="ℓ2 (root-mean-square) calibration error over n_bins equal-mass bins, debiased "
        "(Kumar, Liang & Ma 2019) with its interval; None below 4 examples. Its value is the square root of "
        "ece_l2_squared_debiased clipped at 0: a value of 0 (with a note) means the data cannot tell the error "
        "from 0, and only the upper bound says anything",
    )
    ece_l2_squared_debiased: float | None = Field(
        default=None,
        description="the debiased estimate of the squared ℓ2 calibration error, unclipped: unbiased, so it may be "
        "negative (at or below 0: indistinguishable from 0); None below 4 examples and in files written before it",
    )
    mce: float = Field(description="maximum calibration error over non-empty bins")
    brier: float = Field(description="Brier score, halved when the data has two classes (scikit-learn's binary scale)")
    nll: float = Field(description="negative log-likelihood of the true class (log loss)")
    bins: list[ReliabilityBin]


class ModelStats(Record):
    """One model's metrics with confidence intervals, and its calibration.

    Every metric is over all ``n_examples`` evaluated examples, a failure (no prediction: NaN
    or infinite scores, an endpoint's missing or unparseable answer, a timeout) counting as a
    wrong answer. ``accuracy_answered`` is the secondary figure over the answered rows only;
    the calibration figures (``ece``, ``brier``, ``nll``, ``calibration``) can only be computed
    where there is a probability, so they are over the answered rows (``calibration_examples``).
    """

    name: str
    n_examples: int
    n_failed: int = Field(default=0, description="examples without a prediction, each counted as wrong")
    n_excluded: int = Field(
        default=0,
        description="version 3 only: examples left out because the model's scores "
        "were NaN or infinite (from version 4 they count as wrong: n_failed)",
    )
    accuracy: Estimate = Field(description="Wilson interval (with groups: its union with the cluster-robust one)")
    accuracy_answered: Estimate | None = Field(
        default=None,
        description="accuracy on the answered rows only (Wilson); None when the model answered every example",
    )
    balanced_accuracy: Estimate
    f1_macro: Estimate
    f1_weighted: Estimate
    recall_per_class: dict[str, Estimate] = Field(
        default_factory=dict, description="class name → recall (Wilson interval on the class's examples)"
    )
    ece: Estimate | None = Field(
        default=None,
        description="plug-in ECE over equal-width bins: biased upwards, so "
        "shown without an interval (low/high None); the calibration figure with an interval "
        "is calibration.ece_l2_debiased",
    )
    brier: Estimate | None = None
    nll: Estimate | None = None
    calibration: Calibration | None = None
    calibration_examples: int | None = Field(
        default=None, description="examples the calibration figures use (the answered ones); None without probabilities"
    )
    metrics: dict[str, Estimate] = Field(
        default_factory=dict,
        description="the metrics the experiment picked (stats.metrics; names of headtohead.metrics), each with "
        "its bootstrap interval; a metric of probabilities is over the answered rows and absent for a model "
        "without probabilities (not available)",
    )
    passes: list[ModelStats] = Field(
        default_factory=list,
        description="a model measured several ways (its passes: prompts …): each pass's own statistics, named "
        "model@key; the figures above are then the means over the passes, without an interval (the comparisons "
        "pooled over the passes carry one), and n_failed their sum. Empty: the model was measured once",
    )

    def estimate(self, metric: str) -> Estimate:
        """The estimate of ``metric`` (``accuracy``, ``f1_macro`` …, or ``recall:<class>``)."""
        if metric.startswith("recall:") and metric[len("recall:") :] in self.recall_per_class:
            return self.recall_per_class[metric[len("recall:") :]]
        if metric in self.metrics:
            return self.metrics[metric]
        value = getattr(self, metric, None) if metric in type(self).model_fields else None
        if not isinstance(value, Estimate):
            raise KeyError(f"no estimate '{metric}' for model '{self.name}'")
        return value


class MetricDifference(Record):
    """``metric(model_a) − metric(model_b)`` with its interval (or none, and why: ``note``)."""

    metric: str
    value_a: float
    value_b: float
    difference: float = Field(description="value_a − value_b")
    ci_low: float | None
    ci_high: float | None
    method: str = Field(
        description="tango-score (accuracy, per-class recall; +clusters with groups; +exact where one discordant "
        "count is 0 and the interval is joined with the exact one) | bca | "
        "percentile | cluster-bca | cluster-percentile | delong (ROC AUC of two classes on independent "
        "examples: DeLong's interval, by Sun & Xu's algorithm) | delong-ovr (the one-vs-rest macro ROC AUC of "
        "more classes: DeLong's components of every class combined per example)"
    )
    confidence: float = 0.95
    higher_is_better: bool = True
    note: str | None = None
    p_value: float | None = Field(
        default=None,
        description="the two-sided p-value of 'no difference' where the method is a test (delong, delong-ovr: "
        "DeLong's z-test, not adjusted for multiplicity); None for the bootstrap intervals",
    )
    on_answered_rows: bool = Field(
        default=False,
        description="computed on the examples both models answered (the metrics of probabilities: calibration, "
        "ROC AUC)",
    )

    @property
    def has_interval(self) -> bool:
        return self.ci_low is not None and self.ci_high is not None


class Comparison(Record):
    """One pair of models: McNemar's score test and Tango's interval on accuracy, the other metrics, the verdict.

    The accuracy test and interval read one score statistic (:mod:`headtohead.stats.paired`), so
    ``significant`` before adjustment and "the accuracy interval excludes 0" are the same event;
    with several pairs, ``significant`` is decided on Holm's adjusted p.
    """

    model_a: str
    model_b: str
    n_examples: int
    n_excluded: int = Field(
        default=0,
        description="version 3 only: examples left out where one model's scores were "
        "NaN or infinite (from version 4 a failure counts as a wrong answer)",
    )
    table: ContingencyTable
    test: Literal["mcnemar-score", "mcnemar-clustered", "mcnemar-exact", "mcnemar-chi2", "mcnemar-midp"] = Field(
        description="mcnemar-score: (b − c)²/(b + c) on χ²₁ (Tango's score test at 0); mcnemar-clustered: the larger p "
        "of it and Durkalski's clustered statistic; exact/chi2: version 3's rule"
    )
    statistic: float
    p_value: float
    p_value_midp: float = Field(description="mid-p McNemar (ignores groups), for reference")
    p_adjusted: float = Field(description="Holm–Bonferroni over all pairs of the run")
    alpha: float
    significant: bool = Field(description="p_adjusted ≤ alpha")
    effect: float = Field(description="accuracy(model_a) − accuracy(model_b)")
    odds_ratio: float | None = Field(default=None, description="b / c of the discordant pairs; None when c = 0")
    discordance: float = Field(description="share of examples exactly one model got right")
    differences: list[MetricDifference]
    minimum_detectable_effect: float | None = Field(
        description="the accuracy gap this test detects with mde_power probability at this n and discordance (smaller "
        "gaps are detected less often); None if no gap is"
    )
    mde_power: float = 0.8
    winner: str | None = None
    stopped_early: bool = Field(
        default=False,
        description="--until-decided stopped before every example was "
        "used. In every --until-decided run (stats.sequential present), significant/winner are "
        "the anytime-valid test's decision, whether it stopped early or the data ran out; "
        "p_value, p_adjusted and the intervals describe the examples used and are nominal "
        "only (interim looks invalidate them, and a stopped estimate is biased away "
        "from 0)",
    )
    fragility: int | None = Field(
        default=None,
        description="the fewest gold labels, among the examples where the two models' answers differ, that "
        "relabelled would stop the test naming the winner (McNemar's score test at the pair's place in the Holm "
        "family, the other pairs' p-values as measured); None when the pair is undecided, its examples are grouped, "
        "or it was decided by a sequential test (docs/statistics.md, 'Fragility: wrong gold labels')",
    )
    answers_differ: int | None = Field(
        default=None, description="examples where the two models' answers differ (where fragility was searched)"
    )
    verdict: str = Field(default="", description="the comparison in one sentence (report.sentences)")

    def difference(self, metric: str) -> MetricDifference:
        """The :class:`MetricDifference` of ``metric``."""
        for diff in self.differences:
            if diff.metric == metric:
                return diff
        raise KeyError(f"no difference '{metric}' between '{self.model_a}' and '{self.model_b}'")


class RankGroup(Record):
    """Models whose accuracies no test could tell apart, listed best first."""

    rank: int
    models: list[str]
    accuracies: list[float]


class StatsSettings(Record):
    """How the statistics were computed."""

    alpha: float
    confidence: float
    n_resamples: int
    ci_method: Literal["bca", "percentile"]
    ece_bins: int
    seed: int
    power: float = 0.8
    mcnemar_rule: str = "exact binomial when b + c < 25, else χ² with continuity correction"
    multiple_comparisons: str = "holm"
    failures: str = Field(
        default="counted as wrong",
        description="how examples without a prediction enter the metrics (version 3: 'left out')",
    )
    group_column: str | None = Field(
        default=None, description="the data column naming groups of related examples; None: examples are independent"
    )
    n_groups: int | None = Field(default=None, description="groups in the evaluated examples (with group_column)")
    metrics: list[str] = Field(
        default_factory=list, description="the metrics picked beside the default ones (stats.metrics), in order"
    )


class StatsSummary(Record):
    """All statistics of one run: per-model intervals, every pair, the ranking, and where models differ."""

    settings: StatsSettings
    models: list[ModelStats]
    comparisons: list[Comparison] = Field(default_factory=list)
    ranking: list[RankGroup] = Field(default_factory=list)
    slices: SliceSummary | None = Field(
        default=None,
        description="quality per slice (class, input size, extra "
        "columns) with paired tests, Holm over all slices; None before version 3",
    )
    disagreements: list[Disagreements] = Field(
        default_factory=list,
        description="per pair, the examples exactly one model got right, most striking first "
        "(the first of each direction; all of them: disagreements.csv)",
    )
    sequential: list[SequentialRecord] | None = Field(
        default=None,
        description="one per pair when the run stopped once decided (--until-decided); the "
        "statistics above are then computed on the examples used. None: every example was evaluated",
    )
    prompts: PromptSummary | None = Field(
        default=None,
        description="models asked with several prompts (prompts:): each prompt's accuracy and the comparisons "
        "pooled over prompts; None when no model has several (and before version 6)",
    )
    label_suspects: LabelSuspects | None = Field(
        default=None,
        description="the examples every model got wrong with the same answer, candidates for a wrong gold label "
        "(the first of them; all: label_suspects.csv); None with one model (and in files written before)",
    )
    repeats: RepeatSummary | None = Field(
        default=None,
        description="models run several times (repeats:): each one's run-to-run spread and steadiness, and the "
        "comparisons over runs (examples, then runs within examples); None when no model was run several "
        "times (and before version 8)",
    )

    def model(self, name: str) -> ModelStats:
        """The statistics of model ``name``."""
        for stats in self.models:
            if stats.name == name:
                return stats
        raise KeyError(name)

    def comparison(self, a: str, b: str) -> Comparison:
        """The comparison of ``a`` and ``b`` (in either order, as stored)."""
        for comp in self.comparisons:
            if {comp.model_a, comp.model_b} == {a, b}:
                return comp
        raise KeyError(f"no comparison of '{a}' and '{b}'")


class SeedResult(Record):
    """One training run: a model trained with one seed, and the metrics it reached."""

    model: str
    seed: int
    metrics: dict[str, float]


class SeedAggregate(Record):
    """One metric of one model over seeds."""

    metric: str
    seeds: list[int]
    values: list[float]
    mean: float
    std: float | None = Field(description="sample standard deviation (ddof=1); None with one seed")
    n_seeds: int


class ModelSeedStats(Record):
    """A model's metrics aggregated over its seeds."""

    model: str
    metrics: list[SeedAggregate]

    def metric(self, name: str) -> SeedAggregate:
        for aggregate in self.metrics:
            if aggregate.metric == name:
                return aggregate
        raise KeyError(f"model '{self.model}' has no metric '{name}' over seeds")


class SeedComparison(Record):
    """Two models compared over the seeds both were trained with (paired by seed)."""

    model_a: str
    model_b: str
    metric: str
    n_seeds: int
    mean_difference: float = Field(description="mean over seeds of metric(a) − metric(b)")
    std_difference: float | None
    test: Literal["paired-t", "none"]
    statistic: float | None
    p_value: float | None
    wilcoxon_statistic: float | None = None
    wilcoxon_p: float | None = Field(default=None, description="Wilcoxon signed-rank, only with ≥ 6 seeds")
    p_adjusted: float | None = None
    significant: bool = False
    note: str | None = None


class MultiSeedSummary(Record):
    """Every model over its seeds, and every pair compared across seeds."""

    alpha: float
    models: list[ModelSeedStats]
    comparisons: list[SeedComparison] = Field(default_factory=list)
