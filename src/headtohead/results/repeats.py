"""Typed records of a model run several times (``repeats:``): what its runs show, and its comparisons over them.

:func:`headtohead.stats.repeat_pool.repeat_summary` fills them; they land in ``results.json``
(``stats.repeats``) and the reports read them. Differences are ``model_a − model_b``.
"""

from __future__ import annotations

from pydantic import Field

from headtohead.results.base import Record

__all__ = ["MetricSpread", "ChangedExample", "RepeatModel", "RepeatPool", "RepeatSummary"]


class MetricSpread(Record):
    """One metric over a model's runs: each run's value, their mean and the run-to-run standard deviation."""

    metric: str
    values: list[float] = Field(description="Each run's value, in run order.")
    mean: float
    sd: float = Field(description="Run-to-run standard deviation (ddof=1).")
    sd_low: float = Field(description="Lower end of the chi-square interval of the standard deviation.")
    sd_high: float | None = Field(
        description="Upper end (None: unbounded, from two runs at a high level); for a share, at most the largest SD "
        "k values in [0, 1] can have."
    )
    low: float = Field(description="The lowest run's value.")
    high: float = Field(description="The highest run's value.")


class ChangedExample(Record):
    """An example whose answer changed across the runs: the answers given, and how often each."""

    index: int = Field(description="Row of the example in the evaluated data.")
    id: str | None = Field(default=None, description="Its id (data.id_column), when the data has one.")
    input: str | None = Field(default=None, description="Its text or path, as the disagreements show it.")
    gold: str
    answers: dict[str, int] = Field(description="Each answer given, and in how many runs (most often first).")
    right: int = Field(description="Runs that answered it right.")
    agreement: float = Field(description="Share of the runs that gave its most frequent answer.")


class RepeatModel(Record):
    """A model run several times over the same examples: its runs' spread and how steady each answer is."""

    name: str
    n_repeats: int
    n_examples: int
    spreads: list[MetricSpread] = Field(description="Every metric over the runs (accuracy first).")
    agreement: float = Field(
        description="Mean over examples of the share of runs that gave the example's most frequent answer."
    )
    pass_all: float = Field(description="pass^k: share of the examples right in every run.")
    pass_any: float = Field(description="pass@k: share of the examples right in at least one run.")
    two_runs_differ: float | None = Field(
        default=None,
        description="How far the accuracies of two single runs of the model differ at most, 1 − alpha of the time "
        "(t_{1 − alpha/2, k−1} · √2 · the runs' SD: 95 % at alpha 0.05; at most 1; None with fewer than 2 runs).",
    )
    means_differ: float | None = Field(
        default=None,
        description="The noise floor its gaps are held against: how far the mean accuracies of two sets of k runs "
        "of the model differ at most, 1 − alpha of the time (t · √2 · SD / √k, at most 1; None with fewer than 2 runs).",
    )
    changed: int = Field(description="Examples whose answer was not the same in every run.")
    changed_share: float = Field(description="changed / n_examples.")
    most_changed: list[ChangedExample] = Field(
        default_factory=list, description="The examples whose answer changed most (lowest agreement first)."
    )


class RepeatPool(Record):
    """A and B compared over all their runs: examples, then runs within examples (the two-level test)."""

    model_a: str
    model_b: str
    n_repeats_a: int
    n_repeats_b: int
    n_examples: int
    estimate: float = Field(description="Accuracy of A averaged over its runs minus B's.")
    low: float
    high: float
    p_value: float
    p_adjusted: float = Field(
        description="Holm over the run's comparisons of models: these and the pairs of models run once."
    )
    df: float = Field(description="Degrees of freedom of the t reference (Satterthwaite).")
    se_examples: float = Field(
        description="Standard error from the examples: the spread of the per-example mean differences (which "
        "holds the run-to-run noise within examples), clustered by group when the data has groups."
    )
    se_runs: float = Field(
        description="Standard error from whole runs shifting together: the spread of each model's per-run "
        "accuracies (s²/k per model; it holds the per-example noise once more: errs on the wide side)."
    )
    significant: bool = Field(
        description="A is better than B or the reverse: Holm's p at most alpha and the gap outside the noise floor."
    )
    winner: str | None = None
    noise_floor: float | None = Field(
        default=None,
        description="The larger of the two models' noise floors (RepeatModel.means_differ, how far two means of "
        "each model's k runs differ; None: neither was run twice): a gap within it is never called better.",
    )
    floor_of: str | None = Field(default=None, description="The model whose noise floor noise_floor is.")
    same_settings: bool = Field(
        default=False,
        description="A and B are one model listed twice (every setting but the name the same): their gap is the "
        "model's run-to-run noise, run with the same seeds (so the same answers wherever the seeds decide them).",
    )
    within_floor: bool = Field(
        default=False,
        description="|estimate| ≤ noise_floor: the gap is no larger than two means of k runs of one model differ, "
        "so no model is called better whatever p says (the floor only withholds 'better').",
    )


class RepeatSummary(Record):
    """Every model of a run that was run several times, and every comparison involving one."""

    models: list[RepeatModel]
    pools: list[RepeatPool] = Field(default_factory=list)
    alpha: float
    family_size: int = Field(default=0, description="Comparisons in the Holm family these pools were adjusted in.")
    sentences: list[str] = Field(
        default_factory=list, description="The section's words, one per comparison then one per model."
    )
