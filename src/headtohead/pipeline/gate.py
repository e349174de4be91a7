"""``headtohead.gate`` (``h2h gate``): does a candidate model stay within a margin of a baseline?

See ``docs/cli.md``, "Margins".
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

from headtohead.config.margins import parse_accuracy_margin, parse_slowdown_margin
from headtohead.errors import ConfigError, ResultsError, did_you_mean, listing
from headtohead.metrics import CATALOGUE, unknown
from headtohead.report.words.gate import gate_paragraph, junit_xml
from headtohead.results import Predictions, RunResult, load_result
from headtohead.runtime.files import write_text_atomic
from headtohead.stats.gate import Decision, gate_decisions, gate_exit_code

__all__ = ["gate", "GateOutcome"]


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
    alpha: float = 0.05,
    n_resamples: int = 2000,
    junit: str | Path | None = None,
    confidence: float | None = None,
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
        Allowed accuracy drop: ``"0.5pp"`` (percentage points) or a share (``0.005``).
    max_slowdown : str or float, optional
        Allowed slowdown: ``"5%"``, ``"1.05x"`` or a share (``0.05``).
    alpha : float, default 0.05
        Significance level: the intervals are two-sided at ``1 − alpha`` (each bound is a
        one-sided test at ``alpha / 2``).
    n_resamples : int, default 2000
        Bootstrap resamples.
    junit : str or Path, optional
        Also write the checks as JUnit XML there.
    confidence : float, optional
        Deprecated: the old name of the level, ``1 − alpha``.

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
    if confidence is not None:
        warnings.warn("gate(confidence=…) is deprecated; pass alpha = 1 − confidence", DeprecationWarning, stacklevel=2)
        alpha = 1.0 - confidence
    if metric not in CATALOGUE:
        raise ConfigError(f"--metric {metric}: {unknown(metric)}")
    accuracy_margin = None if max_accuracy_drop is None else parse_accuracy_margin(max_accuracy_drop)
    slowdown_margin = None if max_slowdown is None else parse_slowdown_margin(max_slowdown)
    if not 0.0 < alpha < 0.5:
        raise ConfigError(f"--alpha {alpha}: must lie between 0 and 0.5, e.g. 0.05")
    if n_resamples < 100:
        raise ConfigError(f"--n-resamples {n_resamples}: use at least 100 (2000 is the default)")
    path = Path(results)
    result = load_result(path)
    _check_name("--baseline", baseline, result, path)
    _check_name("--candidate", candidate, result, path)
    if baseline == candidate:
        raise ConfigError(f"--baseline and --candidate are both '{baseline}'; name two different models")
    predictions = _predictions(path, result, (baseline, candidate)) if accuracy_margin is not None else None
    decisions = gate_decisions(
        result,
        predictions,
        baseline=baseline,
        candidate=candidate,
        accuracy_margin=accuracy_margin,
        slowdown_margin=slowdown_margin,
        confidence=1.0 - alpha,
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
