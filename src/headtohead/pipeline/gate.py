"""``headtohead.gate`` (``h2h gate``): does a candidate model stay within a margin of a baseline?

See ``docs/cli.md``, "Margins".
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from headtohead.config.margins import parse_accuracy_margin, parse_alpha, parse_slowdown_margin
from headtohead.errors import ConfigError, ResultsError, did_you_mean, listing
from headtohead.metrics import CATALOGUE, unknown
from headtohead.pipeline.cascade import evaluation_only
from headtohead.report.words.gate import gate_paragraph, junit_xml
from headtohead.report.words.score_settings import setting_warnings, unchecked_note
from headtohead.results import Predictions, RunResult, load_result
from headtohead.results.files import results_file
from headtohead.results.score_settings import RunSettings, score_settings, setting_differences
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
    #: Across two results files: a warning per setting known to move scores in which the two runs differ.
    warnings: tuple[str, ...] = ()

    def __repr__(self) -> str:  # a notebook shows the decision and a row per check (report/notebook.py)
        from headtohead.report.notebook import gate_text

        return gate_text(
            self.decisions,
            baseline=self.baseline,
            candidate=self.candidate,
            paragraph=self.paragraph,
            exit_code=self.exit_code,
            warnings=self.warnings,
        )

    def _repr_html_(self) -> str:
        from headtohead.report.notebook import gate_html

        return gate_html(
            self.decisions,
            baseline=self.baseline,
            candidate=self.candidate,
            paragraph=self.paragraph,
            exit_code=self.exit_code,
            warnings=self.warnings,
        )


def _check_name(option: str, name: str, names: Sequence[str], where: str) -> None:
    if name not in names:
        raise ConfigError(
            f"{option} {name}: no model of that name in {where}{did_you_mean(name, names)} (models: {listing(names)})"
        )


@dataclass(frozen=True)
class _GateInput:
    """What the gate decides on: the run's record (``None`` for bare predictions), its predictions, its name."""

    result: RunResult | None
    predictions: Predictions | None
    where: str

    @property
    def names(self) -> list[str]:
        if self.result is not None:
            return [m.name for m in self.result.models]
        return list(self.predictions.models) if self.predictions is not None else []


