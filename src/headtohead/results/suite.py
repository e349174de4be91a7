"""The records of a suite (``suite.json``): the same models on several data sets, compared across them.

See ``docs/statistics.md`` §13.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from headtohead.results.base import Record
from headtohead.results.io import read_versioned_json, write_text_atomic

__all__ = [
    "SUITE_SCHEMA_VERSION",
    "FriedmanTest",
    "ImanDavenportTest",
    "PairAcrossDatasets",
    "ControlComparison",
    "AcrossStatistics",
    "AcrossDatasets",
    "DatasetPairVerdict",
    "SeedSpread",
    "SeedPair",
    "DatasetSeeds",
    "SuiteDataset",
    "SuiteResult",
    "save_suite_result",
    "load_suite_result",
]

#: Version of ``suite.json``'s layout (see the module docstring's changelog).
SUITE_SCHEMA_VERSION = 1


class FriedmanTest(Record):
    """Friedman's test that all models rank alike across the data sets (Demšar 2006, eq. 1)."""

    statistic: float = Field(
        description="χ²_F = 12N/(k(k+1))·[Σ_j R_j² − k(k+1)²/4] over average ranks R_j, as "
        "Demšar (2006) writes it (no correction for ties)"
    )
    p_value: float = Field(description="χ² with k − 1 degrees of freedom")
    df: int
    tie_corrected_statistic: float | None = Field(
        description="χ²_F divided by 1 − Σ(t³ − t)/(Nk(k² − 1)) over tied groups: scipy.stats.friedmanchisquare; "
        "None when every data set ties every model"
    )
    tie_corrected_p_value: float | None
    kendall_w: float = Field(
        description="Kendall's coefficient of concordance χ²_F/(N(k − 1)): 0 no agreement "
        "between data sets, 1 every data set ranks the models the same way"
    )


class ImanDavenportTest(Record):
    """Iman & Davenport's F (1980): Friedman's χ²_F made less conservative (Demšar 2006, eq. 2)."""

    statistic: float | None = Field(
        description="F_F = (N − 1)χ²_F/(N(k − 1) − χ²_F); None when every data set "
        "ranks the models identically (F is infinite)"
    )
    p_value: float | None = Field(
        description="None where F is infinite: the F approximation does not hold there, "
        "and the omnibus decision reads Friedman's p instead"
    )
    df_numerator: int
    df_denominator: int


class PairAcrossDatasets(Record):
    """Two models compared over the data sets: the signed-rank and sign tests, Holm, the Bayesian signed-rank test."""

    model_a: str
    model_b: str
    n_datasets: int
    mean_difference: float = Field(description="mean over data sets of metric(a) − metric(b)")
    median_difference: float
    wins_a: int = Field(description="data sets where a scored better")
    wins_b: int
    ties: int
    w_plus: float = Field(
        description="sum of the ranks of |difference| where a is better (zero differences "
        "split half and half: Demšar's rule, scipy's zero_method='zsplit')"
    )
    w_minus: float
    wilcoxon_statistic: float = Field(description="min(w_plus, w_minus), as scipy.stats.wilcoxon reports it")
    wilcoxon_p: float = Field(description="two-sided p of the Wilcoxon signed-rank test")
    wilcoxon_method: Literal["exact", "normal", "none"] = Field(
        description="exact: the permutation distribution of the signs over the observed ranks (ties and zeros "
        "included), up to 50 data sets; normal: the normal approximation with tie correction; none: "
        "every difference is zero"
    )
    holm_p: float = Field(
        description="wilcoxon_p adjusted by Holm over every pair of the suite (García & Herrera 2008)"
    )
    significant: bool = Field(description="holm_p ≤ alpha")
    winner: str | None = Field(default=None, description="the better model when significant")
    sign_test_p: float = Field(
        description="two-sided binomial test on wins and losses, ties split evenly "
        "(one dropped when odd; Demšar 2006, §3.1.2)"
    )
    rank_biserial: float = Field(
        description="matched-pairs rank-biserial correlation (w_plus − w_minus)/(w_plus + "
        "w_minus): +1 a better on every data set, −1 b better on every one"
    )
    rank_difference: float = Field(description="average rank of a − average rank of b (negative: a ranks better)")
    nemenyi_significant: bool | None = Field(
        default=None, description="|rank_difference| ≥ the critical difference; None with two models"
    )
    rope: float = Field(description="half-width of the region of practical equivalence, in the metric's units")
    p_a_better: float = Field(
        description="Bayesian signed-rank test (Benavoli et al. 2017): posterior probability "
        "that 'a better by more than the rope' is the most probable region"
    )
    p_equivalent: float = Field(description="… that 'within ± rope' is the most probable region")
    p_b_better: float = Field(description="… that 'b better by more than the rope' is the most probable region")
    bayes_samples: int = Field(description="Monte-Carlo draws of the Dirichlet-process posterior")
    bayes_mc_se: float = Field(description="largest Monte-Carlo standard error of the three probabilities")


