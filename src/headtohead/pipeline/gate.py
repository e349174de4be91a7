"""``headtohead.gate`` (``h2h gate``): does a candidate model stay within a margin of a baseline?

A CI check that fails only when a candidate is worse than a baseline beyond a margin, with
confidence — and says "inconclusive" (with how much more data would decide) when the data
cannot tell::

    outcome = headtohead.gate("runs/x/results.json", baseline="bert", candidate="bert-int8",
                              max_accuracy_drop="0.5pp", max_slowdown="5%")
    outcome.exit_code      # 0 pass, 1 fail, 3 inconclusive

The decisions are :func:`headtohead.stats.noninferiority.gate_decisions` over the saved
per-example predictions (``predictions.npz`` beside ``results.json``) and the per-round speed
timings; the words are :mod:`headtohead.report.gate`. Margins are read here, where they enter.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from headtohead.errors import ConfigError, ResultsError, did_you_mean, listing
from headtohead.metrics import CATALOGUE
from headtohead.report.gate import gate_paragraph, junit_xml
from headtohead.results import Predictions, RunResult, load_result
from headtohead.runtime.files import write_text_atomic
from headtohead.stats.noninferiority import Decision, gate_decisions, gate_exit_code

__all__ = ["gate", "GateOutcome", "parse_accuracy_margin", "parse_slowdown_margin"]


@dataclass(frozen=True)
class GateOutcome:
    """What :func:`gate` decided: every check, the exit code, and the paragraph that says why."""

    baseline: str
    candidate: str
    decisions: list[Decision]
    exit_code: int
    paragraph: str

    def __repr__(self) -> str:  # a notebook shows the decision and a row per check (report/notebook.py)
        from headtohead.report.notebook import gate_text

        return gate_text(
            self.decisions,
            baseline=self.baseline,
            candidate=self.candidate,
            paragraph=self.paragraph,
            exit_code=self.exit_code,
        )

    def _repr_html_(self) -> str:
        from headtohead.report.notebook import gate_html

        return gate_html(
            self.decisions,
            baseline=self.baseline,
            candidate=self.candidate,
            paragraph=self.paragraph,
            exit_code=self.exit_code,
        )


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
        raise ConfigError(
            f"{option} {text}: '%' is ambiguous for accuracy (points or relative?); write "
            f"{value:g}pp for percentage points, or the fraction {value / 100:g}"
        )
    else:
        raise ConfigError(f"{option} {text}: '{unit}' is not an accuracy unit; write e.g. {option} {example}")
    if fraction >= 1.0:
        raise ConfigError(
            f"{option} {text}: a drop of {fraction:g} (as a fraction) is the whole scale; did you mean {value:g}pp?"
        )
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
        raise ConfigError(
            f"{option} {text}: a slowdown of {fraction:g} (as a fraction) means {1 + fraction:g}× the "
            f"time; write it as {1 + fraction:g}x if that is meant, or e.g. {example}"
        )
    return round(fraction, 12)


def _margin(value: str | float | None, parse: Callable[[str], float]) -> float | None:
    if value is None:
        return None
    return parse(value if isinstance(value, str) else repr(float(value)))


def _check_name(option: str, name: str, result: RunResult, path: Path) -> None:
    names = [m.name for m in result.models]
    if name not in names:
        raise ConfigError(
            f"{option} {name}: no model of that name in {path}{did_you_mean(name, names)} (models: {listing(names)})"
        )


def gate(
    results: str | Path,
    *,
    baseline: str,
    candidate: str,
    max_accuracy_drop: str | float | None = None,
    max_slowdown: str | float | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    junit: str | Path | None = None,
    metric: str = "accuracy",
) -> GateOutcome:
    """Decide whether ``candidate`` is worse than ``baseline`` beyond the margins, with confidence.

    Parameters
    ----------
    results : str or Path
        A ``results.json`` written by ``h2h run`` (``predictions.npz`` beside it for accuracy).
    baseline, candidate : str
        Model names in that run.
    max_accuracy_drop : str or float, optional
        Allowed accuracy drop: ``"0.5pp"`` (percentage points) or a fraction (``0.005``).
    max_slowdown : str or float, optional
        Allowed slowdown: ``"5%"``, ``"1.05x"`` or a fraction (``0.05``).
    confidence : float, default 0.95
        Level of the two-sided intervals (each bound is a one-sided test at half the rest).
    n_resamples : int, default 2000
        Bootstrap resamples.
    junit : str or Path, optional
        Also write the checks as JUnit XML there.
    metric : str, default "accuracy"
        The quality check's metric, a name of the catalogue (:mod:`headtohead.metrics`: ``mcc``,
        ``roc_auc``, ``f1_macro`` …); ``max_accuracy_drop`` is then its allowed drop in its units.

    Returns
    -------
    GateOutcome
        ``exit_code`` 0 (not worse beyond the margins), 1 (worse, with confidence), 3 (the data
        cannot tell; the paragraph says how much more would).

    Raises
    ------
    ConfigError
        No margin, a margin that cannot be read, unknown model names, the same model twice.
    ResultsError
        The results hold no quality (or predictions) for an accuracy check.

    Examples
    --------
    >>> outcome = gate("runs/x/results.json", baseline="bert", candidate="bert-int8",   # doctest: +SKIP
    ...                max_accuracy_drop="0.5pp")
    >>> outcome.exit_code, outcome.decisions[0].outcome                                  # doctest: +SKIP
    (0, 'pass')
    """
    if max_accuracy_drop is None and max_slowdown is None:
        raise ConfigError("h2h gate: give --max-accuracy-drop (e.g. 0.5pp) and/or --max-slowdown (e.g. 5%)")
    drop = _margin(max_accuracy_drop, parse_accuracy_margin)
    if metric not in CATALOGUE:
        raise ConfigError(
            f"--metric {metric}: unknown{did_you_mean(metric, CATALOGUE)} (choose one of: {', '.join(CATALOGUE)})"
        )
    slowdown = _margin(max_slowdown, parse_slowdown_margin)
    if not 0.5 < confidence < 1.0:
        raise ConfigError(f"--confidence {confidence}: must lie between 0.5 and 1, e.g. 0.95")
    if n_resamples < 100:
        raise ConfigError(f"--n-resamples {n_resamples}: use at least 100 (2000 is the default)")
    path = Path(results)
    result = load_result(path)
    _check_name("--baseline", baseline, result, path)
    _check_name("--candidate", candidate, result, path)
    if baseline == candidate:
        raise ConfigError(f"--baseline and --candidate are both '{baseline}'; name two different models")
    predictions = _predictions(path, result, (baseline, candidate)) if drop is not None else None
    decisions = gate_decisions(
        result,
        predictions,
        baseline=baseline,
        candidate=candidate,
        max_accuracy_drop=drop,
        max_slowdown=slowdown,
        confidence=confidence,
        n_resamples=n_resamples,
        groups=predictions.groups if predictions is not None else None,
        metric=metric,
    )
    paragraph = gate_paragraph(decisions, baseline, candidate)
    if junit is not None:
        write_text_atomic(Path(junit), junit_xml(decisions, paragraph, baseline=baseline, candidate=candidate))
    return GateOutcome(baseline, candidate, decisions, gate_exit_code(decisions), paragraph)


def _predictions(path: Path, result: RunResult, names: tuple[str, str]) -> Predictions:
    if any(result.model(n).quality is None for n in names):
        raise ResultsError(
            f"{path}: holds no quality results (written by h2h bench?); gate accuracy on the "
            f"results of h2h run, or drop --max-accuracy-drop"
        )
    predictions = Predictions.load(path.parent / result.predictions_file)
    for name in names:
        if name not in predictions.models:
            raise ResultsError(
                f"{path.parent / result.predictions_file}: no predictions of '{name}'; it does "
                f"not belong to {path} (re-run h2h run)"
            )
    return predictions
