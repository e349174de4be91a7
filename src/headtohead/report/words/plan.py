"""The answer of ``h2h plan`` in one sentence: how many examples a gap needs, and the power at that size."""

from __future__ import annotations

from headtohead.report.words.numbers import format_number, format_share, percent_number
from headtohead.stats.power import SamplePlan

__all__ = ["plan_sentence"]


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
