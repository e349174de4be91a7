"""The gate's words: why each check passed, failed or could not tell; the paragraph; JUnit XML.

The decisions themselves (intervals against margins) are
:func:`headtohead.stats.gate.gate_decisions`; this module only words them.
"""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree

from headtohead.metrics import CATALOGUE
from headtohead.report.words.numbers import (
    format_level,
    format_number,
    format_pp,
    format_ratios,
    format_share,
    format_signed,
)
from headtohead.stats.gate import EXIT_CODES, POWER, Decision, gate_exit_code

__all__ = ["decision_explanation", "gate_paragraph", "junit_xml"]

#: Why a check could not run, by :attr:`Decision.reason`.
_SKIPPED = {
    "no_speed": "the results hold no speed measurement of both models (enable speed in h2h run, or gate "
    "the results of h2h bench)",
    "no_capacity": "the results hold no capacity of both models (speed scenario capacity for endpoints, server "
    "for local models)",
    "no_capacity_interval": "fewer than two seeded searches both models finished give no interval (set "
    "speed.capacity.repeats or speed.server.repeats ≥ 2)",
}


def _pp(fraction: float) -> str:
    """Percentage points with the margin's two decimals (a bound of −0.497 pp is not "−0.5 pp" beside 0.50)."""
    return f"{format_pp(fraction, decimals=2)} pp"


def decision_explanation(decision: Decision) -> str:
    """One or two sentences saying what was measured and why the check came out as it did.

    Examples
    --------
    ``Accuracy: int8 − fp32 = −0.35 pp (95% CI −0.80 pp to +0.10 pp, Tango's score interval over 872 examples);
    the lower bound is within the allowed drop of 1.00 pp, so int8 is not worse beyond the margin.``
    """
    d = decision
    if d.outcome == "skipped":
        reason = _SKIPPED.get(d.reason or "", d.reason or "no reason given")
        return f"{d.check[0].upper()}{d.check[1:]}: not checked — {reason}."
    base_name, cand_name = d.names
    level = format_level(d.confidence)  # 97.5 % (a speed check's Bonferroni level) is not 98 %
    if d.check == "accuracy":
        over = f"{d.n:,} examples" + (f" in {d.groups:,} groups" if d.groups else "")
        method = (
            "Tango's score interval joined with the exact one (one model never right alone)"
            if d.method.startswith("tango") and d.method.endswith("+exact")
            else "Tango's score interval"
            if d.method.startswith("tango")
            else f"the {d.method}"
            if d.method.startswith("two-level")
            else "paired interval"
        )
        measured = (
            f"{cand_name} − {base_name} = {_pp(d.estimate)} ({level} CI {_pp(d.low)} to "
            f"{_pp(d.high)}, {method} over {over}; a failed answer counts as wrong)"
        )
        drop = f"{format_pp(d.margin, signed=False, decimals=2)} pp"
        if d.outcome == "fail":
            why = (
                f"the whole interval lies below −{drop}, so {cand_name} is worse than {base_name} by more than the "
                f"allowed {drop}, with {level} confidence"
            )
        elif d.outcome == "pass":
            why = f"the lower bound is within the allowed drop of {drop}, so {cand_name} is not worse beyond the margin"
        else:
            more = (
                f"about {d.needed:,} examples would settle it ({format_share(POWER, 0)} power if the observed rates hold)"
                if d.needed
                else "the observed difference sits on the margin, so no number of examples settles it"
            )
            why = (
                f"the interval straddles −{drop}: too few examples to tell whether the drop exceeds the margin; {more}"
            )
        return f"Accuracy: {measured}; {why}."
    if d.check in CATALOGUE:
        return _metric_explanation(d, level)
    if d.check == "capacity" or d.check.startswith("capacity ("):
        return _capacity_explanation(d, level)
    scenario = d.check.removeprefix("speed (").removesuffix(")")
    adjusted = f", {d.method.partition(', ')[2]}" if ", " in d.method else ""  # "Bonferroni over 2 scenarios"
    measured = (
        f"{cand_name} takes {format_number(d.estimate, 'score')}× the time of {base_name} ({level} CI "
        f"{format_number(d.low, 'score')}–{format_number(d.high, 'score')}, {d.n} interleaved rounds{adjusted})"
    )
    allowed = f"{format_number(d.bound, 'score')}× (+{format_share(d.margin)})"
    if d.outcome == "fail":
        why = f"the whole interval lies above {allowed}, so it is slower than allowed, with {level} confidence"
    elif d.outcome == "pass":
        why = f"the upper bound is within {allowed}, so it is not slower beyond the margin"
    else:
        more = (
            f"about {d.needed} rounds would settle it (set speed.rounds)" if d.needed else "more rounds may settle it"
        )
        why = f"the interval straddles {allowed}: too few rounds to tell; {more}"
    return f"Speed ({scenario}): {measured}; {why}."


