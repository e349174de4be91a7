"""What runs a task: one model's pass over one shard, in this process or in a worker.

:func:`evaluate_task` is the one body every executor runs — in this process (``local``), in
a spawned process (``processes``) or as a Ray task (``ray``) — so all three run exactly the
same code on exactly the same batches. :func:`run_task` wraps it for a worker process: it
re-creates the run from the plain job (data read once per process) and never raises for a
failing model: the error comes back as a :class:`~headtohead.pipeline.executors.jobs.TaskFailure`,
so one bad model does not take the other models' results down with it.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import socket
import time
import traceback
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from headtohead.pipeline.executors.jobs import EvalJob, Task, TaskFailure, TaskResult, WorkerSettings

__all__ = ["run_task", "evaluate_task", "setup_process", "worker_name", "THREAD_ENV_VARS"]

#: Thread-pool sizes read by OpenMP/MKL/OpenBLAS when torch loads; set before it is imported.
THREAD_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

# The environment of this process, per (folder, torch threads): capturing it asks CUDA, NVML
# and git, which takes about a second.
_ENVIRONMENTS: dict[tuple[str, int | None], Any] = {}

# One dataset per worker process, keyed by its data config and seed: a worker that runs
# several tasks (models, shards) reads the files once.
_DATASETS: dict[str, Any] = {}


def worker_name() -> str:
    """``host:pid`` of this process, recorded with every result it produces."""
    return f"{socket.gethostname()}:{os.getpid()}"


def setup_process(settings: WorkerSettings) -> None:
    """Pin this (fresh) worker process to its cores and thread count.

    Called first thing in a spawned worker, before torch is imported, so OpenMP's pool is
    created at the right size. ``sched_setaffinity`` exists on Linux only; elsewhere the
    thread count alone limits the worker.
    """
    if settings.threads is not None:
        for name in THREAD_ENV_VARS:
            os.environ[name] = str(settings.threads)
    if settings.cpu_set is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, settings.cpu_set)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the worker is already one of several
    if settings.threads is not None:
        import torch

        torch.set_num_threads(settings.threads)


def run_task(job: EvalJob, task: Task, settings: WorkerSettings, progress: Any = None) -> TaskResult | TaskFailure:
    """Evaluate ``task.model`` on ``task.shard`` of the job's batch plan in this worker process.

    Parameters
    ----------
    job : EvalJob
        The run (experiment dict, base folder, plan order).
    task : Task
        The model and shard.
    settings : WorkerSettings
        The device to load the model on (threads and cores are set by :func:`setup_process`).
    progress : callable, optional
        ``progress(label, batches_done, batches_total)``.

    Returns
    -------
    TaskResult or TaskFailure
        Predictions and provenance, or the error the task raised (never raises itself).
    """
    try:
        setup = _task_setup(job, task, settings)
        with _job_context(job):
            result = evaluate_task(setup, task, progress, measure_speed=task.measure_speed)
        result = replace(result, adapter=None, environment=_environment(job.base_dir))
        _release_memory(setup.context.device)
        return result
    except (Exception, SystemExit) as exc:  # reported per task; the executor keeps the other models' results
        from headtohead.errors import H2HError

        message = str(exc).splitlines()[0] if str(exc) else ""
        if not isinstance(exc, H2HError):
            frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
            where = f" (at {Path(frame.filename).name}:{frame.lineno})" if frame else ""
            message = f"{message}{where}"
        return TaskFailure(task=task, error_type=type(exc).__name__, message=message, worker=worker_name())


def evaluate_task(setup: Any, task: Task, progress: Any = None, *, measure_speed: bool = False) -> TaskResult:
    """Run one model's pass over ``setup.plan`` (the task's shard) with the run's own model-pass code.

    Parameters
    ----------
    setup : RunSetup
        The run as this process sees it, its plan cut to the task's shard.
    task : Task
    progress : callable, optional
        ``progress(label, batches_done, batches_total)``.
    measure_speed : bool
        Also time the model alone here (``execution.speed: workers``).

    Returns
    -------
    TaskResult
        With the loaded adapter attached (``adapter``) and no environment; a worker drops the
        first and adds the second before sending it back.
    """
    from headtohead.engines.answers import answers_record
    from headtohead.pipeline.executors.concurrency import shard_config
    from headtohead.pipeline.model_pass import computes_here, run_model_pass

    model_cfg = shard_config(setup.experiment.model(task.model), task.request_share)
    report = None if progress is None else _relabelled(progress, task.label)
    started_at = time.time()  # wall clock, comparable between the workers of one machine (or synced nodes)
    # seeds, loads, evaluates, as the runner does (one pass of a model measured several ways: that pass)
    done = run_model_pass(setup, model_cfg, progress=report, pass_index=task.pass_index)
    timed = measure_speed and computes_here(model_cfg)  # stored predictions have no speed
    speed = _speed(done.adapter, setup.dataset, setup.experiment, done.load_time_s) if timed else None
    evaluation = done.evaluation
    assert evaluation is not None, "a worker's task is a quality pass"
    return TaskResult(
        task=task,
        order=setup.plan.order,
        pred=evaluation.pred,
        proba=evaluation.proba,
        alignment=evaluation.alignment,
        n_batches=evaluation.n_batches,
        seconds=float(evaluation.seconds),
        started_at=started_at + done.load_time_s,
        load_time_s=done.load_time_s,
        num_parameters=done.adapter.num_parameters(),
        parameter_bytes=done.adapter.parameter_bytes(),
        device=setup.context.device,
        worker=worker_name(),
        environment=None,
        warnings=tuple(done.adapter.warnings),
        backoff=evaluation.backoff,
        speed=speed,
        adapter=done.adapter,
        answers=answers_record(done.adapter.answer_record()),
    )


def _relabelled(progress: Any, label: str) -> Any:
    """``progress`` reporting under the task's label; an endpoint's rates passed on where it takes them."""
    from headtohead.engines.evaluate import accepts_rates

    if accepts_rates(progress):
        return lambda _name, done, total, rates=None: progress(label, done, total, rates=rates)
    return lambda _name, done, total: progress(label, done, total)


def _task_setup(job: EvalJob, task: Task, settings: WorkerSettings) -> Any:
    """The run's setup re-created in this worker from the job: its data, its shard of the plan, its device."""
    from headtohead.config.schema import Experiment
    from headtohead.pipeline.executors.sharding import shard_plan
    from headtohead.pipeline.setup import RunSetup, load_context
    from headtohead.runtime.devices import resolve_device

    experiment = Experiment.model_validate(job.experiment)
    splits = _splits(job, experiment)
    dataset = splits.eval
    device = resolve_device(settings.device)
    if device.startswith("cuda"):
        import torch

        torch.cuda.set_device(device)  # kernels and allocations of this worker default to its GPU
    context = load_context(
        dataset, experiment.data, device=device, seed=experiment.seed, base_dir=Path(job.base_dir), train=splits.train
    )
    return RunSetup(
        experiment,
        Path(job.base_dir),
        experiment.data,
        splits,
        shard_plan(job.plan, task.shard),
        context,
        quality=True,
        deterministic=job.deterministic,
    )