class ControlComparison(Record):
    """One model against the suite's baseline (Demšar 2006, §3.2.2: comparisons with a control, Holm over k − 1)."""

    model: str
    baseline: str
    mean_difference: float = Field(description="mean over data sets of metric(model) − metric(baseline)")
    wins: int = Field(description="data sets where the model scored better than the baseline")
    losses: int = Field(description="data sets where the baseline scored better")
    ties: int
    rank_difference: float = Field(
        description="average rank of the model − average rank of the baseline (negative: the model ranks better)"
    )
    rank_z: float = Field(
        description="Demšar's statistic (R_model − R_baseline)/√(k(k+1)/(6N)), standard normal under the null"
    )
    rank_p: float = Field(description="two-sided p of rank_z")
    rank_holm_p: float = Field(description="rank_p adjusted by Holm over the k − 1 comparisons with the baseline")
    rank_significant: bool = Field(description="rank_holm_p ≤ alpha (Demšar's test with a control)")
    wilcoxon_p: float = Field(description="the pair's Wilcoxon signed-rank p (as in pairs)")
    holm_p: float = Field(
        description="wilcoxon_p adjusted by Holm over the k − 1 comparisons with the baseline (not over every pair)"
    )
    significant: bool = Field(description="holm_p ≤ alpha: the decision, as for pairs (it reads these two models only)")
    winner: str | None = Field(default=None, description="the better of the two when significant")


class AcrossStatistics(Record):
    """The statistics across data sets that ``suite.json`` holds at its top level."""

    metric: str = "accuracy"
    higher_is_better: bool = True
    alpha: float = 0.05
    rope: float = 0.01
    models: list[str] = Field(default_factory=list)
    n_datasets: int = Field(default=0, description="data sets the statistics use (finished ones only)")
    average_ranks: dict[str, float] = Field(
        default_factory=dict,
        description="model → mean rank over the data sets (1 = best; ties share the mean of their ranks)",
    )
    friedman: FriedmanTest | None = Field(
        default=None, description="None with two models (the Wilcoxon test of the pair answers the question)"
    )
    iman_davenport: ImanDavenportTest | None = None
    nemenyi_q: float | None = Field(
        default=None,
        description="q_α: the studentized range quantile (scipy.stats.studentized_range, infinite df) / √2",
    )
    nemenyi_cd: float | None = Field(
        default=None,
        description="critical difference q_α·√(k(k+1)/(6N)): two "
        "average ranks at least this far apart differ (Nemenyi; Demšar 2006, eq. 3)",
    )
    cliques: list[list[str]] = Field(
        default_factory=list,
        description="maximal groups of models (by average rank) "
        "whose ranks lie within the critical difference: the bars of the CD diagram",
    )
    omnibus_significant: bool | None = Field(default=None, description="Iman–Davenport p ≤ alpha (k ≥ 3)")
    pairs: list[PairAcrossDatasets] = Field(default_factory=list)
    min_wilcoxon_p: float | None = Field(
        default=None,
        description="the smallest two-sided p the Wilcoxon test can "
        "reach with this many data sets (2/2^N): above alpha no pair can be "
        "significant",
    )
    baseline: str | None = Field(
        default=None, description="the control every other model is compared with (--baseline); None: all pairs only"
    )
    control: list[ControlComparison] = Field(
        default_factory=list, description="each other model against the baseline, Holm over these k − 1 comparisons"
    )

    def pair(self, a: str, b: str) -> PairAcrossDatasets:
        """The pair of ``a`` and ``b`` (in either order, as stored)."""
        for pair in self.pairs:
            if {pair.model_a, pair.model_b} == {a, b}:
                return pair
        raise KeyError(f"no pair of '{a}' and '{b}'")


class AcrossDatasets(AcrossStatistics):
    """:class:`AcrossStatistics` with the table they were computed from (what the statistics return)."""

    datasets: list[str]
    scores: list[list[float]] = Field(description="row per data set, column per model")
    ranks: list[list[float]] = Field(description="the ranks of each row (1 = best)")


class DatasetPairVerdict(Record):
    """A data set's own test of one pair (its run's ``stats.comparisons``: McNemar on accuracy, Holm in the run)."""

    model_a: str
    model_b: str
    significant: bool
    winner: str | None = None
    p_adjusted: float | None = None
    test: str = Field(description="the run's test (mcnemar-score …)")


