"""``headtohead.run``: the whole comparison, from an experiment to saved results.

The data flows one way: config → dataset → model adapters → engines → results (→
statistics → reports). This module only sequences those stages; each lives in its own
package.

Surviving faults (issue 8): the output folder is checked before any work starts; each
model's quality pass is one call, :func:`~headtohead.per_model.evaluate_one`, whose record and predictions are
kept in ``<out>/.h2h-resume`` (:mod:`headtohead.resume`) and written into
``results.json``/``predictions.npz`` atomically as soon as the model finishes. An error,
an interrupt (SIGINT/SIGTERM, see :mod:`headtohead.runtime.faults`) or running out of memory
keeps what finished and says so; ``run(..., resume=True)`` skips the finished models
and gives the same final results as an uninterrupted run.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from headtohead.adapters import ModelAdapter
from headtohead.config import Experiment
from headtohead.config.schema import ModelConfig
from headtohead.runtime.determinism import deterministic_algorithms
from headtohead.engines.evaluate import ProgressCallback
from headtohead.errors import H2HError, ResultsError
from headtohead.runtime.faults import RunInterrupted, Terminated, interrupt_exit_code, interrupt_name
from headtohead.runtime.offline import offline_mode
from headtohead.per_model import (
    ModelOutcome,
    RunSetup,
    absolute_data_paths,
    dataset_record,
    evaluate_one,
    load_model,
    prepare_run,
    resolve_experiment,
)
from headtohead.resume import RESUME_DIR, ResumeStore, model_key
from headtohead.results import Predictions, RunResult, save_result
from headtohead.results.comparison import StatsSummary
from headtohead.results.environment import capture_environment
from headtohead.results.speed import SpeedSummary

__all__ = ["run", "Run", "RunSetup", "ModelOutcome", "prepare_run", "evaluate_one", "resolve_experiment",
           "check_writable", "RESULTS_FILE", "PREDICTIONS_FILE"]

_absolute_data_paths = absolute_data_paths  # the name headtohead.training_run imports

log = logging.getLogger("headtohead")

RESULTS_FILE = "results.json"
PREDICTIONS_FILE = "predictions.npz"


@dataclass
class Run:
    """What :func:`run` returns: the result record, the predictions, and where they were saved.

    ``resumed`` names the models whose finished work was re-used (``resume=True``).
    """

    result: RunResult
    predictions: Predictions
    out_dir: Path | None
    resumed: list[str] = field(default_factory=list)


def run(experiment: Experiment | str | Path | Mapping[str, Any], *, out_dir: str | Path | None = None,
        overrides: Sequence[str] = (), progress: ProgressCallback | None = None, quality: bool = True,
        speed: bool | None = None, resume: bool = False, deterministic: bool = False, offline: bool = False,
        force: bool = False) -> Run:
    """Compare the experiment's models on identical data.

    Parameters
    ----------
    experiment : Experiment, path or mapping
        The experiment: a validated record, a YAML file, or a dict of the same shape.
    out_dir : str or Path, optional
        Folder for ``results.json`` and ``predictions.npz``; nothing is written when ``None``.
    overrides : sequence of str
        ``key.path=value`` overrides (as ``--set`` on the command line).
    progress : callable, optional
        ``progress(task, done, total)`` — a model's quality pass, or a speed stage.
    quality : bool
        Run the quality pass and the statistics (``h2h bench`` turns this off).
    speed : bool, optional
        Measure speed and memory; ``None`` follows ``speed.enabled`` of the experiment.
    resume : bool
        Re-use the quality passes of models that finished in an earlier, interrupted run
        into the same ``out_dir`` (matched by key, see :mod:`headtohead.resume`).
    deterministic : bool
        Use torch's deterministic algorithms; ops that have none are named in the
        model's warnings (see :mod:`headtohead.runtime.determinism`).
    offline : bool
        No network attempt at all while the run lasts (see :mod:`headtohead.runtime.offline`).
    force : bool
        ``--force``: accept speed measured concurrently on a shared device (``execution.speed:
        workers``); such timings are marked ``concurrent`` (see :mod:`headtohead.execution`).

    Returns
    -------
    Run
        The :class:`~headtohead.results.RunResult`, the per-example predictions and the output folder.

    Raises
    ------
    H2HError
        Invalid experiment, data or model, or an output folder that cannot be written.
        Models that finished before the error are already saved in ``out_dir``.
    RunInterrupted
        SIGINT/SIGTERM arrived; the message says what was kept.

    Examples
    --------
    >>> import headtohead
    >>> outcome = headtohead.run({                                      # doctest: +SKIP
    ...     "data": {"path": "sklearn:iris"},
    ...     "models": [{"name": "a", "kind": "sklearn", "source": "a.skops"},
    ...                {"name": "b", "kind": "sklearn", "source": "b.skops"}]})
    >>> outcome.result.model("a").quality.accuracy                     # doctest: +SKIP
    """
    exp, base_dir = resolve_experiment(experiment, overrides)
    out = Path(out_dir) if out_dir is not None else None
    if out is not None:
        check_writable(out)
    with contextlib.ExitStack() as stack:
        if offline:
            stack.enter_context(offline_mode())
        if deterministic:
            stack.enter_context(deterministic_algorithms())
        measure = exp.speed.enabled if speed is None else speed
        parallel = Parallel.plan(exp, measure_speed=measure, force=force, offline=offline) if quality else None
        setup = prepare_run(exp, base_dir, quality=quality, deterministic=deterministic)
        return _execute(setup, out, progress=progress, measure_speed=measure, resume=resume, parallel=parallel)


def check_writable(out: Path) -> None:
    """Create ``out`` if needed and check a file can be written there, before any work starts.

    Raises
    ------
    ResultsError
        ``out`` is a file, or cannot be created or written (permissions, read-only disk).
    """
    if out.exists() and not out.is_dir():
        raise ResultsError(f"--out {out}: is a file, not a folder; choose a folder for the results")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out, prefix=".h2h-write-check-"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ResultsError(f"--out {out}: cannot write results there ({reason}); choose another folder with "
                           f"--out, or fix its permissions") from exc


class _Progress:
    """The run's state as models finish: records, predictions, what is saved; the messages about it."""

    def __init__(self, setup: RunSetup, out: Path | None) -> None:
        dataset, plan = setup.dataset, setup.plan
        self.setup, self.out = setup, out
        self.predictions = Predictions(order=plan.order, y_true=dataset.labels[plan.order],
                                       label_names=dataset.label_names)
        self.result = RunResult(
            headtohead_version=setup.version, name=setup.experiment.name,
            created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            experiment=setup.experiment.model_dump(mode="json"), environment=capture_environment(setup.base_dir),
            dataset=dataset_record(setup.splits, setup.fingerprint), models=[])
        self.saved: list[str] = []

    def add(self, outcome: ModelOutcome) -> None:
        """Add a finished model and save the results so far."""
        record = outcome.record
        if outcome.predictions is not None:
            self.predictions.add(record.name, outcome.predictions.pred, outcome.predictions.proba)
        self.result = self.result.model_copy(update={"models": [*self.result.models, record]})
        if self.out is not None:
            _save(self.out, self.result, self.predictions if self.setup.quality else None)
            self.saved.append(record.name)

    def kept(self) -> str:
        """Where the finished models are, and how to finish the rest."""
        if self.out is None:
            return "nothing was saved (no output folder was given)"
        if not self.saved:
            return "no model had finished, so nothing was written"
        if not self.setup.quality:  # h2h bench: speed is measured on all models at once, nothing to resume
            return f"records of {', '.join(self.saved)} are in {self.out}; measuring speed needs every model, run again"
        todo = [m.name for m in self.setup.experiment.models if m.name not in self.saved]
        rest = f"; run again with --resume to evaluate {', '.join(todo)}" if todo else \
            "; run again with --resume to finish (finished models are not evaluated again)"
        return f"results of {', '.join(self.saved)} are kept in {self.out}{rest}"