def gate(
    results: str | Path | Any,
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
    labels: Sequence[Any] | None = None,
    groups: Sequence[Any] | None = None,
    candidate_results: str | Path | None = None,
    max_capacity_drop: str | float | None = None,
) -> GateOutcome:
    """Decide whether ``candidate`` is worse than ``baseline`` beyond the margins, with confidence.

    Parameters
    ----------
    results : str, Path, Run, Predictions or mapping
        What ``h2h gate`` reads, or the same in memory: a ``results.json`` written by ``h2h run``
        or its folder (``predictions.npz`` beside it for accuracy); what :func:`headtohead.run`
        or :func:`headtohead.compare` returned (a ``Run``: the same decision as ``h2h gate`` on
        its saved folder); a run's ``Predictions`` (:func:`headtohead.load_predictions`); or
        each model's predictions in memory, a mapping of name to labels or probabilities as
        :func:`headtohead.compare` takes them (an empty label is the model's failure, a wrong
        answer), with ``labels``. Bare predictions hold no speed: gate speed on a run.
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
    labels : sequence, optional
        With a mapping of predictions: the true label of each example (names or integers), in
        the order of the predictions.
    groups : sequence, optional
        With a mapping of predictions: each example's group (one user's, one document's
        examples belong together), as ``data.group_column``.
    max_capacity_drop : str or float, optional
        Allowed capacity drop: ``"5%"`` or a share (``0.05``): the candidate's goodput at the SLOs (scenario
        ``capacity``; else the Server scenario's ``max_qps``) may not be below the baseline's by more, with
        confidence.
    candidate_results : str or Path, optional
        A second ``results.json`` (or its folder) holding the candidate, ``results`` then holding the
        baseline (``h2h gate OLD NEW``): the two runs must have evaluated the same data, whose examples
        are paired; accuracy (or ``metric``) only, as the two runs' speeds were not measured side by
        side. The outcome's ``warnings`` name every setting known to move scores in which the two runs
        differ (:func:`headtohead.results.score_settings.setting_differences`).

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
    >>> gate({"old": ["a", "b", "b"], "new": ["a", "b", "a"]}, labels=["a", "b", "b"],
    ...      baseline="old", candidate="new", max_accuracy_drop=0.05).exit_code
    3
    """
    if max_accuracy_drop is None and max_slowdown is None and max_capacity_drop is None:
        raise ConfigError(
            "h2h gate: give --max-accuracy-drop (e.g. 0.5pp), --max-slowdown (e.g. 5%) and/or --max-capacity-drop "
            "(e.g. 5%)"
        )
    if confidence is not None:
        warnings.warn("gate(confidence=…) is deprecated; pass alpha = 1 − confidence", DeprecationWarning, stacklevel=2)
        alpha = 1.0 - confidence
    if metric not in CATALOGUE:
        raise ConfigError(f"--metric {metric}: {unknown(metric)}")
    accuracy_margin = None if max_accuracy_drop is None else parse_accuracy_margin(max_accuracy_drop)
    slowdown_margin = None if max_slowdown is None else parse_slowdown_margin(max_slowdown)
    capacity_margin = (
        None if max_capacity_drop is None else parse_slowdown_margin(max_capacity_drop, option="--max-capacity-drop")
    )
    alpha = parse_alpha(alpha)
    if n_resamples < 100:
        raise ConfigError(f"--n-resamples {n_resamples}: use at least 100 (2000 is the default)")
    warned: tuple[str, ...] = ()
    if candidate_results is not None:
        if capacity_margin is not None:
            raise ConfigError(
                "--max-capacity-drop: two runs' capacities were not searched side by side; gate capacity within one "
                "run (both models in one h2h run), or drop --max-capacity-drop"
            )
        if slowdown_margin is not None:
            raise ConfigError(
                "--max-slowdown: two runs' speeds were not measured side by side; gate speed within one run "
                "(both models in one h2h run), or drop --max-slowdown"
            )
        given, baseline, candidate, warned = _two_runs(results, candidate_results, baseline, candidate)
    else:
        given = _gate_input(results, labels, groups, accuracy=accuracy_margin is not None)
    _check_name("--baseline", baseline, given.names, given.where)
    _check_name("--candidate", candidate, given.names, given.where)
    if baseline == candidate:
        raise ConfigError(f"--baseline and --candidate are both '{baseline}'; name two different models")
    if given.result is None and capacity_margin is not None:
        raise ConfigError(
            f"max_capacity_drop: {given.where} hold no capacity; gate capacity on a run (what headtohead.run "
            f"returned, or its results.json)"
        )
    if given.result is None and slowdown_margin is not None:
        raise ConfigError(
            f"max_slowdown: {given.where} hold no speed; gate speed on a run (what headtohead.run returned, "
            f"or its results.json)"
        )
    predictions = _checked(given, (baseline, candidate)) if accuracy_margin is not None else None
    decisions = gate_decisions(
        given.result,
        predictions,
        baseline=baseline,
        candidate=candidate,
        accuracy_margin=accuracy_margin,
        slowdown_margin=slowdown_margin,
        confidence=1.0 - alpha,
        n_resamples=n_resamples,
        groups=predictions.groups if predictions is not None else None,
        metric=metric,
        capacity_margin=capacity_margin,
    )
    paragraph = gate_paragraph(decisions, baseline, candidate)
    if junit is not None:
        write_text_atomic(
            Path(junit), junit_xml(decisions, paragraph, baseline=baseline, candidate=candidate, warnings=warned)
        )
    return GateOutcome(baseline, candidate, decisions, gate_exit_code(decisions), paragraph, warned)