@contextlib.contextmanager
def _job_context(job: EvalJob) -> Iterator[None]:
    """``--offline`` and ``--deterministic`` in the worker, as the main process has them."""
    with contextlib.ExitStack() as stack:
        if job.offline:
            from headtohead.runtime.offline import offline_mode

            stack.enter_context(offline_mode())
        if job.deterministic:
            from headtohead.runtime.determinism import deterministic_algorithms

            stack.enter_context(deterministic_algorithms())
        yield


def _release_memory(device: str) -> None:
    """Free the finished model before the worker loads the next one (on a GPU, hand its cache back too)."""
    gc.collect()
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def _speed(adapter: Any, dataset: Any, experiment: Any, load_time: float) -> dict[str, Any]:
    """This worker's speed measurement of its one model, as a JSON-able dict."""
    from headtohead.engines.speed import measure_speed

    summary = measure_speed(
        [adapter],
        dataset,
        experiment.speed,
        batch_size=experiment.eval.batch_size,
        seed=experiment.seed,
        load_times={adapter.name: load_time},
    )
    return summary.model_dump(mode="json")


def _environment(base_dir: str) -> Any:
    """This worker's environment fingerprint (cached; the thread count is part of the key)."""
    import torch

    from headtohead.engines.environment import capture_environment

    key = (base_dir, torch.get_num_threads())
    if key not in _ENVIRONMENTS:
        _ENVIRONMENTS[key] = capture_environment(Path(base_dir))
    return _ENVIRONMENTS[key]


def _dataset_key(job: EvalJob) -> str:
    return json.dumps([job.experiment["data"], job.experiment["seed"]], sort_keys=True)


def _splits(job: EvalJob, experiment: Any) -> Any:
    """The run's data, read from its path in this worker (once per process), checked against the main's."""
    from headtohead.errors import DataError
    from headtohead.pipeline.logged_data import run_splits

    key = _dataset_key(job)
    if key not in _DATASETS:
        splits = run_splits(experiment, experiment.data, Path(job.base_dir))
        _DATASETS.clear()  # one run at a time per worker: do not hold on to an earlier run's data
        _DATASETS[key] = (splits, splits.eval.fingerprint())
    splits, fingerprint = _DATASETS[key]
    if job.dataset_fingerprint is not None and fingerprint != job.dataset_fingerprint:
        raise DataError(
            f"{experiment.data.path}: worker {worker_name()} read different data than the main process "
            f"(fingerprint {fingerprint[:12]} vs {job.dataset_fingerprint[:12]}); give every node the "
            f"same files at the same path (a shared filesystem or an identical copy)"
        )
    if len(job.order) and int(job.order.max()) >= len(splits.eval):
        raise DataError(
            f"{experiment.data.path}: worker {worker_name()} read {len(splits.eval)} examples but the "
            f"run plans {len(job.order)}; give every node the same files at the same path"
        )
    return splits