def _execute(setup: RunSetup, out: Path | None, *, progress: ProgressCallback | None, measure_speed: bool,
             resume: bool, parallel: Parallel | None = None) -> Run:
    """Evaluate every model (or re-use its finished work), then statistics and speed; save as it goes."""
    exp = setup.experiment
    state = _Progress(setup, out)
    store = ResumeStore(out / RESUME_DIR) if out is not None and setup.quality else None
    facts = setup.key_facts() if store is not None else {}
    keys = {m.name: model_key(m, facts, setup.base_dir) for m in exp.models} if store is not None else {}
    loaded: dict[str, tuple[ModelAdapter, float]] = {}  # held for the speed pass
    resumed: list[str] = []
    try:
        restored = {m.name: _restore(store, keys, m, setup) for m in exp.models} if resume and store is not None \
            else {}
        if parallel is not None:  # every model not restored, evaluated in workers at once
            parallel.evaluate(setup, [m.name for m in exp.models if restored.get(m.name) is None], progress)
        for model_cfg in exp.models:
            outcome = restored.get(model_cfg.name)
            if outcome is not None:
                resumed.append(model_cfg.name)
                log.info("resume: model '%s' finished in an earlier run; its results are re-used", model_cfg.name)
            elif parallel is not None:
                outcome = parallel.outcome(setup, model_cfg)
                if outcome is None:  # this model failed in its worker; raised once the others are saved
                    continue
                for warning in outcome.record.warnings:
                    log.warning("%s", warning)
                if store is not None and outcome.predictions is not None:
                    store.save(keys[model_cfg.name], outcome.record, outcome.predictions)
            else:
                outcome = evaluate_one(setup, model_cfg, progress=progress)
                for warning in outcome.record.warnings:
                    log.warning("%s", warning)
                if store is not None and outcome.predictions is not None:
                    store.save(keys[model_cfg.name], outcome.record, outcome.predictions)
            adapter, outcome.adapter = outcome.adapter, None
            if measure_speed and adapter is not None:
                loaded[model_cfg.name] = (adapter, outcome.record.load_time_s)
            elif adapter is not None and adapter.module is not None:
                del adapter
                gc.collect()  # torch modules hold reference cycles: free the weights before the next model loads
            state.add(outcome)
        if parallel is not None:
            parallel.raise_failures()
        result = state.result
        if setup.quality:
            result = result.model_copy(update={"stats": _analyse(exp, state.predictions)})
        if measure_speed:
            worker_speed = parallel.speed() if parallel is not None else None
            result = result.model_copy(update={"speed": worker_speed or _measure_speed(setup, loaded, progress)})
        if out is not None:
            save_result(result, out / RESULTS_FILE)
    except (KeyboardInterrupt, Terminated) as exc:
        raise RunInterrupted(f"{interrupt_name(exc)}: {state.kept()}", interrupt_exit_code(exc)) from None
    except H2HError as exc:
        if state.saved:
            exc.args = (f"{exc.args[0] if exc.args else exc} ({state.kept()})",)
        raise
    except Exception:
        if state.saved:
            log.warning("%s", state.kept())
        raise
    if store is not None:
        store.prune(keys.values())
    return Run(result=result, predictions=state.predictions, out_dir=out, resumed=resumed)


