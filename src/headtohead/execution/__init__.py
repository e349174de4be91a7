"""Executors: where the models' passes run — in-process, spawned processes, or a Ray cluster.

One verb, :func:`create_executor`, turns the ``execution:`` section into an
:class:`Executor`; its :meth:`~Executor.evaluate` takes the run as plain data
(:class:`EvalJob`) and returns one :class:`ExecutionOutcome` per model, in order. Executors are
registered by mode as ``"module:Class"`` strings so that importing this package imports
neither torch nor Ray; a new executor is one module with an :class:`Executor` subclass
implementing ``_run`` and one line in ``EXECUTORS``.

::

    setup = prepare_run(experiment, base_dir)                   # headtohead.per_model
    check_fairness(experiment.execution, speed_enabled, force, eval_device=experiment.eval.device)
    job = EvalJob.from_setup(setup)
    with create_executor(experiment.execution, eval_device=experiment.eval.device) as executor:
        outcomes = executor.evaluate(job)
"""

from __future__ import annotations

import importlib
from typing import Any

from headtohead.config.execution import ExecutionConfig
from headtohead.errors import ConfigError, did_you_mean
from headtohead.execution.base import Executor, LoadedModel, ExecutionOutcome, WorkerInfo, failure_summary
from headtohead.execution.fairness import check_fairness, plan_workers, shared_devices
from headtohead.execution.jobs import EvalJob, Task, TaskFailure, TaskResult, WorkerSettings
from headtohead.execution.provenance import describe_environment, environment_fingerprint, group_by_environment
from headtohead.execution.sharding import Shard, merge_shards, plan_shards, shard_plan
from headtohead.execution.speed_merge import CONCURRENT_MARK, merge_worker_speed

__all__ = [
    "EXECUTORS",
    "create_executor",
    "Executor",
    "ExecutionOutcome",
    "LoadedModel",
    "WorkerInfo",
    "EvalJob",
    "Task",
    "TaskResult",
    "TaskFailure",
    "WorkerSettings",
    "Shard",
    "plan_shards",
    "shard_plan",
    "merge_shards",
    "check_fairness",
    "shared_devices",
    "plan_workers",
    "merge_worker_speed",
    "CONCURRENT_MARK",
    "failure_summary",
    "environment_fingerprint",
    "describe_environment",
    "group_by_environment",
]

EXECUTORS: dict[str, str] = {
    "local": "headtohead.execution.local:LocalExecutor",
    "processes": "headtohead.execution.processes:ProcessExecutor",
    "ray": "headtohead.execution.ray_executor:RayExecutor",
}


def create_executor(config: ExecutionConfig, *, eval_device: str = "auto", splits: Any = None) -> Executor:
    """The executor of ``config.mode``.

    Parameters
    ----------
    config : ExecutionConfig
        The ``execution:`` section.
    eval_device : str
        ``eval.device`` of the experiment: the local executor's device and the default of
        the process workers.
    splits : DataSplits, optional
        The data already loaded in this process (``RunSetup.splits``); only the local
        executor uses it (workers elsewhere read the data from its path).

    Returns
    -------
    Executor
        Use it as a context manager (or call ``close()``) to release its workers.

    Examples
    --------
    >>> create_executor(ExecutionConfig()).mode
    'local'
    """
    if config.mode not in EXECUTORS:
        raise ConfigError(f"unknown execution.mode '{config.mode}'{did_you_mean(config.mode, EXECUTORS)} "
                          f"(choose one of: {', '.join(EXECUTORS)})")
    module_name, class_name = EXECUTORS[config.mode].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    if config.mode == "local":
        return cls(config, eval_device=eval_device, splits=splits)
    return cls(config, eval_device=eval_device)