def _capacity_explanation(d: Decision, level: str) -> str:
    """A capacity check: the ratio of the load the candidate sustains to the baseline's, against the allowed drop.

    Examples
    --------
    >>> from headtohead.stats.gate import Decision
    >>> _capacity_explanation(Decision("capacity", "fail", 0.5, 0.45, 0.56, 0.95, 0.95, 3, None, 0.05,
    ...                                ("fast", "slow")), "95 %")
    'Capacity: slow sustains 0.50× the load of fast (95 % CI 0.45–0.56, 3 seeded searches); the whole interval lies below 0.95× (−5.0 %), so it sustains less than allowed, with 95 % confidence.'
    """
    base_name, cand_name = d.names
    scenario = d.check.removeprefix("capacity")  # " (server)" for the Server scenario's max_qps
    low, estimate, high = format_ratios(d.low, d.estimate, d.high)
    measured = (
        f"{cand_name} sustains {estimate}× the load of {base_name} ({level} CI {low}–{high}, {d.n} seeded searches)"
    )
    allowed = f"{format_ratios(d.bound)[0]}× (−{format_share(d.margin)})"
    if d.outcome == "fail":
        why = f"the whole interval lies below {allowed}, so it sustains less than allowed, with {level} confidence"
    elif d.outcome == "pass":
        why = f"the lower bound is at or above {allowed}, so it sustains no less beyond the margin"
    else:
        why = f"the interval straddles {allowed}: too few searches to tell; more searches may settle it (speed.capacity.repeats)"
    return f"Capacity{scenario}: {measured}; {why}."


def _metric_explanation(d: Decision, level: str) -> str:
    """A catalogue metric's check (``--metric``): its paired bootstrap interval against the allowed drop."""
    metric = CATALOGUE[d.check]

    def value(x: float) -> str:
        return _pp(x) if metric.scale == "share" else format_signed(x, 4)

    drop = f"{format_pp(d.margin, signed=False, decimals=2)} pp" if metric.scale == "share" else f"{d.margin:g}"
    rows = "rows both answered" if metric.needs_proba else "examples; a failed answer counts as wrong"
    over = f"{d.n:,} {rows}" + (f", in {d.groups:,} groups" if d.groups else "")
    if d.low != d.low:  # NaN: the bootstrap gave no interval
        measured = f"{d.names[1]} − {d.names[0]} = {value(d.estimate)} (no interval: every resample gave the same)"
        return f"{metric.label}: {measured}; the data cannot tell whether the drop exceeds {drop}."
    measured = (
        f"{d.names[1]} − {d.names[0]} = {value(d.estimate)} ({level} CI {value(d.low)} to {value(d.high)}, "
        f"paired bootstrap over {over})"
    )
    worse = "below" if metric.higher_is_better else "above"
    if d.outcome == "fail":
        why = f"the whole interval lies {worse} the allowed drop of {drop}, so {d.names[1]} is worse, with {level} confidence"
    elif d.outcome == "pass":
        why = f"the interval stays within the allowed drop of {drop}, so {d.names[1]} is not worse beyond the margin"
    else:
        why = f"the interval straddles the allowed drop of {drop}: too few examples to tell; more examples would"
    return f"{metric.label}: {measured}; {why}."


def gate_paragraph(decisions: Sequence[Decision], baseline: str, candidate: str) -> str:
    """The gate's decision as one paragraph: the overall verdict, then each check's reason."""
    code = gate_exit_code(decisions)
    failed = [d.check for d in decisions if d.outcome == "fail"]
    unsure = [d.check for d in decisions if d.outcome == "inconclusive"]
    if code == EXIT_CODES["fail"]:
        head = f"FAIL: {candidate} is worse than {baseline} beyond the allowed margin ({', '.join(failed)})."
    elif code == EXIT_CODES["inconclusive"]:
        head = (
            f"INCONCLUSIVE: the data cannot tell whether {candidate} is worse than {baseline} beyond the margin "
            f"({', '.join(unsure)})."
        )
    else:
        head = f"PASS: {candidate} is not worse than {baseline} beyond the allowed margins."
    return " ".join([head, *(decision_explanation(d) for d in decisions)])


def junit_xml(
    decisions: Sequence[Decision], paragraph: str, *, baseline: str, candidate: str, warnings: Sequence[str] = ()
) -> str:
    """JUnit XML with one ``testcase`` per check: a failure for "fail", an error of type
    ``inconclusive`` for "inconclusive", ``skipped`` for a check that could not run; ``warnings``
    (two runs that differ in a setting known to move scores) as its ``system-err``."""
    counts = {outcome: sum(d.outcome == outcome for d in decisions) for outcome in ("fail", "inconclusive", "skipped")}
    attributes = {
        "tests": str(len(decisions)),
        "failures": str(counts["fail"]),
        "errors": str(counts["inconclusive"]),
        "skipped": str(counts["skipped"]),
    }
    root = ElementTree.Element("testsuites", {"name": "h2h gate", **attributes})
    suite = ElementTree.SubElement(root, "testsuite", {"name": f"h2h gate: {candidate} vs {baseline}", **attributes})
    for decision in decisions:
        explanation = decision_explanation(decision)
        case = ElementTree.SubElement(suite, "testcase", {"classname": "h2h.gate", "name": decision.check, "time": "0"})
        if decision.outcome == "fail":
            ElementTree.SubElement(
                case, "failure", {"type": "worse beyond margin", "message": explanation}
            ).text = explanation
        elif decision.outcome == "inconclusive":
            ElementTree.SubElement(case, "error", {"type": "inconclusive", "message": explanation}).text = explanation
        elif decision.outcome == "skipped":
            ElementTree.SubElement(case, "skipped", {"message": explanation})
    ElementTree.SubElement(suite, "system-out").text = paragraph
    if warnings:
        ElementTree.SubElement(suite, "system-err").text = "\n".join(f"warning: {w}" for w in warnings)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"