class Parallel:
    """The quality passes of ``execution.mode: processes | ray``, with the fairness guard (docs/distributed.md)."""

    def __init__(self, exp: Experiment, *, speed_in_workers: bool, offline: bool, warnings: list[str]) -> None:
        self.exp, self.speed_in_workers, self.offline, self.warnings = exp, speed_in_workers, offline, warnings
        self.outcomes: dict[str, Any] = {}

    @classmethod
    def plan(cls, exp: Experiment, *, measure_speed: bool, force: bool, offline: bool) -> Parallel | None:
        """``None`` for local runs; refuses (ConfigError) timing models concurrently on one device unless forced."""
        from headtohead.execution import check_fairness

        execution = exp.execution
        if execution.mode == "local":
            return None
        warnings = check_fairness(execution, measure_speed, force, eval_device=exp.eval.device,
                                  n_tasks=len(exp.models) * execution.shards)
        return cls(exp, speed_in_workers=measure_speed and execution.speed == "workers", offline=offline,
                   warnings=warnings)

    def evaluate(self, setup: RunSetup, names: list[str], progress: ProgressCallback | None) -> None:
        from headtohead.execution import EvalJob, create_executor

        if not names:
            return
        job = EvalJob.from_setup(setup, measure_speed=self.speed_in_workers, offline=self.offline)
        with create_executor(self.exp.execution, eval_device=self.exp.eval.device) as executor:
            self.outcomes = {o.name: o for o in executor.evaluate(job, names, progress=progress)}

    def outcome(self, setup: RunSetup, model_cfg: ModelConfig) -> ModelOutcome | None:
        """The runner's outcome of a model evaluated in workers; ``None`` if it failed."""
        from headtohead.per_model import model_record
        from headtohead.results import ModelPredictions
        from headtohead.results.records import WorkerRecord

        done = self.outcomes[model_cfg.name]
        if not done.ok:
            return None
        record = model_record(model_cfg, done.model, done.load_time_s, setup, done.evaluation)
        record = record.model_copy(update={
            "execution_mode": self.exp.execution.mode, "speed_concurrent": done.concurrent_speed,
            "workers": [WorkerRecord(**w.as_record()) for w in done.workers]})
        return ModelOutcome(record, ModelPredictions(done.evaluation.pred, done.evaluation.proba))

    def raise_failures(self) -> None:
        """After the other models were saved: the first failure's error, naming every failed model."""
        from headtohead.execution import failure_summary

        failed = [o for o in self.outcomes.values() if not o.ok]
        if failed:
            error = failed[0].error()
            error.args = (failure_summary(list(self.outcomes.values())),)
            raise error

    def speed(self) -> SpeedSummary | None:
        """The speed each worker measured, merged (``execution.speed: workers``); else ``None``."""
        from headtohead.execution import merge_worker_speed

        if not self.speed_in_workers:
            return None
        merged = merge_worker_speed(list(self.outcomes.values()))
        return merged.model_copy(update={"warnings": self.warnings + merged.warnings}) if merged else None


