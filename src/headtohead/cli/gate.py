"""``h2h gate``: a CI check that fails only when a candidate is worse than a baseline beyond a margin.

::

    h2h gate runs/x/results.json --baseline bert --candidate bert-int8 \\
        --max-accuracy-drop 0.5pp --max-slowdown 5% --junit gate.xml

Exit codes: 0 pass (non-inferior), 1 fail (worse beyond the margin, with confidence),
3 inconclusive (too little data to tell; the paragraph says how much more is needed),
2 bad input. The decisions are made by :mod:`headtohead.stats.noninferiority` from the
saved per-example predictions (``predictions.npz`` beside ``results.json``) and the
per-round speed timings; this module parses arguments, prints and writes JUnit XML.
Registered in :mod:`headtohead.cli.main` with ``app.command("gate")(gate)``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional
from xml.etree import ElementTree

import typer

from headtohead.errors import ConfigError, ResultsError, did_you_mean

if TYPE_CHECKING:  # the statistics (SciPy) load only when the gate runs
    from headtohead.stats.noninferiority import Decision

__all__ = ["gate", "parse_accuracy_margin", "parse_slowdown_margin", "gate_decisions", "junit_xml"]

_NUMBER = re.compile(r"^\s*(?P<value>[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?)\s*(?P<unit>pp|%|x|×)?\s*$")


def _parse(text: str, option: str, example: str) -> tuple[float, str | None]:
    match = _NUMBER.match(str(text))
    if not match:
        raise ConfigError(f"{option} {text!r}: not a number with an optional unit; write e.g. {option} {example}")
    value, unit = float(match.group("value")), match.group("unit")
    if value < 0:
        raise ConfigError(f"{option} {text}: a margin cannot be negative; write e.g. {option} {example}")
    return value, unit


def parse_accuracy_margin(text: str) -> float:
    """``"0.5pp"`` → 0.005 (percentage points); ``"0.005"`` → 0.005 (a fraction).

    ``%`` is refused: "0.5 %" of accuracy could mean points or a relative drop.

    Raises
    ------
    ConfigError
        Not a number, negative, a fraction of 1 or more, or an ambiguous unit.

    Examples
    --------
    >>> parse_accuracy_margin("0.5pp"), parse_accuracy_margin("0.005")
    (0.005, 0.005)
    """
    option, example = "--max-accuracy-drop", "0.5pp"
    value, unit = _parse(text, option, example)
    if unit == "pp":
        fraction = value / 100.0
    elif unit is None:
        fraction = value
    elif unit == "%":
        raise ConfigError(f"{option} {text}: '%' is ambiguous for accuracy (points or relative?); write "
                          f"{value:g}pp for percentage points, or the fraction {value / 100:g}")
    else:
        raise ConfigError(f"{option} {text}: '{unit}' is not an accuracy unit; write e.g. {option} {example}")
    if fraction >= 1.0:
        raise ConfigError(f"{option} {text}: a drop of {fraction:g} (as a fraction) is the whole scale; did you mean "
                          f"{value:g}pp?")
    return round(fraction, 12)


def parse_slowdown_margin(text: str) -> float:
    """``"5%"`` → 0.05; ``"0.05"`` → 0.05; ``"1.05x"`` → 0.05 (a time ratio).

    Raises
    ------
    ConfigError
        Not a number, negative, percentage points, or a ratio below 1.

    Examples
    --------
    >>> parse_slowdown_margin("5%"), parse_slowdown_margin("0.05"), parse_slowdown_margin("1.05x")
    (0.05, 0.05, 0.05)
    """
    option, example = "--max-slowdown", "5%"
    value, unit = _parse(text, option, example)
    if unit == "%":
        fraction = value / 100.0
    elif unit in ("x", "×"):
        if value < 1.0:
            raise ConfigError(f"{option} {text}: a time ratio below 1 would demand a speed-up; write e.g. 1.05x")
        fraction = value - 1.0
    elif unit is None:
        fraction = value
    else:
        raise ConfigError(f"{option} {text}: 'pp' is for accuracy; write a slowdown as e.g. {option} {example}")
    if fraction >= 1.0:
        raise ConfigError(f"{option} {text}: a slowdown of {fraction:g} (as a fraction) means {1 + fraction:g}× the "
                          f"time; write it as {1 + fraction:g}x if that is meant, or e.g. {example}")
    return round(fraction, 12)


def _model_names(result: Any) -> list[str]:
    return [m.name for m in result.models]


def _check_name(option: str, name: str, result: Any, path: Path) -> None:
    names = _model_names(result)
    if name not in names:
        raise ConfigError(f"{option} {name}: no model of that name in {path}{did_you_mean(name, names)} "
                          f"(models: {', '.join(names)})")


def gate_decisions(result: Any, predictions: Any, *, baseline: str, candidate: str, max_accuracy_drop: float | None,
                   max_slowdown: float | None, confidence: float = 0.95, n_resamples: int = 2000,
                   seed: int = 0) -> list[Decision]:
    """Every check the margins ask for, in order: accuracy, then speed per timed scenario.

    Parameters
    ----------
    result : RunResult
        The saved run.
    predictions : Predictions or None
        Its per-example predictions (needed when ``max_accuracy_drop`` is given).
    baseline, candidate : str
        Model names.
    max_accuracy_drop, max_slowdown : float or None
        Margins as fractions; ``None`` skips that check.
    confidence, n_resamples, seed
        Of the intervals.

    Returns
    -------
    list of Decision
    """
    from headtohead.stats.noninferiority import accuracy_noninferiority, skipped_check, slowdown_noninferiority
    from headtohead.stats.speed import round_medians

    names = (baseline, candidate)
    decisions: list[Decision] = []
    if max_accuracy_drop is not None:
        y_true = predictions.y_true
        decisions.append(accuracy_noninferiority(y_true, predictions[baseline].pred, predictions[candidate].pred,
                                                 max_drop=max_accuracy_drop, confidence=confidence,
                                                 n_resamples=n_resamples, seed=seed, names=names))
    if max_slowdown is not None:
        speed = result.speed
        timed = []
        if speed is not None:
            for scenario in ("offline", "single_stream"):
                base, cand = (_timing(speed, name, scenario) for name in names)
                if base is not None and cand is not None:
                    timed.append((scenario, base, cand))
        if not timed:
            decisions.append(skipped_check("speed", "the results hold no speed measurement of both models (enable "
                                           "speed in h2h run, or gate the results of h2h bench)"))
        for scenario, base, cand in timed:
            decisions.append(slowdown_noninferiority(
                round_medians(base.rounds_ns), round_medians(cand.rounds_ns), max_slowdown=max_slowdown,
                confidence=confidence, n_resamples=n_resamples, seed=seed, scenario=scenario, names=names))
    return decisions


def _timing(speed: Any, name: str, scenario: str) -> Any:
    try:
        return speed.model(name).timing(scenario)
    except KeyError:
        return None


def junit_xml(decisions: list[Decision], paragraph: str, *, baseline: str, candidate: str) -> str:
    """JUnit XML with one ``testcase`` per check: a failure for "fail", an error of type
    ``inconclusive`` for "inconclusive", ``skipped`` for a check that could not run."""
    counts = {outcome: sum(d.outcome == outcome for d in decisions) for outcome in ("fail", "inconclusive", "skipped")}
    attributes = {"tests": str(len(decisions)), "failures": str(counts["fail"]), "errors": str(counts["inconclusive"]),
                  "skipped": str(counts["skipped"])}
    root = ElementTree.Element("testsuites", {"name": "h2h gate", **attributes})
    suite = ElementTree.SubElement(root, "testsuite", {"name": f"h2h gate: {candidate} vs {baseline}", **attributes})
    for decision in decisions:
        case = ElementTree.SubElement(suite, "testcase", {"classname": "h2h.gate", "name": decision.check,
                                                          "time": "0"})
        if decision.outcome == "fail":
            ElementTree.SubElement(case, "failure", {"type": "worse beyond margin",
                                                     "message": decision.explanation}).text = decision.explanation
        elif decision.outcome == "inconclusive":
            ElementTree.SubElement(case, "error", {"type": "inconclusive",
                                                   "message": decision.explanation}).text = decision.explanation
        elif decision.outcome == "skipped":
            ElementTree.SubElement(case, "skipped", {"message": decision.explanation})
    ElementTree.SubElement(suite, "system-out").text = paragraph
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def gate(
    results: Path = typer.Argument(..., help="A results.json written by h2h run (predictions.npz beside it)."),
    baseline: str = typer.Option(..., "--baseline", help="The reference model's name."),
    candidate: str = typer.Option(..., "--candidate", help="The model that must not be worse."),
    max_accuracy_drop: Optional[str] = typer.Option(
        None, "--max-accuracy-drop", help="Allowed accuracy drop: 0.5pp (percentage points) or 0.005."),
    max_slowdown: Optional[str] = typer.Option(None, "--max-slowdown", help="Allowed slowdown: 5%, 0.05 or 1.05x."),
    confidence: float = typer.Option(0.95, "--confidence", help="Level of the two-sided intervals."),
    n_resamples: int = typer.Option(2000, "--n-resamples", help="Bootstrap resamples."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Also write the checks as JUnit XML here."),
) -> None:
    """Fail (exit 1) only if the candidate is worse than the baseline beyond a margin, with confidence.

    Exit 0 when it is not, 3 when the data cannot tell (too few examples or rounds).
    """
    from headtohead.results import Predictions, load_result
    from headtohead.runtime.files import write_text_atomic
    from headtohead.stats.noninferiority import gate_exit_code, gate_paragraph

    if max_accuracy_drop is None and max_slowdown is None:
        raise ConfigError("h2h gate: give --max-accuracy-drop (e.g. 0.5pp) and/or --max-slowdown (e.g. 5%)")
    drop = parse_accuracy_margin(max_accuracy_drop) if max_accuracy_drop is not None else None
    slowdown = parse_slowdown_margin(max_slowdown) if max_slowdown is not None else None
    if not 0.5 < confidence < 1.0:
        raise ConfigError(f"--confidence {confidence}: must lie between 0.5 and 1, e.g. 0.95")
    if n_resamples < 100:
        raise ConfigError(f"--n-resamples {n_resamples}: use at least 100 (2000 is the default)")
    result = load_result(results)
    _check_name("--baseline", baseline, result, results)
    _check_name("--candidate", candidate, result, results)
    if baseline == candidate:
        raise ConfigError(f"--baseline and --candidate are both '{baseline}'; name two different models")
    predictions = None
    if drop is not None:
        if any(result.model(n).quality is None for n in (baseline, candidate)):
            raise ResultsError(f"{results}: holds no quality results (written by h2h bench?); gate accuracy on the "
                               f"results of h2h run, or drop --max-accuracy-drop")
        predictions = Predictions.load(results.parent / result.predictions_file)
        for name in (baseline, candidate):
            if name not in predictions.models:
                raise ResultsError(f"{results.parent / result.predictions_file}: no predictions of '{name}'; it does "
                                   f"not belong to {results} (re-run h2h run)")
    decisions = gate_decisions(result, predictions, baseline=baseline, candidate=candidate, max_accuracy_drop=drop,
                               max_slowdown=slowdown, confidence=confidence, n_resamples=n_resamples)
    paragraph = gate_paragraph(decisions, baseline, candidate)
    if junit is not None:
        write_text_atomic(junit, junit_xml(decisions, paragraph, baseline=baseline, candidate=candidate))
    typer.echo(paragraph)
    raise typer.Exit(gate_exit_code(decisions))
