"""The answer of ``h2h plan`` in one sentence: how many examples a gap needs, and the power at that size."""

from __future__ import annotations

from headtohead.report.words.numbers import format_number, format_pp, format_share, percent_number
from headtohead.stats.power import SamplePlan
from headtohead.stats.repeat_plan import MOST_RUNS, RunsPlan

__all__ = ["plan_sentence", "runs_plan_sentence"]


def plan_sentence(plan: SamplePlan, *, accuracy: float, delta: float) -> str:
    """The answer of ``h2h plan`` as one sentence.

    Parameters
    ----------
    plan : SamplePlan
        From :func:`headtohead.stats.power.plan_sample_size`.
    accuracy, delta : float
        The baseline accuracy and the gap it was planned for.

    Examples
    --------
    >>> from headtohead.stats.power import plan_sample_size
    >>> plan_sentence(plan_sample_size(0.90, 0.05, 0.10), accuracy=0.90, delta=0.05)  # doctest: +NORMALIZE_WHITESPACE
    'To detect a 5 pp accuracy difference at 90 % accuracy with 80 % power (α = 0.05, two-sided McNemar;
     assumed discordance 10 %) you need 291 examples; at 291 the McNemar test headtohead runs has
     80.1 % power (exact).'
    """
    p = plan
    if p.discordance_assumed:
        assumed = (
            f"assumed discordance {percent_number(p.discordance)} %, i.e. independent "
            f"errors — models that err on the same examples need fewer; set --discordance"
        )
    else:
        assumed = f"assumed discordance {percent_number(p.discordance)} %"
    test = f"α = {p.alpha:g}, two-sided McNemar"
    if p.n_comparisons > 1:
        test += f" with Holm over {p.n_comparisons} pairs, power at its first step α/{p.n_comparisons} = {format_number(p.test_alpha, 'number')}"
    return (
        f"To detect a {percent_number(delta)} pp accuracy difference at {percent_number(accuracy)} % accuracy with "
        f"{percent_number(p.target_power)} % power ({test}; {assumed}) you need {p.n:,} examples; "
        f"at {p.n:,} the McNemar test headtohead runs has {format_share(p.power)} power (exact)."
    )


def runs_plan_sentence(plan: RunsPlan, *, accuracy: float, delta: float) -> str:
    """The answer of ``h2h plan --repeats K --run-sd S`` as one sentence: examples × runs, or the runs it takes.

    Examples
    --------
    >>> from headtohead.stats.repeat_plan import plan_runs
    >>> runs_plan_sentence(plan_runs(0.90, 0.03, 0.10, repeats=10, run_sd=0.005), accuracy=0.90, delta=0.03)
    ... # doctest: +NORMALIZE_WHITESPACE
    'To detect a 3 pp accuracy difference at 90 % accuracy with 80 % power over 10 runs of each model (run-to-run
     SD 0.5 pp: two runs differ by up to 1.6 pp, two means of 10 runs by up to 0.5 pp — the noise floor, no gap
     within it is called better; α = 0.05, the test over every run, normal approximation; assumed discordance 10 %)
     you need about 904 examples (10 runs × 904 answers per model); with fewer than 3 runs no number of examples
     suffices.'
    """
    p = plan
    assumed = f"assumed discordance {percent_number(p.discordance)} %" + (
        " (independent errors; set --discordance)" if p.discordance_assumed else ""
    )
    test = f"α = {p.alpha:g}, the test over every run"
    if p.n_comparisons > 1:
        test += f" at Holm's first step α/{p.n_comparisons}"
    floor = (
        f": two runs differ by up to {format_pp(p.two_runs_differ, signed=False)} pp, two means of {p.repeats} runs "
        f"by up to {format_pp(p.floor, signed=False)} pp — the noise floor, no gap within it is called better"
        if p.floor is not None and p.two_runs_differ is not None and p.run_sd > 0
        else ""
    )
    what = (
        f"To detect a {percent_number(delta)} pp accuracy difference at {percent_number(accuracy)} % accuracy with "
        f"{percent_number(p.target_power)} % power over {p.repeats} runs of each model (run-to-run SD "
        f"{format_pp(p.run_sd, signed=False)} pp{floor}; {test}, normal approximation; {assumed})"
    )
    if p.min_repeats is None:
        return (
            f"{what}: not even {format_number(MOST_RUNS, 'integer')} runs of each model suffice, with any number of "
            f"examples — the gap is too small beside the run-to-run noise."
        )
    fewer = f"with fewer than {p.min_repeats} runs no number of examples suffices"
    if p.n is None:
        return (
            f"{what}: no number of examples suffices at {p.repeats} runs, the runs' noise and the floor of their means "
            f"hide the gap; plan {p.min_repeats} runs of each model or more."
        )
    count = format_number(p.n, "integer")
    tail = f"; {fewer}" if p.min_repeats > 1 else ""
    return f"{what} you need about {count} examples ({p.repeats} runs × {count} answers per model){tail}."
