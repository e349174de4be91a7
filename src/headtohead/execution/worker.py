"""What runs inside a worker: set the process up, re-create the data and the model, evaluate one shard.

:func:`run_task` is the one entry point every executor calls — in-process (``local``), in a
spawned process (``processes``) or as a Ray task (``ray``) — so all three run exactly the
same code on exactly the same batches. It never raises for a failing model: the error comes
back as a :class:`~headtohead.execution.jobs.TaskFailure`, so one bad model does not take
the other models' results down with it.
"""

from __future__ import annotations

import gc
import json
import os
import socket
import time
import traceback
from pathlib import Path
from typing import Any

from headtohead.execution.jobs import EvalJob, Task, TaskFailure, TaskResult, WorkerSettings

__all__ = ["run_task", "setup_process", "worker_name", "remember_dataset", "THREAD_ENV_VARS"]

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


def remember_dataset(job: EvalJob, splits: Any) -> None:
    """Hand this process's already loaded data (:class:`DataSplits`) to :func:`run_task` (the local executor does)."""
    _DATASETS.clear()
    _DATASETS[_dataset_key(job)] = (splits, splits.eval.fingerprint())  # still checked against the job's


def run_task(job: EvalJob, task: Task, settings: WorkerSettings, progress: Any = None) -> TaskResult | TaskFailure:
    """Evaluate ``task.model`` on ``task.shard`` of the job's batch plan, in this process.

    Parameters
    ----------
    job : EvalJob
        The run (experiment dict, base folder, plan order).
    task : Task
        The model and shard.
    settings : WorkerSettings
        The device to load the model on (threads and cores are set by :func:`setup_process`).
    progress : callable, optional
        ``progress(label, batches_done, batches_total)``; only the in-process executor passes one.

    Returns
    -------
    TaskResult or TaskFailure
        Predictions and provenance, or the error the task raised (never raises itself).
    """
    try:
        return _evaluate(job, task, settings, progress)
    except (Exception, SystemExit) as exc:  # reported per task; the executor keeps the other models' results
        from headtohead.errors import H2HError

        message = str(exc).splitlines()[0] if str(exc) else ""
        if not isinstance(exc, H2HError):
            frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
            where = f" (at {Path(frame.filename).name}:{frame.lineno})" if frame else ""
            message = f"{message}{where}"
        return TaskFailure(task=task, error_type=type(exc).__name__, message=message, worker=worker_name())


def _evaluate(job: EvalJob, task: Task, settings: WorkerSettings, progress: Any) -> TaskResult:
    """Re-create the run's setup for this shard and evaluate with the runner's own per-model code."""
    import contextlib

    import numpy as np

    from headtohead.adapters import LoadContext
    from headtohead.adapters.labels import LabelAlignment
    from headtohead.config.schema import Experiment
    from headtohead.runtime.devices import resolve_device
    from headtohead.execution.sharding import shard_plan
    from headtohead.per_model import RunSetup, evaluate_one

    experiment = Experiment.model_validate(job.experiment)
    model_cfg = experiment.model(task.model)
    splits = _splits(job, experiment)
    dataset = splits.eval
    device = resolve_device(settings.device)
    if device.startswith("cuda"):
        import torch

        torch.cuda.set_device(device)  # kernels and allocations of this worker default to its GPU
    context = LoadContext(label_names=dataset.label_names, modality=dataset.modality, device=device,
                          seed=experiment.seed, base_dir=Path(job.base_dir))
    setup = RunSetup(experiment, Path(job.base_dir), experiment.data, splits, shard_plan(job.plan, task.shard),
                     context, quality=True, deterministic=job.deterministic)
    report = None if progress is None else (lambda _name, done, total: progress(task.label, done, total))
    with contextlib.ExitStack() as stack:
        if job.offline:
            from headtohead.runtime.offline import offline_mode

            stack.enter_context(offline_mode())
        if job.deterministic:
            from headtohead.runtime.determinism import deterministic_algorithms

            stack.enter_context(deterministic_algorithms())
        started_at = time.time()  # wall clock, comparable between the workers of one machine (or synced nodes)
        outcome = evaluate_one(setup, model_cfg, progress=report)  # seeds, loads, evaluates, as the runner does
        speed = _speed(outcome.adapter, dataset, experiment, outcome.record.load_time_s) \
            if task.measure_speed else None
    record, predictions = outcome.record, outcome.predictions
    result = TaskResult(
        task=task, order=setup.plan.order, pred=predictions.pred, proba=predictions.proba,
        alignment=LabelAlignment(np.asarray(record.label_columns, dtype=np.int64), str(record.label_alignment)),
        n_batches=record.n_batches, seconds=float(record.eval_time_s or 0.0),
        started_at=started_at + record.load_time_s, load_time_s=record.load_time_s,
        num_parameters=record.num_parameters, parameter_bytes=record.parameter_bytes, device=device,
        worker=worker_name(), environment=_environment(job.base_dir), warnings=tuple(record.warnings), speed=speed)
    outcome.adapter = None
    _release_memory(device)
    return result


def _release_memory(device: str) -> None:
    """Free the finished model before the worker loads the next one (on a GPU, hand its cache back too)."""
    gc.collect()
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def _speed(adapter: Any, dataset: Any, experiment: Any, load_time: float) -> dict[str, Any]:
    """This worker's speed measurement of its one model, as a JSON-able dict."""
    from headtohead.engines.speed import measure_speed

    summary = measure_speed([adapter], dataset, experiment.speed, batch_size=experiment.eval.batch_size,
                            seed=experiment.seed, load_times={adapter.name: load_time})
    return summary.model_dump(mode="json")


def _environment(base_dir: str) -> Any:
    """This worker's environment fingerprint (cached; the thread count is part of the key)."""
    import torch

    from headtohead.results.environment import capture_environment

    key = (base_dir, torch.get_num_threads())
    if key not in _ENVIRONMENTS:
        _ENVIRONMENTS[key] = capture_environment(Path(base_dir))
    return _ENVIRONMENTS[key]


def _dataset_key(job: EvalJob) -> str:
    return json.dumps([job.experiment["data"], job.experiment["seed"]], sort_keys=True)


def _splits(job: EvalJob, experiment: Any) -> Any:
    """The run's data, read from its path in this worker (once per process), checked against the main's."""
    from headtohead.data import create_dataset
    from headtohead.errors import DataError

    key = _dataset_key(job)
    if key not in _DATASETS:
        splits = create_dataset(experiment.data, seed=experiment.seed)
        _DATASETS.clear()  # one run at a time per worker: do not hold on to an earlier run's data
        _DATASETS[key] = (splits, splits.eval.fingerprint())
    splits, fingerprint = _DATASETS[key]
    if job.dataset_fingerprint is not None and fingerprint != job.dataset_fingerprint:
        raise DataError(f"{experiment.data.path}: worker {worker_name()} read different data than the main process "
                        f"(fingerprint {fingerprint[:12]} vs {job.dataset_fingerprint[:12]}); give every node the "
                        f"same files at the same path (a shared filesystem or an identical copy)")
    if len(job.order) and int(job.order.max()) >= len(splits.eval):
        raise DataError(f"{experiment.data.path}: worker {worker_name()} read {len(splits.eval)} examples but the "
                        f"run plans {len(job.order)}; give every node the same files at the same path")
    return splits
