"""``headtohead.run``: the whole comparison, from an experiment to saved results.

See ``docs/architecture.md``, the section of this title.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from headtohead.adapters import ModelAdapter
from headtohead.config import Experiment
from headtohead.config.models.keys import Priced
from headtohead.config.schema import ModelConfig
from headtohead.engines.endpoint import with_endpoints
from headtohead.engines.evaluate import ProgressCallback
from headtohead.engines.priced import priced_speed, prices, with_speed_entries
from headtohead.errors import AnswersMissing, H2HError
from headtohead.pipeline.cascade import (
    build_cascades,
    calibration_examples,
    cascades,
    evaluation_only,
    with_cascade_costs,
)
from headtohead.pipeline.decision import run_decision
from headtohead.pipeline.executors import ModelFailure, check_fairness, create_executor, failure_summary
from headtohead.pipeline.executors.jobs import Unit, run_units
from headtohead.pipeline.executors.speed_merge import merge_worker_speed
from headtohead.pipeline.missing import judged_predictions, missing_answers
from headtohead.pipeline.model_pass import ModelOutcome, check_before_run, computes_here, load_model, model_record
from headtohead.pipeline.outputs import RunState, claim_output
from headtohead.pipeline.resume import ResumeStore, unit_key
from headtohead.pipeline.sequential import SequentialRun, evaluate_until_decided
from headtohead.pipeline.setup import InMemory, RunSetup, prepare_run, resolve_experiment
from headtohead.pipeline.statistics import run_statistics
from headtohead.report.words.missing import missing_sentence, with_answered_rows
from headtohead.report.words.sequential import with_sequential
from headtohead.report.words.server import with_capacity_sentences
from headtohead.report.words.speed import with_speed_sentences
from headtohead.report.words.warnings import model_warnings
from headtohead.results import Predictions, RunResult, save_result
from headtohead.results.capacity import CapacitySummary
from headtohead.results.files import LOADGEN_DIR, RESULTS_FILE, RESUME_DIR
from headtohead.results.passes import pass_label
from headtohead.results.records import ModelRecord, PassRecord, StageTimings
from headtohead.results.speed import SpeedSummary
from headtohead.runtime.determinism import deterministic_algorithms
from headtohead.runtime.faults import RunInterrupted, Terminated, interrupt_exit_code, interrupt_name
from headtohead.runtime.heap import libraries_set_aside
from headtohead.runtime.offline import offline_mode
from headtohead.stats.stopped import decided_by_sequential_tests

__all__ = ["run", "Run"]

log = logging.getLogger("headtohead")


@dataclass(repr=False)
class Run:
    """What :func:`run` returns: the result record, the predictions, and where they were saved.

    ``resumed`` names the models (passes: ``llm@p2``) whose finished work was re-used (``resume=True``). In a
    notebook a ``Run`` shows its verdict and summary table (``_repr_html_``); its ``repr`` is a
    few lines: name, models, the verdict's headline.
    """

    result: RunResult
    predictions: Predictions
    out_dir: Path | None
    resumed: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        from headtohead.report.notebook import run_text

        return run_text(self.result, out_dir=self.out_dir)

    def _repr_html_(self) -> str:
        from headtohead.report.notebook import run_html

        return run_html(self.result, out_dir=self.out_dir)


def run(
    experiment: Experiment | str | Path | Mapping[str, Any],
    *,
    out_dir: str | Path | None = None,
    overrides: Sequence[str] = (),
    base_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
    quality: bool = True,
    speed: bool | None = None,
    resume: bool | str = False,
    deterministic: bool = False,
    offline: bool = False,
    force: bool = False,
    report: bool = False,
    overwrite: bool = False,
    in_memory: InMemory | None = None,
    response_cache: bool = True,
    allow_missing: bool = False,
) -> Run:
    """Compare the experiment's models on identical data.

    Parameters
    ----------
    experiment : Experiment, path or mapping
        The experiment: a validated record, a YAML file, or a dict of the same shape.
    out_dir : str or Path, optional
        Folder for ``results.json`` and ``predictions.npz``; nothing is written when ``None``.
    overrides : sequence of str
        ``key.path=value`` overrides (as ``--set`` on the command line).
    base_dir : str or Path, optional
        Folder the relative paths of a dict or record experiment are read from (default: the
        current directory; a YAML file's own folder for a file).
    progress : callable, optional
        ``progress(task, done, total)`` — a model's quality pass, or a speed stage.
    quality : bool
        Run the quality pass and the statistics (``h2h bench`` turns this off).
    speed : bool, optional
        Measure speed and memory; ``None`` follows ``speed.enabled`` of the experiment.
    resume : bool or "reuse"
        Re-use the quality passes of models that finished in an earlier, interrupted run
        into the same ``out_dir`` (matched by key, see :mod:`headtohead.pipeline.resume`);
        refused when the data changed since. ``"reuse"``: re-use what still matches and
        evaluate the rest, whatever changed (``h2h train``'s comparison). With
        ``eval.until_decided``, go on from the last chunk it finished (:mod:`headtohead.pipeline.sequential`).
    deterministic : bool
        Use torch's deterministic algorithms; ops that have none are named in the
        model's warnings (see :mod:`headtohead.runtime.determinism`).
    offline : bool
        No network attempt at all while the run lasts (see :mod:`headtohead.runtime.offline`).
    force : bool
        ``--force``: accept speed measured concurrently on a shared device (``execution.speed:
        workers``); such timings are marked ``concurrent`` (see :mod:`headtohead.pipeline.executors`).
    report : bool
        Also write ``report.html`` into ``out_dir`` (as ``h2h run`` does).
    overwrite : bool
        Replace the results of another experiment (or command) found in ``out_dir``; without
        it they are refused (see :mod:`headtohead.pipeline.outputs`, which also locks the
        folder against a second run while this one writes).
    in_memory : InMemory, optional
        Data and models given as Python objects instead of files (:func:`headtohead.compare`).
    response_cache : bool
        Models behind an endpoint (``kind: openai``) answer from the on-disk response cache
        where they can; ``False`` (``--no-cache``) asks every example again (the fresh answers
        replace the cached ones).
    allow_missing : bool
        A model that never answered some examples because of the transport (a server down, 5xx
        after every retry) leaves them missing, not wrong; no statistic involves it unless this is
        set, and the run ends in :class:`~headtohead.errors.AnswersMissing` (see
        :mod:`headtohead.pipeline.missing`). ``True``: judge every model on the examples every
        model answered, labelled so.

    Returns
    -------
    Run
        The :class:`~headtohead.results.RunResult`, the per-example predictions and the output folder.

    Raises
    ------
    H2HError
        Invalid experiment, data or model, an output folder that cannot be written, holds
        another experiment's results or is in use by another run, or ``resume`` on changed
        data. Models that finished before the error are already saved in ``out_dir``.
    AnswersMissing
        A model never answered some examples (transport failures) and ``allow_missing`` is off;
        raised after everything was saved (``.run`` holds the :class:`Run`).
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
    began = time.perf_counter()
    exp, base = resolve_experiment(experiment, overrides, base_dir)
    out = Path(out_dir) if out_dir is not None else None
    with contextlib.ExitStack() as stack:
        heap = stack.enter_context(libraries_set_aside())
        if out is not None:  # writable, not another run's now, not another experiment's: before any work
            stack.enter_context(
                claim_output(out, exp.name, command="h2h run" if quality else "h2h bench", overwrite=overwrite)
            )
        if offline:
            stack.enter_context(offline_mode())
        if deterministic:
            stack.enter_context(deterministic_algorithms())
        measure = exp.speed.enabled if speed is None else speed
        if measure:  # MLPerf LoadGen missing for speed.scenarios: [server]: say so before any model loads
            from headtohead.engines.server import server_wanted

            server_wanted(exp.speed)
        fairness = (
            check_fairness(
                exp.execution,
                measure,
                force,
                eval_device=exp.eval.device,
                n_tasks=len(exp.models) * exp.execution.shards,
            )
            if quality and exp.execution.mode != "local"
            else []
        )
        probes = measure and exp.speed.memory and not _speed_in_workers(exp)  # fresh processes for memory
        if probes:
            _prepare_fresh_processes(exp, in_memory)
        setup = prepare_run(
            exp, base, quality=quality, deterministic=deterministic, in_memory=in_memory, response_cache=response_cache
        )
        heap.mark()  # torch and the tokenizers are imported now, no model is loaded yet
        if probes:
            _prepare_fresh_processes(exp, in_memory)  # again: what setup imported
        clock = _StageClock(began)
        said: list[str] = []  # the checks' warnings, logged once before any model runs
        if quality and exp.eval.until_decided:  # its chunks ask every model: check them before the first
            said = check_before_run(exp.models)
        decided = (
            evaluate_until_decided(setup, out, progress=progress, resume=bool(resume))
            if quality and exp.eval.until_decided
            else None
        )
        outcome = _execute(
            decided.setup if decided else setup,
            out,
            progress=progress,
            measure_speed=measure,
            resume=resume,
            offline=offline,
            fairness_warnings=fairness,
            clock=clock,
            decided=decided,
            said=said,
            allow_missing=allow_missing,
        )
        if report and out is not None:
            with clock.stage("report"):
                from headtohead.report.write import write_reports

                write_reports(outcome.result, out, predictions=outcome.predictions)
        outcome.result = clock.stamp(outcome.result, reused=outcome.resumed)
        if out is not None:
            save_result(outcome.result, out / RESULTS_FILE)
    missing = outcome.result.missing
    if missing is not None and not missing.allowed:  # everything answered is saved; no verdict is owed
        raise AnswersMissing(missing_sentence(outcome.result) or "answers missing", outcome)
    return outcome


class _StageClock:
    """Wall time per stage of a run (``RunResult.timings``)."""

    def __init__(self, began: float) -> None:
        self.began, self.seconds = began, {"setup": time.perf_counter() - began}

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def stamp(self, result: RunResult, reused: Sequence[str] = ()) -> RunResult:
        """``result`` with its timings: the stages measured, the models' own load and pass times.

        The models in ``reused`` (``--resume``) were loaded and evaluated by the earlier run:
        their times are theirs, not this run's, so they are left out of the sums.
        """
        units: list[tuple[str, ModelRecord | PassRecord]] = [(m.name, m) for m in result.models if not m.passes]
        units += [(pass_label(m.name, p.key), p) for m in result.models for p in m.passes]  # a model's passes
        ran = [one for label, one in units if label not in set(reused)]
        timings = StageTimings(
            setup_s=self.seconds["setup"],
            load_s=sum(m.load_time_s for m in ran),
            evaluate_s=sum(m.eval_time_s or 0.0 for m in ran),
            speed_s=self.seconds.get("speed"),
            statistics_s=self.seconds.get("statistics"),
            report_s=self.seconds.get("report"),
            total_s=time.perf_counter() - self.began,
        )
        return result.model_copy(update={"timings": timings})


def _execute(
    setup: RunSetup,
    out: Path | None,
    *,
    progress: ProgressCallback | None,
    measure_speed: bool,
    resume: bool | str,
    offline: bool,
    fairness_warnings: list[str],
    clock: _StageClock,
    decided: SequentialRun | None = None,
    allow_missing: bool = False,
    said: Sequence[str] = (),
) -> Run:
    """Every model's pass (or its finished work), saved as it finishes; then statistics and speed.

    ``decided``: the models were already evaluated chunk by chunk (``--until-decided``); ``setup``
    holds the examples used. ``said``: warnings already logged (the checks before any model ran),
    not logged again when the model's record holds them."""
    exp = setup.experiment
    state = RunState(setup, out)
    store = (
        ResumeStore(out / RESUME_DIR, fingerprint=setup.fingerprint, source=setup.dataset.source)
        if out is not None and setup.quality
        else None
    )
    if resume is True and store is not None:
        store.check_data()  # finishing a run on other data would mix two datasets: refused
    facts = setup.key_facts() if store is not None else {}
    units = run_units(exp)  # a model measured several ways: one unit of work per pass, each saved and resumed
    keys = {u: unit_key(exp.model(u.model), u.key, facts, setup.base_dir) for u in units} if store is not None else {}
    speed_in_workers = measure_speed and _speed_in_workers(exp)
    # Models load in this process (local runs, h2h bench): create the device context before the first,
    # so no model's load time or first call carries it.
    warmup_s = _warm_up(setup.context.device) if exp.execution.mode == "local" or not setup.quality else None
    loaded: dict[str, tuple[ModelAdapter, float]] = {}  # held for the speed pass
    finished: list[ModelOutcome | ModelFailure] = []
    resumed: list[str] = []
    try:
        with contextlib.ExitStack() as stack:
            restored = (
                {u: _restore(store, keys[u], u, setup) for u in units}
                if resume and store is not None and decided is None
                else {}
            )
            todo = [u for u in units if restored.get(u) is None]
            if decided is None:  # the key, the server: before any model runs (--until-decided checked them)
                said = [*said, *check_before_run([exp.model(name) for name in dict.fromkeys(u.model for u in todo)])]
            fresh = (
                iter(decided.outcomes)
                if decided is not None
                else _passes(setup, todo, stack, progress=progress, speed_in_workers=speed_in_workers, offline=offline)
            )
            for unit in units:
                outcome = restored.get(unit) or next(fresh)
                finished.append(outcome)
                if isinstance(outcome, ModelFailure):  # failed in its worker; raised once the others are saved
                    continue
                if restored.get(unit) is not None:
                    resumed.append(unit.label)
                    state.stored.append(unit.label)
                    log.info("resume: model '%s' finished in an earlier run; its results are re-used", unit.label)
                else:
                    for warning in model_warnings(outcome.record.model_copy(update={"name": unit.label})):
                        if warning not in said:  # a pass's, named as the pass (llm@p2)
                            log.warning("%s", warning)
                    if store is not None and outcome.predictions is not None and not outcome.record.missing_examples:
                        store.save(keys[unit], outcome.record, outcome.predictions)
                        state.stored.append(unit.label)  # --resume re-uses it, whatever happens to results.json
                _keep_or_free(outcome, loaded, measure_speed)
                state.add(outcome)
        _raise_failures(finished)
        result = _statistics_stage(setup, state, out, clock, decided=decided, allow_missing=allow_missing)
        if measure_speed and (
            timed_models(exp) or any(m.answers is not None and m.answers.endpoint is not None for m in result.models)
        ):
            with clock.stage("speed"):
                summary = (
                    _speed(setup, finished, loaded, progress, speed_in_workers, fairness_warnings, warmup_s, out)
                    if timed_models(exp)
                    else None
                )
                summary = with_endpoints(
                    summary, result.models, exp.speed, batch_size=exp.eval.batch_size, seed=exp.seed
                )  # endpoints: timed by their own requests
                if summary is not None and "capacity" in exp.speed.scenarios:
                    summary = summary.model_copy(update={"capacity": _capacity(setup, loaded, progress)})
                result = result.model_copy(update={"speed": summary})
        result = _given_costs(result, exp)
        judged = evaluation_only(state.predictions, result.calibration_examples)  # no example a cascade chose on
        if setup.quality and result.stats is not None and judged is not None:
            with clock.stage("statistics"):
                result = result.model_copy(update={"decision": run_decision(exp, result, judged)})
        result = state.finish(result)
    except (KeyboardInterrupt, Terminated) as exc:
        raise RunInterrupted(f"{interrupt_name(exc)}: {state.kept()}", interrupt_exit_code(exc)) from None
    except H2HError as exc:
        if state.saved or state.stored:
            exc.args = (f"{exc.args[0] if exc.args else exc} ({state.kept()})",)
        raise
    except Exception:
        if state.saved or state.stored:
            log.warning("%s", state.kept())
        raise
    if store is not None:
        store.prune(keys.values())
    return Run(result=result, predictions=state.predictions, out_dir=out, resumed=resumed)


def _given_costs(result: RunResult, exp: Experiment) -> RunResult:
    """Costs nothing here measured: a price given (``price_per_1m``), a cascade's from its parts' costs."""
    given = prices({m.name: m.price_per_1m for m in exp.models if isinstance(m, Priced)})
    entries = [priced_speed(r, given[r.name]) for r in result.models if r.name in given]
    summary = with_speed_entries(result.speed, entries, exp.speed, batch_size=exp.eval.batch_size, seed=exp.seed)
    result, built = with_cascade_costs(result.model_copy(update={"speed": summary}))
    summary = with_speed_entries(result.speed, built, exp.speed, batch_size=exp.eval.batch_size, seed=exp.seed)
    return result.model_copy(update={"speed": summary})


def _passes(
    setup: RunSetup,
    units: list[Unit],
    stack: contextlib.ExitStack,
    *,
    progress: ProgressCallback | None,
    speed_in_workers: bool,
    offline: bool,
) -> Iterator[ModelOutcome | ModelFailure]:
    """The fresh outcomes of ``units``, in order: through the run's executor, or loaded only (``h2h bench``)."""
    if not setup.quality:
        return (_loaded_only(setup, unit) for unit in units)
    if not units:
        return iter(())
    exp = setup.experiment
    executor = stack.enter_context(create_executor(exp.execution, eval_device=exp.eval.device))
    return executor.evaluate(setup, units, progress=progress, measure_speed=speed_in_workers, offline=offline)


def _loaded_only(setup: RunSetup, unit: Unit) -> ModelOutcome:
    """A model (or one pass of it) loaded for the speed pass alone: its record without quality."""
    model_cfg = setup.experiment.model(unit.model)
    adapter, load_time = load_model(model_cfg, setup.context, unit.pass_index)
    record = model_record(model_cfg, adapter, load_time, setup, None)
    return ModelOutcome(record, None, adapter, pass_index=unit.pass_index)


def _keep_or_free(outcome: ModelOutcome, loaded: dict[str, tuple[ModelAdapter, float]], measure_speed: bool) -> None:
    """Keep the loaded model for the speed pass (a model measured several ways: its first pass), or free its
    weights before the next model loads."""
    adapter, outcome.adapter = outcome.adapter, None
    if measure_speed and adapter is not None and outcome.record.name not in loaded:
        loaded[outcome.record.name] = (adapter, outcome.record.load_time_s)
    elif adapter is not None and adapter.module is not None:
        del adapter
        gc.collect()  # torch modules hold reference cycles: free the weights before the next model loads


def _raise_failures(finished: Sequence[ModelOutcome | ModelFailure]) -> None:
    """After the other models were saved: the first failure's error, naming every failed model."""
    failed = [o for o in finished if isinstance(o, ModelFailure)]
    if failed:
        error = failed[0].error()
        error.args = (failure_summary(finished),)
        raise error


def _restore(store: ResumeStore | None, key: str, unit: Unit, setup: RunSetup) -> ModelOutcome | None:
    found = (
        store.load(key, unit.model, n_examples=len(setup.dataset), n_classes=setup.dataset.num_classes)
        if store is not None
        else None
    )
    return ModelOutcome(found[0], found[1], pass_index=unit.pass_index) if found is not None else None


def _speed(
    setup: RunSetup,
    finished: Sequence[ModelOutcome | ModelFailure],
    loaded: Mapping[str, tuple[ModelAdapter, float]],
    progress: ProgressCallback | None,
    speed_in_workers: bool,
    fairness_warnings: list[str],
    warmup_s: float | None,
    out: Path | None,
) -> SpeedSummary:
    """The speed the workers measured (``execution.speed: workers``), or all models timed together here."""
    outcomes = [o for o in finished if isinstance(o, ModelOutcome)]
    merged = merge_worker_speed(outcomes) if speed_in_workers else None
    if merged is not None:
        return merged.model_copy(update={"warnings": fairness_warnings + merged.warnings})
    quality_s = _quality_seconds(setup.experiment, [o.record for o in outcomes]) if setup.quality else None
    return _measure_speed(setup, loaded, progress, warmup_s, out, quality_s)


def _quality_seconds(exp: Experiment, models: Sequence[ModelRecord]) -> float | None:
    """The timed models' quality passes (each pass of a model measured several ways), in seconds, summed.

    What the speed rounds' budget scales with; ``None`` when one of them has no quality pass
    timed (``h2h bench``): the budget is then ``speed.max_seconds`` per scenario.
    """
    timed = {m.name for m in timed_models(exp)}
    times = [r.eval_time_s for r in models if r.name in timed]
    if not times or any(t is None for t in times):
        return None
    return float(sum(t for t in times if t is not None))


def _statistics_stage(
    setup: RunSetup,
    state: RunState,
    out: Path | None,
    clock: _StageClock,
    *,
    decided: SequentialRun | None,
    allow_missing: bool,
) -> RunResult:
    """The run's records with its cascades built from their parts and its statistics, on the examples judged."""
    exp = setup.experiment
    held_out: list[int] = []
    if setup.quality and cascades(exp):  # built from their parts' predictions; judged with all on the rest
        held_out = calibration_examples(exp, len(setup.dataset), setup.dataset.groups)
        for built in build_cascades(setup, state.predictions, state.result.models):
            state.add(built)
    result = state.result.model_copy(update={"calibration_examples": held_out})
    if setup.quality:
        missing = missing_answers(result.models, state.predictions, allowed=allow_missing)
        judged = evaluation_only(judged_predictions(result.models, state.predictions, missing), held_out, exp)
        with clock.stage("statistics"):
            stats = run_statistics(setup, judged, out, result.models) if judged is not None else None
            if decided is not None and judged is not None and stats is not None:  # an early stop: its tests decide
                kept = [r for r in decided.records if {r.model_a, r.model_b} <= set(judged.models)]
                stats = with_sequential(decided_by_sequential_tests(stats, kept), kept)
            stats = with_answered_rows(stats, missing) if stats is not None else None
            result = result.model_copy(update={"stats": stats, "missing": missing})
    return result


def _capacity(
    setup: RunSetup, loaded: Mapping[str, tuple[ModelAdapter, float]], progress: ProgressCallback | None
) -> CapacitySummary:
    """The capacity scenario: every endpoint model probed under load with the run's own examples (seeded order)."""
    from headtohead.engines.capacity import run_capacity

    exp = setup.experiment
    order = np.random.default_rng([exp.seed, 43]).permutation(len(setup.dataset))[:1024]
    targets = []
    for model_cfg in exp.models:
        if not model_cfg.serves_requests:
            continue  # a local model's capacity is the Server scenario's
        adapter, _ = loaded.get(model_cfg.name) or load_model(model_cfg, setup.context)
        target = adapter.load_target(setup.dataset, order)
        if target is not None:
            targets.append(target)
    return with_capacity_sentences(run_capacity(targets, exp.speed, seed=exp.seed, progress=progress))


def _speed_in_workers(exp: Experiment) -> bool:
    """Whether the workers time their own model (``execution.speed: workers``) rather than this process."""
    return exp.execution.mode != "local" and exp.execution.speed == "workers"


def _prepare_fresh_processes(exp: Experiment, in_memory: InMemory | None) -> None:
    """The fresh processes that will measure each model's memory start their imports now, beside setup and loading."""
    from headtohead.engines.isolated import prepare_fresh_processes

    objects = in_memory.objects if in_memory is not None else {}  # no recipe: measured in this process
    prepare_fresh_processes([m for m in timed_models(exp) if m.name not in objects], exp.eval.device)


def timed_models(exp: Experiment) -> list[ModelConfig]:
    """The models the speed pass times: every model that computes (stored predictions have no speed)."""
    return [m for m in exp.models if computes_here(m)]


def _warm_up(device: str) -> float | None:
    """Seconds spent creating ``device``'s context (CUDA, MPS) before any model loads; ``None`` on a CPU."""
    if device == "cpu":
        return None
    from headtohead.runtime.devices import get_backend

    began = time.perf_counter()
    get_backend().warm_up(device)
    return time.perf_counter() - began


def _measure_speed(
    setup: RunSetup,
    loaded: Mapping[str, tuple[ModelAdapter, float]],
    progress: ProgressCallback | None,
    warmup_s: float | None,
    out: Path | None,
    quality_s: float | None = None,
) -> SpeedSummary:
    """Time all models together; models re-used by ``resume`` (or evaluated elsewhere) are loaded here.

    Each model's memory and cold start are measured in a fresh process that loads it from its
    recipe (``speed.memory``).
    """
    from headtohead.engines.speed import ModelRecipe, measure_speed

    exp = setup.experiment
    if warmup_s is None:  # models evaluated in workers are loaded here: the context first
        warmup_s = _warm_up(setup.context.device)
    adapters, load_times = [], {}
    timed = timed_models(exp)
    for model_cfg in timed:
        adapter, load_time = loaded.get(model_cfg.name) or load_model(model_cfg, setup.context)
        adapters.append(adapter)
        load_times[model_cfg.name] = load_time
    # a model handed over in memory cannot be loaded again in a fresh process
    recipes = {m.name: ModelRecipe(m, setup.context) for m in timed if m.name not in setup.context.objects}
    return with_speed_sentences(
        measure_speed(
            adapters,
            setup.dataset,
            exp.speed,
            batch_size=exp.eval.batch_size,
            seed=exp.seed,
            load_times=load_times,
            recipes=recipes,
            warm=set(loaded) if setup.quality else (),  # kept from their quality pass, run here
            device_warmup_s=warmup_s,
            progress=progress,
            log_dir=out / LOADGEN_DIR if out is not None else None,
            quality_s=quality_s,
        )
    )