def _gate_input(
    results: Any, labels: Sequence[Any] | None, groups: Sequence[Any] | None, *, accuracy: bool
) -> _GateInput:
    """The run (or the predictions) ``results`` names, read the way ``h2h gate`` reads a saved run."""
    if isinstance(results, Mapping):
        return _GateInput(None, _in_memory(results, labels, groups), "the predictions given")
    if labels is not None or groups is not None:
        raise ConfigError(
            "gate: labels= and groups= go with predictions given as a mapping of model names to labels; a run "
            "(or its results.json) holds its own"
        )
    if isinstance(results, Predictions):
        return _GateInput(None, results, "the predictions given")
    if isinstance(getattr(results, "result", None), RunResult):  # a Run: what headtohead.run / compare returned
        where = f"the run '{results.result.name}'"
        held = results.result.calibration_examples
        predictions = None if results.predictions is None else _evaluation_rows(results.predictions, held, where)
        return _GateInput(results.result, predictions, where)
    if not isinstance(results, (str, Path)):
        raise ConfigError(
            f"gate: a {type(results).__name__} is not a run; give a results.json (or its folder), what "
            f"headtohead.run or headtohead.compare returned, a run's Predictions, or a mapping of model names to "
            f"predictions with labels="
        )
    path = results_file(results)
    result = load_result(path)
    predictions = _saved_predictions(path, result) if accuracy else None
    if predictions is not None:
        predictions = _evaluation_rows(predictions, result.calibration_examples, str(path))
    return _GateInput(result, predictions, str(path))


def _two_runs(
    results: Any, candidate_results: Any, baseline: str, candidate: str
) -> tuple[_GateInput, str, str, tuple[str, ...]]:
    """The baseline of one run and the candidate of another as one run's predictions, paired by example.

    Returns the input, the two models' names in it (told apart when they are alike: ``bert (baseline run)``),
    and the warnings of the settings known to move scores in which the two runs differ.
    """
    runs = []
    for option, given, name in (("--baseline", results, baseline), ("--candidate", candidate_results, candidate)):
        if not isinstance(given, (str, Path)):
            raise ConfigError(
                f"gate: across two runs, give each as a results.json (or its folder), not a {type(given).__name__}"
            )
        path = results_file(given)
        result = load_result(path)
        _check_name(option, name, [m.name for m in result.models], str(path))
        predictions = _checked(_GateInput(result, _saved_predictions(path, result), str(path)), (name,))
        runs.append((path, result, predictions))
    # neither run's examples a cascade chose its threshold on: each run's statistics left them out, so does the gate
    held = sorted(set(runs[0][1].calibration_examples) | set(runs[1][1].calibration_examples))
    where = f"{runs[0][0]} and {runs[1][0]}"
    runs = [(path, result, _evaluation_rows(predictions, held, where)) for path, result, predictions in runs]
    (path_a, run_a, pred_a), (path_b, run_b, pred_b) = runs
    if run_a.dataset.fingerprint != run_b.dataset.fingerprint or not np.array_equal(
        np.sort(pred_a.order), np.sort(pred_b.order)
    ):
        raise ResultsError(
            f"{path_a} and {path_b}: the runs evaluated different data (fingerprints "
            f"{run_a.dataset.fingerprint[:12]} and {run_b.dataset.fingerprint[:12]}, or other examples); the gate "
            f"pairs each example's answers, so both runs must evaluate the same examples"
        )
    names = (
        (baseline, candidate)
        if baseline != candidate
        else (f"{baseline} (baseline run)", f"{candidate} (candidate run)")
    )
    rows_a, rows_b = np.argsort(pred_a.order, kind="stable"), np.argsort(pred_b.order, kind="stable")
    paired = Predictions(
        order=pred_a.order[rows_a],
        y_true=pred_a.y_true[rows_a],
        label_names=pred_a.label_names,
        groups=None if pred_a.groups is None else pred_a.groups[rows_a],
        group_column=pred_a.group_column,
    )
    for name, (predictions, rows), model in zip(
        names, ((pred_a, rows_a), (pred_b, rows_b)), (baseline, candidate), strict=True
    ):
        one = predictions[model]  # its columns: the data's classes, then every class outside it in its run
        paired.add(name, one.pred[rows], None if one.proba is None else one.proba[rows], predictions.outside_labels)
    return _GateInput(None, paired, f"{path_a} and {path_b}"), *names, _setting_lines(runs, baseline, candidate)


