"""The words of a model run several times (``repeats:``): how far its runs differ, how steady its answers are, and
its verdicts over every run.

A repeated model's score is its accuracy averaged over its runs; its best run is never its score.
A verdict over runs uses every run of both models, examples then runs within examples
(:mod:`headtohead.stats.repeat_pool`).
"""

from __future__ import annotations

from headtohead.report.words.numbers import (
    format_level,
    format_number,
    format_p,
    format_percent,
    format_pp,
    interval_pp,
)
from headtohead.results.repeats import MetricSpread, RepeatModel, RepeatPool, RepeatSummary

__all__ = [
    "REPEAT_RULE",
    "REPEATS_TITLE",
    "SLICE_REPEAT_RULE",
    "model_sentence",
    "pool_sentence",
    "floor_words",
    "twins_note",
    "with_repeat_sentences",
    "runs_of",
]

#: The section's title in every report.
REPEATS_TITLE = "Repeated runs"

#: How the comparison over runs is made, in one line (the reports' note under the table).
REPEAT_RULE = (
    "over every run: the gap of the mean accuracies over each model's runs, tested on the per-example gaps of mean "
    "correctness (examples, then runs within examples: the run-to-run noise of each example is in its mean), plus "
    "the spread of each model's per-run accuracies (whole runs moving together); a t reference with Satterthwaite's degrees of freedom; Holm over "
    "the run's comparisons of models (a repeated model counted once); a gap within the larger of the two models' "
    "noise floors (how far two means of each model's runs differ, each over its own runs) is never called better"
)


#: How a pair with a repeated model is compared on a slice, in one phrase (the slices' note).
SLICE_REPEAT_RULE = (
    "over every run, as on the whole data (examples, then runs within examples), against the noise floors of "
    "its models' runs on that slice (how far two means of their runs differ there): a gap within the larger is "
    "never called better"
)


def runs_of(pool: RepeatPool) -> str:
    """``5 runs of llm``, or ``5 × 3 runs`` when both models have several.

    Examples
    --------
    >>> pool = RepeatPool(model_a="llm", model_b="enc", n_repeats_a=5, n_repeats_b=1, n_examples=9, estimate=0.0,
    ...     low=0.0, high=0.0, p_value=1.0, p_adjusted=1.0, df=8.0, se_examples=0.0, se_runs=0.0, significant=False)
    >>> runs_of(pool)
    '5 runs of llm'
    """
    if pool.n_repeats_a == 1 or pool.n_repeats_b == 1:
        many, name = (pool.n_repeats_a, pool.model_a) if pool.n_repeats_a > 1 else (pool.n_repeats_b, pool.model_b)
        return f"{many} runs of {name}"
    return f"{pool.n_repeats_a} × {pool.n_repeats_b} runs"


def _spread(spread: MetricSpread) -> str:
    """``from 78.0 % to 82.5 %, run-to-run SD 1.6 pp (95 % interval 0.9…4.5 pp)``."""
    high = f"{format_pp(spread.sd_high, signed=False)}" if spread.sd_high is not None else "unbounded"
    return (
        f"from {format_percent(spread.low)} to {format_percent(spread.high)}, run-to-run SD "
        f"{format_pp(spread.sd, signed=False)} pp (interval {format_pp(spread.sd_low, signed=False)}…{high} pp)"
    )


def model_sentence(model: RepeatModel, confidence: float = 0.95) -> str:
    """A repeated model's accuracy over its runs, how far they differ, and how steady its answers are.

    Examples
    --------
    >>> s = MetricSpread(metric="accuracy", values=[0.8, 0.82, 0.78], mean=0.8, sd=0.02, sd_low=0.0104,
    ...                  sd_high=0.1257, low=0.78, high=0.82)
    >>> m = RepeatModel(name="llm", n_repeats=3, n_examples=200, spreads=[s], agreement=0.93, pass_all=0.7,
    ...                 pass_any=0.9, changed=40, changed_share=0.2, two_runs_differ=0.1217, means_differ=0.0703)
    >>> model_sentence(m)
    'llm: accuracy 80 % averaged over 3 runs (from 78 % to 82 %, run-to-run SD 2.0 pp (interval 1.0…12.6 pp)); two runs of llm differ by up to 12.2 pp (95 %); two means of 3 runs by up to 7.0 pp: the noise floor its gaps are held against; the answer changed across runs on 40 of 200 examples (20 %); right in all 3 runs (pass^3) on 70 %, in at least one (pass@3) on 90 %; a run gives an example its most frequent answer 93 % of the time.'
    """
    k = model.n_repeats
    accuracy = next((s for s in model.spreads if s.metric == "accuracy"), None)
    score = (
        f"accuracy {format_percent(accuracy.mean)} averaged over {k} runs ({_spread(accuracy)})"
        if accuracy is not None
        else f"{k} runs"
    )
    floor = ""
    if model.two_runs_differ is not None:
        floor = f"; two runs of {model.name} differ by up to {format_pp(model.two_runs_differ, signed=False)} pp ({format_level(confidence)})"
    if model.means_differ is not None:
        floor += (
            f"; two means of {k} runs by up to {format_pp(model.means_differ, signed=False)} pp: the noise floor its "
            f"gaps are held against"
        )
    return (
        f"{model.name}: {score}{floor}; the answer changed across runs on {format_number(model.changed, 'integer')} of "
        f"{format_number(model.n_examples, 'integer')} examples ({format_percent(model.changed_share)}); right in all {k} runs "
        f"(pass^{k}) on {format_percent(model.pass_all)}, in at least one (pass@{k}) on {format_percent(model.pass_any)}"
        f"; a run gives an example its most frequent answer {format_percent(model.agreement)} of the time."
    )