def _restore(store: ResumeStore, keys: Mapping[str, str], model_cfg: ModelConfig, setup: RunSetup
             ) -> ModelOutcome | None:
    found = store.load(keys[model_cfg.name], model_cfg.name, n_examples=len(setup.dataset),
                       n_classes=setup.dataset.num_classes)
    return ModelOutcome(found[0], found[1]) if found is not None else None


def _analyse(exp: Experiment, predictions: Predictions) -> StatsSummary:
    from headtohead.stats import analyse

    cfg = exp.stats
    return analyse(predictions, alpha=cfg.alpha, n_resamples=cfg.n_resamples, ci_method=cfg.ci_method,
                   ece_bins=cfg.ece_bins, seed=exp.seed)


def _measure_speed(setup: RunSetup, loaded: Mapping[str, tuple[ModelAdapter, float]],
                   progress: ProgressCallback | None) -> SpeedSummary:
    """Time all models together; models re-used by ``resume`` (or evaluated elsewhere) are loaded here."""
    from headtohead.engines.speed import measure_speed

    exp = setup.experiment
    adapters, load_times = [], {}
    for model_cfg in exp.models:
        adapter, load_time = loaded.get(model_cfg.name) or load_model(model_cfg, setup.context)
        adapters.append(adapter)
        load_times[model_cfg.name] = load_time
    return measure_speed(adapters, setup.dataset, exp.speed, batch_size=exp.eval.batch_size, seed=exp.seed,
                         load_times=load_times, progress=progress)


def _save(out: Path, result: RunResult, predictions: Predictions | None) -> None:
    if predictions is not None:
        predictions.save(out / PREDICTIONS_FILE)
    save_result(result, out / RESULTS_FILE)