class SeedSpread(Record):
    """One model's metric over its training seeds, and how much of its uncertainty the seeds make."""

    model: str
    n_seeds: int
    mean: float
    seed_sd: float | None = Field(description="standard deviation over seeds (ddof = 1); None with one seed")
    test_set_se: float | None = Field(
        description="the test set's sampling standard error of the metric: half the "
        "width of the run's interval / z; None when unknown"
    )
    seed_share: float | None = Field(description="seed variance / (seed variance + test-set variance)")


class SeedPair(Record):
    """Two models over the seeds both were trained with: paired t, Almost Stochastic Order, the spread's sources."""

    model_a: str
    model_b: str
    n_seeds: int
    mean_difference: float
    t_statistic: float | None
    t_p_value: float | None = Field(description="paired t over seeds (stats.seeds.compare_across_seeds)")
    aso_a_over_b: float | None = Field(
        description="ASO ε_min that a is better than b: the upper confidence bound "
        "on the share of the quantile distance where b is ahead (0: a dominates)"
    )
    aso_b_over_a: float | None
    aso_confidence: float = Field(
        description="one-sided level of ε_min's bound (Bonferroni over the suite's ASO comparisons)"
    )
    seed_sd_difference: float | None = Field(description="standard deviation over seeds of a − b")
    test_set_se_difference: float | None = Field(
        description="the test set's sampling standard error of a − b (from the run's paired interval)"
    )
    seed_share: float | None = Field(description="share of the variance of a − b that comes from seeds")
    note: str | None = None


class DatasetSeeds(Record):
    """A data set's models trained with several seeds."""

    metric: str
    seeds: list[int]
    models: list[SeedSpread]
    pairs: list[SeedPair] = Field(default_factory=list)


class SuiteDataset(Record):
    """One data set of the suite: where its run is, the scores it gave, its own verdicts."""

    name: str
    status: Literal["finished", "failed"]
    error: str | None = Field(default=None, description="one line: why the data set failed")
    results: str | None = Field(
        default=None,
        description="its results.json, relative to the suite's folder (as given when the suite was not saved)",
    )
    report: str | None = Field(default=None, description="its report.html, when there is one")
    source: str | None = None
    fingerprint: str | None = Field(
        default=None, description="its run's data fingerprint (SHA-256 of examples and labels); None for a table"
    )
    n_examples: int | None = None
    n_classes: int | None = None
    scores: dict[str, float] = Field(
        default_factory=dict,
        description="model → metric (the mean over seeds when the models were trained with several)",
    )
    ranks: dict[str, float] = Field(default_factory=dict)
    verdicts: list[DatasetPairVerdict] = Field(
        default_factory=list, description="the run's own pairwise tests; empty for a table of scores"
    )
    seeds: DatasetSeeds | None = None
    reused: bool = Field(default=False, description="finished in an earlier, interrupted suite (--resume)")


class SuiteResult(AcrossStatistics):
    """What ``suite.json`` holds."""

    schema_version: int = SUITE_SCHEMA_VERSION
    headtohead_version: str
    name: str
    created_at: str
    input: Literal["suite", "results", "scores"] = Field(
        description="suite: runs made by h2h suite; results: finished results.json files; scores: a table"
    )
    datasets: list[SuiteDataset]
    scale: Literal["percent"] | None = Field(
        default=None,
        description="how a table of scores was read: percent (its values of a share metric were 0–100 and are "
        "stored divided by 100, so the ROPE and every figure are shares); None: as written",
    )
    statistics_note: str | None = Field(default=None, description="why there are no statistics across data sets")
    verdict: list[str] = Field(default_factory=list, description="the suite in sentences (report.suite)")
    warnings: list[str] = Field(default_factory=list)
    suite: dict[str, Any] | None = Field(default=None, description="the suite file as validated (input 'suite')")

    def dataset(self, name: str) -> SuiteDataset:
        """The entry of data set ``name``."""
        for entry in self.datasets:
            if entry.name == name:
                return entry
        raise KeyError(name)

    @property
    def finished(self) -> list[SuiteDataset]:
        return [d for d in self.datasets if d.status == "finished"]

    @property
    def failed(self) -> list[SuiteDataset]:
        return [d for d in self.datasets if d.status == "failed"]


def save_suite_result(record: SuiteResult, path: str | Path) -> None:
    """Write ``record`` as indented JSON, atomically."""
    write_text_atomic(Path(path), record.model_dump_json(indent=2) + "\n")


def load_suite_result(path: str | Path) -> SuiteResult:
    """Read a ``suite.json``; refuse newer schema versions (see :func:`~headtohead.results.io.read_versioned_json`)."""
    return read_versioned_json(
        path,
        SuiteResult,
        version=SUITE_SCHEMA_VERSION,
        what="suite.json",
        writer="h2h suite",
        required=("datasets", "input"),
    )