def _setting_lines(
    runs: Sequence[tuple[Path, RunResult, Predictions]], baseline: str, candidate: str
) -> tuple[str, ...]:
    """The two runs' settings known to move scores, the baseline's model set against the candidate's."""
    labels = [path.parent.name for path, _, _ in runs]
    if len(set(labels)) < 2:
        labels = ["baseline run", "candidate run"]
    shown = baseline if baseline == candidate else f"{baseline} / {candidate}"
    read = []
    for label, (_, result, _), model in zip(labels, runs, (baseline, candidate), strict=True):
        settings = score_settings(result, label)
        read.append(RunSettings(label, settings.run, {shown: settings.models[model]}))
    differences = setting_differences(read)
    note = unchecked_note(differences)
    return (*setting_warnings(differences), *([note] if note is not None else []))


def _saved_predictions(path: Path, result: RunResult) -> Predictions:
    if not any(m.has_quality for m in result.models):
        raise _no_quality(str(path))
    return Predictions.load(path.parent / result.predictions_file)


def _evaluation_rows(predictions: Predictions, held_out: Sequence[int], where: str) -> Predictions:
    """The examples a run's statistics read: none a cascade chose its threshold on (``held_out``), as in the run."""
    judged = evaluation_only(predictions, held_out)
    if judged is None:
        raise ResultsError(f"{where}: every example calibrated a cascade, none is left to gate on; lower calibration")
    return judged


def _no_quality(where: str) -> ResultsError:
    return ResultsError(
        f"{where}: holds no quality results (written by h2h bench?); gate accuracy on the "
        f"results of h2h run, or drop --max-accuracy-drop"
    )


def _checked(given: _GateInput, names: Sequence[str]) -> Predictions:
    """The predictions of both models (one line naming what is missing otherwise)."""
    result = given.result
    for name in names:
        passes = result.model(name).passes if result is not None else []
        if passes and passes[0].factor != "repeat":  # a model run several times is gated over every run
            raise ResultsError(
                f"{given.where}: '{name}' was measured {len(passes)} ways (its {passes[0].factor} passes); the gate "
                f"decides between two models measured once — compare it with h2h run, whose verdict pools its passes"
            )
    if given.result is not None and any(not given.result.model(n).has_quality for n in names):
        raise _no_quality(given.where)
    predictions = given.predictions
    for name in names:
        if predictions is None or name not in predictions.models:
            raise ResultsError(
                f"{given.where}: no predictions of '{name}'; they do not belong to this run (re-run h2h run)"
            )
    assert predictions is not None
    return predictions


def _in_memory(models: Mapping[str, Any], labels: Sequence[Any] | None, groups: Sequence[Any] | None) -> Predictions:
    """Each model's predictions in memory, read as a prediction file is (an empty label a failure)."""
    from headtohead.adapters.prediction_files import read_prediction_frame
    from headtohead.data.base import Dataset, encode_labels
    from headtohead.pipeline.compare import prediction_table

    if labels is None:
        raise ConfigError(
            "gate: predictions given as a mapping need labels=, the true label of each example in their order"
        )
    y, names = encode_labels(list(labels), source="gate(labels=…)")
    n = len(y)
    dataset = Dataset("gate(labels=…)", "features", np.zeros((n, 1)), y, names)
    unit = None if groups is None else np.asarray([str(g) for g in groups], dtype=object)
    if unit is not None and len(unit) != n:
        raise ConfigError(f"gate: {len(unit)} groups for {n} labels; give one group per example")
    predictions = Predictions(order=np.arange(n), y_true=y, label_names=names, groups=unit)
    for name, model in models.items():
        table = prediction_table(str(name), model, dataset)
        if len(table) != n:
            raise ConfigError(f"gate: model '{name}' has {len(table)} predictions for {n} labels; give one per example")
        read = read_prediction_frame(
            table, dataset, where=f"gate: model '{name}'", source="in memory", note_position=False, empty="failed"
        )
        predictions.add(str(name), read.pred, read.proba)
    return predictions