def pool_sentence(pool: RepeatPool, n_pools: int, confidence: float = 0.95) -> str:
    """One comparison over every run: the verdict, the gap of mean accuracies and its interval.

    Examples
    --------
    >>> pool = RepeatPool(model_a="llm", model_b="enc", n_repeats_a=5, n_repeats_b=1, n_examples=500,
    ...     estimate=0.04, low=0.01, high=0.07, p_value=0.01, p_adjusted=0.01, df=30.0, se_examples=0.01,
    ...     se_runs=0.0, significant=True, winner="llm")
    >>> pool_sentence(pool, 1)
    'llm is better than enc over 5 runs of llm: llm − enc = +4.0 pp (95 % interval +1.0…+7.0 pp, p = 0.010; examples, then runs within examples).'
    """
    gap = f"{pool.model_a} − {pool.model_b} = {format_pp(pool.estimate)} pp"
    holm = f", Holm over {n_pools} comparisons of models p {format_p(pool.p_adjusted)}" if n_pools > 1 else ""
    numbers = (
        f"({format_level(confidence)} interval {interval_pp(pool.low, pool.high)} pp, p {format_p(pool.p_value)}{holm}; "
        f"examples, then runs within examples)"
    )
    if pool.same_settings:
        return _twins_sentence(pool, gap, numbers, confidence)
    if pool.winner is not None:
        loser = pool.model_b if pool.winner == pool.model_a else pool.model_a
        return f"{pool.winner} is better than {loser} over {runs_of(pool)}: {gap} {numbers}."
    if pool.within_floor and pool.noise_floor is not None and pool.p_adjusted <= 1.0 - confidence:
        return (
            f"No decision over {runs_of(pool)}: the {format_pp(abs(pool.estimate), signed=False)} pp gap is within "
            f"{floor_words(pool, confidence)}, so neither is called better though the test alone would: {gap} "
            f"{numbers}."
        )
    within = (
        f"; the gap is within {floor_words(pool, confidence)}"
        if pool.within_floor and pool.noise_floor is not None and pool.noise_floor > 0
        else ""
    )
    return f"No significant difference over {runs_of(pool)}: {gap} {numbers}{within}."


def _twins_sentence(pool: RepeatPool, gap: str, numbers: str, confidence: float) -> str:
    """One model listed twice (the same settings): its gap is that model's noise, run with the same seeds."""
    twins = (
        f"{pool.model_a} and {pool.model_b} are one model listed twice (the same settings, run with the same seeds, "
        f"so the same answers wherever the seeds decide them)"
    )
    floor = f"; its noise floor, from runs seeded apart: {floor_words(pool, confidence)}" if pool.noise_floor else ""
    if pool.winner is not None:
        return (
            f"{twins}, yet {pool.winner} scored higher over {runs_of(pool)}: {gap} {numbers}; something besides "
            f"the settings differs between the two (their order in the run, a server's state){floor}."
        )
    return f"{twins}: {gap} {numbers} is that model's own run-to-run noise, not a difference of models{floor}."


def twins_note(model_a: str, model_b: str) -> str:
    """What the gap of one model listed twice and run once shows (after the pair's verdict).

    Examples
    --------
    >>> twins_note("llm", "again")
    'llm and again are one model listed twice (the same settings, run with the same seeds): their gap shows only the noise the seeds do not fix; h2h run --noise-floor measures how far runs seeded apart differ.'
    """
    return (
        f"{model_a} and {model_b} are one model listed twice (the same settings, run with the same seeds): their gap "
        f"shows only the noise the seeds do not fix; h2h run --noise-floor measures how far runs seeded apart differ."
    )


def floor_words(pool: RepeatPool, confidence: float = 0.95) -> str:
    """``llm's noise floor (two means of 5 runs of llm differ by up to 1.3 pp, 95 %)``: the floor a pair's gap is held
    against (the mean floor of the model with the larger, over its own runs).

    Examples
    --------
    >>> pool = RepeatPool(model_a="llm", model_b="enc", n_repeats_a=5, n_repeats_b=1, n_examples=500,
    ...     estimate=0.012, low=0.002, high=0.022, p_value=0.02, p_adjusted=0.02, df=30.0, se_examples=0.005,
    ...     se_runs=0.001, significant=False, noise_floor=0.013, floor_of="llm", within_floor=True)
    >>> floor_words(pool)
    "llm's noise floor (two means of 5 runs of llm differ by up to 1.3 pp, 95 %)"
    """
    size = format_pp(pool.noise_floor if pool.noise_floor is not None else 0.0, signed=False)
    k = pool.n_repeats_a if pool.floor_of == pool.model_a else pool.n_repeats_b
    return (
        f"{pool.floor_of}'s noise floor (two means of {k} runs of {pool.floor_of} differ by up to {size} pp, "
        f"{format_level(confidence)})"
    )


def with_repeat_sentences(summary: RepeatSummary | None) -> RepeatSummary | None:
    """``summary`` with its sentences: each verdict over runs, then each repeated model's runs."""
    if summary is None:
        return None
    confidence = 1.0 - summary.alpha
    sentences = [pool_sentence(p, summary.family_size or len(summary.pools), confidence) for p in summary.pools]
    sentences += [model_sentence(m, confidence) for m in summary.models]
    return summary.model_copy(update={"sentences": sentences})
