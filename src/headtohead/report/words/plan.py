"""The answer of ``h2h plan`` in one sentence: how many examples a gap needs, and the power at that size."""

from __future__ import annotations

from headtohead.stats.power import SamplePlan

__all__ = ["plan_sentence"]


def _percent(fraction: float) -> str:
    """``0.9`` → ``90``, ``0.905`` → ``90.5``: as many decimals as the value needs (up to 3)."""
    return f"{100 * fraction:.3f}".rstrip("0").rstrip(".")


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
            f"assumed discordance {_percent(p.discordance)} %, i.e. independent "
            f"errors — models that err on the same examples need fewer; set --discordance"
        )
    else:
        assumed = f"assumed discordance {_percent(p.discordance)} %"
    test = f"α = {p.alpha:g}, two-sided McNemar"
    if p.n_comparisons > 1:
        test += (
            f" with Holm over {p.n_comparisons} pairs, power at its first step α/{p.n_comparisons} = {p.test_alpha:.3g}"
        )
    return (
        f"To detect a {_percent(delta)} pp accuracy difference at {_percent(accuracy)} % accuracy with "
        f"{_percent(p.target_power)} % power ({test}; {assumed}) you need {p.n:,} examples; "
        f"at {p.n:,} the McNemar test headtohead runs has {100 * p.power:.1f} % power (exact)."
    )
